/*
 * match.c - the report's rows matched across ranks (MULTIRANK.md §3.6) and their 11-key
 * summary (§4), over the compact rows (rk_row) the report holds: the same rules as
 * trace/collective.c applies to one trace's tl_coll_rows (tl_coll_match,
 * tl_coll_summary), whose rows are 224 bytes each and would make the report's memory
 * grow with the ranks.
 */
#include "ranks/ranks_impl.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- matching (§3.6) ------------------------------------------------------------------ */

typedef struct match_ctx {
    const rk_row *v;
    int by_group;
} match_ctx;

/* (Process Group Name when by_group, rank, ts); the sort is stable: equal ts in row order. */
static int match_cmp(size_t x, size_t y, void *ctx)
{
    const match_ctx *m = ctx;
    const rk_row *a = &m->v[x], *b = &m->v[y];
    if (m->by_group) {
        int c = tl_cval_cmp(&a->m->v[TL_COLL_PG_NAME], &b->m->v[TL_COLL_PG_NAME]);
        if (c)
            return c;
    }
    if (a->m->rank != b->m->rank)
        return a->m->rank < b->m->rank ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* Simplified mode: no row names a real group, and no rank has two streams. */
static int simplified(const rk_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        const tl_cval *pg = &rows->v[i].m->v[TL_COLL_PG_NAME];
        if (pg->kind != TL_CV_NONE && !(pg->kind == TL_CV_STR && strcmp(pg->s, "Unknown_Group") == 0))
            return 0;
    }
    /* each row's stream compared with the first stream seen for its rank, in a sorted
     * copy (a rank's rows need not be together) */
    size_t *idx = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *idx);
    for (size_t i = 0; i < rows->n; i++)
        idx[i] = i;
    match_ctx m = {rows->v, 0};
    tl_sort_rows(idx, rows->n, match_cmp, &m);
    int ok = 1;
    const tl_cval *first = NULL;
    for (size_t k = 0; k < rows->n && ok; k++) {
        const tl_coll_row *r = rows->v[idx[k]].m;
        if (k == 0 || r->rank != rows->v[idx[k - 1]].m->rank)
            first = NULL;
        const tl_cval *s = &r->v[TL_COLL_STREAM];
        if (s->kind == TL_CV_NONE)
            continue;
        if (!first)
            first = s;
        else if (tl_cval_cmp(first, s) != 0)
            ok = 0;
    }
    free(idx);
    return ok;
}

int tl_rk_match(rk_rows *rows, tl_arena *a)
{
    int simple = simplified(rows);
    /* a metadata is its rank's rows', so every row of it is named alike */
    for (size_t i = 0; i < rows->n; i++) {
        tl_cval *pg = &rows->v[i].m->v[TL_COLL_PG_NAME];
        if (simple || pg->kind == TL_CV_NONE) {
            pg->kind = TL_CV_STR;
            pg->s = simple ? "all" : "Unknown_Group";
        }
    }
    size_t *idx = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *idx);
    for (size_t i = 0; i < rows->n; i++)
        idx[i] = i;
    match_ctx m = {rows->v, !simple};
    tl_sort_rows(idx, rows->n, match_cmp, &m);
    int64_t k = 0;
    tl_buf b = {0};
    tl_strmap ids = {0};
    for (size_t j = 0; j < rows->n; j++) {
        rk_row *r = &rows->v[idx[j]];
        const rk_row *p = j ? &rows->v[idx[j - 1]] : NULL;
        if (!p || p->m->rank != r->m->rank ||
            (!simple && tl_cval_cmp(&p->m->v[TL_COLL_PG_NAME], &r->m->v[TL_COLL_PG_NAME])))
            k = 0;
        r->index_in_group = k++;
        tl_buf_clear(&b);
        if (!simple) {
            tl_cval_text(&r->m->v[TL_COLL_PG_NAME], &b);
            tl_buf_adds(&b, "_");
        }
        char s[TL_NUMFMT_MAX];
        tl_buf_add(&b, s, tl_fmt_int(r->index_in_group, s));
        /* one copy of an id for the rows of every rank that share it */
        const tl_strmap_slot *known = tl_strmap_find(&ids, tl_buf_cstr(&b));
        if (known) {
            r->id = known->key;
        } else {
            r->id = tl_arena_strndup(a, b.data, b.len);
            tl_strmap_get(&ids, r->id);
        }
    }
    tl_buf_free(&b);
    tl_strmap_clear(&ids);
    free(idx);
    return simple;
}

/* ---- the 11-key summary (§4) ----------------------------------------------------------- */

int tl_rk_key_float(const rk_rows *rows, int key)
{
    int fl = 0;
    for (size_t i = 0; i < rows->n; i++) {
        int k = rows->v[i].m->v[key].kind;
        if (k == TL_CV_STR || k == TL_CV_REPR)
            return 0;
        fl |= k == TL_CV_NONE || k == TL_CV_FLOAT;
    }
    return fl;
}

/* (rank, the metadata) */
static int summary_key_cmp(size_t x, size_t y, void *ctx)
{
    const rk_row *v = ctx;
    const tl_coll_row *a = v[x].m, *b = v[y].m;
    if (a == b)
        return 0;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    for (int k = 0; k < TL_COLL_NKEYS; k++) {
        int c = tl_cval_cmp(&a->v[k], &b->v[k]);
        if (c)
            return c;
    }
    return 0;
}

