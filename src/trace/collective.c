/*
 * collective.c - collective kernels as rows, matched across ranks, and their 11-key
 * summary (TRACES.md §7, MULTIRANK.md §3-§4).  The numbers are pandas' (pdnum.h): group
 * sums Kahan-compensated, std by Welford's one pass, the sort numpy's introsort.
 */
#include "trace/collective.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tl_coll_rows_free(tl_coll_rows *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* Bytes per element by dtype name (MULTIRANK.md §3.4): data, looked up by name. */
static const struct {
    const char *name;
    int bytes;
} dtype_bytes[] = {
    {"Float", 4}, {"Int", 4}, {"Long", 8}, {"BFloat16", 2}, {"Bool", 1},
    {"Byte", 1},  {"Double", 8}, {"Half", 2}, {"Short", 2},
};

int tl_coll_dtype_bytes(const tl_cval *dtype)
{
    if (dtype->kind != TL_CV_STR)
        return 0;
    for (size_t i = 0; i < sizeof dtype_bytes / sizeof *dtype_bytes; i++)
        if (strcmp(dtype->s, dtype_bytes[i].name) == 0)
            return dtype_bytes[i].bytes;
    return 0;
}

/* nelems × bytes / 2^20: the integer product first, then one division (a text has no
 * size: Python would fail on it, and the size is left missing). */
static double msg_mb(const tl_cval *nelems, int bytes)
{
    if (nelems->kind == TL_CV_INT) {
        __int128 p = (__int128)nelems->i * bytes;
        return (double)p / 1048576.0;
    }
    if (nelems->kind == TL_CV_FLOAT)
        return nelems->f * bytes / 1048576.0;
    return NAN;
}

/* A copy of an interned string in `a`, remembering the last one copied per key (a
 * trace's collectives repeat a handful of texts). */
static const char *copy_text(const char *s, const char **last_src, const char **last_dst, tl_arena *a)
{
    if (s != *last_src) {
        *last_src = s;
        *last_dst = tl_arena_strdup(a, s);
    }
    return *last_dst;
}

/* The kernel name holds "cross_device_reduce", in any case (MULTIRANK.md §3.3). */
static int has_cross_device_reduce(const char *name)
{
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, "cross_device_reduce", 19) == 0)
            return 1;
    return 0;
}

void tl_coll_rows_add(tl_coll_rows *rows, const tl_trace *t, int64_t rank, tl_arena *a)
{
    const char *src[TL_COLL_NKEYS] = {0}, *dst[TL_COLL_NKEYS] = {0};
    TL_GROW(rows->v, rows->cap, rows->n + t->ncoll);
    for (size_t i = 0; i < t->ncoll; i++) {
        const tl_coll_meta *m = &t->coll[i];
        const tl_tev *e = &t->ev[m->ev];
        tl_coll_row *r = &rows->v[rows->n++];
        memset(r, 0, sizeof *r);
        r->rank = rank;
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            r->v[k] = m->v[k];
            if (m->v[k].kind == TL_CV_STR || m->v[k].kind == TL_CV_REPR)
                r->v[k].s = copy_text(m->v[k].s, &src[k], &dst[k], a);
        }
        if (r->v[TL_COLL_NAME].kind == TL_CV_NONE && has_cross_device_reduce(e->name)) {
            r->v[TL_COLL_NAME].kind = TL_CV_STR;
            r->v[TL_COLL_NAME].s = "allreduce";
        }
        r->ts = e->ts;
        r->dur = e->dur;
        r->ts_int = (e->flags & TL_TEV_TS_INT) != 0;
        r->dur_int = (e->flags & TL_TEV_DUR_INT) != 0;
        int bytes = tl_coll_dtype_bytes(&r->v[TL_COLL_DTYPE]);
        r->in_mb = r->out_mb = NAN;
        if (bytes && r->v[TL_COLL_IN_NELEMS].kind != TL_CV_NONE) {
            r->in_mb = msg_mb(&r->v[TL_COLL_IN_NELEMS], bytes);
            r->out_mb = msg_mb(&r->v[TL_COLL_OUT_NELEMS], bytes);
        }
    }
}

/* ---- values ------------------------------------------------------------------------ */

