/*
 * lca.c - the summary's comparison by lowest common op (see lca.h).
 */
#include "summary/lca.h"

#include "summary/verdict.h"

#include "base/hash.h"
#include "base/jsonw.h"
#include "base/numfmt.h"
#include "base/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The change in percent of the baseline; none over a baseline within noise of zero
 * (under a nanosecond: the traces' resolution), where a percentage would be nonsense. */
static double pct_change(double a, double b) { return a > 1e-6 ? (b - a) / a * 100.0 : NAN; }

static int by_first(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ctx;
    return it[a].first < it[b].first ? -1 : it[a].first > it[b].first;
}

static int by_abs_delta(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ctx;
    double x = fabs(it[a].delta_ms), y = fabs(it[b].delta_ms);
    return x > y ? -1 : x < y ? 1 : 0;
}

typedef struct sig_ctx {
    const tl_lca_item *it;
} sig_ctx;

/* LCAs alike: the same op over the same ops on each side. */
static int by_signature(size_t a, size_t b, void *ctx)
{
    const tl_lca_item *it = ((const sig_ctx *)ctx)->it;
    int r = strcmp(it[a].lca, it[b].lca);
    if (!r)
        r = strcmp(it[a].ops1, it[b].ops1);
    if (!r)
        r = strcmp(it[a].ops2, it[b].ops2);
    return r;
}

/* An LCA's name for a person: its CPU op (the diff names some LCAs by the kernel, runtime
 * call or memcpy where the trees stop matching, which says nothing of what ran there); a
 * side with no work under it does not name it (as in lca_summary). */
static const char *cpu_op_name(const tl_diff_lca *l, tl_arena *a)
{
    const char *o1 = l->op1 && l->n1 ? l->op1 : "", *o2 = l->op2 && l->n2 ? l->op2 : "";
    if (!*o1 && !*o2)
        return l->lca_name ? l->lca_name : "";
    if (!*o1 || !*o2 || !strcmp(o1, o2))
        return *o1 ? o1 : o2;
    return tl_arena_printf(a, "%s | %s", o1, o2);
}

/* The kernels of one side of an LCA, by name and in order, as one number: LCAs alike
 * (the same kernels on each side) do the same work, and differ by chance only. */
static uint64_t kernels_sig(const tl_diff_row *rows, size_t nrows, size_t first, size_t count, int side)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    if (first == SIZE_MAX)
        return h;
    size_t k = 0;
    for (size_t r = first; r < nrows && k < count; r++) {
        if (rows[r].side != side || rows[r].lca != rows[first].lca)
            continue;
        h = tl_hash_mix(h ^ (uint64_t)rows[r].name_id) + (uint64_t)k++;
    }
    return h;
}

typedef struct pair_ctx {
    const uint64_t *sig;
} pair_ctx;

static int by_kernels(size_t a, size_t b, void *ctx)
{
    const uint64_t *sig = ((const pair_ctx *)ctx)->sig;
    return sig[a] < sig[b] ? -1 : sig[a] > sig[b];
}

/* A baseline-only and a variant-only group of one name are one op whose work moved: one
 * line, labelled, rather than a -100% beside a "new". */
static size_t find_root(size_t *parent, size_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* The groups' moves: `parent` (a union-find over the groups as first made) takes each merged
 * group to the one it joined, orig_at[p] is the first-made group now at position p. */
static size_t pair_one_sided(tl_lca_item *g, size_t ng, size_t *parent, size_t *orig_at)
{
    for (size_t i = 0; i < ng; i++) {
        if (g[i].n2 || g[i].unaligned || !g[i].n1)
            continue;
        for (size_t j = 0; j < ng; j++) {
            if (j == i || g[j].n1 || !g[j].n2 || g[j].unaligned || strcmp(g[i].lca, g[j].lca) != 0)
                continue;
            g[i].ops2 = g[j].ops2;
            g[i].n2 = g[j].n2;
            g[i].ms2 = g[j].ms2;
            g[i].count += g[j].count;
            g[i].first = g[i].first < g[j].first ? g[i].first : g[j].first;
            g[i].unaligned = 1;
            g[i].npairs = g[i].wss = g[i].wdf = 0; /* no pairs: nothing to judge the move by */
            parent[orig_at[j]] = orig_at[i];
            g[j] = g[--ng];
            orig_at[j] = orig_at[ng];
            if (i == ng)
                i = j; /* g[i] moved to j */
            break;
        }
    }
    return ng;
}

/* The spread of the pairs' differences of kind g (its LCAs all[idx[0..k)]), within LCAs of
 * the same kernels: a model's layers of one shape repeat the same work, where those of
 * different shapes (other kernels) differ by design. */
static void pairs_spread(tl_lca_item *g, const tl_lca_item *all, const size_t *idx, size_t k, const uint64_t *sig)
{
    size_t *p = tl_xmalloc((k ? k : 1) * sizeof *p), m = 0;
    for (size_t i = 0; i < k; i++)
        if (all[idx[i]].npairs > 0)
            p[m++] = idx[i];
    pair_ctx pc = {sig};
    tl_sort_rows(p, m, by_kernels, &pc);
    g->wss = g->wdf = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        tl_moments mo = {0, 0, 0};
        for (; j < m && sig[p[j]] == sig[p[i]]; j++)
            tl_moments_add(&mo, all[p[j]].ms2 - all[p[j]].ms1);
        if (mo.n >= 2) {
            g->wss += mo.m2;
            g->wdf += mo.n - 1;
        }
        i = j;
    }
    free(p);
}

