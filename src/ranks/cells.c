/*
 * cells.c - what every sheet of the multi-rank report is made of: a sheet of tl_cval cells
 * typed per column as pandas types them, pandas' groupby reducers, the collectives across
 * ranks (MULTIRANK.md §5.1) and the check that their metadata agree, and the node columns
 * (§7).  Below the sheets' builders (sheets.c, implicit.c, a2a.c), which all use it.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a sheet of values ----------------------------------------------------------------- */

void tl_rk_sheet_init(rk_sheet *s, size_t nrows)
{
    memset(s, 0, sizeof *s);
    s->nrows = nrows;
}

size_t tl_rk_col(rk_sheet *s, const char *name)
{
    TL_GROW(s->c, s->cap, s->nc + 1);
    s->c[s->nc].name = name;
    s->c[s->nc].v = tl_xcalloc(s->nrows ? s->nrows : 1, sizeof(tl_cval));
    return s->nc++;
}

tl_cval tl_rk_int(int64_t i)
{
    tl_cval v = {.kind = TL_CV_INT, .i = i};
    return v;
}

tl_cval tl_rk_num(double d, int is_int)
{
    if (isnan(d))
        return (tl_cval){0};
    if (is_int)
        return tl_rk_int((int64_t)d);
    tl_cval v = {.kind = TL_CV_FLOAT, .f = d};
    return v;
}

tl_cval tl_rk_str(const char *s)
{
    tl_cval v = {.kind = TL_CV_STR, .s = s};
    return v;
}

double tl_rk_dbl(const tl_cval *v)
{
    return v->kind == TL_CV_INT ? (double)v->i : v->kind == TL_CV_FLOAT ? v->f : NAN;
}

int tl_rk_col_float(const tl_cval *v, size_t n)
{
    int fl = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == TL_CV_STR || v[i].kind == TL_CV_REPR)
            return 0;
        fl |= v[i].kind == TL_CV_NONE || v[i].kind == TL_CV_FLOAT;
    }
    return fl;
}

void tl_rk_sheet_sort_desc(rk_sheet *s, const double *key)
{
    size_t n = s->nrows;
    size_t *order = tl_xmalloc((n ? n : 1) * sizeof *order);
    tl_pd_sort_desc(key, n, order);
    tl_cval *tmp = tl_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t c = 0; c < s->nc; c++) {
        for (size_t r = 0; r < n; r++)
            tmp[r] = s->c[c].v[order[r]];
        memcpy(s->c[c].v, tmp, n * sizeof *tmp);
    }
    free(tmp);
    free(order);
}

tl_table *tl_rk_sheet_table(rk_sheet *s)
{
    tl_table *t = tl_table_new();
    t->nrows = s->nrows;
    for (size_t c = 0; c < s->nc; c++) {
        size_t k = tl_table_add_column(t, s->c[c].name);
        int fl = tl_rk_col_float(s->c[c].v, s->nrows), str = 0;
        for (size_t r = 0; r < s->nrows; r++) {
            t->cols[k].cells[r] = tl_cval_cell(&s->c[c].v[r], fl);
            str |= t->cols[k].cells[r].kind == TL_STR;
        }
        t->cols[k].type = str ? TL_COL_STR : TL_COL_NUM;
        free(s->c[c].v);
    }
    free(s->c);
    memset(s, 0, sizeof *s);
    return t;
}

/* ---- node columns (§7) ------------------------------------------------------------------ */

/* The node span of a Process Group Ranks cell: its integers (a tuple's or a list
 * literal's, or a text's runs of digits) all on one node or not. */
static const char *node_span(const tl_cell *c, long gpn)
{
    if (c->kind != TL_STR)
        return "unknown";
    long node = -1;
    int n = 0, inter = 0;
    for (const char *p = c->v.s; *p;) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        long r = 0;
        while (*p >= '0' && *p <= '9') {
            if (r < 100000000000L)
                r = r * 10 + (*p - '0');
            p++;
        }
        if (n++ == 0)
            node = r / gpn;
        else if (r / gpn != node)
            inter = 1;
    }
    return n == 0 ? "unknown" : inter ? "inter_node" : "intra_node";
}

