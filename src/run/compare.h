/*
 * compare.h - one comparison run, for every front end (the tlcompare command line, the
 * Python module): options in; the result sheets, the summary, the outputs and a status out.
 *
 * The run opens the inputs (reports, or traces whose sheets are built, with capture
 * folders for graph-replay traces), aligns two traces' call trees, compares the sheet
 * groups, builds the summary and the gate, and writes the outputs (workbook, CSV
 * directory, summary files, TraceDiff directory) under temporary names, moving them into
 * place only when all are complete.  It never exits and prints nothing but the library's
 * warnings and notes (stderr, unless tl_quiet): errors come back in the comparison.
 *
 * Without a workbook or a CSV directory the run writes no sheets: every result table is
 * kept in memory for the caller (tl_comparison_write writes them later).
 */
#ifndef TL_RUN_COMPARE_H
#define TL_RUN_COMPARE_H

#include "base/cancel.h"
#include "summary/summary.h"
#include "table/report.h"
#include "table/result.h"

#include <stddef.h>

struct tl_rank_set; /* ranks/ranks.h */

/* A run's outcome, the command line's exit status. */
enum {
    TL_RUN_OK = 0,
    TL_RUN_FAILED = 1,     /* unreadable input, missing sheet, cannot write */
    TL_RUN_USAGE = 2,      /* the options or the inputs' tags do not make a run */
    TL_RUN_REGRESSION = 3, /* the gate failed (everything written) */
    TL_RUN_CANCELLED = 4,  /* *cancel was set: nothing written */
};

/* What a comparison keeps, and judges again, for the caller that made its inputs (a
 * comparison of runs: its runs, and their own gate): handed in as a context and two
 * functions, so that the comparison of reports needs to know nothing of what it holds. */
typedef struct tl_compare_owner {
    void *ctx; /* NULL: none; else owned by the comparison from the run on */
    /* the caller's own gate again at `pct` (tl_comparison_gate): 1 when it fails, its
     * violations appended to `violations` a line each (as tl_summary's lead_violations);
     * NULL: none */
    int (*gate)(const void *ctx, double pct, tl_buf *violations);
    void (*free)(void *ctx); /* ctx freed with the comparison (NULL: nothing to free) */
} tl_compare_owner;

typedef struct tl_compare_opts {
    const char *const *inputs; /* ninputs paths (a trace, an .xlsx workbook, a CSV directory) */
    size_t ninputs;
    const char *const *captures; /* NULL, or per input its capture folder (or NULL) */
    /* NULL, or per input a report already open (ops set): the run takes it over, and
     * inputs[i] is then only its name (default tag, messages) */
    tl_report *given;
    const char *const *names; /* --names: nnames tags (names_given); a tag repeated makes runs of one side */
    size_t nnames;
    int names_given;
    const char *output;        /* the workbook, or NULL (then no csv_dir either: results kept) */
    const char *csv_dir;       /* every result sheet as DIR/<sheet>.csv, or NULL */
    const char *summary_md;    /* the summary as Markdown, or NULL */
    const char *summary_json;  /* the summary as JSON, or NULL */
    const char *tracediff_dir; /* two traces: the TraceDiff files, or NULL */
    const char *html;          /* the comparison as one self-contained HTML page, or NULL */
    const char *gpu_arch;      /* NAME or FILE: the roofline columns of traces' perf sheets, or NULL */
    const char *gpu_arch_variant; /* the variants' GPU when it is not the baseline's, or NULL */
    unsigned run, named;       /* the groups to compare, and those named (compare/groups.h) */
    int no_summary;            /* no summary worksheet */
    int tracelens_keys;        /* pair rows on the groups' own keys only */
    double fail_pct;           /* the gate's percentage; < 0: no gate */
    double min_ms;             /* the gate's smallest op */
    double min_delta_ms, min_delta_pct;
    size_t top;                /* regressions and improvements listed; 0: the default */
    double confidence;         /* of the verdicts, as a fraction; 0: the default */
    int fdr;
    /* two traces with ProfilerStep#N steps: the steps the verdicts take (1-based positions
     * in each trace, inclusive; --steps FROM:TO); 0 and 0: the default (the first left out
     * as warm-up when a trace has 3 or more) */
    const char *steps;
    size_t step_first, step_last; /* step_last 0: to the last */
    int force_compare;         /* judge (and gate) runs the comparability guard calls unlike */
    int inference, parent_module, num_kernels, pseudo_ops; /* inference traces (INFERENCE.md §4) */
    /* NULL, or the flag another thread (a signal's handler) sets to stop the run: it is
     * read between the phases and result sheets, and by the trace reader between events */
    tl_cancel *cancel;
    int jobs;                  /* runs: ranks read at once (<= 0: the CPUs available) */
    /* runs: how a run's rank traces are read into s->facts (s->paths found, s->want_ops
     * set); NULL: tl_ranks_read on this machine.  An MPI front end spreads them over its
     * processes.  Returns 0, or -1 with *err naming the lowest rank that failed. */
    int (*read_ranks)(struct tl_rank_set *s, int jobs, void *ctx, tl_error *err);
    void *read_ranks_ctx;
    /* Set by a comparison of runs (run/dist.h) for the comparison of its ranks: */
    tl_compare_owner owner;    /* what the comparison keeps for it (freed with it) */
    tl_results *extra;         /* result sheets put after the groups' (taken over) */
    const char *lead_text, *lead_md, *lead_json; /* the summary's first lines, JSON fields */
    const tl_table *const *lead_tables;          /* the summary sheet's first blocks (borrowed) */
    const char *const *lead_titles;
    size_t nlead;
    int lead_gate_failed;      /* the runs' own gate (slowest rank, collectives) failed */
    const char *lead_violations; /* its violations, a line each (tl_summary's) */
    int ranks_as_runs;         /* the runs of a side are ranks: the verdict line says so */
} tl_compare_opts;

