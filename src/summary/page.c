/*
 * page.c - the page model of a summary (see page.h): every number is taken from the
 * summary's structs as render.c takes it (the same deltas, percentages, intervals and
 * verdicts), or from the efficiency sums and the diff's LCAs; write/html.c draws it.
 */
#include "summary/page.h"

#include "summary/comparable.h"
#include "summary/efficiency.h"
#include "summary/verdict.h"

#include "base/sort.h"
#include "table/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the summary and where the time went ------------------------------------------------ */

static char *summary_text(const tl_summary *s)
{
    char *text = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&text, &n);
    if (!mem)
        return tl_xstrdup("");
    tl_summary_print(s, mem, 0);
    fclose(mem);
    return text;
}

/* "mi300: busy time 12.345 -> 13.456 ms (+9.0%, slower)" for the first variant. */
static const char *headline(const tl_summary *s, tl_arena *a)
{
    if (!s->nvariants || !s->variants[0].has_timeline)
        return NULL;
    const tl_variant_summary *v = &s->variants[0];
    tl_delta d = v->busy.time_ms;
    const char *verdict = tl_verdict_name(v->busy.verdict);
    char pm[32];
    tl_verdict_fmt_pm(&v->busy, pm, sizeof pm);
    return tl_arena_printf(a, "%s -> %s: busy time %.3f -> %.3f ms (%+.1f%%%s%s%s%s)%s", s->baseline, v->tag, d.base,
                           d.var, tl_delta_pct(d), pm[0] ? " " : "", pm, verdict ? ", " : "", verdict ? verdict : "",
                           isnan(v->call_ratio) ? "" : " per iteration");
}

static void fill_bar(tl_page_bar *b, const char *label, const tl_delta *tl, int var)
{
    static const int rows[TL_PAGE_NPARTS] = {TL_TL_COMPUTE, TL_TL_EXPOSED_COMM, TL_TL_EXPOSED_MEMCPY, TL_TL_IDLE};
    b->label = label;
    for (int k = 0; k < TL_PAGE_NPARTS; k++)
        b->part_ms[k] = var ? tl[rows[k]].var : tl[rows[k]].base;
    b->total_ms = var ? tl[TL_TL_TOTAL].var : tl[TL_TL_TOTAL].base;
}

/* One bar for the baseline, one per variant. */
static void bars(tl_page *p, const tl_summary *s)
{
    p->bars = tl_xcalloc(s->nvariants + 1, sizeof *p->bars);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        if (!v->has_timeline)
            continue;
        if (!p->nbars)
            fill_bar(&p->bars[p->nbars++], s->baseline, v->timeline, 0);
        fill_bar(&p->bars[p->nbars++], v->tag, v->timeline, 1);
    }
}

/* ---- what moved ------------------------------------------------------------------------ */

static void item_move(tl_page_move *m, const tl_summary_item *it, tl_arena *a)
{
    m->name = it->name;
    m->base_ms = it->time_ms.base;
    m->var_ms = it->time_ms.var;
    m->delta_ms = it->time_ms.var - it->time_ms.base;
    m->pct = tl_delta_pct(it->time_ms);
    int tested = it->verdict != TL_VERDICT_NONE;
    m->ci_lo = tested ? it->ci_lo : NAN;
    m->ci_hi = tested ? it->ci_hi : NAN;
    m->verdict = tl_verdict_name(it->verdict);
    if (!isnan(it->count.base) && !isnan(it->count.var))
        m->detail = tl_arena_printf(a, "%.0f -> %.0f calls", it->count.base, it->count.var);
}

static void variant_moves(tl_page_moves *pm, const tl_summary *s, const tl_variant_summary *v, tl_arena *a)
{
    pm->title = tl_arena_printf(a, "%s -> %s: top regressions and improvements (%ss%s%s)", s->baseline, v->tag,
                                s->item, s->source ? " from " : "", s->source ? s->source : "");
    pm->items = tl_xcalloc(v->nregressions + v->nimprovements + 1, sizeof *pm->items);
    for (size_t i = 0; i < v->nregressions; i++)
        item_move(&pm->items[pm->n++], &v->regressions[i], a);
    for (size_t i = 0; i < v->nimprovements; i++)
        item_move(&pm->items[pm->n++], &v->improvements[i], a);
    char line[512];
    tl_verdict_line(s, v, line, sizeof line);
    pm->note = line[0] ? tl_arena_strdup(a, line) : NULL;
}

