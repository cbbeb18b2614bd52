/*
 * norm.c - the Normalization families (PERF.md §4.6): batch, layer, group and instance
 * norm and aten's fused RMSNorm, forward and backward ops.  The formulas count the
 * statistics (per channel) and the normalisation (per element); bytes are the input,
 * the output and the per-channel parameters.
 */
#include "perf/perf_impl.h"

#include <math.h>
#include <string.h>

/* D[i] exists and is not JSON null ("present"; an empty list is present).  -1: past the
 * end of D (the row fails). */
static int present(const tl_pv *D, size_t i)
{
    const tl_pv *x = tl_pv_at(D, i);
    return !x ? -1 : x->kind != TL_PV_NONE;
}

/* item i of a literal list's truth, -1 when absent */
static int mask_at(const tl_pv *m, size_t i)
{
    const tl_pv *x = tl_pv_at(m, i);
    if (!x)
        return -1;
    switch (x->kind) {
    case TL_PV_BOOL:
    case TL_PV_INT:
        return x->u.i != 0;
    case TL_PV_NONE:
        return 0;
    case TL_PV_FLOAT:
        return x->u.f != 0;
    case TL_PV_STR:
    case TL_PV_TUPLE:
    case TL_PV_LIST:
        return x->n > 0;
    default:
        return -1;
    }
}

enum { F_BN, F_BNB, F_LN, F_LNB, F_GN, F_GNB, F_IN, F_INB, F_RMS, F_RMSB };

static int family(const char *m)
{
    static const char *const names[] = {"BatchNorm",       "BatchNormBwd", "LayerNorm", "LayerNormBwd",
                                        "GroupNorm",       "GroupNormBwd", "InstanceNorm", "InstanceNormBwd",
                                        "RMSNorm",         "RMSNormBwd"};
    for (int i = 0; i < 10; i++)
        if (strcmp(m, names[i]) == 0)
            return i;
    return -1;
}

