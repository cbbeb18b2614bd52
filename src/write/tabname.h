/*
 * tabname.h - worksheet names (tabs) that Excel accepts, one rule for every workbook the
 * project writes: the comparison workbook, its summary sheet, the benchmark's
 * libxlsxwriter workbook.
 *
 * A valid name is 1 to 31 UTF-16 units long (Excel counts UTF-16, so a character past
 * U+FFFF counts two), holds none of [ ] : * ? / \ nor a control character, neither starts
 * nor ends with an apostrophe, and is not "History" (Excel reserves it).  Names in one
 * workbook must differ other than by case.  The CSV files keep the full result names: only
 * tabs are made to fit.
 */
#ifndef TL_TABNAME_H
#define TL_TABNAME_H

#include "base/excel.h"

#include <stddef.h>

/* Excel's limit on a worksheet name, in UTF-16 units. */
#define TL_TAB_MAX TL_EXCEL_MAX_TAB

/*
 * `name` made a valid tab (malloc'd): each forbidden or control character, each byte that
 * is not UTF-8 and an apostrophe at either end become '_', and the name is cut to
 * TL_TAB_MAX units at a character boundary; "" becomes "_".
 */
char *tl_tab_legal(const char *name);

/*
 * A valid tab for `name` unlike each of taken[0..n) and "History" without regard to case
 * (malloc'd): tl_tab_legal(name), or when that is taken, the same ending in "~2", "~3",
 * ... in place of its last characters, so that it still fits.
 */
char *tl_tab_unique(const char *name, char *const *taken, size_t n);

/* 1 when tabs a and b name the same sheet to Excel (they differ only by case). */
int tl_tab_same(const char *a, const char *b);

/* Tabs for names[0..n), in order, each tl_tab_unique among those before it.  Returns n
 * malloc'd strings in a malloc'd array; free with tl_tab_names_free. */
char **tl_tab_names(const char *const *names, size_t n);
void tl_tab_names_free(char **tabs, size_t n);

#endif
