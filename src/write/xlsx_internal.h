/*
 * xlsx_internal.h - what the files of the workbook writer share (write/ only; the
 * interface is xlsx_write.h).
 *
 *   xlsx_write.c    the XML of cells, rows and worksheets, the package parts, rendering
 *   xlsx_columns.c  each column's number format, colouring and width (TraceLens' rules)
 *   xlsx_summary.c  the summary worksheet, its chart and drawing
 *   xlsx_stream.c   the streaming writer: results as pool jobs, the workbook at close
 */
#ifndef TL_XLSX_INTERNAL_H
#define TL_XLSX_INTERNAL_H

#include "write/xlsx_write.h"

#include "base/excel.h"
#include "io/zip_write.h"

#include <stdint.h>
#include <string.h>


#define XL_WIDTH_ROWS 200     /* rows looked at to fit a column's width */
#define XL_WIDTH_MIN 8
#define XL_WIDTH_MAX 60
#define XL_CELL_MAX 128       /* XML bytes of one number or boolean cell, at most */
#define XL_MAX_THREADS 64
#define XL_CHUNK ((size_t)1 << 20) /* worksheet XML handed to the compressor in pieces of ~1 MiB */

/* cellXfs indexes in styles.xml */
enum { XF_GENERAL, XF_BOLD, XF_PCT, XF_MS, XF_US, XF_COUNT };
/* conditional colouring of a column */
enum { CF_NONE, CF_LOWER_BETTER, CF_HIGHER_BETTER };
/* text contexts */
enum { TX_CELL, TX_PLAIN, TX_ATTR };

static const char XML_DECL[] = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";
static const char NS_MAIN[] = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
static const char NS_REL[] = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
static const char NS_PKGREL[] = "http://schemas.openxmlformats.org/package/2006/relationships";


static const char SHEET_TAIL[] =
    "<pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" footer=\"0.3\"/>";

/* ---- the output buffer -------------------------------------------------------------------- */

/* Room for n more bytes (and the NUL); returns where they go. */
static inline char *xb_room(tl_buf *b, size_t n)
{
    if (b->cap - b->len < n + 1)
        tl_buf_reserve(b, n);
    return b->data + b->len;
}

/* The bytes up to p were written. */
static inline void xb_done(tl_buf *b, char *p)
{
    b->len = (size_t)(p - b->data);
    b->data[b->len] = '\0';
}

/* Room for n more bytes (and the NUL) at p, the end of what is written so far (b->len
 * may lag behind it): p itself when the room is there, else where p's bytes moved. */
static inline char *xb_ensure(tl_buf *b, char *p, size_t n)
{
    if ((size_t)(b->data + b->cap - p) > n)
        return p;
    xb_done(b, p);
    return xb_room(b, n);
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)


typedef struct colinfo {
    char ref[4];     /* column letters */
    uint8_t reflen;
    uint8_t xf;      /* style of the column's number cells */
    uint8_t cf;      /* CF_* */
    uint8_t hidden;
    size_t width;    /* in characters */
} colinfo;

/* What a row of cells needs to know about the sheet, for warnings. */
typedef struct sheet_ctx {
    const char *name; /* the result (or tab) name */
} sheet_ctx;

/* The summary's blocks, the chart's data as the last one ("chart data", its rows grouped
 * and hidden under its title). */
typedef struct summary_plan {
    const tl_summary_sheet *s;
    tl_sheet_block *blocks;
    size_t nblocks;
    tl_table **filled;        /* per block: a copy whose text does not spill (NULL: none needed) */
    tl_table chart_table;     /* the chart's categories and series, when there is a chart */
    size_t *title_row;        /* per block: 1-based row of its title (0: none) */
    size_t *head_row;         /* per block: 1-based row of its header (0: no table) */
    size_t ncols;             /* the widest block */
    size_t nrows;             /* the last row used */
    size_t chart_block;       /* index of the chart data block */
} summary_plan;

/* One worksheet of the workbook. */
enum { SHEET_EMPTY, SHEET_SUMMARY, SHEET_RESULT };

typedef struct sheet_job {
    int kind;
    const tl_result *res; /* SHEET_RESULT; valid only until the sheet is rendered */
    const char *tab;
    size_t file;          /* its part: xl/worksheets/sheet<file>.xml */
    size_t nrows, ncols;  /* SHEET_RESULT: its size, for the workbook's filter names */
    tl_zip_blob blob;     /* the compressed XML, once done */
} sheet_job;

typedef struct book {
    sheet_job *jobs;
    size_t nsheets;
    char **tabs;          /* the results' tabs */
    char *summary_tab;
    summary_plan plan;    /* when there is a summary */
    int has_summary, has_chart;
} book;

/* Each thread's compressor and XML buffer, reused from sheet to sheet. */
typedef struct render_state {
    tl_zip_compressor *comp; /* made on the first sheet a thread renders */
    tl_buf xml;
} render_state;

/* ---- xlsx_write.c -------------------------------------------------------------------- */

