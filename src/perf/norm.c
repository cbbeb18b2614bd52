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

/* What a norm op's arguments say, read by its family's reader. */
typedef struct norm_args {
    const tl_pv *D, *C;   /* the op's dims and concrete inputs */
    const tl_pv *dim1;    /* the input's dim 1 */
    int cudnn_bnb;        /* a cudnn / miopen batch norm backward */
    int64_t chi;          /* num_channels, an int ... */
    double chd;           /* ... or a float (group norm backward: channels per group) */
    int ch_is_double;
    int has_bias, affine, training;
    const tl_pv *mask;    /* output_mask (the backward families) */
} norm_args;

/* The batch norms' channels (the input's dim 1) and affinity (whether a weight, D[2], is
 * given); they always count a bias. */
static int read_bn_channels(norm_args *a)
{
    int p;
    if (!tl_pv_is_int(a->dim1) || (p = present(a->D, 2)) < 0)
        return PM_FAIL;
    a->chi = a->dim1->u.i;
    a->has_bias = 1;
    a->affine = p;
    return PM_OK;
}

/* batch, group and instance norm: channels from dim 1, weight (D[2]) present */
static int read_bn(pm_ctx *c, int f, norm_args *a)
{
    if (read_bn_channels(a) != PM_OK)
        return PM_FAIL;
    if (f == F_GN) {
        a->training = 1;
    } else {
        const tl_pv *x = tl_pv_at(a->C, 5);
        if (!x)
            return PM_FAIL;
        a->training = tl_pm_text_true(x);
    }
    return PM_OK;
}

/* batch norm backward: cudnn's is never training and computes the input's gradient; the
 * native one says both (C[7], whether D[0] is present) */
static int read_bnb(pm_ctx *c, int f, norm_args *a)
{
    if (read_bn_channels(a) != PM_OK)
        return PM_FAIL;
    tl_pv *m = tl_pv_seq(c->pool, TL_PV_LIST, 1);
    m->u.items[0].kind = TL_PV_BOOL;
    if (a->cudnn_bnb) {
        a->training = 0;
        m->u.items[0].u.i = 1;
    } else {
        const tl_pv *x = tl_pv_at(a->C, 7);
        int p0 = present(a->D, 0);
        if (!x || p0 < 0)
            return PM_FAIL;
        a->training = tl_pm_text_true(x);
        m->u.items[0].u.i = p0;
    }
    a->mask = m;
    return PM_OK;
}

/* layer norm and RMSNorm: channels from the normalized shape (C[1]), weight D[2]; layer
 * norm's bias D[3] */
static int read_ln(pm_ctx *c, int f, norm_args *a)
{
    int p;
    if (!tl_pm_literal_prod(c, tl_pv_at(a->C, 1), &a->chi) || (p = present(a->D, 2)) < 0)
        return PM_FAIL;
    a->affine = p;
    if (f == F_LN) {
        if ((p = present(a->D, 3)) < 0)
            return PM_FAIL;
        a->has_bias = p;
        a->training = 1;
    } else {
        a->has_bias = 0;
        a->training = 0;
    }
    return PM_OK;
}

/* layer norm backward: the output mask (C[7]) says affine and bias */
static int read_lnb(pm_ctx *c, int f, norm_args *a)
{
    if (!tl_pm_literal_prod(c, tl_pv_at(a->C, 2), &a->chi) || !(a->mask = tl_pm_literal(c, tl_pv_at(a->C, 7))) ||
        !tl_pv_is_seq(a->mask))
        return PM_FAIL;
    if ((a->affine = mask_at(a->mask, 1)) < 0 || (a->has_bias = mask_at(a->mask, 2)) < 0)
        return PM_FAIL;
    a->training = 1;
    return PM_OK;
}

/* group norm backward: channels per group (dim 1 / C[8]), a float */
static int read_gnb(pm_ctx *c, int f, norm_args *a)
{
    int p;
    const tl_pv *g = tl_pm_literal(c, tl_pv_at(a->C, 8));
    if (!(a->mask = tl_pm_literal(c, tl_pv_at(a->C, 9))) || !tl_pv_is_seq(a->mask) || !tl_pv_is_int(a->dim1) || !g ||
        g->kind != TL_PV_INT || g->u.i == 0 || (p = present(a->D, 5)) < 0)
        return PM_FAIL;
    a->chd = (double)a->dim1->u.i / (double)g->u.i;
    a->ch_is_double = 1;
    a->has_bias = 1;
    a->affine = p;
    a->training = 1;
    return PM_OK;
}

