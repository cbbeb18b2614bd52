/*
 * a2a.c - the all_to_allv sheets (MULTIRANK.md §6): nccl_all2allv (one row per
 * collective, its ranks side by side), its summary by process group and dtype, and the
 * (src, dst) heatmap of the ranks' split sizes.
 *
 * Each rank sends a different amount, so there is no bus bandwidth: the measures are the
 * wall time from the first start to the last end, throughput over it, and how unevenly
 * the data were spread.  Sums and extremes over a collective's ranks run in ascending
 * rank order, one addition after another, as the reference's Python sum() does.
 */
#include "ranks/ranks_impl.h"

#include "base/sort.h"
#include "trace/pdnum.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static tl_cval get_pg_name(const rk_row *r) { return r->m->v[TL_COLL_PG_NAME]; }
static tl_cval get_pg_ranks(const rk_row *r) { return r->m->v[TL_COLL_PG_RANKS]; }
static tl_cval get_name(const rk_row *r) { return r->m->v[TL_COLL_NAME]; }
static tl_cval get_group_size(const rk_row *r) { return r->m->v[TL_COLL_GROUP_SIZE]; }
static tl_cval get_dtype(const rk_row *r) { return r->m->v[TL_COLL_DTYPE]; }
static tl_cval get_stream(const rk_row *r) { return r->m->v[TL_COLL_STREAM]; }

/* The metadata every rank of an all_to_allv must agree on, checked and written in this
 * order, with the metadata key each is. */
static const rk_field a2a_fields[] = {
    {"Process Group Name", get_pg_name}, {"Process Group Ranks", get_pg_ranks}, {"Collective name", get_name},
    {"Group size", get_group_size},      {"dtype", get_dtype},                  {"stream", get_stream},
};
static const int a2a_keys[] = {TL_COLL_PG_NAME, TL_COLL_PG_RANKS, TL_COLL_NAME, TL_COLL_GROUP_SIZE,
                               TL_COLL_DTYPE,   TL_COLL_STREAM};
#define NA2A_FIELDS (sizeof a2a_fields / sizeof *a2a_fields)

/* A value of a long-table column that prints as floats: an int becomes a float. */
static tl_cval as_col(tl_cval v, int as_float)
{
    if (as_float && v.kind == TL_CV_INT)
        return tl_rk_num((double)v.i, 0);
    return v;
}

static int is_a2a(const tl_cval *name) { return name->kind == TL_CV_STR && strcmp(name->s, "all_to_allv") == 0; }

/* One collective's measures over its ranks. */
static void a2a_row(const rk_a2a *x, size_t k, rk_arow *o)
{
    const rk_rows *rows = x->rows;
    const rk_colls *cs = x->cs;
    int tint = !x->ts_float, dint = !x->dur_float, nint = !x->key_float[TL_COLL_IN_NELEMS];
    double es = INFINITY, ls = -INFINITY, ee = INFINITY, le = -INFINITY, maxd = -INFINITY, mind = INFINITY;
    double sum_mb = 0, sum_nel = 0, sum_dur = 0, max_mb = NAN, max_thr = NAN, min_thr = NAN;
    size_t nr = 0;
    for (size_t i = cs->first[k]; i != SIZE_MAX; i = cs->next[i]) {
        const rk_row *r = &rows->v[i];
        double end = r->ts + r->dur, mb = r->m->in_mb, nel = tl_rk_dbl(&r->m->v[TL_COLL_IN_NELEMS]);
        es = r->ts < es ? r->ts : es;
        ls = r->ts > ls ? r->ts : ls;
        ee = end < ee ? end : ee;
        le = end > le ? end : le;
        maxd = r->dur > maxd ? r->dur : maxd;
        mind = r->dur < mind ? r->dur : mind;
        sum_mb += mb;
        sum_nel += nel;
        sum_dur += r->dur;
        if (!nr || mb > max_mb) /* Python's max(): the first, replaced only by a larger one */
            max_mb = mb;
        if (mb > 0 && r->dur > 0) {
            double t = (mb / 1024) / (r->dur / 1e6);
            max_thr = isnan(max_thr) || t > max_thr ? t : max_thr;
            min_thr = isnan(min_thr) || t < min_thr ? t : min_thr;
        }
        nr++;
    }
    double wall = le - es, mean_mb = sum_mb / (double)nr;
    o->coll = k;
    o->total_mb = sum_mb;
    o->total_nelems = tl_rk_num(sum_nel, nint);
    o->wall = tl_rk_num(wall, tint && dint);
    o->max_dur = tl_rk_num(maxd, dint);
    o->min_dur = tl_rk_num(mind, dint);
    o->avg_dur = tl_rk_num(sum_dur / (double)nr, 0);
    o->thr = tl_rk_num(wall > 0 ? (sum_mb / 1024) / (wall / 1e6) : NAN, 0);
    o->max_thr = tl_rk_num(max_thr, 0);
    o->min_thr = tl_rk_num(min_thr, 0);
    o->imbalance = tl_rk_num(mean_mb > 0 ? max_mb / mean_mb : NAN, 0);
    o->skew_start = tl_rk_num(ls - es, tint);
    o->skew_end = tl_rk_num(le - ee, tint && dint);
}

