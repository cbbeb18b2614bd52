/*
 * xlsx_write.h - the comparison workbook (SPEC §4, "Workbook"), written with libxlsxwriter:
 * one worksheet per result in result order, the column names in the first row, numbers
 * as numbers, booleans as booleans, missing cells empty, the group's hidden columns
 * hidden.
 */
#ifndef TL_XLSX_WRITE_H
#define TL_XLSX_WRITE_H

#include "groups.h"

/* Excel's limit on a worksheet name, in characters. */
#define TL_TAB_MAX 31

/*
 * Worksheet names for results[0..n): each name cut to 31 characters (code points);
 * a cut name already taken (Excel compares names without case) ends in "~2", "~3", ...
 * in place of its last characters.  Characters Excel forbids in a sheet name
 * ([ ] : * ? / \) become '_'.  Returns n malloc'd strings in a malloc'd array.
 */
char **tl_tab_names(const char *const *names, size_t n);
void tl_tab_names_free(char **tabs, size_t n);

/* Write the workbook to `path`.  Returns 0, or -1 with *err set (the file may be left
 * half-written: the caller writes to a temporary path and renames). */
int tl_xlsx_write(const tl_results *results, const char *path, tl_error *err);

#endif
