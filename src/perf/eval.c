/*
 * eval.c - one perf row (PERF.md §3): the GPU events of an event forward or backward,
 * Kernel Time, the family's parameters, flops and bytes, the metrics, Compute Spec and
 * the roofline columns (§8); the forward/backward links (§1.6).  The helpers the
 * families share are in args.c.
 */
#include "perf/perf_eval.h"

#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/kmap.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "<maf>_<precision>" for the table's precisions, without formatting one per row */
static const char *spec_of(const char *maf, const char *prec)
{
    static const char *const precs[] = {"bf16", "fp16", "fp32", "fp64", "fp8", "fp4"};
    static const char *const matrix[] = {"matrix_bf16", "matrix_fp16", "matrix_fp32", "matrix_fp64", "matrix_fp8", "matrix_fp4"};
    static const char *const vector[] = {"vector_bf16", "vector_fp16", "vector_fp32", "vector_fp64", "vector_fp8", "vector_fp4"};
    for (size_t i = 0; i < sizeof precs / sizeof *precs; i++)
        if (strcmp(prec, precs[i]) == 0)
            return maf[0] == 'm' ? matrix[i] : vector[i];
    return "";
}

/* ---- the environment and the links (PERF.md §1.6) ----------------------------------- */

void tl_pm_env_init(pm_env *env, const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena)
{
    memset(env, 0, sizeof *env);
    env->t = t;
    env->arch = arch;
    env->arena = arena;
    tl_kmap_init(&env->argmap);
    size_t nev = t->nev;
    env->comm = tl_xmalloc_filled(nev ? nev : 1);
    /* the name test was made once per name as the trace was read */
    for (size_t i = 0; i < nev; i++)
        env->comm[i] = tl_tev_is_gpu(&t->ev[i]) && (t->ev[i].flags & TL_TEV_COMM);
    int any = 0;
    for (size_t i = 0; i < nev && !any; i++)
        any = tl_tev_x(t, &t->ev[i])->seq != TL_SEQ_NONE;
    if (!any)
        return;
    env->fwd = tl_xmalloc_filled(nev * sizeof *env->fwd);
    env->bwd0 = tl_xmalloc_filled(nev * sizeof *env->bwd0); /* every one set below */
    env->bwdn = tl_xcalloc_dense(nev, sizeof *env->bwdn); /* counted up (read first): see util.h */
    for (size_t i = 0; i < nev; i++)
        env->fwd[i] = TL_TEV_NONE;
    /* groups by Sequence number, members in array order: a chain per group */
    tl_kmap first;
    tl_kmap_init(&first);
    uint32_t *next = tl_xmalloc_filled(nev * sizeof *next), *last = tl_xmalloc(nev * sizeof *last);
    uint32_t *heads = NULL;
    size_t nheads = 0, hcap = 0;
    for (size_t i = 0; i < nev; i++) {
        next[i] = TL_TEV_NONE;
        const tl_tev_aux *x = tl_tev_x(t, &t->ev[i]);
        if (x->seq == TL_SEQ_NONE || !x->has_args)
            continue;
        int created;
        tl_kmap_slot *sl = tl_kmap_put(&first, x->seq, 0, 0, &created);
        if (created) {
            sl->val = (uint32_t)i;
            last[i] = (uint32_t)i;
            TL_GROW(heads, hcap, nheads + 1);
            heads[nheads++] = (uint32_t)i;
        } else {
            uint32_t h = sl->val;
            next[last[h]] = (uint32_t)i;
            last[h] = (uint32_t)i;
        }
    }
    static const char pre[] = "autograd::engine::evaluate_function:";
    for (size_t g = 0; g < nheads; g++) {
        uint32_t b = TL_TEV_NONE;
        for (uint32_t m = heads[g]; m != TL_TEV_NONE; m = next[m])
            if (strncmp(t->ev[m].name, pre, sizeof pre - 1) == 0) {
                b = m;
                break;
            }
        if (b == TL_TEV_NONE)
            continue;
        uint32_t f = TL_TEV_NONE;
        for (uint32_t m = heads[g]; m != TL_TEV_NONE; m = next[m]) {
            if (tl_tev_thread(t, &t->ev[m]) == tl_tev_thread(t, &t->ev[b])) /* the same (pid, tid) */
                continue;
            if (f == TL_TEV_NONE || t->ev[m].ts > t->ev[f].ts)
                f = m;
        }
        if (f == TL_TEV_NONE)
            continue;
        env->fwd[b] = f;
        env->bwdn[f]++;
    }
    size_t total = 0;
    for (size_t i = 0; i < nev; i++) {
        env->bwd0[i] = (uint32_t)total;
        total += env->bwdn[i];
        env->bwdn[i] = 0;
    }
    env->bwd = tl_xmalloc((total ? total : 1) * sizeof *env->bwd);
    /* B's appended to F in the order the groups are met */
    for (size_t g = 0; g < nheads; g++) {
        for (uint32_t m = heads[g]; m != TL_TEV_NONE; m = next[m]) {
            if (env->fwd[m] != TL_TEV_NONE && strncmp(t->ev[m].name, pre, sizeof pre - 1) == 0) {
                uint32_t f = env->fwd[m];
                env->bwd[env->bwd0[f] + env->bwdn[f]++] = m;
                break;
            }
        }
    }
    tl_kmap_free(&first);
    free(next);
    free(last);
    free(heads);
}

