/*
 * verdict.h - is a change larger than the noise?  The noise is taken from the data itself:
 *
 *  - one run per side: the spread of an op's calls, its argument sets as strata.
 *    ops_unique_args holds, per op and argument set, the count, mean and (n - 1) standard
 *    deviation of the calls' direct kernel time (for a trace, of every call).  Each set is
 *    a stratum: its calls' spread is measured from its own mean, never across shapes (calls
 *    of different shapes differ by design, not by chance), relative to that mean (a call's
 *    noise scales with its time), and pooled over the op's sets (sum (n_s - 1) cv_s^2 on
 *    sum(n_s - 1) degrees of freedom).  The variance of a side's total is then
 *    cv^2 sum n_s m_s^2: each stratum's at its own size, so that a uniform slowdown, which
 *    moves every stratum by the same share, stands out against the calls of one shape.
 *    The collector takes the rows from the ops_unique_args results as these stream to the
 *    outputs (tl_noise_tap).  An op that a side's ops_unique_args does not have (a report
 *    without the sheet) takes its samples from the roofline sheets the same way: the
 *    per-row count, mean and std of the kernel time in unified_perf_summary, else in the
 *    first family sheet (GEMM, SDPA_fwd, ...) that has it.
 *  - several runs per side (a repeated tag): the spread of the op's time between runs,
 *    from ops_summary's <tag>::<time>_std and <tag>::runs columns.
 *
 * Each op found on both sides gets Welch's interval for its change at the chosen
 * confidence and a p value; Holm's step over all the ops tested keeps the chance of listing
 * any op whose change is noise at 1 - confidence (or Benjamini-Hochberg's the false
 * discovery rate); a change is `slower` or `faster` when the step keeps it (its interval
 * then excludes 0), `within noise` otherwise.  Each op's variance is first moderated toward
 * the prior of all the ops' variances (tl_variance_prior), in relative terms.
 */
#ifndef TL_VERDICT_H
#define TL_VERDICT_H

#include "base/stats.h"
#include "diff/diff.h"
#include "summary/summary.h"
#include "table/result.h"

/* The default confidence of the intervals (and 1 - it, the false discovery rate). */
#define TL_CONFIDENCE_DEFAULT 0.95

/* The per-call and per-run spread of every op on every side. */
struct tl_noise;

/* A collector for the sides tags[0..n) (copied). */
tl_noise *tl_noise_new(const char *const *tags, size_t n);

/* The runs of each side are the ranks of a distributed run (repeated measurements of one
 * program): the verdict line says so. */
void tl_noise_ranks_as_runs(tl_noise *nz);
void tl_noise_free(tl_noise *nz);

/* A sink that hands every result to `next` unchanged, having first pooled the per-call
 * moments of the ops_unique_args and roofline results (intersect, only_baseline and
 * only_variant of each variant) into `nz`.  `next` must outlive the returned sink. */
tl_sink tl_noise_tap(tl_noise *nz, const tl_sink *next);

/* The pooled per-call moments (µs) of op `name` on side `side` (from its best source), or
 * NULL when unknown. */
const tl_moments *tl_noise_calls(const tl_noise *nz, size_t side, const char *name);

/* Read the runs of every side from the ops_summary result (its <tag>::runs and
 * <tag>::<time>_std columns); a side without them has 1 run. */
void tl_noise_read_runs(tl_noise *nz, const tl_results *results);

/* The runs of side `side` (1 without repeated tags). */
size_t tl_noise_runs(const tl_noise *nz, size_t side);

/*
 * Judge items[0..n) of variant side `var` against side 0: sets each item's interval,
 * p, n and verdict (TL_VERDICT_NONE where no spread is known on either side: no test).
 * The ops tested together are held, at level 1 - confidence, to a family-wise error (Holm:
 * the chance that any op listed is noise) or, with `fdr`, to a false discovery rate
 * (Benjamini-Hochberg: the expected share of noise among the ops listed; more found when
 * many ops changed).
 * `per_call`: the items are judged by their time per call (runs of different lengths), and
 * the interval is that of the per-call change scaled by the baseline's calls.  Returns
 * how many items were tested.
 */
size_t tl_verdicts_judge(const tl_noise *nz, size_t var, tl_summary_item *items, size_t n, int per_call,
                         double confidence, int fdr);

/* The pairs of one paired item: how many, and the variance of a pair's difference (ms^2)
 * with its degrees of freedom (NaN and 0 when unknown). */
typedef struct tl_pairs {
    double n, var, df;
} tl_pairs;

/*
 * Judge items[0..n) that are each a sum of paired samples (the LCAs of one kind: the same
 * op at the same place of both call trees, one pair per LCA): d[i] their count and the
 * spread of their differences (variant - baseline), unit[i] a pair's baseline time (the
 * scale by which that variance is moderated toward all the items', as tl_verdicts_judge
 * does).  The interval is that of the total difference, on the variance's degrees of
 * freedom (plus the prior's), n times a difference's variance.  An item without a spread
 * of its own has the prior's only; one without pairs (d[i].n == 0) is untested.  Holm's
 * step (or, with `fdr`, Benjamini-Hochberg's) over all of them.  Returns how many were
 * tested.
 */
size_t tl_verdicts_judge_paired(const tl_pairs *d, const double *unit, tl_summary_item *items, size_t n,
                                double confidence, int fdr);

/*
 * Judge the busy time `busy` (its time_ms set) of variant side `var` against side 0, one
 * test at level 1 - confidence: with runs, from the spread of the runs' busy times
 * (gpu_timeline's busy_time row); otherwise from the variances of the ops' times that
 * tl_verdicts_judge left in items[0..n), added up (the ops' calls are independent; the
 * degrees of freedom by Satterthwaite).  `per_iteration`: the variant's busy time was
 * divided by this call ratio (1 when not), its variance is too.  Untested (TL_VERDICT_NONE)
 * when no spread is known.
 */
