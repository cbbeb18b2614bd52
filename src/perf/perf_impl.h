/*
 * perf_impl.h - what the perf-model families share (PERF.md §3-§4): the evaluation
 * context a family reads an event's arguments from and writes its parameters, flops and
 * bytes into, the dtype tables, checked integer arithmetic.  Private to src/perf/.
 */
#ifndef TL_PERF_IMPL_H
#define TL_PERF_IMPL_H

#include "perf/gpu_arch.h"
#include "perf/pyval.h"
#include "trace/trace.h"

#include <stdint.h>

/* A family's verdict on one event (PERF.md §3.3). */
enum { PM_OK = 0, PM_FAIL = 1, PM_NOT_MODELLED = 2 };

#define PM_MAX_PARAMS 24

typedef struct pm_par {
    const char *name; /* a static string */
    const tl_pv *v;   /* in the pool */
} pm_par;

typedef struct pm_ctx {
    tl_pv_pool *pool;
    const tl_trace *t;
    uint32_t ev;            /* the event */
    const char *name;       /* its name */
    const char *model;      /* its model family (appendix A) */
    int bwd;                /* evaluate the backward direction */
    /* its args (NULL: the key is absent or null) */
    const tl_pv *D, *T, *S, *C, *out_type;
    /* the iteration annotation enclosing the event (inference mode, the attention
     * models' ops only), or NULL */
    const char *annotation;
    /* the perf row's GPU events, stably by ts (PERF.md §3.2) */
    const uint32_t *kern;
    size_t nkern;
    /* what the family gives */
    pm_par par[PM_MAX_PARAMS];
    size_t npar;
    double flops, bytes;
    int bytes_none;         /* bytes is "none" (PERF.md §3.4) */
    const tl_pv *prec;      /* the precision dtype (a string value), or NULL */
    const char *prec_as_is; /* TritonCompiled: the precision text itself */
} pm_ctx;

/* One model family: eval fills c's parameters, flops and bytes for direction c->bwd. */
typedef struct pm_family {
    const char *name;
    int (*eval)(pm_ctx *c);
    const char *maf; /* "matrix" or "vector" */
    int reads_c;     /* reads Concrete Inputs (parsed only for those that do) */
} pm_family;

/* The family of model family name `name` (appendix A's second column), or NULL for a
 * tier-3 family (it has a perf model but no formulas: PERF.md §10). */
const pm_family *tl_pm_family_find(const char *name);

/* The kernel among kern[0..n) whose name a family's verdict depends on beside the
 * arguments (GEMM's transposes), or NULL: part of the verdict's cache key. */
const char *tl_pm_family_key_kernel(const pm_family *fam, const tl_trace *t, const uint32_t *kern, size_t n);

/* ---- helpers for the families (args.c) --------------------------------------------- */

/* Append parameter name = v (v NULL is stored as None). */
void tl_pm_param(pm_ctx *c, const char *name, const tl_pv *v);
/* The parameter named `name`, or NULL. */
const tl_pv *tl_pm_param_get(const pm_ctx *c, const char *name);
/* Bytes per element of a dtype value (PERF.md §4.0), 0 for none (not a string too). */
int tl_pm_bpe(const tl_pv *dtype);
/* The precision of a dtype value, or NULL. */
const char *tl_pm_precision(const tl_pv *dtype);
/* v as a tuple (a copy of a list's items), or NULL when v is no sequence. */
const tl_pv *tl_pm_tuple(pm_ctx *c, const tl_pv *v);
/* The first n items of a sequence as a tuple (None items past its end: Python's slice
 * stops early, so the tuple is shorter). */
const tl_pv *tl_pm_slice(pm_ctx *c, const tl_pv *v, size_t from, size_t to);
/* A sequence of INTs: 1 and *out when v is one of exactly `n` items (any n when n < 0),
 * all integers (negative ones rejected: shapes are sizes). */
int tl_pm_dims(const tl_pv *v, long n, int64_t *out, size_t cap, size_t *got);
/* The Python truth of "text" of a string value (non-empty) */
int tl_pm_text_true(const tl_pv *v);
/* A string value's text as a NUL-terminated copy in the pool (NULL when not a string). */
const char *tl_pm_cstr(pm_ctx *c, const tl_pv *v);
/* Python's ast.literal_eval of a string value into *out (NULL when it is no literal). */
const tl_pv *tl_pm_literal(pm_ctx *c, const tl_pv *v);
/* The product of a literal list of integers (PERF.md §4.6 "prod of list C[i]"). */
int tl_pm_literal_prod(pm_ctx *c, const tl_pv *v, int64_t *out);

/* Checked int64 arithmetic: a chain stays failed once one step overflows. */
typedef struct ck {
    int64_t v;
    int ok;
} ck;
static inline ck ck_of(int64_t v) { ck r = {v, 1}; return r; }
static inline ck ck_mul(ck a, ck b)
{
    ck r = {0, a.ok && b.ok};
    if (r.ok && __builtin_mul_overflow(a.v, b.v, &r.v))
        r.ok = 0;
    return r;
}
static inline ck ck_add(ck a, ck b)
{
    ck r = {0, a.ok && b.ok};
    if (r.ok && __builtin_add_overflow(a.v, b.v, &r.v))
        r.ok = 0;
    return r;
}
static inline ck ck_sub(ck a, ck b)
{
    ck r = {0, a.ok && b.ok};
    if (r.ok && __builtin_sub_overflow(a.v, b.v, &r.v))
        r.ok = 0;
    return r;
}
static inline ck ck_muli(ck a, int64_t b) { return ck_mul(a, ck_of(b)); }
static inline ck ck_addi(ck a, int64_t b) { return ck_add(a, ck_of(b)); }
/* Product of a[0..n) */
static inline ck ck_prod(const int64_t *a, size_t n)
{
    ck r = ck_of(1);
    for (size_t i = 0; i < n; i++)
        r = ck_muli(r, a[i]);
    return r;
}

/* ---- the families (one file each) ------------------------------------------------- */

int tl_pm_gemm(pm_ctx *c);
/* The first of the kernels kern[0..n) whose name tells a GEMM's transposes, or NULL: with
 * the arguments, all that tl_pm_gemm's verdict depends on. */
const char *tl_pm_gemm_transpose_kernel(const tl_trace *t, const uint32_t *kern, size_t n);
int tl_pm_sdpa(pm_ctx *c);
int tl_pm_conv(pm_ctx *c);
int tl_pm_unary(pm_ctx *c);
int tl_pm_binary(pm_ctx *c);
int tl_pm_norm(pm_ctx *c);
int tl_pm_rmsnorm(pm_ctx *c);
int tl_pm_reduce(pm_ctx *c);
int tl_pm_rope(pm_ctx *c);
int tl_pm_store_cache(pm_ctx *c);
int tl_pm_triton(pm_ctx *c);
int tl_pm_inference_attention(pm_ctx *c);
int tl_pm_moe_unfused(pm_ctx *c);

/* ---- the op tables (ops.c) -------------------------------------------------------- */

typedef struct pm_op {
    const char *name, *model, *sheet;
    int order; /* registry position */
} pm_op;

/* The perf-model op named `name` (appendix A), or NULL. */
const pm_op *tl_pm_op_find(const char *name);
/* The backward category of a model family (appendix B), or NULL. */
const char *tl_pm_bwd_category(const char *model);
/* 1 when `name` (n bytes) is one of appendix C's aten op names. */
int tl_pm_aten_known(const char *name, size_t n);

#endif