/* The reference's annotation filters (its generator's list), matched at the name's start. */
static const char *const annot_filters[] = {
    "vllm::unified_attention_with_output", "aiter::mha_varlen_fwd", "pseudo_mla_decode_fwd", "pseudo_mla_prefill_fwd",
    "vllm::gdn_attention_core", "aiter::fmha_v3_varlen_fwd", "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
    "sglang_profiler::attention_paged_attention_ragged", "aiter::mha_batch_prefill", "aiter::pa_decode_gluon",
    "aiter::v4_attention_with_output", "pseudo_v4_paged_decode_swa", "pseudo_v4_paged_decode_csa",
    "pseudo_v4_paged_decode_hca"};

static int ann_ts_cmp(size_t a, size_t b, void *ctx)
{
    const tl_trace *t = ctx;
    double x = t->ev[a].ts, y = t->ev[b].ts;
    return x < y ? -1 : x > y ? 1 : 0;
}

void tl_pm_env_annotate(pm_env *env)
{
    const tl_trace *t = env->t;
    size_t *ann = NULL, na = 0, cap = 0;
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].kind == TL_TEV_ANNOT) {
            TL_GROW(ann, cap, na + 1);
            ann[na++] = i;
        }
    tl_sort_rows(ann, na, ann_ts_cmp, (void *)t);
    env->annot = tl_xcalloc(t->nev ? t->nev : 1, sizeof *env->annot);
    /* names are interned: the filter test once per distinct name */
    tl_kmap seen;
    tl_kmap_init(&seen);
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        int created;
        tl_kmap_slot *sl = tl_kmap_put(&seen, (int64_t)(uintptr_t)e->name, 0, 0, &created);
        if (created) {
            sl->val = 0;
            for (size_t f = 0; f < sizeof annot_filters / sizeof *annot_filters && !sl->val; f++)
                sl->val = strncmp(e->name, annot_filters[f], strlen(annot_filters[f])) == 0;
        }
        if (!sl->val)
            continue;
        env->annot[i] = "NA";
        for (size_t k = 0; k < na; k++) {
            const tl_tev *a = &t->ev[ann[k]];
            if (a->ts <= e->ts && e->ts + e->dur < a->ts + a->dur) {
                env->annot[i] = a->name;
                break;
            }
        }
    }
    tl_kmap_free(&seen);
    free(ann);
}

void tl_pm_env_free(pm_env *env)
{
    free(env->annot);
    tl_pv_pool_free(&env->pool);
    free(env->cached);
    free(env->rmodel);
    tl_kmap_free(&env->argmap);
    free(env->args);
    free(env->rows);
    free(env->rcs);
    free(env->comm);
    free(env->fwd);
    free(env->bwd0);
    free(env->bwdn);
    free(env->bwd);
    free(env->stack);
    free(env->gpu);
    free(env->iv);
}

