/*
 * excel.c - Excel's A1 column letters (see excel.h).
 */
#include "base/excel.h"

size_t tl_excel_col_letters(size_t c, char *out)
{
    char tmp[8];
    size_t n = 0;

    c++;
    while (c && n < 3) {
        c--;
        tmp[n++] = (char)('A' + c % 26);
        c /= 26;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}
