/*
 * implicit.c - the implicit-sync collectives (MULTIRANK.md §5): per collective, the
 * ranks' arrivals and waits, bandwidth; their summary by name, dtype and size; the
 * straggler summary per rank.
 */
#include "ranks/ranks_impl.h"

#include "base/sort.h"
#include "base/numfmt.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- nccl_implicit_sync (§5.2) ----------------------------------------------------------- */

static tl_cval get_pg_name(const rk_row *r) { return r->m->v[TL_COLL_PG_NAME]; }
static tl_cval get_pg_ranks(const rk_row *r) { return r->m->v[TL_COLL_PG_RANKS]; }
static tl_cval get_name(const rk_row *r) { return r->m->v[TL_COLL_NAME]; }
static tl_cval get_group_size(const rk_row *r) { return r->m->v[TL_COLL_GROUP_SIZE]; }
static tl_cval get_dtype(const rk_row *r) { return r->m->v[TL_COLL_DTYPE]; }
static tl_cval get_in_nelems(const rk_row *r) { return r->m->v[TL_COLL_IN_NELEMS]; }
static tl_cval get_out_nelems(const rk_row *r) { return r->m->v[TL_COLL_OUT_NELEMS]; }
static tl_cval get_in_mb(const rk_row *r) { return tl_rk_num(r->m->in_mb, 0); }
static tl_cval get_out_mb(const rk_row *r) { return tl_rk_num(r->m->out_mb, 0); }

/* The metadata every rank of an implicit-sync collective must agree on, in the order
 * they are checked and written. */
static const rk_field isync_fields[] = {
    {"Process Group Name", get_pg_name},   {"Process Group Ranks", get_pg_ranks}, {"Collective name", get_name},
    {"Group size", get_group_size},        {"dtype", get_dtype},                  {"In msg nelems", get_in_nelems},
    {"Out msg nelems", get_out_nelems},    {"In msg size (MB)", get_in_mb},       {"Out msg size (MB)", get_out_mb},
};
#define NISYNC_FIELDS (sizeof isync_fields / sizeof *isync_fields)

/* The bus bandwidth factor of a type for a group of n: computed as written. */
static double bus_factor(const char *type, double n)
{
    return strcmp(type, "allreduce") == 0 ? 2 * (n - 1) / n : (n - 1) / n;
}

/* One kept collective's arrivals, waits and bandwidth. */
static void isync_row(const rk_implicit *im, size_t k, const char *type, rk_irow *o)
{
    const rk_rows *rows = im->rows;
    const rk_colls *cs = im->cs;
    const rk_row *ref = &rows->v[cs->first[k]];
    double latest_start = -INFINITY, earliest_end = INFINITY, latest_end = -INFINITY, lat = INFINITY;
    int ts_int = 1, dur_int = 1;
    for (size_t i = cs->first[k]; i != SIZE_MAX; i = cs->next[i]) {
        const rk_row *r = &rows->v[i];
        double end = r->ts + r->dur;
        latest_start = r->ts > latest_start ? r->ts : latest_start;
        earliest_end = end < earliest_end ? end : earliest_end;
        latest_end = end > latest_end ? end : latest_end;
        lat = r->dur < lat ? r->dur : lat;
        ts_int &= r->ts_int;
        dur_int &= r->dur_int;
    }
    o->coll = k;
    o->wait = tl_xmalloc(im->nranks * sizeof *o->wait);
    for (size_t r = 0; r < im->nranks; r++)
        o->wait[r] = NAN;
    double max_wait = -INFINITY, wsum = 0;
    size_t nr = 0;
    for (size_t i = cs->first[k]; i != SIZE_MAX; i = cs->next[i]) {
        const rk_row *r = &rows->v[i];
        double w = latest_start - r->ts;
        o->wait[r->m->rank] = w;
        if (w >= max_wait) { /* ties: the highest rank (rows come in ascending rank) */
            max_wait = w;
            o->earliest_rank = r->m->rank;
        }
        wsum += w;
        nr++;
    }
    o->ts_int = ts_int;
    o->latency = tl_rk_num(lat, dur_int);
    o->skew_start = tl_rk_num(max_wait, ts_int);
    o->avg_wait = tl_rk_num(wsum / (double)nr, 0);
    o->skew_end = tl_rk_num(latest_end - earliest_end, ts_int && dur_int);
    o->full_mb = o->algo = o->bus = (tl_cval){0};
    if (type && !isnan(ref->m->in_mb) && !isnan(ref->m->out_mb)) {
        double full = strcmp(type, "allgather") == 0 ? ref->m->out_mb : ref->m->in_mb;
        double algo = lat > 0 ? (full / 1024) / (lat / 1e6) : NAN;
        double n = tl_rk_dbl(&ref->m->v[TL_COLL_GROUP_SIZE]);
        o->full_mb = tl_rk_num(full, 0);
        o->algo = tl_rk_num(algo, 0);
        o->bus = tl_rk_num(isnan(n) ? NAN : algo * bus_factor(type, n), 0);
    }
}

