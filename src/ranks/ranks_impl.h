/*
 * ranks_impl.h - what the sheet makers of src/ranks/ share: a sheet of values typed as
 * pandas types a DataFrame, the collectives across ranks, the implicit-sync and
 * all_to_allv tables.  Private to src/ranks/.
 */
#ifndef TL_RANKS_IMPL_H
#define TL_RANKS_IMPL_H

#include "ranks/ranks.h"

/* A collective row of the report: its times and its place among the collectives, its
 * metadata (rank, the TL_COLL_* values, message sizes) shared with the rank's other rows
 * of the same metadata: the rank's facts' metas (tl_rank_row made whole as a pointer,
 * 48 bytes a row where a tl_coll_row is 224).  The report holds one per collective and
 * rank. */
typedef struct rk_row {
    tl_coll_row *m;         /* its metadata (m->rank, m->v, m->in_mb, m->out_mb; not m's times) */
    const char *id;         /* collective_id, set by tl_rk_match */
    double ts, dur;
    int64_t index_in_group; /* set by tl_rk_match */
    uint8_t ts_int, dur_int;
} rk_row;
typedef struct rk_rows {
    rk_row *v;
    size_t n;
} rk_rows;

/* Match the rows across ranks, as tl_coll_match does a trace's (MULTIRANK.md §3.6): sets
 * index_in_group and id (in `a`), and a missing group name in the metadata; returns 1 in
 * simplified mode, else 0. */
int tl_rk_match(rk_rows *rows, tl_arena *a);
/* nccl_summary_long (§4) over the report's rows, as tl_coll_summary makes it of a trace's. */
tl_table *tl_rk_summary(const rk_rows *rows);
/* Whether metadata `key` prints as floats over the rows (tl_coll_key_float). */
int tl_rk_key_float(const rk_rows *rows, int key);

/* A sheet under construction: columns of values, nrows each. */
typedef struct rk_vcol {
    const char *name;
    tl_cval *v;
} rk_vcol;
typedef struct rk_sheet {
    size_t nrows;
    rk_vcol *c;
    size_t nc, cap;
} rk_sheet;

void tl_rk_sheet_init(rk_sheet *s, size_t nrows);
size_t tl_rk_col(rk_sheet *s, const char *name); /* a new column (the name must outlive it) */
/* The table (columns typed as pandas would: tl_cval_cell with the column's float rule);
 * the sheet is emptied. */
tl_table *tl_rk_sheet_table(rk_sheet *s);
/* Every column's rows reordered by key[0..s->nrows) descending, in pandas' sort order. */
void tl_rk_sheet_sort_desc(rk_sheet *s, const double *key);
/* 1 when a column of these values prints as floats (numbers with a missing or float). */
int tl_rk_col_float(const tl_cval *v, size_t n);
tl_cval tl_rk_int(int64_t i);
tl_cval tl_rk_num(double d, int is_int); /* NaN: missing */
tl_cval tl_rk_str(const char *s);
double tl_rk_dbl(const tl_cval *v);      /* NaN when not a number */

/* node_id / node_span appended to a sheet with rows (§7; gpn <= 0: none). */
void tl_rk_node_columns(tl_table *t, long gpn);

/* The distinct collective_ids in order of first appearance, each with its rows chained
 * in row order (ascending rank). */
typedef struct rk_colls {
    size_t n;
    size_t *first; /* per collective: its first row (the reference row) */
    size_t *count; /* per collective: its rows */
    size_t *next;  /* per row: the next row of its collective, or SIZE_MAX */
} rk_colls;
void tl_rk_colls_build(const rk_rows *rows, rk_colls *cs);
void tl_rk_colls_free(rk_colls *cs);

/* The type of a collective name (allreduce, reducescatter, allgather, alltoall,
 * alltoallv), or NULL. */
const char *tl_rk_coll_type(const tl_cval *name);
int tl_rk_implicit_type(const char *type);

