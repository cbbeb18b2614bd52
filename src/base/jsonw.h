/*
 * jsonw.h - JSON text written into a tl_buf: strings as Python's json.dumps(ensure_ascii=
 * False) writes them (the short escapes, \uXXXX for other control characters, UTF-8
 * left as it is), numbers as the shortest text that reads back to the same double.
 */
#ifndef TL_JSONW_H
#define TL_JSONW_H

#include "base/util.h"

/* The string s (NUL-terminated), quoted and escaped. */
void tl_json_str(tl_buf *b, const char *s);

/* v as a JSON number; null for NaN and the infinities, which JSON cannot hold. */
void tl_json_num(tl_buf *b, double v);

#endif