int tl_pm_has_bwd_link(const pm_env *env, uint32_t ev) { return env->bwdn && env->bwdn[ev] > 0; }

void tl_pm_subtree_gpu(pm_env *env, uint32_t ev, uint32_t **out, size_t *n, size_t *cap)
{
    const tl_trace *t = env->t;
    /* depth first through the children in order: a stack of pending children, pushed
     * in reverse */
    size_t sp = 0;
    const uint32_t *ch = tl_tev_children(t, ev);
    for (uint32_t k = t->ev[ev].nchild; k-- > 0;) {
        TL_GROW(env->stack, env->stackcap, sp + 1);
        env->stack[sp++] = ch[k];
    }
    while (sp) {
        uint32_t x = env->stack[--sp];
        if (tl_tev_is_gpu(&t->ev[x])) {
            TL_GROW(*out, *cap, *n + 1);
            (*out)[(*n)++] = x;
            continue;
        }
        const uint32_t *c2 = tl_tev_children(t, x);
        for (uint32_t k = t->ev[x].nchild; k-- > 0;) {
            TL_GROW(env->stack, env->stackcap, sp + 1);
            env->stack[sp++] = c2[k];
        }
    }
}

static int dbl_pair_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

int tl_pm_busy_int(const pm_env *env, const uint32_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!tl_tev_times_int(&env->t->ev[idx[i]]))
            return 0;
    return 1;
}

double tl_pm_busy(pm_env *env, const uint32_t *idx, size_t n)
{
    if (n == 0)
        return 0;
    TL_GROW(env->iv, env->ivcap, 2 * n);
    for (size_t i = 0; i < n; i++) {
        env->iv[2 * i] = env->t->ev[idx[i]].ts;
        env->iv[2 * i + 1] = tl_tev_end(&env->t->ev[idx[i]]);
    }
    /* the order among equal starts does not change the union */
    qsort(env->iv, n, 2 * sizeof(double), dbl_pair_cmp);
    double s = env->iv[0], e = env->iv[1], sum = 0;
    for (size_t i = 1; i < n; i++) {
        double a = env->iv[2 * i], b = env->iv[2 * i + 1];
        if (a <= e) {
            if (b > e)
                e = b;
        } else {
            sum += e - s;
            s = a;
            e = b;
        }
    }
    return sum + (e - s);
}

/* ---- which events have a model ------------------------------------------------------- */

static int triton_name(const char *n)
{
    return strncmp(n, "triton_poi_", 11) == 0 || strncmp(n, "triton_red_", 11) == 0 || strncmp(n, "triton_per_", 11) == 0;
}

/* Python's int(text) succeeds. */
static int reads_int(const tl_pv *v, int64_t *out)
{
    if (!v || v->kind != TL_PV_STR || v->n == 0 || v->n > 40)
        return 0;
    char b[48];
    memcpy(b, v->u.s, v->n);
    b[v->n] = 0;
    char *e;
    errno = 0;
    const char *s = b;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return 0;
    long long x = strtoll(s, &e, 10);
    while (isspace((unsigned char)*e))
        e++;
    if (*e || e == s || errno)
        return 0;
    if (out)
        *out = x;
    return 1;
}

/* The integer scalars of a Triton kernel's Concrete Inputs (PERF.md §4.9), in order. */
size_t tl_pm_triton_scalars(const tl_pv *C, int64_t *out, size_t cap);
size_t tl_pm_triton_scalars(const tl_pv *C, int64_t *out, size_t cap)
{
    size_t n = 0;
    if (!tl_pv_is_seq(C))
        return 0;
    for (uint32_t i = 0; i < C->n; i++) {
        int64_t x;
        if (reads_int(&C->u.items[i], &x)) {
            if (n < cap)
                out[n] = x;
            n++;
        }
    }
    return n;
}