void tl_rk_node_columns(tl_table *t, long gpn)
{
    if (gpn <= 0 || t->nrows == 0)
        return;
    long rc = tl_table_find(t, "rank"), pc = tl_table_find(t, "Process Group Ranks");
    if (rc >= 0) {
        size_t k = tl_table_add_column(t, "node_id");
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *c = &t->cols[rc].cells[r];
            t->cols[k].cells[r] = c->kind == TL_INT ? tl_cell_int(c->v.i / gpn) : tl_cell_missing();
        }
        t->cols[k].type = TL_COL_NUM;
    }
    if (pc >= 0) {
        size_t k = tl_table_add_column(t, "node_span");
        for (size_t r = 0; r < t->nrows; r++)
            t->cols[k].cells[r] = tl_cell_str(node_span(&t->cols[pc].cells[r], gpn));
        t->cols[k].type = TL_COL_STR;
    }
}

/* ---- the collectives across ranks (§5.1) ------------------------------------------------ */

void tl_rk_colls_build(const rk_rows *rows, rk_colls *cs)
{
    memset(cs, 0, sizeof *cs);
    tl_strmap map = {0};
    cs->next = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *cs->next);
    size_t *last = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *last);
    cs->first = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *cs->first);
    cs->count = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *cs->count);
    for (size_t i = 0; i < rows->n; i++) {
        cs->next[i] = SIZE_MAX;
        size_t before = map.n;
        tl_strmap_slot *sl = tl_strmap_get(&map, rows->v[i].id);
        if (map.n != before) {
            sl->value = cs->n;
            cs->first[cs->n] = i;
            cs->count[cs->n] = 0;
            last[cs->n++] = i;
        } else {
            cs->next[last[sl->value]] = i;
            last[sl->value] = i;
        }
        cs->count[sl->value]++;
    }
    free(last);
    tl_strmap_clear(&map);
    /* a collective has a row per rank: its arrays cut to the collectives' number */
    cs->first = tl_xrealloc(cs->first, (cs->n ? cs->n : 1) * sizeof *cs->first);
    cs->count = tl_xrealloc(cs->count, (cs->n ? cs->n : 1) * sizeof *cs->count);
}

void tl_rk_colls_free(rk_colls *cs)
{
    free(cs->next);
    free(cs->first);
    free(cs->count);
    memset(cs, 0, sizeof *cs);
}

/* The collective type of a name (§5.1): data. */
static const struct {
    const char *name, *type;
} coll_types[] = {
    {"allreduce", "allreduce"},
    {"allreduce_coalesced", "allreduce"},
    {"reducescatter", "reducescatter"},
    {"_reduce_scatter_base", "reducescatter"},
    {"reduce_scatter_tensor_coalesced", "reducescatter"},
    {"allgather", "allgather"},
    {"all_gather", "allgather"},
    {"_allgather_base", "allgather"},
    {"all_gather_into_tensor_coalesced", "allgather"},
    {"allgather_into_tensor_coalesced", "allgather"},
    {"all_to_all", "alltoall"},
    {"all_to_allv", "alltoallv"},
};

const char *tl_rk_coll_type(const tl_cval *name)
{
    if (name->kind != TL_CV_STR)
        return NULL;
    for (size_t i = 0; i < sizeof coll_types / sizeof *coll_types; i++)
        if (strcmp(name->s, coll_types[i].name) == 0)
            return coll_types[i].type;
    return NULL;
}

int tl_rk_implicit_type(const char *type)
{
    return type && (strcmp(type, "allreduce") == 0 || strcmp(type, "reducescatter") == 0 ||
                    strcmp(type, "allgather") == 0 || strcmp(type, "alltoall") == 0);
}