typedef struct sgroup {
    size_t first;         /* its first row (in key order: the group's row order is kept) */
    size_t count;
    double in_mb, out_mb; /* first non-missing */
    tl_kahan sum;
    int64_t isum;         /* the exact sum, when every dur is an integer */
    tl_welford w;
    double min, max;
} sgroup;

static const char *const summary_stats[] = {"In msg size (MB)_first", "Out msg size (MB)_first", "dur_sum", "dur_mean",
                                            "dur_std", "dur_min", "dur_max", "operation_count"};

/* A row's cells: the group's rank and metadata (typed by the whole column), its stats. */
static void summary_row(tl_column *col, size_t i, const tl_coll_row *r, const sgroup *s, int int_dur,
                        const int *key_float)
{
    col[0].cells[i] = tl_cell_int(r->rank);
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        col[1 + k].cells[i] = tl_cval_cell(&r->v[k], key_float[k]);
    col[1 + TL_COLL_NKEYS].cells[i] = isnan(s->in_mb) ? tl_cell_missing() : tl_cell_float(s->in_mb);
    col[2 + TL_COLL_NKEYS].cells[i] = isnan(s->out_mb) ? tl_cell_missing() : tl_cell_float(s->out_mb);
    col[3 + TL_COLL_NKEYS].cells[i] = int_dur ? tl_cell_int(s->isum) : tl_cell_float(s->sum.sum);
    col[4 + TL_COLL_NKEYS].cells[i] = tl_cell_float(s->sum.sum / (double)s->count);
    double sd = tl_welford_std(&s->w);
    col[5 + TL_COLL_NKEYS].cells[i] = isnan(sd) ? tl_cell_missing() : tl_cell_float(sd);
    col[6 + TL_COLL_NKEYS].cells[i] = int_dur ? tl_cell_int((int64_t)s->min) : tl_cell_float(s->min);
    col[7 + TL_COLL_NKEYS].cells[i] = int_dur ? tl_cell_int((int64_t)s->max) : tl_cell_float(s->max);
    col[8 + TL_COLL_NKEYS].cells[i] = tl_cell_int((int64_t)s->count);
}

static tl_table *summary_table(const rk_row *v, const sgroup *g, const size_t *order, size_t ng, int int_dur,
                               const int *key_float)
{
    tl_table *t = tl_table_new();
    t->nrows = ng;
    tl_table_add_column(t, "rank");
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        tl_table_add_column(t, tl_coll_key_names[k]);
    for (size_t c = 0; c < sizeof summary_stats / sizeof *summary_stats; c++)
        tl_table_add_column(t, summary_stats[c]);
    for (size_t i = 0; i < ng; i++)
        summary_row(t->cols, i, v[g[order[i]].first].m, &g[order[i]], int_dur, key_float);
    for (size_t c = 0; c < t->ncols; c++) {
        t->cols[c].type = TL_COL_NUM;
        for (size_t r = 0; r < t->nrows; r++)
            if (t->cols[c].cells[r].kind == TL_STR) {
                t->cols[c].type = TL_COL_STR;
                break;
            }
    }
    return t;
}

/* Every metadata value present (a group with a key missing is dropped, as pandas'
 * groupby drops it). */
static int all_keys(const tl_coll_row *m)
{
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        if (m->v[k].kind == TL_CV_NONE || (m->v[k].kind == TL_CV_FLOAT && isnan(m->v[k].f)))
            return 0;
    return 1;
}

tl_table *tl_rk_summary(const rk_rows *rows)
{
    const rk_row *v = rows->v;
    size_t n = rows->n, nk = 0;
    int int_dur = 1, key_float[TL_COLL_NKEYS];
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        key_float[k] = tl_rk_key_float(rows, k);
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        int_dur &= v[i].dur_int;
        if (all_keys(v[i].m))
            idx[nk++] = i;
    }
    tl_sort_rows(idx, nk, summary_key_cmp, (void *)v);
    /* grown as the groups come: a group per rank and metadata, far fewer than rows */
    sgroup *g = NULL;
    size_t ng = 0, gcap = 0;
    for (size_t j = 0; j < nk; j++) {
        const rk_row *r = &v[idx[j]];
        if (!j || summary_key_cmp(idx[j - 1], idx[j], (void *)v) != 0) {
            TL_GROW(g, gcap, ng + 1);
            sgroup *s = &g[ng++];
            memset(s, 0, sizeof *s);
            s->first = idx[j];
            s->in_mb = s->out_mb = NAN;
            s->min = s->max = r->dur;
        }
        sgroup *s = &g[ng - 1];
        s->count++;
        if (isnan(s->in_mb))
            s->in_mb = r->m->in_mb;
        if (isnan(s->out_mb))
            s->out_mb = r->m->out_mb;
        tl_kahan_add(&s->sum, r->dur);
        s->isum += int_dur ? (int64_t)r->dur : 0;
        tl_welford_add(&s->w, r->dur);
        s->min = r->dur < s->min ? r->dur : s->min;
        s->max = r->dur > s->max ? r->dur : s->max;
    }
    double *keys = tl_xmalloc((ng ? ng : 1) * sizeof *keys);
    size_t *order = tl_xmalloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; i < ng; i++)
        keys[i] = int_dur ? (double)g[i].isum : g[i].sum.sum;
    tl_pd_sort_desc(keys, ng, order);
    tl_table *t = summary_table(v, g, order, ng, int_dur, key_float);
    free(keys);
    free(order);
    free(g);
    free(idx);
    return t;
}
