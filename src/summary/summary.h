/*
 * summary.h - the answer first: what got slower, what got faster, what appeared or
 * vanished.  Built from the comparison results alone, so it always agrees with
 * the workbook; rendered for the terminal, as Markdown, as JSON, and as the workbook's
 * summary worksheet.  The gate turns it into an exit status for CI.
 */
#ifndef TL_SUMMARY_H
#define TL_SUMMARY_H

#include "compare/groups.h"
#include "summary/lca.h"
#include "write/xlsx_write.h"

#include <math.h>
#include <stdio.h>

/* How many regressions / improvements / one-sided items are listed (by default), and charted. */
#define TL_SUMMARY_TOP 10
#define TL_SUMMARY_CHART_TOP 15

/* A before/after pair of numbers (NaN when absent). */
typedef struct tl_delta {
    double base, var; /* NaN when absent */
} tl_delta;

/* The change in percent of the base (the reference's 100 * (diff / base)); NaN when a
 * side is absent or the base is within noise of 0 (under a nanosecond, in ms: a time
 * the traces cannot resolve, where a percentage reads +5915298600%). */
static inline double tl_delta_pct(tl_delta d)
{
    if (isnan(d.base) || isnan(d.var) || fabs(d.base) < 1e-6)
        return NAN;
    return 100 * ((d.var - d.base) / d.base);
}

/* 1 when the change is within floating-point noise: the same data read from a workbook
 * and from CSV text can differ in the last bits (3e-18 ms), and that is no change. */
static inline int tl_delta_is_noise(tl_delta d)
{
    double m = fabs(d.base) > fabs(d.var) ? fabs(d.base) : fabs(d.var);
    return fabs(d.var - d.base) <= 1e-9 * m + 1e-12;
}

/* An item's verdict (summary/verdict.h): is its change larger than the noise? */
enum { TL_VERDICT_NONE, TL_VERDICT_WITHIN_NOISE, TL_VERDICT_SLOWER, TL_VERDICT_FASTER };

/* The spread of the data the verdicts rest on (summary/verdict.h). */
typedef struct tl_noise tl_noise;

/* One op (or kernel) row of the compared summary sheet. */
typedef struct tl_summary_item {
    const char *name;
    tl_delta time_ms;
    tl_delta count;
    tl_delta per_call_ms; /* time_ms / count on each side (NaN without a count) */
    int dir;              /* +1 slower, -1 faster, 0 unchanged (noise, floors; see tl_gate) */
    /* The verdict: the interval of the judged time change (ms; NaN when untested), its p
     * value after nothing (the FDR step decides the verdict), the samples (calls or runs)
     * on each side, and TL_VERDICT_*. */
    double ci_lo, ci_hi, p;
    double n_base, n_var;
    int verdict;
    /* the variance (ms^2) of the judged time on each side and its degrees of freedom (NaN
     * untested): what the busy time's verdict adds up */
    double var_base, var_var, df_base, df_var;
    /* 1 when judged from its calls paired through the two traces' alignment (the change's
     * variance is then all on the variant's side: var_base 0) */
    int paired;
    /* two traces with steps: 1 when judged on its time per step, 2 on its share of the
     * step's busy time (summary/verdict.h), 0 otherwise */
    int by_steps;
    /* where its largest call happened on each side (two traces): the ProfilerStep number
     * (-1 outside every step) and the call's trace time (µs); NaN ts when unknown */
    int64_t peak_step[2];
    double peak_ts[2];
} tl_summary_item;

/* The figure a list shows and orders an item by: its time, or, when the runs did different
 * numbers of iterations (per_iteration), its time per call times the baseline's calls on
 * both sides (the time of the baseline's iterations), so that a row has one delta. */
static inline tl_delta tl_item_shown(const tl_summary_item *it, int per_iteration)
{
    if (per_iteration && !isnan(it->per_call_ms.base) && !isnan(it->per_call_ms.var) && !isnan(it->count.base))
        return (tl_delta){it->per_call_ms.base * it->count.base, it->per_call_ms.var * it->count.base};
    return it->time_ms;
}

/* The gpu_timeline rows the summary reports, in this order. */
enum { TL_TL_TOTAL, TL_TL_BUSY, TL_TL_COMPUTE, TL_TL_EXPOSED_COMM, TL_TL_EXPOSED_MEMCPY, TL_TL_IDLE, TL_TL_N };
extern const char *const tl_timeline_rows[TL_TL_N];

/* A failed gate check. */
typedef struct tl_violation {
    const char *what;  /* "busy_time" or the op's name */
    int is_op;
    double base_ms, var_ms, pct;
    int per_iteration; /* the figures are per iteration (tl_item_shown), as the list shows them */
} tl_violation;

