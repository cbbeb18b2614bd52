/*
 * xlsx_write.c - the comparison workbook, written by a built-in streaming OOXML writer
 * (see xlsx_write.h).
 *
 * Why a writer of our own: libxlsxwriter manages ~0.76 M cells/s here, half of it in
 * zlib at its default level and a third in printf("%.16G"); a comparison of two large
 * reports makes ~10 M cells.  This writer renders each worksheet's XML straight into a
 * memory buffer (no per-cell objects, no printf in the cell loop: column letters are
 * made once per sheet, row numbers once per row, numbers by numfmt.h), compresses it
 * whole with ISA-L's igzip at level 1 (zip_write.c says why), and renders and
 * compresses sheets on several threads.  On the benchmark (bench/bench_xlsx.c, 10.8 M
 * cells) that is ~2.2 s of CPU against libxlsxwriter's ~19.6 s.
 *
 * Format choices:
 *  - Strings are inline (`t="inlineStr"`), not shared.  A shared-string table needs one
 *    global string -> index map filled in sheet order, which would serialise the
 *    rendering threads (or need a merge pass and a second rendering), and it holds every
 *    distinct string of the workbook in memory until the end.  The texts that repeat in
 *    these workbooks (kernel names, shapes) repeat mostly within a sheet, where DEFLATE's
 *    32 KiB window already folds them (TraceLens' own writer uses inline strings too).
 *  - Every cell carries its `r` reference (some readers, the conformance checker among
 *    them, need it) and every record row is written, even an empty one, so row positions
 *    never depend on how a reader counts.
 *  - Numbers are written as Python's repr (shortest round-trip text: "0.1", "1e-05"),
 *    which is valid xsd:double and reads back to the same double; integers exactly.  NaN
 *    and +-inf are the strings "nan", "inf", "-inf" (Excel has none of them; the sheets
 *    write a missing value as an empty cell, not as NaN).
 *  - Text is escaped for XML (& < > "), characters XML 1.0 cannot carry become OOXML's
 *    `_xHHHH_` escapes (a literal `_xHHHH_` gets its underscore escaped as `_x005F_`),
 *    invalid UTF-8 becomes U+FFFD (in the workbook only: the CSVs keep the bytes), and
 *    text longer than Excel's 32,767 characters is cut, with a warning.
 *  - Presentation never changes a value: styles.xml holds bold (header), four number
 *    formats chosen from the column name, and two dxf colourings for the conditional
 *    formats of diff/pct columns.
 *
 * Memory: a sheet's XML is made in pieces of ~1 MiB, each handed to a streaming DEFLATE
 * compressor as soon as it is full (and still in cache), so only compressed sheets are
 * ever whole in memory.
 *
 * Threads: rendering and compressing are nearly all the work, and a sheet's compressed
 * blob goes into the zip whole, in any order (readers find parts through the central
 * directory), so sheets are jobs of a pool (pool.h) - pieces of ~10 MB of a sheet's XML
 * are, each compressed on its own, ended with a sync flush and joined into the part, so
 * that even the last big sheet is shared between the pool's thread and the caller
 * helping at the end.  Writing a whole book at once (tl_xlsx_write) is the streaming
 * writer given every result.  Each thread has its own compressor and XML
 * buffer; the zip is written under a lock.
 */
#include "write/xlsx_internal.h"

#include "base/numfmt.h"
#include "base/textblock.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* A result sheet's columns: letters, number styles, colourings, hidden, widths (from
 * the names and the first rows).  Computed once per sheet, whatever its pieces. */
colinfo *tl_sheet_columns(const tl_result *res)
{
    const tl_table *t = res->table;
    colinfo *ci = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *ci);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        ci[c].reflen = (uint8_t)tl_excel_col_letters(c, ci[c].ref);
        tl_classify_column(col, t->nrows, &ci[c]);
        ci[c].hidden = (uint8_t)tl_result_hides(res, col->name);
        size_t head = tl_text_chars(col->name, strlen(col->name), XL_WIDTH_MAX) + 3; /* bold, filter button */
        size_t body = tl_column_chars(t, c, ci[c].xf);
        ci[c].width = tl_fit_width(head > body ? head : body);
    }
    return ci;
}

/*
 * Records r0 .. r1-1 of result res (a table with columns) as worksheet XML: the piece
 * that starts at record 0 opens the worksheet (and writes the header row), the one that
 * ends at the last record closes it.  Pieces rendered separately and put together in
 * order make the same XML as the whole.
 */
