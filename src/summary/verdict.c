/*
 * verdict.c - the noise of the data, and the verdicts on the changes (see verdict.h).
 */
#include "summary/verdict.h"

#include "base/arena.h"
#include "base/hash.h"
#include "base/jsonw.h"
#include "base/sort.h"
#include "compare/groups.h"
#include "diff/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ops_unique_args' columns: the calls' count, mean and std of the direct kernel time (µs). */
#define UA_SHEET "ops_unique_args"
#define UA_COUNT "operation_count"
#define UA_MEAN "total_direct_kernel_time_mean"
#define UA_STD "total_direct_kernel_time_std"
/* ops_summary's time (ms), whose run-to-run spread a repeated tag gives */
#define OS_SHEET "ops_summary"
#define OS_TIME "total_direct_kernel_time_ms"

/* The roofline sheets' columns: per op and argument set, the calls' count, mean and std of
 * their kernel time (µs); unified_perf_summary counts in operation_count, the family
 * sheets (GEMM, SDPA_fwd, ...) in name_count. */
#define RF_UNIFIED "unified_perf_summary"
#define RF_MEAN "Kernel Time (\xc2\xb5s)_mean"
#define RF_STD "Kernel Time (\xc2\xb5s)_std"

/* Where an op's per-call samples come from, best first: ops_unique_args (every op, its
 * direct kernel time), unified_perf_summary (every modelled op once), a family sheet (the
 * first that has the op: a _bwd sheet may list a name again). */
enum { SRC_UA, SRC_UNIFIED, SRC_FAMILY, SRC_N };

/* One source's samples of an op on one side. */
typedef struct op_calls {
    tl_moments calls; /* µs: all the calls pooled */
    /* the argument sets as strata: the calls' spread within each set, relative to the set's
     * own mean and pooled over the sets (sum of (n_s - 1) cv_s^2 on sum(n_s - 1) degrees of
     * freedom), and the weight that turns it back into the variance of the op's total,
     * w = sum n_s m_s^2 (µs^2).  The spread between sets is the shapes', never noise; and
     * relative, since a call's noise scales with its time (a 3 ms shape's spread says
     * nothing of a 10 µs shape's in microseconds). */
    double rss, rdf, w;
    size_t strata;
    const char *sheet; /* SRC_FAMILY: the sheet they came from (the first that had the op) */
} op_calls;

/* Two traces: an op's calls paired through the alignment (tl_noise_pair_calls), in ms. */
typedef struct op_pairs {
    double n;        /* paired calls */
    /* the spread of the pairs' differences within argument sets, each difference relative
     * to its set's mean baseline call: sum of squared deviations on rdf degrees of freedom */
    double rss, rdf;
    double w;        /* sum over argument sets of n_s m_s^2 (m_s: the set's mean baseline call) */
    double base, var; /* the paired calls' times added up, each side */
    double u1, u2;   /* calls on one side only, each side */
    double u1_ms, u2_ms;
} op_pairs;

/* One op on every side. */
typedef struct op_noise {
    op_calls *src;     /* per side and source: [side * SRC_N + source] */
    double *run_var;   /* per side: the variance of the op's time between runs (ms^2), NaN unknown */
    op_pairs *pairs;   /* side 1 against side 0 (two traces), or NULL */
    double *steps;     /* two traces with steps: the op's time (ms) in each kept step, side 0's
                        * then side 1's (tl_noise_add_steps), or NULL */
} op_noise;

/* gpu_timeline's busy_time row, whose run-to-run spread a repeated tag gives */
#define TL_SHEET "gpu_timeline"
#define TL_TIME "time ms"

struct tl_noise {
    size_t nsides;
    char **tags;
    size_t *runs;
    double *busy_var; /* per side: the variance of the busy time between runs (ms^2), NaN unknown */
    int ranks;        /* the runs are ranks */
    tl_strmap names; /* op name -> index + 1 into ops */
    op_noise *ops;
    size_t nops, cap;
    tl_arena arena; /* the names: the results' strings live in arenas that are reused */
    tl_sink next;
    size_t paired_ops; /* ops with paired calls (tl_noise_pair_calls) */
    /* two traces with steps (tl_noise_add_steps): each side's kept steps, their busy times
     * (ms), how many steps each trace has, and the first kept (1-based) */
    size_t nsteps[2], all_steps[2], first_step[2];
    double *busy_steps[2];
};

tl_noise *tl_noise_new(const char *const *tags, size_t n)
{
    tl_noise *nz = tl_xcalloc(1, sizeof *nz);
    nz->nsides = n;
    nz->tags = tl_xcalloc(n ? n : 1, sizeof *nz->tags);
    nz->runs = tl_xcalloc(n ? n : 1, sizeof *nz->runs);
    nz->busy_var = tl_xcalloc(n ? n : 1, sizeof *nz->busy_var);
    for (size_t i = 0; i < n; i++) {
        nz->tags[i] = tl_xstrdup(tags[i]);
        nz->runs[i] = 1;
        nz->busy_var[i] = NAN;
    }
    tl_arena_init(&nz->arena);
    return nz;
}

void tl_noise_free(tl_noise *nz)
{
    if (!nz)
        return;
    for (size_t i = 0; i < nz->nsides; i++)
        free(nz->tags[i]);
    for (size_t i = 0; i < nz->nops; i++) {
        free(nz->ops[i].src);
        free(nz->ops[i].run_var);
        free(nz->ops[i].pairs);
    }
    for (size_t i = 0; i < nz->nops; i++)
        free(nz->ops[i].steps);
    free(nz->busy_steps[0]);
    free(nz->busy_steps[1]);
    free(nz->ops);
    free(nz->tags);
    free(nz->runs);
    free(nz->busy_var);
    tl_strmap_clear(&nz->names);
    tl_arena_free(&nz->arena);
    free(nz);
}

