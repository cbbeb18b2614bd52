/*
 * unified.c - unified_perf_summary (PERF.md §7): the ops that account for the GPU time
 * (every op with a perf model, else the leaf launcher), the synthetic ops for kernels
 * nobody claims, and their summary grouped on the op's identity.
 */
#include "perf/perf_eval.h"

#include "base/hash.h"
#include "base/sort.h"
#include "trace/jscan.h"
#include "trace/opcat.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row of the summary before grouping: a trace has hundreds of thousands, so the
 * metrics of a modelled one are not copied in but referred to - the evaluation's cached
 * forward row (env->rows), or a backward row kept beside the rows (UROW_BWD). */
#define UROW_BWD 0x80000000u
typedef struct urow {
    const char *name;
    const char *cat;
    const uint32_t *kern; /* kernel_details: gpu_events in link order */
    size_t nkern;
    /* with Python functions: each kernel's call stack (the walk's frames down to the
     * event, then those from the event down to the kernel), as names and as the text
     * kernel_details_summary shows; NULL for a synthetic op */
    const char ***kcs;
    size_t *nkcs;
    double kt;
    uint32_t ev;          /* the event (for a synthetic op: its R or P) */
    uint32_t uid;
    uint32_t synth_kernel;
    uint32_t m;           /* modelled: its metrics, env->rows[m] or (UROW_BWD | i) the i-th backward row */
    uint8_t has_model;
    uint8_t modelled;     /* the metrics come from a successful evaluation */
    uint8_t kt_int;       /* kt is a Python int (TRACES.md §4.6) */
} urow;

/* The backward rows the summary's rows refer to (a forward row is the evaluation's). */
typedef struct ubwd {
    pm_row *rows;
    size_t n, cap;
} ubwd;

/* The metrics of modelled row w. */
static const pm_row *metrics(const pm_env *env, const ubwd *bwd, const urow *w)
{
    return w->m & UROW_BWD ? &bwd->rows[w->m & ~UROW_BWD] : &env->rows[w->m];
}

typedef struct U {
    pm_env *env;
    const tl_trace *t;
    /* per event, a byte each (a trace has millions): U_VISITED and U_DESC, and its model
     * once asked (model_ix: 0 not yet, else 1 + its index in models, NULL among them) */
    uint8_t *mark, *model_ix;
    const char *models[255];
    size_t nmodels;
    uint32_t *first_kernel;   /* per event: its earliest direct kernel as a launcher */
    uint32_t *collected;
    size_t ncollected, ccap;
    uint32_t *sole_f;         /* per collected: F of a sole backward op, or TL_TEV_NONE */
    /* Python functions in the tree (the inference generator's): every category is walked,
     * and each collected event keeps the call stack of its walk (csn nodes: an event and
     * the node above it; coll_cs per collected, UINT32_MAX for none) */
    int python;
    uint32_t *cs_ev, *cs_up;
    size_t ncs, cscap;
    uint32_t *coll_cs;
    const char **csname; /* per event: its call-stack name, made once */
    ubwd bwd;            /* the rows' backward metrics */
} U;

enum { U_VISITED = 1, U_DESC = 2 };

/* The model of event ev, asked once: the models are a few names from the op table, so an
 * event keeps a byte; were there more than a byte can tell, the rest are asked again. */
static const char *model_of(U *u, uint32_t ev)
{
    uint8_t ix = u->model_ix[ev];
    if (ix)
        return u->models[ix - 1];
    const char *m = tl_pm_model_of(u->env, ev);
    size_t k = 0;
    while (k < u->nmodels && u->models[k] != m)
        k++;
    if (k == u->nmodels && k < sizeof u->models / sizeof *u->models)
        u->models[u->nmodels++] = m;
    if (k < u->nmodels)
        u->model_ix[ev] = (uint8_t)(k + 1);
    return m;
}

static int is_cpu(const tl_trace *t, uint32_t i) { return t->ev[i].kind == TL_TEV_CPU_OP; }

/* §7.1 step 5: a leaf (a GPU event below, directly or through cuda_runtime or Python
 * function events, ten levels at most; the first GPU child or leaf child decides). */
static int is_leaf(const tl_trace *t, uint32_t e, int depth)
{
    if (depth >= 10)
        return 0;
    const uint32_t *ch = tl_tev_children(t, e);
    for (uint32_t k = 0; k < t->ev[e].nchild; k++) {
        const tl_tev *c = &t->ev[ch[k]];
        if (tl_tev_is_gpu(c))
            return 1;
        if (((c->kind == TL_TEV_RUNTIME && !tl_tev_x(t, c)->is_driver) || c->kind == TL_TEV_PYTHON) &&
            is_leaf(t, ch[k], depth + 1))
            return 1;
    }
    return 0;
}

/* §7.2: E is a sole backward op; its F, or TL_TEV_NONE. */
static uint32_t sole_backward(U *u, uint32_t e)
{
    pm_env *env = u->env;
    const tl_trace *t = u->t;
    if (!env->fwd)
        return TL_TEV_NONE;
    uint32_t w = t->ev[e].parent;
    for (int k = 0; k < 5 && w != TL_TEV_NONE; k++, w = t->ev[w].parent) {
        uint32_t f = env->fwd[w];
        if (f == TL_TEV_NONE)
            continue;
        const char *model = model_of(u, f);
        if (!model)
            return TL_TEV_NONE;
        const char *m = strstr(t->ev[w].name, ": ");
        if (m)
            m += 2;
        /* the cpu_ops below W through cpu_op children, with GPU events and the name */
        size_t count = 0;
        uint32_t only = TL_TEV_NONE;
        uint32_t *todo = NULL;
        size_t nt = 0, cap = 0;
        const uint32_t *ch = tl_tev_children(t, w);
        for (uint32_t q = 0; q < t->ev[w].nchild; q++)
            if (is_cpu(t, ch[q])) {
                TL_GROW(todo, cap, nt + 1);
                todo[nt++] = ch[q];
            }
        while (nt) {
            uint32_t x = todo[--nt];
            if (t->ev[x].ngpu && (!m || strcmp(t->ev[x].name, m) == 0)) {
                count++;
                only = x;
            }
            const uint32_t *c2 = tl_tev_children(t, x);
            for (uint32_t q = 0; q < t->ev[x].nchild; q++)
                if (is_cpu(t, c2[q])) {
                    TL_GROW(todo, cap, nt + 1);
                    todo[nt++] = c2[q];
                }
        }
        free(todo);
        if (count != 1 || only != e || !tl_pm_bwd_category(model))
            return TL_TEV_NONE;
        pm_row r;
        if (tl_pm_eval(env, f, model, 1, &r) != PM_OK)
            return TL_TEV_NONE;
        return f;
    }
    return TL_TEV_NONE;
}