/* A metadata field that must agree across a collective's rows. */
typedef struct rk_field {
    const char *name;
    tl_cval (*get)(const rk_row *r);
} rk_field;
/* 0 when every row of collective k agrees with its reference row on each field, else -1
 * with the §8.2 line in *err. */
int tl_rk_check_meta(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, size_t k,
                  const rk_field *fields, size_t nf, tl_error *err);

/* §5: the implicit-sync collectives, computed once for three sheets. */
typedef struct rk_irow {
    size_t coll;      /* its collective (rk_colls index) */
    tl_cval full_mb, algo, bus; /* numbers or missing */
    tl_cval latency, skew_start, skew_end, avg_wait;
    int64_t earliest_rank;
    int ts_int;       /* every rank's ts an integer: the waits are integers */
    double *wait;     /* per rank of the world: NaN where absent */
} rk_irow;
typedef struct rk_implicit {
    size_t n;
    rk_irow *v;
    const rk_rows *rows;
    const rk_colls *cs;
    size_t nranks;
    size_t *wait_order; /* ranks in the order of their wait columns */
    size_t nwait;
    int wait_int;       /* every wait an integer (all ts integers) */
    tl_arena *arena;    /* the sheets' strings (column names) */
} rk_implicit;
int tl_rk_implicit_build(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, int simple, tl_arena *a,
                      rk_implicit *out, tl_error *err);
tl_table *tl_rk_implicit_table(const rk_implicit *im);
tl_table *tl_rk_implicit_summary(const rk_implicit *im, const char *const *aggs, size_t naggs, tl_arena *a);
tl_table *tl_rk_straggler(const rk_implicit *im, const rk_rows *rows, size_t nranks);
void tl_rk_implicit_free(rk_implicit *im);

/* §6: the all_to_allv collectives, each with its measures (numbers typed as pandas
 * types them: ints where the long table's columns hold only ints). */
typedef struct rk_arow {
    size_t coll;    /* its collective (rk_colls index) */
    double total_mb;
    tl_cval total_nelems, wall, max_dur, min_dur, avg_dur, thr, max_thr, min_thr, imbalance, skew_start, skew_end;
} rk_arow;
typedef struct rk_a2a {
    size_t n;
    rk_arow *v;       /* in the sheet's order (total data communicated descending) */
    const rk_rows *rows;
    const rk_colls *cs;
    size_t nranks;
    int ts_float, dur_float; /* the long table's ts / dur columns print as floats */
    int key_float[TL_COLL_NKEYS];
    tl_arena *arena;  /* the sheets' strings (column names) */
} rk_a2a;
int tl_rk_a2a_build(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, tl_arena *a, rk_a2a *out,
                 tl_error *err);
tl_table *tl_rk_a2a_table(const rk_a2a *x);
/* NULL when no row has both a Process Group Name and a dtype. */
tl_table *tl_rk_a2a_summary(const rk_a2a *x, const char *const *aggs, size_t naggs, tl_arena *a);
/* NULL when no all_to_allv row has usable split sizes. */
tl_table *tl_rk_a2a_heatmap(const rk_rows *rows);
void tl_rk_a2a_free(rk_a2a *x);

/* pandas' groupby reducers over one group's values (NaN: missing, skipped), by name
 * (mean median min max std var sum count first last); `is_int`: the column holds only
 * integers, so min/max/sum/first/last stay integers. */
int tl_rk_agg_known(const char *name);
tl_cval tl_rk_agg(const char *name, const double *v, size_t n, int is_int);

/* A rank's facts made small to keep: its rows as their times and an index into its
 * distinct metadata (tl_rank_row: 24 bytes a row, not a tl_coll_row's 224), their texts
 * moved out of the arena (whose blocks are 256 KB) into one block of exactly their size,
 * each text once.  Many ranks' facts are held at once; this keeps them a few bytes per
 * collective. */
void tl_rk_facts_compact(tl_rank_facts *f);

/* The ranks' rows' times given back once the report has taken them (their metadata stay:
 * the report's rows point to them). */
void tl_rk_store_drop_times(tl_rank_store *st);

#endif