int tl_rk_a2a_build(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, tl_arena *a, rk_a2a *x,
                 tl_error *err)
{
    memset(x, 0, sizeof *x);
    x->rows = rows;
    x->cs = cs;
    x->nranks = set->n;
    x->arena = a;
    for (size_t i = 0; i < rows->n; i++) {
        x->ts_float |= !rows->v[i].ts_int;
        x->dur_float |= !rows->v[i].dur_int;
    }
    for (int key = 0; key < TL_COLL_NKEYS; key++)
        x->key_float[key] = tl_rk_key_float(rows, key);
    x->v = tl_xmalloc((cs->n ? cs->n : 1) * sizeof *x->v);
    for (size_t k = 0; k < cs->n; k++) {
        if (!is_a2a(&rows->v[cs->first[k]].m->v[TL_COLL_NAME]))
            continue;
        if (tl_rk_check_meta(set, rows, cs, k, a2a_fields, NA2A_FIELDS, err) < 0) {
            tl_rk_a2a_free(x);
            return -1;
        }
        a2a_row(x, k, &x->v[x->n++]);
    }
    /* total data communicated descending, in pandas' sort order */
    double *keys = tl_xmalloc((x->n ? x->n : 1) * sizeof *keys);
    size_t *order = tl_xmalloc((x->n ? x->n : 1) * sizeof *order);
    rk_arow *sorted = tl_xmalloc((x->n ? x->n : 1) * sizeof *sorted);
    for (size_t j = 0; j < x->n; j++)
        keys[j] = x->v[j].total_mb;
    tl_pd_sort_desc(keys, x->n, order);
    for (size_t j = 0; j < x->n; j++)
        sorted[j] = x->v[order[j]];
    free(x->v);
    x->v = sorted;
    free(order);
    free(keys);
    return 0;
}

void tl_rk_a2a_free(rk_a2a *x)
{
    free(x->v);
    memset(x, 0, sizeof *x);
}

/* ---- nccl_all2allv (§6.1) ---------------------------------------------------------------- */

static const char *const per_rank_names[] = {"ts", "dur", "In msg nelems", "Out msg nelems", "In msg size (MB)",
                                             "Out msg size (MB)", "In split size", "Out split size",
                                             "skew in start time", "skew in end time"};
#define NPER_RANK 10

/* The per-rank column (rank, what), made on first use (the reference's DataFrame takes
 * its columns in order of first appearance). */
static size_t rank_col(rk_sheet *s, size_t *cols, size_t nranks, size_t rank, int what, tl_arena *a)
{
    size_t *c = &cols[(size_t)what * nranks + rank];
    if (*c == SIZE_MAX)
        *c = tl_rk_col(s, tl_arena_printf(a, "rank_%zu_%s", rank, per_rank_names[what]));
    return *c;
}

/* Rank r's value `what` (0..7) in a row, typed as the long table's column. */
static tl_cval rank_value(const rk_a2a *x, const rk_row *r, int what)
{
    switch (what) {
    case 0:
        return tl_rk_num(r->ts, !x->ts_float);
    case 1:
        return tl_rk_num(r->dur, !x->dur_float);
    case 2:
        return as_col(r->m->v[TL_COLL_IN_NELEMS], x->key_float[TL_COLL_IN_NELEMS]);
    case 3:
        return as_col(r->m->v[TL_COLL_OUT_NELEMS], x->key_float[TL_COLL_OUT_NELEMS]);
    case 4:
        return tl_rk_num(r->m->in_mb, 0);
    case 5:
        return tl_rk_num(r->m->out_mb, 0);
    case 6:
        return r->m->v[TL_COLL_IN_SPLIT];
    default:
        return r->m->v[TL_COLL_OUT_SPLIT];
    }
}