static void lca_moves(tl_page_moves *pm, const tl_lca_summary *l, tl_arena *a)
{
    pm->title = tl_arena_printf(a, "%s -> %s by lowest common op", l->tag1, l->tag2);
    pm->items = tl_xcalloc(l->ntop + 1, sizeof *pm->items);
    for (size_t i = 0; i < l->ntop; i++) {
        const tl_lca_item *it = &l->top[i];
        tl_page_move *m = &pm->items[pm->n++];
        m->name = it->lca;
        m->base_ms = it->ms1;
        m->var_ms = it->ms2;
        m->delta_ms = it->delta_ms;
        m->pct = it->pct;
        int tested = it->verdict != TL_VERDICT_NONE;
        m->ci_lo = tested ? it->ci_lo : NAN;
        m->ci_hi = tested ? it->ci_hi : NAN;
        m->verdict = tl_verdict_name(it->verdict);
        m->detail = tl_arena_printf(a, "%zu x, %zu -> %zu kernels, %s -> %s", it->count, it->n1, it->n2, it->ops1,
                                    it->ops2);
    }
    char line[512];
    tl_lca_summary_verdict_line(l, line, sizeof line);
    pm->note = line[0] ? tl_arena_strdup(a, line) : NULL;
}

/* ---- the roofline ------------------------------------------------------------------------ */

/* FLOP per byte moved, from the sums of the perf sheets; NaN without both. */
static double intensity(const tl_eff_side *e)
{
    return e->rows && e->gflops > 0 && e->mb > 0 ? e->gflops * 1e9 / (e->mb * 1048576.0) : NAN;
}

static int peak_desc(const void *x, const void *y)
{
    double a = ((const tl_gpu_peak *)x)->tflops, b = ((const tl_gpu_peak *)y)->tflops;
    return (a < b) - (a > b);
}

static void roof_peaks(tl_page_gpu *g, const tl_gpu_arch *arch, tl_arena *a)
{
    g->mem_tbps = NAN;
    if (!arch)
        return;
    g->name = tl_arena_strdup(a, arch->name);
    g->mem_tbps = arch->mem_bw_gbps / 1000;
    tl_gpu_peak sorted[TL_GPU_ARCH_MAX_PEAKS];
    size_t n = arch->npeaks < TL_GPU_ARCH_MAX_PEAKS ? arch->npeaks : TL_GPU_ARCH_MAX_PEAKS;
    memcpy(sorted, arch->peak, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, peak_desc);
    for (size_t i = 0; i < n && g->npeaks < TL_PAGE_MAX_PEAKS; i++) {
        /* peaks within 20% of one drawn would draw over its line and its label */
        if (!(sorted[i].tflops > 0) || (g->npeaks && sorted[i].tflops > 0.8 * g->peak_tflops[g->npeaks - 1]))
            continue;
        g->peak_tflops[g->npeaks] = sorted[i].tflops;
        g->peak_label[g->npeaks++] = tl_arena_strdup(a, sorted[i].spec);
    }
}

/* The GPUs a comparison's rooflines draw the peaks of: the baseline's and, when it is
 * another, the variants'; and what to say when the traces' own GPUs differ but one
 * description was given. */
typedef struct roof_gpus {
    const tl_gpu_arch *arch[2]; /* arch[1] NULL: arch[0] for both sides */
    const char *note;
} roof_gpus;