static void collect(U *u, uint32_t e, uint32_t f, uint32_t cs)
{
    TL_GROW(u->collected, u->ccap, u->ncollected + 1);
    u->collected[u->ncollected] = e;
    u->sole_f = tl_xrealloc(u->sole_f, u->ccap * sizeof *u->sole_f);
    u->coll_cs = tl_xrealloc(u->coll_cs, u->ccap * sizeof *u->coll_cs);
    u->coll_cs[u->ncollected] = cs;
    u->sole_f[u->ncollected++] = f;
}

/* The reference's call-stack frames: nn.Module frames, ops (`::`), file frames (`/`)
 * and cpu_ops. */
static int cs_frame(const tl_tev *e)
{
    return e->kind == TL_TEV_CPU_OP || strstr(e->name, "nn.Module") || strstr(e->name, "::") || strchr(e->name, '/');
}

static void push(uint32_t **st, size_t *sp, size_t *cap, uint32_t e, uint32_t cs)
{
    TL_GROW(*st, *cap, *sp + 2);
    (*st)[(*sp)++] = e;
    (*st)[(*sp)++] = cs;
}

static void traverse_from(U *u, uint32_t root, uint32_t **stp, size_t *capp)
{
    const tl_trace *t = u->t;
    uint32_t *st = *stp;
    size_t sp = 0, cap = *capp;
    push(&st, &sp, &cap, root, UINT32_MAX);
    while (sp) {
        uint32_t cs = st[--sp], e = st[--sp];
        if (u->mark[e] & U_VISITED)
            continue;
        u->mark[e] |= U_VISITED;
        const tl_tev *ev = &t->ev[e];
        if (u->python && cs_frame(ev)) {
            TL_GROW(u->cs_ev, u->cscap, u->ncs + 1);
            u->cs_up = tl_xrealloc(u->cs_up, u->cscap * sizeof *u->cs_up);
            u->cs_ev[u->ncs] = e;
            u->cs_up[u->ncs] = cs;
            cs = (uint32_t)u->ncs++;
        }
        if ((!u->python && ev->kind != TL_TEV_CPU_OP) || ev->ngpu == 0)
            continue;
        const uint32_t *ch = tl_tev_children(t, e);
        int push_children = 0;
        if (model_of(u, e)) {
            collect(u, e, TL_TEV_NONE, cs);
            continue;
        }
        uint32_t f = sole_backward(u, e);
        if (f != TL_TEV_NONE) {
            if (u->mark[e] & U_DESC)
                push_children = 1;
            else
                collect(u, e, f, cs);
        } else if (u->mark[e] & U_DESC) {
            push_children = 1;
        } else if (is_cpu(t, e) && is_leaf(t, e, 0)) {
            int any = 0;
            for (uint32_t k = 0; k < ev->nchild && !any; k++)
                any = is_cpu(t, ch[k]) && t->ev[ch[k]].ngpu && model_of(u, ch[k]);
            if (any) {
                for (uint32_t k = ev->nchild; k-- > 0;)
                    if (is_cpu(t, ch[k]) && t->ev[ch[k]].ngpu && model_of(u, ch[k]))
                        push(&st, &sp, &cap, ch[k], cs);
                continue;
            }
            const uint32_t *g = tl_tev_gpu(t, e);
            int comm = 0;
            for (uint32_t k = 0; k < ev->ngpu && !comm; k++)
                comm = u->env->comm[g[k]];
            if (!comm)
                collect(u, e, TL_TEV_NONE, cs);
            continue;
        } else {
            push_children = 1;
        }
        if (push_children)
            for (uint32_t k = ev->nchild; k-- > 0;)
                push(&st, &sp, &cap, ch[k], cs);
    }
    *stp = st;
    *capp = cap;
}

static void traverse(U *u)
{
    const tl_trace *t = u->t;
    uint32_t *st = NULL;
    size_t cap = 0;
    /* with Python functions, the top-level frames holding GPU work first */
    if (u->python)
        for (size_t i = 0; i < t->nev; i++)
            if (t->ev[i].kind == TL_TEV_PYTHON && t->ev[i].parent == TL_TEV_NONE && (t->ev[i].flags & TL_TEV_IN_TREE) &&
                t->ev[i].ngpu)
                traverse_from(u, (uint32_t)i, &st, &cap);
    for (size_t ri = 0; ri < t->nroots; ri++)
        traverse_from(u, t->roots[ri], &st, &cap);
    free(st);
}

/* desc[e]: a cpu_op strictly below e, through cpu_ops and Python frames only, has a model
 * and GPU events. */
static void mark_descendants(U *u)
{
    const tl_trace *t = u->t;
    for (size_t i = 0; i < t->nev; i++) {
        if (!is_cpu(t, (uint32_t)i) || !t->ev[i].ngpu || !(t->ev[i].flags & TL_TEV_IN_TREE) || !model_of(u, (uint32_t)i))
            continue;
        /* up through cpu_ops and Python frames; the first other ancestor is marked too
         * (its child leads here) but passes nothing on */
        for (uint32_t p = t->ev[i].parent; p != TL_TEV_NONE && !(u->mark[p] & U_DESC); p = t->ev[p].parent) {
            u->mark[p] |= U_DESC;
            if (!is_cpu(t, p) && t->ev[p].kind != TL_TEV_PYTHON)
                break;
        }
    }
}

/* Each event's earliest direct kernel as a launcher (TRACES.md §2's attribution). */
static void launcher_kernels(U *u)
{
    const tl_trace *t = u->t;
    for (size_t i = 0; i < t->nev; i++)
        u->first_kernel[i] = TL_TEV_NONE;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *g = &t->ev[i];
        if (!tl_tev_is_gpu(g) || !(g->flags & TL_TEV_LINKED) || u->env->comm[i])
            continue;
        uint32_t r = g->parent, who = r;
        for (uint32_t cur = t->ev[r].parent; cur != TL_TEV_NONE;) {
            const tl_tev *c = &t->ev[cur];
            if (c->kind != TL_TEV_CPU_OP)
                break;
            if (strcmp(c->name, "execute") == 0) {
                cur = c->parent;
                continue;
            }
            who = cur;
            break;
        }
        uint32_t *fk = &u->first_kernel[who];
        if (*fk == TL_TEV_NONE || g->ts < t->ev[*fk].ts)
            *fk = (uint32_t)i;
    }
}

