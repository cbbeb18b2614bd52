/*
 * sheets.c - the report sheets of a trace (TRACES.md §2-§4): gpu_timeline, the kernel
 * launchers and the three op sheets over them, and kernel_summary.
 *
 * The numbers are made the way TraceLens' pandas code makes them, so that they agree to
 * the last bit (TRACES.md §4.5, pdnum.h): unions summed left to right, group sums
 * Kahan-compensated, column totals pairwise, group std one-pass, sorts in numpy's
 * introsort order.
 */
#include "trace/trace_report.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/jscan.h"
#include "trace/collective.h"
#include "trace/kmap.h"
#include "trace/opcat.h"
#include "trace/pdnum.h"
#include "trace/sheets_infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const tl_trace_sheet_names[5] = {"gpu_timeline", "ops_summary_by_category", "ops_summary",
                                             "ops_unique_args", "kernel_summary"};

/* ---- names ------------------------------------------------------------------------- */

static int eat(const char **s, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*s, lit, n) != 0)
        return 0;
    *s += n;
    return 1;
}

/* The whole name is `body` with an optional ".kd" after it. */
static int kd_end(const char *s) { return *s == 0 || strcmp(s, ".kd") == 0; }

/* ROCm 7.1's copy kernels, counted as memcpy. */
static int is_legacy_memcpy(const char *s)
{
    if (eat(&s, "MEMORY_COPY_"))
        return (eat(&s, "HOST_TO_DEVICE") || eat(&s, "DEVICE_TO_HOST") || eat(&s, "DEVICE_TO_DEVICE")) && kd_end(s);
    if (eat(&s, "__amd_rocclr_copyBuffer")) {
        eat(&s, "Rect");
        eat(&s, "Aligned");
        return kd_end(s);
    }
    return 0;
}

/* ROCm 7.1's fill kernels, counted as computation. */
static int is_legacy_memset(const char *s)
{
    if (!eat(&s, "__amd_rocclr_fillBuffer"))
        return 0;
    eat(&s, "Aligned");
    return kd_end(s);
}

typedef struct opcat {
    const char *name, *cat;
} opcat;

static const opcat registry[] = {
#include "trace/op_categories.inc"
};

static int opcat_cmp(const void *k, const void *e) { return strcmp(k, ((const opcat *)e)->name); }

/* TRACES.md §4.0: the category of an op named `name` whose earliest direct kernel is
 * `first_kernel` (NULL when it launched nothing itself). */
static const char *op_category(const char *name, const char *first_kernel)
{
    const opcat *hit = bsearch(name, registry, sizeof registry / sizeof *registry, sizeof *registry, opcat_cmp);
    if (hit)
        return hit->cat;
    if (strncmp(name, "triton", 6) == 0)
        return "triton";
    if (strncmp(name, "record_param_comms", 18) == 0)
        return "record_param_comms";
    if (first_kernel && strncmp(first_kernel, "void at::native", 15) == 0) {
        if (strstr(first_kernel, "elementwise"))
            return "elementwise";
        if (strstr(first_kernel, "reduce"))
            return "reduce";
        if (strstr(first_kernel, "multi_tensor_apply"))
            return "multi_tensor_apply";
    }
    return "other";
}

/* ---- intervals --------------------------------------------------------------------- */

typedef struct ival {
    double s, e;
} ival;

typedef struct ivals {
    ival *v;
    size_t n, cap;
} ivals;

static void iv_push(ivals *a, double s, double e)
{
    TL_GROW(a->v, a->cap, a->n + 1);
    a->v[a->n].s = s;
    a->v[a->n].e = e;
    a->n++;
}

static int ival_cmp(const void *x, const void *y)
{
    const ival *a = x, *b = y;
    return a->s < b->s ? -1 : a->s > b->s ? 1 : 0;
}

/* Sort by start and merge in place (touching intervals merge).  The order among equal
 * starts does not change the union, so an unstable sort is enough. */
static void iv_merge(ivals *a)
{
    if (a->n < 2)
        return;
    qsort(a->v, a->n, sizeof *a->v, ival_cmp);
    size_t m = 0;
    for (size_t i = 1; i < a->n; i++) {
        if (a->v[i].s <= a->v[m].e) {
            if (a->v[i].e > a->v[m].e)
                a->v[m].e = a->v[i].e;
        } else {
            a->v[++m] = a->v[i];
        }
    }
    a->n = m + 1;
}

static double iv_len(const ivals *a)
{
    double s = 0;
    for (size_t i = 0; i < a->n; i++)
        s += a->v[i].e - a->v[i].s;
    return s;
}

/* out = b - a (both merged and sorted), TraceLens' sweep. */
static void iv_subtract(const ivals *a, const ivals *b, ivals *out)
{
    size_t ai = 0;
    out->n = 0;
    for (size_t bi = 0; bi < b->n; bi++) {
        double bs = b->v[bi].s, be = b->v[bi].e, cur = bs;
        while (ai < a->n && a->v[ai].e <= bs)
            ai++;
        for (size_t k = ai; k < a->n && a->v[k].s < be; k++) {
            if (a->v[k].s > cur)
                iv_push(out, cur, be < a->v[k].s ? be : a->v[k].s);
            if (a->v[k].e > cur)
                cur = a->v[k].e;
            if (cur >= be)
                break;
        }
        if (cur < be)
            iv_push(out, cur, be);
    }
}

/* Busy time (union length) of GPU events ev[idx[0..n)]. */
static double busy(const tl_trace *t, const uint32_t *idx, size_t n, ivals *scratch)
{
    scratch->n = 0;
    for (size_t i = 0; i < n; i++)
        iv_push(scratch, t->ev[idx[i]].ts, tl_tev_end(&t->ev[idx[i]]));
    iv_merge(scratch);
    return iv_len(scratch);
}

/* 1 when every GPU event ev[idx[0..n)] has integer ts and dur: their busy time (a union
 * of ends and starts, summed) is then a Python int (TRACES.md §4.6). */
static int times_int(const tl_trace *t, const uint32_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!tl_tev_times_int(&t->ev[idx[i]]))
            return 0;
    return 1;
}

/* ---- tables ------------------------------------------------------------------------ */

static tl_table *table_new(size_t nrows, const char *const *cols, size_t ncols)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    for (size_t c = 0; c < ncols; c++)
        tl_table_add_column(t, cols[c]);
    return t;
}

static void put_f(tl_table *t, size_t c, size_t r, double v)
{
    t->cols[c].cells[r] = isnan(v) ? tl_cell_missing() : tl_cell_float(v);
}
static void put_i(tl_table *t, size_t c, size_t r, int64_t v) { t->cols[c].cells[r] = tl_cell_int(v); }
/* A time column's cell: an int when the column is int64 in the reference (TRACES.md §4.6). */
static void put_t(tl_table *t, size_t c, size_t r, double v, int ints)
{
    t->cols[c].cells[r] = isnan(v) ? tl_cell_missing() : tl_trace_time_cell(v, ints);
}
static void put_s(tl_table *t, size_t c, size_t r, const char *s)
{
    t->cols[c].cells[r] = s ? tl_cell_str(s) : tl_cell_missing();
}