static roof_gpus gpus_of(const tl_summary *s, const tl_page_opts *opt, tl_arena *a)
{
    roof_gpus g = {{opt ? opt->arch : NULL, opt ? opt->arch_variant : NULL}, NULL};
    if (g.arch[1] && (!g.arch[0] || !strcmp(g.arch[0]->name, g.arch[1]->name)))
        g.arch[1] = NULL;
    const char *const *dev = s->comp ? s->comp->gpu : NULL;
    if (g.arch[0] && !g.arch[1] && dev && dev[0] && dev[1] && strcmp(dev[0], dev[1]))
        g.note = tl_arena_printf(a, "the traces ran on %s and %s; the lines are %s's for both sides (give "
                                    "--gpu-arch BASELINE,VARIANT for each side's own)", dev[0], dev[1], g.arch[0]->name);
    return g;
}

static void roofline(tl_page_roofline *r, const char *title, const char *base, const char *tag, const tl_eff_list *l,
                     const roof_gpus *gpus, tl_arena *a)
{
    r->title = title;
    r->side[0] = base;
    r->side[1] = tag;
    r->points = tl_xcalloc(l->n + 1, sizeof *r->points);
    for (size_t i = 0; i < l->n; i++) {
        const tl_eff_item *it = &l->items[i];
        tl_page_point pt = {it->name, NULL, {NAN, NAN}, {NAN, NAN}};
        int any = 0;
        for (int s = 0; s < 2; s++) {
            pt.ai[s] = intensity(&it->side[s]);
            pt.tflops[s] = it->side[s].rows ? tl_eff_rate(&it->side[s], 0) : NAN;
            any |= pt.ai[s] > 0 && pt.tflops[s] > 0;
        }
        if (!any)
            continue;
        const char *kind = it->memory_bound ? "memory-bound" : "matrix";
        pt.detail = it->op1 && it->op2 && strcmp(it->op1, it->op2)
                        ? tl_arena_printf(a, "%s; %s -> %s", kind, it->op1, it->op2)
                        : kind;
        r->points[r->n++] = pt;
    }
    roof_peaks(&r->gpu[0], gpus->arch[0], a);
    roof_peaks(&r->gpu[1], gpus->arch[1], a);
    r->note = gpus->note;
}

/* The roofline just made is kept when it has a point. */
static void keep_roof(tl_page *p)
{
    tl_page_roofline *r = &p->roofs[p->nroofs];
    if (r->n) {
        p->nroofs++;
    } else {
        free(r->points);
        memset(r, 0, sizeof *r);
    }
}

static void roofs(tl_page *p, const tl_summary *s, const tl_page_opts *opt, tl_arena *a)
{
    if (!s->eff || !s->eff->any_source)
        return;
    roof_gpus gpus = gpus_of(s, opt, a);
    p->roofs = tl_xcalloc(s->nvariants + 2, sizeof *p->roofs);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_eff_list *l = &s->eff->variants[vi];
        if (!l->n)
            continue;
        roofline(&p->roofs[p->nroofs], tl_arena_printf(a, "%s -> %s: the listed %ss", s->baseline, s->variants[vi].tag,
                                                       s->item),
                 s->baseline, s->variants[vi].tag, l, &gpus, a);
        keep_roof(p);
    }
    if (s->lca && s->eff->lca.n) {
        roofline(&p->roofs[p->nroofs], tl_arena_printf(a, "%s -> %s: the listed lowest common ops", s->lca->tag1,
                                                       s->lca->tag2),
                 s->lca->tag1, s->lca->tag2, &s->eff->lca, &gpus, a);
        keep_roof(p);
    }
}

/* ---- the call tree ------------------------------------------------------------------------ */

typedef struct tree_ctx {
    const tl_diff *d;
    const tl_diff_node *nodes;
    const uint32_t *kids;
    double *t1, *t2; /* per merged node: the LCAs' time under it (µs) */
    uint8_t *is_lca;
    double min_us;
    tl_page_tree *out;
    size_t cap;
    tl_arena *a;
} tree_ctx;

static const char *node_name(tree_ctx *c, uint32_t id)
{
    const char *n1 = tl_diff_node_op(c->d, id, 0), *n2 = tl_diff_node_op(c->d, id, 1);
    if (n1 && n2 && strcmp(n1, n2))
        return tl_arena_printf(c->a, "%s | %s", n1, n2);
    return n1 ? n1 : n2 ? n2 : "?";
}

/* A merged node with its name, as grouped. */
typedef struct named {
    const char *name;
    uint32_t id;
} named;