/* ---- the summary ------------------------------------------------------------------------- */

typedef struct ugrp {
    size_t *rows;
    size_t n, cap;
    double ktsum;
    uint32_t uid;
} ugrp;

static int ugrp_cmp(size_t a, size_t b, void *ctx)
{
    const ugrp *g = ctx;
    if (g[a].ktsum != g[b].ktsum)
        return g[a].ktsum > g[b].ktsum ? -1 : 1;
    return g[a].uid < g[b].uid ? -1 : g[a].uid > g[b].uid ? 1 : 0;
}

static tl_cell *add_col(tl_table *t, const char *name)
{
    size_t c = tl_table_add_column(t, name);
    return t->cols[c].cells;
}

static tl_cell fcell(double v) { return isnan(v) ? tl_cell_missing() : tl_cell_float(v); }
/* a time column's cell: an int when the column is int64 in the reference */
static tl_cell tcell(double v, int ints) { return isnan(v) ? tl_cell_missing() : tl_trace_time_cell(v, ints); }
static tl_cell scell(const char *s) { return s ? tl_cell_str(s) : tl_cell_missing(); }

static const char *params_text(pm_env *env, const pm_row *m)
{
    if (!m->npar)
        return NULL;
    tl_buf b = {0};
    tl_buf_addc(&b, '{');
    for (size_t i = 0; i < m->npar; i++) {
        if (i)
            tl_buf_add(&b, ", ", 2);
        tl_buf_addc(&b, '\'');
        tl_buf_adds(&b, m->par[i].name);
        tl_buf_add(&b, "': ", 3);
        tl_buf_adds(&b, m->par[i].repr);
    }
    tl_buf_addc(&b, '}');
    const char *s = tl_arena_strndup(env->arena, b.data, b.len);
    tl_buf_free(&b);
    return s;
}

/* A frame's name as the reference's call stacks write it: every `_<digits>` removed. */
static const char *cs_name(tl_arena *a, const char *name)
{
    size_t n = strlen(name);
    char *o = tl_arena_alloc(a, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '_' && name[i + 1] >= '0' && name[i + 1] <= '9') {
            i++;
            while (name[i + 1] >= '0' && name[i + 1] <= '9')
                i++;
            continue;
        }
        o[k++] = name[i];
    }
    o[k] = 0;
    return o;
}

/* Python's repr of a list of strings, appended to b. */
static void list_repr(tl_buf *b, const char *const *v, size_t n)
{
    tl_buf_addc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            tl_buf_add(b, ", ", 2);
        tl_py_str_repr(b, v[i], strlen(v[i]));
    }
    tl_buf_addc(b, ']');
}

/* Event i's name as the call stacks write it (made once per event). */
static const char *cs_name_of(U *u, uint32_t i)
{
    if (!u->csname[i])
        u->csname[i] = cs_name(u->env->arena, u->t->ev[i].name);
    return u->csname[i];
}

/* The call stacks of row r's kernels (the collected event e, its walk's node cs) as
 * names; their texts are made for the rows a summary shows (row_call_stack_texts). */
static void kernel_call_stacks(U *u, urow *r, uint32_t e, uint32_t cs)
{
    const tl_trace *t = u->t;
    tl_arena *a = u->env->arena;
    size_t nbase = 0;
    for (uint32_t c = cs; c != UINT32_MAX; c = u->cs_up[c])
        nbase++;
    const char **base = tl_xmalloc((nbase ? nbase : 1) * sizeof *base);
    size_t q = nbase;
    for (uint32_t c = cs; c != UINT32_MAX; c = u->cs_up[c])
        base[--q] = cs_name_of(u, u->cs_ev[c]);
    r->kcs = r->nkern ? tl_arena_alloc(a, r->nkern * sizeof *r->kcs) : NULL;
    r->nkcs = r->nkern ? tl_arena_alloc(a, r->nkern * sizeof *r->nkcs) : NULL;
    uint32_t *sfx = NULL;
    size_t scap = 0;
    for (size_t k = 0; k < r->nkern; k++) {
        size_t ns = 0;
        for (uint32_t p = t->ev[r->kern[k]].parent; p != TL_TEV_NONE && p != e; p = t->ev[p].parent)
            if (cs_frame(&t->ev[p])) {
                TL_GROW(sfx, scap, ns + 1);
                sfx[ns++] = p;
            }
        const char **v = tl_arena_alloc(a, (nbase + ns + 1) * sizeof *v);
        memcpy(v, base, nbase * sizeof *v);
        for (size_t i = 0; i < ns; i++)
            v[nbase + i] = cs_name_of(u, sfx[ns - 1 - i]);
        r->kcs[k] = v;
        r->nkcs[k] = nbase + ns;
    }
    free(sfx);
    free(base);
}

/* The ", 'call_stack': [...]" texts of row r's kernels (kernel_details_summary's). */
static const char **row_call_stack_texts(tl_arena *a, const urow *r)
{
    if (!r->kcs)
        return NULL;
    const char **txt = tl_arena_alloc(a, r->nkern * sizeof *txt);
    tl_buf b = {0};
    for (size_t k = 0; k < r->nkern; k++) {
        tl_buf_clear(&b);
        tl_buf_adds(&b, ", 'call_stack': ");
        list_repr(&b, r->kcs[k], r->nkcs[k]);
        txt[k] = tl_arena_strndup(a, b.data, b.len);
    }
    tl_buf_free(&b);
    return txt;
}

/* The reference's dispatch-frame filters for the entry point. */
static const char *const wrapper_files[] = {"torch/_ops.py", "torch/nn/modules/module.py", "torch/utils/_contextlib.py",
                                            "torch/utils/_device.py", "torch/_tensor.py", "torch/functional.py",
                                            "torch/overrides.py", "torch/_inductor/", "torch/_functorch/",
                                            "torch/distributed/c10d_logger.py", "triton/backends/"};
static const char *const wrapper_prefixes[] = {"<built-in", "pybind11_builtins", "nn.Module:"};
static const char *const wrapper_funcs[] = {"__torch_function__", "_call_impl",   "_wrapped_call_impl", "decorate_context",
                                            "dispatch_wrapper",   "handle_torch_function", "wrapper", "custom_wrapper",
                                            "wrapper_custom",     "outer_wrapper"};
#define NOF(a) (sizeof a / sizeof *a)

/* The function name of a "path.py(line): func" frame (after the last "): "), or the frame. */
static const char *frame_func(const char *f)
{
    const char *r = NULL;
    for (const char *p = strstr(f, "): "); p; p = strstr(p + 1, "): "))
        r = p + 3;
    return r ? r : f;
}

