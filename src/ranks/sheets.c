/*
 * sheets.c - the multi-rank collective report's sheets (MULTIRANK.md §2-§7) from the
 * ranks' collective rows: nccl_long, nccl_summary_long, the implicit-sync sheets and the
 * straggler summary, the all_to_allv sheets, and the node columns.
 *
 * Cells are built as tl_cval values (an int stays an int, as Python keeps it) and typed
 * per column as pandas types a DataFrame built from them: a column of numbers with a
 * missing or float value prints as floats, one with any text keeps each value as is.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- nccl_long (§3) -------------------------------------------------------------------- */

/* What a column of nccl_long holds, in the sheet's order (built once: the metadata
 * columns' names are tl_coll_key_names, and each message size follows its nelems). */
enum { LC_ID, LC_INDEX, LC_RANK, LC_KEY, LC_IN_MB, LC_OUT_MB, LC_TS, LC_DUR };
typedef struct long_col {
    const char *name;
    int what; /* LC_* */
    int key;  /* LC_KEY: the TL_COLL_* key */
} long_col;
#define NLONG_COLS (5 + TL_COLL_NKEYS + 2)

static size_t long_layout(long_col *c)
{
    size_t n = 0;
    c[n++] = (long_col){"collective_id", LC_ID, 0};
    c[n++] = (long_col){"index_in_group", LC_INDEX, 0};
    c[n++] = (long_col){"rank", LC_RANK, 0};
    for (int k = 0; k < TL_COLL_NKEYS; k++) {
        c[n++] = (long_col){tl_coll_key_names[k], LC_KEY, k};
        if (k == TL_COLL_IN_NELEMS)
            c[n++] = (long_col){"In msg size (MB)", LC_IN_MB, 0};
        if (k == TL_COLL_OUT_NELEMS)
            c[n++] = (long_col){"Out msg size (MB)", LC_OUT_MB, 0};
    }
    c[n++] = (long_col){"ts", LC_TS, 0};
    c[n++] = (long_col){"dur", LC_DUR, 0};
    return n;
}

static tl_cval long_value(const rk_row *r, const long_col *c)
{
    switch (c->what) {
    case LC_ID: return tl_rk_str(r->id);
    case LC_INDEX: return tl_rk_int(r->index_in_group);
    case LC_RANK: return tl_rk_int(r->m->rank);
    case LC_KEY: return r->m->v[c->key];
    case LC_IN_MB: return tl_rk_num(r->m->in_mb, 0);
    case LC_OUT_MB: return tl_rk_num(r->m->out_mb, 0);
    case LC_TS: return tl_rk_num(r->ts, r->ts_int);
    default: return tl_rk_num(r->dur, r->dur_int);
    }
}

/* How a column of every row prints, as tl_rk_sheet_table types it (floats: numbers with
 * a missing or float value; text: a cell that is text), found over all the rows so that
 * every piece of the sheet prints as the whole would. */
static void long_types(const rk_rows *rows, const long_col *c, int *fl, int *str)
{
    int seen_text = 0;
    *fl = 0;
    for (size_t i = 0; i < rows->n && !seen_text; i++) {
        tl_cval v = long_value(&rows->v[i], c);
        seen_text = v.kind == TL_CV_STR || v.kind == TL_CV_REPR;
        *fl |= v.kind == TL_CV_NONE || v.kind == TL_CV_FLOAT;
    }
    if (seen_text)
        *fl = 0;
    *str = 0;
    for (size_t i = 0; i < rows->n && !*str; i++) {
        tl_cval v = long_value(&rows->v[i], c);
        *str = tl_cval_cell(&v, *fl).kind == TL_STR;
    }
}

/* Rows [lo, hi) of nccl_long, typed by the whole sheet's types. */
static tl_table *long_piece(const rk_rows *rows, size_t lo, size_t hi, const long_col *cols, size_t nc,
                            const int *fl, const int *str)
{
    tl_table *t = tl_table_new();
    t->nrows = hi - lo;
    for (size_t c = 0; c < nc; c++) {
        size_t k = tl_table_add_column(t, cols[c].name);
        for (size_t i = lo; i < hi; i++) {
            tl_cval v = long_value(&rows->v[i], &cols[c]);
            t->cols[k].cells[i - lo] = tl_cval_cell(&v, fl[c]);
        }
        t->cols[k].type = str[c] ? TL_COL_STR : TL_COL_NUM;
    }
    return t;
}

/* ---- all of them ------------------------------------------------------------------------- */

/* Sheet `name` to the output, with its node columns. */
static int put(const tl_ranks_out *out, const char *name, tl_table *t, long gpn, tl_error *err)
{
    tl_rk_node_columns(t, gpn);
    return out->sheet(out->ctx, name, t, 0, 1, t->nrows, err);
}

/* nccl_long to the output in pieces of out->piece_rows rows (all in one when 0): the
 * sheet has a row per collective and rank, the largest of the report by far, so it is
 * never whole in memory when the output can take it in pieces. */
