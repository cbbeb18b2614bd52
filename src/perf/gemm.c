/*
 * gemm.c - the GEMM model families (PERF.md §4.1): aten::mm, addmm, _scaled_mm, bmm,
 * baddbmm, aiter::gemm_a16w16, vllm::rocm_unquantized_gemm.  flops = 2·M·N·K (+ M·N for the bias), bytes = the A, B
 * and output matrices (+ the bias vector); batched ones times B.
 */
#include "perf/perf_impl.h"

#include <string.h>

static int is_lower3(const char *p) { return p[0] >= 'a' && p[0] <= 'z' && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' && p[2] <= 'z'; }

/* ROCm Tensile's "C???_A???_B???" anywhere in the name. */
static int tensile(const char *n)
{
    for (const char *p = strchr(n, 'C'); p; p = strchr(p + 1, 'C')) {
        size_t len = strlen(p);
        if (len >= 13 && is_lower3(p + 1) && p[4] == '_' && p[5] == 'A' && is_lower3(p + 6) && p[9] == '_' && p[10] == 'B' &&
            is_lower3(p + 11))
            return 1;
    }
    return 0;
}

/* A kernel name that tells the transposes: a Tensile or an nvjet kernel's. */
static int tells_transpose(const char *n) { return tensile(n) || strncmp(n, "nvjet", 5) == 0; }

const char *tl_pm_gemm_transpose_kernel(const tl_trace *t, const uint32_t *kern, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tells_transpose(t->ev[kern[i]].name))
            return t->ev[kern[i]].name;
    return NULL;
}

/* The transpose parameter from the row's kernel names: 1 and *out set, 0 when no name
 * gives one, -1 when the first that should gives a malformed one. */
static int transpose(pm_ctx *c, const tl_pv **out)
{
    for (size_t i = 0; i < c->nkern; i++) {
        const char *n = c->t->ev[c->kern[i]].name;
        if (!tells_transpose(n))
            continue;
        tl_pv *tp = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
        if (tensile(n)) {
            tp->u.items[0].kind = strstr(n, "_Ailk_") ? TL_PV_BOOL : strstr(n, "_Alik_") ? TL_PV_BOOL : TL_PV_NONE;
            tp->u.items[0].u.i = strstr(n, "_Ailk_") ? 0 : 1;
            tp->u.items[1].kind = strstr(n, "_Bljk_") ? TL_PV_BOOL : strstr(n, "_Bjlk_") ? TL_PV_BOOL : TL_PV_NONE;
            tp->u.items[1].u.i = strstr(n, "_Bljk_") ? 0 : 1;
            *out = tp;
            return 1;
        }
        if (strncmp(n, "nvjet", 5) == 0) {
            const char *last = strrchr(n, '_');
            last = last ? last + 1 : n;
            if (strlen(last) < 2)
                return -1;
            tp->u.items[0].kind = tp->u.items[1].kind = TL_PV_BOOL;
            tp->u.items[0].u.i = last[0] == 'T';
            tp->u.items[1].u.i = last[1] == 'T';
            *out = tp;
            return 1;
        }
    }
    return 0;
}

/* An integer item j of shape item i of D (D[i][j]), or -1. */
static int64_t dim(const tl_pv *D, size_t i, size_t j)
{
    const tl_pv *x = tl_pv_at(tl_pv_at(D, i), j);
    return x && x->kind == TL_PV_INT && x->u.i >= 0 ? x->u.i : -1;
}

