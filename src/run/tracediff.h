/*
 * tracediff.h - the run's part of the morphology-aware diff (TRACES.md §5-§6):
 * two trace inputs aligned, the sheets lca_summary and diff_stats given to
 * the outputs, and the reference's TraceDiff files written into --tracediff-dir, all
 * under temporary names until the run commits them together.
 */
#ifndef TL_RUN_TRACEDIFF_H
#define TL_RUN_TRACEDIFF_H

#include "diff/diff.h"
#include "io/output.h"
#include "table/result.h"

#include <pthread.h>

typedef struct tl_run_diff {
    tl_trace *t[2];
    tl_diff *d;
    int started, running, joined, required;
    tl_output *dir;    /* --tracediff-dir's output, or NULL */
    char *paths[7];    /* its files' temporary paths (tl_run_diff_files' order) */
    tl_error werr;     /* the helper's write of the unique-args summary failed: why */
    int wrc;
    pthread_t th;
    tl_error derr;     /* the alignment's error (a trace without cpu ops) */
    tl_table *stats;   /* diff_stats and lca_summary, for the sheets and the directory (the */
    tl_table *lca;     /* unique-args summary is written as it is made, never held) */
    tl_arena arena;    /* lca_summary's strings */
    tl_arena arena2;   /* diff_stats' (made on another thread) */
    double secs;       /* the helper's time, for --timings */
} tl_run_diff;

/* The names of the files written into --tracediff-dir (*n of them). */
const char *const *tl_run_diff_files(size_t *n);

/* Start aligning two traces (the trace reports' own: they must outlive cd) on a helper
 * thread, with the tables made from the result; `dir`: --tracediff-dir's output (NULL for
 * none), whose unique-args summary the helper writes and frees as soon as it is made (the
 * largest table, needed by no sheet).  Returns 0.  A trace without cpu ops cannot be
 * aligned: tl_run_diff_put then fails when `required` (--tracediff-dir), else warns (and
 * there is no diff). */
int tl_run_diff_align(tl_run_diff *cd, tl_trace *t1, tl_trace *t2, int required, tl_output *dir, tl_error *err);

/* The diff, once the alignment is done (waiting for it); NULL for none. */
const tl_diff *tl_run_diff_result(tl_run_diff *cd);

/* Wait for the alignment; write the rest of the TraceDiff files into the directory
 * output given to tl_run_diff_align (moved into place with the run's other outputs), then
 * give the sheets lca_summary and diff_stats to the outputs' sink (the same tables: each
 * made once).  Returns 0, or -1 with *err set. */
int tl_run_diff_put(tl_run_diff *cd, const tl_sink *sink, tl_error *err);

/* Wait for the alignment's thread, if it runs, and nothing more: a run that stops early
 * does so before it frees the directory the thread writes into. */
void tl_run_diff_wait(tl_run_diff *cd);

/* Wait for the alignment's thread, if it runs, and free what it made. */
void tl_run_diff_free(tl_run_diff *cd);

#endif