static int is_wrapper(const char *f)
{
    for (size_t i = 0; i < NOF(wrapper_prefixes); i++)
        if (strncmp(f, wrapper_prefixes[i], strlen(wrapper_prefixes[i])) == 0)
            return 1;
    for (size_t i = 0; i < NOF(wrapper_files); i++)
        if (strstr(f, wrapper_files[i]))
            return 1;
    if (strstr(f, "): ")) {
        const char *fn = frame_func(f);
        for (size_t i = 0; i < NOF(wrapper_funcs); i++)
            if (strcmp(fn, wrapper_funcs[i]) == 0)
                return 1;
    }
    return 0;
}

/* Lower-cased ASCII copy in the arena. */
static char *lower(tl_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *o = tl_arena_alloc(a, n + 1);
    for (size_t i = 0; i <= n; i++)
        o[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    return o;
}

/* The dispatch entry point of op `name` in the flattened call stack v[0..n). */
static const char *entry_point(tl_arena *a, const char *const *v, size_t n, const char *name)
{
    const char *colon = NULL;
    for (const char *p = strstr(name, "::"); p; p = strstr(p + 2, "::"))
        colon = p + 2;
    const char *local = lower(a, colon ? colon : name);
    size_t at = SIZE_MAX;
    for (size_t i = n; i-- > 0 && at == SIZE_MAX;)
        if (strcmp(v[i], name) == 0)
            at = i;
    if (at == SIZE_MAX) {
        /* a trailing _<digits> stripped */
        size_t len = strlen(name), e = len;
        while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9')
            e--;
        if (e < len && e > 0 && name[e - 1] == '_') {
            char *st = tl_arena_strndup(a, name, e - 1);
            for (size_t i = n; i-- > 0 && at == SIZE_MAX;)
                if (strcmp(v[i], st) == 0)
                    at = i;
        }
    }
    if (at == SIZE_MAX)
        return "Not found";
    for (size_t i = at + 1; i < n; i++)
        if (strstr(v[i], ".py") && strstr(lower(a, strstr(v[i], "): ") ? frame_func(v[i]) : v[i]), local))
            return v[i];
    for (size_t i = at; i-- > 0;)
        if (strstr(v[i], ".py") && !is_wrapper(v[i]))
            return v[i];
    return "Not found";
}

/* call_stack_full and entry_point of a group: its template row w's kernels in the
 * summary's order (sorted), each chain its call stack and the kernel's name; one chain
 * as a list, several as their common prefix and then each distinct tail as a list. */
static void call_stack_full(pm_env *env, const urow *w, const size_t *sorted, const char *name, const char **full,
                            const char **entry)
{
    tl_arena *a = env->arena;
    if (!w || !w->nkern) {
        *full = *entry = "Not found";
        return;
    }
    const tl_trace *t = env->t;
    size_t nk = w->nkern;
    /* chain k: kcs[k] then the kernel's name */
    const char ***ch = tl_xmalloc(nk * sizeof *ch);
    size_t *cn = tl_xmalloc(nk * sizeof *cn);
    for (size_t q = 0; q < nk; q++) {
        /* a synthetic op's kernels have no call stack: the chain is the name alone */
        size_t k = sorted[q], n = w->kcs ? w->nkcs[k] : 0;
        const char **c = tl_arena_alloc(a, (n + 1) * sizeof *c);
        if (n)
            memcpy(c, w->kcs[k], n * sizeof *c);
        c[n] = t->ev[w->kern[k]].name;
        ch[q] = c;
        cn[q] = n + 1;
    }
    tl_buf b = {0};
    const char **flat;
    size_t nflat = 0;
    if (nk == 1) {
        list_repr(&b, ch[0], cn[0]);
        flat = ch[0];
        nflat = cn[0];
    } else {
        size_t minl = SIZE_MAX, pre = 0;
        for (size_t q = 0; q < nk; q++)
            minl = cn[q] < minl ? cn[q] : minl;
        for (; pre < minl; pre++) {
            int same = 1;
            for (size_t q = 1; q < nk && same; q++)
                same = strcmp(ch[q][pre], ch[0][pre]) == 0;
            if (!same)
                break;
        }
        size_t total = 0;
        for (size_t q = 0; q < nk; q++)
            total += cn[q];
        flat = tl_arena_alloc(a, (total + 1) * sizeof *flat);
        tl_buf_addc(&b, '[');
        for (size_t i = 0; i < pre; i++) {
            if (i)
                tl_buf_add(&b, ", ", 2);
            tl_py_str_repr(&b, ch[0][i], strlen(ch[0][i]));
            flat[nflat++] = ch[0][i];
        }
        int any = pre > 0;
        for (size_t q = 0; q < nk; q++) {
            int dup = 0;
            for (size_t p = 0; p < q && !dup; p++) {
                dup = cn[p] == cn[q];
                for (size_t i = pre; i < cn[q] && dup; i++)
                    dup = strcmp(ch[p][i], ch[q][i]) == 0;
            }
            if (dup)
                continue;
            if (any)
                tl_buf_add(&b, ", ", 2);
            any = 1;
            list_repr(&b, ch[q] + pre, cn[q] - pre);
            for (size_t i = pre; i < cn[q]; i++)
                flat[nflat++] = ch[q][i];
        }
        tl_buf_addc(&b, ']');
    }
    *full = tl_arena_strndup(a, b.data, b.len);
    *entry = entry_point(a, flat, nflat, name);
    tl_buf_free(&b);
    free(ch);
    free(cn);
}

/* ---- the rows ---- */

/* The rows of the collected events (u->collected), appended to *rows; marks the kernels
 * they cover in cov. */
static void collected_rows(U *u, pm_env *env, uint8_t *cov, urow **prows, size_t *pnr, size_t *prcap)
{
    const tl_trace *t = env->t;
    urow *rows = *prows;
    size_t nr = *pnr, rcap = *prcap, mapped = 0;
    /* a row per collected event at most: room for all at once, each row made in place */
    TL_GROW(rows, rcap, nr + u->ncollected);
    for (size_t i = 0; i < u->ncollected; i++) {
        if (TL_TRACE_CANCEL_EVERY(i, t, NULL))
            break; /* the rows so far make a table the caller drops */
        uint32_t e = u->collected[i];
        const tl_tev *ev = &t->ev[e];
        tl_populate_ahead(rows, rcap * sizeof *rows, (nr + 1) * sizeof *rows, &mapped);
        urow *r = &rows[nr];
        memset(r, 0, sizeof *r);
        r->ev = e;
        r->name = ev->name;
        r->uid = ev->uid;
        r->kern = tl_tev_gpu(t, e);
        r->nkern = ev->ngpu;
        r->synth_kernel = TL_TEV_NONE;
        const char *model = model_of(u, e);
        uint32_t fk = u->first_kernel[e];
        r->cat = tl_trace_op_category(ev->name, fk == TL_TEV_NONE ? NULL : t->ev[fk].name);
        pm_row m;
        if (model) {
            r->has_model = 1;
            int rc = tl_pm_eval(env, e, model, 0, &m);
            if (rc == PM_NOT_MODELLED)
                continue; /* no row: the next one is made in its place */
            r->modelled = rc == PM_OK;
            if (r->modelled) /* a forward row evaluated is the evaluation's cached one */
                r->m = env->cached[e] - 1;
        } else if (u->sole_f[i] != TL_TEV_NONE) {
            uint32_t f = u->sole_f[i];
            const char *fm = model_of(u, f);
            r->has_model = 1;
            r->cat = tl_pm_bwd_category(fm);
            r->modelled = tl_pm_eval(env, f, fm, 1, &m) == PM_OK;
            if (r->modelled) {
                TL_GROW(u->bwd.rows, u->bwd.cap, u->bwd.n + 1);
                u->bwd.rows[u->bwd.n] = m;
                r->m = UROW_BWD | (uint32_t)u->bwd.n++;
            }
        }
        r->kt = r->modelled ? m.kt : tl_pm_busy(env, r->kern, r->nkern);
        r->kt_int = (uint8_t)(r->modelled ? m.kt_int : tl_pm_busy_int(env, r->kern, r->nkern));
        if (u->python)
            kernel_call_stacks(u, r, e, u->coll_cs[i]);
        for (size_t k = 0; k < r->nkern; k++)
            cov[r->kern[k]] = 1;
        nr++;
    }
    *prows = rows;
    *pnr = nr;
    *prcap = rcap;
}

/* The synthetic rows of the kernels no row covers: buckets of runtime events, then
 * (P, kernel) pairs; appended to *rows. */
static void synthetic_rows(U *u, pm_env *env, const uint8_t *cov, urow **prows, size_t *pnr, size_t *prcap)
{
    const tl_trace *t = env->t;
    const size_t nev = t->nev;
    urow *rows = *prows;
    size_t nr = *pnr, rcap = *prcap;
    /* the leftover kernels: buckets of runtime events, then (P, kernel) pairs */
    uint32_t *wp = NULL, *wk = NULL, *bucket_of = NULL;
    size_t nw = 0, wcap = 0, wkcap = 0;
    uint32_t *bucket_r = NULL;
    size_t nbr = 0, brcap = 0;
    bucket_of = tl_xmalloc(nev * sizeof *bucket_of);
    for (size_t i = 0; i < nev; i++)
        bucket_of[i] = UINT32_MAX;
    uint32_t **bl = NULL; /* kernels per bucket */
    size_t *bn = NULL, *bc = NULL;
    for (size_t i = 0; i < nev; i++) {
        const tl_tev *g = &t->ev[i];
        if (!tl_tev_is_gpu(g) || cov[i] || env->comm[i] || g->parent == TL_TEV_NONE)
            continue;
        uint32_t p = g->parent;
        while (p != TL_TEV_NONE && !is_cpu(t, p))
            p = t->ev[p].parent;
        if (p != TL_TEV_NONE) {
            TL_GROW(wp, wcap, nw + 1);
            TL_GROW(wk, wkcap, nw + 1);
            wp[nw] = p;
            wk[nw++] = (uint32_t)i;
            continue;
        }
        uint32_t r = g->parent;
        if (bucket_of[r] == UINT32_MAX) {
            TL_GROW(bucket_r, brcap, nbr + 1);
            bl = tl_xrealloc(bl, brcap * sizeof *bl);
            bn = tl_xrealloc(bn, brcap * sizeof *bn);
            bc = tl_xrealloc(bc, brcap * sizeof *bc);
            bl[nbr] = NULL;
            bn[nbr] = bc[nbr] = 0;
            bucket_of[r] = (uint32_t)nbr;
            bucket_r[nbr++] = r;
        }
        size_t b = bucket_of[r];
        TL_GROW(bl[b], bc[b], bn[b] + 1);
        bl[b][bn[b]++] = (uint32_t)i;
    }
    uint32_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t nsrc = pass == 0 ? nbr : nw;
        for (size_t s = 0; s < nsrc; s++) {
            size_t nk = pass == 0 ? bn[s] : 1;
            for (size_t q = 0; q < nk; q++) {
                uint32_t owner = pass == 0 ? bucket_r[s] : wp[s];
                uint32_t *kern = tl_arena_alloc(env->arena, sizeof *kern);
                *kern = pass == 0 ? bl[s][q] : wk[s];
                urow r;
                memset(&r, 0, sizeof r);
                r.ev = owner;
                r.name = tl_arena_printf(env->arena, "%s->%s (Synthetic Op)", t->ev[owner].name, t->ev[*kern].name);
                r.uid = t->nuids + k++;
                uint32_t fk = u->first_kernel[owner];
                r.cat = tl_trace_op_category(r.name, fk == TL_TEV_NONE ? NULL : t->ev[fk].name);
                r.kern = kern;
                r.nkern = 1;
                r.synth_kernel = *kern;
                r.kt = tl_pm_busy(env, kern, 1);
                r.kt_int = (uint8_t)tl_pm_busy_int(env, kern, 1);
                TL_GROW(rows, rcap, nr + 1);
                rows[nr++] = r;
            }
        }
    }
    for (size_t b = 0; b < nbr; b++)
        free(bl[b]);
    free(bl), free(bn), free(bc), free(bucket_r), free(bucket_of), free(wp), free(wk);
    *prows = rows;
    *pnr = nr;
    *prcap = rcap;
}

