/*
 * comparable.h - are two traces runs of one workload?  Before any verdict: the share of each
 * side's GPU time the alignment pairs (under the lowest common ops),
 * the steps and the calls per step of each, and the GPUs (deviceProperties).  Runs of
 * another workload make every verdict meaningless, so below the thresholds the summary's
 * first line says so and why, and the gate refuses to judge (--force-compare judges anyway).
 * Another GPU is no reason: comparing GPUs is what the tool is for; it is said, not refused.
 */
#ifndef TL_SUMMARY_COMPARABLE_H
#define TL_SUMMARY_COMPARABLE_H

#include "base/util.h"
#include "diff/diff.h"

/* Not comparable when the alignment pairs less than this share of either side's GPU time
 * (under the lowest common ops: the same op at the same place of both call trees, whatever
 * each vendor calls its kernels and library ops; graph replays under no op are left out of
 * the whole, as no alignment can see into them)... */
#define TL_COMPARABLE_MIN_PAIRED 0.5
/* ... or when the calls per step (per trace without steps) differ by more than this factor. */
#define TL_COMPARABLE_MAX_CALL_RATIO 2.0

typedef struct tl_comparability {
    int known;                /* two traces were compared */
    double paired_share[2];   /* of each side's GPU time, the share under the lowest common ops (NaN: none to align) */
    size_t steps[2];          /* each trace's ProfilerStep#N steps (0: none) */
    double calls[2];          /* calls that launched GPU work, per step (per trace without steps) */
    const char *gpu[2];       /* deviceProperties' first name, or NULL */
    int comparable;
    char why[320];            /* when not comparable: why (one line) */
} tl_comparability;

/* Measure two traces, tagged tags[0..2): what the alignment covers of each (cover[k],
 * tl_diff_coverage), their calls v[0..n) as tl_diff_calls gives them, their steps (counted
 * by the caller); gpu names may be NULL. */
void tl_comparability_build(tl_comparability *c, const tl_diff_cover cover[2], const tl_diff_call *v, size_t n,
                            const size_t steps[2], const char *const gpu[2], const char *const tags[2]);

/* The summary's first line: "comparable: NVIDIA A100 vs Tesla V100; 99% and 98% of the GPU
 * time aligned; 10 vs 10 steps, 112 vs 112 calls per step" or "NOT COMPARABLE: ...". */
void tl_comparability_line(const tl_comparability *c, tl_buf *out);

#endif
