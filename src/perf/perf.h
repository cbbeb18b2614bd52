/*
 * perf.h - the perf-model sheets of a trace (PERF.md): unified_perf_summary and one
 * sheet per model family with rows (GEMM, SDPA_fwd, CONV_fwd, ..., Reduce_bwd), and the
 * whole report of a trace (TRACES.md's five sheets with these between them).
 */
#ifndef TL_PERF_H
#define TL_PERF_H

#include "perf/gpu_arch.h"
#include "table/report.h"
#include "table/result.h"
#include "trace/trace.h"

/* Append the perf sheets of `t` to `out` in workbook order (PERF.md §0: unified_perf_summary,
 * then the family sheets); none for a trace without cpu_ops.  With `arch` (may be NULL)
 * the roofline columns of §8 are added.  Strings live in `arena` or the trace.
 * Returns 0 (an event whose arguments do not fit its model only loses its row). */
int tl_perf_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err);

/* The full report of a trace into `out`: tl_trace_sheets' sheets with the perf sheets
 * before kernel_summary.  Returns 0, or -1 with *err set (as tl_trace_sheets).
 * TL_PERF_SHEETS=0 in the environment leaves the perf sheets out (the five sheets of
 * TRACES.md alone): the benchmark's way of measuring what they cost, on the same binary. */
int tl_perf_report_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err);

/* Open the trace at `path` as a report (trace_report.h's kind "trace") whose sheets are
 * the full report above; `arch` (may be NULL) must outlive the report. */
int tl_perf_report_open(tl_report *r, const char *path, const tl_gpu_arch *arch, tl_error *err);

/* The perf sheet names a report of a trace may hold, in workbook order (PERF.md §0),
 * NULL-terminated. */
extern const char *const tl_perf_sheet_names[];

#endif