/* RMSNorm backward: the output mask C[5], weight D[4] */
static int read_rmsb(pm_ctx *c, int f, norm_args *a)
{
    int p;
    if (!tl_pm_literal_prod(c, tl_pv_at(a->C, 2), &a->chi) || !(a->mask = tl_pm_literal(c, tl_pv_at(a->C, 5))) ||
        !tl_pv_is_seq(a->mask) || (p = present(a->D, 4)) < 0)
        return PM_FAIL;
    a->has_bias = 0;
    a->affine = p;
    a->training = 0;
    return PM_OK;
}

/* By family: its name, the input's index in the op's arguments, how its arguments are
 * read, and whether it has an output mask.  Instance norm backward is not modelled. */
static const struct {
    const char *name;
    unsigned input;
    int (*read)(pm_ctx *, int, norm_args *);
    int masked;
} families[] = {
    [F_BN] = {"BatchNorm", 0, read_bn, 0},     [F_BNB] = {"BatchNormBwd", 1, read_bnb, 1},
    [F_LN] = {"LayerNorm", 0, read_ln, 0},     [F_LNB] = {"LayerNormBwd", 1, read_lnb, 1},
    [F_GN] = {"GroupNorm", 0, read_bn, 0},     [F_GNB] = {"GroupNormBwd", 1, read_gnb, 1},
    [F_IN] = {"InstanceNorm", 0, read_bn, 0},  [F_INB] = {"InstanceNormBwd", 0, NULL, 0},
    [F_RMS] = {"RMSNorm", 0, read_ln, 0},      [F_RMSB] = {"RMSNormBwd", 1, read_rmsb, 1},
};

static int family(const char *m)
{
    for (int i = 0; i < (int)(sizeof families / sizeof *families); i++)
        if (strcmp(m, families[i].name) == 0)
            return i;
    return -1;
}

/* The formulas in doubles: every term is a small integer multiple of N or Ch, exact in a
 * double for any real tensor (N < 2^53 is checked as an int64 product). */
static int norm_counts(pm_ctx *c, int f, double n, double ch, double bd, const norm_args *a)
{
    int affine = a->affine, has_bias = a->has_bias, training = a->training;
    int m0 = a->mask ? mask_at(a->mask, 0) : 0, m1 = a->mask ? mask_at(a->mask, 1) : 0;
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
    return PM_OK;
}

int tl_pm_norm(pm_ctx *c)
{
    int f = family(c->model);
    if (f < 0 || !families[f].read || c->bwd)
        return PM_NOT_MODELLED;
    norm_args a = {.D = c->D, .C = c->C, .chd = NAN};
    size_t idx = families[f].input;
    if (f == F_BNB) {
        a.cudnn_bnb = strcmp(c->name, "aten::cudnn_batch_norm_backward") == 0 ||
                      strcmp(c->name, "aten::miopen_batch_norm_backward") == 0;
        idx = a.cudnn_bnb ? 0 : 1;
    }
    const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(c->D, idx));
    const tl_pv *dtype = tl_pv_at(c->T, idx);
    const tl_pv *stride = tl_pm_tuple(c, tl_pv_at(c->S, idx));
    if (!shape || !dtype || !stride)
        return PM_FAIL;
    int64_t N;
    if (!tl_pv_prod(shape, &N))
        return PM_FAIL;
    a.dim1 = tl_pv_at(shape, 1);
    if (families[f].read(c, f, &a) != PM_OK)
        return PM_FAIL;
    if (!a.ch_is_double)
        a.chd = (double)a.chi;
    tl_pv *dt = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
    dt->u.items[0] = *dtype;
    tl_pm_param(c, "op_shape", shape);
    tl_pm_param(c, "dtype_in_out", dt);
    tl_pm_param(c, "stride_input", stride);
    tl_pm_param(c, "stride_output", NULL);
    tl_pm_param(c, "num_channels", a.ch_is_double ? tl_pv_float(c->pool, a.chd) : tl_pv_int(c->pool, a.chi));
    tl_pm_param(c, "has_bias", tl_pv_bool(c->pool, a.has_bias));
    tl_pm_param(c, "is_affine", tl_pv_bool(c->pool, a.affine));
    tl_pm_param(c, "is_training", tl_pv_bool(c->pool, a.training));
    if (families[f].masked)
        tl_pm_param(c, "output_mask", a.mask);
    int b = tl_pm_bpe(dtype);
    if (!b || norm_counts(c, f, (double)N, a.chd, b, &a) != PM_OK)
        return PM_FAIL;
    c->prec = dtype;
    return PM_OK;
}
