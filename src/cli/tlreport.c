/*
 * tlreport.c - the tlreport command line (TRACES.md §0): one PyTorch profiler trace in,
 * its TraceLens report out (a workbook and/or a directory of CSVs), with the reference
 * generator's option spellings, --help, --version and exit codes 0 (done), 1 (failure),
 * 2 (usage).
 */
#include "base/util.h"
#include "io/output.h"
#include "run/compare.h"
#include "run/collreport.h"
#include "run/report_args.h"
#include "write/xlsx_write.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum { EXIT_USAGE = 2 };

/* The trace's tag: its file name without .json.gz / .json and a trailing .pt.trace. */
static char *trace_tag(const char *path)
{
    size_t s, e;
    tl_path_base(path, &s, &e);
    char *t = tl_xmalloc(e - s + 1);
    memcpy(t, path + s, e - s);
    t[e - s] = 0;
    size_t n = strlen(t);
    static const char *const suffixes[] = {".json.gz", ".json", ".gz"};
    for (size_t i = 0; i < 3; i++) {
        size_t m = strlen(suffixes[i]);
        if (n > m && strcmp(t + n - m, suffixes[i]) == 0) {
            t[n -= m] = 0;
            break;
        }
    }
    if (n > 9 && strcmp(t + n - 9, ".pt.trace") == 0)
        t[n - 9] = 0;
    return t;
}

/* A many-rank run (MULTIRANK.md): the rank set the check resolved. */
static int run_ranks(const tl_report_args *a)
{
    tl_run_ranks_opts ro = {a->ranks, a->output, a->csv_dir};
    tl_run_ranks r;
    int rc = tl_run_ranks_build(&ro, &r);
    if (rc != TL_RUN_OK) {
        tl_output_cleanup();
        fprintf(stderr, "tlreport: %s\n", r.err.msg[0] ? r.err.msg : "failed");
        rc = 1;
    } else if (!a->quiet) {
        for (size_t i = 0; i < r.results.n; i++)
            printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", r.results.items[i].name,
                   r.results.items[i].nrows, r.results.items[i].ncols);
        if (r.output)
            printf("Wrote %s\n", r.output);
    }
    tl_run_ranks_free(&r);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    tl_progname = "tlreport";
#ifdef __GLIBC__
    /* The event arrays grow by doubling to hundreds of MB on a big trace: without this,
     * each growth is a fresh mmap whose pages fault in again. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    tl_report_args a;
    tl_report_args_init(&a);
    int done = 0;
    int rc = tl_opts_main(&tl_report_tool, TL_VERSION, argc, argv, &a, &done);
    if (rc != 0 || done) {
        tl_report_args_free(&a);
        return rc;
    }
    tl_output_install_cleanup();
    if (a.ranks.mode) {
        rc = run_ranks(&a);
        tl_report_args_free(&a);
        return rc;
    }

    char *tag = trace_tag(a.run.trace);
    char *default_out = NULL;
    a.run.output = a.output;
    a.run.csv_dir = a.csv_dir;
    if (!a.output && !a.csv_dir) {
        default_out = tl_xmalloc(strlen(tag) + 32);
        sprintf(default_out, "%s_perf_report.xlsx", *tag ? tag : "trace");
        a.run.output = default_out;
    }
    a.run.capture_hint = !a.quiet;
    tl_run_report rep;
    rc = tl_run_report_build(&a.run, &rep);
    if (rc == TL_RUN_USAGE) {
        fprintf(stderr, "tlreport: %s%s\n", rep.err.msg, rep.usage_hint ? " (see 'tlreport --help')" : "");
        rc = EXIT_USAGE;
    } else if (rc != TL_RUN_OK) {
        tl_output_cleanup();
        fprintf(stderr, "tlreport: %s\n", rep.err.msg[0] ? rep.err.msg : "failed");
        rc = 1;
    } else {
        if (!a.quiet && rep.infer_line.len)
            printf("%s\n", tl_buf_cstr(&rep.infer_line));
        if (!a.quiet)
            for (size_t i = 0; i < rep.results.n; i++)
                printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", rep.results.items[i].name,
                       rep.results.items[i].nrows, rep.results.items[i].ncols);
        fflush(stdout);
        tl_xlsx_warn_cut_text(); /* after the answer: one line for every cell cut */
    }
    tl_run_report_free(&rep);
    free(tag);
    free(default_out);
    tl_report_args_free(&a);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "tlreport: cannot write to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
