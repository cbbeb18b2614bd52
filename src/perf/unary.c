/*
 * unary.c - UnaryElementwise (PERF.md §4.4): aten's one-input elementwise ops (copy,
 * clamp, sigmoid, rsqrt, silu, neg, pow), replication padding, nearest upsampling and
 * the vendors' silu_and_mul.  flops = one per element (per output element for pad and
 * upsample, five for silu_and_mul); bytes = what is read and written.
 */
#include "perf/perf_impl.h"

#include <string.h>

#define MAX_RANK 64

static int nonempty(const tl_pv *D, size_t i)
{
    const tl_pv *x = tl_pv_at(D, i);
    return x && (tl_pv_is_seq(x) ? x->n > 0 : x->kind != TL_PV_NONE);
}

static tl_pv *pair(pm_ctx *c, const tl_pv *a, const tl_pv *b)
{
    tl_pv *t = tl_pv_seq(c->pool, TL_PV_TUPLE, 2);
    if (a)
        t->u.items[0] = *a;
    if (b)
        t->u.items[1] = *b;
    return t;
}

static tl_pv *int_tuple(pm_ctx *c, const int64_t *v, size_t n)
{
    tl_pv *t = tl_pv_seq(c->pool, TL_PV_TUPLE, n);
    for (size_t i = 0; i < n; i++) {
        t->u.items[i].kind = TL_PV_INT;
        t->u.items[i].u.i = v[i];
    }
    return t;
}

/* The integers of a text like "[1, 1, 2, 2]" with the brackets and spaces removed and
 * split on commas (Python's int() of each piece). */
static int int_list_text(pm_ctx *c, const tl_pv *v, int64_t *out, size_t cap, size_t *n)
{
    const char *s = tl_pm_cstr(c, v);
    if (!s)
        return 0;
    char *buf = tl_pv_alloc(c->pool, strlen(s) + 1);
    size_t k = 0;
    for (const char *p = s; *p; p++)
        if (*p != '[' && *p != ']' && *p != ' ')
            buf[k++] = *p;
    buf[k] = 0;
    *n = 0;
    char *p = buf;
    for (;;) {
        char *e = strchr(p, ',');
        if (e)
            *e = 0;
        tl_pv tmp = {.kind = TL_PV_STR, .u.s = p, .n = (uint32_t)strlen(p)};
        const tl_pv *x = tl_pm_literal(c, &tmp);
        if (!x || x->kind != TL_PV_INT || *n >= cap)
            return 0;
        out[(*n)++] = x->u.i;
        if (!e)
            break;
        p = e + 1;
    }
    return 1;
}