/* pair_one_sided, and each LCA's group where its group went. */
static void regroup_one_sided(tl_lca_summary *s, tl_lca_item *groups, size_t *ng)
{
    size_t n0 = *ng;
    size_t *parent = tl_xmalloc((n0 ? 3 * n0 : 1) * sizeof *parent), *orig_at = parent + n0, *pos_of = parent + 2 * n0;
    for (size_t i = 0; i < n0; i++)
        parent[i] = orig_at[i] = i;
    *ng = pair_one_sided(groups, n0, parent, orig_at);
    for (size_t p = 0; p < *ng; p++)
        pos_of[orig_at[p]] = p;
    for (size_t i = 0; i < s->nlcas; i++)
        s->group_of[i] = pos_of[find_root(parent, s->group_of[i])];
    free(parent);
}

void tl_lca_summary_build(tl_lca_summary *s, const tl_diff *d, const char *tag1, const char *tag2, size_t top,
                          double gate_pct, double gate_min_ms, tl_arena *arena)
{
    memset(s, 0, sizeof *s);
    s->tag1 = tag1;
    s->tag2 = tag2;
    s->gate_on = gate_pct >= 0;
    s->gate_pct = gate_pct;
    s->gate_min_ms = gate_min_ms;
    tl_diff_coverage(d, 0, &s->cover[0]);
    tl_diff_coverage(d, 1, &s->cover[1]);
    size_t n;
    const tl_diff_lca *l = tl_diff_lcas(d, &n);
    s->nlcas = n;
    tl_lca_item *all = tl_xmalloc((n ? n : 1) * sizeof *all);
    s->lca_ms = tl_xmalloc((n ? 2 * n : 1) * sizeof *s->lca_ms);
    size_t nrows;
    const tl_diff_row *rows = tl_diff_rows(d, &nrows);
    uint64_t *sig = tl_xmalloc((n ? n : 1) * sizeof *sig);
    for (size_t i = 0; i < n; i++) {
        sig[i] = tl_hash_mix(kernels_sig(rows, nrows, l[i].row1, l[i].n1, 0) * 31 +
                             kernels_sig(rows, nrows, l[i].row2, l[i].n2, 1));
        tl_lca_item *it = &all[i];
        memset(it, 0, sizeof *it);
        it->node = l[i].lca_name ? l[i].lca_name : "";
        it->lca = cpu_op_name(&l[i], arena);
        it->ops1 = l[i].name1;
        it->ops2 = l[i].name2;
        it->n1 = l[i].n1;
        it->n2 = l[i].n2;
        it->ms1 = l[i].time1 / 1e3;
        it->ms2 = l[i].time2 / 1e3;
        s->lca_ms[2 * i] = it->ms1;
        s->lca_ms[2 * i + 1] = it->ms2;
        it->count = 1;
        it->npairs = l[i].n1 && l[i].n2;
    }
    /* A model repeats its layers: the twelve softmaxes of twelve blocks are one line
     * (x12), their times added, in the order their first one comes. */
    size_t *ord = tl_xmalloc((n ? n : 1) * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    sig_ctx sc = {all};
    tl_sort_rows(ord, n, by_signature, &sc);
    tl_lca_item *groups = tl_xmalloc((n ? n : 1) * sizeof *groups);
    s->group_of = tl_xmalloc((n ? n : 1) * sizeof *s->group_of);
    size_t ng = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1, first = ord[i];
        tl_lca_item g = all[ord[i]];
        s->group_of[ord[i]] = ng;
        for (; j < n && by_signature(ord[i], ord[j], &sc) == 0; j++) {
            s->group_of[ord[j]] = ng;
            const tl_lca_item *x = &all[ord[j]];
            g.n1 += x->n1;
            g.n2 += x->n2;
            g.ms1 += x->ms1;
            g.ms2 += x->ms2;
            g.count++;
            g.npairs += x->npairs;
            if (ord[j] < first)
                first = ord[j];
        }
        g.first = first;
        pairs_spread(&g, all, ord + i, j - i, sig);
        groups[ng++] = g;
        i = j;
    }
    free(sig);
    regroup_one_sided(s, groups, &ng);
    for (size_t i = 0; i < ng; i++) {
        tl_lca_item *g = &groups[i];
        g->delta_ms = g->ms2 - g->ms1;
        g->pct = pct_change(g->ms1, g->ms2);
    }
    s->groups = groups;
    s->ngroups = ng;
    s->max_top = top;
    free(ord);
    free(all);
    tl_lca_summary_judge(s, 0, 0);
}

