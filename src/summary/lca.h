/*
 * lca.h - the summary's comparison by lowest common op (TRACES.md §6, last paragraph):
 * the morphology diff's LCAs with the largest absolute change, each kind read as one line
 * baseline -> variant ("aten::_convolution  0.334 -> 1.233 ms, 5 -> 6 kernels,
 * aten::miopen_convolution -> aten::cudnn_convolution"), named by their CPU op, for the
 * terminal, Markdown, JSON and the summary worksheet; how much of each side's GPU time
 * those LCAs cover and where the rest is (graph launches, one-sided top-level ops); and
 * the regression gate on LCA deltas.
 */
#ifndef TL_SUMMARY_LCA_H
#define TL_SUMMARY_LCA_H

#include "diff/diff.h"
#include "table/table.h"

#include <stdio.h>

/* One kind of LCA as the summary shows it: the LCAs of one name over the same ops on
 * each side (a model's repeated layers), their kernels and times (ms) added. */
typedef struct tl_lca_item {
    const char *lca;         /* the LCA as a CPU op: its cpu_op on each side ("a | b" when they differ) */
    const char *node;        /* its name in lca_summary (a kernel, a runtime call or a memcpy there) */
    size_t count;            /* how many LCAs */
    size_t first;            /* the first one's position in lca_summary */
    const char *ops1, *ops2; /* each side's cpu_op name(s) */
    size_t n1, n2;           /* each side's kernels */
    double ms1, ms2;
    double delta_ms, pct;    /* pct: NaN when the baseline has no time */
    int unaligned;           /* a baseline-only and a variant-only LCA of one name, as one line */
    /* The verdict: each LCA of the kind found on both sides is a pair of samples (the same
     * op at the same place of both trees); npairs of them, and the spread of their
     * differences (ms) within LCAs alike (the same kernels on each side: the same work),
     * as the sum of squared deviations wss on wdf degrees of freedom.  The interval of
     * delta_ms, its p value and TL_VERDICT_* (summary.h; NONE: untested). */
    double npairs, wss, wdf;
    double ci_lo, ci_hi, p;
    int verdict;
} tl_lca_item;

/* Below this share of a side's GPU time under the LCAs, the summary says the lines cover
 * little; above this share under graph launches, it says where that time could be had. */
#define TL_LCA_LOW_COVER 0.5
#define TL_LCA_GRAPH_SHARE 0.5

typedef struct tl_lca_summary {
    const char *tag1, *tag2;
    size_t nlcas;            /* every LCA of the diff */
    size_t ngroups;          /* kinds of LCA (tl_lca_item) */
    tl_lca_item *groups;     /* all of them, in no particular order */
    size_t nslower, nfaster; /* of those, how many changed either way (beyond the noise when tested) */
    size_t tested;           /* kinds given a verdict */
    size_t within_noise;     /* kinds whose change is within the noise: not listed, not gated */
    double confidence;       /* of the verdicts' intervals */
    int fdr;                 /* held to a false discovery rate (else a family-wise error) */
    size_t max_top;          /* how many are listed at most */
    tl_lca_item *top;        /* by |delta|, largest first, at most `top` of them */
    size_t ntop;
    tl_lca_item *violations; /* over the gate, largest delta first */
    size_t nviolations;
    int gate_on;
    double gate_pct, gate_min_ms;
    tl_diff_cover cover[2];  /* each side's GPU time, under the LCAs and elsewhere (µs) */
    size_t *group_of;        /* [nlcas]: the kind (index into groups) of each LCA of the diff */
    double *lca_ms;          /* [2 * nlcas]: each LCA's time (ms) on side 0 and side 1 */
    /* two traces with steps (tl_lca_summary_steps): the steps kept on each side, their busy
     * times (ms), each kind's time in each kept step ([ngroups * (na + nb)], side 0's then
     * side 1's), and the steps' description for the verdict line */
    size_t nsteps[2];
    double *busy_steps[2];
    double *step_ms;
    size_t tested_by_steps;  /* kinds whose verdict rests on their steps */
    char steps_basis[96];
} tl_lca_summary;

/* Build from the diff; gate_pct < 0: no gate.  Strings live in `arena`.  The verdicts are
 * those of tl_lca_summary_judge at the default confidence (95%, family-wise). */
void tl_lca_summary_build(tl_lca_summary *s, const tl_diff *d, const char *tag1, const char *tag2, size_t top,
                          double gate_pct, double gate_min_ms, tl_arena *arena);

/* Judge every kind again at `confidence` (0: the default) and, with `fdr`, at a false
 * discovery rate (summary/verdict.h), and choose the lines and the gate's violations anew:
 * a change within the noise is neither listed nor gated. */
void tl_lca_summary_judge(tl_lca_summary *s, double confidence, int fdr);

/*
 * Two traces with steps: step[k][i] is the kept step (0-based among the nsteps[k] kept, -1
 * outside them) where LCA i (tl_diff_lcas' order) of side k ran, busy[k] the kept steps'
 * busy times (ms).  Each kind's time per kept step on each side is then what its verdict
 * rests on (tl_lca_summary_judge, called again by the caller), as an op's does: the
 * between-step spread of its time and of its share of the step.  `basis` says which steps
 * ("9 vs 9 steps, the first left out as warm-up").  Nothing changes when a side keeps fewer
 * than TL_STEPS_MIN.
 */
void tl_lca_summary_steps(tl_lca_summary *s, const long *const step[2], const size_t nsteps[2],
                          const double *const busy[2], const char *basis);

/* "verdicts: ..." (what they rest on, the level, how many tested and within noise) into
 * buf, or "" when none was tested. */
void tl_lca_summary_verdict_line(const tl_lca_summary *s, char *buf, size_t n);
void tl_lca_summary_free(tl_lca_summary *s);

void tl_lca_summary_print(const tl_lca_summary *s, FILE *out, int color);
void tl_lca_summary_markdown(const tl_lca_summary *s, tl_buf *out);
/* A JSON object (schema in the man page). */
void tl_lca_summary_json(const tl_lca_summary *s, tl_buf *out);
/* The gate's lines for stderr ("tlcompare: regression: ..."). */
void tl_lca_summary_print_violations(const tl_lca_summary *s, FILE *out);
/* The summary worksheet's block: one row per listed LCA (a new table). */
tl_table *tl_lca_summary_table(const tl_lca_summary *s, tl_arena *arena);
/* The summary worksheet's coverage block: one row per side (a new table). */
tl_table *tl_lca_summary_cover_table(const tl_lca_summary *s, tl_arena *arena);

#endif
