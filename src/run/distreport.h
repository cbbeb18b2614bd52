/*
 * distreport.h - a distributed run given as per-rank TraceLens reports: a directory (or a
 * pattern with a '*') whose entries named like ranks (the default rank regex, as for
 * traces) are reports, each a CSV directory or a workbook holding gpu_timeline (and
 * ops_summary); beside them, optionally, the run's collective report (tlreport --ranks's
 * workbook or CSV directory, under a name that names no rank).  Recognised by content: a
 * report is a directory with gpu_timeline.csv or a zip file.
 */
#ifndef TL_RUN_DISTREPORT_H
#define TL_RUN_DISTREPORT_H

#include "base/arena.h"
#include "ranks/ranks.h"
#include "table/result.h"

/* 1 when `path` is a run of per-rank reports: some entry it names is named like a rank
 * and is a report (a directory holding gpu_timeline.csv, or a zip file). */
int tl_dist_reports_claims(const char *path);

/* Read the run at `path`: s gets its world size, its ranks' paths and per rank the facts a
 * comparison of runs reads (gpu_timeline, ops_summary when the report has it; the other
 * facts empty); coll gets the collective report's sheets nccl_summary_implicit_sync,
 * straggler_summary and nccl_implicit_sync (those it has; their strings in `a`), or stays
 * empty when the run has none (*coll_path then NULL, else the report's path, malloc'd).
 * Returns 0, or -1 with *err naming the run and the rank, file or sheet at fault (a rank
 * missing or given twice, a report without gpu_timeline). */
int tl_dist_reports_read(const char *path, tl_rank_set *s, tl_results *coll, char **coll_path, tl_arena *a,
                         tl_error *err);

#endif
