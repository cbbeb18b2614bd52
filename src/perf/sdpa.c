/*
 * sdpa.c - the SDPA families (PERF.md §4.2): aten's scaled-dot-product attention
 * (flash, efficient, cudnn) and flash_attn's forward and backward.  flops are the two
 * matrix products Q·Kᵀ and P·V (four more in the backward pass), halved when causal;
 * bytes the four tensors at 2 bytes per element.
 */
#include "perf/perf_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* dropout text as a double: "", "None" or unparsable -> 0.0 (lenient) or failure */
static int read_double(pm_ctx *c, const tl_pv *v, int lenient, double *out)
{
    const char *s = tl_pm_cstr(c, v);
    *out = 0.0;
    if (!s)
        return lenient;
    const tl_pv *x = tl_pm_literal(c, v);
    if (x && (x->kind == TL_PV_FLOAT || x->kind == TL_PV_INT)) {
        *out = x->kind == TL_PV_FLOAT ? x->u.f : (double)x->u.i;
        return 1;
    }
    /* Python's float() also reads "nan", "inf", " 0.5 " */
    char *e;
    double d = strtod(s, &e);
    while (isspace((unsigned char)*e))
        e++;
    if (*s && !*e && e != s) {
        *out = d;
        return 1;
    }
    return lenient;
}

