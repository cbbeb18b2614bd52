/*
 * groups.h - the sheet groups of SPEC §3: which sheets are compared, on which keys and
 * metrics, what is dropped first, how rows are ordered, what the workbook hides, and
 * in which order the results come.
 */
#ifndef TL_GROUPS_H
#define TL_GROUPS_H

#include "report.h"
#include "table.h"

/* The groups, as named on the command line (--sheets). */
enum {
    TL_GROUP_GPU_TIMELINE = 1 << 0,
    TL_GROUP_OPS_SUMMARY = 1 << 1,
    TL_GROUP_KERNEL_SUMMARY = 1 << 2,
    TL_GROUP_OPS_ALL = 1 << 3,
    TL_GROUP_ROOFLINE = 1 << 4,
    TL_GROUP_ALL = (1 << 5) - 1,
};

/* The bit of a group name ("ops_all"), TL_GROUP_ALL for "all", 0 when unknown. */
unsigned tl_group_from_name(const char *name);

/* One result sheet of the comparison. */
typedef struct tl_result {
    const char *name;                  /* e.g. "GEMM_intersect_mi300" (arena) */
    tl_table *table;
    const char *const *hidden_suffixes; /* columns hidden in the workbook: NULL-terminated */
    size_t nrows, ncols;               /* its size (the table may be freed once written) */
} tl_result;

typedef struct tl_results {
    tl_result *items;
    size_t n, cap;
} tl_results;

void tl_results_free(tl_results *r);

/* 1 when the workbook hides column `name` of result `r`. */
int tl_result_hides(const tl_result *r, const char *name);

/*
 * Where results go, one at a time and in SPEC order, as soon as each is made: writing
 * them while the comparison goes on keeps only one group's tables in memory at a time.
 */
typedef struct tl_sink {
    /* Take result r (its table is the sink's from now on).  Returns 0 or -1 (err set). */
    int (*put)(void *ctx, const tl_result *r, tl_error *err);
    /* The memory of the first `upto` results is about to be reused: finish with their
     * tables.  Returns 0 or -1 (err set). */
    int (*sync)(void *ctx, size_t upto, tl_error *err);
    void *ctx;
} tl_sink;

/* A sink that appends every result to a tl_results (sync does nothing). */
tl_sink tl_results_sink(tl_results *out);

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

#endif
