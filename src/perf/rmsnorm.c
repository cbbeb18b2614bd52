/*
 * rmsnorm.c - the aiter RMSNorm ops (PERF.md §4.6): aiter::rmsnorm, aiter::rms_norm and the fused
 * add + RMSNorm ones.  flops: per row a sum of squares and a scale (2·Ch + 2), then the
 * weight per element; bytes: the input and output (twice each with the residual add) and
 * the weight.
 */
#include "perf/perf_impl.h"

#include <string.h>

int tl_pm_rmsnorm(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    int add = strcmp(c->model, "aiter_rmsnorm2d_fwd_with_add_ck") == 0;
    /* aiter::rms_norm(x, weight, eps) has no out tensor first: x is argument 0 */
    size_t x = strcmp(c->model, "aiter_rms_norm") == 0 ? 0 : 1;
    const tl_pv *D = c->D, *T = c->T, *S = c->S;
    const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(D, x)), *dtype = tl_pv_at(T, x), *stride = tl_pm_tuple(c, tl_pv_at(S, x));
    const tl_pv *chv = tl_pv_at(tl_pv_at(D, add ? 4 : x + 1), 0);
    int64_t N;
    if (!shape || !dtype || !stride || !tl_pv_is_int(chv) || chv->u.i < 0 || !tl_pv_prod(shape, &N))
        return PM_FAIL;
    int64_t ch = chv->u.i;
    tl_pv *dt = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
    dt->u.items[0] = *dtype;
    tl_pm_param(c, "op_shape", shape);
    tl_pm_param(c, "dtype_in_out", dt);
    tl_pm_param(c, "stride_input", stride);
    tl_pm_param(c, "stride_output", NULL);
    tl_pm_param(c, "num_channels", tl_pv_int(c->pool, ch));
    tl_pm_param(c, "has_bias", tl_pv_bool(c->pool, 0));
    tl_pm_param(c, "is_affine", tl_pv_bool(c->pool, 1));
    tl_pm_param(c, "is_training", tl_pv_bool(c->pool, 0));
    int b = tl_pm_bpe(dtype);
    if (!b || ch == 0)
        return PM_FAIL;
    /* in doubles, as the reference's N / Ch is a true division */
    double n = (double)N, chd = (double)ch, bd = b;
    c->flops = (n / chd) * (2 * chd + 2) + n * 2;
    c->bytes = n * bd + n * bd + chd * bd;
    if (add) {
        c->flops = n + c->flops;
        c->bytes = 2 * n * bd + chd * bd + 2 * n * bd;
    }
    c->prec = dtype;
    return PM_OK;
}
