/*
 * report.h - one report run, for every front end (tlreport, the Python module): a
 * PyTorch profiler trace (with its capture folder, or in inference mode) in, its TraceLens
 * report sheets out, written as a workbook and/or a CSV directory (whole or not at all)
 * or kept in memory.  Errors come back, never exit; warnings and notes go to stderr
 * unless tl_quiet.
 */
#ifndef TL_RUN_REPORT_H
#define TL_RUN_REPORT_H

#include "base/arena.h"
#include "base/cancel.h"
#include "table/result.h"
#include "write/xlsx_write.h"

typedef struct tl_trace tl_trace;

typedef struct tl_run_report_opts {
    const char *trace;       /* the trace file */
    const char *capture_dir; /* its capture folder (graph replay), or NULL */
    const char *output;      /* the workbook, or NULL */
    const char *csv_dir;     /* every sheet as DIR/<sheet>.csv, or NULL; both NULL: kept */
    const char *gpu_arch;    /* NAME or FILE: the perf sheets' roofline columns, or NULL */
    const char *html;        /* the report as one self-contained HTML page, or NULL */
    int unlinked;            /* gpu_timeline counts the GPU events with no launch too */
    int no_coll;             /* --disable_coll_analysis: no coll_analysis sheet */
    long topk_ops;           /* keep the first N rows of ops_unique_args; < 0: all */
    int inference, parent_module, num_kernels, call_stack, pseudo_ops; /* INFERENCE.md §0 */
    int capture_hint;        /* a note when the trace looks like it wants a capture folder */
    tl_cancel *cancel;       /* NULL, or the flag that stops the run (base/cancel.h) */
} tl_run_report_opts;

/* Set the defaults: everything 0 or NULL, topk_ops -1. */
void tl_run_report_opts_init(tl_run_report_opts *o);

typedef struct tl_run_report {
    int status;     /* TL_RUN_OK, _FAILED, _USAGE, _CANCELLED (run/compare.h) */
    int usage_hint; /* a usage error the command line follows with its --help pointer */
    tl_error err;
    /* the sheets in workbook order: names and sizes always, tables only when kept */
    tl_results results;
    tl_buf infer_line; /* a capture folder's attribution: the line tlreport prints */
    tl_trace *trace;
    tl_arena arena; /* the sheets' strings */
} tl_run_report;

/* Build (and write) the report.  Returns r->status; free r whatever it is. */
int tl_run_report_build(const tl_run_report_opts *o, tl_run_report *r);

void tl_run_report_free(tl_run_report *r);

/* A kept report (no outputs given to the build): write its sheets as the workbook `xlsx`
 * and/or CSVs in `csv_dir` (either NULL), moved into place together.  Returns 0, or -1
 * with *err set and nothing written (also when *cancel is set before the end; cancel may
 * be NULL). */
int tl_run_report_write(const tl_run_report *r, const char *xlsx, const char *csv_dir, tl_cancel *cancel,
                        tl_error *err);

/* Write results kept in memory (tables and all) as the workbook `xlsx` (with the summary
 * sheet `summary` first, if not NULL; summary_first: a summary sheet was planned, as
 * tl_out_open takes it) and/or the CSVs of `csv_dir` (either NULL), moved into
 * place together; the tables are copied, not taken.  Returns 0, or -1 with *err set and
 * nothing written (also when *cancel, if not NULL, is set before the end). */
int tl_run_write_kept(const tl_results *res, const char *xlsx, const char *csv_dir, int summary_first,
                      const tl_summary_sheet *summary, tl_cancel *cancel, tl_error *err);

/* Write every result of `res` as DIR/<name>.csv under a temporary directory moved into
 * place when all are written.  Returns 0, or -1 with *err set (nothing written; also when
 * *cancel, if not NULL, is set before the end). */
int tl_run_write_csvs(const tl_results *res, const char *dir, tl_cancel *cancel, tl_error *err);

#endif
