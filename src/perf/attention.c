/*
 * attention.c - the inference attention ops whose work comes from the step's iteration
 * annotation (the inference generator's InferenceAttention models): the query and KV
 * shapes from the op's arguments, the per-step sums of query and key lengths (context
 * and generation requests) from the annotation enclosing the op.  flops: QK and PV over
 * every (query, key) pair, the causal half of the current chunk taken off; bytes: Q, the
 * output and the current K/V once, the cached K/V once more.
 */
#include "perf/perf_impl.h"

#include "trace/infer.h"

#include <string.h>

/* An item of a sequence counted from the end (Python's v[-k]), or NULL. */
static const tl_pv *from_end(const tl_pv *v, size_t k)
{
    return tl_pv_is_seq(v) && v->n >= k ? &v->u.items[v->n - k] : NULL;
}

static int int_of(const tl_pv *v, int64_t *out)
{
    if (!tl_pv_is_int(v))
        return 0;
    *out = v->u.i;
    return 1;
}

int tl_pm_inference_attention(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const char *m = c->model;
    int ragged = strcmp(m, "aiter_paged_attention_ragged") == 0;
    int v_from_d2 = strcmp(m, "aiter_mha_batch_prefill") == 0 || strcmp(m, "aiter_fmha_v3_varlen_fwd") == 0 ||
                    strcmp(m, "pseudo_mla_prefill_fwd") == 0;
    /* the step's aggregates: without them the model has no estimate (a failed row) */
    int64_t st[8];
    if (!c->annotation || !tl_infer_chunk_stats(c->annotation, st))
        return PM_FAIL;
    const tl_pv *D = c->D, *T = c->T;
    const tl_pv *q = tl_pv_at(D, ragged ? 2 : 0);
    int64_t nq, hq, dqk, nkv = 0, hkv, dv;
    if (!tl_pv_is_seq(q) || q->n != 3 || !int_of(&q->u.items[0], &nq) || !int_of(&q->u.items[1], &hq) ||
        !int_of(&q->u.items[2], &dqk))
        return PM_FAIL;
    const tl_pv *dtq, *dtkv = NULL;
    if (ragged) {
        if (!int_of(from_end(tl_pv_at(D, 3), 2), &hkv) || !int_of(from_end(tl_pv_at(D, 4), 1), &dv))
            return PM_FAIL;
        nkv = st[1] + st[5];
        dtq = tl_pv_at(T, 2);
    } else {
        const tl_pv *k = tl_pv_at(D, 1);
        if (!tl_pv_is_seq(k) || k->n < 3 || !int_of(from_end(k, 3), &nkv) || !int_of(from_end(k, 2), &hkv) ||
            !int_of(from_end(k, 1), &dv))
            return PM_FAIL;
        dtq = tl_pv_at(T, 0);
        if (!dtq)
            return PM_FAIL;
        dtkv = tl_pv_is_seq(T) && T->n > 1 ? &T->u.items[1] : dtq;
        const tl_pv *d2 = tl_pv_at(D, 2);
        if (v_from_d2 && tl_pv_is_seq(D) && D->n > 2 && tl_pv_is_seq(d2) && d2->n >= 1 && !int_of(from_end(d2, 1), &dv))
            return PM_FAIL;
    }
    if (!dtq)
        return PM_FAIL;
    tl_pm_param(c, "B", tl_pv_int(c->pool, 1));
    tl_pm_param(c, "N_Q", tl_pv_int(c->pool, nq));
    tl_pm_param(c, "H_Q", tl_pv_int(c->pool, hq));
    tl_pm_param(c, "H_V", tl_pv_int(c->pool, hkv));
    tl_pm_param(c, "H_K", tl_pv_int(c->pool, hkv));
    tl_pm_param(c, "N_KV", tl_pv_int(c->pool, nkv));
    tl_pm_param(c, "H_KV", tl_pv_int(c->pool, hkv));
    tl_pm_param(c, "d_h_qk", tl_pv_int(c->pool, dqk));
    tl_pm_param(c, "d_h_v", tl_pv_int(c->pool, dv));
    tl_pm_param(c, "dropout", tl_pv_float(c->pool, 0.0));
    tl_pm_param(c, "causal", tl_pv_bool(c->pool, 0));
    tl_pm_param(c, "flash_impl", tl_pv_bool(c->pool, 1));
    static const char *const stat_names[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
    for (int i = 0; i < 8; i++)
        tl_pm_param(c, stat_names[i], tl_pv_int(c->pool, st[i]));
    tl_pm_param(c, "dtype_Q", dtq);
    if (!ragged)
        tl_pm_param(c, "dtype_KV", dtkv);
    /* a step with neither context nor generation tokens: the model declines (no row) */
    int64_t c_sq = st[0], c_sk = st[1], c_sqsq = st[2], c_sqsk = st[3], g_sq = st[4], g_sk = st[5], g_sqsk = st[7];
    if (c_sq == 0 && g_sq == 0)
        return PM_NOT_MODELLED;
    ck hd = ck_of(dqk + dv);
    if (!ck_add(ck_of(dqk), ck_of(dv)).ok)
        return PM_FAIL;
    /* flops = H_Q·(2·c_sqsk − c_sqsq)·(d_qk + d_v) + H_Q·2·g_sqsk·(d_qk + d_v), term by term */
    ck f = ck_muli(ck_muli(ck_muli(ck_of(hq), 2), c_sqsk), dqk);
    f = ck_add(f, ck_muli(ck_muli(ck_muli(ck_of(hq), 2), c_sqsk), dv));
    f = ck_sub(f, ck_muli(ck_muli(ck_of(hq), c_sqsq), dqk));
    f = ck_sub(f, ck_muli(ck_muli(ck_of(hq), c_sqsq), dv));
    f = ck_add(f, ck_muli(ck_muli(ck_muli(ck_of(hq), 2), g_sqsk), dqk));
    f = ck_add(f, ck_muli(ck_muli(ck_muli(ck_of(hq), 2), g_sqsk), dv));
    (void)hd;
    /* bytes: (Q, out, current K, V) at Q's element size, the cached K, V at the KV one's */
    ck qe = ck_add(ck_muli(ck_of(hq), dqk), ck_muli(ck_of(hq), dv));
    qe = ck_add(qe, ck_add(ck_muli(ck_of(hkv), dqk), ck_muli(ck_of(hkv), dv)));
    ck kve = ck_add(ck_muli(ck_of(hkv), dqk), ck_muli(ck_of(hkv), dv));
    ck eq = ck_mul(ck_add(ck_of(c_sq), ck_of(g_sq)), qe);
    ck ekv = ck_add(ck_mul(ck_sub(ck_of(c_sk), ck_of(c_sq)), kve), ck_mul(ck_sub(ck_of(g_sk), ck_of(g_sq)), kve));
    int bq = tl_pm_bpe(dtq);
    if (!bq)
        bq = 2;
    int bkv = dtkv ? tl_pm_bpe(dtkv) : 0;
    if (!bkv)
        bkv = bq;
    ck by = ck_add(ck_muli(eq, bq), ck_muli(ekv, bkv));
    if (!f.ok || !by.ok)
        return PM_FAIL;
    c->flops = (double)f.v;
    c->bytes = (double)by.v;
    c->prec = dtq;
    return PM_OK;
}