void tl_lca_summary_judge(tl_lca_summary *s, double confidence, int fdr)
{
    size_t ng = s->ngroups;
    tl_lca_item *groups = s->groups;
    s->confidence = confidence > 0 ? confidence : TL_CONFIDENCE_DEFAULT;
    s->fdr = fdr;
    /* each kind's pairs: their differences, scaled by a pair's baseline time */
    tl_summary_item *items = tl_xcalloc(ng ? ng : 1, sizeof *items);
    tl_pairs *d = tl_xmalloc((ng ? ng : 1) * sizeof *d);
    double *unit = tl_xmalloc((ng ? ng : 1) * sizeof *unit);
    for (size_t i = 0; i < ng; i++) {
        const tl_lca_item *g = &groups[i];
        items[i].name = g->lca;
        items[i].time_ms = (tl_delta){g->ms1, g->ms2};
        d[i] = (tl_pairs){g->npairs, g->wdf > 0 ? g->wss / g->wdf : NAN, g->wdf};
        unit[i] = g->count ? g->ms1 / (double)g->count : NAN;
    }
    /* steps judge the kinds the pairs would (found on both sides, aligned): a one-sided or
     * moved kind's change is what it is, no sample of anything */
    unsigned char *has = tl_xmalloc(ng ? ng : 1);
    for (size_t i = 0; i < ng; i++)
        has[i] = groups[i].npairs > 0;
    tl_step_samples st = {s->nsteps[0], s->nsteps[1], {s->busy_steps[0], s->busy_steps[1]}, s->step_ms, has};
    s->tested = tl_verdicts_judge_lcas(d, unit, s->step_ms ? &st : NULL, items, ng, s->confidence, s->fdr);
    s->nslower = s->nfaster = s->within_noise = s->tested_by_steps = 0;
    for (size_t i = 0; i < ng; i++) {
        tl_lca_item *g = &groups[i];
        s->tested_by_steps += items[i].by_steps && items[i].verdict != TL_VERDICT_NONE;
        g->ci_lo = items[i].ci_lo;
        g->ci_hi = items[i].ci_hi;
        g->p = items[i].p;
        g->verdict = items[i].verdict;
        if (g->verdict == TL_VERDICT_WITHIN_NOISE) {
            s->within_noise += g->delta_ms != 0;
            continue;
        }
        s->nslower += g->delta_ms > 0;
        s->nfaster += g->delta_ms < 0;
    }
    free(items);
    free(has);
    free(d);
    free(unit);
    /* largest change first; equal changes in the order of lca_summary; no change (or one
     * within the noise), no line */
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord), m = 0;
    for (size_t i = 0; i < ng; i++)
        if (groups[i].delta_ms != 0 && groups[i].verdict != TL_VERDICT_WITHIN_NOISE)
            ord[m++] = i;
    tl_sort_rows(ord, m, by_first, groups);
    tl_sort_rows(ord, m, by_abs_delta, groups);
    free(s->top);
    free(s->violations);
    s->violations = NULL;
    s->nviolations = 0;
    s->ntop = m < s->max_top ? m : s->max_top;
    s->top = tl_xmalloc((s->ntop ? s->ntop : 1) * sizeof *s->top);
    for (size_t i = 0; i < s->ntop; i++)
        s->top[i] = groups[ord[i]];
    if (s->gate_on) {
        s->violations = tl_xmalloc((m ? m : 1) * sizeof *s->violations);
        for (size_t i = 0; i < m; i++) {
            const tl_lca_item *it = &groups[ord[i]];
            if (it->ms1 >= s->gate_min_ms && it->ms1 > 0 && it->pct > s->gate_pct)
                s->violations[s->nviolations++] = *it;
        }
    }
    free(ord);
}

void tl_lca_summary_verdict_line(const tl_lca_summary *s, char *buf, size_t n)
{
    if (!s->tested) {
        buf[0] = '\0';
        return;
    }
    char basis[256];
    if (s->tested_by_steps)
        snprintf(basis, sizeof basis, "between-step spread, %s (each kind's time and its share of the step)%s",
                 s->steps_basis, s->tested_by_steps < s->tested ? "; the rest the spread of paired LCAs" : "");
    else
        snprintf(basis, sizeof basis, "the spread of paired LCAs (the same op at the same place of both traces, "
                                      "the same kernels), 1 run per side");
    int w = snprintf(buf, n, "verdicts: %s; %g%% intervals, %s %g%% over %zu kinds tested", basis,
                     100 * s->confidence, s->fdr ? "false discovery rate" : "family-wise error",
                     100 * (1 - s->confidence), s->tested);
    if (w >= 0 && (size_t)w < n && s->within_noise)
        snprintf(buf + w, n - (size_t)w, "; %zu change%s within noise (not listed)", s->within_noise,
                 s->within_noise == 1 ? "" : "s");
}