static op_noise *op_of(tl_noise *nz, const char *name)
{
    const tl_strmap_slot *f = tl_strmap_find(&nz->names, name);
    if (f)
        return &nz->ops[f->value - 1];
    TL_GROW(nz->ops, nz->cap, nz->nops + 1);
    op_noise *op = &nz->ops[nz->nops++];
    op->src = tl_xcalloc(nz->nsides * SRC_N, sizeof *op->src);
    op->run_var = tl_xmalloc(nz->nsides * sizeof *op->run_var);
    op->pairs = NULL;
    op->steps = NULL;
    for (size_t i = 0; i < nz->nsides; i++)
        op->run_var[i] = NAN;
    tl_strmap_get(&nz->names, tl_arena_strdup(&nz->arena, name))->value = nz->nops;
    return op;
}

static const op_noise *find_op(const tl_noise *nz, const char *name)
{
    const tl_strmap_slot *f = tl_strmap_find(&nz->names, name);
    return f ? &nz->ops[f->value - 1] : NULL;
}

/* A sheet the per-call samples are read from: its source and columns. */
typedef struct sample_sheet {
    int src;
    const char *count, *mean, *std;
} sample_sheet;

static const sample_sheet ua_sheet = {SRC_UA, UA_COUNT, UA_MEAN, UA_STD};
static const sample_sheet unified_sheet = {SRC_UNIFIED, "operation_count", RF_MEAN, RF_STD};
static const sample_sheet family_sheet = {SRC_FAMILY, "name_count", RF_MEAN, RF_STD};

/* Pool the rows of side `side` in a result of sheet `sheet` (kind `ss`). */
static void pool_rows(tl_noise *nz, const tl_table *t, size_t side, const sample_sheet *ss, const char *sheet)
{
    long key = tl_table_find(t, "name");
    const tl_column *cc = tl_table_tagged(t, nz->tags[side], ss->count), *mc = tl_table_tagged(t, nz->tags[side], ss->mean),
                    *sc = tl_table_tagged(t, nz->tags[side], ss->std);
    if (key < 0 || !cc || !mc)
        return;
    for (size_t r = 0; r < t->nrows; r++) {
        const tl_cell *k = &t->cols[key].cells[r];
        double n = tl_column_number_at(cc, r), mean = tl_column_number_at(mc, r);
        if (k->kind != TL_STR || !(n >= 1) || isnan(mean))
            continue;
        tl_moments m = tl_moments_of(n, mean, tl_column_number_at(sc, r));
        op_noise *op = op_of(nz, k->v.s);
        op_calls *c = &op->src[side * SRC_N + (size_t)ss->src];
        if (ss->src == SRC_FAMILY) {
            /* the first family sheet that has the op is its source (its split results alike) */
            if (!c->sheet)
                c->sheet = tl_arena_strdup(&nz->arena, sheet);
            else if (strcmp(c->sheet, sheet) != 0)
                continue;
        }
        tl_moments_merge(&c->calls, &m);
        c->w += n * mean * mean;
        c->strata++;
        if (n >= 2 && !isnan(m.m2) && mean > 0) {
            c->rss += m.m2 / (mean * mean);
            c->rdf += n - 1;
        }
    }
}

/* The best source of op's samples on side `side`, or NULL when none has a call. */
static const op_calls *calls_of(const op_noise *op, size_t side)
{
    for (size_t k = 0; k < SRC_N; k++)
        if (op->src[side * SRC_N + k].calls.n >= 1)
            return &op->src[side * SRC_N + k];
    return NULL;
}

/* The side whose tag is `tag`, or SIZE_MAX. */
static size_t side_of(const tl_noise *nz, const char *tag)
{
    for (size_t i = 0; i < nz->nsides; i++)
        if (strcmp(nz->tags[i], tag) == 0)
            return i;
    return SIZE_MAX;
}

/*
 * Which sides' rows a result holds once: <sheet>_intersect_<t> holds the baseline's rows and
 * t's found in both, _only_baseline_<t> the baseline's others, _only_variant_<t> t's others.
 * The baseline's rows are taken from the first variant's results only (every variant's split
 * holds them all).
 */
static void take_split(tl_noise *nz, const tl_result *r, const char *sheet, const sample_sheet *ss)
{
    static const char *const parts[] = {"_intersect_", "_only_baseline_", "_only_variant_"};
    size_t ls = strlen(sheet);
    if (strncmp(r->name, sheet, ls) != 0)
        return;
    for (int k = 0; k < 3; k++) {
        size_t lp = strlen(parts[k]);
        if (strncmp(r->name + ls, parts[k], lp) != 0)
            continue;
        size_t v = side_of(nz, r->name + ls + lp);
        if (v == SIZE_MAX || v == 0)
            return;
        if (k != 2 && v == 1)
            pool_rows(nz, r->table, 0, ss, sheet);
        if (k != 1)
            pool_rows(nz, r->table, v, ss, sheet);
        return;
    }
}

static void take(tl_noise *nz, const tl_result *r)
{
    if (!r->table || nz->nsides < 2)
        return;
    take_split(nz, r, UA_SHEET, &ua_sheet);
    take_split(nz, r, RF_UNIFIED, &unified_sheet);
    for (size_t i = 0; tl_perf_result_stem(i); i++)
        take_split(nz, r, tl_perf_result_stem(i), &family_sheet);
}

static int tap_put(void *ctx, const tl_result *r, tl_error *err)
{
    tl_noise *nz = ctx;
    take(nz, r);
    return nz->next.put(nz->next.ctx, r, err);
}

static int tap_sync(void *ctx, size_t upto, tl_error *err)
{
    tl_noise *nz = ctx;
    return nz->next.sync ? nz->next.sync(nz->next.ctx, upto, err) : 0;
}

tl_sink tl_noise_tap(tl_noise *nz, const tl_sink *next)
{
    nz->next = *next;
    return (tl_sink){tap_put, tap_sync, nz};
}

const tl_moments *tl_noise_calls(const tl_noise *nz, size_t side, const char *name)
{
    const op_noise *op = nz && side < nz->nsides ? find_op(nz, name) : NULL;
    const op_calls *c = op ? calls_of(op, side) : NULL;
    return c ? &c->calls : NULL;
}

/* The result named `name`, or NULL. */
static const tl_table *result_table(const tl_results *results, const char *name)
{
    for (size_t i = 0; i < results->n; i++)
        if (strcmp(results->items[i].name, name) == 0)
            return results->items[i].table;
    return NULL;
}