int tl_pm_unary(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const char *m = c->model;
    const tl_pv *D = c->D, *T = c->T, *S = c->S;
    int64_t in[MAX_RANK];
    size_t nin;
    if (strcmp(m, "aten_unary_elementwise") == 0) {
        const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(D, 0));
        const tl_pv *t0 = tl_pv_at(T, 0);
        int second = nonempty(D, 1);
        const tl_pv *t1 = second ? tl_pv_at(T, 1) : NULL;
        const tl_pv *si = tl_pm_tuple(c, tl_pv_at(S, 0)), *so = NULL;
        if (!shape || !t0 || !si || (second && (!t1 || !(so = tl_pm_tuple(c, tl_pv_at(S, 1))))))
            return PM_FAIL;
        tl_pv *dt = pair(c, t0, t1);
        tl_pm_param(c, "op_shape", shape);
        tl_pm_param(c, "dtype_in_out", dt);
        tl_pm_param(c, "stride_input", si);
        tl_pm_param(c, "stride_output", so);
        if (!tl_pm_dims(shape, -1, in, MAX_RANK, &nin))
            return PM_FAIL;
        ck n = ck_prod(in, nin);
        if (!n.ok)
            return PM_FAIL;
        c->flops = (double)n.v;
        int bi = tl_pm_bpe(&dt->u.items[0]), bo = dt->u.items[1].kind == TL_PV_NONE ? bi : tl_pm_bpe(&dt->u.items[1]);
        if (!bi || !bo) {
            c->bytes_none = 1;
        } else {
            ck by = ck_add(ck_muli(n, bi), ck_muli(n, bo));
            if (!by.ok)
                return PM_FAIL;
            c->bytes = (double)by.v;
        }
        c->prec = &dt->u.items[0];
        return PM_OK;
    }
    if (strcmp(m, "aten_replication_pad") == 0 || strcmp(m, "aten_upsample_nearest") == 0) {
        int pad = m[5] == 'r';
        const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(D, 0));
        if (!shape || !tl_pm_dims(shape, -1, in, MAX_RANK, &nin))
            return PM_FAIL;
        int64_t out[MAX_RANK];
        size_t nout = nin;
        memcpy(out, in, nin * sizeof *in);
        const tl_pv *padding = NULL;
        if (pad) {
            int64_t p[2 * MAX_RANK];
            size_t np;
            if (!int_list_text(c, tl_pv_at(c->C, 1), p, 2 * MAX_RANK, &np))
                return PM_FAIL;
            /* pair i widens dim (last - i) */
            for (size_t i = 0; 2 * i < np; i++) {
                if (i >= nin || 2 * i + 1 >= np)
                    return PM_FAIL;
                ck w = ck_add(ck_of(out[nin - 1 - i]), ck_add(ck_of(p[2 * i]), ck_of(p[2 * i + 1])));
                if (!w.ok || w.v < 0)
                    return PM_FAIL;
                out[nin - 1 - i] = w.v;
            }
            tl_pv *pl = int_tuple(c, p, np);
            pl->kind = TL_PV_LIST;
            padding = pl;
        } else {
            const tl_pv *sz = tl_pm_literal(c, tl_pv_at(c->C, 1));
            int64_t o[MAX_RANK];
            size_t no;
            if (!sz || sz->kind != TL_PV_LIST || nin < 2 || !tl_pm_dims(sz, -1, o, MAX_RANK - 2, &no))
                return PM_FAIL;
            nout = 2 + no;
            memcpy(out + 2, o, no * sizeof *o);
        }
        const tl_pv *os = int_tuple(c, out, nout);
        const tl_pv *t0 = tl_pv_at(T, 0);
        const tl_pv *si = tl_pm_tuple(c, tl_pv_at(S, 0));
        if (!t0 || !si)
            return PM_FAIL;
        tl_pm_param(c, "input_shape", shape);
        tl_pm_param(c, "output_shape", os);
        if (pad)
            tl_pm_param(c, "padding", padding);
        tl_pm_param(c, "op_shape", os);
        tl_pm_param(c, "dtype_in_out", pair(c, t0, t0));
        tl_pm_param(c, "stride_input", si);
        tl_pm_param(c, "stride_output", NULL);
        ck ni = ck_prod(in, nin), no2 = ck_prod(out, nout);
        int b = tl_pm_bpe(t0);
        if (!ni.ok || !no2.ok || !b)
            return PM_FAIL;
        c->flops = (double)no2.v;
        ck by = ck_add(ck_muli(ni, b), ck_muli(no2, b));
        if (!by.ok)
            return PM_FAIL;
        c->bytes = (double)by.v;
        c->prec = t0;
        return PM_OK;
    }
    /* silu_and_mul: the output first, then the input (twice as wide) */
    const tl_pv *shape = tl_pm_tuple(c, tl_pv_at(D, 0));
    const tl_pv *t0 = tl_pv_at(T, 0), *t1 = tl_pv_at(T, 1);
    const tl_pv *si = tl_pm_tuple(c, tl_pv_at(S, 1)), *so = tl_pm_tuple(c, tl_pv_at(S, 0));
    if (!shape || !t0 || !t1 || !si || !so || !tl_pm_dims(shape, -1, in, MAX_RANK, &nin))
        return PM_FAIL;
    tl_pv *dt = pair(c, t1, t0);
    tl_pm_param(c, "op_shape", shape);
    tl_pm_param(c, "dtype_in_out", dt);
    tl_pm_param(c, "stride_input", si);
    tl_pm_param(c, "stride_output", so);
    ck n = ck_prod(in, nin);
    int bi = tl_pm_bpe(t1), bo = tl_pm_bpe(t0);
    if (!n.ok || !bi || !bo)
        return PM_FAIL;
    ck fl = ck_muli(n, 5), by = ck_add(ck_muli(ck_muli(n, 2), bi), ck_muli(n, bo));
    if (!fl.ok || !by.ok)
        return PM_FAIL;
    c->flops = (double)fl.v;
    c->bytes = (double)by.v;
    c->prec = t1;
    return PM_OK;
}