/* Text into XML in context `mode` (TX_*): escaped, invalid UTF-8 replaced. */
void tl_xb_text(tl_buf *b, const char *s, size_t n, int mode);
void tl_xb_texts(tl_buf *b, const char *s, int mode);
/* Characters (code points) of s[0..n), counting no further than `cap`. */
size_t tl_text_chars(const char *s, size_t n, size_t cap);
/* Decimal digits of v into out; returns their count. */
size_t tl_xb_dec(size_t v, char *out);
/* A cell reference ("B7", or "$B$7" when `absolute`). */
void tl_xb_ref(tl_buf *b, size_t col, size_t row, int absolute);
/* A sheet name as a formula reference ('name'!). */
void tl_xb_sheet_ref(tl_buf *b, const char *tab);
/* A text cell at p (room reserved by the caller), cut to Excel's limit with a warning. */
char *tl_put_str_cell(tl_buf *b, char *p, const colinfo *ci, const char *row, size_t rowlen, int xf,
                   const char *s, size_t n, const sheet_ctx *sc, const char *colname, size_t rownum);
/* The header row (bold column names) as row `rownum`. */
void tl_xb_header_row(tl_buf *b, const tl_table *t, const colinfo *ci, size_t rownum, const sheet_ctx *sc);
/* Hand what b holds to the compressor and empty b. */
void tl_xb_flush(tl_buf *b, tl_zip_compressor *comp);
/* Records r0 .. r1-1 of t as rows from row `first_row` + r0 on, flushed as they grow. */
void tl_xb_rows(tl_buf *b, const tl_table *t, const colinfo *ci, size_t r0, size_t r1, size_t first_row,
             const sheet_ctx *sc, tl_zip_compressor *comp);
/* Add column col's rows r1..r2 to a conditional format's range list. */
void tl_xb_range(tl_buf *sq, size_t col, size_t r1, size_t r2);
/* The conditional formats: red/green for the lower-better and higher-better ranges. */
void tl_xb_cf(tl_buf *b, const tl_buf *lower, const tl_buf *higher);
/* The XML declaration and the <worksheet> start tag. */
void tl_xb_sheet_open(tl_buf *b);
/* A worksheet with no cells. */
void tl_render_empty(tl_buf *b, int selected);
/* A result sheet's columns (malloc'd): letters, styles, colourings, hidden, widths. */
colinfo *tl_sheet_columns(const tl_result *res);
/* Records r0 .. r1-1 of result res's table as worksheet XML, a piece of a sheet of `total`
 * rows in which the table's first record is record `first`: the sheet's head comes with
 * its first record (first + r0 == 0), its tail with its last (first + r1 == total). */
void tl_render_sheet_rows(const tl_result *res, const colinfo *ci, int selected, size_t first, size_t total,
                          size_t r0, size_t r1, tl_buf *b, tl_zip_compressor *comp);
/* 1 when the result has no columns (an empty worksheet). */
int tl_result_is_empty(const tl_result *res);
/* The package parts. */
void tl_part_content_types(const book *bk, tl_buf *b);
void tl_part_root_rels(tl_buf *b);
void tl_part_app(tl_buf *b);
void tl_part_core(tl_buf *b);
void tl_part_workbook(const book *bk, tl_buf *b);
void tl_part_workbook_rels(const book *bk, tl_buf *b);
void tl_part_styles(tl_buf *b);
void tl_part_rels_one(tl_buf *b, const char *type, const char *target);
/* Render sheet i and compress it, as it is made, into *blob (b: a buffer to reuse). */
void tl_render_job(const book *bk, size_t i, tl_buf *b, tl_zip_compressor *comp, tl_zip_blob *blob);
/* Store sheet job j's blob in the zip (and free it). */
int tl_write_sheet(tl_zip *z, sheet_job *j, tl_error *err);
/* The same for a sheet compressed in n pieces (tl_zip_add_pieces; the pieces freed). */
int tl_write_sheet_pieces(tl_zip *z, size_t file, tl_zip_blob *pieces, size_t n, tl_error *err);
render_state *tl_render_states_new(int n);
void tl_render_states_free(render_state *st, int n);
/* Add part `name` holding b's bytes (and empty b). */
int tl_add_part(tl_zip *z, const char *name, tl_buf *b, tl_error *err);
/* A tab for the summary: its name made legal, and unlike every result's tab. */
char *tl_summary_tab(const char *name, char **tabs, size_t n);
/* Whether result r (or summary plan pl) fits a worksheet (else *err says so, naming `path`). */
int tl_result_fits(const tl_result *r, const char *path, tl_error *err);
/* The same for a sheet `name` of nrows x ncols. */
int tl_sheet_fits(const char *name, size_t nrows, size_t ncols, const char *path, tl_error *err);
int tl_summary_fits(const summary_plan *pl, const char *path, tl_error *err);

/* ---- xlsx_columns.c ------------------------------------------------------------------- */

/* The metric a column measures and how it looks: sets ci's number style and colouring. */
void tl_classify_column(const tl_column *col, size_t nrows, colinfo *ci);
/* The widest of the first XL_WIDTH_ROWS rows of column `col`, in characters. */
size_t tl_column_chars(const tl_table *t, size_t col, int xf);
/* A column width for text of `chars` characters (padded, capped). */
size_t tl_fit_width(size_t chars);
/* The <cols> element. */
void tl_xb_cols(tl_buf *b, const colinfo *ci, size_t n);

/* ---- xlsx_summary.c ------------------------------------------------------------------- */

void tl_summary_plan_init(summary_plan *pl, const tl_summary_sheet *s);
void tl_summary_plan_free(summary_plan *pl);
/* The summary worksheet, its chart part and the drawing that anchors the chart. */
void tl_render_summary(const summary_plan *pl, const char *tab, int selected, tl_buf *b,
                    tl_zip_compressor *comp);
void tl_render_chart(const summary_plan *pl, const char *tab, tl_buf *b);
void tl_render_drawing(const summary_plan *pl, tl_buf *b);

#endif