void tl_lca_summary_steps(tl_lca_summary *s, const long *const step[2], const size_t nsteps[2],
                          const double *const busy[2], const char *basis)
{
    if (nsteps[0] < TL_STEPS_MIN || nsteps[1] < TL_STEPS_MIN || !s->group_of)
        return;
    size_t na = nsteps[0], nb = nsteps[1], w = na + nb;
    free(s->step_ms);
    s->step_ms = tl_xcalloc(s->ngroups ? s->ngroups * w : 1, sizeof *s->step_ms);
    /* an LCA's time is its kernels' busy time on each side (tl_diff_lca.time1/2) */
    for (size_t i = 0; i < s->nlcas; i++) {
        double *g = s->step_ms + s->group_of[i] * w;
        if (step[0][i] >= 0 && (size_t)step[0][i] < na)
            g[step[0][i]] += s->lca_ms[2 * i];
        if (step[1][i] >= 0 && (size_t)step[1][i] < nb)
            g[na + (size_t)step[1][i]] += s->lca_ms[2 * i + 1];
    }
    for (int k = 0; k < 2; k++) {
        s->nsteps[k] = nsteps[k];
        free(s->busy_steps[k]);
        s->busy_steps[k] = tl_xmalloc(nsteps[k] * sizeof *s->busy_steps[k]);
        memcpy(s->busy_steps[k], busy[k], nsteps[k] * sizeof *s->busy_steps[k]);
    }
    snprintf(s->steps_basis, sizeof s->steps_basis, "%s", basis);
}

void tl_lca_summary_free(tl_lca_summary *s)
{
    free(s->group_of);
    free(s->step_ms);
    free(s->busy_steps[0]);
    free(s->busy_steps[1]);
    free(s->lca_ms);
    free(s->top);
    free(s->violations);
    free(s->groups);
    memset(s, 0, sizeof *s);
}

/* ---- what the lines cover ---------------------------------------------------------------- */

static double share(double part, double whole) { return whole > 0 ? part / whole : 0; }

/* 1 when the LCAs leave most of a side's GPU time out. */
static int low_cover(const tl_lca_summary *s)
{
    for (int k = 0; k < 2; k++)
        if (s->cover[k].busy_us > 0 && share(s->cover[k].lca_us, s->cover[k].busy_us) < TL_LCA_LOW_COVER)
            return 1;
    return 0;
}

/* 1 when most of a side's GPU time is capture-style graph replay (vLLM, SGLang) that a
 * capture folder would attribute: torch.compile's graphs under CompiledFunction are not. */
static int graph_heavy(const tl_diff_cover *c)
{
    return c->busy_us > 0 && share(c->graph_capture_us, c->busy_us) > TL_LCA_GRAPH_SHARE;
}

/* The texts the three renderings share; `tag` writes a tag (each rendering quotes its
 * own way). */
typedef void (*put_fn)(tl_buf *b, const char *s);