/* The busy time's spread between runs, of each side with runs (gpu_timeline's busy_time
 * rows: a recompute report splits a type in two, whose spreads add as independent). */
static void read_busy_runs(tl_noise *nz, const tl_table *t)
{
    long key = t ? tl_table_find(t, "type") : -1;
    if (key < 0)
        return;
    for (size_t side = 0; side < nz->nsides; side++) {
        const tl_column *rc = tl_table_tagged(t, nz->tags[side], "runs"), *sc = tl_table_tagged(t, nz->tags[side], TL_TIME "_std");
        if (!rc || !sc)
            continue;
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *k = &t->cols[key].cells[r];
            double sd = tl_column_number_at(sc, r), runs = tl_column_number_at(rc, r);
            if (k->kind != TL_STR || strcmp(k->v.s, "busy_time") != 0 || isnan(sd) || !(runs >= 2))
                continue;
            if (runs > nz->runs[side])
                nz->runs[side] = (size_t)runs;
            nz->busy_var[side] = (isnan(nz->busy_var[side]) ? 0 : nz->busy_var[side]) + sd * sd;
        }
    }
}

void tl_noise_read_runs(tl_noise *nz, const tl_results *results)
{
    read_busy_runs(nz, result_table(results, TL_SHEET));
    const tl_table *t = result_table(results, OS_SHEET);
    long key = t ? tl_table_find(t, "name") : -1;
    if (key < 0)
        return;
    for (size_t side = 0; side < nz->nsides; side++) {
        const tl_column *rc = tl_table_tagged(t, nz->tags[side], "runs"), *sc = tl_table_tagged(t, nz->tags[side], OS_TIME "_std");
        if (!rc || !sc)
            continue;
        for (size_t r = 0; r < t->nrows; r++) {
            double runs = tl_column_number_at(rc, r), sd = tl_column_number_at(sc, r);
            const tl_cell *k = &t->cols[key].cells[r];
            if (k->kind != TL_STR || !(runs >= 1))
                continue;
            if (runs > nz->runs[side])
                nz->runs[side] = (size_t)runs;
            op_noise *op = op_of(nz, k->v.s);
            /* rows of one name (split by a row key) add up, their spreads as independent */
            double v = isnan(sd) ? NAN : sd * sd;
            op->run_var[side] = isnan(op->run_var[side]) ? v : op->run_var[side] + v;
        }
    }
}

size_t tl_noise_runs(const tl_noise *nz, size_t side) { return nz && side < nz->nsides ? nz->runs[side] : 1; }

/* ---- paired calls ----------------------------------------------------------------------- */

typedef struct calls_ctx {
    const tl_diff_call *c;
} calls_ctx;

/* By name, then argument set; the paired calls of one set together. */
static int by_name_shape(size_t a, size_t b, void *ctx)
{
    const tl_diff_call *c = ((const calls_ctx *)ctx)->c;
    int r = strcmp(c[a].name ? c[a].name : "", c[b].name ? c[b].name : "");
    if (!r)
        r = c[a].shape < c[b].shape ? -1 : c[a].shape > c[b].shape;
    return r;
}

/* Add the calls c[idx[0..k)] of one op and argument set to `p`. */
static void pair_shape(op_pairs *p, const tl_diff_call *c, const size_t *idx, size_t k)
{
    tl_moments base = {0, 0, 0}, diff = {0, 0, 0};
    for (size_t i = 0; i < k; i++) {
        const tl_diff_call *x = &c[idx[i]];
        if (isnan(x->us2)) {
            p->u1++, p->u1_ms += x->us1 * 1e-3;
        } else if (isnan(x->us1)) {
            p->u2++, p->u2_ms += x->us2 * 1e-3;
        } else {
            tl_moments_add(&base, x->us1 * 1e-3);
            tl_moments_add(&diff, (x->us2 - x->us1) * 1e-3);
            p->base += x->us1 * 1e-3;
            p->var += x->us2 * 1e-3;
        }
    }
    if (!(base.n >= 1))
        return;
    p->n += base.n;
    p->w += base.n * base.mean * base.mean;
    if (base.n >= 2 && base.mean > 0) {
        p->rss += diff.m2 / (base.mean * base.mean);
        p->rdf += base.n - 1;
    }
}

void tl_noise_pair_calls(tl_noise *nz, const tl_diff *d)
{
    if (!nz || !d || nz->nsides != 2)
        return;
    tl_diff_call *c = NULL;
    size_t n = tl_diff_calls(d, &c);
    tl_noise_add_calls(nz, c, n);
    free(c);
}