static int by_name(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int r = strcmp(a->name, b->name);
    return r ? r : (a->id > b->id) - (a->id < b->id);
}

/* A group of sibling nodes of one name (a flame graph's frame): ids[0..n). */
typedef struct group {
    named *ids;
    size_t n;
    unsigned depth;
    double x, t1, t2;
} group;

static int wider(const void *x, const void *y)
{
    const group *a = x, *b = y;
    return (a->t1 < b->t1) - (a->t1 > b->t1);
}

/* Split v[0..n) (sorted by name) into groups of one name, widest first, into *out. */
static size_t split_groups(tree_ctx *c, named *v, size_t n, unsigned depth, group **out)
{
    qsort(v, n, sizeof *v, by_name);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        ng += i == 0 || strcmp(v[i].name, v[i - 1].name) != 0;
    group *g = tl_xcalloc(ng + 1, sizeof *g);
    ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(v[i].name, v[i - 1].name) != 0)
            g[ng++] = (group){v + i, 0, depth, 0, 0, 0};
        group *cur = &g[ng - 1];
        cur->n++;
        cur->t1 += c->t1[v[i].id];
        cur->t2 += c->t2[v[i].id];
    }
    qsort(g, ng, sizeof *g, wider);
    *out = g;
    return ng;
}

static void emit_group(tree_ctx *c, const group *g)
{
    tl_page_tree *t = c->out;
    int sides = 0, lca = 1;
    for (size_t i = 0; i < g->n; i++) {
        uint8_t ty = c->nodes[g->ids[i].id].type;
        sides |= ty == TL_DIFF_TRACE1 ? 1 : ty == TL_DIFF_TRACE2 ? 2 : 3;
        lca &= c->is_lca[g->ids[i].id];
    }
    TL_GROW(t->nodes, c->cap, t->n + 1);
    tl_page_node *pn = &t->nodes[t->n++];
    *pn = (tl_page_node){g->ids[0].name, g->depth, g->x, g->t1, g->t2, g->t1 > 0 ? 100 * (g->t2 - g->t1) / g->t1 : NAN,
                         0, sides == 1 ? 1 : sides == 2 ? 2 : 0, lca};
    pn->noise = !isnan(pn->pct) && fabs(pn->pct) < t->noise_pct;
}

/*
 * The tree drawn as a flame graph is: siblings of one name merged into one frame (a
 * model's repeated layers add up), the frames of a level widest first, down to the LCAs
 * (a frame's children are those of its nodes that are not LCAs).  An explicit stack,
 * since call trees can be deep; `v` (the roots, named) is taken over.
 */
static void tree_walk(tree_ctx *c, named *v, size_t n)
{
    typedef struct frame { group g; named *owned; } frame;
    frame *st = NULL;
    size_t nst = 0, cap = 0;
    group *gs;
    size_t ng = split_groups(c, v, n, 0, &gs);
    double x = 0;
    TL_GROW(st, cap, ng);
    for (size_t i = ng; i-- > 0;) /* pushed last first: they come out widest first */
        st[nst++] = (frame){gs[i], i == ng - 1 ? v : NULL}; /* the last one popped frees */
    for (size_t i = 0; i < ng; i++) {
        st[ng - 1 - i].g.x = x;
        x += gs[i].t1;
    }
    free(gs);
    while (nst) {
        frame f = st[--nst];
        tl_page_tree *t = c->out;
        if (f.g.t1 < c->min_us || t->n >= TL_PAGE_TREE_MAX_NODES) {
            t->hidden += f.g.t1 > 0 || f.g.t2 > 0;
            free(f.owned);
            continue;
        }
        emit_group(c, &f.g);
        size_t nk = 0;
        for (size_t i = 0; i < f.g.n; i++)
            if (!c->is_lca[f.g.ids[i].id])
                nk += c->nodes[f.g.ids[i].id].nkid;
        named *kv = tl_xmalloc((nk + 1) * sizeof *kv);
        nk = 0;
        for (size_t i = 0; i < f.g.n; i++) {
            const tl_diff_node *nd = &c->nodes[f.g.ids[i].id];
            if (c->is_lca[f.g.ids[i].id])
                continue; /* the tree stops at the lowest common op */
            for (uint32_t k = 0; k < nd->nkid; k++) {
                uint32_t kid = c->kids[nd->kid0 + k];
                if (c->t1[kid] > 0 || c->t2[kid] > 0)
                    kv[nk++] = (named){node_name(c, kid), kid};
            }
        }
        free(f.owned); /* the last of its siblings: their ids are no longer read */
        if (!nk) {
            free(kv);
            continue;
        }
        ng = split_groups(c, kv, nk, f.g.depth + 1, &gs);
        TL_GROW(st, cap, nst + ng);
        double kx = f.g.x;
        for (size_t i = 0; i < ng; i++) {
            gs[i].x = kx;
            kx += gs[i].t1;
        }
        for (size_t i = ng; i-- > 0;)
            st[nst++] = (frame){gs[i], i == ng - 1 ? kv : NULL};
        free(gs);
    }
    free(st);
}