/* The defaults of the command line: every group, no gate, min_ms 1. */
void tl_compare_opts_init(tl_compare_opts *o);

struct tl_compare_state;

typedef struct tl_comparison {
    int status;      /* TL_RUN_* */
    int usage_hint;  /* a usage error the command line follows with its --help pointer */
    int output_failed; /* TL_RUN_FAILED because of an output, not an input (Python: OutputError) */
    tl_error err;    /* the one-line message of a failure (no program name) */
    /* the result sheets in workbook order (with outputs: a table is NULL once written
     * unless the summary reads it) */
    const tl_results *results;
    const tl_summary *summary; /* NULL unless the comparison ran */
    const char *const *tags;   /* the sides' tags, nsides of them */
    size_t nsides;
    struct tl_compare_state *st; /* the run's own */
} tl_comparison;

/* Run a comparison: of runs (rank sets, run/dist.h) when the inputs are runs, else of
 * reports and traces (tl_compare_reports).  Returns c->status; free c with
 * tl_comparison_free whatever it is. */
int tl_compare_run(const tl_compare_opts *o, tl_comparison *c);

/* The comparison of reports and traces itself, its inputs never taken for runs: what
 * tl_compare_run does once it knows they are none, and what a comparison of runs runs on
 * their ranks.  Returns c->status; free c with tl_comparison_free whatever it is. */
int tl_compare_reports(const tl_compare_opts *o, tl_comparison *c);

/* The default tags of inputs, the sides' names when --names gives none (the file's name
 * without its extensions; the parts of the paths that differ when those are alike):
 * malloc'd strings in a malloc'd array of n. */
char **tl_compare_default_tags(const char *const *paths, size_t n);

/* The first inference option o gives (--inference, --group_by_parent_module, ...): they read
 * traces as TraceLens' inference generator does; NULL when none is given. */
const char *tl_compare_infer_option(const tl_compare_opts *o);

/* Whether o gives any input a capture folder (o->captures may be an array of NULLs). */
int tl_compare_capture_given(const tl_compare_opts *o);

/* A kept comparison (no outputs given to the run): write its sheets as the workbook
 * `xlsx` and/or CSVs in `csv_dir` (either NULL), with the summary sheet unless the run
 * had no_summary, moved into place together.  Returns 0, or -1 with *err set and nothing
 * written (also when *cancel, if not NULL, is set before the end). */
int tl_comparison_write(tl_comparison *c, const char *xlsx, const char *csv_dir, tl_cancel *cancel, tl_error *err);

/* The summary as the --summary-json file holds it (into out, appended). */
void tl_comparison_summary_json(const tl_comparison *c, tl_buf *out);

/* The page as --html writes it (into out, appended). */
void tl_comparison_html(const tl_comparison *c, tl_buf *out);

/* The summary as --summary-md writes it. */
void tl_comparison_summary_md(const tl_comparison *c, tl_buf *out);

/* The summary as the command line prints it (color: with terminal colours). */
void tl_comparison_summary_text(const tl_comparison *c, int color, tl_buf *out);

/* The gate's and the summary's numbers as a front end took them, checked by one rule for
 * a comparison and for its gate again: pct (when has_pct), min_ms, min_delta_ms and
 * min_delta_pct finite and at least 0, top from 0 (the default) to 100000, confidence 0
 * (the run's) or a level from 50 % to below 100 %, as a percentage (95) or a fraction
 * (0.95), made a fraction; the same words as the option table's checks.  `names` are
 * the front end's words for the six, in that order.  Returns 0, or -1 with *err naming
 * the first one out of range. */
typedef struct tl_gate_args {
    double pct;
    int has_pct;
    double min_ms, min_delta_ms, min_delta_pct;
    long long top;
    double confidence;
} tl_gate_args;
int tl_gate_args_check(tl_gate_args *a, const char *const names[6], tl_error *err);

/* The gate again on a kept or written comparison, with other settings (g->pct >= 0; the
 * run's noise and confidence are used when g->noise is NULL and g->confidence is 0):
 * returns 1 when it fails, 0 when it passes; the violations as the command line prints
 * them into `violations` (may be NULL). */
int tl_comparison_gate(const tl_comparison *c, const tl_gate *g, tl_buf *violations);

/* In the child of a fork made while a run may have been under way in another thread
 * (Python's multiprocessing): the library's process-wide locks and lists start afresh,
 * so that the child's first run does not wait on a lock held by a thread it lacks. */
void tl_run_after_fork(void);

/* Free everything of the run; outputs not committed are removed. */
void tl_comparison_free(tl_comparison *c);

#endif