const char *tl_pm_model_of(pm_env *env, uint32_t ev)
{
    const tl_tev *e = &env->t->ev[ev];
    const pm_op *op = tl_pm_op_find(e->name);
    if (op)
        return op->model;
    if (e->kind != TL_TEV_CPU_OP || !triton_name(e->name))
        return NULL;
    tl_pv_pool_reset(&env->pool);
    const tl_tev_aux *ax = tl_tev_x(env->t, e);
    const tl_pv *C = tl_pv_parse(&env->pool, ax->args->concrete_inputs);
    const tl_pv *D = tl_pv_parse(&env->pool, ax->args->input_dims);
    const tl_pv *T = tl_pv_parse(&env->pool, ax->args->input_type);
    if (!tl_pv_is_seq(C) || !C->n || !tl_pv_is_seq(D) || !D->n || !tl_pv_is_seq(T) || !T->n)
        return NULL;
    int64_t x;
    return tl_pm_triton_scalars(C, &x, 1) ? "TritonCompiled" : NULL;
}

/* ---- one row --------------------------------------------------------------------------- */

static void ptext_of(pm_env *env, const tl_pv *v, pm_ptext *p, tl_buf *b)
{
    p->cls = v->kind == TL_PV_INT ? PT_INT : v->kind == TL_PV_FLOAT ? PT_FLOAT : v->kind == TL_PV_BOOL ? PT_BOOL : v->kind == TL_PV_NONE ? PT_NONE : PT_OTHER;
    p->i = v->u.i;
    p->f = v->kind == TL_PV_FLOAT ? v->u.f : v->kind == TL_PV_INT ? (double)v->u.i : NAN;
    tl_buf_clear(b);
    tl_pv_repr(b, v);
    p->repr = tl_arena_strndup(env->arena, b->data ? b->data : "", b->len);
    p->text = v->kind == TL_PV_STR ? tl_arena_strndup(env->arena, v->u.s, v->n) : p->repr;
}


static int eval(pm_env *env, uint32_t ev, const pm_family *fam, const char *model, int bwd, pm_row *row);

int tl_pm_eval(pm_env *env, uint32_t ev, const char *model, int bwd, pm_row *row)
{
    const tl_trace *t = env->t;
    const tl_tev *e = &t->ev[ev];
    /* forward rows are asked for twice (the sheet, unified_perf_summary): made once, and
     * found again first (asked for the model they were made for, nothing below can say
     * otherwise) */
    uint32_t k = !bwd && env->cached ? env->cached[ev] : 0;
    if (k && env->rmodel[k - 1] == model) {
        *row = env->rows[k - 1];
        return env->rcs[k - 1];
    }
    memset(row, 0, sizeof *row);
    row->ev = ev;
    row->name = e->name;
    const pm_family *fam = tl_pm_family_find(model);
    if (!fam)
        return PM_FAIL; /* tier 3: a model without an estimate */
    if (!tl_tev_x(t, e)->has_args)
        return PM_FAIL;
    /* a backward row needs a backward link of the event's own (§3.3): known before any
     * work, and most events have none */
    if (bwd && !tl_pm_has_bwd_link(env, ev))
        return PM_FAIL;
    if (k) {
        *row = env->rows[k - 1];
        return env->rcs[k - 1];
    }
    int rc = eval(env, ev, fam, model, bwd, row);
    if (!bwd) {
        size_t cap = env->rowcap;
        if (!env->cached) {
            env->cached = tl_xcalloc_dense(t->nev, sizeof *env->cached);
            /* a row per CPU op at most: room made once, its pages mapped as it fills */
            TL_GROW(env->rows, env->rowcap, t->ncpu_ops ? t->ncpu_ops : 1);
        }
        TL_GROW_AHEAD(env->rows, env->rowcap, env->ncache + 1, env->rows_mapped);
        if (env->rowcap != cap) {
            env->rcs = tl_xrealloc(env->rcs, env->rowcap * sizeof *env->rcs);
            env->rmodel = tl_xrealloc(env->rmodel, env->rowcap * sizeof *env->rmodel);
        }
        env->rows[env->ncache] = *row;
        env->rcs[env->ncache] = (uint8_t)rc;
        env->rmodel[env->ncache] = model;
        env->cached[ev] = (uint32_t)++env->ncache;
    }
    return rc;
}