/* Column types from the cells (SPEC §1: any text makes a column text). */
static void table_type(tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        int str = 0;
        for (size_t r = 0; r < t->nrows && !str; r++)
            str = t->cols[c].cells[r].kind == TL_STR;
        t->cols[c].type = str ? TL_COL_STR : TL_COL_NUM;
    }
}

static void emit(tl_results *out, const char *name, tl_table *t)
{
    if (t->nrows == 0) {
        tl_table_free(t);
        return;
    }
    table_type(t);
    tl_results_add(out, name, t);
}

static const char *buf_dup(tl_arena *a, tl_buf *b) { return tl_arena_strndup(a, b->data ? b->data : "", b->len); }

static void buf_double(tl_buf *b, double d)
{
    char s[TL_NUMFMT_MAX];
    if (isnan(d))
        tl_buf_adds(b, "nan");
    else if (isinf(d))
        tl_buf_adds(b, d < 0 ? "-inf" : "inf");
    else
        tl_buf_add(b, s, tl_fmt_double(d, s));
}

static void buf_int(tl_buf *b, int64_t i)
{
    char s[TL_NUMFMT_MAX];
    tl_buf_add(b, s, tl_fmt_int(i, s));
}

/* A time that is a Python int when `ints` (TRACES.md §4.6), else a float. */
static void buf_time(tl_buf *b, double d, int ints)
{
    tl_cell c = tl_trace_time_cell(d, ints);
    if (c.kind == TL_INT)
        buf_int(b, c.v.i);
    else
        buf_double(b, d);
}

static void buf_stream(tl_buf *b, int64_t stream)
{
    if (stream == TL_TEV_NO_STREAM)
        tl_buf_adds(b, "None");
    else
        buf_int(b, stream);
}

/* ---- gpu_timeline ------------------------------------------------------------------ */

/* Why a trace has no GPU timeline, truthfully: what is missing (GPU events, the launches,
 * the flows between them) and what the trace holds instead. */
static void refuse_no_timeline(const tl_trace *t, tl_error *err)
{
    const tl_trace_census *c = &t->census;
    size_t ngpu = 0, nrt = 0;
    for (size_t i = 0; i < t->nev; i++) {
        ngpu += tl_tev_is_gpu(&t->ev[i]);
        nrt += t->ev[i].kind == TL_TEV_RUNTIME;
    }
    uint64_t nflows = c->n[TL_CAT_AC2G] + c->n[TL_CAT_OLD_FLOW];
    tl_buf b = {0};
    if (!ngpu) {
        tl_buf_adds(&b, "no GPU events (kernel, gpu_memcpy, gpu_memset), so there is no GPU timeline to report");
    } else {
        if (ngpu == 1)
            tl_buf_adds(&b, "its one GPU event is not linked to a launch, so there is no GPU timeline to report: ");
        else
            tl_buf_printf(&b, "none of its %zu GPU events is linked to a launch, so there is no GPU timeline to report: ",
                          ngpu);
        if (!nrt)
            tl_buf_adds(&b, "it has no cuda_runtime or cuda_driver event to launch them");
        else if (!nflows)
            tl_buf_adds(&b, "it has no launch flows (ac2g, or older Kineto's async_cpu_to_gpu) to link its launches by");
        else
            tl_buf_printf(&b, "no launch flow (%s) both starts at one of its %zu launch calls' correlation and ends on a GPU event",
                          tl_trace_cat_names[t->link_flows], nrt);
    }
    tl_buf_adds(&b, "; the trace holds ");
    tl_trace_census_text(t, &b, 8);
    if (t->nnonfinite)
        tl_buf_printf(&b, " (%zu of these left out: a ts or dur of NaN, Infinity or beyond a double)", t->nnonfinite);
    if (ngpu)
        tl_buf_adds(&b, " (--include_unlinked_kernels reports its GPU events without their launches)");
    tl_error_set(err, "%s: %s", t->path, tl_buf_cstr(&b));
    tl_buf_free(&b);
}

static tl_table *timeline_table(const tl_trace *t, int unlinked, double *total_us, tl_error *err);

static int gpu_timeline(const tl_trace *t, int unlinked, tl_results *out, double *total_us, tl_error *err)
{
    tl_table *tb = timeline_table(t, unlinked, total_us, err);
    if (!tb)
        return -1;
    emit(out, "gpu_timeline", tb);
    return 0;
}

tl_table *tl_trace_gpu_timeline(const tl_trace *t, int include_unlinked, tl_error *err)
{
    double total_us;
    tl_table *tb = timeline_table(t, include_unlinked, &total_us, err);
    if (tb)
        table_type(tb);
    return tb;
}

void tl_trace_timeline_of(const tl_trace *t, const uint32_t *ev, size_t n, double v[TL_TIMELINE_N])
{
    ivals comp = {0}, comm = {0}, mem = {0}, all = {0}, x = {0}, y = {0};
    for (size_t k = 0; k < n; k++) {
        const tl_tev *e = &t->ev[ev[k]];
        iv_push(&all, e->ts, tl_tev_end(e));
        if (e->kind == TL_TEV_MEMCPY || (e->kind == TL_TEV_KERNEL && is_legacy_memcpy(e->name)))
            iv_push(&mem, e->ts, tl_tev_end(e));
        else if (e->kind == TL_TEV_KERNEL && is_legacy_memset(e->name))
            iv_push(&comp, e->ts, tl_tev_end(e));
        else if (e->flags & TL_TEV_COMM)
            iv_push(&comm, e->ts, tl_tev_end(e));
        else
            iv_push(&comp, e->ts, tl_tev_end(e));
    }
    for (int i = 0; i < TL_TIMELINE_N; i++)
        v[i] = 0;
    if (all.n) {
        iv_merge(&comp);
        iv_merge(&comm);
        iv_merge(&mem);
        iv_merge(&all);
        v[0] = iv_len(&comp);
        iv_subtract(&comp, &comm, &x);
        v[1] = iv_len(&x);
        iv_subtract(&comp, &mem, &x);
        iv_subtract(&comm, &x, &y);
        v[2] = iv_len(&y);
        v[3] = iv_len(&all);
        v[5] = all.v[all.n - 1].e - all.v[0].s;
        v[4] = v[5] - v[3];
        v[6] = iv_len(&comm);
        v[7] = iv_len(&mem);
    }
    free(comp.v), free(comm.v), free(mem.v), free(all.v), free(x.v), free(y.v);
}

/* gpu_timeline's table: the GPU events linked to a launch (`unlinked`: every GPU event). */
static tl_table *timeline_table(const tl_trace *t, int unlinked, double *total_us, tl_error *err)
{
    size_t n = 0;
    uint32_t *ev = tl_xmalloc((t->nev ? t->nev : 1) * sizeof *ev);
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (tl_tev_is_gpu(e) && (unlinked || (e->flags & TL_TEV_LINKED)))
            ev[n++] = (uint32_t)i;
    }
    if (n == 0) {
        refuse_no_timeline(t, err);
        free(ev);
        return NULL;
    }
    double v[TL_TIMELINE_N];
    tl_trace_timeline_of(t, ev, n, v);
    free(ev);
    static const char *const types[TL_TIMELINE_N] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time",
                                                     "busy_time",        "idle_time",         "total_time",
                                                     "total_comm_time",  "total_memcpy_time"};
    static const char *const cols[3] = {"type", "time ms", "percent"};
    tl_table *tb = table_new(TL_TIMELINE_N, cols, 3);
    for (size_t r = 0; r < TL_TIMELINE_N; r++) {
        put_s(tb, 0, r, types[r]);
        put_f(tb, 1, r, v[r] / 1e3);
        put_f(tb, 2, r, v[r] / v[5] * 100);
    }
    *total_us = v[5] / 1e3 * 1e3; /* through ms and back, as the reference does */
    return tb;
}

