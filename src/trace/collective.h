/*
 * collective.h - the collective kernels of traces as rows (TRACES.md §7, MULTIRANK.md §3-§4):
 * one row per collective kernel with its metadata, the matching of rows across ranks
 * (Process Group Name, index_in_group, collective_id), and the 11-key summary that is
 * both one trace's coll_analysis sheet and the many-rank nccl_summary_long.
 *
 * Rows own nothing: their strings live in an arena the caller gives, so a rank's trace
 * can be freed as soon as its rows are taken.
 */
#ifndef TL_TRACE_COLLECTIVE_H
#define TL_TRACE_COLLECTIVE_H

#include "base/arena.h"
#include "table/table.h"
#include "trace/trace.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tl_coll_row {
    int64_t rank;
    tl_cval v[TL_COLL_NKEYS]; /* the metadata (TL_COLL_*): the collective name inferred, §3.3 */
    double ts, dur;
    uint8_t ts_int, dur_int;  /* written as JSON integers */
    double in_mb, out_mb;     /* message sizes (MB), NaN when missing (§3.4) */
    int64_t index_in_group;   /* set by tl_coll_match */
    const char *id;           /* collective_id, set by tl_coll_match */
} tl_coll_row;

typedef struct tl_coll_rows {
    tl_coll_row *v;
    size_t n, cap;
} tl_coll_rows;

void tl_coll_rows_free(tl_coll_rows *r);

/* Append t's collective kernels (event order) as rows of `rank`, their strings copied
 * into `a`. */
void tl_coll_rows_add(tl_coll_rows *rows, const tl_trace *t, int64_t rank, tl_arena *a);

/* Bytes per element of a dtype name (Float 4, BFloat16 2, ...), 0 when unknown. */
int tl_coll_dtype_bytes(const tl_cval *dtype);

/* Collective rows of any layout seen alike, so that one matching and one summary serve
 * both a trace's tl_coll_rows and the multi-rank report's compact rows, which keep only
 * their own times and point to metadata shared by a rank's rows of the same metadata (a
 * tl_coll_row is 224 bytes; a report holds one row per collective and rank).  Row i is
 * `size` bytes at base + i * size.  Its metadata (rank, v, in_mb, out_mb) is the row
 * itself when meta < 0, else the tl_coll_row a `tl_coll_row *` at offset meta points to
 * (the matching writes a missing group name there, alike for all the rows sharing it).
 * Its own fields are at the offsets (offsetof) ts and dur (double), dur_int (uint8_t),
 * index (int64_t index_in_group) and id (const char *). */
typedef struct tl_coll_view {
    void *base;
    size_t n, size;
    ptrdiff_t meta;
    size_t ts, dur, dur_int, index, id;
} tl_coll_view;

/* The view of a trace's rows (their own metadata). */
tl_coll_view tl_coll_rows_view(tl_coll_rows *rows);

/* Match the rows across ranks (MULTIRANK.md §3.6; rows in rank order): simplified mode
 * (every Process Group Name missing or Unknown_Group, at most one stream per rank) names
 * every group `all` and numbers each rank's rows by ts; otherwise a missing name becomes
 * Unknown_Group and rows are numbered by ts within (name, rank).  Sets index_in_group
 * and id (in `a`); returns 1 in simplified mode, else 0. */
int tl_coll_match(tl_coll_rows *rows, tl_arena *a);
/* The same over a view; rows sharing an id share one copy of it. */
int tl_coll_view_match(const tl_coll_view *w, tl_arena *a);

/* Python's str() of a value (the empty string for none), appended to b. */
void tl_cval_text(const tl_cval *v, tl_buf *b);

/* Order of two present values as pandas sorts group keys: numbers by value, strings
 * by code point, numbers before strings; 0 when equal (4 == 4.0). */
int tl_cval_cmp(const tl_cval *a, const tl_cval *b);

/* Whether metadata column `key` prints as floats over the view's rows: no text in it, and a
 * missing or float value somewhere (pandas makes such a column float64). */
int tl_coll_key_float(const tl_coll_view *w, int key);

/* The cell of a value in a column that prints as floats (as_float) or not. */
tl_cell tl_cval_cell(const tl_cval *v, int as_float);

/* The 11-key summary (MULTIRANK.md §4, TRACES.md §7): rows with a key missing dropped,
 * one row per (rank, metadata) group, dur_sum descending.  Always a table (header only
 * when no row is left); no node columns. */
tl_table *tl_coll_summary(tl_coll_rows *rows);
/* The same over a view. */
tl_table *tl_coll_view_summary(const tl_coll_view *w);

/* One trace's coll_analysis sheet (TRACES.md §7), or NULL when the trace has no cpu_op
 * or no row survives. */
tl_table *tl_coll_analysis(const tl_trace *t, tl_arena *a);

#endif