/* The family's verdict on event ev's arguments, looked up or made (see eval). */
static const argres *family_eval(pm_env *env, uint32_t ev, const pm_family *fam, const char *model, int bwd,
                                 const uint32_t *kern, size_t ng)
{
    const tl_trace *t = env->t;
    const tl_tev *e = &t->ev[ev];
    const tl_tev_aux *ax = tl_tev_x(t, e);
    const char *otype = ax->args->output_type;
    const char *annot = env->annot ? env->annot[ev] : NULL;
    /* GEMM's transposes come from a kernel name (interned, so its pointer says it) */
    const void *key[10] = {fam, bwd ? "b" : "f", e->name, ax->args->input_dims, ax->args->input_type, ax->args->input_strides,
                           ax->args->concrete_inputs, otype, annot,
                           tl_pm_family_key_kernel(fam, t, kern, ng)};
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < 10; k++)
        h = (h ^ (uint64_t)(uintptr_t)key[k]) * 0x100000001b3ULL, h ^= h >> 29;
    tl_kmap_slot *sl = NULL;
    for (int64_t probe = 0;; probe++) {
        int created;
        sl = tl_kmap_put(&env->argmap, (int64_t)h, probe, 1, &created);
        if (created)
            break;
        const argres *x = &env->args[sl->val];
        if (memcmp(x->key, key, sizeof key) == 0)
            return x;
    }
    TL_GROW(env->args, env->argcap, env->nargs + 1);
    sl->val = (uint32_t)env->nargs;
    argres *r = &env->args[env->nargs++];
    memset(r, 0, sizeof *r);
    memcpy(r->key, key, sizeof key);
    tl_pv_pool_reset(&env->pool);
    pm_ctx c;
    memset(&c, 0, sizeof c);
    c.pool = &env->pool;
    c.t = t;
    c.ev = ev;
    c.name = e->name;
    c.model = model;
    c.bwd = bwd;
    if (e->kind == TL_TEV_CPU_OP) {
        c.D = tl_pv_parse(c.pool, ax->args->input_dims);
        c.T = tl_pv_parse(c.pool, ax->args->input_type);
        c.S = tl_pv_parse(c.pool, ax->args->input_strides);
        c.C = fam->reads_c ? tl_pv_parse(c.pool, ax->args->concrete_inputs) : NULL;
        c.out_type = tl_pv_parse(c.pool, ax->args->output_type);
    }
    c.kern = kern;
    c.nkern = ng;
    c.annotation = annot;
    int rc = fam->eval(&c);
    if (rc == PM_OK && (!isfinite(c.flops) || (!c.bytes_none && !isfinite(c.bytes))))
        rc = PM_FAIL;
    r->rc = (uint8_t)rc;
    if (rc != PM_OK)
        return r;
    r->flops = c.flops;
    r->bytes = c.bytes;
    r->bytes_none = c.bytes_none;
    const char *prec = c.prec_as_is ? c.prec_as_is : tl_pm_precision(c.prec);
    r->spec = !prec ? "" : c.prec_as_is ? tl_arena_printf(env->arena, "%s_%s", fam->maf, prec) : spec_of(fam->maf, prec);

    /* parameters */
    r->npar = c.npar;
    r->par = c.npar ? tl_arena_alloc(env->arena, c.npar * sizeof *r->par) : NULL;
    tl_buf b = {0};
    for (size_t i = 0; i < c.npar; i++) {
        r->par[i].name = c.par[i].name;
        ptext_of(env, c.par[i].v, &r->par[i], &b);
    }
    tl_buf_free(&b);
    return r;
}

