/*
 * runs.h - several runs of one side (the same tag given to several reports): one sheet of
 * each run made into the side's one sheet, per row key, before the sides are compared.
 */
#ifndef TL_RUNS_H
#define TL_RUNS_H

#include "compare/compare.h"

/* The column beside every metric m of a side with runs: "<m>_std"; and the runs column. */
#define TL_RUNS_STD_SUFFIX "_std"
#define TL_RUNS_COLUMN "runs"

/*
 * Make runs[0..k) (k >= 2, consumed) one table: the rows are paired across the runs as
 * the sides are (SPEC §2 steps 0 and 2, on spec's keys; the row-key step included unless
 * spec->tracelens_keys), then every metric of spec->diffs holds the mean over the runs
 * that have the row, with "<m>_std" (the sample standard deviation over those runs,
 * missing for fewer than 2) right after it; every other column the first run's value that
 * is not missing; and a last column "runs", how many runs have the row.  The keys keep their
 * names and come first.  The runs are called "<side> run 1", ... in warnings.  Returns NULL with *err set when the merge is refused.
 */
tl_table *tl_runs_collapse(tl_table **runs, size_t k, const char *side, const tl_compare_spec *spec,
                           tl_arena *arena, tl_error *err);

/*
 * The same collapse, one run at a time: each run folded in as it comes (its table read,
 * not kept), so that the memory is the side's one table whatever the number of runs.  The
 * result is tl_runs_collapse's of the same tables in the same order, cell for cell (the
 * means are the same Welford updates in run order; a numeric column's integers turn
 * floating point exactly where the merge would have made them so), for tables whose keys
 * (every key of spec, in every table) are texts that do not repeat within a table: a
 * report built from a trace is so by construction.  A table that is not is refused
 * (tl_runs_fold_add returns -1 with *err naming the run, the sheet and the key).
 * Strings of the result live in `arena`.
 */
typedef struct tl_runs_fold tl_runs_fold;
tl_runs_fold *tl_runs_fold_new(const char *side, const tl_compare_spec *spec, tl_arena *arena);
int tl_runs_fold_add(tl_runs_fold *f, const tl_table *t, tl_error *err);
/* The side's one table (NULL when no run was folded); the fold is freed either way. */
tl_table *tl_runs_fold_finish(tl_runs_fold *f);
void tl_runs_fold_free(tl_runs_fold *f);

#endif