/* ---- the summary ---- */

/* The nine key columns of row r, as their texts (NULL: missing, "None" in the key). */
static void row_keys(const pm_env *env, const urow *r, const char **kv)
{
    const tl_trace *t = env->t;
    const tl_tev *ev = &t->ev[r->ev];
    int cpu = ev->kind == TL_TEV_CPU_OP;
    const tl_tev_aux *x = tl_tev_x(t, ev);
    kv[0] = r->name;
    kv[1] = r->cat;
    kv[2] = tl_trace_process_name(t, tl_tev_pid(t, ev));
    kv[3] = tl_trace_process_label(t, tl_tev_pid(t, ev));
    kv[4] = tl_trace_thread_name(t, tl_tev_pid(t, ev), tl_tev_tid(t, ev));
    kv[5] = cpu ? x->args->input_dims : NULL;
    kv[6] = cpu ? x->args->input_type : NULL;
    kv[7] = cpu ? x->args->input_strides : NULL;
    kv[8] = cpu ? x->args->concrete_inputs : NULL;
}

/* What a row's keys are made of, as pointers: rows alike in these have the same keys (a
 * thread's names are the trace's, the args interned), so a row's group is found by them,
 * and by the keys' text only for a combination not met before. */
typedef struct row_src {
    const char *name, *cat;
    const tl_op_args *args; /* a cpu_op's; NULL for another event */
    uint64_t thread;
} row_src;
_Static_assert(sizeof(row_src) == 3 * sizeof(void *) + sizeof(uint64_t), "compared as bytes: no padding");

