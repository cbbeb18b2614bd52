/*
 * excel.h - the limits of an Excel worksheet and its A1 cell names, for the reader and
 * the writers alike (one definition, so they agree on what a sheet can hold).
 */
#ifndef TL_EXCEL_H
#define TL_EXCEL_H

#include <stddef.h>

#define TL_EXCEL_MAX_ROWS 1048576u /* rows of a worksheet (the last is 1048576) */
#define TL_EXCEL_MAX_COLS 16384u   /* columns of a worksheet (the last is XFD) */
#define TL_EXCEL_MAX_TEXT 32767u   /* characters of a cell's text */
#define TL_EXCEL_MAX_TAB 31        /* UTF-16 units of a worksheet name */

/* Column letters of 0-based column c < TL_EXCEL_MAX_COLS ("A", "AB", "XFD") into out (4
 * bytes of room), NUL-terminated; returns their count. */
size_t tl_excel_col_letters(size_t c, char *out);

#endif
