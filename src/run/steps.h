/*
 * steps.h - two traces' steps in a comparison: measured (trace/steps.h), the kept ones
 * handed to the verdicts (summary/verdict.h), and the `steps` sheet.
 */
#ifndef TL_RUN_STEPS_H
#define TL_RUN_STEPS_H

#include "base/util.h"
#include "diff/diff.h"
#include "summary/lca.h"
#include "summary/verdict.h"
#include "trace/steps.h"
#include "write/sink.h"

/* A comparison's steps: both traces' measurements and the range each keeps. */
typedef struct tl_run_steps {
    tl_steps s[2];
    size_t first[2], last[2]; /* kept: positions [first, last) of each trace's steps (0-based) */
    int measured;
} tl_run_steps;

/*
 * Measure the steps of traces a and b.  The kept range: positions first..last (1-based,
 * inclusive; last 0: to the end; both 0: the default, the first step left out as warm-up on a
 * trace with 3 or more).  A range past a trace's steps keeps none of them (a note says so).
 */
void tl_run_steps_measure(tl_run_steps *rs, const tl_trace *a, const tl_trace *b, size_t first, size_t last);

/* Hand the kept steps to the verdicts (nothing when a side keeps fewer than TL_STEPS_MIN). */
void tl_run_steps_judge(const tl_run_steps *rs, tl_noise *nz);

/* The lowest common ops' steps: each LCA of diff `d` (of traces a and b) placed in its step,
 * so that ls's verdicts rest on the kept steps as the ops' do (then tl_lca_summary_judge
 * again).  Nothing when a side keeps fewer than TL_STEPS_MIN. */
void tl_run_steps_lca(const tl_run_steps *rs, const tl_trace *a, const tl_trace *b, const tl_diff *d,
                      tl_lca_summary *ls);

/* The `steps` sheet: per step of each trace (tags[0], tags[1]) its number, position, whether
 * the verdicts keep it, its CPU start, and its gpu_timeline rows (ms).  Nothing when neither
 * trace has steps.  0, or -1 with *err set. */
int tl_run_steps_put(const tl_run_steps *rs, const char *const tags[2], const tl_sink *sink, tl_error *err);

/* Where each op the summary lists had its largest call on each side (its peak_step and
 * peak_ts; NaN ts where a side has no such op), and s->located set. */
void tl_run_steps_locate(const tl_run_steps *rs, tl_summary *s);

void tl_run_steps_free(tl_run_steps *rs);

#endif