/* Row i's group by the text of its nine key columns, made when it is the first of its
 * keys (its keys then put at 9 * its index in *keys): its index.  by_text: the keys'
 * text -> group + 1. */
static size_t group_by_text(pm_env *env, const urow *rows, size_t i, tl_strmap *by_text, tl_buf *kb, ugrp **g,
                            size_t *ng, size_t *gcap, const char ***keys)
{
    const char *kv[9];
    row_keys(env, &rows[i], kv);
    tl_buf_clear(kb);
    for (int q = 0; q < 9; q++) {
        tl_buf_adds(kb, kv[q] ? kv[q] : "None");
        tl_buf_addc(kb, '\x1f');
    }
    tl_strmap_slot *sl = tl_strmap_get(by_text, tl_buf_cstr(kb));
    if (sl->value == 0) {
        sl->key = tl_arena_strndup(env->arena, kb->data, kb->len);
        TL_GROW(*g, *gcap, *ng + 1);
        *keys = tl_xrealloc(*keys, *gcap * 9 * sizeof **keys);
        memset(&(*g)[*ng], 0, sizeof **g);
        memcpy(*keys + 9 * *ng, kv, sizeof kv);
        (*g)[*ng].uid = rows[i].uid;
        sl->value = ++*ng;
    }
    return sl->value - 1;
}

/* The groups of rows[0..nr) on the text of their nine key columns (keys: 9 a group, for
 * the caller to free), in first-seen order (*ng of them). */
static ugrp *group_keys(pm_env *env, const urow *rows, size_t nr, const char ***keys_out, size_t *ng_out)
{
    const tl_trace *t = env->t;
    const char **keys = NULL;
    tl_strmap by_text = {0};
    tl_bytemap by_src; /* row_src -> group */
    tl_bytemap_init(&by_src, sizeof(row_src));
    ugrp *g = NULL;
    size_t ng = 0, gcap = 0;
    tl_buf kb = {0};
    for (size_t i = 0; i < nr; i++) {
        const tl_tev *ev = &t->ev[rows[i].ev];
        row_src rs = {rows[i].name, rows[i].cat, ev->kind == TL_TEV_CPU_OP ? tl_tev_x(t, ev)->args : NULL,
                      tl_tev_thread(t, ev)};
        int created;
        uint32_t *gv = tl_bytemap_put(&by_src, &rs, &created);
        if (created)
            *gv = (uint32_t)group_by_text(env, rows, i, &by_text, &kb, &g, &ng, &gcap, &keys);
        ugrp *gr = &g[*gv];
        TL_GROW(gr->rows, gr->cap, gr->n + 1);
        gr->rows[gr->n++] = i;
    }
    tl_buf_free(&kb);
    tl_strmap_clear(&by_text);
    tl_bytemap_free(&by_src);
    *keys_out = keys;
    *ng_out = ng;
    return g;
}

enum { A_DUR, A_TBS, A_TFL, A_KT, A_PCT, A_N };

/* Each group's aggregates of duration, TB/s, TFLOPS/s, Kernel Time and Pct Roofline (A_N a
 * group); sets each group's Kernel Time sum, its sort key. */
static pm_agg *aggregate_groups(const pm_env *env, const ubwd *bwd, const urow *rows, size_t nr, ugrp *g, size_t ng)
{
    const tl_trace *t = env->t;
    pm_agg *ag = tl_xcalloc(ng * A_N, sizeof *ag);
    /* each quantity's values of the group, gathered in one pass over its rows (scattered
     * in memory, as their events are) */
    double *v = tl_xmalloc((nr ? nr : 1) * A_N * sizeof *v);
    for (size_t i = 0; i < ng; i++) {
        size_t n = g[i].n;
        for (size_t q = 0; q < n; q++) {
            const urow *r = &rows[g[i].rows[q]];
            v[A_DUR * n + q] = t->ev[r->ev].dur;
            v[A_KT * n + q] = r->kt;
            const pm_row *m = r->modelled ? metrics(env, bwd, r) : NULL;
            v[A_TBS * n + q] = m ? m->tbs : NAN;
            v[A_TFL * n + q] = m ? m->tflops : NAN;
            v[A_PCT * n + q] = m ? m->pct_roof : NAN;
        }
        for (int a = 0; a < A_N; a++)
            tl_pm_aggregate(v + (size_t)a * n, n, &ag[i * A_N + a]);
        g[i].ktsum = ag[i * A_N + A_KT].n ? ag[i * A_N + A_KT].sum : 0.0;
    }
    free(v);
    return ag;
}

/* The summary being made: the rows, their groups in sheet order, the aggregates. */
typedef struct usum {
    pm_env *env;
    const urow *rows;
    size_t nr;
    const ugrp *g;
    size_t ng;
    const size_t *ord;  /* the groups in sheet order */
    const pm_agg *ag;
    const char **keys;  /* the nine key texts of each row */
    int any_metric;     /* some row is modelled: the metric columns */
    int any_roof;       /* some row has a roofline */
    int kt_int, dur_int; /* Kernel Time / the durations are integral in every row */
    tl_table *tb;
    const ubwd *bwd;     /* the rows' backward metrics */
} usum;

/* A new column of the summary. */
static tl_cell *col(const usum *c, const char *name) { return add_col(c->tb, name); }

/* Row r's group (rows are the groups in sheet order). */
static const ugrp *grp(const usum *c, size_t r) { return &c->g[c->ord[r]]; }

/* Row r's aggregates of quantity a (A_DUR ...). */
static const pm_agg *agg(const usum *c, size_t r, int a) { return &c->ag[c->ord[r] * A_N + a]; }

/* A column of one statistic of quantity a, as floats. */
typedef enum { S_MEAN, S_MEDIAN, S_STD, S_MIN, S_MAX } ustat;

