/*
 * steps.h - a training trace's iterations (its ProfilerStep#N annotations, tl_trace.steps)
 * as repeated measurements: per step the gpu_timeline rows and each op's GPU time, and per
 * op where its largest call happened.
 *
 * A GPU event belongs to the step whose CPU span holds its launch (the runtime event it is
 * linked under): kernels of a step run after its annotation has closed, so their own ts
 * says less than where they were launched.  Only GPU events linked to a launch count, as
 * in gpu_timeline.  An op's GPU time is ops_summary's unit: the GPU events it launched
 * itself (the nearest cpu_op above each).
 */
#ifndef TL_TRACE_STEPS_H
#define TL_TRACE_STEPS_H

#include "trace/trace.h"
#include "trace/trace_report.h"

/* Where an op's largest call happened. */
typedef struct tl_step_peak {
    double us;      /* its direct GPU time (µs) */
    double ts;      /* the call's trace time (µs, the cpu_op's ts) */
    int64_t step;   /* the ProfilerStep number it falls in, or -1 outside every step */
} tl_step_peak;

typedef struct tl_steps {
    size_t n;               /* steps, in ts order (0: the trace has no step annotation) */
    tl_trace_step *span;    /* [n]: the annotations */
    double *tl;             /* [n * TL_TIMELINE_N]: step s's gpu_timeline rows (µs) */
    size_t nops;
    const char **op;        /* [nops]: every op that launched GPU work (interned in the trace) */
    double *us;             /* [nops * n]: op k's GPU time in step s at [k * n + s] (µs) */
    tl_step_peak *peak;     /* [nops]: where op k's largest call happened */
} tl_steps;

/* The position (in t->steps) of the step whose CPU span [ts, ts + dur] holds time x, the
 * latest where spans overlap, or -1 outside every step. */
long tl_trace_step_at(const tl_trace *t, double x);

/* The step a GPU event belongs to: that of its launch (its runtime call), else its own ts. */
long tl_trace_step_of_gpu(const tl_trace *t, uint32_t e);

/* Measure the steps of `t` into *out (free with tl_steps_free).  Ops and peaks are filled
 * whether or not the trace has steps. */
void tl_trace_steps(const tl_trace *t, tl_steps *out);
void tl_steps_free(tl_steps *s);

#endif
