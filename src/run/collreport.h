/*
 * collreport.h - one multi-rank collective report run (MULTIRANK.md), for every front end:
 * the rank files found, read on worker threads, the sheets made and written as a
 * workbook and/or CSVs (whole or not at all).  Errors come back, never exit.
 */
#ifndef TL_RUN_COLLREPORT_H
#define TL_RUN_COLLREPORT_H

#include "ranks/ranks.h"
#include "table/result.h"

typedef struct tl_run_ranks_opts {
    tl_ranks_opts r;
    const char *output;  /* the workbook, or NULL */
    const char *csv_dir; /* every sheet as DIR/<sheet>.csv, or NULL; both NULL: the reference's
                            default, nccl_analysis_report.xlsx beside the rank files */
} tl_run_ranks_opts;

typedef struct tl_run_ranks {
    int status;        /* TL_RUN_OK, _FAILED (run/compare.h) */
    tl_error err;
    tl_results results; /* the sheets in workbook order */
    char *output;      /* the workbook written, or NULL */
    tl_arena arena;
    tl_rank_set set;
} tl_run_ranks;

/* Build and write the report.  Returns r->status; free r whatever it is. */
int tl_run_ranks_build(const tl_run_ranks_opts *o, tl_run_ranks *r);

/* The same in two halves, for a front end that reads the ranks itself (the MPI one):
 * init, then put the rank set, found and read (every rank's facts), in r->set, then
 * finish (the read failures checked, the sheets made and written). */
void tl_run_ranks_init(tl_run_ranks *r);
int tl_run_ranks_finish(const tl_run_ranks_opts *o, tl_run_ranks *r);
void tl_run_ranks_free(tl_run_ranks *r);

#endif
