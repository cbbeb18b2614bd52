/*
 * groups.h - the sheet groups of SPEC §3: which sheets are compared, on which keys and
 * metrics, what is dropped first, how rows are ordered, what the workbook hides, and
 * in which order the results come.
 */
#ifndef TL_GROUPS_H
#define TL_GROUPS_H

#include "compare/compare.h"
#include "table/report.h"
#include "table/result.h"
#include "table/table.h"

/* The groups, as named on the command line (--sheets). */
enum {
    TL_GROUP_GPU_TIMELINE = 1 << 0,
    TL_GROUP_OPS_SUMMARY = 1 << 1,
    TL_GROUP_KERNEL_SUMMARY = 1 << 2,
    TL_GROUP_OPS_ALL = 1 << 3,
    TL_GROUP_ROOFLINE = 1 << 4,
    TL_GROUP_ALL = (1 << 5) - 1, /* the reference's groups: every one above */
    /* The perf-model sheets outside the roofline group (Normalization, Reduce_fwd, ...):
     * split like the roofline sheets.  Beyond the reference, so not part of "all". */
    TL_GROUP_PERF = 1 << 5,
};

/* The bit of a group name ("ops_all"), TL_GROUP_ALL for "all", 0 when unknown. */
unsigned tl_group_from_name(const char *name);

/* The keys and tracked metrics on which summary group `sheet` ("gpu_timeline",
 * "ops_summary", "kernel_summary") compares its rows, as *spec (tracelens_keys 0): for
 * readers that must pair and average rows as the group does.  -1 when no group has it. */
int tl_group_spec(const char *sheet, tl_compare_spec *spec);

/*
 * Run the groups over reports[0..n) (baseline first) and give the results to `sink` in
 * SPEC order.  `named` holds the groups named explicitly with --sheets (a named group
 * whose sheet the baseline lacks is an error); `run` the groups to run (named, or all).
 * The results of the split groups (ops_all, roofline) hold strings of the reports'
 * scratch arenas, used in turn: before a split sheet is read, the sink is synced up to
 * the results of the sheet before the previous one, and that sheet's arena is reset.
 * Returns 0, or -1 with *err set.
 */
int tl_run_groups(tl_report *reports, size_t n, unsigned run, unsigned named, tl_sink *sink,
                  tl_arena *arena, tl_error *err);

/* Options of a run beyond the groups. */
enum {
    TL_RUN_TRACELENS_KEYS = 1 << 0, /* pair rows on the groups' own keys only (no row-key step) */
    TL_RUN_READ_ONCE = 1 << 1,      /* nothing reads a sheet again once the run has read it:
                                       each is let go as soon as it is read
                                       (tl_report_forget_sheet) */
};

/* tl_run_groups with options `flags` (TL_RUN_*). */
int tl_run_groups_with(tl_report *reports, size_t n, unsigned run, unsigned named, unsigned flags,
                       tl_sink *sink, tl_arena *arena, tl_error *err);

/* Shown each sheet a split group (ops_all, roofline, perf) reads, report by report (an
 * index into reports[]), before the group drops anything from it: for other readers of
 * the same sheets (the summary's efficiency lines), so that no sheet is read twice.  The
 * table is the group's: valid during the call only. */
typedef void (*tl_sheet_observer)(void *ctx, size_t report, const char *sheet, const tl_table *t);

/* tl_run_groups_with, and every sheet read is shown to `observe` (NULL: to none). */
int tl_run_groups_observed(tl_report *reports, size_t n, unsigned run, unsigned named, unsigned flags,
                           tl_sheet_observer observe, void *observe_ctx, tl_sink *sink, tl_arena *arena,
                           tl_error *err);

/* The i-th perf-model sheet that a group compares (the roofline group's seven, then the
 * perf group's), or NULL past the last: for readers of the perf sheets outside the
 * comparison, so that the list lives in one place. */
const char *tl_perf_sheet(size_t i);

/* The stem of the results of tl_perf_sheet(i) ("<stem>_intersect_<tag>", ...): the sheet's
 * name, or its short form (un_eltwise for UnaryElementwise); NULL past the last. */
const char *tl_perf_result_stem(size_t i);

/* 1 when report `r` has a sheet that one of the groups in `run` compares. */
int tl_groups_any_sheet(const tl_report *r, unsigned run);

#endif
