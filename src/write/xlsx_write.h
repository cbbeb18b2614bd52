/*
 * xlsx_write.h - the comparison workbook (SPEC §4, "Workbook"): one worksheet per result
 * in result order, the column names in the first row, numbers as numbers, booleans as
 * booleans, missing cells empty, the group's hidden columns hidden.
 *
 * Presentation never changes a value: the header row is bold, frozen and filtered,
 * columns are fitted (capped), ms/µs/% columns get number formats, and every diff/pct
 * column is coloured (red = slower, green = faster; swapped for throughput metrics).
 * An optional summary worksheet can come first.
 */
#ifndef TL_XLSX_WRITE_H
#define TL_XLSX_WRITE_H

#include "table/result.h"
#include "write/tabname.h"

/* ---- the summary worksheet ---------------------------------------------------------- */

/* A titled table on the summary worksheet (written like a result: header row, cells). */
typedef struct tl_sheet_block {
    const char *title;     /* a bold line above the table; NULL for none */
    const tl_table *table;
} tl_sheet_block;

/* One series of a clustered bar chart. */
typedef struct tl_chart_series {
    const char *name;      /* e.g. the report tag */
    const double *values;  /* ncategories values; NaN for none */
} tl_chart_series;

typedef struct tl_sheet_chart {
    const char *title;
    const char *value_axis_title;          /* e.g. "GPU kernel time (ms)" */
    size_t ncategories;
    const char *const *categories;         /* e.g. op names */
    size_t nseries;
    const tl_chart_series *series;
} tl_sheet_chart;

typedef struct tl_summary_sheet {
    const char *name;              /* the tab name, e.g. "summary" */
    const tl_sheet_block *blocks;  /* written top to bottom, a blank row between */
    size_t nblocks;
    const tl_sheet_chart *chart;   /* NULL for none */
} tl_summary_sheet;

/* ---- writing -------------------------------------------------------------------------- */

typedef struct tl_xlsx_write_opts {
    const tl_summary_sheet *summary; /* first worksheet when not NULL */
    int threads;                     /* worksheets rendered in parallel; 0 = choose */
    size_t piece_cells;              /* cells rendered and compressed as one job (0: the
                                        default; tests write a sheet in one piece, to
                                        compare with the pieces joined) */
} tl_xlsx_write_opts;

/* Write the workbook to `path` (opts may be NULL).  Returns 0, or -1 with *err set
 * (the file may be left half-written: the caller writes to a temporary path and renames). */
int tl_xlsx_write(const tl_results *results, const tl_xlsx_write_opts *opts, const char *path,
                  tl_error *err);

/*
 * Writing a result at a time, so that a result's table can be freed as soon as it is in
 * the workbook: add() queues a job on `pool` that renders, compresses and stores the
 * result (pool.h: the pool's threads do it while the caller goes on); sync() returns
 * once the first `upto` results are stored - their tables may be freed then - helping
 * with queued jobs meanwhile; close() adds the summary sheet (first in tab order, when
 * given) and the workbook's other parts.  After any failure, abort(), which waits for
 * the writer's queued jobs (they end at once) and deletes nothing itself: the caller
 * writes to a temporary path.  The pool must outlive the writer.
 */
typedef struct tl_xlsx_writer tl_xlsx_writer;
typedef struct tl_pool tl_pool;

/* summary_first: a summary sheet will come first (it carries the initial selection). */
tl_xlsx_writer *tl_xlsx_writer_open(const char *path, int summary_first, tl_pool *pool, tl_error *err);
int tl_xlsx_writer_add(tl_xlsx_writer *w, const tl_result *r, tl_error *err);
/*
 * A sheet too large to hold whole, given in parts: r's table holds the sheet's next
 * records (the same columns each time), `total` the sheet's records in all.  The first
 * part starts the sheet and decides how its columns look (their number styles from its
 * records, their widths from its first rows: give it at least 200 records, or all); the
 * part that reaches `total` ends it.  r's table is the writer's from then on (freed once
 * rendered, or on a failure).  Returns once at most this part and the one before are
 * waiting to be rendered (helping meanwhile), so that the parts in memory stay two.
 * Returns 0, or -1 with *err set (a sheet larger than a worksheet).
 */
int tl_xlsx_writer_add_part(tl_xlsx_writer *w, const tl_result *r, size_t total, tl_error *err);
int tl_xlsx_writer_sync(tl_xlsx_writer *w, size_t upto, tl_error *err);
int tl_xlsx_writer_close(tl_xlsx_writer *w, const tl_summary_sheet *summary, tl_error *err);
void tl_xlsx_writer_abort(tl_xlsx_writer *w);

/* Text longer than Excel's limit is cut in the workbook: one warning for all the cells cut
 * since the last call (how many, and the first one's sheet, column and row), none when
 * there were none.  The programs call it after their answer. */
void tl_xlsx_warn_cut_text(void);

/* In the child of a fork: the count of cut cells and its lock start afresh. */
void tl_xlsx_after_fork(void);

#endif