void tl_noise_add_calls(tl_noise *nz, const tl_diff_call *c, size_t n)
{
    if (!nz || nz->nsides != 2)
        return;
    size_t *ord = tl_xmalloc((n ? n : 1) * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    calls_ctx cc = {c};
    tl_sort_rows(ord, n, by_name_shape, &cc);
    for (size_t i = 0; i < n;) {
        op_noise *op = op_of(nz, c[ord[i]].name ? c[ord[i]].name : "");
        if (!op->pairs)
            op->pairs = tl_xcalloc(1, sizeof *op->pairs);
        size_t j = i;
        for (; j < n && by_name_shape(ord[i], ord[j], &cc) == 0; j++)
            ;
        pair_shape(op->pairs, c, ord + i, j - i);
        i = j;
    }
    nz->paired_ops = 0;
    for (size_t i = 0; i < nz->nops; i++)
        nz->paired_ops += nz->ops[i].pairs && nz->ops[i].pairs->n > 0;
    free(ord);
}

/* ---- steps ------------------------------------------------------------------------------ */

void tl_noise_add_steps(tl_noise *nz, const tl_step_side *a, const tl_step_side *b)
{
    if (!nz || nz->nsides != 2 || a->n < TL_STEPS_MIN || b->n < TL_STEPS_MIN)
        return;
    const tl_step_side *side[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        nz->nsteps[k] = side[k]->n;
        nz->all_steps[k] = side[k]->all;
        nz->first_step[k] = side[k]->first;
        nz->busy_steps[k] = tl_xmalloc(side[k]->n * sizeof *nz->busy_steps[k]);
        memcpy(nz->busy_steps[k], side[k]->busy_ms, side[k]->n * sizeof *nz->busy_steps[k]);
    }
    size_t na = a->n, nb = b->n;
    for (int k = 0; k < 2; k++) {
        for (size_t o = 0; o < side[k]->nops; o++) {
            op_noise *op = op_of(nz, side[k]->op[o] ? side[k]->op[o] : "");
            if (!op->steps)
                op->steps = tl_xcalloc(na + nb, sizeof *op->steps);
            for (size_t s = 0; s < side[k]->n; s++)
                op->steps[(k ? na : 0) + s] += side[k]->ms[o * side[k]->n + s];
        }
    }
}

size_t tl_noise_steps(const tl_noise *nz, size_t side)
{
    return nz && nz->nsides == 2 && side < 2 ? nz->nsteps[side] : 0;
}

/* The mean and variance (n - 1) of x[0..n). */
static tl_moments moments_of(const double *x, size_t n)
{
    tl_moments m = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        tl_moments_add(&m, x[i]);
    return m;
}

/*
 * Steps as samples: the per-step values x (side 0, na steps) and y (side 1, nb) of a time
 * whose totals are base (side 0) and var.  The interval is Welch's on the steps' means,
 * as the relative change of the kept steps applied to the baseline's total: a warm-up step
 * left out moves the estimate as well as the spread.
 */
static tl_interval steps_interval(const double *x, size_t na, const double *y, size_t nb, double base,
                                  double confidence, double *var_a, double *var_b)
{
    tl_moments mx = moments_of(x, na), my = moments_of(y, nb);
    tl_interval bad = {NAN, NAN, NAN, NAN, NAN};
    if (!(mx.mean > 0) || na < 2 || nb < 2 || isnan(base))
        return bad;
    double k = base / mx.mean; /* the baseline's total in kept steps' means */
    *var_a = k * k * tl_moments_var(&mx) / (double)na;
    *var_b = k * k * tl_moments_var(&my) / (double)nb;
    return tl_welch((tl_estimate){base, *var_a, (double)na - 1},
                    (tl_estimate){base * my.mean / mx.mean, *var_b, (double)nb - 1}, confidence);
}

/*
 * Judge an item on its steps, twice: its time per step as it is (the between-step spread,
 * which holds what makes a whole step slower or faster: clocks, thermals, a neighbour), and
 * its share of the step's busy time (which such a change of the whole step leaves alone,
 * so that one op's own change shows through it).  Each test at half the level (Bonferroni):
 * the item's p value is twice the smaller one, and its interval that test's.  x[0..na) are
 * side 0's kept steps, y[0..nb) side 1's, busy_a and busy_b the steps' busy times.  0 when
 * neither test can be made.
 */
static int judge_step_samples(const double *x, size_t na, const double *y, size_t nb, const double *busy_a,
                              const double *busy_b, double confidence, tl_summary_item *it)
{
    if (!(it->time_ms.base > 0) || isnan(it->time_ms.var))
        return 0;
    double va, vb, sva, svb;
    /* a level of 1 - confidence for the pair of tests: each interval at half of it */
    double half = 1 - (1 - confidence) / 2;
    tl_interval abs_r = steps_interval(x, na, y, nb, it->time_ms.base, half, &va, &vb);
    double *rx = tl_xmalloc((na + nb) * sizeof *rx), *ry = rx + na;
    for (size_t s = 0; s < na; s++)
        rx[s] = busy_a[s] > 0 ? x[s] / busy_a[s] : 0;
    for (size_t s = 0; s < nb; s++)
        ry[s] = busy_b[s] > 0 ? y[s] / busy_b[s] : 0;
    tl_interval share_r = steps_interval(rx, na, ry, nb, it->time_ms.base, half, &sva, &svb);
    free(rx);
    if (isnan(abs_r.p) && isnan(share_r.p))
        return 0;
    int by_share = isnan(abs_r.p) || (!isnan(share_r.p) && share_r.p < abs_r.p);
    tl_interval r = by_share ? share_r : abs_r;
    it->ci_lo = r.lo;
    it->ci_hi = r.hi;
    it->p = r.p * 2 < 1 ? r.p * 2 : 1;
    it->n_base = (double)na;
    it->n_var = (double)nb;
    /* what the busy time's verdict would add up: the time as it is */
    it->var_base = va;
    it->var_var = vb;
    it->df_base = (double)na - 1;
    it->df_var = (double)nb - 1;
    it->by_steps = by_share ? 2 : 1;
    return 1;
}

/* An op on its steps (judge_step_samples); 0 when it has none on both sides. */
static int judge_steps(const tl_noise *nz, const op_noise *op, double confidence, tl_summary_item *it)
{
    size_t na = nz->nsteps[0], nb = nz->nsteps[1];
    if (!op || !op->steps)
        return 0;
    return judge_step_samples(op->steps, na, op->steps + na, nb, nz->busy_steps[0], nz->busy_steps[1], confidence,
                              it);
}

/* ---- the verdicts ------------------------------------------------------------------------ */

/* One side of a test: a sample unit's (a call's, a run's) mean and variance, its df, and
 * how many units the estimate rests on. */
typedef struct side_spread {
    double n, mean, unit_var, df;
} side_spread;

/* A side with no spread of its own (one call, one run, no prior) takes the other's: the
 * same op, the same kind of noise.  Returns 0 when neither side has one. */
static int borrow(side_spread *a, side_spread *b)
{
    int ha = a->df > 0 && !isnan(a->unit_var), hb = b->df > 0 && !isnan(b->unit_var);
    if (!ha && !hb)
        return 0;
    if (!ha)
        a->unit_var = b->unit_var, a->df = b->df;
    if (!hb)
        b->unit_var = a->unit_var, b->df = a->df;
    return 1;
}

/*
 * One side's calls as strata (ms): a call of the op's root-mean-square size, sqrt(w / n),
 * whose variance is the pooled relative spread at that size, so that n times it is the
 * strata's sum, sum n_s m_s^2 cv^2, and its relative variance the pooled cv^2 itself (what
 * the prior over all the ops moderates).
 */
static side_spread strata_spread(const op_calls *c)
{
    double n = c->calls.n, size = n > 0 ? sqrt(c->w / n) * 1e-3 : NAN;
    return (side_spread){n, size, c->rdf > 0 ? c->rss / c->rdf * size * size : NAN, c->rdf};
}

/* The two sides of item i (0 when the item cannot be tested). */
static int sides_of(const tl_noise *nz, size_t var, int runs, const tl_summary_item *it, side_spread *a,
                    side_spread *b)
{
    if (!nz || isnan(it->time_ms.base) || isnan(it->time_ms.var))
        return 0;
    const op_noise *op = find_op(nz, it->name);
    if (!op)
        return 0;
    if (runs) {
        /* the op's time, a mean over runs: its spread between runs */
        *a = (side_spread){(double)nz->runs[0], it->time_ms.base, op->run_var[0], (double)nz->runs[0] - 1};
        *b = (side_spread){(double)nz->runs[var], it->time_ms.var, op->run_var[var], (double)nz->runs[var] - 1};
        return 1;
    }
    const op_calls *ca = calls_of(op, 0), *cb = calls_of(op, var);
    if (!ca || !cb)
        return 0;
    *a = strata_spread(ca);
    *b = strata_spread(cb);
    return 1;
}

/*
 * Moderate a side's variance toward the prior of all the ops' (tl_variance_prior), in
 * relative terms: the sources of noise (clocks, thermals, placement, the same kind of
 * kernel) scale with the time, so an op's squared coefficient of variation is one estimate
 * of a common quantity, and the estimate of one op borrows strength from the others as far
 * as their spread allows.  An op with no spread of its own (one call, one run) gets the
 * prior's.
 */
static void moderate(side_spread *s, double s0, double d0)
{
    if (!(d0 > 0) || !(s->mean > 0))
        return;
    double own = s->df > 0 && !isnan(s->unit_var) ? s->unit_var / (s->mean * s->mean) : 0;
    double d = s->df > 0 && !isnan(s->unit_var) ? s->df : 0;
    if (isinf(d0)) { /* the variances differ no more than sampling explains: the prior's */
        s->unit_var = s0 * s->mean * s->mean;
        s->df = INFINITY;
        return;
    }
    s->unit_var = (d0 * s0 + d * own) / (d0 + d) * s->mean * s->mean;
    s->df = d0 + d;
}

static size_t settle(tl_summary_item *items, size_t n, double confidence, int fdr);

/* The op's paired calls against variant `var`, when they are the calls its times add up
 * (ops_summary attributes the same GPU events to the same ops); else NULL, and the op is
 * judged by the calls' spread, unpaired. */
static const op_pairs *pairs_of(const tl_noise *nz, size_t var, const tl_summary_item *it)
{
    const op_noise *op = nz && var == 1 ? find_op(nz, it->name) : NULL;
    const op_pairs *p = op ? op->pairs : NULL;
    if (!p || !(p->n >= 1) || isnan(it->time_ms.base) || isnan(it->time_ms.var))
        return NULL;
    double tb = p->base + p->u1_ms, tv = p->var + p->u2_ms;
    if (fabs(tb - it->time_ms.base) > 5e-3 * fabs(it->time_ms.base) + 1e-6 ||
        fabs(tv - it->time_ms.var) > 5e-3 * fabs(it->time_ms.var) + 1e-6)
        return NULL;
    return p;
}

/*
 * Judge an op from its paired calls: the change is the sum of the pairs' differences (and
 * of the calls on one side only), whose variance is each argument set's n_s m_s^2 times the
 * differences' relative variance within sets (moderated toward the prior of all the paired
 * ops', s0 on d0 degrees of freedom); a call on one side only adds half a difference's
 * variance (a difference is two calls' noise).  0 when no spread is known.
 */
static int judge_pairs(const op_pairs *p, double s0, double d0, double confidence, tl_summary_item *it)
{
    double own = p->rdf > 0 ? p->rss / p->rdf : NAN, df = p->rdf > 0 ? p->rdf : 0;
    double rel = own;
    if (isinf(d0)) {
        rel = s0, df = INFINITY;
    } else if (d0 > 0 && !isnan(s0)) {
        rel = (d0 * s0 + (df > 0 ? df * own : 0)) / (d0 + df);
        df += d0;
    }
    if (!(df > 0) || isnan(rel))
        return 0;
    double var = rel * (p->w + (p->u1 + p->u2) * (p->w / p->n) / 2);
    tl_interval r = tl_welch((tl_estimate){it->time_ms.base, 0, INFINITY}, (tl_estimate){it->time_ms.var, var, df},
                             confidence);
    if (isnan(r.p))
        return 0;
    it->ci_lo = r.lo;
    it->ci_hi = r.hi;
    it->p = r.p;
    it->n_base = it->n_var = p->n;
    it->var_base = 0;
    it->var_var = var;
    it->df_base = INFINITY;
    it->df_var = df;
    it->paired = 1;
    return 1;
}

size_t tl_verdicts_judge(const tl_noise *nz, size_t var, tl_summary_item *items, size_t n, int per_call,
                         double confidence, int fdr)
{
    double *p = tl_xmalloc((n ? n : 1) * sizeof *p);
    side_spread *sa = tl_xmalloc((n ? n : 1) * sizeof *sa), *sb = tl_xmalloc((n ? n : 1) * sizeof *sb);
    unsigned char *ok = tl_xcalloc(n ? n : 1, 1);
    int runs = nz && (nz->runs[0] > 1 || nz->runs[var] > 1);
    /* every op's own spread, in relative terms, for the priors */
    double *rel = tl_xmalloc((n ? n : 1) * sizeof *rel), *rdf = tl_xmalloc((n ? n : 1) * sizeof *rdf);
    double s0[2] = {NAN, NAN}, d0[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        tl_summary_item *it = &items[i];
        it->ci_lo = it->ci_hi = it->p = p[i] = NAN;
        it->n_base = it->n_var = NAN;
        it->var_base = it->var_var = it->df_base = it->df_var = NAN;
        it->verdict = TL_VERDICT_NONE;
        it->paired = 0;
        it->by_steps = 0;
        ok[i] = (unsigned char)sides_of(nz, var, runs, it, &sa[i], &sb[i]);
    }
    /* paired calls (two traces, judged on their totals): their own prior */
    const op_pairs **pp = tl_xcalloc(n ? n : 1, sizeof *pp);
    double ps0 = NAN, pd0 = 0;
    for (size_t i = 0; i < n; i++) {
        pp[i] = runs || per_call ? NULL : pairs_of(nz, var, &items[i]);
        rel[i] = pp[i] && pp[i]->rdf > 0 ? pp[i]->rss / pp[i]->rdf : NAN;
        rdf[i] = pp[i] ? pp[i]->rdf : 0;
    }
    tl_variance_prior(rel, rdf, n, &ps0, &pd0);
    for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < n; i++) {
            const side_spread *x = side ? &sb[i] : &sa[i];
            int use = ok[i] && x->mean > 0 && x->df > 0;
            rel[i] = use ? x->unit_var / (x->mean * x->mean) : NAN;
            rdf[i] = use ? x->df : 0;
        }
        tl_variance_prior(rel, rdf, n, &s0[side], &d0[side]);
    }
    for (size_t i = 0; i < n; i++) {
        tl_summary_item *it = &items[i];
        side_spread a = sa[i], b = sb[i];
        /* steps first: paired calls of one step share what the step went through */
        if (!runs && !per_call && var == 1 && tl_noise_steps(nz, 0) &&
            judge_steps(nz, find_op(nz, it->name), confidence, it)) {
            p[i] = it->p;
            continue;
        }
        if (pp[i] && judge_pairs(pp[i], ps0, pd0, confidence, it))
            continue;
        if (!ok[i])
            continue;
        moderate(&a, s0[0], d0[0]);
        moderate(&b, s0[1], d0[1]);
        if (!borrow(&a, &b))
            continue;
        tl_interval r;
        /* the variance of the time itself: a mean over runs, or a total of n calls */
        it->var_base = runs ? a.unit_var / a.n : a.unit_var * a.n;
        it->var_var = runs ? b.unit_var / b.n : b.unit_var * b.n;
        it->df_base = a.df;
        it->df_var = b.df;
        if (runs) {
            r = tl_welch((tl_estimate){it->time_ms.base, a.unit_var / a.n, a.df},
                         (tl_estimate){it->time_ms.var, b.unit_var / b.n, b.df}, confidence);
        } else if (per_call && !isnan(it->per_call_ms.base) && !isnan(it->per_call_ms.var)) {
            /* the mean call, scaled to the baseline's calls as the change is judged */
            double scale = it->count.base;
            r = tl_welch((tl_estimate){it->per_call_ms.base * scale, a.unit_var / a.n * scale * scale, a.df},
                         (tl_estimate){it->per_call_ms.var * scale, b.unit_var / b.n * scale * scale, b.df},
                         confidence);
        } else {
            /* a total of n calls: n times a call's variance */
            r = tl_welch((tl_estimate){it->time_ms.base, a.unit_var * a.n, a.df},
                         (tl_estimate){it->time_ms.var, b.unit_var * b.n, b.df}, confidence);
        }
        if (isnan(r.p)) {
            it->var_base = it->var_var = it->df_base = it->df_var = NAN;
            continue;
        }
        it->ci_lo = r.lo;
        it->ci_hi = r.hi;
        it->p = p[i] = r.p;
        it->n_base = a.n;
        it->n_var = b.n;
    }
    size_t tested = settle(items, n, confidence, fdr);
    free(pp);
    free(p);
    free(sa);
    free(sb);
    free(ok);
    free(rel);
    free(rdf);
    return tested;
}