int pm_norm(pm_ctx *c)
{
    int f = family(c->model);
    if (f < 0 || f == F_INB || c->bwd)
        return PM_NOT_MODELLED;
    const tl_pv *D = c->D, *T = c->T, *S = c->S, *C = c->C;
    size_t idx = (f == F_LNB || f == F_GNB || f == F_RMSB) ? 1 : 0;
    int cudnn_bnb = 0;
    if (f == F_BNB) {
        cudnn_bnb = strcmp(c->name, "aten::cudnn_batch_norm_backward") == 0 ||
                    strcmp(c->name, "aten::miopen_batch_norm_backward") == 0;
        idx = cudnn_bnb ? 0 : 1;
    }
    const tl_pv *shape = pm_tuple(c, tl_pv_at(D, idx));
    const tl_pv *dtype = tl_pv_at(T, idx);
    const tl_pv *stride = pm_tuple(c, tl_pv_at(S, idx));
    if (!shape || !dtype || !stride)
        return PM_FAIL;
    int64_t N;
    if (!tl_pv_prod(shape, &N))
        return PM_FAIL;
    const tl_pv *dim1 = tl_pv_at(shape, 1);
    int64_t chi = 0;
    double chd = NAN;
    int ch_is_double = 0, has_bias, affine, training, p;
    const tl_pv *mask = NULL;
    switch (f) {
    case F_BN:
    case F_GN:
    case F_IN:
        if (!tl_pv_is_int(dim1) || (p = present(D, 2)) < 0)
            return PM_FAIL;
        chi = dim1->u.i;
        has_bias = 1;
        affine = p;
        if (f == F_GN) {
            training = 1;
        } else {
            const tl_pv *x = tl_pv_at(C, 5);
            if (!x)
                return PM_FAIL;
            training = pm_text_true(x);
        }
        break;
    case F_BNB:
        if (!tl_pv_is_int(dim1) || (p = present(D, 2)) < 0)
            return PM_FAIL;
        chi = dim1->u.i;
        has_bias = 1;
        affine = p;
        {
            tl_pv *m = tl_pv_seq(c->pool, TL_PV_LIST, 1);
            m->u.items[0].kind = TL_PV_BOOL;
            if (cudnn_bnb) {
                training = 0;
                m->u.items[0].u.i = 1;
            } else {
                const tl_pv *x = tl_pv_at(C, 7);
                int p0 = present(D, 0);
                if (!x || p0 < 0)
                    return PM_FAIL;
                training = pm_text_true(x);
                m->u.items[0].u.i = p0;
            }
            mask = m;
        }
        break;
    case F_LN:
    case F_RMS:
        if (!pm_literal_prod(c, tl_pv_at(C, 1), &chi) || (p = present(D, 2)) < 0)
            return PM_FAIL;
        affine = p;
        if (f == F_LN) {
            if ((p = present(D, 3)) < 0)
                return PM_FAIL;
            has_bias = p;
            training = 1;
        } else {
            has_bias = 0;
            training = 0;
        }
        break;
    case F_LNB:
        if (!pm_literal_prod(c, tl_pv_at(C, 2), &chi) || !(mask = pm_literal(c, tl_pv_at(C, 7))) || !tl_pv_is_seq(mask))
            return PM_FAIL;
        if ((affine = mask_at(mask, 1)) < 0 || (has_bias = mask_at(mask, 2)) < 0)
            return PM_FAIL;
        training = 1;
        break;
    case F_GNB: {
        const tl_pv *g = pm_literal(c, tl_pv_at(C, 8));
        if (!(mask = pm_literal(c, tl_pv_at(C, 9))) || !tl_pv_is_seq(mask) || !tl_pv_is_int(dim1) || !g ||
            g->kind != TL_PV_INT || g->u.i == 0 || (p = present(D, 5)) < 0)
            return PM_FAIL;
        chd = (double)dim1->u.i / (double)g->u.i;
        ch_is_double = 1;
        has_bias = 1;
        affine = p;
        training = 1;
        break;
    }
    case F_RMSB:
        if (!pm_literal_prod(c, tl_pv_at(C, 2), &chi) || !(mask = pm_literal(c, tl_pv_at(C, 5))) || !tl_pv_is_seq(mask) ||
            (p = present(D, 4)) < 0)
            return PM_FAIL;
        has_bias = 0;
        affine = p;
        training = 0;
        break;
    default:
        return PM_FAIL;
    }
    if (!ch_is_double)
        chd = (double)chi;
    tl_pv *dt = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
    dt->u.items[0] = *dtype;
    pm_param(c, "op_shape", shape);
    pm_param(c, "dtype_in_out", dt);
    pm_param(c, "stride_input", stride);
    pm_param(c, "stride_output", NULL);
    pm_param(c, "num_channels", ch_is_double ? tl_pv_float(c->pool, chd) : tl_pv_int(c->pool, chi));
    pm_param(c, "has_bias", tl_pv_bool(c->pool, has_bias));
    pm_param(c, "is_affine", tl_pv_bool(c->pool, affine));
    pm_param(c, "is_training", tl_pv_bool(c->pool, training));
    if (f == F_BNB || f == F_LNB || f == F_GNB || f == F_RMSB)
        pm_param(c, "output_mask", mask);

    /* The formulas in doubles: every term is a small integer multiple of N or Ch, exact
     * in a double for any real tensor (N < 2^53 is checked above as an int64 product). */
    double n = (double)N, ch = chd;
    int b = pm_bpe(dtype);
    if (!b)
        return PM_FAIL;
    double bd = b;
    int m0 = mask ? mask_at(mask, 0) : 0, m1 = mask ? mask_at(mask, 1) : 0;
    if (m0 < 0)
        m0 = 0;
    if (m1 < 0)
        m1 = 0;
    switch (f) {
    case F_BN:
    case F_LN:
    case F_GN:
    case F_IN: {
        double w = 2 + (affine ? 1 + (has_bias ? 1 : 0) : 0) + (training ? 2 : 0);
        c->flops = 3 * ch + (training ? 3 * n : 0) + 3 * ch + 2 * n;
        c->bytes = n * bd + n * bd + w * ch * bd;
        break;
    }
    case F_BNB:
    case F_LNB:
    case F_GNB: {
        if (ch == 0)
            return PM_FAIL;
        double e = n / ch;
        double per = (training ? 0 : 3) + 4 * e + (m0 && training ? 5 * e : 0) + (!m0 ? 2 * e : 0);
        c->flops = ch * per;
        c->bytes = n * bd + n * bd * (m0 && training ? 2 : 1) + (training ? ch * bd : 0) +
                   (affine ? ch * bd + (training ? ch * bd * (has_bias ? 2 : 1) : 0) : 0);
        break;
    }
    case F_RMS:
        if (ch == 0)
            return PM_FAIL;
        c->flops = (n / ch) * (2 * ch + 2) + n * (affine ? 2 : 1);
        c->bytes = n * bd + n * bd + (affine ? ch * bd : 0);
        break;
    case F_RMSB:
        if (ch == 0)
            return PM_FAIL;
        c->flops = (affine ? n : 0) + n + (m0 ? 6 * n : 0) + (m1 && affine ? n + (n / ch > 1 ? n : 0) : 0);
        c->bytes = n * bd + 2 * n * bd + (affine ? 2 * ch * bd : 0);
        break;
    }
    c->prec = dtype;
    return PM_OK;
}
