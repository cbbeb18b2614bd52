/*
 * xlsx_write_lxw.h - the comparison workbook written with libxlsxwriter, for the benchmark
 * only (tlcompare itself does not link libxlsxwriter).
 */
#ifndef TL_XLSX_WRITE_LXW_H
#define TL_XLSX_WRITE_LXW_H

#include "table/result.h"

/* The results in a workbook at `path`, plain (no styles, no summary; the tabs of
 * write/tabname.h, the hidden columns hidden): the reference the benchmark measures the
 * built-in writer against.  Returns 0, or -1 with *err set. */
int tl_xlsx_write_lxw(const tl_results *results, const char *path, tl_error *err);

#endif
