/*
 * dist_facts.h - what a comparison of runs knows of its runs once they are read, and the
 * small helpers that read it: the lowest of the runs' files, shared by dist.c (the runs
 * read, their sheets, the run) and dist_answer.c (the summary's answer, the runs' gate),
 * and calling neither.
 */
#ifndef TL_RUN_DIST_FACTS_H
#define TL_RUN_DIST_FACTS_H

#include "base/hash.h"
#include "ranks/ranks.h"
#include "table/report.h"
#include "table/result.h"

/* The sheets a comparison of runs adds, in workbook order. */
#define TL_DIST_SHEET_RANKS "ranks_gpu_timeline"
#define TL_DIST_SHEET_SPREAD "ranks_spread"
#define TL_DIST_SHEET_COLL "collectives"
#define TL_DIST_SHEET_STRAGGLERS "stragglers"
#define TL_DIST_SHEET_RANK_OPS "ranks_ops"

/* The gpu_timeline rows a comparison of runs reads, in the order of its sheets. */
#define TL_DIST_NTYPES 6
extern const char *const tl_dist_types[TL_DIST_NTYPES];

/* One run: its rank set, read, and what the comparison keeps of each rank once it is
 * read (its ranks' tables are let go as they are folded into the run's one report). */
typedef struct dist_run {
    const char *path;
    char *tag;
    tl_rank_set set;
    tl_results coll; /* its multi-rank collective sheets (empty: none) */
    int reports;     /* given as per-rank reports, not traces */
    char *coll_path; /* reports: the collective report read, or NULL */
    const char *no_coll; /* why it has no collective sheets (NULL: it has) */
    double *times[TL_DIST_NTYPES]; /* per rank, each gpu_timeline row's time (ms; NaN: none) */
    double *op_ms;       /* per op of tl_dist.ops, per rank: its total_direct_kernel_time_ms (NaN: none) */
    tl_table *mean[2];   /* traces: the ranks' gpu_timeline and ops_summary folded (tl_runs_fold) */
    int no_ops;          /* traces: a rank without ops_summary, so the run has none */
    long straggler;      /* its straggler (tl_dist_straggler), or -1 */
} dist_run;

/* The runs of a comparison, read, and the inputs of the comparison of their ranks. */
struct tl_dist {
    dist_run *runs;
    size_t nruns;
    tl_arena arena;
    tl_results extra; /* the sheets of runs, in workbook order */
    tl_report *given;
    size_t ngiven;
    const char **inputs, **names;
    /* the ops of the baseline's rank 0 (its ops_summary's names, in row order) whose
     * per-rank times every run keeps to find the ops that moved on one rank only */
    int have_ops;
    const char **ops;
    size_t *op_first; /* the first op of the same name */
    size_t nops;
    tl_strmap op_index; /* name -> its first op + 1 */
};

/* A run's gpu_timeline row `type` over its ranks, in ms (malloc'd, one per rank; NaN: none). */
double *tl_dist_rank_values(const dist_run *run, const char *type);

/* The median of v[0..n) (NaN when n is 0); the index of its largest value (the lowest such). */
double tl_dist_median(const double *v, size_t n);
size_t tl_dist_argmax(const double *v, size_t n);

/* A sheet of a run's collective report, or NULL. */
const tl_table *tl_dist_coll_sheet(const dist_run *run, const char *name);

/* A run's straggler: the rank arriving last most often, when the others wait on it (its
 * collective sheets straggler_summary and nccl_implicit_sync); -1: none. */
long tl_dist_straggler(const dist_run *run);

/* v into cell r of c, unless NaN. */
void tl_dist_put_num(tl_column *c, size_t r, double v);

#endif