/* ---- kernel launchers (TRACES.md §2) ------------------------------------------------- */

typedef struct launcher {
    uint32_t ev;
    uint32_t *k; /* direct kernels, array order; then sorted by ts for kernel_details */
    size_t nk, capk;
    double direct, subtree;
    uint8_t direct_int, subtree_int; /* the busy times are Python ints (TRACES.md §4.6) */
    const char *cat;
} launcher;

typedef struct launchers {
    launcher *v; /* in ts order once built */
    size_t n;
    int direct_int, subtree_int; /* every launcher's direct (subtree) busy time is an int */
    uint32_t *of; /* event -> launcher index (UINT32_MAX: none) */
} launchers;

static int kernel_ts_cmp_ctx(size_t a, size_t b, void *ctx)
{
    const double *ts = ctx;
    return ts[a] < ts[b] ? -1 : ts[a] > ts[b] ? 1 : 0;
}

static void launchers_build(const tl_trace *t, launchers *L)
{
    size_t cap = 0;
    L->v = NULL;
    L->n = 0;
    L->direct_int = L->subtree_int = 1;
    L->of = tl_xmalloc((t->nev ? t->nev : 1) * sizeof *L->of);
    for (size_t i = 0; i < t->nev; i++)
        L->of[i] = UINT32_MAX;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *g = &t->ev[i];
        if (!tl_tev_is_gpu(g) || !(g->flags & TL_TEV_LINKED) || (g->flags & TL_TEV_COMM))
            continue;
        uint32_t r = g->parent, found = TL_TEV_NONE;
        for (uint32_t cur = t->ev[r].parent; cur != TL_TEV_NONE;) {
            const tl_tev *c = &t->ev[cur];
            if (c->kind == TL_TEV_PYTHON) {
                cur = c->parent; /* Python frames are walked through (TRACES.md §2) */
                continue;
            }
            if (c->kind != TL_TEV_CPU_OP)
                break;
            if (strcmp(c->name, "execute") == 0) {
                cur = c->parent;
                continue;
            }
            found = cur;
            break;
        }
        uint32_t who = found != TL_TEV_NONE ? found : r;
        if (L->of[who] == UINT32_MAX) {
            TL_GROW(L->v, cap, L->n + 1);
            memset(&L->v[L->n], 0, sizeof L->v[L->n]);
            L->v[L->n].ev = who;
            L->of[who] = (uint32_t)L->n++;
        }
        launcher *l = &L->v[L->of[who]];
        TL_GROW(l->k, l->capk, l->nk + 1);
        l->k[l->nk++] = (uint32_t)i;
    }
    /* launchers by ts, ties in the order first met */
    tl_sort_item *it = tl_xmalloc((L->n ? L->n : 1) * sizeof *it);
    for (size_t i = 0; i < L->n; i++) {
        it[i].key = tl_sort_key_double(t->ev[L->v[i].ev].ts);
        it[i].row = (uint32_t)i;
    }
    tl_sort_items(it, L->n, NULL);
    launcher *sorted = tl_xmalloc((L->n ? L->n : 1) * sizeof *sorted);
    for (size_t i = 0; i < L->n; i++) {
        sorted[i] = L->v[it[i].row];
        L->of[sorted[i].ev] = (uint32_t)i;
    }
    free(L->v);
    free(it);
    L->v = sorted;

    ivals scratch = {0};
    double *ts = NULL;
    size_t tscap = 0, *ord = NULL, ordcap = 0;
    uint32_t *tmp = NULL;
    size_t tmpcap = 0;
    for (size_t i = 0; i < L->n; i++) {
        launcher *l = &L->v[i];
        const tl_tev *e = &t->ev[l->ev];
        l->direct = busy(t, l->k, l->nk, &scratch);
        l->subtree = e->ngpu ? busy(t, tl_tev_gpu(t, l->ev), e->ngpu, &scratch) : 0;
        l->direct_int = (uint8_t)times_int(t, l->k, l->nk);
        l->subtree_int = (uint8_t)times_int(t, tl_tev_gpu(t, l->ev), e->ngpu); /* 0 for none: an int */
        L->direct_int &= l->direct_int;
        L->subtree_int &= l->subtree_int;
        /* kernel_details: the direct kernels by ts (stable) */
        TL_GROW(ts, tscap, l->nk);
        TL_GROW(ord, ordcap, l->nk);
        TL_GROW(tmp, tmpcap, l->nk);
        for (size_t k = 0; k < l->nk; k++) {
            ts[k] = t->ev[l->k[k]].ts;
            ord[k] = k;
        }
        tl_sort_rows(ord, l->nk, kernel_ts_cmp_ctx, ts);
        for (size_t k = 0; k < l->nk; k++)
            tmp[k] = l->k[ord[k]];
        memcpy(l->k, tmp, l->nk * sizeof *tmp);
        l->cat = op_category(e->name, t->ev[l->k[0]].name);
    }
    free(scratch.v);
    free(ts);
    free(ord);
    free(tmp);
}

static void launchers_free(launchers *L)
{
    for (size_t i = 0; i < L->n; i++)
        free(L->v[i].k);
    free(L->v);
    free(L->of);
}

/* ---- ops_summary and ops_summary_by_category (TRACES.md §4.1) ------------------------ */


typedef struct group {
    const char *key;
    size_t first;     /* first member, for ops_unique_args */
    size_t *rows;     /* launcher indexes, in launcher order */
    size_t n, cap;
} group;

static void group_add(group *g, size_t row)
{
    TL_GROW(g->rows, g->cap, g->n + 1);
    g->rows[g->n++] = row;
}

static int str_ptr_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* rank[i] = the position of *v[i] among the distinct texts, in byte order (UINT32_MAX for
 * NULL): the group keys are compared as numbers, not as long kernel names over and over. */
static void rank_strings(const char **v, size_t stride, size_t n, uint32_t *rank, size_t rstride)
{
    tl_kmap seen;
    tl_kmap_init(&seen);
    const char **u = NULL;
    size_t nu = 0, ucap = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = *(const char **)((const char *)v + i * stride);
        if (!s)
            continue;
        int created;
        tl_kmap_put(&seen, (int64_t)(uintptr_t)s, 0, 0, &created);
        if (created) {
            TL_GROW(u, ucap, nu + 1);
            u[nu++] = s;
        }
    }
    if (nu)
        qsort(u, nu, sizeof *u, str_ptr_cmp);
    uint32_t r = 0;
    for (size_t i = 0; i < nu; i++) {
        if (i && strcmp(u[i - 1], u[i]) != 0)
            r++;
        tl_kmap_put(&seen, (int64_t)(uintptr_t)u[i], 0, 0, NULL)->val = r; /* equal texts, one rank */
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = *(const char **)((const char *)v + i * stride);
        uint32_t *dst = (uint32_t *)((char *)rank + i * rstride);
        *dst = s ? tl_kmap_get(&seen, (int64_t)(uintptr_t)s, 0, 0, 0) : UINT32_MAX;
    }
    free(u);
    tl_kmap_free(&seen);
}