void tl_verdict_busy(const tl_noise *nz, size_t var, const tl_summary_item *items, size_t n, double per_iteration,
                     double confidence, tl_summary_item *busy);

/* "slower", "faster", "within noise", or NULL for TL_VERDICT_NONE. */
const char *tl_verdict_name(int verdict);

/* What the verdicts of variant side `var` on items[0..nitems) (judged) rest on, e.g.
 * "per-call spread, 1 run per side", "paired calls (...), 1 run per side" or "run-to-run
 * spread, 3 vs 2 runs", into buf. */
void tl_verdict_basis(const tl_noise *nz, size_t var, const tl_summary_item *items, size_t nitems, char *buf,
                      size_t n);

/*
 * Two traces: pair the calls of every op through the diff's alignment (tl_diff_calls: the
 * same op at the same place of both call trees), so that tl_verdicts_judge judges an op on
 * its pairs' differences rather than on two independent samples of calls.  Within an
 * argument set the differences of a uniform slowdown hardly vary, where the calls
 * themselves may vary a lot; the spread between argument sets is never counted.  An op
 * whose paired calls do not add up to its times in the items (within 0.5%) stays unpaired.
 */
void tl_noise_pair_calls(tl_noise *nz, const tl_diff *d);

/* The same from calls c[0..n) as tl_diff_calls gives them (names compared by content);
 * calls of one op add up across several calls of this. */
void tl_noise_add_calls(tl_noise *nz, const tl_diff_call *c, size_t n);

/* One side's steps as the verdicts take them (trace/steps.h measures them): the steps
 * kept (warm-up left out), their busy times, and each op's time in each. */
typedef struct tl_step_side {
    size_t n;                 /* steps kept */
    size_t all, first;        /* the trace's steps, and the first kept (1-based) */
    const double *busy_ms;    /* [n] */
    size_t nops;
    const char *const *op;    /* [nops] */
    const double *ms;         /* [nops * n]: op k in kept step s at [k * n + s] */
} tl_step_side;

/* Items' times per step, for tl_verdicts_judge_lcas. */
typedef struct tl_step_samples {
    size_t na, nb;            /* the steps kept on each side (fewer than TL_STEPS_MIN: not used) */
    const double *busy[2];    /* [na], [nb]: the kept steps' busy times (ms) */
    const double *x;          /* [n * (na + nb)]: item i's time (ms) in each kept step, side 0's then 1's */
    const unsigned char *has; /* [n]: item i has steps of its own (NULL: every item) */
} tl_step_samples;

/*
 * tl_verdicts_judge_paired, where an item with steps (st, may be NULL) rests on the spread
 * between its steps rather than between its pairs, as an op's does in tl_verdicts_judge
 * (its time per step and its share of the step, each at half the level; by_steps set), and
 * one without pairs but with steps is tested too.  One Holm (or BH) step over all of them.
 */
size_t tl_verdicts_judge_lcas(const tl_pairs *d, const double *unit, const tl_step_samples *st,
                              tl_summary_item *items, size_t n, double confidence, int fdr);

/* The fewest steps kept on each side for the verdicts to rest on steps: fewer leave the
 * spread too few degrees of freedom to beat the paired calls (4 steps, the first left out:
 * an interval on 2 degrees of freedom is 4.3 standard errors wide). */
#define TL_STEPS_MIN 5

/*
 * Two traces with steps (at least TL_STEPS_MIN kept on each side): per-op and busy-time verdicts rest
 * on the spread between steps rather than between calls (calls of one step share what the
 * step went through, so their spread misses it).  An op is judged on its time per step and
 * on its share of the step's busy time, each at half the level; the interval is the kept
 * steps' relative change applied to the baseline's total.  Without steps on both sides,
 * nothing changes.
 */
void tl_noise_add_steps(tl_noise *nz, const tl_step_side *a, const tl_step_side *b);

/* Which steps the verdicts rest on, into buf: "9 vs 9 steps, the first left out as
 * warm-up" or "4 vs 4 steps (of 10 and 10, from step 3 and 3)"; kept[k] of all[k] steps
 * from the first[k]-th (1-based) on each side. */
void tl_steps_basis(const size_t kept[2], const size_t all[2], const size_t first[2], char *buf, size_t n);

/* The steps kept on side `side` (0: none, the verdicts do not rest on steps). */
size_t tl_noise_steps(const tl_noise *nz, size_t side);

/* ---- rendering (for render.c: every form says the same) ------------------------------------ */

/* "±1.1%": the half-width of the item's interval in percent of its baseline time, or ""
 * when it was not tested. */
void tl_verdict_fmt_pm(const tl_summary_item *it, char *buf, size_t n);

/* The line saying what a variant's verdicts rest on, or "" when none was tested:
 * "verdicts: per-call spread, 1 run per side; 95% intervals, false discovery rate 5% over
 * 40 ops tested; 12 changes within noise (not listed)". */
void tl_verdict_line(const tl_summary *s, const tl_variant_summary *v, char *buf, size_t n);

/* The item's JSON fields ', "ci_low": .., "ci_high": .., "p": .., "verdict": .., "n": [..]'
 * (nulls when untested). */
void tl_verdict_json_item(tl_buf *b, const tl_summary_item *it);

/* The variant's JSON field ', "verdicts": {...}' (basis, confidence, tested, within_noise). */
void tl_verdict_json_variant(tl_buf *b, const tl_summary *s, const tl_variant_summary *v);

#endif