static void stat_column(const usum *c, const char *name, int a, ustat s)
{
    tl_cell *x = col(c, name);
    for (size_t r = 0; r < c->ng; r++) {
        const pm_agg *p = agg(c, r, a);
        x[r] = fcell(s == S_MEAN ? p->mean : s == S_MEDIAN ? p->median : s == S_STD ? p->std : s == S_MIN ? p->min : p->max);
    }
}

/* The same for a minimum or maximum of a time, an int where the reference's is. */
static void time_column(const usum *c, const char *name, int a, ustat s, int ints)
{
    tl_cell *x = col(c, name);
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tcell(s == S_MIN ? agg(c, r, a)->min : agg(c, r, a)->max, ints);
}

/* The metrics a group shows from its first modelled row that has them. */
typedef enum { M_GFLOPS, M_MB, M_FPB, M_SPEC, M_BOUND, M_ROOF_TIME, M_PARAMS } umetric;

/* Whether modelled row w has metric m, and then its cell (params_text is only made for
 * a row that has parameters). */
static int row_metric(const usum *c, const urow *w, umetric m, tl_cell *out)
{
    pm_env *env = c->env;
    const pm_row *r = metrics(env, c->bwd, w);
    double v = NAN;
    switch (m) {
    case M_GFLOPS:
        v = r->gflops;
        break;
    case M_MB:
        v = r->mb;
        break;
    case M_FPB:
        v = r->fpb;
        break;
    case M_ROOF_TIME:
        v = r->roof_time;
        break;
    case M_SPEC:
        *out = scell(r->spec);
        return 1;
    case M_BOUND:
        if (!r->roof_bound)
            return 0;
        *out = scell(r->roof_bound);
        return 1;
    case M_PARAMS:
        if (r->npar == 0)
            return 0;
        *out = scell(params_text(env, r));
        return 1;
    }
    if (isnan(v))
        return 0;
    *out = fcell(v);
    return 1;
}

/* A column of metric m: each group's first modelled row that has it, else missing. */
static void first_column(const usum *c, const char *name, umetric m)
{
    tl_cell *x = col(c, name);
    for (size_t r = 0; r < c->ng; r++) {
        const ugrp *gr = grp(c, r);
        x[r] = tl_cell_missing();
        for (size_t q = 0; q < gr->n; q++) {
            const urow *w = &c->rows[gr->rows[q]];
            if (w->modelled && row_metric(c, w, m, &x[r]))
                break;
        }
    }
}

/* The nine keys, ex_UID, the count, the durations' total, mean and std. */
static void key_columns(const usum *c)
{
    static const char *const keyn[9] = {"name",          "op category", "process_name", "process_label", "thread_name",
                                        "Input Dims",    "Input type",  "Input Strides", "Concrete Inputs"};
    for (int q = 0; q < 9; q++) {
        tl_cell *x = col(c, keyn[q]);
        for (size_t r = 0; r < c->ng; r++)
            x[r] = scell(c->keys[9 * c->ord[r] + q]);
    }
    tl_cell *x = col(c, "ex_UID");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_int(grp(c, r)->uid);
    x = col(c, "operation_count");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_int((int64_t)grp(c, r)->n);
    x = col(c, "total_duration_us");
    for (size_t r = 0; r < c->ng; r++) /* pandas' sum over no value (a pseudo op has no CPU time) is 0 */
        x[r] = agg(c, r, A_DUR)->n ? tcell(agg(c, r, A_DUR)->sum, c->dur_int) : tl_cell_float(0.0);
    stat_column(c, "mean_duration_us", A_DUR, S_MEAN);
    stat_column(c, "std_duration_us", A_DUR, S_STD);
}

/* GFLOPS, the bytes, Compute Spec, the roofline bound, the rates' mean and std. */
static void metric_columns(const usum *c)
{
    if (!c->any_metric)
        return;
    first_column(c, "GFLOPS", M_GFLOPS);
    first_column(c, "Data Moved (MB)", M_MB);
    first_column(c, "FLOPS/Byte", M_FPB);
    first_column(c, "Compute Spec", M_SPEC);
    if (c->any_roof)
        first_column(c, "Roofline Bound", M_BOUND);
    stat_column(c, "TB/s_mean", A_TBS, S_MEAN);
    stat_column(c, "TB/s_std", A_TBS, S_STD);
    stat_column(c, "TFLOPS/s_mean", A_TFL, S_MEAN);
    stat_column(c, "TFLOPS/s_std", A_TFL, S_STD);
}

/* Kernel Time and the durations' other statistics, the rates' and the roofline's. */
static void time_columns(const usum *c)
{
    stat_column(c, "Kernel Time (µs)_mean", A_KT, S_MEAN);
    stat_column(c, "Kernel Time (µs)_std", A_KT, S_STD);
    tl_cell *x = col(c, "Kernel Time (µs)_sum");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tcell(grp(c, r)->ktsum, c->kt_int);
    stat_column(c, "duration_us_median", A_DUR, S_MEDIAN);
    time_column(c, "duration_us_min", A_DUR, S_MIN, c->dur_int);
    time_column(c, "duration_us_max", A_DUR, S_MAX, c->dur_int);
    if (c->any_metric) {
        static const char *const sn[3] = {"median", "min", "max"};
        for (int a = A_TBS; a <= A_TFL; a++)
            for (int s = 0; s < 3; s++)
                stat_column(c, tl_arena_printf(c->env->arena, "%s_%s", a == A_TBS ? "TB/s" : "TFLOPS/s", sn[s]), a,
                            s == 0 ? S_MEDIAN : s == 1 ? S_MIN : S_MAX);
        if (c->any_roof) {
            first_column(c, "Roofline Time (µs)_first", M_ROOF_TIME);
            static const char *const pn[5] = {"mean", "median", "std", "min", "max"};
            static const ustat ps[5] = {S_MEAN, S_MEDIAN, S_STD, S_MIN, S_MAX};
            for (int s = 0; s < 5; s++)
                stat_column(c, tl_arena_printf(c->env->arena, "Pct Roofline_%s", pn[s]), A_PCT, ps[s]);
        }
    }
    stat_column(c, "Kernel Time (µs)_median", A_KT, S_MEDIAN);
    time_column(c, "Kernel Time (µs)_min", A_KT, S_MIN, c->kt_int);
    time_column(c, "Kernel Time (µs)_max", A_KT, S_MAX, c->kt_int);
}

/* The kernels' summary and its truncated form; with call stacks, each group's entry
 * point and full call stack into entry[] and full[]. */