/* Group launchers by a string key (name or category), groups in key order: the keys
 * ranked by their distinct pointers (a few hundred names over every launcher). */
static group *groups_of(const tl_trace *t, const launchers *L, int by_cat, size_t *ngroups)
{
    const char **keys = tl_xmalloc((L->n ? L->n : 1) * sizeof *keys);
    uint32_t *rank = tl_xmalloc((L->n ? L->n : 1) * sizeof *rank);
    for (size_t i = 0; i < L->n; i++)
        keys[i] = by_cat ? L->v[i].cat : t->ev[L->v[i].ev].name;
    rank_strings(keys, sizeof *keys, L->n, rank, sizeof *rank);
    size_t nu = 0;
    for (size_t i = 0; i < L->n; i++)
        nu = rank[i] + (size_t)1 > nu ? rank[i] + (size_t)1 : nu;
    group *g = tl_xcalloc(nu ? nu : 1, sizeof *g);
    for (size_t i = 0; i < L->n; i++) {
        g[rank[i]].key = keys[i];
        group_add(&g[rank[i]], i);
    }
    free(keys);
    free(rank);
    *ngroups = nu;
    return g;
}

static void groups_free(group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(g[i].rows);
    free(g);
}

static void ops_summaries(const tl_trace *t, const launchers *L, const tl_sheet_opts *o, const tl_sh_module *mod,
                          tl_arena *arena, tl_table **by_cat_out, tl_table **by_name_out)
{
    if (o->inference) {
        tl_sh_rows rows = {L->n, tl_xmalloc((L->n ? L->n : 1) * sizeof *rows.name),
                           tl_xmalloc((L->n ? L->n : 1) * sizeof *rows.cat), tl_xmalloc((L->n ? L->n : 1) * sizeof(double)),
                           tl_xmalloc((L->n ? L->n : 1) * sizeof(double))};
        double *d = (double *)rows.direct, *sb = (double *)rows.subtree;
        for (size_t i = 0; i < L->n; i++) {
            rows.name[i] = t->ev[L->v[i].ev].name;
            rows.cat[i] = L->v[i].cat;
            d[i] = L->v[i].direct;
            sb[i] = L->v[i].subtree;
        }
        tl_sh_infer_summaries(&rows, o, mod, arena, by_cat_out, by_name_out);
        free(rows.name);
        free(rows.cat);
        free(d);
        free(sb);
        return;
    }
    for (int by_cat = 1; by_cat >= 0; by_cat--) {
        size_t ng;
        group *g = groups_of(t, L, by_cat, &ng);
        double *dsum = tl_xmalloc((ng ? ng : 1) * sizeof *dsum), *ssum = tl_xmalloc((ng ? ng : 1) * sizeof *ssum);
        for (size_t i = 0; i < ng; i++) {
            tl_kahan kd = {0}, ks = {0};
            for (size_t k = 0; k < g[i].n; k++) {
                tl_kahan_add(&kd, L->v[g[i].rows[k]].direct);
                tl_kahan_add(&ks, L->v[g[i].rows[k]].subtree);
            }
            dsum[i] = kd.sum;
            ssum[i] = ks.sum;
        }
        size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
        tl_pd_sort_desc(dsum, ng, ord);
        double *ms = tl_xmalloc((ng ? ng : 1) * sizeof *ms);
        for (size_t r = 0; r < ng; r++)
            ms[r] = dsum[ord[r]] / 1000;
        double total = tl_np_sum(ms, ng), cum = 0;
        tl_table *tb;
        if (by_cat) {
            static const char *const cols[5] = {"op category", "Count", "total_direct_kernel_time_ms", "Percentage (%)",
                                                "Cumulative Percentage (%)"};
            tb = table_new(ng, cols, 5);
            for (size_t r = 0; r < ng; r++) {
                const group *gr = &g[ord[r]];
                double pct = ms[r] / total * 100;
                cum += pct;
                put_s(tb, 0, r, gr->key);
                put_i(tb, 1, r, (int64_t)gr->n);
                put_f(tb, 2, r, ms[r]);
                put_f(tb, 3, r, pct);
                put_f(tb, 4, r, cum);
            }
            *by_cat_out = tb;
        } else {
            static const char *const cols[9] = {"name", "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum",
                                                "total_direct_kernel_time_ms", "total_subtree_kernel_time_ms", "Count",
                                                "Categories", "Percentage (%)", "Cumulative Percentage (%)"};
            tb = table_new(ng, cols, 9);
            tl_buf b = {0};
            for (size_t r = 0; r < ng; r++) {
                const group *gr = &g[ord[r]];
                double pct = ms[r] / total * 100;
                cum += pct;
                /* Categories: the sorted distinct categories, as a Python list */
                const char **cv = tl_xmalloc(gr->n * sizeof *cv);
                size_t nc = 0;
                for (size_t k = 0; k < gr->n; k++)
                    cv[nc++] = L->v[gr->rows[k]].cat;
                tl_buf_clear(&b);
                tl_py_sorted_set_repr(&b, cv, nc);
                free(cv);
                put_s(tb, 0, r, gr->key);
                put_t(tb, 1, r, dsum[ord[r]], L->direct_int);
                put_t(tb, 2, r, ssum[ord[r]], L->subtree_int);
                put_f(tb, 3, r, ms[r]);
                put_f(tb, 4, r, ssum[ord[r]] / 1000);
                put_i(tb, 5, r, (int64_t)gr->n);
                put_s(tb, 6, r, buf_dup(arena, &b));
                put_f(tb, 7, r, pct);
                put_f(tb, 8, r, cum);
            }
            tl_buf_free(&b);
            *by_name_out = tb;
        }
        free(dsum);
        free(ssum);
        free(ord);
        free(ms);
        groups_free(g, ng);
    }
}

/* ---- ops_unique_args (TRACES.md §4.2) ------------------------------------------------ */

/* name, op category, parent_module, process_name, process_label, thread_name, the four
 * shape args, num_kernels: parent_module and num_kernels are "" (one group) when their
 * option is off, and their columns are left out */
#define NKEYS 11
enum { K_PM = 2, K_NUMK = 10 };

typedef struct ugroup {
    const char *key[NKEYS]; /* str() of each grouping value ("None" for a missing arg) */
    const char *val[NKEYS]; /* the first row's values (NULL: missing) */
    size_t *rows;
    size_t n, cap;
    double dsum, ssum;
    int64_t ex_uid;
    size_t nk;    /* num_kernels */
    size_t first; /* the first launcher */
} ugroup;

