/*
 * conv.c - CONV (PERF.md §4.3): aten::convolution and convolution_backward, 1-d to 3-d,
 * transposed and grouped.  flops = 2 multiply-adds per output (input, when transposed)
 * element and filter tap; the backward pass adds the input and weight gradients.
 */
#include "perf/perf_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 8

typedef struct shape {
    int64_t d[MAX_RANK];
    size_t n;
} shape;

static ck prod(const shape *s, size_t from)
{
    ck r = ck_of(1);
    for (size_t i = from; i < s->n; i++)
        r = ck_muli(r, s->d[i]);
    return r;
}

static shape swap01(const shape *s)
{
    shape r = *s;
    if (r.n >= 2) {
        int64_t t = r.d[0];
        r.d[0] = r.d[1];
        r.d[1] = t;
    }
    return r;
}

/* F(x, w, o, bias, transposed) */
static ck F(const shape *x, const shape *w, const shape *o, int bias, int transposed)
{
    ck r = ck_muli(ck_mul(prod(transposed ? x : o, 0), prod(w, 1)), 2);
    if (bias)
        r = ck_add(r, prod(o, 0));
    return r;
}

/* "[a, b]" -> the integers; "" -> n copies of dflt; one value -> repeated n times */
static int int_list(pm_ctx *c, const tl_pv *v, size_t n, int64_t dflt, int64_t *out)
{
    const char *s = tl_pm_cstr(c, v);
    if (!s)
        return 0;
    if (!*s) {
        for (size_t i = 0; i < n; i++)
            out[i] = dflt;
        return 1;
    }
    size_t len = strlen(s);
    const char *a = strchr(s, '['), *b = strrchr(s, ']');
    if (!a || !b || b < a)
        a = s - 1, b = s + len;
    size_t k = 0;
    const char *p = a + 1;
    while (p < b) {
        const char *e = memchr(p, ',', (size_t)(b - p));
        if (!e)
            e = b;
        char tmp[32];
        size_t m = (size_t)(e - p);
        if (m >= sizeof tmp || k >= MAX_RANK)
            return 0;
        memcpy(tmp, p, m);
        tmp[m] = 0;
        char *end;
        long long x = strtoll(tmp, &end, 10);
        while (*end == ' ')
            end++;
        if (*end || end == tmp)
            return 0;
        out[k++] = x;
        p = e + 1;
    }
    if (k == 1)
        for (size_t i = 1; i < n; i++)
            out[i] = out[0];
    else if (k != n)
        return 0;
    return 1;
}

static tl_pv *tuple_of(pm_ctx *c, const int64_t *v, size_t n)
{
    tl_pv *t = tl_pv_seq(c->pool, TL_PV_TUPLE, n);
    for (size_t i = 0; i < n; i++) {
        t->u.items[i].kind = TL_PV_INT;
        t->u.items[i].u.i = v[i];
    }
    return t;
}

