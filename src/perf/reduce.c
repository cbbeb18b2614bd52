/*
 * reduce.c - Reduce (PERF.md §4.7): aten's reductions and scans (sum, mean, max, min,
 * norm, std, var, logsumexp, cumsum, cumprod, amin, amax).  flops = one per input
 * element; bytes = the input and the output at their dtypes' widths.
 */
#include "perf/perf_impl.h"

#include <string.h>

#define MAX_RANK 64

int tl_pm_reduce(pm_ctx *c)
{
    const tl_pv *D = c->D, *T = c->T;
    const tl_pv *d0 = tl_pv_at(D, 0);
    if (!tl_pv_is_seq(D) || D->n == 0 || !d0 || d0->kind == TL_PV_NONE) {
        tl_pm_param(c, "num_input_elems", tl_pv_int(c->pool, 0));
        tl_pm_param(c, "num_output_elems", tl_pv_int(c->pool, 0));
        tl_pm_param(c, "dtype_in_out", tl_pv_seq(c->pool, TL_PV_TUPLE, 2));
        c->flops = 0;
        c->bytes_none = 1;
        return PM_OK;
    }
    int64_t in[MAX_RANK];
    size_t nin;
    if (!tl_pm_dims(d0, -1, in, MAX_RANK, &nin))
        return PM_FAIL;
    ck nin_e = ck_prod(in, nin);
    if (!nin_e.ok)
        return PM_FAIL;
    const tl_pv *din = tl_pv_is_seq(T) && T->n ? &T->u.items[0] : NULL;
    const tl_pv *dout = tl_pv_is_seq(c->out_type) && c->out_type->n ? &c->out_type->u.items[0] : NULL;

    /* keepdim and dim: the last boolean, the last integer (list) among C[1:] */
    int keepdim = 0;
    const tl_pv *dim = NULL;
    const tl_pv *C = c->C;
    if (tl_pv_is_seq(C)) {
        for (size_t i = C->n; i-- > 1;)
            if (C->u.items[i].kind == TL_PV_BOOL) {
                keepdim = (int)C->u.items[i].u.i;
                break;
            }
        for (size_t i = C->n; i-- > 1 && !dim;) {
            const tl_pv *x = &C->u.items[i];
            if (x->kind == TL_PV_INT) {
                dim = x;
            } else if (tl_pv_is_seq(x)) {
                int ints = 1;
                for (uint32_t k = 0; k < x->n; k++)
                    ints &= x->u.items[k].kind == TL_PV_INT;
                if (ints)
                    dim = x;
            }
        }
    }
    ck nout;
    if (strstr(c->name, "cumsum") || strstr(c->name, "cumprod")) {
        nout = nin_e;
    } else if (dim) {
        uint8_t drop[MAX_RANK] = {0};
        size_t nd = dim->kind == TL_PV_INT ? 1 : dim->n;
        for (size_t k = 0; k < nd; k++) {
            int64_t d = dim->kind == TL_PV_INT ? dim->u.i : dim->u.items[k].u.i;
            if (d < 0)
                d += (int64_t)nin;
            if (d < 0 || d >= (int64_t)nin)
                return PM_FAIL;
            drop[d] = 1;
        }
        nout = ck_of(1);
        for (size_t k = 0; k < nin; k++)
            if (!drop[k])
                nout = ck_muli(nout, in[k]);
        (void)keepdim; /* kept dims are 1: the product is the same */
    } else {
        nout = ck_of(1);
    }
    if (!nout.ok)
        return PM_FAIL;
    const char *rt = strstr(c->name, "mean") ? "mean" : strstr(c->name, "max") ? "max" : strstr(c->name, "min") ? "min"
                     : strstr(c->name, "norm")                                ? "norm"
                                                                              : "sum";
    tl_pv *dt = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
    if (din)
        dt->u.items[0] = *din;
    if (dout)
        dt->u.items[1] = *dout;
    tl_pm_param(c, "num_input_elems", tl_pv_int(c->pool, nin_e.v));
    tl_pm_param(c, "num_output_elems", tl_pv_int(c->pool, nout.v));
    tl_pm_param(c, "dtype_in_out", dt);
    tl_pm_param(c, "reduce_type", tl_pv_str(c->pool, rt, strlen(rt)));
    c->flops = (double)nin_e.v;
    int bi = tl_pm_bpe(din), bo = dout ? tl_pm_bpe(dout) : bi;
    if (!bi || !bo) {
        c->bytes_none = 1;
    } else {
        ck by = ck_add(ck_muli(nin_e, bi), ck_muli(nout, bo));
        if (!by.ok)
            return PM_FAIL;
        c->bytes = (double)by.v;
    }
    c->prec = din;
    return PM_OK;
}
