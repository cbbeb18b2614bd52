/*
 * xlsx_write_lxw.c - the comparison workbook written with libxlsxwriter (see
 * xlsx_write_lxw.h): plain, as the reference the benchmark measures the built-in writer
 * against.  Not part of tlcompare; only `make bench` builds it.
 */
#include "xlsx_write_lxw.h"

#include "base/excel.h"
#include "write/tabname.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xlsxwriter.h>

/* Excel refuses longer cell texts; such a cell is cut, with a warning. */
#define TL_XLSX_MAX_STRING TL_EXCEL_MAX_TEXT

/* Byte length of the first `chars` code points of UTF-8 text s. */
static size_t utf8_prefix(const char *s, size_t chars)
{
    size_t i = 0;
    while (s[i] && chars) {
        i++;
        while ((s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += (*s & 0xC0) != 0x80;
    return n;
}

static int write_cell(lxw_worksheet *ws, lxw_row_t row, lxw_col_t col, const tl_cell *c,
                      const char *sheet, const char *colname)
{
    char tmp[8];
    switch (c->kind) {
    case TL_MISSING: return 0;
    case TL_INT: return worksheet_write_number(ws, row, col, (double)c->v.i, NULL);
    case TL_FLOAT:
        if (isfinite(c->v.f))
            return worksheet_write_number(ws, row, col, c->v.f, NULL);
        /* Excel has no infinities: write them as text, as they read in the CSV */
        strcpy(tmp, c->v.f < 0 ? "-inf" : "inf");
        return worksheet_write_string(ws, row, col, tmp, NULL);
    case TL_BOOL: return worksheet_write_boolean(ws, row, col, c->v.b, NULL);
    case TL_STR:
        if (strlen(c->v.s) > TL_XLSX_MAX_STRING) {
            size_t cut = utf8_prefix(c->v.s, TL_XLSX_MAX_STRING);
            if (utf8_len(c->v.s) > TL_XLSX_MAX_STRING) {
                char *s = tl_xmalloc(cut + 1);
                memcpy(s, c->v.s, cut);
                s[cut] = '\0';
                tl_warn("sheet '%s', column '%s', row %u: text longer than Excel's %u characters; "
                        "cut in the workbook (the CSV keeps it whole)",
                        sheet, colname, (unsigned)row + 1, TL_XLSX_MAX_STRING);
                int rc = worksheet_write_string(ws, row, col, s, NULL);
                free(s);
                return rc;
            }
        }
        return worksheet_write_string(ws, row, col, c->v.s, NULL);
    }
    return 0;
}

int tl_xlsx_write_lxw(const tl_results *results, const char *path, tl_error *err)
{
    lxw_workbook_options opt = {.constant_memory = 1, .use_zip64 = 1};
    lxw_workbook *wb = workbook_new_opt(path, &opt);
    if (!wb) {
        tl_error_set(err, "%s: cannot create the workbook", path);
        return -1;
    }
    const char **names = tl_xmalloc((results->n ? results->n : 1) * sizeof *names);
    for (size_t i = 0; i < results->n; i++)
        names[i] = results->items[i].name;
    char **tabs = tl_tab_names(names, results->n);
    free(names);

    lxw_row_col_options hidden = {.hidden = 1};
    int rc = 0;
    for (size_t i = 0; i < results->n && rc == 0; i++) {
        const tl_result *res = &results->items[i];
        const tl_table *t = res->table;
        lxw_worksheet *ws = workbook_add_worksheet(wb, tabs[i]);
        if (!ws) {
            tl_error_set(err, "%s: cannot add worksheet '%s'", path, tabs[i]);
            rc = -1;
            break;
        }
        if (t->ncols > LXW_COL_MAX || t->nrows + 1 > LXW_ROW_MAX) {
            tl_error_set(err, "result '%s' has %zu rows x %zu columns, more than a worksheet holds",
                         res->name, t->nrows, t->ncols);
            rc = -1;
            break;
        }
        for (size_t c = 0; c < t->ncols; c++)
            if (tl_result_hides(res, t->cols[c].name))
                worksheet_set_column_opt(ws, (lxw_col_t)c, (lxw_col_t)c, LXW_DEF_COL_WIDTH, NULL, &hidden);
        for (size_t c = 0; c < t->ncols && rc == 0; c++)
            rc = worksheet_write_string(ws, 0, (lxw_col_t)c, t->cols[c].name, NULL);
        for (size_t r = 0; r < t->nrows && rc == 0; r++)
            for (size_t c = 0; c < t->ncols && rc == 0; c++)
                rc = write_cell(ws, (lxw_row_t)(r + 1), (lxw_col_t)c, &t->cols[c].cells[r], res->name,
                                t->cols[c].name);
        if (rc != 0 && !err->set)
            tl_error_set(err, "%s, sheet '%s': %s", path, tabs[i], lxw_strerror((lxw_error)rc));
    }
    lxw_error close_rc = workbook_close(wb);
    if (rc == 0 && close_rc != LXW_NO_ERROR) {
        tl_error_set(err, "%s: cannot write the workbook: %s", path, lxw_strerror(close_rc));
        rc = -1;
    }
    tl_tab_names_free(tabs, results->n);
    return rc ? -1 : 0;
}