static uint64_t keys_hash(const char *const *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < NKEYS; i++) {
        for (const unsigned char *p = (const unsigned char *)k[i]; *p; p++)
            h = (h ^ *p) * 0x100000001b3ULL;
        h = (h ^ 0xff) * 0x100000001b3ULL; /* a separator no text byte equals after the xor */
        h ^= h >> 31;
    }
    return h;
}

tl_kernel_stat tl_kernel_stat_of(const tl_trace *t, const tl_tev *k, const double *d, size_t n, int ints)
{
    tl_kernel_stat s = {.name = k->name, .stream = tl_tev_x(t, k)->stream, .count = n, .ints = ints};
    s.total = tl_np_sum(d, n);
    s.mean = tl_np_mean(d, n);
    s.median = tl_np_median(d, n);
    s.std = tl_np_std(d, n);
    s.min = s.max = d[0];
    for (size_t q = 1; q < n; q++) {
        if (d[q] < s.min)
            s.min = d[q];
        if (d[q] > s.max)
            s.max = d[q];
    }
    return s;
}

void tl_kernel_stat_texts(tl_buf *summary, tl_buf *trunc, const tl_kernel_stat *s)
{
    tl_buf *b = summary, *tb = trunc;
    tl_buf_adds(b, "{'name': ");
    tl_py_str_repr(b, s->name, strlen(s->name));
    tl_buf_adds(b, ", 'stream': ");
    buf_stream(b, s->stream);
    tl_buf_adds(b, ", 'count': ");
    buf_int(b, (int64_t)s->count);
    tl_buf_adds(b, ", 'total_duration_us': ");
    buf_time(b, s->total, s->ints);
    tl_buf_adds(b, ", 'mean_duration_us': ");
    buf_double(b, s->mean);
    tl_buf_adds(b, ", 'median_duration_us': ");
    buf_double(b, s->median);
    tl_buf_adds(b, ", 'std_dev_duration_us': ");
    buf_double(b, s->std);
    tl_buf_adds(b, ", 'min_duration_us': ");
    buf_time(b, s->min, s->ints);
    tl_buf_adds(b, ", 'max_duration_us': ");
    buf_time(b, s->max, s->ints);
    tl_buf_addc(b, '}');

    /* the name cut to 64 characters (code points) and "..." */
    size_t len = strlen(s->name), cut = len, chars = 0;
    for (size_t q = 0; q < len; q++) {
        if (((unsigned char)s->name[q] & 0xc0) != 0x80) {
            if (chars == 64) {
                cut = q;
                break;
            }
            chars++;
        }
    }
    tl_buf_adds(tb, "{'name': ");
    if (cut < len) {
        char *tmp = tl_xmalloc(cut + 4);
        memcpy(tmp, s->name, cut);
        memcpy(tmp + cut, "...", 4);
        tl_py_str_repr(tb, tmp, cut + 3);
        free(tmp);
    } else {
        tl_py_str_repr(tb, s->name, len);
    }
    tl_buf_adds(tb, ", 'stream': ");
    buf_stream(tb, s->stream);
    tl_buf_adds(tb, ", 'mean_duration_us': ");
    buf_double(tb, rint(s->mean * 100.0) / 100.0); /* numpy's round(x, 2) */
    tl_buf_addc(tb, '}');
}

/* The per-position kernel statistics of a group (kernel_details_summary and
 * trunc_kernel_details). */
static void kernel_stats(const tl_trace *t, const launchers *L, const ugroup *g, tl_arena *arena, const char **summary,
                         const char **trunc)
{
    const launcher *tpl = &L->v[g->rows[0]]; /* every launcher has at least one kernel */
    size_t nk = tpl->nk;
    typedef tl_kernel_stat kstat;
    kstat *ks = tl_xcalloc(nk, sizeof *ks);
    double *d = tl_xmalloc(g->n * sizeof *d);
    for (size_t i = 0; i < nk; i++) {
        size_t n = 0;
        int ints = 1;
        for (size_t r = 0; r < g->n; r++) {
            const launcher *l = &L->v[g->rows[r]];
            if (l->nk == nk) {
                d[n++] = t->ev[l->k[i]].dur;
                ints &= tl_tev_dur_int(&t->ev[l->k[i]]);
            }
        }
        ks[i] = tl_kernel_stat_of(t, &t->ev[tpl->k[i]], d, n, ints);
    }
    /* sorted by (total, name), stably: insertion sort (lists are short) */
    for (size_t i = 1; i < nk; i++) {
        kstat x = ks[i];
        size_t j = i;
        while (j > 0 && (ks[j - 1].total > x.total || (ks[j - 1].total == x.total && strcmp(ks[j - 1].name, x.name) > 0))) {
            ks[j] = ks[j - 1];
            j--;
        }
        ks[j] = x;
    }
    tl_buf b = {0}, tb = {0};
    tl_buf_addc(&b, '[');
    tl_buf_addc(&tb, '[');
    for (size_t i = 0; i < nk; i++) {
        const kstat *s = &ks[i];
        if (i) {
            tl_buf_add(&b, ", ", 2);
            tl_buf_add(&tb, ", ", 2);
        }
        tl_kernel_stat_texts(&b, &tb, s);
    }
    tl_buf_addc(&b, ']');
    tl_buf_addc(&tb, ']');
    *summary = buf_dup(arena, &b);
    *trunc = nk ? buf_dup(arena, &tb) : NULL;
    tl_buf_free(&b);
    tl_buf_free(&tb);
    free(ks);
    free(d);
}

static int ugroup_cmp(size_t a, size_t b, void *ctx)
{
    const ugroup *g = ctx;
    if (g[a].dsum != g[b].dsum)
        return g[a].dsum > g[b].dsum ? -1 : 1;
    return g[a].ex_uid < g[b].ex_uid ? -1 : g[a].ex_uid > g[b].ex_uid ? 1 : 0;
}

/* Launcher i's group by its keys' texts (name, category, module, process, thread, the
 * argument columns, the kernel count), made when it is the first of its keys: its index
 * in *g.  map: key hash -> group. */