int tl_rk_implicit_build(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, int simple, tl_arena *a,
                      rk_implicit *im, tl_error *err)
{
    memset(im, 0, sizeof *im);
    im->rows = rows;
    im->cs = cs;
    im->arena = a;
    im->nranks = set->n;
    im->v = tl_xcalloc(cs->n ? cs->n : 1, sizeof *im->v);
    im->wait_order = tl_xmalloc((set->n ? set->n : 1) * sizeof *im->wait_order);
    char *has_wait = tl_xcalloc(set->n ? set->n : 1, 1);
    im->wait_int = 1;
    for (size_t k = 0; k < cs->n; k++) {
        const rk_row *ref = &rows->v[cs->first[k]];
        const char *type = tl_rk_coll_type(&ref->m->v[TL_COLL_NAME]);
        if (!tl_rk_implicit_type(type) && !(simple && !type))
            continue;
        if (!simple && tl_rk_check_meta(set, rows, cs, k, isync_fields, NISYNC_FIELDS, err) < 0) {
            free(has_wait);
            tl_rk_implicit_free(im);
            return -1;
        }
        isync_row(im, k, type, &im->v[im->n++]);
        for (size_t i = cs->first[k]; i != SIZE_MAX; i = cs->next[i]) {
            im->wait_int &= rows->v[i].ts_int;
            if (!has_wait[rows->v[i].m->rank]) {
                has_wait[rows->v[i].m->rank] = 1;
                im->wait_order[im->nwait++] = (size_t)rows->v[i].m->rank;
            }
        }
    }
    free(has_wait);
    return 0;
}

void tl_rk_implicit_free(rk_implicit *im)
{
    for (size_t i = 0; i < im->n; i++)
        free(im->v[i].wait);
    free(im->v);
    free(im->wait_order);
    memset(im, 0, sizeof *im);
}

static const char *const isync_general[] = {
    "collective_id", "Process Group Name", "Process Group Ranks", "Collective name", "Group size", "dtype",
    "In msg nelems", "Out msg nelems", "In msg size (MB)", "Out msg size (MB)", "Full msg size (MB)",
    "comm_latency", "skew in start time", "earliest arrival rank", "avg_wait_time", "skew in end time",
    "algo bw (GB/s)", "bus bw (GB/s)"};

/* The per-rank column of (rank, what) (0 ts, 1 dur, 2 wait), made on first use. */
static size_t rank_col(rk_sheet *s, size_t *cols, size_t nranks, size_t rank, int what, tl_arena *a)
{
    static const char *const fmt[3] = {"rank_%zu_ts", "rank_%zu_dur", "rank_%zu_wait_time"};
    size_t *c = &cols[(size_t)what * nranks + rank];
    if (*c == SIZE_MAX)
        *c = tl_rk_col(s, tl_arena_printf(a, fmt[what], rank));
    return *c;
}