static int put_long(const tl_ranks_out *out, const rk_rows *rows, long gpn, tl_error *err)
{
    long_col cols[NLONG_COLS];
    int fl[NLONG_COLS], str[NLONG_COLS];
    size_t nc = long_layout(cols);
    for (size_t c = 0; c < nc; c++)
        long_types(rows, &cols[c], &fl[c], &str[c]);
    size_t step = out->piece_rows ? out->piece_rows : rows->n;
    size_t piece = 0;
    for (size_t lo = 0; lo < rows->n; lo += step, piece++) {
        size_t hi = rows->n - lo > step ? lo + step : rows->n;
        tl_table *t = long_piece(rows, lo, hi, cols, nc, fl, str);
        tl_rk_node_columns(t, gpn);
        if (out->sheet(out->ctx, "nccl_long", t, piece, hi == rows->n, rows->n, err) != 0)
            return -1;
    }
    return 0;
}

/* A warning when a process group's ranks saw different numbers of collectives: matching
 * by position then pairs collectives that may not be the same ones (the reference is
 * silent).  Rows are numbered from 0 within (group, rank), so a count is the highest
 * index + 1. */
static void warn_counts(const rk_rows *rows, size_t nranks)
{
    tl_strmap groups = {0};
    const char **names = NULL;
    int64_t *cnt = NULL; /* ng x nranks */
    size_t ng = 0, namecap = 0, cntcap = 0;
    tl_buf b = {0};
    tl_arena keys;
    tl_arena_init(&keys);
    for (size_t i = 0; i < rows->n; i++) {
        const rk_row *r = &rows->v[i];
        tl_buf_clear(&b);
        tl_cval_text(&r->m->v[TL_COLL_PG_NAME], &b);
        const tl_strmap_slot *f = tl_strmap_find(&groups, tl_buf_cstr(&b));
        size_t g;
        if (f) {
            g = f->value;
        } else {
            g = ng++;
            TL_GROW(names, namecap, ng);
            names[g] = tl_arena_strdup(&keys, tl_buf_cstr(&b));
            tl_strmap_get(&groups, names[g])->value = g;
            TL_GROW(cnt, cntcap, ng * nranks);
            memset(cnt + g * nranks, 0, nranks * sizeof *cnt);
        }
        if ((size_t)r->m->rank < nranks && r->index_in_group + 1 > cnt[g * nranks + r->m->rank])
            cnt[g * nranks + r->m->rank] = r->index_in_group + 1;
    }
    for (size_t g = 0; g < ng; g++) {
        size_t lo = SIZE_MAX, hi = SIZE_MAX;
        for (size_t r = 0; r < nranks; r++) {
            int64_t c = cnt[g * nranks + r];
            if (lo == SIZE_MAX || c < cnt[g * nranks + lo])
                lo = r;
            if (hi == SIZE_MAX || c > cnt[g * nranks + hi])
                hi = r;
        }
        if (lo != SIZE_MAX && cnt[g * nranks + lo] != cnt[g * nranks + hi])
            tl_warn("process group %s: rank %zu has %lld collectives, rank %zu has %lld; collectives are matched by "
                    "their position in each rank, so past the first %lld they are matched across fewer ranks (and "
                    "wrongly, if a rank missed one before)", names[g], lo, (long long)cnt[g * nranks + lo], hi,
                    (long long)cnt[g * nranks + hi], (long long)cnt[g * nranks + lo]);
    }
    tl_buf_free(&b);
    free(names);
    free(cnt);
    tl_strmap_clear(&groups);
    tl_arena_free(&keys);
}

/* A warning when the files' distributedInfo says they come from another job or rank than
 * their place in the set (MULTIRANK.md §1.4: the place decides; never refused): the
 * first such file named, with how many more there are. */
static void warn_jobs(const tl_rank_set *set)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < set->n; i++) {
        const tl_rank_facts *f = &set->facts[i];
        if ((f->dist_world >= 0 && (size_t)f->dist_world != set->n) || (f->dist_rank >= 0 && (size_t)f->dist_rank != i))
            if (bad++ == 0)
                first = i;
    }
    if (!bad)
        return;
    const tl_rank_facts *f = &set->facts[first];
    tl_buf more = {0};
    if (bad > 1)
        tl_buf_printf(&more, " (and %zu more files that disagree)", bad - 1);
    tl_warn("rank %zu (%s): its distributedInfo says rank %ld of a world of %ld, not rank %zu of %zu: files of "
            "another job or rank?  Read as rank %zu, by its place in the set%s",
            first, set->paths[first], f->dist_rank, f->dist_world, first, set->n, first, tl_buf_cstr(&more));
    tl_buf_free(&more);
}

/* Every rank's rows, rank by rank: their times, and their metadata pointed to where the
 * facts keep them (facts not yet compacted are compacted first). */