static void put_plain(tl_buf *b, const char *s)
{
    for (const char *c = s; *c; c++)
        tl_buf_addc(b, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
}

/* "vit_mi300x 8.950 of 9.083 ms (98.5%), vit_h100 8.800 of 8.894 ms (98.9%)" */
static void cover_line(const tl_lca_summary *s, tl_buf *b, put_fn tag)
{
    for (int k = 0; k < 2; k++) {
        const tl_diff_cover *c = &s->cover[k];
        tl_buf_adds(b, k ? ", " : "");
        tag(b, k ? s->tag2 : s->tag1);
        tl_buf_printf(b, " %.3f of %.3f ms (%.1f%%)", c->lca_us / 1e3, c->busy_us / 1e3,
                      100 * share(c->lca_us, c->busy_us));
    }
}

/* "vit_mi300x: 0.100 ms under graph launches, 0.030 ms in top-level ops only it has; ...",
 * or nothing when the LCAs leave out under a microsecond on each side. */
static int rest_line(const tl_lca_summary *s, tl_buf *b, put_fn tag)
{
    int any = 0;
    for (int k = 0; k < 2; k++) {
        const tl_diff_cover *c = &s->cover[k];
        double part[3] = {c->graph_us, c->unmatched_us, c->outside_us};
        static const char *const what[3] = {"under graph launches", "in top-level ops only it has",
                                            "launched outside every op"};
        int first = 1;
        for (int p = 0; p < 3; p++) {
            if (part[p] < 1.0)
                continue;
            if (first) {
                tl_buf_adds(b, any ? "; " : "");
                tag(b, k ? s->tag2 : s->tag1);
                tl_buf_adds(b, ": ");
            }
            tl_buf_printf(b, "%s%.3f ms %s", first ? "" : ", ", part[p] / 1e3, what[p]);
            first = 0;
            any = 1;
        }
    }
    return any;
}

static void low_cover_line(const tl_lca_summary *s, tl_buf *b, put_fn tag)
{
    tl_buf_printf(b, "the lines below account for %.1f%% of ", 100 * share(s->cover[0].lca_us, s->cover[0].busy_us));
    tag(b, s->tag1);
    tl_buf_printf(b, "'s GPU time and %.1f%% of ", 100 * share(s->cover[1].lca_us, s->cover[1].busy_us));
    tag(b, s->tag2);
    tl_buf_adds(b, "'s; the rest is compared by name only (the op and kernel tables)");
}

/* The graph-replay hint: which side, how much, and what would attribute it. */
static int graph_line(const tl_lca_summary *s, tl_buf *b, put_fn tag)
{
    int h0 = graph_heavy(&s->cover[0]), h1 = graph_heavy(&s->cover[1]);
    if (!h0 && !h1)
        return 0;
    for (int k = 0, first = 1; k < 2; k++) {
        if (!(k ? h1 : h0))
            continue;
        tl_buf_printf(b, "%s%.1f%% of ", first ? "" : " and ",
                      100 * share(s->cover[k].graph_capture_us, s->cover[k].busy_us));
        tag(b, k ? s->tag2 : s->tag1);
        tl_buf_adds(b, "'s");
        first = 0;
    }
    tl_buf_adds(b, " GPU time is under graph launches (cudaGraphLaunch / hipGraphLaunch), which no CPU op "
                   "attributes: give the trace's capture folder (TRACE@CAPTURE_DIR) to attribute it to ops; "
                   "without it, kernel_summary compares it kernel by kernel");
    return 1;
}

/* "±1.3%": the half-width of the kind's interval in percent of its baseline time, or ""
 * when untested. */
static void fmt_pm(const tl_lca_item *it, char *buf, size_t n)
{
    double half = (it->ci_hi - it->ci_lo) / 2;
    if (it->verdict == TL_VERDICT_NONE || isnan(half) || !(it->ms1 > 0))
        buf[0] = '\0';
    else
        snprintf(buf, n, "\xc2\xb1%.1f%%", 100 * half / it->ms1);
}

/* "(288 aligned, 24 distinct: 10 slower, 14 faster, 3 within noise)" */
static void counts_text(const tl_lca_summary *s, char *buf, size_t n)
{
    int w = snprintf(buf, n, "(%zu aligned, %zu distinct: %zu slower, %zu faster", s->nlcas, s->ngroups, s->nslower,
                     s->nfaster);
    if (w >= 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, s->within_noise ? ", %zu within noise)" : ")", s->within_noise);
}

/* ---- the terminal ------------------------------------------------------------------------- */

/* Names on the terminal and in Markdown are cut to about this many characters (a kernel
 * name can run to thousands); CSV, JSON and the workbook have them whole. */
#define NAME_MAX_SHOWN 60

/* s cut to `max` bytes at a character boundary, "..." marking the cut. */
static const char *cut(tl_buf *tmp, const char *s, size_t max)
{
    tmp->len = 0;
    size_t n = strlen(s);
    if (n <= max) {
        tl_buf_adds(tmp, s);
    } else {
        size_t keep = max - 3;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* do not cut a UTF-8 character in two */
        tl_buf_add(tmp, s, keep);
        tl_buf_adds(tmp, "...");
    }
    return tl_buf_cstr(tmp);
}

/* The name column: the op, how many LCAs, and the label of a moved pair. */
static void name_cell(tl_buf *b, const tl_lca_item *it, put_fn put)
{
    char suffix[80];
    if (it->unaligned)
        snprintf(suffix, sizeof suffix, " (not aligned: under different ops on each side)");
    else if (it->count > 1)
        snprintf(suffix, sizeof suffix, " (x%zu)", it->count);
    else
        suffix[0] = '\0';
    /* the name gives way to its count, so that the column stays aligned; an unaligned
     * pair's name ("a | b") is never cut: cut, two different pairs could read alike */
    size_t room = strlen(suffix) + 12 < NAME_MAX_SHOWN ? NAME_MAX_SHOWN - strlen(suffix) : 12;
    tl_buf tmp = {0};
    put(b, it->unaligned ? it->lca : cut(&tmp, it->lca, room));
    tl_buf_free(&tmp);
    tl_buf_adds(b, suffix);
}

/* "5 -> 6 kernels, aten::miopen_convolution -> aten::cudnn_convolution" (the ops left out
 * when they are the LCA itself on both sides). */
static void kernels_cell(tl_buf *b, const tl_lca_item *it, put_fn put)
{
    tl_buf_printf(b, "%zu -> %zu kernel%s", it->n1, it->n2, it->n2 == 1 ? "" : "s");
    /* the LCA reads "a | b" when each side's op is its own */
    size_t l = strlen(it->lca), l1 = strlen(it->ops1), l2 = strlen(it->ops2);
    int same1 = !l1 || !strcmp(it->ops1, it->lca) || (l > l1 + 3 && !strncmp(it->lca, it->ops1, l1) &&
                                                        !strncmp(it->lca + l1, " | ", 3));
    int same2 = !l2 || !strcmp(it->ops2, it->lca) || (l > l2 + 3 && !strcmp(it->lca + l - l2, it->ops2) &&
                                                        !strncmp(it->lca + l - l2 - 3, " | ", 3));
    if (same1 && same2)
        return;
    tl_buf tmp = {0};
    tl_buf_adds(b, ", ");
    put(b, *it->ops1 ? cut(&tmp, it->ops1, NAME_MAX_SHOWN) : "-");
    tl_buf_adds(b, " -> ");
    put(b, *it->ops2 ? cut(&tmp, it->ops2, NAME_MAX_SHOWN) : "-");
    tl_buf_free(&tmp);
}

void tl_lca_summary_print(const tl_lca_summary *s, FILE *out, int color)
{
    if (!s->nlcas && s->cover[0].busy_us <= 0 && s->cover[1].busy_us <= 0)
        return;
    const char *bold = color ? "\x1b[1m" : "", *off = color ? "\x1b[0m" : "";
    tl_buf b = {0}, t1 = {0}, t2 = {0};
    put_plain(&t1, s->tag1);
    put_plain(&t2, s->tag2);
    char counts[160];
    counts_text(s, counts, sizeof counts);
    fprintf(out, "\n%s%s -> %s by lowest common op%s %s\n", bold, tl_buf_cstr(&t1), tl_buf_cstr(&t2), off, counts);
    cover_line(s, &b, put_plain);
    fprintf(out, "  GPU time under these ops: %s\n", tl_buf_cstr(&b));
    b.len = 0;
    if (rest_line(s, &b, put_plain))
        fprintf(out, "  not under them: %s\n", tl_buf_cstr(&b));
    b.len = 0;
    if (low_cover(s)) {
        low_cover_line(s, &b, put_plain);
        fprintf(out, "  %slow coverage%s: %s\n", bold, off, tl_buf_cstr(&b));
    }
    b.len = 0;
    if (graph_line(s, &b, put_plain))
        fprintf(out, "  %sgraph replay%s: %s\n", bold, off, tl_buf_cstr(&b));
    if (!s->ntop) {
        fprintf(out, "  %s\n", !s->nlcas       ? "no lowest common op: the two call trees share no op with GPU work"
                               : s->within_noise ? "no changes larger than the noise"
                                                 : "no changes: every lowest common op takes the same time on both sides");
    } else {
        b.len = 0;
        tl_buf_printf(&b, "%s -> %s (ms), kernels", tl_buf_cstr(&t1), tl_buf_cstr(&t2));
        fprintf(out, "    %14s %9s %-7s  %-60s %s\n", "delta", "%", "", "lowest common op", tl_buf_cstr(&b));
    }
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        const char *tint = !color ? "" : it->delta_ms > 0 ? "\x1b[31m" : it->delta_ms < 0 ? "\x1b[32m" : "";
        char d[32], pc[32];
        snprintf(d, sizeof d, "%+.3f ms", it->delta_ms);
        if (isnan(it->pct))
            snprintf(pc, sizeof pc, "new");
        else
            snprintf(pc, sizeof pc, fabs(it->pct) >= 99999.95 ? "%+.1e%%" : "%+.1f%%", it->pct); /* 9 characters */
        char pm[32];
        fmt_pm(it, pm, sizeof pm);
        b.len = 0;
        name_cell(&b, it, put_plain);
        /* ±x.x% is 7 characters wide (the sign two bytes) */
        fprintf(out, "    %s%14s %9s %-*s%s  %-60s ", tint, d, pc, pm[0] ? 8 : 7, pm, color ? off : "",
                tl_buf_cstr(&b));
        b.len = 0;
        kernels_cell(&b, it, put_plain);
        fprintf(out, "%.3f -> %.3f, %s\n", it->ms1, it->ms2, tl_buf_cstr(&b));
    }
    char line[512];
    tl_lca_summary_verdict_line(s, line, sizeof line);
    if (line[0])
        fprintf(out, "  %s%s%s\n", color ? "\x1b[2m" : "", line, color ? off : "");
    tl_buf_free(&b);
    tl_buf_free(&t1);
    tl_buf_free(&t2);
}