tl_table *tl_rk_implicit_table(const rk_implicit *im)
{
    if (im->n == 0)
        return tl_table_new(); /* the empty file */
    const rk_rows *rows = im->rows;
    tl_arena *names = im->arena;
    rk_sheet s;
    tl_rk_sheet_init(&s, im->n);
    size_t g[sizeof isync_general / sizeof *isync_general];
    for (size_t c = 0; c < sizeof g / sizeof *g; c++)
        g[c] = tl_rk_col(&s, isync_general[c]);
    size_t *cols = tl_xmalloc(3 * im->nranks * sizeof *cols);
    for (size_t i = 0; i < 3 * im->nranks; i++)
        cols[i] = SIZE_MAX;
    for (size_t j = 0; j < im->n; j++) {
        const rk_irow *o = &im->v[j];
        const rk_row *ref = &rows->v[im->cs->first[o->coll]];
        s.c[g[0]].v[j] = tl_rk_str(ref->id);
        for (size_t f = 0; f < NISYNC_FIELDS; f++)
            s.c[g[1 + f]].v[j] = isync_fields[f].get(ref);
        s.c[g[10]].v[j] = o->full_mb;
        s.c[g[11]].v[j] = o->latency;
        s.c[g[12]].v[j] = o->skew_start;
        s.c[g[13]].v[j] = tl_rk_int(o->earliest_rank);
        s.c[g[14]].v[j] = o->avg_wait;
        s.c[g[15]].v[j] = o->skew_end;
        s.c[g[16]].v[j] = o->algo;
        s.c[g[17]].v[j] = o->bus;
        for (size_t i = im->cs->first[o->coll]; i != SIZE_MAX; i = im->cs->next[i]) {
            const rk_row *r = &rows->v[i];
            /* the column first: making it may move s.c */
            size_t cts = rank_col(&s, cols, im->nranks, (size_t)r->m->rank, 0, names);
            size_t cdur = rank_col(&s, cols, im->nranks, (size_t)r->m->rank, 1, names);
            s.c[cts].v[j] = tl_rk_num(r->ts, r->ts_int);
            s.c[cdur].v[j] = tl_rk_num(r->dur, r->dur_int);
        }
        for (size_t i = im->cs->first[o->coll]; i != SIZE_MAX; i = im->cs->next[i]) {
            const rk_row *r = &rows->v[i];
            size_t cw = rank_col(&s, cols, im->nranks, (size_t)r->m->rank, 2, names);
            s.c[cw].v[j] = tl_rk_num(o->wait[r->m->rank], o->ts_int);
        }
    }
    free(cols);
    return tl_rk_sheet_table(&s);
}

/* ---- nccl_summary_implicit_sync (§5.3) --------------------------------------------------- */

typedef struct sum_ctx {
    const tl_cval (*key)[3];
} sum_ctx;

static int sum_key_cmp(size_t x, size_t y, void *ctx)
{
    const sum_ctx *c = ctx;
    for (int k = 0; k < 3; k++) {
        int d = tl_cval_cmp(&c->key[x][k], &c->key[y][k]);
        if (d)
            return d;
    }
    return 0;
}

/* The metric of row j: 0 latency, 1 skew in start, 2 skew in end, 3 algo bw, 4 bus bw. */
static const tl_cval *metric_of(const rk_irow *o, int m)
{
    const tl_cval *v[5] = {&o->latency, &o->skew_start, &o->skew_end, &o->algo, &o->bus};
    return v[m];
}

/* The first non-missing value of a group (rows idx[lo..hi)), as a column of `as_float`. */
static tl_cval first_of(const tl_cval *col, const size_t *idx, size_t lo, size_t hi, int as_float)
{
    for (size_t i = lo; i < hi; i++) {
        tl_cval v = col[idx[i]];
        if (v.kind == TL_CV_NONE || (v.kind == TL_CV_FLOAT && isnan(v.f)))
            continue;
        if (as_float && v.kind == TL_CV_INT)
            return tl_rk_num((double)v.i, 0);
        return v;
    }
    return (tl_cval){0};
}