void tl_cval_text(const tl_cval *v, tl_buf *b)
{
    char s[TL_NUMFMT_MAX];
    switch (v->kind) {
    case TL_CV_INT:
        tl_buf_add(b, s, tl_fmt_int(v->i, s));
        break;
    case TL_CV_FLOAT:
        if (isnan(v->f))
            tl_buf_adds(b, "nan");
        else if (isinf(v->f))
            tl_buf_adds(b, v->f < 0 ? "-inf" : "inf");
        else
            tl_buf_add(b, s, tl_fmt_double(v->f, s));
        break;
    case TL_CV_STR:
    case TL_CV_REPR:
        tl_buf_adds(b, v->s);
        break;
    default:
        break;
    }
}

static int is_num(const tl_cval *v) { return v->kind == TL_CV_INT || v->kind == TL_CV_FLOAT; }
static double num_of(const tl_cval *v) { return v->kind == TL_CV_INT ? (double)v->i : v->f; }

int tl_cval_cmp(const tl_cval *a, const tl_cval *b)
{
    if (a->kind == TL_CV_NONE || b->kind == TL_CV_NONE)
        return (a->kind != TL_CV_NONE) - (b->kind != TL_CV_NONE);
    if (is_num(a) && is_num(b)) {
        if (a->kind == TL_CV_INT && b->kind == TL_CV_INT)
            return (a->i > b->i) - (a->i < b->i);
        double x = num_of(a), y = num_of(b);
        return (x > y) - (x < y);
    }
    if (is_num(a) != is_num(b))
        return is_num(a) ? -1 : 1;
    return strcmp(a->s, b->s);
}

tl_cell tl_cval_cell(const tl_cval *v, int as_float)
{
    switch (v->kind) {
    case TL_CV_INT:
        return as_float ? tl_cell_float((double)v->i) : tl_cell_int(v->i);
    case TL_CV_FLOAT:
        return isnan(v->f) ? tl_cell_missing() : tl_cell_float(v->f);
    case TL_CV_STR:
    case TL_CV_REPR:
        return tl_cell_str(v->s);
    default:
        return tl_cell_missing();
    }
}

/* ---- the rows through a view ---------------------------------------------------------- */

static inline char *vrow(const tl_coll_view *w, size_t i) { return (char *)w->base + i * w->size; }

/* Row i's metadata: the row itself, or the one it points to. */
static inline tl_coll_row *vmeta(const tl_coll_view *w, size_t i)
{
    char *r = vrow(w, i);
    return w->meta < 0 ? (tl_coll_row *)r : *(tl_coll_row **)(r + w->meta);
}

static inline double vts(const tl_coll_view *w, size_t i) { return *(const double *)(vrow(w, i) + w->ts); }
static inline double vdur(const tl_coll_view *w, size_t i) { return *(const double *)(vrow(w, i) + w->dur); }
static inline int vdur_int(const tl_coll_view *w, size_t i) { return *(const uint8_t *)(vrow(w, i) + w->dur_int); }

tl_coll_view tl_coll_rows_view(tl_coll_rows *rows)
{
    return (tl_coll_view){.base = rows->v,
                          .n = rows->n,
                          .size = sizeof *rows->v,
                          .meta = -1,
                          .ts = offsetof(tl_coll_row, ts),
                          .dur = offsetof(tl_coll_row, dur),
                          .dur_int = offsetof(tl_coll_row, dur_int),
                          .index = offsetof(tl_coll_row, index_in_group),
                          .id = offsetof(tl_coll_row, id)};
}

int tl_coll_key_float(const tl_coll_view *w, int key)
{
    int fl = 0;
    for (size_t i = 0; i < w->n; i++) {
        int k = vmeta(w, i)->v[key].kind;
        if (k == TL_CV_STR || k == TL_CV_REPR)
            return 0;
        fl |= k == TL_CV_NONE || k == TL_CV_FLOAT;
    }
    return fl;
}

/* ---- matching across ranks (MULTIRANK.md §3.6) -------------------------------------- */

typedef struct match_ctx {
    const tl_coll_view *w;
    int by_group;
} match_ctx;