static const char *const a2a_measures[] = {
    "total data communicated (MB)", "total nelems communicated", "wall_time (us)", "max_rank_dur (us)",
    "min_rank_dur (us)", "avg_rank_dur (us)", "throughput (GB/s)", "max_rank_throughput (GB/s)",
    "min_rank_throughput (GB/s)", "size_imbalance", "skew in start time", "skew in end time"};
#define NMEASURES (sizeof a2a_measures / sizeof *a2a_measures)

static void measures_of(const rk_arow *o, tl_cval *m)
{
    tl_cval v[NMEASURES] = {tl_rk_num(o->total_mb, 0), o->total_nelems, o->wall,      o->max_dur,
                            o->min_dur,             o->avg_dur,      o->thr,       o->max_thr,
                            o->min_thr,             o->imbalance,    o->skew_start, o->skew_end};
    memcpy(m, v, sizeof v);
}

tl_table *tl_rk_a2a_table(const rk_a2a *x)
{
    const rk_rows *rows = x->rows;
    rk_sheet s;
    tl_rk_sheet_init(&s, x->n);
    size_t cid = tl_rk_col(&s, "collective_id"), cf[NA2A_FIELDS], cm[NMEASURES];
    for (size_t f = 0; f < NA2A_FIELDS; f++)
        cf[f] = tl_rk_col(&s, a2a_fields[f].name);
    for (size_t m = 0; m < NMEASURES; m++)
        cm[m] = tl_rk_col(&s, a2a_measures[m]);
    size_t *cols = tl_xmalloc(NPER_RANK * (x->nranks ? x->nranks : 1) * sizeof *cols);
    for (size_t i = 0; i < NPER_RANK * x->nranks; i++)
        cols[i] = SIZE_MAX;
    for (size_t j = 0; j < x->n; j++) {
        const rk_arow *o = &x->v[j];
        size_t first = x->cs->first[o->coll];
        const rk_row *ref = &rows->v[first];
        s.c[cid].v[j] = tl_rk_str(ref->id);
        for (size_t f = 0; f < NA2A_FIELDS; f++)
            s.c[cf[f]].v[j] = as_col(a2a_fields[f].get(ref), x->key_float[a2a_keys[f]]);
        tl_cval m[NMEASURES];
        measures_of(o, m);
        for (size_t q = 0; q < NMEASURES; q++)
            s.c[cm[q]].v[j] = m[q];
        double es = INFINITY, le = -INFINITY;
        for (size_t i = first; i != SIZE_MAX; i = x->cs->next[i]) {
            const rk_row *r = &rows->v[i];
            es = r->ts < es ? r->ts : es;
            le = r->ts + r->dur > le ? r->ts + r->dur : le;
            for (int w = 0; w < 8; w++) {
                size_t c = rank_col(&s, cols, x->nranks, (size_t)r->m->rank, w, x->arena); /* may move s.c */
                s.c[c].v[j] = rank_value(x, r, w);
            }
        }
        for (size_t i = first; i != SIZE_MAX; i = x->cs->next[i]) {
            const rk_row *r = &rows->v[i];
            size_t c8 = rank_col(&s, cols, x->nranks, (size_t)r->m->rank, 8, x->arena);
            size_t c9 = rank_col(&s, cols, x->nranks, (size_t)r->m->rank, 9, x->arena);
            s.c[c8].v[j] = tl_rk_num(r->ts - es, !x->ts_float);
            s.c[c9].v[j] = tl_rk_num(le - (r->ts + r->dur), !x->ts_float && !x->dur_float);
        }
    }
    free(cols);
    return tl_rk_sheet_table(&s);
}

/* ---- nccl_summary_all2allv (§6.2) -------------------------------------------------------- */

typedef struct grp_ctx {
    const rk_a2a *x;
} grp_ctx;

static const rk_row *ref_of(const rk_a2a *x, size_t j) { return &x->rows->v[x->cs->first[x->v[j].coll]]; }

/* Rows by (Process Group Name, dtype), stable: a group keeps the sheet's row order. */
static int grp_cmp(size_t a, size_t b, void *ctx)
{
    const rk_a2a *x = ((const grp_ctx *)ctx)->x;
    const rk_row *ra = ref_of(x, a), *rb = ref_of(x, b);
    int d = tl_cval_cmp(&ra->m->v[TL_COLL_PG_NAME], &rb->m->v[TL_COLL_PG_NAME]);
    return d ? d : tl_cval_cmp(&ra->m->v[TL_COLL_DTYPE], &rb->m->v[TL_COLL_DTYPE]);
}

/* A reduced measure: its column name's stem, the measure (index in a2a_measures), and
 * the reducers (NULL: the user's). */
typedef struct summary_col {
    int measure;
    const char *const *aggs;
    size_t naggs;
} summary_col;