tl_table *tl_rk_implicit_summary(const rk_implicit *im, const char *const *aggs, size_t naggs, tl_arena *a)
{
    if (im->n == 0)
        return tl_table_new();
    size_t n = im->n;
    tl_cval(*key)[3] = tl_xmalloc(n * sizeof *key);
    tl_cval *meta[3];
    for (int m = 0; m < 3; m++)
        meta[m] = tl_xmalloc(n * sizeof *meta[m]);
    size_t *idx = tl_xmalloc(n * sizeof *idx);
    int metric_on[5] = {1, 1, 1, 0, 0}, metric_int[5] = {1, 1, 1, 1, 1};
    for (size_t j = 0; j < n; j++) {
        const rk_irow *o = &im->v[j];
        const rk_row *ref = &im->rows->v[im->cs->first[o->coll]];
        const tl_cval *kv[3] = {&ref->m->v[TL_COLL_NAME], &ref->m->v[TL_COLL_DTYPE], &ref->m->v[TL_COLL_IN_NELEMS]};
        for (int k = 0; k < 3; k++)
            key[j][k] = kv[k]->kind == TL_CV_NONE ? tl_rk_str("Unknown") : *kv[k];
        meta[0][j] = ref->m->v[TL_COLL_PG_NAME];
        meta[1][j] = ref->m->v[TL_COLL_GROUP_SIZE];
        meta[2][j] = o->full_mb;
        for (int m = 0; m < 5; m++) {
            metric_on[m] |= metric_of(o, m)->kind != TL_CV_NONE;
            metric_int[m] &= metric_of(o, m)->kind == TL_CV_INT;
        }
        idx[j] = j;
    }
    sum_ctx sc = {(const tl_cval(*)[3])key};
    tl_sort_rows(idx, n, sum_key_cmp, &sc);
    /* the groups: [start[g], start[g + 1]) of idx */
    size_t *start = tl_xmalloc((n + 1) * sizeof *start), ng = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || sum_key_cmp(idx[i - 1], idx[i], &sc) != 0)
            start[ng++] = i;
    start[ng] = n;
    rk_sheet s;
    tl_rk_sheet_init(&s, ng);
    static const char *const keyname[3] = {"Collective name", "dtype", "In msg nelems"};
    static const char *const metaname[3] = {"Process Group Name", "Group size", "Full msg size (MB)"};
    static const char *const metric_name[5] = {"comm_latency", "skew in start time", "skew in end time",
                                               "algo bw (GB/s)", "bus bw (GB/s)"};
    size_t ck[3], cm[3];
    for (int k = 0; k < 3; k++)
        ck[k] = tl_rk_col(&s, keyname[k]);
    for (int m = 0; m < 3; m++)
        cm[m] = tl_rk_col(&s, metaname[m]);
    int meta_float[3];
    for (int m = 0; m < 3; m++)
        meta_float[m] = tl_rk_col_float(meta[m], n);
    double *vals = tl_xmalloc(n * sizeof *vals), *totals = tl_xmalloc((ng ? ng : 1) * sizeof *totals);
    for (int m = 0; m < 5; m++) {
        if (!metric_on[m])
            continue;
        for (size_t q = 0; q < naggs; q++) {
            size_t c = tl_rk_col(&s, tl_arena_printf(a, "%s_%s", metric_name[m], aggs[q]));
            for (size_t g = 0; g < ng; g++) {
                size_t len = start[g + 1] - start[g];
                for (size_t i = 0; i < len; i++)
                    vals[i] = tl_rk_dbl(metric_of(&im->v[idx[start[g] + i]], m));
                s.c[c].v[g] = tl_rk_agg(aggs[q], vals, len, metric_int[m]);
            }
        }
    }
    size_t ccount = tl_rk_col(&s, "count"), ctotal = tl_rk_col(&s, "Total comm latency (ms)");
    for (size_t g = 0; g < ng; g++) {
        size_t len = start[g + 1] - start[g];
        for (int k = 0; k < 3; k++)
            s.c[ck[k]].v[g] = key[idx[start[g]]][k];
        for (int m = 0; m < 3; m++)
            s.c[cm[m]].v[g] = first_of(meta[m], idx, start[g], start[g + 1], meta_float[m]);
        s.c[ccount].v[g] = tl_rk_int((int64_t)len);
        /* x.sum() of a Series: numpy's pairwise sum, missing as 0 */
        for (size_t i = 0; i < len; i++) {
            double v = tl_rk_dbl(&im->v[idx[start[g] + i]].latency);
            vals[i] = isnan(v) ? 0 : v;
        }
        totals[g] = tl_np_sum(vals, len) / 1000;
        s.c[ctotal].v[g] = tl_rk_num(totals[g], 0);
    }
    tl_rk_sheet_sort_desc(&s, totals); /* Total comm latency (ms) descending */
    free(vals);
    free(totals);
    free(start);
    free(idx);
    for (int m = 0; m < 3; m++)
        free(meta[m]);
    free(key);
    return tl_rk_sheet_table(&s);
}

/* ---- straggler_summary (§5.4) ------------------------------------------------------------ */

/* numpy's round(x, 1): half to even of x·10, over 10. */
static double round1(double x) { return nearbyint(x * 10) / 10; }