static size_t group_by_keys(const tl_trace *t, const launchers *L, size_t i, const tl_sheet_opts *o,
                            const tl_sh_module *mod, tl_arena *arena, tl_kmap *map, ugroup **g, size_t *ng,
                            size_t *gcap)
{
    const launcher *l = &L->v[i];
    const tl_tev *e = &t->ev[l->ev];
    const tl_tev_aux *x = tl_tev_x(t, e);
    char numk[24];
    snprintf(numk, sizeof numk, "%zu", l->nk);
    const char *val[NKEYS] = {e->name,
                              l->cat,
                              o->parent_module ? mod->parent_module[i] : "",
                              tl_trace_process_name(t, tl_tev_pid(t, e)),
                              tl_trace_process_label(t, tl_tev_pid(t, e)),
                              tl_trace_thread_name(t, tl_tev_pid(t, e), tl_tev_tid(t, e)),
                              e->kind == TL_TEV_CPU_OP ? x->args->input_dims : NULL,
                              e->kind == TL_TEV_CPU_OP ? x->args->input_type : NULL,
                              e->kind == TL_TEV_CPU_OP ? x->args->input_strides : NULL,
                              e->kind == TL_TEV_CPU_OP ? x->args->concrete_inputs : NULL,
                              o->num_kernels ? numk : ""};
    const char *key[NKEYS];
    for (int k = 0; k < NKEYS; k++)
        key[k] = val[k] ? val[k] : "None";
    uint64_t h = keys_hash(key);
    for (int64_t probe = 0;; probe++) {
        int created;
        tl_kmap_slot *sl = tl_kmap_put(map, (int64_t)h, probe, 0, &created);
        if (created) {
            TL_GROW(*g, *gcap, *ng + 1);
            ugroup *n = &(*g)[*ng];
            memset(n, 0, sizeof *n);
            memcpy(n->key, key, sizeof key);
            memcpy(n->val, val, sizeof val);
            n->key[K_NUMK] = n->val[K_NUMK] = tl_arena_strdup(arena, key[K_NUMK]);
            n->nk = l->nk;
            n->first = i;
            n->ex_uid = e->uid;
            sl->val = (uint32_t)*ng;
            return (*ng)++;
        }
        int same = 1;
        for (int k = 0; k < NKEYS && same; k++)
            same = strcmp((*g)[sl->val].key[k], key[k]) == 0;
        if (same)
            return sl->val;
    }
}

/* What a launcher's keys are made from, as pointers and numbers: two launchers alike in
 * these have the same keys (a thread's names are the trace's; the args are interned), so
 * a launcher's group is found by them, and by the texts only for a combination not met
 * before - a few thousand, where a trace has a launcher for every op. */
typedef struct launcher_src {
    const char *name, *cat, *module;
    const tl_op_args *args; /* a cpu_op's; NULL for another event */
    uint64_t nk;            /* with num_kernels; else 0 */
    uint64_t thread;
} launcher_src;
_Static_assert(sizeof(launcher_src) == 4 * sizeof(void *) + 2 * sizeof(uint64_t), "compared as bytes: no padding");

/* The launchers grouped by their keys, in first-appearance order; *ng groups (malloc'd). */
static ugroup *group_launchers(const tl_trace *t, const launchers *L, const tl_sheet_opts *o, const tl_sh_module *mod,
                               tl_arena *arena, size_t *ng_out)
{
    ugroup *g = NULL;
    size_t ng = 0, gcap = 0;
    tl_kmap by_keys;
    tl_kmap_init(&by_keys);
    tl_bytemap by_src; /* launcher_src -> group */
    tl_bytemap_init(&by_src, sizeof(launcher_src));
    for (size_t i = 0; i < L->n; i++) {
        const tl_tev *e = &t->ev[L->v[i].ev];
        launcher_src ls = {e->name,
                           L->v[i].cat,
                           o->parent_module ? mod->parent_module[i] : NULL,
                           e->kind == TL_TEV_CPU_OP ? tl_tev_x(t, e)->args : NULL,
                           o->num_kernels ? (uint64_t)L->v[i].nk : 0,
                           tl_tev_thread(t, e)};
        int created;
        uint32_t *gv = tl_bytemap_put(&by_src, &ls, &created);
        if (created)
            *gv = (uint32_t)group_by_keys(t, L, i, o, mod, arena, &by_keys, &g, &ng, &gcap);
        ugroup *gr = &g[*gv];
        TL_GROW(gr->rows, gr->cap, gr->n + 1);
        gr->rows[gr->n++] = i;
    }
    tl_kmap_free(&by_keys);
    tl_bytemap_free(&by_src);
    *ng_out = ng;
    return g;
}

/* A group's aggregates of one kernel time (direct or subtree). */
typedef struct uagg {
    double mean, median, std, min, max, sum;
} uagg;

/* Group g's aggregates of its launchers' direct (which 0) or subtree (1) kernel time;
 * tmp holds at least g->n values. */
static void group_agg(const launchers *L, const ugroup *g, int which, double *tmp, uagg *a)
{
    tl_kahan ks = {0};
    tl_welford w = {0};
    for (size_t r = 0; r < g->n; r++) {
        double v = which ? L->v[g->rows[r]].subtree : L->v[g->rows[r]].direct;
        tl_kahan_add(&ks, v);
        tl_welford_add(&w, v);
        tmp[r] = v;
        if (r == 0 || v < a->min)
            a->min = v;
        if (r == 0 || v > a->max)
            a->max = v;
    }
    a->sum = ks.sum;
    a->mean = ks.sum / (double)g->n;
    a->std = tl_welford_std(&w);
    a->median = tl_np_median(tmp, g->n);
}

/* The sheet's columns: the keys present, the aggregates, the call stack (with the parent
 * module), then the kernel details and the percentages. */
typedef struct ucols {
    const char *name[NKEYS + 20];
    size_t n;
    int key[NKEYS]; /* key k's column, or -1 */
    size_t agg;     /* the first aggregate's */
    size_t cs;      /* call_stack's (0: none) */
    size_t tail;    /* kernel_details_summary's */
} ucols;

static void ucols_layout(const tl_sheet_opts *o, ucols *c)
{
    static const char *const key_cols[NKEYS] = {"name", "op category", "parent_module", "process_name", "process_label",
                                                "thread_name", "Input Dims", "Input type", "Input Strides",
                                                "Concrete Inputs", "num_kernels"};
    static const char *const agg_cols[] = {
        "operation_count", "total_direct_kernel_time_mean",
        "total_subtree_kernel_time_mean", "total_direct_kernel_time_median", "total_subtree_kernel_time_median",
        "total_direct_kernel_time_std", "total_subtree_kernel_time_std", "total_direct_kernel_time_min",
        "total_subtree_kernel_time_min", "total_direct_kernel_time_max", "total_subtree_kernel_time_max",
        "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum", "ex_UID"};
    c->n = 0;
    for (int k = 0; k < NKEYS; k++) {
        int on = k == K_PM ? o->parent_module : k == K_NUMK ? o->num_kernels : 1;
        c->key[k] = on ? (int)c->n : -1;
        if (on)
            c->name[c->n++] = key_cols[k];
    }
    c->agg = c->n;
    for (size_t k = 0; k < sizeof agg_cols / sizeof *agg_cols; k++)
        c->name[c->n++] = agg_cols[k];
    c->cs = o->parent_module ? c->n++ : 0;
    if (o->parent_module)
        c->name[c->cs] = "call_stack";
    c->tail = c->n;
    c->name[c->n++] = "kernel_details_summary";
    c->name[c->n++] = "trunc_kernel_details";
    c->name[c->n++] = "Percentage (%)";
    c->name[c->n++] = "Cumulative Percentage (%)";
}

