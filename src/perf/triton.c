/*
 * triton.c - TritonCompiled (PERF.md §4.9): torch.compile's Triton kernels, for
 * unified_perf_summary.  The fused aten ops are read off the kernel's name (segmented
 * into appendix C's names), the problem size off its integer scalars; flops are a
 * per-op weight times the elements, bytes the tensors it touches.
 */
#include "perf/perf_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 64

size_t tl_pm_triton_scalars(const tl_pv *C, int64_t *out, size_t cap);

typedef struct wt {
    const char *name;
    int w;
} wt;

static const wt weights[] = {
    {"abs", 1}, {"add", 1}, {"div", 1}, {"eq", 1}, {"exp", 4}, {"gelu", 8}, {"gt", 1}, {"log", 4}, {"lt", 1},
    {"mean", 1}, {"mul", 1}, {"ne", 1}, {"neg", 1}, {"pow", 2}, {"reciprocal", 2}, {"relu", 1}, {"rsqrt", 2},
    {"sigmoid", 4}, {"silu", 4}, {"sqrt", 2}, {"sub", 1}, {"sum", 1}, {"tanh", 4}, {"var", 2},
};

static int weight_of(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof weights / sizeof *weights; i++)
        if (strlen(weights[i].name) == n && memcmp(weights[i].name, s, n) == 0)
            return weights[i].w;
    return 0;
}

static int elem_bytes(const tl_pv *t)
{
    static const struct {
        const char *n;
        int b;
    } tb[] = {{"c10::BFloat16", 2}, {"c10::Half", 2}, {"c10::Float", 4}, {"c10::Double", 8},
              {"c10::Byte", 1},     {"c10::Char", 1}, {"c10::Int", 4},   {"c10::Long", 8}};
    for (size_t i = 0; i < sizeof tb / sizeof *tb; i++)
        if (tl_pv_str_is(t, tb[i].n))
            return tb[i].b;
    return 0;
}

int tl_pm_triton(pm_ctx *c)
{
    if (c->bwd)
        return PM_NOT_MODELLED;
    const char *name = c->name;
    int poi = strncmp(name, "triton_poi_", 11) == 0;
    int64_t sc[4];
    size_t ns = tl_pm_triton_scalars(c->C, sc, 0);
    if (ns == 0)
        return PM_FAIL;
    int64_t *all = tl_pv_alloc(c->pool, ns * sizeof *all);
    tl_pm_triton_scalars(c->C, all, ns);
    int64_t xnumel, rnumel = 1;
    if (!poi && ns >= 2) {
        xnumel = all[ns - 2];
        rnumel = all[ns - 1];
    } else {
        xnumel = all[ns - 1];
    }

    /* the fused ops: triton_xxx_fused_<ops>_<digits> */
    const char *ops_s = NULL;
    size_t ops_n = 0;
    if (strncmp(name + 11, "fused_", 6) == 0) {
        const char *p = name + 17, *end = p + strlen(p);
        const char *d = end;
        while (d > p && isdigit((unsigned char)d[-1]))
            d--;
        if (d < end && d > p + 1 && d[-1] == '_') {
            ops_s = p;
            ops_n = (size_t)(d - 1 - p);
        }
    }
    tl_buf fused = {0};
    double wsum = 0;
    if (ops_s && ops_n) {
        const char *tok[MAX_TOKENS];
        size_t tlen[MAX_TOKENS], nt = 0;
        const char *q = ops_s, *qe = ops_s + ops_n;
        while (q <= qe && nt < MAX_TOKENS) {
            const char *u = memchr(q, '_', (size_t)(qe - q));
            if (!u)
                u = qe;
            tok[nt] = q;
            tlen[nt++] = (size_t)(u - q);
            q = u + 1;
        }
        if (q <= qe)
            nt = 0; /* too many tokens to segment: no ops */
        /* dp: reach[i], and for walking back the chosen start of the longest name */
        uint8_t reach[MAX_TOKENS + 1] = {0};
        int from[MAX_TOKENS + 1];
        size_t best_len[MAX_TOKENS + 1] = {0};
        reach[0] = 1;
        for (size_t i = 1; i <= nt; i++) {
            from[i] = -1;
            for (size_t j = 0; j < i; j++) {
                if (!reach[j])
                    continue;
                size_t len = (size_t)(tok[i - 1] + tlen[i - 1] - tok[j]);
                if (!tl_pm_aten_known(tok[j], len))
                    continue;
                reach[i] = 1;
                if (from[i] < 0 || len > best_len[i]) {
                    from[i] = (int)j;
                    best_len[i] = len;
                }
            }
        }
        if (nt && reach[nt]) {
            size_t starts[MAX_TOKENS], nops = 0;
            for (size_t i = nt; i > 0; i = (size_t)from[i])
                starts[nops++] = i;
            for (size_t k = nops; k-- > 0;) {
                size_t i = starts[k], j = (size_t)from[i];
                size_t len = (size_t)(tok[i - 1] + tlen[i - 1] - tok[j]);
                if (fused.len)
                    tl_buf_adds(&fused, ", ");
                tl_buf_adds(&fused, "aten.");
                tl_buf_add(&fused, tok[j], len);
                wsum += weight_of(tok[j], len);
            }
        }
    }
    /* bytes: the tensors, and the output of a pointwise kernel */
    const tl_pv *D = c->D, *T = c->T;
    double bytes = 0;
    int first_eb = -1;
    const tl_pv *dtype = NULL;
    if (!tl_pv_is_seq(D) || !tl_pv_is_seq(T)) {
        tl_buf_free(&fused);
        return PM_FAIL;
    }
    size_t np = D->n < T->n ? D->n : T->n;
    for (size_t i = 0; i < np; i++) {
        const tl_pv *dd = &D->u.items[i], *tt = &T->u.items[i];
        if (tl_pv_str_is(tt, "Scalar") || !tl_pv_is_seq(dd) || dd->n == 0)
            continue;
        int64_t p;
        if (!tl_pv_prod(dd, &p)) {
            tl_buf_free(&fused);
            return PM_FAIL;
        }
        int eb = elem_bytes(tt);
        if (first_eb < 0)
            first_eb = eb;
        if (eb && !dtype)
            dtype = tt;
        bytes += (double)p * eb;
    }
    if (poi && first_eb > 0)
        bytes += (double)first_eb * (double)xnumel;
    tl_pm_param(c, "fused_ops", tl_pv_str(c->pool, fused.data ? fused.data : "", fused.len));
    tl_pm_param(c, "xnumel", tl_pv_int(c->pool, xnumel));
    tl_pm_param(c, "rnumel", tl_pv_int(c->pool, rnumel));
    tl_buf_free(&fused);
    c->flops = wsum * (double)xnumel * (double)rnumel;
    c->bytes = bytes;
    if (dtype) {
        const char *s = tl_pm_cstr(c, dtype), *lc = strrchr(s, ':');
        lc = lc ? lc + 1 : s;
        char *low = tl_pv_alloc(c->pool, strlen(lc) + 1);
        for (size_t i = 0; lc[i]; i++)
            low[i] = (char)tolower((unsigned char)lc[i]);
        c->prec_as_is = low;
    }
    return PM_OK;
}