/* A sum of independent estimates: its variance, and its degrees of freedom by
 * Satterthwaite's approximation, (sum v)^2 / sum(v^2 / df). */
typedef struct var_sum {
    double var, w; /* sum of v, sum of v^2 / df */
} var_sum;

static void var_sum_add(var_sum *s, double v, double df)
{
    if (isnan(v) || !(df > 0))
        return;
    s->var += v;
    s->w += v * v / df;
}

static double var_sum_df(const var_sum *s) { return s->w > 0 ? s->var * s->var / s->w : INFINITY; }

void tl_verdict_busy(const tl_noise *nz, size_t var, const tl_summary_item *items, size_t n, double per_iteration,
                     double confidence, tl_summary_item *busy)
{
    busy->ci_lo = busy->ci_hi = busy->p = busy->n_base = busy->n_var = NAN;
    busy->var_base = busy->var_var = busy->df_base = busy->df_var = NAN;
    busy->verdict = TL_VERDICT_NONE;
    if (!nz || var >= nz->nsides || isnan(busy->time_ms.base) || isnan(busy->time_ms.var))
        return;
    double scale = per_iteration > 0 ? 1 / (per_iteration * per_iteration) : 1;
    tl_estimate a, b;
    if (var == 1 && tl_noise_steps(nz, 0) && nz->runs[0] == 1 && nz->runs[1] == 1 && !(per_iteration > 0 && per_iteration != 1)) {
        /* the steps' busy times: the whole step's noise, which the ops' do not add up to */
        double va, vb;
        tl_interval r = steps_interval(nz->busy_steps[0], nz->nsteps[0], nz->busy_steps[1], nz->nsteps[1],
                                       busy->time_ms.base, confidence, &va, &vb);
        if (isnan(r.p))
            return;
        busy->ci_lo = r.lo;
        busy->ci_hi = r.hi;
        busy->p = r.p;
        busy->n_base = (double)nz->nsteps[0];
        busy->n_var = (double)nz->nsteps[1];
        busy->var_base = va;
        busy->var_var = vb;
        busy->df_base = (double)nz->nsteps[0] - 1;
        busy->df_var = (double)nz->nsteps[1] - 1;
        busy->by_steps = 1;
        busy->verdict = r.lo > 0 ? TL_VERDICT_SLOWER : r.hi < 0 ? TL_VERDICT_FASTER : TL_VERDICT_WITHIN_NOISE;
        return;
    }
    if (nz->runs[0] > 1 || nz->runs[var] > 1) {
        /* a side of one run has no spread of its own: the other side's, as for the ops */
        double va = nz->busy_var[0], vb = nz->busy_var[var];
        double da = (double)nz->runs[0] - 1, db = (double)nz->runs[var] - 1;
        if (isnan(va) && isnan(vb))
            return;
        if (isnan(va) || !(da > 0))
            va = vb, da = db;
        if (isnan(vb) || !(db > 0))
            vb = va, db = da;
        a = (tl_estimate){busy->time_ms.base, va / (double)nz->runs[0], da};
        b = (tl_estimate){busy->time_ms.var, vb * scale / (double)nz->runs[var], db};
        busy->n_base = (double)nz->runs[0];
        busy->n_var = (double)nz->runs[var];
    } else {
        var_sum sa = {0, 0}, sb = {0, 0};
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (isnan(items[i].var_base) || isnan(items[i].var_var))
                continue;
            var_sum_add(&sa, items[i].var_base, items[i].df_base);
            var_sum_add(&sb, items[i].var_var * scale, items[i].df_var);
            k++;
        }
        if (!k)
            return;
        a = (tl_estimate){busy->time_ms.base, sa.var, var_sum_df(&sa)};
        b = (tl_estimate){busy->time_ms.var, sb.var, var_sum_df(&sb)};
        busy->n_base = busy->n_var = (double)k;
    }
    tl_interval r = tl_welch(a, b, confidence);
    if (isnan(r.p))
        return;
    busy->ci_lo = r.lo;
    busy->ci_hi = r.hi;
    busy->p = r.p;
    busy->var_base = a.var;
    busy->var_var = b.var;
    busy->df_base = a.df;
    busy->df_var = b.df;
    busy->verdict = r.lo > 0 ? TL_VERDICT_SLOWER : r.hi < 0 ? TL_VERDICT_FASTER : TL_VERDICT_WITHIN_NOISE;
}