/* (Process Group Name when by_group, rank, ts); the sort is stable: equal ts in row order. */
static int match_cmp(size_t x, size_t y, void *ctx)
{
    const match_ctx *m = ctx;
    const tl_coll_row *a = vmeta(m->w, x), *b = vmeta(m->w, y);
    if (m->by_group) {
        int c = tl_cval_cmp(&a->v[TL_COLL_PG_NAME], &b->v[TL_COLL_PG_NAME]);
        if (c)
            return c;
    }
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    double s = vts(m->w, x), t = vts(m->w, y);
    return (s > t) - (s < t);
}

/* The rows' indexes sorted by match_cmp (free them). */
static size_t *match_order(const tl_coll_view *w, int by_group)
{
    size_t *idx = tl_xmalloc((w->n ? w->n : 1) * sizeof *idx);
    for (size_t i = 0; i < w->n; i++)
        idx[i] = i;
    match_ctx m = {w, by_group};
    tl_sort_rows(idx, w->n, match_cmp, &m);
    return idx;
}

/* Simplified mode: no row names a real group, and no rank has two streams. */
static int simplified(const tl_coll_view *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const tl_cval *pg = &vmeta(w, i)->v[TL_COLL_PG_NAME];
        if (pg->kind != TL_CV_NONE && !(pg->kind == TL_CV_STR && strcmp(pg->s, "Unknown_Group") == 0))
            return 0;
    }
    /* a rank's rows need not be together: compare each row's stream with the first
     * stream seen for its rank, in a sorted copy */
    size_t *idx = match_order(w, 0);
    int ok = 1;
    const tl_cval *first = NULL;
    for (size_t k = 0; k < w->n && ok; k++) {
        const tl_coll_row *r = vmeta(w, idx[k]);
        if (k == 0 || r->rank != vmeta(w, idx[k - 1])->rank)
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

int tl_coll_view_match(const tl_coll_view *w, tl_arena *a)
{
    int simple = simplified(w);
    /* rows sharing a metadata are named alike */
    for (size_t i = 0; i < w->n; i++) {
        tl_cval *pg = &vmeta(w, i)->v[TL_COLL_PG_NAME];
        if (simple || pg->kind == TL_CV_NONE) {
            pg->kind = TL_CV_STR;
            pg->s = simple ? "all" : "Unknown_Group";
        }
    }
    size_t *idx = match_order(w, !simple);
    int64_t k = 0;
    tl_buf b = {0};
    tl_strmap ids = {0};
    for (size_t j = 0; j < w->n; j++) {
        const tl_coll_row *r = vmeta(w, idx[j]), *p = j ? vmeta(w, idx[j - 1]) : NULL;
        if (!p || p->rank != r->rank || (!simple && tl_cval_cmp(&p->v[TL_COLL_PG_NAME], &r->v[TL_COLL_PG_NAME])))
            k = 0;
        int64_t index = k++;
        *(int64_t *)(vrow(w, idx[j]) + w->index) = index;
        tl_buf_clear(&b);
        if (!simple) {
            tl_cval_text(&r->v[TL_COLL_PG_NAME], &b);
            tl_buf_adds(&b, "_");
        }
        char s[TL_NUMFMT_MAX];
        tl_buf_add(&b, s, tl_fmt_int(index, s));
        /* one copy of an id for the rows of every rank that share it */
        const tl_strmap_slot *known = tl_strmap_find(&ids, tl_buf_cstr(&b));
        const char *id = known ? known->key : tl_arena_strndup(a, b.data, b.len);
        if (!known)
            tl_strmap_get(&ids, id);
        *(const char **)(vrow(w, idx[j]) + w->id) = id;
    }
    tl_buf_free(&b);
    tl_strmap_clear(&ids);
    free(idx);
    return simple;
}

int tl_coll_match(tl_coll_rows *rows, tl_arena *a)
{
    tl_coll_view w = tl_coll_rows_view(rows);
    return tl_coll_view_match(&w, a);
}

/* ---- the 11-key summary (MULTIRANK.md §4, TRACES.md §7) ------------------------------ */

/* (rank, the metadata) */
static int summary_key_cmp(size_t x, size_t y, void *ctx)
{
    const tl_coll_view *w = ctx;
    const tl_coll_row *a = vmeta(w, x), *b = vmeta(w, y);
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
    const tl_coll_row *m; /* its metadata (its first row's, in key order) */
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
static void summary_row(tl_column *col, size_t i, const sgroup *s, int int_dur, const int *key_float)
{
    col[0].cells[i] = tl_cell_int(s->m->rank);
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        col[1 + k].cells[i] = tl_cval_cell(&s->m->v[k], key_float[k]);
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

static tl_table *summary_table(const sgroup *g, const size_t *order, size_t ng, int int_dur, const int *key_float)
{
    tl_table *t = tl_table_new();
    t->nrows = ng;
    tl_table_add_column(t, "rank");
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        tl_table_add_column(t, tl_coll_key_names[k]);
    for (size_t c = 0; c < sizeof summary_stats / sizeof *summary_stats; c++)
        tl_table_add_column(t, summary_stats[c]);
    for (size_t i = 0; i < ng; i++)
        summary_row(t->cols, i, &g[order[i]], int_dur, key_float);
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

/* The groups of rows idx[0..nk) (sorted by summary_key_cmp), in key order; grown as they
 * come: a group per rank and metadata, far fewer than rows. */
static sgroup *summary_groups(const tl_coll_view *w, const size_t *idx, size_t nk, int int_dur, size_t *ng_out)
{
    sgroup *g = NULL;
    size_t ng = 0, gcap = 0;
    for (size_t j = 0; j < nk; j++) {
        const tl_coll_row *m = vmeta(w, idx[j]);
        double dur = vdur(w, idx[j]);
        if (!j || summary_key_cmp(idx[j - 1], idx[j], (void *)w) != 0) {
            TL_GROW(g, gcap, ng + 1);
            sgroup *s = &g[ng++];
            memset(s, 0, sizeof *s);
            s->m = m;
            s->in_mb = s->out_mb = NAN;
            s->min = s->max = dur;
        }
        sgroup *s = &g[ng - 1];
        s->count++;
        if (isnan(s->in_mb))
            s->in_mb = m->in_mb;
        if (isnan(s->out_mb))
            s->out_mb = m->out_mb;
        tl_kahan_add(&s->sum, dur);
        s->isum += int_dur ? (int64_t)dur : 0;
        tl_welford_add(&s->w, dur);
        s->min = dur < s->min ? dur : s->min;
        s->max = dur > s->max ? dur : s->max;
    }
    *ng_out = ng;
    return g;
}

tl_table *tl_coll_view_summary(const tl_coll_view *w)
{
    size_t n = w->n, nk = 0, ng = 0;
    int int_dur = 1, key_float[TL_COLL_NKEYS];
    for (int k = 0; k < TL_COLL_NKEYS; k++)
        key_float[k] = tl_coll_key_float(w, k);
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        int_dur &= vdur_int(w, i);
        if (all_keys(vmeta(w, i)))
            idx[nk++] = i;
    }
    tl_sort_rows(idx, nk, summary_key_cmp, (void *)w);
    sgroup *g = summary_groups(w, idx, nk, int_dur, &ng);
    double *keys = tl_xmalloc((ng ? ng : 1) * sizeof *keys);
    size_t *order = tl_xmalloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; i < ng; i++)
        keys[i] = int_dur ? (double)g[i].isum : g[i].sum.sum;
    tl_pd_sort_desc(keys, ng, order);
    tl_table *t = summary_table(g, order, ng, int_dur, key_float);
    free(keys);
    free(order);
    free(g);
    free(idx);
    return t;
}

tl_table *tl_coll_summary(tl_coll_rows *rows)
{
    tl_coll_view w = tl_coll_rows_view(rows);
    return tl_coll_view_summary(&w);
}

tl_table *tl_coll_analysis(const tl_trace *t, tl_arena *a)
{
    if (!t->ncpu_ops || !t->ncoll)
        return NULL;
    tl_coll_rows rows = {0};
    tl_coll_rows_add(&rows, t, 0, a);
    tl_coll_match(&rows, a);
    tl_table *tb = tl_coll_summary(&rows);
    tl_coll_rows_free(&rows);
    if (tb->nrows == 0) {
        tl_table_free(tb);
        return NULL;
    }
    return tb;
}