static int eval(pm_env *env, uint32_t ev, const pm_family *fam, const char *model, int bwd, pm_row *row)
{
    const tl_trace *t = env->t;

    /* GPU events (§3.1) */
    size_t ng = 0;
    if (!bwd) {
        tl_pm_subtree_gpu(env, ev, &env->gpu, &ng, &env->gpucap);
    } else if (env->bwdn) {
        /* the backward set: ev's and its subtree's backward events, each once */
        size_t sp = 0;
        TL_GROW(env->stack, env->stackcap, 1);
        uint32_t *set = NULL;
        size_t nset = 0, setcap = 0;
        uint32_t *todo = NULL;
        size_t ntodo = 0, todocap = 0;
        TL_GROW(todo, todocap, 1);
        todo[ntodo++] = ev;
        while (ntodo) {
            uint32_t x = todo[--ntodo];
            for (uint32_t k = 0; k < env->bwdn[x]; k++) {
                uint32_t b = env->bwd[env->bwd0[x] + k];
                int dup = 0;
                for (size_t q = 0; q < nset && !dup; q++)
                    dup = set[q] == b;
                if (!dup) {
                    TL_GROW(set, setcap, nset + 1);
                    set[nset++] = b;
                }
            }
            const uint32_t *ch = tl_tev_children(t, x);
            for (uint32_t k = 0; k < t->ev[x].nchild; k++) {
                if (tl_tev_is_gpu(&t->ev[ch[k]]))
                    continue;
                TL_GROW(todo, todocap, ntodo + 1);
                todo[ntodo++] = ch[k];
            }
        }
        for (size_t q = 0; q < nset; q++)
            tl_pm_subtree_gpu(env, set[q], &env->gpu, &ng, &env->gpucap);
        (void)sp;
        free(set);
        free(todo);
    }
    /* kernels stably by ts (§3.2) */
    uint32_t *kern = ng ? tl_arena_alloc(env->arena, ng * sizeof *kern) : NULL;
    if (ng) {
        memcpy(kern, env->gpu, ng * sizeof *kern);
        if (ng > 1) {
            tl_sort_item *it = tl_xmalloc(ng * sizeof *it);
            for (size_t i = 0; i < ng; i++) {
                it[i].key = tl_sort_key_double(t->ev[kern[i]].ts);
                it[i].row = kern[i];
            }
            tl_sort_items(it, ng, NULL); /* stable */
            for (size_t i = 0; i < ng; i++)
                kern[i] = it[i].row;
            free(it);
        }
    }
    row->kern = kern;
    row->nkern = ng;
    row->kt = tl_pm_busy(env, kern, ng);
    row->kt_int = tl_pm_busy_int(env, kern, ng);

    /* the family (§3.3): its verdict, parameters, flops and bytes depend only on the
     * arguments (GEMM's transpose also on the kernel names), and events with the same
     * interned argument texts are common: made once per distinct arguments */
    const argres *ar = family_eval(env, ev, fam, model, bwd, kern, ng);
    if (ar->rc != PM_OK)
        return ar->rc;
    /* metrics (§3.4) */
    double kt = row->kt;
    row->gflops = ar->flops / 1e9;
    row->tflops = kt == 0 ? NAN : (row->gflops / 1e3) / (kt / 1e6);
    if (ar->bytes_none) {
        row->mb = row->fpb = row->tbs = NAN;
    } else {
        row->mb = ar->bytes / (1024.0 * 1024.0);
        row->fpb = ar->bytes == 0 ? NAN : (row->gflops * 1e9) / ar->bytes;
        row->tbs = kt == 0 ? NAN : (ar->bytes / 1e12) / (kt / 1e6);
    }
    /* Compute Spec (§3.5) */
    row->spec = ar->spec;
    /* roofline (§8) */
    row->roof_time = row->pct_roof = NAN;
    if (env->arch && *row->spec && !ar->bytes_none && row->gflops > 0) {
        double peak = tl_gpu_arch_peak(env->arch, row->spec), bw = env->arch->mem_bw_gbps;
        if (!isnan(peak) && !isnan(bw)) {
            double cu = (row->gflops * 1e9 / (peak * 1e12)) * 1e6, mu = (ar->bytes / (bw * 1e9)) * 1e6;
            row->roof_time = cu >= mu ? cu : mu;
            row->roof_bound = cu >= mu ? "COMPUTE_BOUND" : "MEMORY_BOUND";
            row->pct_roof = kt == 0 ? NAN : row->roof_time / kt * 100;
        }
    }
    row->par = ar->par;
    row->npar = ar->npar;
    return PM_OK;
}
