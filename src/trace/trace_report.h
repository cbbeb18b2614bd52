/*
 * trace_report.h - a trace as a TraceLens report: the five report sheets built from it
 * (TRACES.md §2-§4), as result tables for the writers (tlreport) and as a tl_report for
 * the comparison (tlcompare given a trace), plus the loaded trace back for the
 * morphology diff.
 */
#ifndef TL_TRACE_REPORT_H
#define TL_TRACE_REPORT_H

#include "table/report.h"
#include "table/result.h"
#include "trace/infer.h"
#include "trace/trace.h"

/* The sheet names, in workbook order. */
extern const char *const tl_trace_sheet_names[5];

/*
 * Build the report sheets of `t` into `out` (appended, workbook order: gpu_timeline,
 * ops_summary_by_category, ops_summary, ops_unique_args, kernel_summary; a sheet with no
 * rows is not made, and a trace without cpu_ops gets only the first and the last).
 * Strings live in `arena` or in the trace.  Returns 0, or -1 with *err set (a trace with
 * no GPU event linked to a launch has no gpu_timeline: TraceLens raises there too).
 */
int tl_trace_sheets(const tl_trace *t, tl_arena *arena, tl_results *out, tl_error *err);

/* gpu_timeline alone, as tl_trace_sheets makes it, or with `include_unlinked` counting
 * every GPU event, launched in the window or not (the generator's
 * --include_unlinked_kernels).  NULL with *err set when there is no GPU event to count. */
tl_table *tl_trace_gpu_timeline(const tl_trace *t, int include_unlinked, tl_error *err);

/* gpu_timeline's rows, in its order (µs): computation, exposed comm, exposed memcpy, busy,
 * idle, total, total comm, total memcpy. */
enum { TL_TIMELINE_N = 8 };
/* Those rows over the GPU events ev[0..n) of t alone (all 0 when n is 0): a step's. */
void tl_trace_timeline_of(const tl_trace *t, const uint32_t *ev, size_t n, double v[TL_TIMELINE_N]);

/* The layout of the op sheets (INFERENCE.md §3): all zero is TRACES.md's. */
typedef struct tl_sheet_opts {
    int inference;     /* the inference generator's ops_summary (§3.3) */
    int parent_module; /* --group_by_parent_module: parent_module and call-stack columns (§3.2-§3.5) */
    int num_kernels;   /* --group_by_num_kernels: ops_unique_args' num_kernels key (§3.5) */
    /* --include_unlinked_kernels: gpu_timeline (and so kernel_summary's percent of total
     * time) counts every GPU event; a trace with GPU events none of which is linked gets
     * these two sheets (with a warning), not a refusal */
    int include_unlinked;
    int no_coll_analysis; /* --disable_coll_analysis: no coll_analysis sheet */
} tl_sheet_opts;

/* tl_trace_sheets in the layout `o` says (on a merged tree too: trace/infer.h). */
int tl_trace_sheets_opts(const tl_trace *t, const tl_sheet_opts *o, tl_arena *arena, tl_results *out, tl_error *err);

/* Open the trace at `path` as a report of kind "trace": it is loaded and its sheets are
 * built on a helper thread, started here, so that several traces load at once.  Returns
 * 0 (the load's own result comes from tl_trace_report_wait), or -1 with *err set (r must
 * still be closed). */
int tl_trace_report_open(tl_report *r, const char *path, tl_error *err);

/* A sheet builder for a loaded trace (tl_trace_sheets' contract, with a context): a layer
 * above this one (perf) gives its own, which adds the sheets it makes. */
typedef int (*tl_trace_sheets_fn)(const tl_trace *t, void *ctx, tl_arena *arena, tl_results *out, tl_error *err);

/* tl_trace_report_open with the sheets made by `build(t, ctx, ...)` instead of
 * tl_trace_sheets; ctx must live as long as the report. */
int tl_trace_report_open_with(tl_report *r, const char *path, tl_trace_sheets_fn build, void *ctx, tl_error *err);

/* tl_trace_report_open_with whose load stops, failing, soon after *cancel is set (NULL: never). */
int tl_trace_report_open_cancel_with(tl_report *r, const char *path, tl_trace_sheets_fn build, void *ctx,
                                     tl_cancel *cancel, tl_error *err);

/* How a trace input of an inference comparison is read (INFERENCE.md §4). */
typedef struct tl_trace_infer_spec {
    const char *capture_dir; /* its capture folder, or NULL */
    int parent_module, num_kernels, call_stack, pseudo_ops;
    tl_cancel *cancel; /* NULL, or the run's flag: the load stops soon after it is set */
} tl_trace_infer_spec;

/* tl_trace_report_open in inference mode: the trace attributed through its capture
 * folder (if any) and its sheets in the inference layout; the success line is a note. */
int tl_trace_report_open_infer(tl_report *r, const char *path, const tl_trace_infer_spec *spec, tl_error *err);

/* A sheet builder for a trace loaded in inference mode, given the layout and the load's
 * options: a layer above this one (perf) gives its own, which adds the perf sheets. */
typedef int (*tl_trace_infer_sheets_fn)(const tl_trace *t, const tl_sheet_opts *so, const tl_infer_opts *io,
                                        tl_arena *arena, tl_results *out, tl_error *err);

/* tl_trace_report_open_infer with the sheets made by `build` instead of the layout's
 * basic sheets. */
int tl_trace_report_open_infer_with(tl_report *r, const char *path, const tl_trace_infer_spec *spec,
                                    tl_trace_infer_sheets_fn build, tl_error *err);

/* Wait until the trace of a report opened by tl_trace_report_open is loaded: 0, or -1
 * with *err set (the one-line message of a bad trace).  0 for any other report. */
int tl_trace_report_wait(tl_report *r, tl_error *err);

/* The loaded trace of a report opened by tl_trace_report_open (waiting for it; NULL for
 * any other report, or when the trace failed to load).  It lives as long as the report. */
tl_trace *tl_trace_report_trace(tl_report *r);

/* The trace of a report opened by tl_trace_report_open as soon as it is loaded, while
 * its sheets may still be in the making (NULL for any other report, or when it failed
 * to load: tl_trace_report_wait then says why).  The sheets only read the trace, so
 * other threads may read it beside them. */
tl_trace *tl_trace_report_loaded(tl_report *r);

#endif
