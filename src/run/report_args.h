/*
 * report_args.h - tlreport's option contract: its table (run/options.h) and the one check
 * holding every rule between its options.  The command line fills a tl_report_args from
 * argv, the Python module from keyword arguments; both then call tl_report_args_check,
 * which completes `run` for tl_run_report_build.
 */
#ifndef TL_RUN_REPORT_ARGS_H
#define TL_RUN_REPORT_ARGS_H

#include "ranks/ranks.h"
#include "run/options.h"
#include "run/report.h"

typedef struct tl_report_args {
    tl_run_report_opts run; /* what the run takes: the table sets fields, the check the rest */
    tl_strlist traces;      /* TRACE: the positional arguments (exactly one) */
    const char *profile_json_path; /* the reference's spelling of TRACE */
    const char *output;     /* -o FILE (the command line gives run.output its default) */
    const char *csv_dir;    /* --output_csvs_dir DIR */
    const char *gpu_arch_json, *gpu_arch_name; /* the reference's GPU options */
    tl_strlist ignored;     /* the reference's options given that change nothing */
    tl_strlist only, drop;  /* Python: the sheets kept / dropped */
    int quiet, help, version;
    int kernel_summary, enable_kernel_summary; /* accepted: kernel_summary is always made */
    char *trace_buf;        /* the check's own: the TRACE part of TRACE@DIR */
    /* ---- many ranks (MULTIRANK.md): the multi-rank collective report ---- */
    const char *trace_pattern, *trace_glob, *trace_dir, *ranks_dir, *rank_regex;
    long world_size, gpus_per_node, jobs, max_workers; /* 0: not given */
    tl_strlist aggs;        /* --agg_metrics */
    int heatmap;
    int use_multiprocessing, detailed_analysis; /* accepted: ranks are always read in parallel */
    tl_ranks_opts ranks;    /* the check's: the rank set to read (mode 0: one trace) */
} tl_report_args;

extern const tl_tool tl_report_tool;

/* The defaults (tl_run_report_opts_init's). */
void tl_report_args_init(tl_report_args *a);

/*
 * Every rule between the options: a rank set (exactly one way of naming it, a world size,
 * known reducers: a->ranks) or one trace (TRACE@DIR its capture folder), one GPU
 * description, what inference traces refuse; warns about the accepted options that change
 * nothing.  Completes a->run but its outputs (the front ends' to choose).  Returns
 * TL_RUN_OK, TL_RUN_USAGE or TL_RUN_FAILED (a TRACE@DIR naming no file), with *err set.
 */
int tl_report_args_check(tl_report_args *a, tl_error *err);

void tl_report_args_free(tl_report_args *a);

#endif