/* The verdicts of items whose p values are set (NaN: untested), after the step that holds
 * them to a family-wise error or a false discovery rate. */
static size_t settle(tl_summary_item *items, size_t n, double confidence, int fdr)
{
    double *p = tl_xmalloc((n ? n : 1) * sizeof *p);
    unsigned char *keep = tl_xmalloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = items[i].p;
    if (fdr)
        tl_bh(p, n, 1 - confidence, keep);
    else
        tl_holm(p, n, 1 - confidence, keep);
    size_t tested = 0;
    for (size_t i = 0; i < n; i++) {
        tl_summary_item *it = &items[i];
        if (isnan(it->p))
            continue;
        tested++;
        if (keep[i] && it->ci_lo > 0)
            it->verdict = TL_VERDICT_SLOWER;
        else if (keep[i] && it->ci_hi < 0)
            it->verdict = TL_VERDICT_FASTER;
        else
            it->verdict = TL_VERDICT_WITHIN_NOISE;
    }
    free(keep);
    free(p);
    return tested;
}

size_t tl_verdicts_judge_paired(const tl_pairs *d, const double *unit, tl_summary_item *items, size_t n,
                                double confidence, int fdr)
{
    return tl_verdicts_judge_lcas(d, unit, NULL, items, n, confidence, fdr);
}