/* Two metadata values the same for pandas' unique() (a missing one is one value). */
static int same_value(const tl_cval *a, const tl_cval *b) { return tl_cval_cmp(a, b) == 0; }

int tl_rk_check_meta(const tl_rank_set *set, const rk_rows *rows, const rk_colls *cs, size_t k,
                  const rk_field *fields, size_t nf, tl_error *err)
{
    const rk_row *ref = &rows->v[cs->first[k]];
    for (size_t f = 0; f < nf; f++) {
        tl_cval rv = fields[f].get(ref);
        for (size_t i = cs->next[cs->first[k]]; i != SIZE_MAX; i = cs->next[i]) {
            const rk_row *r = &rows->v[i];
            tl_cval v = fields[f].get(r);
            if (same_value(&rv, &v))
                continue;
            tl_buf a = {0}, b = {0};
            tl_cval_text(&v, &a);
            tl_cval_text(&rv, &b);
            tl_error_set(err, "collective %s: '%s' is %s in rank %lld (%s), %s in rank %lld", ref->id, fields[f].name,
                         v.kind ? tl_buf_cstr(&a) : "missing", (long long)r->m->rank, set->paths[r->m->rank],
                         rv.kind ? tl_buf_cstr(&b) : "missing", (long long)ref->m->rank);
            tl_buf_free(&a);
            tl_buf_free(&b);
            return -1;
        }
    }
    return 0;
}

/* ---- pandas' groupby reducers ------------------------------------------------------------ */

/* The reducers --agg_metrics may name, in pandas' spelling. */
enum { AGG_MEAN, AGG_MEDIAN, AGG_MIN, AGG_MAX, AGG_STD, AGG_VAR, AGG_SUM, AGG_COUNT, AGG_FIRST, AGG_LAST, AGG_N };
static const char *const agg_names[AGG_N] = {"mean", "median", "min", "max", "std", "var", "sum", "count", "first", "last"};

static int agg_of(const char *name)
{
    for (int i = 0; i < AGG_N; i++)
        if (strcmp(name, agg_names[i]) == 0)
            return i;
    return -1;
}

int tl_rk_agg_known(const char *name) { return agg_of(name) >= 0; }

int tl_ranks_agg_known(const char *name) { return tl_rk_agg_known(name); }

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the n values that are not NaN (k of them): the middle one, or the mean of
 * the two middle ones. */
static double median(const double *v, size_t n, size_t k)
{
    if (!k)
        return NAN;
    double *c = tl_xmalloc(k * sizeof *c);
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            c[j++] = v[i];
    qsort(c, k, sizeof *c, dbl_cmp);
    double med = k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
    free(c);
    return med;
}

tl_cval tl_rk_agg(const char *name, const double *v, size_t n, int is_int)
{
    size_t k = 0;
    tl_kahan sum = {0};
    tl_welford w = {0};
    double mn = NAN, mx = NAN, first = NAN, last = NAN;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (!k++)
            first = mn = mx = v[i];
        last = v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        tl_kahan_add(&sum, v[i]);
        tl_welford_add(&w, v[i]);
    }
    double sd = tl_welford_std(&w);
    switch (agg_of(name)) {
    case AGG_COUNT: return tl_rk_int((int64_t)k);
    case AGG_SUM: return tl_rk_num(sum.sum, is_int);
    case AGG_MEAN: return tl_rk_num(k ? sum.sum / (double)k : NAN, 0);
    case AGG_MIN: return tl_rk_num(mn, is_int);
    case AGG_MAX: return tl_rk_num(mx, is_int);
    case AGG_FIRST: return tl_rk_num(first, is_int);
    case AGG_LAST: return tl_rk_num(last, is_int);
    case AGG_STD: return tl_rk_num(sd, 0);
    case AGG_VAR: return tl_rk_num(sd * sd, 0);
    default: return tl_rk_num(median(v, n, k), 0); /* median, and what the options refused */
    }
}