tl_table *tl_rk_straggler(const rk_implicit *im, const rk_rows *rows, size_t nranks)
{
    size_t nr = im->nwait, n = im->n;
    size_t *ranks = tl_xmalloc((nr ? nr : 1) * sizeof *ranks);
    memcpy(ranks, im->wait_order, nr * sizeof *ranks);
    /* ascending rank (the order of the wait columns stays for the ties of arrived-last) */
    for (size_t i = 1; i < nr; i++)
        for (size_t j = i; j > 0 && ranks[j - 1] > ranks[j]; j--) {
            size_t t = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = t;
        }
    /* the straggler of each row: its smallest wait, the first in column order on ties */
    int64_t *last = tl_xmalloc((n ? n : 1) * sizeof *last);
    for (size_t j = 0; j < n; j++) {
        last[j] = -1;
        double best = NAN;
        for (size_t c = 0; c < nr; c++) {
            double w = im->v[j].wait[im->wait_order[c]];
            if (!isnan(w) && (isnan(best) || w < best)) {
                best = w;
                last[j] = (int64_t)im->wait_order[c];
            }
        }
    }
    /* each rank's collective time: groupby sum (Kahan), rows in order */
    tl_kahan *dur = tl_xcalloc(nranks ? nranks : 1, sizeof *dur);
    int dur_int = 1;
    for (size_t i = 0; i < rows->n; i++) {
        tl_kahan_add(&dur[rows->v[i].m->rank], rows->v[i].dur);
        dur_int &= rows->v[i].dur_int;
    }
    double *col = tl_xmalloc((n ? n : 1) * sizeof *col), *total = tl_xmalloc((nr ? nr : 1) * sizeof *total);
    rk_sheet s;
    tl_rk_sheet_init(&s, nr);
    static const char *const names[] = {"rank", "total_wait_time_us", "mean_wait_time_us", "times_arrived_last",
                                        "times_arrived_first", "pct_arrived_last", "num_collectives",
                                        "total_nccl_dur_us"};
    size_t c[8];
    for (int k = 0; k < 8; k++)
        c[k] = tl_rk_col(&s, names[k]);
    for (size_t q = 0; q < nr; q++) {
        size_t r = ranks[q];
        size_t cnt = 0, nlast = 0, nfirst = 0;
        for (size_t j = 0; j < n; j++) {
            double w = im->v[j].wait[r];
            col[j] = isnan(w) ? 0 : w;
            cnt += !isnan(w);
            nlast += last[j] == (int64_t)r;
            nfirst += im->v[j].earliest_rank == (int64_t)r;
        }
        double sum = tl_np_sum(col, n);
        total[q] = round1(sum);
        s.c[c[0]].v[q] = tl_rk_int((int64_t)r);
        s.c[c[1]].v[q] = tl_rk_num(total[q], 0);
        s.c[c[2]].v[q] = tl_rk_num(cnt ? round1(sum / (double)cnt) : NAN, 0);
        s.c[c[3]].v[q] = tl_rk_int((int64_t)nlast);
        s.c[c[4]].v[q] = tl_rk_int((int64_t)nfirst);
        s.c[c[5]].v[q] = tl_rk_num(round1(100.0 * (double)nlast / (double)n), 0);
        s.c[c[6]].v[q] = tl_rk_int((int64_t)n);
        s.c[c[7]].v[q] = tl_rk_num(dur_int ? dur[r].sum : round1(dur[r].sum), dur_int);
    }
    /* the rounded total wait ascending, in numpy's quicksort order */
    size_t *order = tl_xmalloc((nr ? nr : 1) * sizeof *order);
    for (size_t q = 0; q < nr; q++)
        order[q] = q;
    tl_np_argsort(total, order, nr);
    tl_cval *tmp = tl_xmalloc((nr ? nr : 1) * sizeof *tmp);
    for (size_t k = 0; k < s.nc; k++) {
        for (size_t q = 0; q < nr; q++)
            tmp[q] = s.c[k].v[order[q]];
        memcpy(s.c[k].v, tmp, nr * sizeof *tmp);
    }
    free(tmp);
    free(order);
    free(col);
    free(total);
    free(dur);
    free(last);
    free(ranks);
    return tl_rk_sheet_table(&s);
}
