/*
 * dist.h - comparing distributed runs: a run is a rank set (a directory of rank traces, or
 * a pattern with a '*'; or its ranks' TraceLens reports, distreport.h), recognised by
 * content.  Every rank is read on the rank reader's workers (ranks/; or in shares by an
 * MPI front end's processes, tl_compare_opts.read_ranks) and reduced to its gpu_timeline,
 * ops_summary and collective rows; the comparison then runs on the ranks as the runs of
 * each side (ops compared on their mean over the ranks, the ranks the samples of the
 * verdicts), with the sheets only runs have (per rank, spread, collectives, stragglers)
 * and the answer first in the summary.
 */
#ifndef TL_RUN_DIST_H
#define TL_RUN_DIST_H

#include "run/compare.h"
#include "run/dist_facts.h" /* the sheets a comparison of runs adds (TL_DIST_SHEET_*) */

/* 1 when `path` is a run: a directory whose files are named like ranks (the rank regex)
 * and are traces, or a pattern holding a '*' that matches such files; or a run of per-rank
 * reports (tl_dist_reports_claims). */
int tl_dist_claims(const char *path);

/* The comparison of runs when o's inputs are runs (tl_compare_run's choice): returns
 * c->status; -1 when no input is a run (the caller compares reports as usual).  Inputs
 * mixing runs with single traces or reports are a usage error that says so.  The
 * comparison of their ranks is tl_compare_reports, c keeping the runs until it is freed. */
int tl_dist_compare_run(const tl_compare_opts *o, tl_comparison *c);

#endif
