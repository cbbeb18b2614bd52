/*
 * args.c - what the model families share (perf_impl.h): the dtype table of PERF.md §4.0
 * (bytes per element, precision), access to an op's arguments, the parameters a family
 * reports, and Python literals in argument texts.  Below the evaluator (eval.c), which
 * calls the families through their table (ops.c).
 */
#include "perf/perf_impl.h"

#include <ctype.h>
#include <string.h>

/* ---- dtypes (PERF.md §4.0) ----------------------------------------------------------- */

typedef struct dtype_row {
    const char *name; /* lower-cased */
    int bpe;
    const char *prec;
} dtype_row;

static const dtype_row dtypes[] = {
    {"c10::bfloat16", 2, "bf16"},
    {"c10::float4_e2m1fn_x2", 1, "fp4"},
    {"c10::float8_e4m3fn", 1, "fp8"},
    {"c10::float8_e4m3fnuz", 1, "fp8"},
    {"c10::float8_e5m2", 1, NULL},
    {"c10::float8_e8m0fnu", 1, NULL},
    {"c10::half", 2, "fp16"},
    {"double", 8, "fp64"},
    {"float", 4, "fp32"},
    {"fp4", 1, "fp4"},
    {"fp8", 1, "fp8"},
    {"int", 4, NULL},
    {"long int", 8, NULL},
    {"mxfp4", 0, "fp4"},
    {"scalar", 4, NULL},
    {"signed char", 1, NULL},
    {"unsigned char", 1, "fp8"},
};

static const dtype_row *dtype_find(const tl_pv *v)
{
    if (!v || v->kind != TL_PV_STR || v->n == 0 || v->n > 40)
        return NULL;
    char low[48];
    for (uint32_t i = 0; i < v->n; i++)
        low[i] = (char)tolower((unsigned char)v->u.s[i]);
    low[v->n] = 0;
    size_t lo = 0, hi = sizeof dtypes / sizeof *dtypes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(dtypes[mid].name, low);
        if (c == 0)
            return &dtypes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int tl_pm_bpe(const tl_pv *dtype)
{
    const dtype_row *r = dtype_find(dtype);
    return r ? r->bpe : 0;
}

const char *tl_pm_precision(const tl_pv *dtype)
{
    const dtype_row *r = dtype_find(dtype);
    return r ? r->prec : NULL;
}

/* ---- argument helpers ---------------------------------------------------------------- */

void tl_pm_param(pm_ctx *c, const char *name, const tl_pv *v)
{
    if (c->npar >= PM_MAX_PARAMS)
        return;
    c->par[c->npar].name = name;
    c->par[c->npar].v = v ? v : tl_pv_none(c->pool);
    c->npar++;
}

const tl_pv *tl_pm_param_get(const pm_ctx *c, const char *name)
{
    for (size_t i = 0; i < c->npar; i++)
        if (strcmp(c->par[i].name, name) == 0)
            return c->par[i].v;
    return NULL;
}

const tl_pv *tl_pm_tuple(pm_ctx *c, const tl_pv *v)
{
    if (!tl_pv_is_seq(v))
        return NULL;
    return tl_pv_as(c->pool, v, TL_PV_TUPLE);
}

const tl_pv *tl_pm_slice(pm_ctx *c, const tl_pv *v, size_t from, size_t to)
{
    if (!tl_pv_is_seq(v))
        return NULL;
    if (to > v->n)
        to = v->n;
    if (from > to)
        from = to;
    tl_pv *r = tl_pv_seq(c->pool, TL_PV_TUPLE, to - from);
    for (size_t i = from; i < to; i++)
        r->u.items[i - from] = v->u.items[i];
    return r;
}

int tl_pm_dims(const tl_pv *v, long n, int64_t *out, size_t cap, size_t *got)
{
    if (!tl_pv_is_seq(v) || (n >= 0 && v->n != (size_t)n) || v->n > cap)
        return 0;
    for (uint32_t i = 0; i < v->n; i++) {
        const tl_pv *x = &v->u.items[i];
        if (x->kind != TL_PV_INT || x->u.i < 0)
            return 0;
        out[i] = x->u.i;
    }
    if (got)
        *got = v->n;
    return 1;
}

int tl_pm_text_true(const tl_pv *v) { return v && v->kind == TL_PV_STR && v->n > 0; }

const char *tl_pm_cstr(pm_ctx *c, const tl_pv *v)
{
    if (!v || v->kind != TL_PV_STR)
        return NULL;
    char *s = tl_pv_alloc(c->pool, v->n + 1);
    memcpy(s, v->u.s, v->n);
    return s;
}

/* Python literals in argument texts (`[768]`, `[True, False]`, `1e-05`): the same
 * grammar as the reprs, which is all ast.literal_eval meets in a trace's arguments. */
const tl_pv *tl_pm_literal(pm_ctx *c, const tl_pv *v)
{
    const char *s = tl_pm_cstr(c, v);
    if (!s)
        return NULL;
    while (*s == ' ' || *s == '\t')
        s++;
    const tl_pv *r = tl_pv_parse(c->pool, s);
    return r && r->kind != TL_PV_BAD ? r : NULL;
}

int tl_pm_literal_prod(pm_ctx *c, const tl_pv *v, int64_t *out)
{
    const tl_pv *l = tl_pm_literal(c, v);
    if (!l)
        return 0;
    if (l->kind == TL_PV_INT) { /* prod of a scalar is itself in the reference's helper */
        if (l->u.i < 0)
            return 0;
        *out = l->u.i;
        return 1;
    }
    return tl_pv_prod(l, out);
}