/* Steps to judge an item by: both sides keep enough, and the item has them. */
static int has_steps(const tl_step_samples *st, size_t i)
{
    return st && st->na >= TL_STEPS_MIN && st->nb >= TL_STEPS_MIN && st->x && (!st->has || st->has[i]);
}

size_t tl_verdicts_judge_lcas(const tl_pairs *d, const double *unit, const tl_step_samples *st,
                              tl_summary_item *items, size_t n, double confidence, int fdr)
{
    side_spread *sp = tl_xmalloc((n ? n : 1) * sizeof *sp);
    double *rel = tl_xmalloc((n ? n : 1) * sizeof *rel), *rdf = tl_xmalloc((n ? n : 1) * sizeof *rdf);
    for (size_t i = 0; i < n; i++) {
        tl_summary_item *it = &items[i];
        it->ci_lo = it->ci_hi = it->p = NAN;
        it->n_base = it->n_var = NAN;
        it->var_base = it->var_var = it->df_base = it->df_var = NAN;
        it->verdict = TL_VERDICT_NONE;
        it->paired = it->by_steps = 0;
        double var = d[i].df > 0 ? d[i].var : NAN;
        sp[i] = (side_spread){d[i].n, unit[i], var, d[i].df > 0 ? d[i].df : 0};
        int use = d[i].df > 0 && unit[i] > 0 && !isnan(var);
        rel[i] = use ? var / (unit[i] * unit[i]) : NAN;
        rdf[i] = use ? sp[i].df : 0;
    }
    double s0 = NAN, d0 = 0;
    tl_variance_prior(rel, rdf, n, &s0, &d0);
    for (size_t i = 0; i < n; i++) {
        tl_summary_item *it = &items[i];
        side_spread x = sp[i];
        if (isnan(it->time_ms.base) || isnan(it->time_ms.var))
            continue;
        /* steps first, as for the ops: the LCAs of one step share what the step went through */
        if (has_steps(st, i)) {
            const double *xs = st->x + i * (st->na + st->nb);
            if (judge_step_samples(xs, st->na, xs + st->na, st->nb, st->busy[0], st->busy[1], confidence, it))
                continue;
        }
        if (!(x.n >= 1))
            continue;
        moderate(&x, s0, d0);
        if (!(x.df > 0) || isnan(x.unit_var))
            continue;
        /* the baseline's total as a constant, the variant's with the differences' spread */
        tl_interval r = tl_welch((tl_estimate){it->time_ms.base, 0, INFINITY},
                                 (tl_estimate){it->time_ms.var, x.unit_var * x.n, x.df}, confidence);
        if (isnan(r.p))
            continue;
        it->ci_lo = r.lo;
        it->ci_hi = r.hi;
        it->p = r.p;
        it->n_base = it->n_var = x.n;
        it->var_base = 0;
        it->var_var = x.unit_var * x.n;
        it->df_base = INFINITY;
        it->df_var = x.df;
    }
    free(sp);
    free(rel);
    free(rdf);
    return settle(items, n, confidence, fdr);
}

