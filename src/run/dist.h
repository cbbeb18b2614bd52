/*
 * dist.h - comparing distributed runs: a run is a rank set (a directory of rank traces, or
 * a pattern with a '*'; or its ranks' TraceLens reports, distreport.h), recognised by
 * content.  Every rank is read on the rank reader's workers (ranks/; or in shares by an
 * MPI front end's processes, tl_compare_opts.read_ranks) and reduced to its gpu_timeline,
 * ops_summary and collective rows; the
 * comparison then runs on the ranks as the runs of each side (ops compared on their mean
 * over the ranks, the ranks the samples of the verdicts), with the sheets only runs have
 * (per rank, spread, collectives, stragglers) and the answer first in the summary.
 */
#ifndef TL_RUN_DIST_H
#define TL_RUN_DIST_H

#include "run/compare.h"

/* The sheets a comparison of runs adds, in workbook order. */
#define TL_DIST_SHEET_RANKS "ranks_gpu_timeline"
#define TL_DIST_SHEET_SPREAD "ranks_spread"
#define TL_DIST_SHEET_COLL "collectives"
#define TL_DIST_SHEET_STRAGGLERS "stragglers"
#define TL_DIST_SHEET_RANK_OPS "ranks_ops"

/* 1 when `path` is a run: a directory whose files are named like ranks (the rank regex)
 * and are traces, or a pattern holding a '*' that matches such files; or a run of per-rank
 * reports (tl_dist_reports_claims). */
int tl_dist_claims(const char *path);

/* The comparison of runs when o's inputs are runs: returns c->status; -1 when no input is a
 * run (the caller compares reports as usual).  Inputs mixing runs with single traces or
 * reports are a usage error that says so. */
int tl_dist_compare_run(const tl_compare_opts *o, tl_comparison *c);

/* The runs' own gate again at `pct` (the slowest rank's busy time, the collective whose
 * bus bandwidth changed most): 1 when it fails, its violations appended to `violations` a
 * line each (as tl_summary's lead_violations), else 0. */
struct tl_dist;
int tl_dist_gate(const struct tl_dist *d, double pct, tl_buf *violations);

/* What a comparison of runs keeps until the comparison is freed. */
struct tl_dist;
void tl_dist_free(struct tl_dist *d);

/* The default tags of inputs (compare.c's rules): malloc'd strings in a malloc'd array. */
char **tl_compare_default_tags(const char *const *paths, size_t n);

#endif