static void add_reduced(rk_sheet *s, const rk_a2a *x, const size_t *idx, const size_t *start, size_t ng,
                        const summary_col *sc, tl_arena *a)
{
    size_t n = start[ng];
    double *vals = tl_xmalloc((n ? n : 1) * sizeof *vals);
    int is_int = 1;
    for (size_t i = 0; i < n; i++) {
        tl_cval m[NMEASURES];
        measures_of(&x->v[idx[i]], m);
        is_int &= m[sc->measure].kind == TL_CV_INT;
    }
    for (size_t q = 0; q < sc->naggs; q++) {
        size_t c = tl_rk_col(s, tl_arena_printf(a, "%s_%s", a2a_measures[sc->measure], sc->aggs[q]));
        for (size_t g = 0; g < ng; g++) {
            size_t len = start[g + 1] - start[g];
            for (size_t i = 0; i < len; i++) {
                tl_cval m[NMEASURES];
                measures_of(&x->v[idx[start[g] + i]], m);
                vals[i] = tl_rk_dbl(&m[sc->measure]);
            }
            s->c[c].v[g] = tl_rk_agg(sc->aggs[q], vals, len, is_int);
        }
    }
    free(vals);
}

/* The first non-missing value of metadata key `key` in a group, typed as its column. */
static tl_cval first_meta(const rk_a2a *x, const size_t *idx, size_t lo, size_t hi, int key)
{
    for (size_t i = lo; i < hi; i++) {
        tl_cval v = ref_of(x, idx[i])->m->v[key];
        if (v.kind != TL_CV_NONE && !(v.kind == TL_CV_FLOAT && isnan(v.f)))
            return as_col(v, x->key_float[key]);
    }
    return (tl_cval){0};
}

tl_table *tl_rk_a2a_summary(const rk_a2a *x, const char *const *aggs, size_t naggs, tl_arena *a)
{
    /* the rows with both keys, grouped; groups [start[g], start[g + 1]) of idx */
    size_t *idx = tl_xmalloc((x->n ? x->n : 1) * sizeof *idx), n = 0;
    for (size_t j = 0; j < x->n; j++) {
        const rk_row *r = ref_of(x, j);
        if (r->m->v[TL_COLL_PG_NAME].kind != TL_CV_NONE && r->m->v[TL_COLL_DTYPE].kind != TL_CV_NONE)
            idx[n++] = j;
    }
    if (n == 0) {
        free(idx);
        return NULL;
    }
    grp_ctx gc = {x};
    tl_sort_rows(idx, n, grp_cmp, &gc);
    size_t *start = tl_xmalloc((n + 1) * sizeof *start), ng = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || grp_cmp(idx[i - 1], idx[i], &gc) != 0)
            start[ng++] = i;
    start[ng] = n;
    rk_sheet s;
    tl_rk_sheet_init(&s, ng);
    size_t cpg = tl_rk_col(&s, "Process Group Name"), cdt = tl_rk_col(&s, "dtype");
    static const char *const sum_only[] = {"sum"}, *const mean_max[] = {"mean", "max"};
    const summary_col reduced[] = {
        {0, aggs, naggs}, {2, aggs, naggs}, {2, sum_only, 1}, {6, aggs, naggs},
        {9, mean_max, 2}, {3, mean_max, 2}, {10, mean_max, 2}, {11, mean_max, 2},
    };
    size_t ctotal_us = SIZE_MAX;
    for (size_t q = 0; q < sizeof reduced / sizeof *reduced; q++) {
        if (reduced[q].aggs == sum_only)
            ctotal_us = s.nc;
        add_reduced(&s, x, idx, start, ng, &reduced[q], a);
    }
    s.c[ctotal_us].name = "Total wall_time (us)";
    size_t ccount = tl_rk_col(&s, "count"), cranks = tl_rk_col(&s, "Process Group Ranks");
    size_t cname = tl_rk_col(&s, "Collective name"), cgs = tl_rk_col(&s, "Group size");
    size_t cms = tl_rk_col(&s, "Total wall_time (ms)");
    double *totals = tl_xmalloc(ng * sizeof *totals);
    for (size_t g = 0; g < ng; g++) {
        const rk_row *r = ref_of(x, idx[start[g]]);
        s.c[cpg].v[g] = as_col(r->m->v[TL_COLL_PG_NAME], x->key_float[TL_COLL_PG_NAME]);
        s.c[cdt].v[g] = as_col(r->m->v[TL_COLL_DTYPE], x->key_float[TL_COLL_DTYPE]);
        s.c[ccount].v[g] = tl_rk_int((int64_t)(start[g + 1] - start[g]));
        s.c[cranks].v[g] = first_meta(x, idx, start[g], start[g + 1], TL_COLL_PG_RANKS);
        s.c[cname].v[g] = first_meta(x, idx, start[g], start[g + 1], TL_COLL_NAME);
        s.c[cgs].v[g] = first_meta(x, idx, start[g], start[g + 1], TL_COLL_GROUP_SIZE);
        totals[g] = tl_rk_dbl(&s.c[ctotal_us].v[g]) / 1000;
        s.c[cms].v[g] = tl_rk_num(totals[g], 0);
    }
    tl_rk_sheet_sort_desc(&s, totals); /* Total wall_time (ms) descending */
    free(totals);
    free(start);
    free(idx);
    return tl_rk_sheet_table(&s);
}