const char *tl_verdict_name(int verdict)
{
    switch (verdict) {
    case TL_VERDICT_SLOWER: return "slower";
    case TL_VERDICT_FASTER: return "faster";
    case TL_VERDICT_WITHIN_NOISE: return "within noise";
    default: return NULL;
    }
}

void tl_noise_ranks_as_runs(tl_noise *nz) { nz->ranks = 1; }

void tl_steps_basis(const size_t kept[2], const size_t all[2], const size_t first[2], char *buf, size_t n)
{
    char left[96] = "";
    if (first[0] == 2 && first[1] == 2 && kept[0] + 1 == all[0] && kept[1] + 1 == all[1])
        snprintf(left, sizeof left, ", the first left out as warm-up");
    else if (kept[0] != all[0] || kept[1] != all[1])
        snprintf(left, sizeof left, " (of %zu and %zu, from step %zu and %zu)", all[0], all[1], first[0], first[1]);
    snprintf(buf, n, "%zu vs %zu steps%s", kept[0], kept[1], left);
}

void tl_verdict_basis(const tl_noise *nz, size_t var, const tl_summary_item *items, size_t nitems, char *buf,
                      size_t n)
{
    size_t ra = tl_noise_runs(nz, 0), rb = tl_noise_runs(nz, var), paired = 0, tested = 0, stepped = 0;
    for (size_t i = 0; i < nitems; i++) {
        paired += items[i].paired && items[i].verdict != TL_VERDICT_NONE;
        stepped += items[i].by_steps && items[i].verdict != TL_VERDICT_NONE;
        tested += items[i].verdict != TL_VERDICT_NONE;
    }
    if (stepped) {
        const size_t kept[2] = {nz->nsteps[0], nz->nsteps[1]};
        char steps[128];
        tl_steps_basis(kept, nz->all_steps, nz->first_step, steps, sizeof steps);
        snprintf(buf, n, "between-step spread, %s (each op's time and its share of the step)%s", steps,
                 stepped < tested ? "; the rest paired calls or per-shape strata" : "");
    } else if ((ra > 1 || rb > 1) && nz->ranks) {
        snprintf(buf, n, "rank-to-rank spread (the ranks are repeated measurements of one program), op times the "
                         "mean over %zu vs %zu ranks", ra, rb);
    } else if (ra > 1 || rb > 1)
        snprintf(buf, n, "run-to-run spread, %zu vs %zu runs", ra, rb);
    else if (paired && paired == tested)
        snprintf(buf, n, "paired calls (the same op at the same place of both call trees), 1 run per side");
    else if (paired)
        snprintf(buf, n, "paired calls (the same op at the same place of both call trees) for %zu of %zu ops, "
                         "per-shape strata for the rest, 1 run per side", paired, tested);
    else
        snprintf(buf, n, "per-shape strata (each op's calls within their argument sets), 1 run per side");
}

/* ---- rendering ----------------------------------------------------------------------------- */

void tl_verdict_fmt_pm(const tl_summary_item *it, char *buf, size_t n)
{
    double half = (it->ci_hi - it->ci_lo) / 2;
    if (it->verdict == TL_VERDICT_NONE || isnan(half) || !(it->time_ms.base > 0))
        buf[0] = '\0';
    else
        snprintf(buf, n, "\xc2\xb1%.1f%%", 100 * half / it->time_ms.base);
}

void tl_verdict_line(const tl_summary *s, const tl_variant_summary *v, char *buf, size_t n)
{
    if (!v->tested) {
        buf[0] = '\0';
        return;
    }
    int w = snprintf(buf, n, "verdicts: %s; %g%% intervals, %s %g%% over %zu %ss tested", v->basis,
                     100 * s->confidence, s->fdr ? "false discovery rate" : "family-wise error",
                     100 * (1 - s->confidence), v->tested, s->item);
    if (w >= 0 && (size_t)w < n && v->within_noise)
        snprintf(buf + w, n - (size_t)w, "; %zu change%s within noise (not listed)", v->within_noise,
                 v->within_noise == 1 ? "" : "s");
}

void tl_verdict_json_item(tl_buf *b, const tl_summary_item *it)
{
    int tested = it->verdict != TL_VERDICT_NONE;
    tl_buf_adds(b, ", \"ci_low\": ");
    tl_json_num(b, tested ? it->ci_lo : NAN);
    tl_buf_adds(b, ", \"ci_high\": ");
    tl_json_num(b, tested ? it->ci_hi : NAN);
    tl_buf_adds(b, ", \"p\": ");
    tl_json_num(b, tested ? it->p : NAN);
    tl_buf_adds(b, ", \"verdict\": ");
    if (tested)
        tl_json_str(b, tl_verdict_name(it->verdict));
    else
        tl_buf_adds(b, "null");
    tl_buf_adds(b, ", \"n\": ");
    if (tested) {
        tl_buf_adds(b, "[");
        tl_json_num(b, it->n_base);
        tl_buf_adds(b, ", ");
        tl_json_num(b, it->n_var);
        tl_buf_adds(b, "]");
    } else {
        tl_buf_adds(b, "null");
    }
}

void tl_verdict_json_variant(tl_buf *b, const tl_summary *s, const tl_variant_summary *v)
{
    tl_buf_adds(b, ",\n      \"verdicts\": ");
    if (!v->tested) {
        tl_buf_adds(b, "null");
        return;
    }
    tl_buf_adds(b, "{\"basis\": ");
    tl_json_str(b, v->basis);
    tl_buf_adds(b, ", \"confidence\": ");
    tl_json_num(b, s->confidence);
    tl_buf_printf(b, ", \"control\": \"%s\", \"tested\": %zu, \"within_noise\": %zu}",
                  s->fdr ? "fdr" : "fwer", v->tested, v->within_noise);
}
