/*
 * binary.c - BinaryElementwise (PERF.md §4.5): aten::add, mul, div (and their in-place
 * forms), sigmoid_backward, threshold_backward.  flops = one per output element; bytes
 * = both inputs and the output, each at its dtype's width.
 */
#include "perf/perf_impl.h"

#define MAX_RANK 64

/* D has a non-empty entry i */
static int nonempty(const tl_pv *D, size_t i)
{
    const tl_pv *x = tl_pv_at(D, i);
    return x && (tl_pv_is_seq(x) ? x->n > 0 : x->kind != TL_PV_NONE);
}

int tl_pm_binary(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const tl_pv *D = c->D, *T = c->T, *S = c->S;
    const tl_pv *s1 = tl_pm_tuple(c, tl_pv_at(D, 0)), *s2 = tl_pm_tuple(c, tl_pv_at(D, 1));
    if (!s1 || !s2 || !tl_pv_is_seq(T) || T->n < 2)
        return PM_FAIL;
    int has_out = nonempty(D, 2);
    tl_pv *dt = tl_pv_seq(c->pool, TL_PV_TUPLE, 3);
    dt->u.items[0] = T->u.items[0];
    dt->u.items[1] = T->u.items[1];
    if (has_out) {
        if (T->n < 3)
            return PM_FAIL;
        dt->u.items[2] = T->u.items[2];
    }
    const tl_pv *st1 = tl_pm_tuple(c, tl_pv_at(S, 0)), *st2 = tl_pm_tuple(c, tl_pv_at(S, 1)), *sto = NULL;
    if (!st1 || !st2)
        return PM_FAIL;
    if (has_out && !(sto = tl_pm_tuple(c, tl_pv_at(S, 2))))
        return PM_FAIL;
    tl_pm_param(c, "shape_in1", s1);
    tl_pm_param(c, "shape_in2", s2);
    tl_pm_param(c, "dtype_in1_in2_out", dt);
    tl_pm_param(c, "stride_input1", st1);
    tl_pm_param(c, "stride_input2", st2);
    tl_pm_param(c, "stride_output", sto);

    /* broadcast, right-aligned */
    int64_t a[MAX_RANK], b[MAX_RANK];
    size_t na, nb;
    if (!tl_pm_dims(s1, -1, a, MAX_RANK, &na) || !tl_pm_dims(s2, -1, b, MAX_RANK, &nb))
        return PM_FAIL;
    size_t n = na > nb ? na : nb;
    ck nout = ck_of(1);
    for (size_t i = 0; i < n; i++) {
        int64_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            return PM_FAIL;
        nout = ck_muli(nout, x == 1 ? y : x);
    }
    ck n1 = ck_prod(a, na), n2 = ck_prod(b, nb);
    if (!nout.ok || !n1.ok || !n2.ok)
        return PM_FAIL;
    c->flops = (double)nout.v;
    int b1 = tl_pm_bpe(&dt->u.items[0]), b2 = tl_pm_bpe(&dt->u.items[1]), bo;
    if (has_out && dt->u.items[2].kind != TL_PV_NONE)
        bo = tl_pm_bpe(&dt->u.items[2]);
    else if (b1 && b2)
        bo = na > 0 && nb > 0 ? (b1 > b2 ? b1 : b2) : b1;
    else
        bo = 0;
    if (!b1 || !b2 || !bo) {
        c->bytes_none = 1;
    } else {
        ck by = ck_add(ck_add(ck_muli(n1, b1), ck_muli(n2, b2)), ck_muli(nout, bo));
        if (!by.ok)
            return PM_FAIL;
        c->bytes = (double)by.v;
    }
    c->prec = &dt->u.items[0];
    return PM_OK;
}