/* ---- nccl_all2allv_heatmap (§6.3) -------------------------------------------------------- */

/* A split-size list: `[a, b, ...]` text, or a JSON array (held as tuple text).  Returns
 * its length and the integers in *out (malloc'd), or -1 when it is not a list of
 * integers. */
static long parse_split(const tl_cval *v, int64_t **out)
{
    *out = NULL;
    if (v->kind != TL_CV_STR && v->kind != TL_CV_REPR)
        return -1;
    const char *p = v->s;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    char close = *p == '[' ? ']' : (*p == '(' && v->kind == TL_CV_REPR) ? ')' : 0;
    if (!close)
        return -1;
    p++;
    size_t n = 0, cap = 0;
    int64_t *a = NULL;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == close)
            break;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno)
            goto bad;
        TL_GROW(a, cap, n + 1);
        a[n++] = x;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != close)
            goto bad;
    }
    p++;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p)
        goto bad;
    *out = a;
    return (long)n;
bad:
    free(a);
    return -1;
}

typedef struct pair_bytes {
    int64_t src, dst;
    __int128 bytes;
} pair_bytes;

static int pair_cmp(const void *a, const void *b)
{
    const pair_bytes *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

tl_table *tl_rk_a2a_heatmap(const rk_rows *rows)
{
    pair_bytes *p = NULL;
    size_t np = 0, cap = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const rk_row *r = &rows->v[i];
        if (!is_a2a(&r->m->v[TL_COLL_NAME]))
            continue;
        int64_t *split;
        long len = parse_split(&r->m->v[TL_COLL_IN_SPLIT], &split);
        const tl_cval *gs = &r->m->v[TL_COLL_GROUP_SIZE];
        int bytes = tl_coll_dtype_bytes(&r->m->v[TL_COLL_DTYPE]);
        int size_ok = gs->kind == TL_CV_NONE || tl_rk_dbl(gs) == (double)len;
        if (len >= 0 && size_ok && bytes) {
            TL_GROW(p, cap, np + (size_t)len);
            for (long j = 0; j < len; j++)
                p[np++] = (pair_bytes){r->m->rank, j, (__int128)split[j] * bytes};
        }
        free(split);
    }
    if (np == 0) {
        free(p);
        return NULL;
    }
    qsort(p, np, sizeof *p, pair_cmp);
    size_t ng = 0;
    for (size_t i = 0; i < np; i++)
        ng += !i || pair_cmp(&p[i - 1], &p[i]) != 0;
    rk_sheet s;
    tl_rk_sheet_init(&s, ng);
    size_t csrc = tl_rk_col(&s, "src_rank"), cdst = tl_rk_col(&s, "dst_rank"), ctot = tl_rk_col(&s, "total_sent_MB");
    size_t cavg = tl_rk_col(&s, "avg_sent_MB"), ccnt = tl_rk_col(&s, "count");
    for (size_t i = 0, g = 0; i < np; g++) {
        size_t j = i;
        __int128 total = 0;
        for (; j < np && pair_cmp(&p[i], &p[j]) == 0; j++)
            total += p[j].bytes;
        /* Python's int / int: the exact total rounded once, then an exact power-of-two */
        double mb = (double)total / 1048576.0;
        s.c[csrc].v[g] = tl_rk_int(p[i].src);
        s.c[cdst].v[g] = tl_rk_int(p[i].dst);
        s.c[ctot].v[g] = tl_rk_num(mb, 0);
        s.c[cavg].v[g] = tl_rk_num(mb / (double)(j - i), 0);
        s.c[ccnt].v[g] = tl_rk_int((int64_t)(j - i));
        i = j;
    }
    free(p);
    return tl_rk_sheet_table(&s);
}
