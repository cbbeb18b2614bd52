/*
 * infer.c - the inference ops of PERF.md §4.8 that have formulas: sgl_kernel's rotary
 * embedding (3 flops per rotated element; read and write each) and sglang's store_cache
 * (no flops; four passes over the cache entries).
 */
#include "perf/perf_impl.h"

#include <string.h>

int tl_pm_rope(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const tl_pv *D = c->D, *C = c->C;
    const tl_pv *q = tl_pv_at(D, 1), *k = tl_pv_at(D, 2);
    if (!tl_pv_is_seq(q) || q->n < 2 || !tl_pv_is_seq(k) || k->n < 2)
        return PM_FAIL;
    const tl_pv *ql = &q->u.items[q->n - 1];
    if (!tl_pv_is_int(ql) || !tl_pv_is_int(&q->u.items[0]) || !tl_pv_is_int(&q->u.items[1]) || !tl_pv_is_int(&k->u.items[1]))
        return PM_FAIL;
    int64_t head = ql->u.i;
    const tl_pv *c3 = tl_pv_at(C, 3);
    if (tl_pv_is_seq(C) && C->n > 3 && c3 && c3->kind == TL_PV_STR) {
        int blank = 1;
        for (uint32_t i = 0; i < c3->n; i++)
            blank &= c3->u.s[i] == ' ' || c3->u.s[i] == '\t';
        if (!blank) {
            const tl_pv *h = tl_pm_literal(c, c3);
            if (!h || h->kind != TL_PV_INT)
                return PM_FAIL;
            head = h->u.i;
        }
    }
    int64_t rot = head;
    const tl_pv *d4 = tl_pv_at(D, 4);
    if (tl_pv_is_seq(D) && D->n > 4 && tl_pv_is_seq(d4) && d4->n > 1) {
        if (!tl_pv_is_int(&d4->u.items[1]))
            return PM_FAIL;
        rot = d4->u.items[1].u.i;
    }
    if (head <= 0)
        return PM_FAIL;
    int64_t q0 = q->u.items[0].u.i, q1 = q->u.items[1].u.i, k1 = k->u.items[1].u.i;
    if (q0 < 0 || q1 < 0 || k1 < 0 || rot < 0)
        return PM_FAIL;
    ck n = ck_muli(ck_muli(ck_of(q0), q1 / head + k1 / head), rot);
    if (!n.ok)
        return PM_FAIL;
    tl_pm_param(c, "num_elements", tl_pv_int(c->pool, n.v));
    const tl_pv *t1 = tl_pv_at(c->T, 1);
    int bq = tl_pm_bpe(t1);
    if (!bq)
        bq = 2;
    ck fl = ck_muli(n, 3), by = ck_muli(ck_muli(n, 2), bq);
    if (!fl.ok || !by.ok)
        return PM_FAIL;
    c->flops = (double)fl.v;
    c->bytes = (double)by.v;
    c->prec = t1;
    return PM_OK;
}

int tl_pm_store_cache(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(c->D, 0)), *dtype = tl_pv_at(c->T, 0);
    int64_t n;
    if (!shape || !dtype || !tl_pv_prod(shape, &n))
        return PM_FAIL;
    tl_pm_param(c, "op_shape", shape);
    tl_pm_param(c, "nelems", tl_pv_int(c->pool, n));
    tl_pm_param(c, "dtype", dtype);
    int b = tl_pm_bpe(dtype);
    if (!b)
        b = 2;
    ck by = ck_muli(ck_muli(ck_of(n), 4), b);
    if (!by.ok)
        return PM_FAIL;
    c->flops = 0;
    c->bytes = (double)by.v;
    c->prec = dtype;
    return PM_OK;
}