int tl_pm_gemm(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const char *m = c->model;
    int mm = strcmp(m, "aten_mm") == 0, scaled = strcmp(m, "aten_scaled_mm") == 0, addmm = strcmp(m, "aten_addmm") == 0;
    int bmm = strcmp(m, "aten_bmm") == 0, baddbmm = strcmp(m, "aten_baddbmm") == 0, a16 = strcmp(m, "gemm_a16w16") == 0;
    int rocm = strcmp(m, "vllm_rocm_unquantized_gemm") == 0;
    const tl_pv *D = c->D, *T = c->T, *S = c->S;
    if (!tl_pv_is_seq(D))
        return PM_FAIL;
    int64_t B = 1, M, N, K;
    int bias;
    const tl_pv *dt;
    if (rocm) {
        /* x[M, K] @ weight[N, K]^T (+ bias[N]); the dtypes of x, weight and bias ("" without one) */
        M = dim(D, 0, 0), N = dim(D, 1, 0), K = dim(D, 0, 1);
        if (M < 0 || N < 0 || K < 0 || !tl_pv_is_seq(T) || T->n < 2)
            return PM_FAIL;
        const tl_pv *d2 = tl_pv_at(D, 2);
        if (D->n > 2 && !tl_pv_is_seq(d2) && !(d2 && d2->kind == TL_PV_STR))
            return PM_FAIL; /* len() of a number */
        bias = D->n > 2 && d2->n > 0;
        tl_pv *t3 = tl_pv_seq(c->pool, TL_PV_TUPLE, 3);
        t3->u.items[0] = T->u.items[0];
        t3->u.items[1] = T->u.items[1];
        if (T->n > 2)
            t3->u.items[2] = T->u.items[2];
        else
            t3->u.items[2] = *tl_pv_str(c->pool, "", 0);
        dt = t3;
        tl_pm_param(c, "M", tl_pv_int(c->pool, M));
        tl_pm_param(c, "N", tl_pv_int(c->pool, N));
        tl_pm_param(c, "K", tl_pv_int(c->pool, K));
        tl_pm_param(c, "bias", tl_pv_bool(c->pool, bias));
        tl_pm_param(c, "dtype_A_B", dt);
        tl_pm_param(c, "B", tl_pv_int(c->pool, 1));
    } else if (a16) {
        M = dim(D, 0, 0), N = dim(D, 1, 0), K = dim(D, 0, 1);
        if (M < 0 || N < 0 || K < 0 || !tl_pv_is_seq(T) || T->n < 2)
            return PM_FAIL;
        const tl_pv *d2 = tl_pv_at(D, 2);
        bias = D->n > 2 && d2 && (tl_pv_is_seq(d2) ? d2->n > 0 : d2->kind != TL_PV_NONE);
        tl_pv *t3 = tl_pv_seq(c->pool, TL_PV_TUPLE, 3);
        t3->u.items[0] = T->u.items[0];
        t3->u.items[1] = T->u.items[1];
        t3->u.items[2] = T->u.items[0];
        dt = t3;
        tl_pm_param(c, "B", tl_pv_int(c->pool, 1));
        tl_pm_param(c, "M", tl_pv_int(c->pool, M));
        tl_pm_param(c, "N", tl_pv_int(c->pool, N));
        tl_pm_param(c, "K", tl_pv_int(c->pool, K));
        tl_pm_param(c, "bias", tl_pv_bool(c->pool, bias));
        tl_pm_param(c, "dtype_A_B", dt);
    } else {
        size_t ia = (addmm || baddbmm) ? 1 : 0, ib = ia + 1;
        const tl_pv *sa = NULL, *sb = NULL;
        if (S) {
            sa = tl_pm_tuple(c, tl_pv_at(S, ia));
            sb = tl_pm_tuple(c, tl_pv_at(S, ib));
            if (!sa || !sb)
                return PM_FAIL;
        }
        if (!tl_pv_is_seq(T) || T->n < ib + 1)
            return PM_FAIL;
        dt = tl_pm_slice(c, T, ia, ib + 1);
        if (bmm || baddbmm) {
            const tl_pv *A = tl_pv_at(D, ia), *Bs = tl_pv_at(D, ib);
            if (!tl_pv_is_seq(A) || A->n != 3 || !tl_pv_is_seq(Bs) || Bs->n != 3)
                return PM_FAIL;
            B = dim(D, ia, 0), M = dim(D, ia, 1), K = dim(D, ia, 2), N = dim(D, ib, 2);
        } else {
            M = dim(D, ia, 0), N = dim(D, ib, 1), K = dim(D, ia, 1);
        }
        if (B < 0 || M < 0 || N < 0 || K < 0)
            return PM_FAIL;
        bias = scaled ? D->n == 3 : (addmm || baddbmm);
        if (bmm || baddbmm)
            tl_pm_param(c, "B", tl_pv_int(c->pool, B));
        tl_pm_param(c, "M", tl_pv_int(c->pool, M));
        tl_pm_param(c, "N", tl_pv_int(c->pool, N));
        tl_pm_param(c, "K", tl_pv_int(c->pool, K));
        tl_pm_param(c, "bias", tl_pv_bool(c->pool, bias));
        tl_pm_param(c, "stride_A", sa);
        tl_pm_param(c, "stride_B", sb);
        tl_pm_param(c, "dtype_A_B", dt);
        if (!(bmm || baddbmm))
            tl_pm_param(c, "B", tl_pv_int(c->pool, 1));
    }
    const tl_pv *tr;
    int trc = transpose(c, &tr);
    if (trc < 0)
        return PM_FAIL;
    if (trc > 0)
        tl_pm_param(c, "transpose", tr);
    (void)mm;

    /* flops = 2·M·N·K + (M·N if bias), times B for the batched families */
    ck mn = ck_muli(ck_of(M), N);
    ck fl = ck_muli(ck_muli(mn, K), 2);
    if (bias)
        fl = ck_add(fl, mn);
    int batched = bmm || baddbmm || a16;
    if (batched)
        fl = ck_muli(fl, B);
    if (!fl.ok)
        return PM_FAIL;
    c->flops = (double)fl.v;

    /* bytes */
    int b1, b2, bo, bb;
    const tl_pv *d0 = tl_pv_at(dt, 0), *d1 = tl_pv_at(dt, 1);
    if (scaled) {
        b1 = b2 = bb = tl_pm_bpe(d0);
        if (!b1 || !tl_pm_bpe(d1))
            return PM_FAIL;
        bo = b1 == 1 ? 2 : (b1 == 2 || b1 == 4) ? b1 : 0;
    } else if (a16) {
        b1 = tl_pm_bpe(d0), b2 = tl_pm_bpe(d1), bo = bb = tl_pm_bpe(tl_pv_at(dt, 2));
    } else if (rocm) {
        b1 = tl_pm_bpe(d0), b2 = tl_pm_bpe(d1), bo = bb = tl_pm_bpe(bias ? tl_pv_at(dt, 2) : d1);
    } else {
        b1 = b2 = bo = bb = tl_pm_bpe(d0);
    }
    if (!b1 || !b2 || !bo || !bb) {
        c->bytes_none = 1;
    } else {
        ck by = ck_add(ck_add(ck_muli(ck_muli(ck_of(M), K), b1), ck_muli(ck_muli(ck_of(K), N), b2)), ck_muli(mn, bo));
        if (bias)
            by = ck_add(by, ck_muli(ck_of(N), bb));
        if (batched)
            by = ck_muli(by, B);
        if (!by.ok)
            return PM_FAIL;
        c->bytes = (double)by.v;
    }
    c->prec = d0;
    return PM_OK;
}