static tl_page_tree *tree(const tl_diff *d, const char *tag1, const char *tag2, tl_arena *a)
{
    size_t nn, nroots, nlcas;
    const tl_diff_node *nodes = tl_diff_nodes(d, &nn);
    const uint32_t *roots = tl_diff_roots(d, &nroots);
    const tl_diff_lca *lcas = tl_diff_lcas(d, &nlcas);
    if (!nn || !nlcas)
        return NULL;
    tree_ctx c = {d, nodes, tl_diff_kids(d), tl_xcalloc(nn, sizeof(double)), tl_xcalloc(nn, sizeof(double)),
                  tl_xcalloc(nn, 1), 0, tl_xcalloc(1, sizeof(tl_page_tree)), 0, a};
    for (size_t i = 0; i < nlcas; i++) {
        if (lcas[i].id >= nn)
            continue;
        c.t1[lcas[i].id] += lcas[i].time1;
        c.t2[lcas[i].id] += lcas[i].time2;
        c.is_lca[lcas[i].id] = 1;
    }
    /* merged ids are in pre-order: a node's children come after it */
    for (size_t id = nn; id-- > 0;)
        for (uint32_t k = 0; k < nodes[id].nkid; k++) {
            uint32_t kid = c.kids[nodes[id].kid0 + k];
            c.t1[id] += c.t1[kid];
            c.t2[id] += c.t2[kid];
        }
    tl_page_tree *t = c.out;
    t->side[0] = tag1;
    t->side[1] = tag2;
    t->noise_pct = TL_PAGE_TREE_NOISE_PCT;
    for (size_t r = 0; r < nroots; r++)
        t->total_us += c.t1[roots[r]];
    c.min_us = t->total_us * TL_PAGE_TREE_MIN;
    named *v = tl_xmalloc((nroots + 1) * sizeof *v);
    size_t nv = 0;
    for (size_t r = 0; r < nroots; r++)
        if (c.t1[roots[r]] > 0 || c.t2[roots[r]] > 0)
            v[nv++] = (named){node_name(&c, roots[r]), roots[r]};
    if (nv)
        tree_walk(&c, v, nv);
    else
        free(v);
    free(c.t1);
    free(c.t2);
    free(c.is_lca);
    return t;
}

/* ---- the page -------------------------------------------------------------------------- */