/* A name on the terminal: no control characters. */
static void put_name(FILE *out, const char *s)
{
    for (const char *c = s; *c; c++)
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}

void tl_lca_summary_print_violations(const tl_lca_summary *s, FILE *out)
{
    enum { MAX_LINES = 20 };
    for (size_t i = 0; i < s->nviolations; i++) {
        const tl_lca_item *it = &s->violations[i];
        if (i == MAX_LINES) {
            fprintf(out, "tlcompare: regression: %s: and %zu more lowest common ops (--summary-json lists them all)\n",
                    s->tag2, s->nviolations - MAX_LINES);
            break;
        }
        fprintf(out, "tlcompare: regression: %s lowest common op ", s->tag2);
        put_name(out, it->lca);
        if (it->count > 1)
            fprintf(out, " (x%zu)", it->count);
        fprintf(out, ": %.3f ms -> %.3f ms (%+.1f%%, limit %g%%)\n", it->ms1, it->ms2, it->pct, s->gate_pct);
    }
}

/* Markdown text: `|` and backticks would end the cell or the code span. */
static void md_code(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '`');
    for (const char *c = s; *c; c++) {
        if (*c == '|')
            tl_buf_adds(b, "\\|");
        else if (*c == '`' || (unsigned char)*c < 0x20)
            tl_buf_addc(b, '\'');
        else
            tl_buf_addc(b, *c);
    }
    tl_buf_addc(b, '`');
}

