/*
 * tracediff.h - the command line's part of the morphology-aware diff (TRACES.md §5-§6):
 * two trace inputs aligned, the sheets lca_summary and diff_stats given to
 * the outputs, and the reference's TraceDiff files written into --tracediff-dir, all
 * under temporary names until the run commits them together.
 */
#ifndef TL_CLI_TRACEDIFF_H
#define TL_CLI_TRACEDIFF_H

#include "diff/diff.h"
#include "io/output.h"
#include "table/result.h"

typedef struct tl_cli_diff {
    tl_trace *t[2];
    tl_diff *d;
} tl_cli_diff;

/* Align two traces (the trace reports' own: they must outlive cd).  Returns 0, or -1
 * with *err set.  A trace without cpu ops cannot be aligned: an error when `required`
 * (--tracediff-dir), else a warning (cd->d stays NULL). */
int tl_cli_diff_align(tl_cli_diff *cd, tl_trace *t1, tl_trace *t2, int required, tl_error *err);

/* Write the TraceDiff files into the directory output `dir` (NULL for none; moved into
 * place with the run's other outputs), then give the sheets lca_summary and diff_stats to
 * the outputs' sink (the same tables: each is made once). */
int tl_cli_diff_put(tl_cli_diff *cd, const tl_sink *sink, tl_output *dir, tl_error *err);

void tl_cli_diff_free(tl_cli_diff *cd);

#endif