typedef struct tl_variant_summary {
    const char *tag;
    int has_timeline;
    tl_delta timeline[TL_TL_N];    /* ms */
    tl_summary_item *regressions;  /* by time delta, largest first */
    size_t nregressions;           /* at most TL_SUMMARY_TOP */
    tl_summary_item *improvements; /* by time delta, most negative first */
    size_t nimprovements;
    size_t only_base_count, only_var_count;
    tl_summary_item *only_base;    /* largest first, at most TL_SUMMARY_TOP */
    size_t nonly_base;
    tl_summary_item *only_var;
    size_t nonly_var;
    tl_violation *violations;
    size_t nviolations;
    /* When nearly every item's call count differs from the baseline's by the same factor
     * (the runs did different numbers of iterations): that factor (variant / baseline
     * calls), and the items are judged on their time per call.  NaN otherwise. */
    double call_ratio;
    /* the busy time (time_ms: as the gate judges it, per iteration when call_ratio is set)
     * with its verdict: from the run-to-run spread of the runs' busy times, or from the
     * per-call spread of the ops tested, added up (TL_VERDICT_NONE when neither is known) */
    tl_summary_item busy;
    size_t noise_skipped; /* changes within floating-point noise, not listed */
    size_t tested;        /* items given a verdict */
    size_t within_noise;  /* changes whose verdict is "within noise" (or under a floor): not listed */
    char basis[192];      /* what the verdicts rest on ("per-shape strata (...), 1 run per side") */
} tl_variant_summary;

typedef struct tl_summary {
    const char *baseline;
    const char *source;     /* "ops_summary", "kernel_summary" or NULL when neither ran */
    const char *item;       /* "op" or "kernel" */
    tl_variant_summary *variants;
    size_t nvariants;
    /* the chart: the baseline's largest items and their time in every report */
    size_t nchart;
    const char **chart_names;
    double *chart_ms;       /* report r's value of item k at [r * TL_SUMMARY_CHART_TOP + k] */
    /* the gate */
    int gate_on;
    double gate_pct, gate_min_ms;
    int gate_failed;
    double min_delta_ms, min_delta_pct; /* the floors of tl_gate */
    size_t top;                         /* how many regressions / improvements are listed */
    double confidence;                  /* of the verdicts' intervals (0.95) */
    int fdr;                            /* verdicts at a false discovery rate, not family-wise */
    const tl_lca_summary *lca; /* two traces: the comparison by lowest common op, or NULL */
    const struct tl_efficiency *eff; /* the achieved TFLOPS/s and TB/s (efficiency.h), or NULL */
    /* two traces: the items' peak_step / peak_ts are set (where each op's largest call
     * happened on each side) */
    int located;
    /* two traces: how alike they are (comparable.h), or NULL; printed first */
    const struct tl_comparability *comp;
    /* a comparison of runs: its answer, rendered by the run layer, printed first (NULL: none) */
    const char *lead_text, *lead_md, *lead_json; /* lead_json: the "runs" object */
} tl_summary;

/* Gate settings: pct < 0 means no gate.  The floors apply to the lists and the gate alike:
 * a change smaller than min_delta_ms, or than min_delta_pct percent, is no change (nor is
 * one within floating-point noise, whatever the floors).  top: how many regressions and
 * improvements are listed, 0 for TL_SUMMARY_TOP. */
typedef struct tl_gate {
    double pct;
    double min_ms;
    double min_delta_ms, min_delta_pct;
    size_t top;
    /* The spread the verdicts rest on (NULL: none known, every change is judged as above)
     * and the confidence of their intervals (0: TL_CONFIDENCE_DEFAULT).  With verdicts, an
     * item is listed and gated only when it is significantly slower or faster. */
    const tl_noise *noise;
    double confidence;
    int fdr; /* 1: hold the verdicts to a false discovery rate (Benjamini-Hochberg), not Holm's family-wise error */
} tl_gate;

/* Compute the summary of `results` for tags[0..n) (baseline first).  Warns (stderr) about
 * inputs that look mislabelled: an item taking longer than its report's total GPU time,
 * gpu_timeline rows that do not add up to total_time. */
void tl_summary_build(tl_summary *s, const tl_results *results, const char *const *tags, size_t n,
                      const tl_gate *gate, tl_arena *arena);
void tl_summary_free(tl_summary *s);

/* The terminal text (colour when `color`). */
void tl_summary_print(const tl_summary *s, FILE *out, int color);

/* The same as Markdown tables, ready to paste into a pull request. */
void tl_summary_markdown(const tl_summary *s, tl_buf *out);

/* The same as JSON (schema in the man page and README). */
void tl_summary_json(const tl_summary *s, tl_buf *out);

/* The gate's verdict lines ("regression: ..."), for stderr. */
void tl_summary_print_violations(const tl_summary *s, FILE *out);

/* The workbook's summary worksheet.  The returned sheet and its tables live until
 * tl_summary_sheet_free(). */
tl_summary_sheet *tl_summary_sheet_build(const tl_summary *s, tl_arena *arena);
void tl_summary_sheet_free(tl_summary_sheet *sheet);

#endif