void tl_summary_html(const tl_summary *s, const tl_page_opts *opt, tl_buf *out)
{
    tl_arena a;
    tl_arena_init(&a);
    tl_page p = {0};
    p.tool = opt && opt->tool ? opt->tool : "tlcompare";
    tl_buf title = {0};
    tl_buf_adds(&title, s->baseline);
    for (size_t vi = 0; vi < s->nvariants; vi++)
        tl_buf_printf(&title, "%s%s", vi ? ", " : " vs ", s->variants[vi].tag);
    p.title = tl_buf_cstr(&title);
    char *text = summary_text(s);
    p.summary_text = text;
    p.headline = headline(s, &a);
    bars(&p, s);
    p.moves = tl_xcalloc(s->nvariants + 1, sizeof *p.moves);
    for (size_t vi = 0; vi < s->nvariants; vi++)
        if (s->source)
            variant_moves(&p.moves[p.nmoves++], s, &s->variants[vi], &a);
    if (s->lca)
        lca_moves(&p.moves[p.nmoves++], s->lca, &a);
    roofs(&p, s, opt, &a);
    tl_page_tree *t = opt && opt->diff && s->lca ? tree(opt->diff, s->lca->tag1, s->lca->tag2, &a) : NULL;
    p.tree = t;
    if (opt) {
        p.extras = opt->extras;
        p.nextras = opt->nextras;
        p.bar_sets = opt->bar_sets;
        p.nbar_sets = opt->nbar_sets;
    }
    tl_html_write(&p, out);
    tl_utf8_sanitize(out);
    free(text);
    tl_buf_free(&title);
    for (size_t i = 0; i < p.nmoves; i++)
        free(p.moves[i].items);
    free(p.moves);
    for (size_t i = 0; i < p.nroofs; i++)
        free(p.roofs[i].points);
    free(p.roofs);
    free(p.bars);
    if (t)
        free(t->nodes);
    free(t);
    tl_arena_free(&a);
}

/* ---- one report (tlreport) ------------------------------------------------------------- */

#define TL_PAGE_REPORT_TOP 25   /* ops listed */
#define TL_PAGE_REPORT_ROOF 60  /* perf-model rows on the roofline (the largest by kernel time) */

static const tl_table *sheet(const tl_results *res, const char *name)
{
    for (size_t i = 0; i < res->n; i++)
        if (!strcmp(res->items[i].name, name))
            return res->items[i].table;
    return NULL;
}

static const tl_column *column(const tl_table *t, const char *name)
{
    long c = t ? tl_table_find(t, name) : -1;
    return c < 0 ? NULL : &t->cols[c];
}

/* A text cell's string ("" when it holds none). */
static const char *text_at(const tl_column *c, size_t row)
{
    return c && c->cells[row].kind == TL_STR ? c->cells[row].v.s : "";
}

/* gpu_timeline's parts as one bar, and its lines as the summary's text. */
static void report_timeline(tl_page *p, const tl_table *t, const char *tag, tl_buf *text)
{
    const tl_column *type = column(t, "type"), *ms = column(t, "time ms");
    if (!type || !ms)
        return;
    static const char *const parts[TL_PAGE_NPARTS] = {"computation_time", "exposed_comm_time",
                                                      "exposed_memcpy_time", "idle_time"};
    tl_page_bar *b = p->bars = tl_xcalloc(1, sizeof *p->bars);
    p->nbars = 1;
    b->label = tag;
    b->total_ms = NAN;
    for (int k = 0; k < TL_PAGE_NPARTS; k++)
        b->part_ms[k] = NAN;
    tl_buf_printf(text, "%s: GPU time (ms)\n", tag);
    for (size_t r = 0; r < t->nrows; r++) {
        const char *name = text_at(type, r);
        double v = tl_column_number_at(ms, r);
        tl_buf_printf(text, "  %-22s %12.3f\n", name, v);
        for (int k = 0; k < TL_PAGE_NPARTS; k++)
            if (!strcmp(name, parts[k]))
                b->part_ms[k] = v;
        if (!strcmp(name, "total_time"))
            b->total_ms = v;
    }
}

/* ops_summary's largest ops (the sheet is in that order). */
static tl_page_tops *report_tops(const tl_table *t, const char *tag, tl_buf *text, tl_arena *a)
{
    const tl_column *name = column(t, "name"), *ms = column(t, "total_direct_kernel_time_ms"),
                    *calls = column(t, "Count"), *pct = column(t, "Percentage (%)");
    if (!name || !ms)
        return NULL;
    tl_page_tops *tp = tl_xcalloc(1, sizeof *tp);
    tp->title = tl_arena_printf(a, "%s: the ops that take the GPU time", tag);
    size_t n = t->nrows < TL_PAGE_REPORT_TOP ? t->nrows : TL_PAGE_REPORT_TOP;
    tp->items = tl_xcalloc(n + 1, sizeof *tp->items);
    tl_buf_adds(text, "top ops by kernel time (ms)\n");
    for (size_t r = 0; r < t->nrows; r++) {
        double v = tl_column_number_at(ms, r);
        if (r >= n) {
            tp->rest++;
            tp->rest_ms += isnan(v) ? 0 : v;
            continue;
        }
        tp->items[tp->n++] = (tl_page_top){text_at(name, r), v, tl_column_number_at(calls, r),
                                           tl_column_number_at(pct, r)};
        if (r < 10)
            tl_buf_printf(text, "  %12.3f  %s\n", v, text_at(name, r));
    }
    return tp;
}

