/*
 * main.c - the tlcompare command line (SPEC §1): the TraceLens comparison tool's words
 * and defaults, plus --help, --version and exit codes 0 (done), 1 (failure), 2 (usage).
 */
#include "base/progress.h"
#include "io/output.h"
#include "run/compare_args.h"
#include "summary/summary.h"
#include "write/xlsx_write.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum { EXIT_USAGE = 2, EXIT_REGRESSION = 3 };

/* The summary on stdout, made valid UTF-8 like the files (a terminal shows U+FFFD). */
static void print_summary(const tl_comparison *cmp, int color)
{
    tl_buf b = {0};
    tl_comparison_summary_text(cmp, color, &b);
    if (b.len)
        fwrite(b.data, 1, b.len, stdout);
    tl_buf_free(&b);
}

/*
 * A run allocates and frees the same few hundred MB over and over (one sheet's tables
 * and arenas after another).  glibc gives big blocks back to the kernel at once (mmap'd
 * above 128 KB-32 MB, heap tops trimmed), so each sheet faulted its memory in anew: ~0.13 s
 * of system time on the 20k benchmark.  A short-lived tool can keep what it freed.
 */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    tl_compare_args a;
    tl_compare_args_init(&a);
    int done = 0;
    int rc = tl_opts_main(&tl_compare_tool, TL_VERSION, argc, argv, &a, &done);
    if (rc != 0 || done) {
        tl_compare_args_free(&a);
        return rc;
    }
    tl_output_install_cleanup();
    tl_progress_start(!a.quiet);
    double t_start = tl_now();

    tl_comparison cmp;
    rc = tl_compare_run(&a.run, &cmp);
    if (rc == TL_RUN_USAGE) {
        tl_progress_done();
        fprintf(stderr, "tlcompare: %s%s\n", cmp.err.msg, cmp.usage_hint ? " (see 'tlcompare --help')" : "");
        rc = EXIT_USAGE;
    } else if (rc != TL_RUN_OK && rc != TL_RUN_REGRESSION) {
        tl_progress_done();
        tl_output_cleanup(); /* nothing half-written stays behind */
        fprintf(stderr, "tlcompare: %s\n", cmp.err.msg[0] ? cmp.err.msg : "failed");
        rc = 1;
    } else {
        tl_progress_done();
        const tl_results *results = cmp.results;
        const tl_summary *summary = cmp.summary;
        if (!a.quiet) {
            /* the answer first: the summary, then one line for what was written (-v: a line
             * per sheet, before the summary) */
            size_t nempty = 0;
            for (size_t i = 0; i < results->n; i++) {
                const tl_result *r = &results->items[i];
                nempty += r->nrows == 0;
                if (a.verbose)
                    printf("Wrote sheet '%s' with %zu row%s \xC3\x97 %zu column%s\n", r->name, r->nrows,
                           r->nrows == 1 ? "" : "s", r->ncols, r->ncols == 1 ? "" : "s");
            }
            const char *no_color = getenv("NO_COLOR");
            print_summary(&cmp, isatty(STDOUT_FILENO) && !(no_color && *no_color));
            printf("%sWrote %s: %zu result sheet%s", summary->nvariants ? "\n" : "", a.run.output, results->n,
                   results->n == 1 ? "" : "s");
            if (nempty)
                printf(" (%zu with no rows)", nempty);
            if (a.run.csv_dir)
                printf(", and the same as CSVs in %s", a.run.csv_dir);
            printf("%s\n", a.verbose ? "" : "; -v lists them");
        }
        fflush(stdout);
        tl_xlsx_warn_cut_text(); /* after the answer: one line for every cell cut */
        tl_timing.total = tl_now() - t_start;
        if (a.timings)
            fprintf(stderr, "timings: read %.3f s, compare %.3f s, format %.3f s, summary %.3f s, workbook %.3f s, "
                            "csv %.3f s, html %.3f s, total %.3f s\n", tl_timing.read, tl_timing.compare, tl_timing.format,
                    tl_timing.summary, tl_timing.write_xlsx, tl_timing.write_csv, tl_timing.html, tl_timing.total);
        if (rc == TL_RUN_REGRESSION) {
            tl_summary_print_violations(summary, stderr);
            rc = EXIT_REGRESSION;
        }
    }
    tl_comparison_free(&cmp);
    tl_compare_args_free(&a);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "tlcompare: cannot write the summary to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