/* Row r: group g's keys and its direct (a) and subtree (s) aggregates. */
static void put_group(tl_table *tb, const ucols *c, size_t r, const ugroup *g, const uagg *a, const uagg *s,
                      const launchers *L)
{
    for (int k = 0; k < NKEYS; k++) {
        if (c->key[k] < 0)
            continue;
        if (k == K_NUMK)
            put_i(tb, (size_t)c->key[k], r, (int64_t)g->nk);
        else
            put_s(tb, (size_t)c->key[k], r, g->val[k]);
    }
    size_t c0 = c->agg;
    put_i(tb, c0, r, (int64_t)g->n);
    put_f(tb, c0 + 1, r, a->mean);
    put_f(tb, c0 + 2, r, s->mean);
    put_f(tb, c0 + 3, r, a->median);
    put_f(tb, c0 + 4, r, s->median);
    put_f(tb, c0 + 5, r, a->std);
    put_f(tb, c0 + 6, r, s->std);
    put_t(tb, c0 + 7, r, a->min, L->direct_int);
    put_t(tb, c0 + 8, r, s->min, L->subtree_int);
    put_t(tb, c0 + 9, r, a->max, L->direct_int);
    put_t(tb, c0 + 10, r, s->max, L->subtree_int);
    put_t(tb, c0 + 11, r, a->sum, L->direct_int);
    put_t(tb, c0 + 12, r, s->sum, L->subtree_int);
    put_i(tb, c0 + 13, r, g->ex_uid);
}

/* ops_unique_args: the launchers grouped by their keys, each group's aggregates and
 * kernel details, the groups by direct kernel time (descending, then first UID). */
static tl_table *ops_unique_args(const tl_trace *t, const launchers *L, const tl_sheet_opts *o, const tl_sh_module *mod,
                                 tl_arena *arena)
{
    size_t ng;
    ugroup *g = group_launchers(t, L, o, mod, arena, &ng);
    uagg *ad = tl_xcalloc(ng ? ng : 1, sizeof *ad), *as = tl_xcalloc(ng ? ng : 1, sizeof *as);
    const char **summ = tl_xcalloc(ng ? ng : 1, sizeof *summ), **trunc = tl_xcalloc(ng ? ng : 1, sizeof *trunc);
    double *tmp = NULL;
    size_t tmpcap = 0;
    for (size_t i = 0; i < ng; i++) {
        TL_GROW(tmp, tmpcap, g[i].n);
        group_agg(L, &g[i], 0, tmp, &ad[i]);
        group_agg(L, &g[i], 1, tmp, &as[i]);
        g[i].dsum = ad[i].sum;
        g[i].ssum = as[i].sum;
        kernel_stats(t, L, &g[i], arena, &summ[i], &trunc[i]);
    }
    free(tmp);

    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t i = 0; i < ng; i++)
        ord[i] = i;
    tl_sort_rows(ord, ng, ugroup_cmp, g);
    double *sums = tl_xmalloc((ng ? ng : 1) * sizeof *sums);
    for (size_t r = 0; r < ng; r++)
        sums[r] = g[ord[r]].dsum;
    double total = tl_np_sum(sums, ng), cum = 0;

    ucols c;
    ucols_layout(o, &c);
    tl_table *tb = table_new(ng, c.name, c.n);
    for (size_t r = 0; r < ng; r++) {
        size_t i = ord[r];
        put_group(tb, &c, r, &g[i], &ad[i], &as[i], L);
        if (o->parent_module)
            put_s(tb, c.cs, r, mod->call_stack[g[i].first]);
        put_s(tb, c.tail, r, summ[i]);
        put_s(tb, c.tail + 1, r, trunc[i]);
        double pct = g[i].dsum / total * 100;
        cum += pct;
        put_f(tb, c.tail + 2, r, pct);
        put_f(tb, c.tail + 3, r, cum);
    }
    for (size_t i = 0; i < ng; i++)
        free(g[i].rows);
    free(g);
    free(ad);
    free(as);
    free(summ);
    free(trunc);
    free(ord);
    free(sums);
    return tb;
}

/* ---- kernel_summary (TRACES.md §4.3) -------------------------------------------------- */

typedef struct krow {
    const char *cat;  /* NULL: missing */
    const char *op;   /* Parent cpu_op, NULL: missing */
    const char *name;
    int64_t stream;   /* TL_TEV_NO_STREAM: missing */
    double dur;
    uint32_t rcat, rop, rname; /* the strings' ranks in byte order (UINT32_MAX: missing) */
} krow;

static int krow_cmp(size_t x, size_t y, void *ctx)
{
    const krow *a = (const krow *)ctx + x, *b = (const krow *)ctx + y;
    if (a->rcat != b->rcat)
        return a->rcat < b->rcat ? -1 : 1; /* missing (UINT32_MAX) last */
    if (a->rop != b->rop)
        return a->rop < b->rop ? -1 : 1;
    if (a->rname != b->rname)
        return a->rname < b->rname ? -1 : 1;
    int am = a->stream == TL_TEV_NO_STREAM, bm = b->stream == TL_TEV_NO_STREAM;
    if (am || bm)
        return am - bm;
    return a->stream < b->stream ? -1 : a->stream > b->stream ? 1 : 0;
}

