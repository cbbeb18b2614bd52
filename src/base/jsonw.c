/*
 * jsonw.c - JSON strings and numbers (see jsonw.h).
 */
#include "base/jsonw.h"

#include "base/numfmt.h"

#include <math.h>

void tl_json_str(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': tl_buf_adds(b, "\\\""); break;
        case '\\': tl_buf_adds(b, "\\\\"); break;
        case '\n': tl_buf_adds(b, "\\n"); break;
        case '\r': tl_buf_adds(b, "\\r"); break;
        case '\t': tl_buf_adds(b, "\\t"); break;
        case '\b': tl_buf_adds(b, "\\b"); break;
        case '\f': tl_buf_adds(b, "\\f"); break;
        default:
            if (*p < 0x20)
                tl_buf_printf(b, "\\u%04x", *p);
            else
                tl_buf_addc(b, (char)*p);
        }
    }
    tl_buf_addc(b, '"');
}

void tl_json_num(tl_buf *b, double v)
{
    char buf[TL_NUMFMT_MAX];
    if (!isfinite(v))
        tl_buf_adds(b, "null");
    else
        tl_buf_add(b, buf, tl_fmt_double(v, buf));
}