int tl_pm_conv(pm_ctx *c)
{
    int bwd_op = strcmp(c->model, "aten_conv_bwd") == 0;
    const tl_pv *D = c->D, *T = c->T, *S = c->S, *C = c->C;
    size_t o = bwd_op ? 1 : 0;
    const tl_pv *xt = tl_pm_tuple(c, tl_pv_at(D, o)), *wt = tl_pm_tuple(c, tl_pv_at(D, o + 1));
    shape x, w;
    if (!xt || !wt || !tl_pm_dims(xt, -1, x.d, MAX_RANK, &x.n) || !tl_pm_dims(wt, -1, w.d, MAX_RANK, &w.n))
        return PM_FAIL;
    if (x.n < 3 || x.n > 5 || w.n != x.n)
        return PM_FAIL;
    size_t n = x.n - 2;
    const tl_pv *bias_v;
    int bias;
    if (!bwd_op) {
        bias = tl_pv_is_seq(D) && D->n == 3;
        bias_v = tl_pv_bool(c->pool, bias);
    } else if (D->n <= 3) {
        bias = 0;
        bias_v = tl_pv_bool(c->pool, 0);
    } else {
        const tl_pv *d3 = tl_pv_at(D, 3);
        if (tl_pv_is_seq(d3) && d3->n == 0) {
            bias = 0; /* the empty list itself: falsy */
            bias_v = tl_pv_as(c->pool, d3, TL_PV_LIST);
        } else {
            bias = 1;
            bias_v = tl_pv_bool(c->pool, 1);
        }
    }
    int64_t st[MAX_RANK], pad[MAX_RANK], dil[MAX_RANK], opad[MAX_RANK];
    size_t ci = bwd_op ? 4 : 3;
    if (!int_list(c, tl_pv_at(C, ci), n, 1, st) || !int_list(c, tl_pv_at(C, ci + 1), n, 0, pad) ||
        !int_list(c, tl_pv_at(C, ci + 2), n, 1, dil) || !int_list(c, tl_pv_at(C, ci + 4), n, 0, opad))
        return PM_FAIL;
    const tl_pv *tr = tl_pv_at(C, ci + 3), *gr = tl_pv_at(C, ci + 5);
    int transposed;
    if (tl_pv_str_is(tr, "True"))
        transposed = 1;
    else if (tl_pv_str_is(tr, "False"))
        transposed = 0;
    else
        return PM_FAIL;
    const tl_pv *g = tl_pm_literal(c, gr);
    if (!g || g->kind != TL_PV_INT)
        return PM_FAIL;
    if (!tl_pv_is_seq(T) || T->n < o + 2)
        return PM_FAIL;
    const tl_pv *dt = tl_pm_slice(c, T, o, o + 2);
    const tl_pv *t0 = &dt->u.items[0], *t1 = &dt->u.items[1];
    if (t0->kind != TL_PV_STR || t1->kind != TL_PV_STR || t0->n != t1->n || memcmp(t0->u.s, t1->u.s, t0->n) != 0)
        return PM_FAIL;
    const tl_pv *is = NULL, *ws = NULL;
    if (S) {
        is = tl_pm_tuple(c, tl_pv_at(S, o));
        ws = tl_pm_tuple(c, tl_pv_at(S, o + 1));
        if (!is || !ws)
            return PM_FAIL;
    }
    static const char *const nd[3] = {"conv1d", "conv2d", "conv3d"};
    tl_pm_param(c, "convNd", tl_pv_str(c->pool, nd[n - 1], 6));
    tl_pm_param(c, "input_shape", xt);
    tl_pm_param(c, "filter_shape", wt);
    tl_pm_param(c, "dtype_input_weight", dt);
    tl_pm_param(c, "input_stride", is);
    tl_pm_param(c, "weight_stride", ws);
    tl_pm_param(c, "bias", bias_v);
    tl_pm_param(c, "stride", tuple_of(c, st, n));
    tl_pm_param(c, "padding", tuple_of(c, pad, n));
    tl_pm_param(c, "dilation", tuple_of(c, dil, n));
    tl_pm_param(c, "transposed_conv", tl_pv_bool(c->pool, transposed));
    tl_pm_param(c, "output_padding", tuple_of(c, opad, n));
    tl_pm_param(c, "groups", g);

    /* the output shape */
    shape out = {{0}, x.n};
    out.d[0] = x.d[0];
    out.d[1] = transposed ? w.d[1] : w.d[0];
    for (size_t i = 0; i < n; i++) {
        int64_t xi = x.d[i + 2], ki = w.d[i + 2];
        ck dk = ck_muli(ck_sub(ck_of(ki), ck_of(1)), dil[i]);
        if (transposed) {
            ck r = ck_addi(ck_add(ck_add(ck_sub(ck_muli(ck_sub(ck_of(xi), ck_of(1)), st[i]), ck_muli(ck_of(pad[i]), 2)), dk),
                                  ck_of(opad[i])),
                           1);
            if (!r.ok)
                return PM_FAIL;
            out.d[i + 2] = r.v;
        } else {
            ck num = ck_sub(ck_sub(ck_add(ck_of(xi), ck_muli(ck_of(pad[i]), 2)), dk), ck_of(1));
            if (!num.ok || st[i] == 0)
                return PM_FAIL;
            double q = trunc((double)num.v / (double)st[i] + 1);
            if (!(fabs(q) < 9e18))
                return PM_FAIL;
            out.d[i + 2] = (int64_t)q;
        }
        if (out.d[i + 2] < 0)
            return PM_FAIL;
    }
    int b = tl_pm_bpe(t0);
    ck fl, by;
    ck px = prod(&x, 0), pw = prod(&w, 0), po = prod(&out, 0);
    if (!bwd_op && !c->bwd) {
        fl = F(&x, &w, &out, bias, transposed);
        by = ck_add(ck_add(px, pw), po);
        if (bias)
            by = ck_addi(by, out.d[1]);
        by = ck_muli(by, b);
    } else {
        shape tx = swap01(&x), to = swap01(&out), tw = swap01(&w);
        /* the input gradient: a conv of the output gradient with w, counted per output
         * element (the reference's numbers: PERF.md's F(out, w, x) reads prod(x) there,
         * which differs for a strided conv, and resnet's expected sheets say prod(out)) */
        fl = ck_add(F(&out, &w, &x, 0, 1), transposed ? F(&to, &tx, &tw, 0, 0) : F(&tx, &to, &tw, 0, 0));
        if (bias)
            fl = ck_add(fl, po);
        ck three = ck_add(ck_add(po, pw), px);
        by = ck_add(ck_muli(three, b), ck_muli(three, b));
        if (bias)
            by = ck_add(by, ck_addi(po, out.d[1]));
    }
    if (!fl.ok)
        return PM_FAIL;
    c->flops = (double)fl.v;
    if (!b) {
        c->bytes_none = 1;
    } else {
        if (!by.ok)
            return PM_FAIL;
        c->bytes = (double)by.v;
    }
    c->prec = t0;
    return PM_OK;
}