static void take_rows(tl_rank_set *set, rk_rows *rows)
{
    /* the traces' buffers were freed on the reading threads, whose malloc arenas keep
     * what is freed there: give those pages back before the sheets are made */
    tl_release_freed();
    size_t total = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (set->facts[i].rows.n)
            tl_rk_facts_compact(&set->facts[i]);
        total += set->facts[i].ncrows;
    }
    rows->v = tl_xmalloc((total ? total : 1) * sizeof *rows->v);
    rows->n = 0;
    for (size_t i = 0; i < set->n; i++) {
        tl_rank_facts *f = &set->facts[i];
        for (size_t k = 0; k < f->ncrows; k++) {
            const tl_rank_row *c = &f->crows[k];
            rows->v[rows->n++] = (rk_row){&f->metas[c->meta], NULL, c->ts, c->dur, 0, c->ts_int, c->dur_int};
        }
        /* the times are the report's now */
        if (!f->stored)
            free(f->crows);
        f->crows = NULL;
        f->ncrows = 0;
    }
    tl_rk_store_drop_times(set->store);
}

/* The sheets to the output in workbook order, once every check has passed (§8.2, §8.3
 * refuse before anything is given). */
static int put_all(const tl_rank_set *set, const tl_ranks_opts *o, tl_arena *a, const rk_rows *rows,
                   rk_implicit *isync, rk_a2a *a2a, long gpn, const tl_ranks_out *out, tl_error *err)
{
    const char *const *aggs = o->naggs ? o->aggs : (const char *const[]){"mean", "median", "min", "max"};
    size_t naggs = o->naggs ? o->naggs : 4;
    if (put(out, "nccl_summary_implicit_sync", tl_rk_implicit_summary(isync, aggs, naggs, a), gpn, err) != 0 ||
        put(out, "nccl_summary_long", tl_rk_summary(rows), gpn, err) != 0)
        return -1;
    tl_table *a2a_sum = a2a->n ? tl_rk_a2a_summary(a2a, aggs, naggs, a) : NULL;
    if (a2a_sum && put(out, "nccl_summary_all2allv", a2a_sum, gpn, err) != 0)
        return -1;
    /* the heatmap reads every all_to_allv row, whatever its collective's reference row */
    if (o->heatmap && set->n <= 1024) {
        tl_table *hm = tl_rk_a2a_heatmap(rows);
        if (hm && put(out, "nccl_all2allv_heatmap", hm, 0, err) != 0)
            return -1;
    }
    if (put_long(out, rows, gpn, err) != 0 ||
        put(out, "nccl_implicit_sync", tl_rk_implicit_table(isync), gpn, err) != 0)
        return -1;
    if (a2a->n && put(out, "nccl_all2allv", tl_rk_a2a_table(a2a), gpn, err) != 0)
        return -1;
    if (isync->n && put(out, "straggler_summary", tl_rk_straggler(isync, rows, set->n), gpn, err) != 0)
        return -1;
    return 0;
}

int tl_ranks_sheets_to(tl_rank_set *set, const tl_ranks_opts *o, tl_arena *a, const tl_ranks_out *out, tl_error *err)
{
    rk_rows rows;
    take_rows(set, &rows);
    if (rows.n == 0) {
        tl_error_set(err, "no NCCL/RCCL collective kernels in any of the %zu rank files", set->n);
        free(rows.v);
        return -1;
    }
    long gpn = o->gpus_per_node > 0 ? o->gpus_per_node : set->facts[0].ndevices > 0 ? set->facts[0].ndevices : 0;
    int simple = tl_rk_match(&rows, a);
    warn_jobs(set);
    warn_counts(&rows, set->n);
    rk_colls cs;
    tl_rk_colls_build(&rows, &cs);
    rk_implicit isync;
    rk_a2a a2a;
    int rc = -1;
    if (tl_rk_implicit_build(set, &rows, &cs, simple, a, &isync, err) == 0) {
        if (tl_rk_a2a_build(set, &rows, &cs, a, &a2a, err) == 0) {
            rc = put_all(set, o, a, &rows, &isync, &a2a, gpn, out, err);
            tl_rk_a2a_free(&a2a);
        }
        tl_rk_implicit_free(&isync);
    }
    tl_rk_colls_free(&cs);
    free(rows.v);
    return rc;
}

/* The sheets whole, appended to a tl_results. */
static int add_result(void *ctx, const char *name, tl_table *t, size_t piece, int last, size_t total, tl_error *err)
{
    tl_results *res = ctx;
    (void)piece, (void)last, (void)total, (void)err;
    TL_GROW(res->items, res->cap, res->n + 1);
    tl_result *r = &res->items[res->n++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->table = t;
    r->nrows = t->nrows;
    r->ncols = t->ncols;
    return 0;
}

int tl_ranks_sheets(tl_rank_set *set, const tl_ranks_opts *o, tl_arena *a, tl_results *out, tl_error *err)
{
    tl_ranks_out to = {add_result, out, 0};
    return tl_ranks_sheets_to(set, o, a, &to, err);
}