int tl_pm_sdpa(pm_ctx *c)
{
    const char *m = c->model;
    int fa = strcmp(m, "flash_attention") == 0, fab = strcmp(m, "flash_attention_backward") == 0;
    int flash = strcmp(m, "aten__scaled_dot_product_flash_attention") == 0;
    const tl_pv *D = c->D, *T = c->T, *C = c->C;
    size_t base = fab ? 1 : 0;
    int64_t q[4], k[4], v[4];
    for (int i = 0; i < 3; i++) {
        const tl_pv *s = tl_pv_at(D, base + (size_t)i);
        int64_t *dst = i == 0 ? q : i == 1 ? k : v;
        if (!tl_pv_is_seq(s) || s->n < 4)
            return PM_FAIL;
        for (int j = 0; j < 4; j++) {
            const tl_pv *x = &s->u.items[j];
            if (x->kind != TL_PV_INT || x->u.i < 0)
                return PM_FAIL;
            dst[j] = x->u.i;
        }
    }
    int64_t B, NQ, HQ, NKV, HKV, dqk, dv;
    const tl_pv *qs = NULL, *ks = NULL, *vs = NULL;
    double dropout = 0;
    int causal, flash_impl;
    if (fa || fab) {
        /* (B, N, H, d) */
        B = q[0], NQ = q[1], HQ = q[2], NKV = k[1], HKV = k[2], dqk = q[3], dv = v[3];
        qs = tl_pm_tuple(c, tl_pv_at(c->S, base));
        ks = tl_pm_tuple(c, tl_pv_at(c->S, base + 1));
        vs = tl_pm_tuple(c, tl_pv_at(c->S, base + 2));
        if (!qs || !ks || !vs)
            return PM_FAIL;
        flash_impl = 1;
        if (fa) {
            const tl_pv *cz = tl_pv_at(C, 5);
            if (!read_double(c, tl_pv_at(C, 3), 0, &dropout))
                return PM_FAIL;
            if (tl_pv_str_is(cz, "True"))
                causal = 1;
            else if (tl_pv_str_is(cz, "False"))
                causal = 0;
            else
                return PM_FAIL;
        } else {
            const tl_pv *c8 = tl_pv_at(C, 8);
            int have = tl_pv_is_seq(C) && C->n > 8 && c8 && c8->kind == TL_PV_STR && c8->n > 0;
            causal = 1;
            if (have) {
                const tl_pv *cz = tl_pv_at(C, 10);
                if (!read_double(c, c8, 0, &dropout))
                    return PM_FAIL;
                if (tl_pv_str_is(cz, "True"))
                    causal = 1;
                else if (tl_pv_str_is(cz, "False"))
                    causal = 0;
                else
                    return PM_FAIL;
            }
        }
    } else {
        /* (B, H, N, d) */
        if (q[0] != k[0] || q[0] != v[0] || k[1] != v[1] || k[2] != v[2] || q[3] != k[3])
            return PM_FAIL;
        B = q[0], HQ = q[1], NQ = q[2], HKV = k[1], NKV = k[2], dqk = q[3], dv = v[3];
        size_t di = flash ? 3 : 5, ci = flash ? 4 : 6;
        const tl_pv *dt = tl_pv_at(C, di), *ct = tl_pv_at(C, ci);
        if (!dt || !ct)
            return PM_FAIL;
        if (!(tl_pv_str_is(dt, "") || tl_pv_str_is(dt, "None")))
            read_double(c, dt, 1, &dropout);
        if (ct->kind != TL_PV_STR)
            return PM_FAIL;
        if (ct->n == 0 || tl_pv_str_is(ct, "None")) {
            causal = 0;
        } else {
            char low[8] = {0};
            for (uint32_t i = 0; i < ct->n && i < 5; i++)
                low[i] = (char)tolower((unsigned char)ct->u.s[i]);
            causal = ct->n == 4 && strcmp(low, "true") == 0;
        }
        flash_impl = flash;
    }
    if (!tl_pv_is_seq(T) || T->n < 2)
        return PM_FAIL;
    const tl_pv *dtab = tl_pm_slice(c, T, 0, 2);
    tl_pm_param(c, "B", tl_pv_int(c->pool, B));
    tl_pm_param(c, "N_Q", tl_pv_int(c->pool, NQ));
    tl_pm_param(c, "H_Q", tl_pv_int(c->pool, HQ));
    tl_pm_param(c, "N_KV", tl_pv_int(c->pool, NKV));
    tl_pm_param(c, "H_KV", tl_pv_int(c->pool, HKV));
    tl_pm_param(c, "d_h_qk", tl_pv_int(c->pool, dqk));
    tl_pm_param(c, "d_h_v", tl_pv_int(c->pool, dv));
    if (fa || fab) {
        tl_pm_param(c, "q_stride", qs);
        tl_pm_param(c, "k_stride", ks);
        tl_pm_param(c, "v_stride", vs);
    }
    tl_pm_param(c, "dropout", tl_pv_float(c->pool, dropout));
    tl_pm_param(c, "causal", tl_pv_bool(c->pool, causal));
    tl_pm_param(c, "flash_impl", tl_pv_bool(c->pool, flash_impl));
    tl_pm_param(c, "dtype_A_B", dtab);

    ck bhq = ck_muli(ck_of(B), HQ);
    ck qk = ck_muli(ck_muli(ck_muli(ck_muli(bhq, 2), NQ), NKV), dqk); /* B·H_Q·2·N_Q·N_KV·d_qk */
    ck pv = ck_muli(ck_muli(ck_muli(ck_muli(bhq, 2), NQ), NKV), dv);  /* B·H_Q·2·N_Q·N_KV·d_v */
    ck tq = ck_muli(ck_muli(ck_muli(ck_of(B), NQ), HQ), dqk), tk = ck_muli(ck_muli(ck_muli(ck_of(B), NKV), HKV), dqk);
    ck tv = ck_muli(ck_muli(ck_muli(ck_of(B), NKV), HKV), dv), to = ck_muli(ck_muli(ck_muli(ck_of(B), NQ), HQ), dv);
    ck fl, el;
    int backward = c->bwd || fab;
    if (!backward) {
        fl = ck_add(qk, pv);
        el = ck_add(ck_add(ck_add(tq, tk), tv), to);
    } else {
        if (HKV == 0)
            return PM_FAIL;
        int64_t grp = HQ / HKV - 1;
        ck g1 = ck_muli(ck_muli(ck_muli(ck_of(B), NKV), dv), grp), g2 = ck_muli(ck_muli(ck_muli(ck_of(B), NKV), dqk), grp);
        fl = flash_impl ? qk : ck_of(0);
        fl = ck_add(ck_add(ck_add(ck_add(ck_add(ck_add(fl, pv), g1), pv), qk), qk), g2);
        el = ck_add(ck_add(ck_add(ck_add(ck_add(ck_add(tq, tk), tv), to), tq), tk), tv);
    }
    int bpe = 2;
    if (fab && !(bpe = tl_pm_bpe(tl_pv_at(T, 0))))
        return PM_FAIL;
    ck by = ck_muli(el, bpe);
    if (!fl.ok || !by.ok)
        return PM_FAIL;
    c->flops = (double)fl.v;
    if (causal) {
        if (NQ != NKV)
            return PM_FAIL;
        c->flops = c->flops / 2;
    }
    c->bytes = fab ? (double)by.v : (double)ck_muli(el, 2).v;
    c->prec = tl_pv_at(dtab, 0);
    return PM_OK;
}