void tl_lca_summary_markdown(const tl_lca_summary *s, tl_buf *b)
{
    if (!s->nlcas && s->cover[0].busy_us <= 0 && s->cover[1].busy_us <= 0)
        return;
    tl_buf_adds(b, "\n**");
    md_code(b, s->tag1);
    tl_buf_adds(b, " -> ");
    md_code(b, s->tag2);
    char counts[160];
    counts_text(s, counts, sizeof counts);
    tl_buf_printf(b, " by lowest common op** %s\n\n", counts);
    tl_buf_adds(b, "- GPU time under these ops: ");
    cover_line(s, b, md_code);
    tl_buf_adds(b, "\n");
    tl_buf rest = {0};
    if (rest_line(s, &rest, md_code))
        tl_buf_printf(b, "- not under them: %s\n", tl_buf_cstr(&rest));
    rest.len = 0;
    if (low_cover(s)) {
        low_cover_line(s, &rest, md_code);
        tl_buf_printf(b, "- **low coverage**: %s\n", tl_buf_cstr(&rest));
    }
    rest.len = 0;
    if (graph_line(s, &rest, md_code))
        tl_buf_printf(b, "- **graph replay**: %s\n", tl_buf_cstr(&rest));
    tl_buf_free(&rest);
    char line[512];
    tl_lca_summary_verdict_line(s, line, sizeof line);
    if (!s->ntop) {
        tl_buf_adds(b, !s->nlcas       ? "- no lowest common op: the two call trees share no op with GPU work\n"
                       : s->within_noise ? "- no changes larger than the noise\n"
                                         : "- no changes: every lowest common op takes the same time on both sides\n");
        if (line[0])
            tl_buf_printf(b, "\n_%s._\n", line);
        return;
    }
    tl_buf_adds(b, "\n| lowest common op | ");
    md_code(b, s->tag1);
    tl_buf_adds(b, " (ms) | ");
    md_code(b, s->tag2);
    tl_buf_adds(b, " (ms) | delta (ms) | delta % | kernels, ops |\n|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        tl_buf_adds(b, "| ");
        name_cell(b, it, md_code);
        tl_buf_printf(b, " | %.3f | %.3f | %+.3f | ", it->ms1, it->ms2, it->delta_ms);
        char pm[32];
        fmt_pm(it, pm, sizeof pm);
        if (isnan(it->pct))
            tl_buf_adds(b, "new | ");
        else
            tl_buf_printf(b, "%+.1f%%%s%s | ", it->pct, pm[0] ? " " : "", pm);
        kernels_cell(b, it, md_code);
        tl_buf_adds(b, " |\n");
    }
    if (line[0])
        tl_buf_printf(b, "\n_%s._\n", line);
}

static void js_item(tl_buf *b, const tl_lca_item *it)
{
    tl_buf_adds(b, "{\"lca\": ");
    tl_json_str(b, it->lca);
    tl_buf_adds(b, ", \"node\": ");
    tl_json_str(b, it->node);
    tl_buf_printf(b, ", \"count\": %zu, \"unaligned\": %s", it->count, it->unaligned ? "true" : "false");
    for (int side = 0; side < 2; side++) {
        tl_buf_adds(b, side ? ", \"variant\": {\"ops\": " : ", \"baseline\": {\"ops\": ");
        tl_json_str(b, side ? it->ops2 : it->ops1);
        tl_buf_printf(b, ", \"kernels\": %zu, \"ms\": ", side ? it->n2 : it->n1);
        tl_json_num(b, side ? it->ms2 : it->ms1);
        tl_buf_addc(b, '}');
    }
    tl_buf_adds(b, ", \"delta_ms\": ");
    tl_json_num(b, it->delta_ms);
    tl_buf_adds(b, ", \"pct\": ");
    tl_json_num(b, it->pct);
    /* the verdict's fields as the ops have them (n: the pairs, on each side) */
    tl_summary_item v = {.ci_lo = it->ci_lo, .ci_hi = it->ci_hi, .p = it->p, .verdict = it->verdict,
                         .n_base = it->npairs, .n_var = it->npairs};
    tl_verdict_json_item(b, &v);
    tl_buf_addc(b, '}');
}

static void js_cover(tl_buf *b, const tl_diff_cover *c)
{
    const double v[] = {c->busy_us, c->lca_us, c->unmatched_us, c->graph_us, c->outside_us, c->graph_all_us};
    static const char *const k[] = {"busy_ms", "lca_ms", "one_sided_top_level_ms", "graph_launch_ms",
                                    "outside_ms", "graph_launch_all_ms"};
    tl_buf_addc(b, '{');
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        tl_buf_printf(b, "%s\"%s\": ", i ? ", " : "", k[i]);
        tl_json_num(b, v[i] / 1e3);
    }
    tl_buf_adds(b, ", \"lca_share\": ");
    tl_json_num(b, share(c->lca_us, c->busy_us));
    tl_buf_printf(b, ", \"graph_replay\": %s}", graph_heavy(c) ? "true" : "false");
}

void tl_lca_summary_json(const tl_lca_summary *s, tl_buf *b)
{
    tl_buf_adds(b, "{\"baseline\": ");
    tl_json_str(b, s->tag1);
    tl_buf_adds(b, ", \"variant\": ");
    tl_json_str(b, s->tag2);
    tl_buf_printf(b, ", \"count\": %zu, \"distinct\": %zu, \"slower\": %zu, \"faster\": %zu,\n    \"verdicts\": ",
                  s->nlcas, s->ngroups, s->nslower, s->nfaster);
    if (s->tested) {
        char basis[192] = "paired LCAs, 1 run per side";
        if (s->tested_by_steps)
            snprintf(basis, sizeof basis, "between-step spread, %s%s", s->steps_basis,
                     s->tested_by_steps < s->tested ? "; the rest paired LCAs" : "");
        tl_buf_adds(b, "{\"basis\": ");
        tl_json_str(b, basis);
        tl_buf_printf(b, ", \"confidence\": %g, \"control\": \"%s\", \"tested\": %zu, \"within_noise\": %zu}",
                      s->confidence, s->fdr ? "fdr" : "fwer", s->tested, s->within_noise);
    }
    else
        tl_buf_adds(b, "null");
    tl_buf_adds(b, ",\n    \"coverage\": {\"baseline\": ");
    js_cover(b, &s->cover[0]);
    tl_buf_adds(b, ",\n                 \"variant\": ");
    js_cover(b, &s->cover[1]);
    tl_buf_printf(b, ",\n                 \"low\": %s},\n    \"top\": [", low_cover(s) ? "true" : "false");
    for (size_t i = 0; i < s->ntop; i++) {
        tl_buf_adds(b, i ? ",\n      " : "\n      ");
        js_item(b, &s->top[i]);
    }
    tl_buf_adds(b, s->ntop ? "\n    ],\n    \"violations\": [" : "],\n    \"violations\": [");
    for (size_t i = 0; i < s->nviolations; i++) {
        tl_buf_adds(b, i ? ",\n      " : "\n      ");
        js_item(b, &s->violations[i]);
    }
    tl_buf_adds(b, s->nviolations ? "\n    ]}" : "]}");
}

