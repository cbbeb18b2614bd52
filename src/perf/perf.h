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
#include "trace/infer.h"
#include "trace/trace.h"
#include "trace/trace_report.h"

/* Append the perf sheets of `t` to `out` in workbook order (PERF.md §0: unified_perf_summary,
 * then the family sheets); none for a trace without cpu_ops.  With `arch` (may be NULL)
 * the roofline columns of §8 are added.  Strings live in `arena` or the trace.
 * Returns 0 (an event whose arguments do not fit its model only loses its row). */
int tl_perf_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err);

/* How the inference generator makes the perf sheets (INFERENCE.md §3.8); all zero is
 * the eager generator's (PERF.md). */
typedef struct tl_perf_opts {
    int inference;   /* its family loop: no backward sheets, Normalization a split family */
    int num_kernels; /* --group_by_num_kernels: the perf sheets group on the kernel count too */
    int call_stack;  /* --include_call_stack: unified_perf_summary's call_stack_full, entry_point */
} tl_perf_opts;

/* tl_perf_sheets with options `po`. */
int tl_perf_sheets_opts(const tl_trace *t, const tl_gpu_arch *arch, const tl_perf_opts *po, tl_arena *arena,
                        tl_results *out, tl_error *err);

/* The full report of a trace into `out`: tl_trace_sheets' sheets with the perf sheets
 * before kernel_summary.  Returns 0, or -1 with *err set (as tl_trace_sheets).
 * TL_PERF_SHEETS=0 in the environment leaves the perf sheets out (the five sheets of
 * TRACES.md alone): the benchmark's way of measuring what they cost, on the same binary. */
int tl_perf_report_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err);

/* tl_perf_report_sheets with the basic sheets in layout `so` (its include_unlinked: the
 * generator's --include_unlinked_kernels). */
int tl_perf_report_sheets_layout(const tl_trace *t, const tl_sheet_opts *so, const tl_gpu_arch *arch, tl_arena *arena,
                                 tl_results *out, tl_error *err);

/* The full report of a trace read in inference mode (trace/infer.h's tl_infer_load with
 * `io`): the basic sheets in layout `so` (INFERENCE.md §3) and the perf sheets as the
 * inference generator writes them (§3.8).  Returns 0, or -1 with *err set. */
int tl_perf_infer_report_sheets(const tl_trace *t, const tl_sheet_opts *so, const tl_infer_opts *io, tl_arena *arena,
                                tl_results *out, tl_error *err);

/* Open the trace at `path` as a report (trace_report.h's kind "trace") whose sheets are
 * the full report above; `arch` (may be NULL) must outlive the report. */
int tl_perf_report_open(tl_report *r, const char *path, const tl_gpu_arch *arch, tl_error *err);
/* tl_perf_report_open whose load stops, failing, soon after *cancel is set (NULL: never). */
int tl_perf_report_open_cancel(tl_report *r, const char *path, const tl_gpu_arch *arch, tl_cancel *cancel,
                               tl_error *err);

/* Open the trace at `path` in inference mode (trace_report.h's tl_trace_report_open_infer)
 * with the perf sheets of tl_perf_infer_report_sheets. */
int tl_perf_report_open_infer(tl_report *r, const char *path, const tl_trace_infer_spec *spec, tl_error *err);

/* The perf sheet names a report of a trace may hold, in workbook order (PERF.md §0),
 * NULL-terminated. */
extern const char *const tl_perf_sheet_names[];

#endif