/* unified_perf_summary's modelled rows, the largest by kernel time, at the sheet's own
 * FLOPS/Byte and TFLOPS/s_mean. */
static void report_roofline(tl_page *p, const tl_table *t, const char *tag, const tl_gpu_arch *arch, tl_arena *a)
{
    const tl_column *name = column(t, "name"), *dims = column(t, "Input Dims"), *ai = column(t, "FLOPS/Byte"),
                    *tf = column(t, "TFLOPS/s_mean"), *us = column(t, "Kernel Time (\xc2\xb5s)_sum");
    if (!name || !ai || !tf || !us)
        return;
    size_t *idx = tl_xmalloc((t->nrows + 1) * sizeof *idx), n = 0;
    double *key = tl_xmalloc((t->nrows + 1) * sizeof *key);
    for (size_t r = 0; r < t->nrows; r++)
        if (tl_column_number_at(ai, r) > 0 && tl_column_number_at(tf, r) > 0) {
            key[n] = tl_column_number_at(us, r);
            idx[n++] = r;
        }
    /* the largest first: a selection by kernel time, stable */
    for (size_t i = 0; i < n && i < TL_PAGE_REPORT_ROOF; i++)
        for (size_t j = i + 1; j < n; j++)
            if (key[j] > key[i]) {
                double k = key[i];
                size_t x = idx[i];
                key[i] = key[j], idx[i] = idx[j], key[j] = k, idx[j] = x;
            }
    if (n) {
        tl_page_roofline *r = p->roofs = tl_xcalloc(1, sizeof *p->roofs);
        p->nroofs = 1;
        r->title = tl_arena_printf(a, "%s: the perf-model ops with the most kernel time", tag);
        r->side[0] = tag;
        r->side[1] = NULL;
        r->points = tl_xcalloc(n < TL_PAGE_REPORT_ROOF ? n : TL_PAGE_REPORT_ROOF, sizeof *r->points);
        for (size_t i = 0; i < n && i < TL_PAGE_REPORT_ROOF; i++)
            r->points[r->n++] = (tl_page_point){text_at(name, idx[i]), text_at(dims, idx[i]),
                                                {tl_column_number_at(ai, idx[i]), NAN},
                                                {tl_column_number_at(tf, idx[i]), NAN}};
        roof_peaks(&r->gpu[0], arch, a);
    }
    free(idx);
    free(key);
}

void tl_report_html(const tl_results *res, const char *tag, const tl_gpu_arch *arch, const tl_page_bar_set *sets,
                    size_t nsets, tl_buf *out)
{
    tl_arena a;
    tl_arena_init(&a);
    tl_page p = {0};
    tl_buf text = {0};
    p.tool = "tlreport";
    p.title = tag;
    report_timeline(&p, sheet(res, "gpu_timeline"), tag, &text);
    p.bar_sets = sets;
    p.nbar_sets = nsets;
    tl_page_tops *tops = report_tops(sheet(res, "ops_summary"), tag, &text, &a);
    p.tops = tops;
    report_roofline(&p, sheet(res, "unified_perf_summary"), tag, arch, &a);
    p.summary_text = tl_buf_cstr(&text);
    tl_html_write(&p, out);
    tl_utf8_sanitize(out);
    if (tops)
        free(tops->items);
    free(tops);
    free(p.bars);
    if (p.roofs)
        free(p.roofs->points);
    free(p.roofs);
    tl_buf_free(&text);
    tl_arena_free(&a);
}