tl_table *tl_lca_summary_table(const tl_lca_summary *s, tl_arena *a)
{
    const char *cols[] = {"lowest common op", "count",
                          tl_arena_printf(a, "%s ops", s->tag1),
                          tl_arena_printf(a, "%s kernels", s->tag1),
                          tl_arena_printf(a, "%s (ms)", s->tag1),
                          tl_arena_printf(a, "%s ops", s->tag2),
                          tl_arena_printf(a, "%s kernels", s->tag2),
                          tl_arena_printf(a, "%s (ms)", s->tag2),
                          "delta (ms)",
                          "delta %",
                          tl_arena_printf(a, "\xc2\xb1 %% (%g%% interval)", 100 * s->confidence),
                          "verdict",
                          "interval low (ms)",
                          "interval high (ms)",
                          "lca_summary name"};
    tl_table *t = tl_table_new();
    t->nrows = s->ntop;
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        tl_table_add_column(t, tl_arena_strdup(a, cols[c]));
    for (size_t i = 0; i < s->ntop; i++) {
        const tl_lca_item *it = &s->top[i];
        t->cols[0].cells[i] = tl_cell_str(it->unaligned ? tl_arena_printf(a, "%s (not aligned)", it->lca) : it->lca);
        t->cols[1].cells[i] = tl_cell_int((int64_t)it->count);
        t->cols[2].cells[i] = tl_cell_str(it->ops1);
        t->cols[3].cells[i] = tl_cell_int((int64_t)it->n1);
        t->cols[4].cells[i] = tl_cell_float(it->ms1);
        t->cols[5].cells[i] = tl_cell_str(it->ops2);
        t->cols[6].cells[i] = tl_cell_int((int64_t)it->n2);
        t->cols[7].cells[i] = tl_cell_float(it->ms2);
        t->cols[8].cells[i] = tl_cell_float(it->delta_ms);
        t->cols[9].cells[i] = isnan(it->pct) ? tl_cell_missing() : tl_cell_float(it->pct);
        int tested = it->verdict != TL_VERDICT_NONE;
        double half = (it->ci_hi - it->ci_lo) / 2;
        t->cols[10].cells[i] = tested && it->ms1 > 0 && !isnan(half) ? tl_cell_float(100 * half / it->ms1)
                                                                      : tl_cell_missing();
        t->cols[11].cells[i] = tested ? tl_cell_str(tl_verdict_name(it->verdict)) : tl_cell_missing();
        t->cols[12].cells[i] = tested && !isnan(it->ci_lo) ? tl_cell_float(it->ci_lo) : tl_cell_missing();
        t->cols[13].cells[i] = tested && !isnan(it->ci_hi) ? tl_cell_float(it->ci_hi) : tl_cell_missing();
        t->cols[14].cells[i] = tl_cell_str(it->node);
    }
    t->cols[8].role = t->cols[9].role = TL_ROLE_DIFF;
    return t;
}

tl_table *tl_lca_summary_cover_table(const tl_lca_summary *s, tl_arena *a)
{
    static const char *const cols[] = {"trace", "GPU busy (ms)", "under the LCAs (ms)", "under the LCAs %",
                                       "top-level ops only this trace has (ms)", "graph launches (ms)",
                                       "launched outside every op (ms)"};
    tl_table *t = tl_table_new();
    t->nrows = 2;
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        tl_table_add_column(t, tl_arena_strdup(a, cols[c]));
    for (size_t k = 0; k < 2; k++) {
        const tl_diff_cover *c = &s->cover[k];
        t->cols[0].cells[k] = tl_cell_str(k ? s->tag2 : s->tag1);
        t->cols[1].cells[k] = tl_cell_float(c->busy_us / 1e3);
        t->cols[2].cells[k] = tl_cell_float(c->lca_us / 1e3);
        t->cols[3].cells[k] = tl_cell_float(100 * share(c->lca_us, c->busy_us));
        t->cols[4].cells[k] = tl_cell_float(c->unmatched_us / 1e3);
        t->cols[5].cells[k] = tl_cell_float(c->graph_us / 1e3);
        t->cols[6].cells[k] = tl_cell_float(c->outside_us / 1e3);
    }
    return t;
}