void tl_render_sheet_rows(const tl_result *res, const colinfo *ci, int selected, size_t first, size_t total,
                          size_t r0, size_t r1, tl_buf *b, tl_zip_compressor *comp)
{
    const tl_table *t = res->table;
    sheet_ctx sc = {res->name};
    size_t last_row = total + 1;
    if (first + r0 == 0) {
        tl_xb_sheet_open(b);
        tl_buf_printf(b, "<dimension ref=\"A1:%s%zu\"/>", ci[t->ncols - 1].ref, last_row);
        tl_buf_printf(b,
                      "<sheetViews><sheetView%s workbookViewId=\"0\">"
                      "<pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/>"
                      "<selection pane=\"bottomLeft\" activeCell=\"A2\" sqref=\"A2\"/></sheetView></sheetViews>"
                      "<sheetFormatPr defaultRowHeight=\"15\"/>",
                      selected ? " tabSelected=\"1\"" : "");
        tl_xb_cols(b, ci, t->ncols);
        tl_buf_adds(b, "<sheetData>");
        tl_xb_header_row(b, t, ci, 1, &sc);
    }
    tl_xb_rows(b, t, ci, r0, r1, first + 2, &sc, comp);
    if (first + r1 < total)
        return;
    tl_buf_adds(b, "</sheetData>");
    tl_buf_printf(b, "<autoFilter ref=\"A1:%s%zu\"/>", ci[t->ncols - 1].ref, last_row);
    if (total) {
        tl_buf lower = {0}, higher = {0};
        for (size_t c = 0; c < t->ncols; c++)
            if (ci[c].cf != CF_NONE)
                tl_xb_range(ci[c].cf == CF_LOWER_BETTER ? &lower : &higher, c, 2, last_row);
        tl_xb_cf(b, &lower, &higher);
        tl_buf_free(&lower);
        tl_buf_free(&higher);
    }
    tl_buf_adds(b, SHEET_TAIL);
    tl_buf_adds(b, "</worksheet>");
}

int tl_result_is_empty(const tl_result *res) { return !res->table || res->table->ncols == 0; }

static void render_result(const tl_result *res, int selected, tl_buf *b, tl_zip_compressor *comp)
{
    if (tl_result_is_empty(res)) {
        tl_render_empty(b, selected);
        return;
    }
    colinfo *ci = tl_sheet_columns(res);
    tl_render_sheet_rows(res, ci, selected, 0, res->table->nrows, 0, res->table->nrows, b, comp);
    free(ci);
}


void tl_render_job(const book *bk, size_t i, tl_buf *b, tl_zip_compressor *comp, tl_zip_blob *blob)
{
    const sheet_job *j = &bk->jobs[i];
    tl_buf_clear(b);
    tl_zip_stream_begin(comp, blob);
    switch (j->kind) {
    case SHEET_SUMMARY: tl_render_summary(&bk->plan, j->tab, i == 0, b, comp); break;
    case SHEET_RESULT: render_result(j->res, i == 0, b, comp); break;
    default: tl_render_empty(b, i == 0); break;
    }
    tl_xb_flush(b, comp);
    tl_zip_stream_finish(comp);
}

int tl_write_sheet(tl_zip *z, sheet_job *j, tl_error *err)
{
    char name[48];
    snprintf(name, sizeof name, "xl/worksheets/sheet%zu.xml", j->file);
    int rc = tl_zip_add_blob(z, name, &j->blob, err);
    tl_zip_blob_free(&j->blob);
    return rc;
}

int tl_write_sheet_pieces(tl_zip *z, size_t file, tl_zip_blob *pieces, size_t n, tl_error *err)
{
    char name[48];
    snprintf(name, sizeof name, "xl/worksheets/sheet%zu.xml", file);
    return tl_zip_add_pieces(z, name, pieces, n, err);
}


render_state *tl_render_states_new(int n) { return tl_xcalloc((size_t)n, sizeof(render_state)); }

void tl_render_states_free(render_state *st, int n)
{
    for (int i = 0; i < n; i++) {
        tl_zip_compressor_free(st[i].comp);
        tl_buf_free(&st[i].xml);
    }
    free(st);
}


/* ---- the workbook ------------------------------------------------------------------------- */

int tl_add_part(tl_zip *z, const char *name, tl_buf *b, tl_error *err)
{
    int rc = tl_zip_add(z, name, b->data, b->len, err);
    tl_buf_clear(b);
    return rc;
}

/* A tab for the summary: its name made legal, and unlike every result's tab. */
char *tl_summary_tab(const char *name, char **tabs, size_t n)
{
    return tl_tab_unique(name && *name ? name : "summary", tabs, n);
}

/* Whether result r fits a worksheet (else *err says so, naming `path`). */
int tl_sheet_fits(const char *name, size_t nrows, size_t ncols, const char *path, tl_error *err)
{
    if (ncols <= TL_EXCEL_MAX_COLS && nrows + 1 <= TL_EXCEL_MAX_ROWS)
        return 1;
    tl_error_set(err, "%s: result '%s' has %zu rows x %zu columns, more than a worksheet holds "
                      "(1,048,575 x 16,384)", path, name, nrows, ncols);
    return 0;
}

int tl_result_fits(const tl_result *r, const char *path, tl_error *err)
{
    return tl_sheet_fits(r->name, r->table->nrows, r->table->ncols, path, err);
}

/* Whether summary plan pl fits a worksheet (else *err says so, naming `path`). */
int tl_summary_fits(const summary_plan *pl, const char *path, tl_error *err)
{
    if (pl->nrows <= TL_EXCEL_MAX_ROWS && pl->ncols <= TL_EXCEL_MAX_COLS - 14)
        return 1;
    tl_error_set(err, "%s: the summary sheet is larger than a worksheet", path);
    return 0;
}