static tl_table *kernel_summary(const tl_trace *t, const launchers *L, double total_us)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nev; i++)
        n += t->ev[i].kind == TL_TEV_KERNEL;
    if (n == 0)
        return NULL;
    krow *rows = tl_xcalloc(n, sizeof *rows);
    double *durs = tl_xmalloc(n * sizeof *durs);
    int has_op = 0, has_launcher = 0, any_no_stream = 0, ints = 1;
    size_t k = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (e->kind != TL_TEV_KERNEL)
            continue;
        krow *r = &rows[k];
        r->name = e->name;
        r->stream = tl_tev_x(t, e)->stream;
        r->dur = e->dur;
        durs[k] = e->dur;
        ints &= tl_tev_dur_int(e);
        any_no_stream |= r->stream == TL_TEV_NO_STREAM;
        if (e->parent != TL_TEV_NONE) {
            has_launcher = 1;
            uint32_t c = t->ev[e->parent].parent;
            while (c != TL_TEV_NONE && t->ev[c].kind != TL_TEV_CPU_OP)
                c = t->ev[c].parent;
            if (c != TL_TEV_NONE) {
                has_op = 1;
                uint32_t li = L->of ? L->of[c] : UINT32_MAX;
                r->op = t->ev[c].name;
                r->cat = li != UINT32_MAX ? L->v[li].cat : op_category(r->op, NULL);
            }
        }
        k++;
    }
    /* fill-ins: the launcher's name for a missing cpu_op; graph / runtime for a missing category */
    k = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (e->kind != TL_TEV_KERNEL)
            continue;
        krow *r = &rows[k++];
        if (e->parent == TL_TEV_NONE)
            continue;
        const char *ln = t->ev[e->parent].name;
        if (!r->op && has_op)
            r->op = ln;
        if (!r->cat && *ln) {
            char low[4096];
            size_t m = strlen(ln) < sizeof low - 1 ? strlen(ln) : sizeof low - 1;
            for (size_t q = 0; q < m; q++)
                low[q] = (char)((ln[q] >= 'A' && ln[q] <= 'Z') ? ln[q] + 32 : ln[q]);
            low[m] = 0;
            r->cat = strstr(low, "cudagraph") || strstr(low, "graphlaunch") ? "graph" : "runtime";
        }
    }
    double total_k = tl_np_sum(durs, n);
    rank_strings(&rows[0].cat, sizeof *rows, n, &rows[0].rcat, sizeof *rows);
    rank_strings(&rows[0].op, sizeof *rows, n, &rows[0].rop, sizeof *rows);
    rank_strings(&rows[0].name, sizeof *rows, n, &rows[0].rname, sizeof *rows);
    size_t *ord = tl_xmalloc(n * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    tl_sort_rows(ord, n, krow_cmp, rows);
    /* groups: runs of equal keys in ord */
    size_t ng = 0;
    size_t *start = tl_xmalloc((n + 1) * sizeof *start);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || krow_cmp(ord[i - 1], ord[i], rows) != 0)
            start[ng++] = i;
    start[ng] = n;
    double *sum = tl_xmalloc(ng * sizeof *sum);
    for (size_t gi = 0; gi < ng; gi++) {
        tl_kahan s = {0};
        for (size_t q = start[gi]; q < start[gi + 1]; q++)
            tl_kahan_add(&s, rows[ord[q]].dur);
        sum[gi] = s.sum;
    }
    size_t *gord = tl_xmalloc(ng * sizeof *gord);
    tl_pd_sort_desc(sum, ng, gord);

    const char *cols[11];
    size_t nc = 0;
    cols[nc++] = "Parent op category";
    if (has_op)
        cols[nc++] = "Parent cpu_op";
    cols[nc++] = "Kernel name";
    cols[nc++] = "Kernel stream";
    size_t c_agg = nc;
    cols[nc++] = "Kernel duration (\xc2\xb5s)_sum";
    cols[nc++] = "Kernel duration (\xc2\xb5s)_count";
    cols[nc++] = "Kernel duration (\xc2\xb5s)_mean";
    cols[nc++] = "Kernel duration (\xc2\xb5s)_min";
    cols[nc++] = "Kernel duration (\xc2\xb5s)_max";
    cols[nc++] = "Percent of kernels time (%)";
    cols[nc++] = "Percent of total time (%)";
    tl_table *tb = table_new(ng, cols, nc);
    for (size_t r = 0; r < ng; r++) {
        size_t gi = gord[r];
        const krow *kr = &rows[ord[start[gi]]];
        size_t c = 0;
        put_s(tb, c++, r, kr->cat);
        if (has_op)
            put_s(tb, c++, r, kr->op);
        put_s(tb, c++, r, kr->name);
        if (kr->stream == TL_TEV_NO_STREAM)
            tb->cols[c].cells[r] = tl_cell_missing();
        else if (any_no_stream)
            put_f(tb, c, r, (double)kr->stream); /* a column with a missing stream is float in pandas */
        else
            put_i(tb, c, r, kr->stream);
        c++;
        size_t cnt = start[gi + 1] - start[gi];
        double mn = kr->dur, mx = kr->dur;
        for (size_t q = start[gi]; q < start[gi + 1]; q++) {
            double d = rows[ord[q]].dur;
            if (d < mn)
                mn = d;
            if (d > mx)
                mx = d;
        }
        put_t(tb, c_agg, r, sum[gi], ints);
        put_i(tb, c_agg + 1, r, (int64_t)cnt);
        put_f(tb, c_agg + 2, r, sum[gi] / (double)cnt);
        put_t(tb, c_agg + 3, r, mn, ints);
        put_t(tb, c_agg + 4, r, mx, ints);
        put_f(tb, c_agg + 5, r, total_k > 0 ? sum[gi] / total_k * 100 : NAN);
        put_f(tb, c_agg + 6, r, total_us ? sum[gi] / total_us * 100 : NAN);
    }
    (void)has_launcher;
    free(rows);
    free(durs);
    free(ord);
    free(start);
    free(sum);
    free(gord);
    return tb;
}

/* ---- all of them ------------------------------------------------------------------- */

int tl_trace_sheets(const tl_trace *t, tl_arena *arena, tl_results *out, tl_error *err)
{
    static const tl_sheet_opts eager = {0};
    return tl_trace_sheets_opts(t, &eager, arena, out, err);
}

static int any_linked(const tl_trace *t)
{
    for (size_t i = 0; i < t->nev; i++)
        if (tl_tev_is_gpu(&t->ev[i]) && (t->ev[i].flags & TL_TEV_LINKED))
            return 1;
    return 0;
}

int tl_trace_sheets_opts(const tl_trace *t, const tl_sheet_opts *o, tl_arena *arena, tl_results *out, tl_error *err)
{
    double total_us = 0;
    tl_sh_module mod = {0};
    tl_results own = {0};
    if (gpu_timeline(t, o->include_unlinked, &own, &total_us, err) != 0)
        return -1;
    if (o->include_unlinked && !any_linked(t))
        tl_warn("%s: none of its GPU events is linked to a launch: gpu_timeline and kernel_summary count them all; "
                "ops_summary and the other sheets that put kernels under the ops that launched them are not made",
                t->path);
    launchers L = {0};
    tl_table *by_cat = NULL, *by_name = NULL, *uniq = NULL;
    /* a cancelled run stops between the sheets (each a fraction of a second on 1 GB) */
    int stop = tl_trace_cancelled(t, err);
    if (t->ncpu_ops && !stop) {
        launchers_build(t, &L);
        stop = tl_trace_cancelled(t, err);
        if (L.n && !stop) {
            if (o->parent_module) {
                uint32_t *evs = tl_xmalloc(L.n * sizeof *evs);
                for (size_t i = 0; i < L.n; i++)
                    evs[i] = L.v[i].ev;
                tl_sh_module_build(t, evs, L.n, arena, &mod);
                free(evs);
            }
            ops_summaries(t, &L, o, &mod, arena, &by_cat, &by_name);
            if (!(stop = tl_trace_cancelled(t, err)))
                uniq = ops_unique_args(t, &L, o, &mod, arena);
            tl_sh_module_free(&mod);
        }
    }
    if (stop || tl_trace_cancelled(t, err)) {
        tl_table_free(by_cat);
        tl_table_free(by_name);
        tl_table_free(uniq);
        launchers_free(&L);
        tl_results_free(&own);
        return -1;
    }
    if (by_cat)
        emit(&own, "ops_summary_by_category", by_cat);
    if (by_name)
        emit(&own, "ops_summary", by_name);
    if (uniq)
        emit(&own, "ops_unique_args", uniq);
    tl_table *ks = kernel_summary(t, &L, total_us);
    if (ks)
        emit(&own, "kernel_summary", ks);
    /* the generator's last sheet; the inference generator has none */
    tl_table *coll = o->inference || o->no_coll_analysis ? NULL : tl_coll_analysis(t, arena);
    if (coll)
        emit(&own, "coll_analysis", coll);
    launchers_free(&L);
    for (size_t i = 0; i < own.n; i++) {
        TL_GROW(out->items, out->cap, out->n + 1);
        out->items[out->n++] = own.items[i];
    }
    free(own.items);
    return 0;
}

tl_cell tl_trace_time_cell(double v, int ints)
{
    /* an int64 holds it exactly (ints summed in doubles are exact below 2^53) */
    if (ints && v == v && fabs(v) < 9.2e18)
        return tl_cell_int((int64_t)v);
    return tl_cell_float(v);
}

const char *tl_trace_op_category(const char *name, const char *first_kernel) { return op_category(name, first_kernel); }