static void kernel_summary_columns(const usum *c, const char **entry, const char **full)
{
    pm_env *env = c->env;
    tl_cell *ks = col(c, "kernel_details_summary");
    tl_cell *kt = col(c, "trunc_kernel_details");
    const uint32_t **lists = tl_xmalloc(c->nr * sizeof *lists);
    size_t *lens = tl_xmalloc(c->nr * sizeof *lens);
    const char *const **extra = tl_xmalloc(c->nr * sizeof *extra);
    for (size_t r = 0; r < c->ng; r++) {
        const ugrp *gr = grp(c, r);
        size_t tpl = SIZE_MAX;
        for (size_t q = 0; q < gr->n; q++) {
            const urow *w = &c->rows[gr->rows[q]];
            lists[q] = w->kern;
            lens[q] = w->nkern;
            extra[q] = NULL;
            if (tpl == SIZE_MAX && w->nkern)
                tpl = q;
        }
        /* only the template's kernels are shown */
        if (tpl != SIZE_MAX && !env->call_stack)
            extra[tpl] = row_call_stack_texts(env->arena, &c->rows[gr->rows[tpl]]);
        const char *s, *tr;
        size_t *sorted = tpl == SIZE_MAX ? NULL : tl_xmalloc(lens[tpl] * sizeof *sorted);
        tl_pm_kernel_summary_ex(env, lists, lens, gr->n, extra, sorted, &s, &tr);
        ks[r] = tl_cell_str(s);
        kt[r] = scell(tr);
        if (env->call_stack) {
            const urow *w = tpl == SIZE_MAX ? NULL : &c->rows[gr->rows[tpl]];
            call_stack_full(env, w, sorted, c->rows[gr->rows[0]].name, &full[r], &entry[r]);
        }
        free(sorted);
    }
    free(lists);
    free(lens);
    free(extra);
}

/* The kernels' summary, the parameters, has_perf_model, the call stacks. */
static void kernel_columns(const usum *c)
{
    const char **entry = NULL, **full = NULL;
    if (c->env->call_stack) {
        entry = tl_xcalloc(c->ng, sizeof *entry);
        full = tl_xcalloc(c->ng, sizeof *full);
    }
    kernel_summary_columns(c, entry, full);
    first_column(c, "perf_params", M_PARAMS);
    tl_cell *x = col(c, "has_perf_model");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_bool(c->rows[grp(c, r)->rows[0]].has_model);
    if (c->env->call_stack) {
        x = col(c, "entry_point");
        for (size_t r = 0; r < c->ng; r++)
            x[r] = tl_cell_str(entry[r]);
        x = col(c, "call_stack_full");
        for (size_t r = 0; r < c->ng; r++)
            x[r] = tl_cell_str(full[r]);
        free(entry);
        free(full);
    }
}

/* Each group's share of the Kernel Time, and the running share. */
static void percentage_columns(const usum *c)
{
    double *sums = tl_xmalloc(c->ng * sizeof *sums);
    for (size_t r = 0; r < c->ng; r++)
        sums[r] = grp(c, r)->ktsum;
    double total = tl_np_sum(sums, c->ng), cum = 0;
    tl_cell *pc = col(c, "Percentage (%)");
    tl_cell *cc = col(c, "Cumulative Percentage (%)");
    for (size_t r = 0; r < c->ng; r++) {
        double p = sums[r] / total * 100;
        cum += p;
        pc[r] = fcell(p);
        cc[r] = fcell(cum);
    }
    free(sums);
}

tl_table *tl_pm_unified(pm_env *env)
{
    const tl_trace *t = env->t;
    size_t nev = t->nev;
    if (!nev || !t->ncpu_ops)
        return NULL;
    U u = {0};
    u.env = env;
    u.t = t;
    u.mark = tl_xcalloc(nev, 1);
    u.model_ix = tl_xcalloc(nev, 1);
    u.first_kernel = tl_xmalloc(nev * sizeof *u.first_kernel);
    u.python = (t->load_flags & TL_LOAD_PYTHON) != 0;
    u.csname = u.python ? tl_xcalloc(nev, sizeof *u.csname) : NULL;
    mark_descendants(&u);
    traverse(&u);
    launcher_kernels(&u);

    urow *rows = NULL;
    size_t nr = 0, rcap = 0;
    uint8_t *cov = tl_xcalloc(nev, 1);
    collected_rows(&u, env, cov, &rows, &nr, &rcap);
    synthetic_rows(&u, env, cov, &rows, &nr, &rcap);
    free(cov);
    free(u.mark), free(u.model_ix), free(u.first_kernel), free(u.collected);
    free(u.sole_f), free(u.coll_cs), free(u.cs_ev), free(u.cs_up), free(u.csname);
    if (nr == 0 || tl_trace_cancelled(t, NULL)) { /* cancelled: the caller fails */
        free(rows);
        free(u.bwd.rows);
        return NULL;
    }

    const char **keys = NULL;
    size_t ng = 0;
    ugrp *g = group_keys(env, rows, nr, &keys, &ng);
    /* TRACES.md §4.6: Kernel Time's sum, min and max are ints when every row's is; the
     * durations' when every row's event was written with an integer dur (a synthetic op's
     * too: it is its owner's) */
    int any_metric = 0, any_roof = 0, kt_int = 1, dur_int = 1;
    for (size_t i = 0; i < nr; i++) {
        kt_int &= rows[i].kt_int;
        dur_int &= tl_tev_dur_int(&t->ev[rows[i].ev]);
        any_metric |= rows[i].modelled;
        any_roof |= rows[i].modelled && metrics(env, &u.bwd, &rows[i])->roof_bound;
    }
    pm_agg *ag = aggregate_groups(env, &u.bwd, rows, nr, g, ng);
    size_t *ord = tl_xmalloc(ng * sizeof *ord);
    for (size_t i = 0; i < ng; i++)
        ord[i] = i;
    tl_sort_rows(ord, ng, ugrp_cmp, g);

    tl_table *tb = tl_table_new();
    tb->nrows = ng;
    usum c = {env, rows, nr, g, ng, ord, ag, keys, any_metric, any_roof, kt_int, dur_int, tb, &u.bwd};
    key_columns(&c);
    metric_columns(&c);
    time_columns(&c);
    kernel_columns(&c);
    percentage_columns(&c);

    for (size_t i = 0; i < ng; i++)
        free(g[i].rows);
    free(g);
    free(ag);
    free(ord);
    free(keys);
    free(rows);
    free(u.bwd.rows);
    return tb;
}
