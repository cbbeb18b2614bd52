/*
 * moe.c - the unfused Triton MoE GEMMs (vLLM GPT-OSS: the pseudo ops trace/infer.h
 * injects, one per matmul_ogs kernel): the up projection (doubled when gated, SwiGLU)
 * and the down projection of num_tokens tokens over topk experts each.  The trace has
 * no intermediate size: it is taken equal to the hidden size, as the reference does.
 * bytes: the activations, the weights of the experts a uniform routing is expected to
 * touch, and the output.
 */
#include "perf/perf_impl.h"

#include <math.h>
#include <string.h>

/* The reference's MoE dtype sizes (exact texts; FP4 is half a byte). */
static const struct {
    const char *name;
    double bpe;
} moe_dtypes[] = {
    {"Float8_e4m3fn", 1},  {"Float8_e4m3fnuz", 1}, {"Float8_e5m2", 1}, {"Float8_e5m2fnuz", 1},
    {"FP8", 1},            {"FP4", 0.5},           {"BFloat16", 2},    {"Float16", 2},
    {"Half", 2},           {"Float32", 4},         {"Float", 4},       {"c10::BFloat16", 2},
    {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e4m3fnuz", 1}, {"c10::Float4_e2m1fn_x2", 0.5},
    {"c10::Half", 2},      {"c10::Float", 4},
};

static double moe_bpe(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof moe_dtypes / sizeof *moe_dtypes; i++)
        if (strlen(moe_dtypes[i].name) == n && memcmp(moe_dtypes[i].name, s, n) == 0)
            return moe_dtypes[i].bpe;
    return 0;
}

static int has_ci(const char *s, const char *lit)
{
    size_t n = strlen(lit);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && (s[i] | 32) == lit[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

int tl_pm_moe_unfused(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    int up = strcmp(c->model, "moe_triton_unfused_up") == 0;
    const tl_pv *D = c->D, *T = c->T;
    const tl_pv *x = tl_pv_at(D, 0), *r = tl_pv_at(D, 1);
    if (!tl_pv_is_seq(D) || D->n < 2 || !tl_pv_is_seq(x) || x->n < 2 || !tl_pv_is_seq(r) || r->n < 2)
        return PM_FAIL;
    const tl_pv *mv = &x->u.items[0], *kv = &x->u.items[1], *ev = &r->u.items[1];
    if (!tl_pv_is_int(mv) || !tl_pv_is_int(kv) || !tl_pv_is_int(ev) || c->ev >= c->t->nev)
        return PM_FAIL;
    const tl_tev_aux *aux = tl_tev_x(c->t, &c->t->ev[c->ev]);
    int64_t M = mv->u.i, K = kv->u.i, N = K, E = ev->u.i, topk = aux->moe_topk;
    int gated = aux->moe_gated;
    /* the weights' dtype from the first kernel's name */
    if (!c->nkern)
        return PM_FAIL;
    const char *kn = c->t->ev[c->kern[0]].name, *wd = NULL;
    if (has_ci(kn, "mxfp4") || has_ci(kn, "fp4"))
        wd = "FP4";
    else if (has_ci(kn, "fp8") || has_ci(kn, "e4m3"))
        wd = "FP8";
    if (!tl_pv_is_seq(T) || T->n < 2)
        return PM_FAIL;
    const tl_pv *idt = &T->u.items[0];
    tl_pm_param(c, "num_tokens", tl_pv_int(c->pool, M));
    tl_pm_param(c, "hidden_dim", tl_pv_int(c->pool, K));
    tl_pm_param(c, "inter_dim", tl_pv_int(c->pool, N));
    tl_pm_param(c, "num_experts", tl_pv_int(c->pool, E));
    tl_pm_param(c, "topk", tl_pv_int(c->pool, topk));
    tl_pm_param(c, "gated", tl_pv_bool(c->pool, gated));
    tl_pm_param(c, "input_dtype", idt);
    tl_pm_param(c, "weight_dtype", wd ? tl_pv_str(c->pool, wd, strlen(wd)) : NULL);
    ck fl = ck_muli(ck_muli(ck_muli(ck_muli(ck_muli(ck_of(2), M), K), N), topk), up && gated ? 2 : 1);
    if (!fl.ok)
        return PM_FAIL;
    double ib = idt->kind == TL_PV_STR ? moe_bpe(idt->u.s, idt->n) : 0, wb = wd ? moe_bpe(wd, strlen(wd)) : 0;
    if (!ib || !wb || E == 0)
        return PM_FAIL;
    double ea = (double)E * (1 - pow((double)(E - topk) / (double)E, (double)M));
    double ob = ib, g = up && gated ? 2 : 1;
    double in, w, out;
    if (up) {
        in = (double)M * (double)K * ib;
        w = ea * g * (double)K * (double)N * wb;
        out = (double)M * (double)N * (double)topk * ob;
    } else {
        in = (double)M * (double)N * (double)topk * ib;
        w = ea * (double)N * (double)K * wb;
        out = (double)M * (double)K * ob;
    }
    c->flops = (double)fl.v;
    c->bytes = in + w + out;
    c->prec = tl_pv_str(c->pool, wd, strlen(wd));
    return PM_OK;
}
