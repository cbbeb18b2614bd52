/*
 * main.c - the tlcompare command line (SPEC §1): the TraceLens comparison tool's words
 * and defaults, plus --help, --version and exit codes 0 (done), 1 (failure), 2 (usage).
 */
#include "base/opts.h"
#include "base/progress.h"
#include "compare/groups.h"
#include "io/output.h"
#include "run/compare.h"
#include "summary/summary.h"
#include "trace/capture.h"
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

typedef struct options {
    const char **reports;
    size_t nreports;
    const char **names;
    size_t nnames;
    int names_given;
    const char *output;
    const char *csv_dir;
    unsigned run, named;
    int quiet;
    int timings;              /* --timings: where the time went, on stderr */
    const char *summary_md;   /* --summary-md FILE */
    const char *summary_json; /* --summary-json FILE */
    const char *html;         /* --html FILE: the comparison as one self-contained page */
    int no_summary;           /* --no-summary: no summary worksheet */
    double fail_pct;          /* --fail-on-regression PCT; < 0: no gate */
    double min_ms;            /* --min-time-ms MS */
    int verbose;              /* -v: a line per result sheet */
    int tracelens_keys;       /* --tracelens-keys: no row-key step */
    double min_delta_ms;      /* --min-delta-ms MS: smaller changes are not listed or gated */
    double min_delta_pct;     /* --min-delta-pct PCT */
    size_t top;               /* --top N: regressions and improvements listed */
    const char *tracediff_dir; /* --tracediff-dir DIR: the TraceDiff files of two traces */
    const char *gpu_arch;     /* --gpu-arch NAME|FILE: the roofline columns of traces' perf sheets */
    double confidence;         /* --confidence PCT, as a fraction; 0: the default */
    int fdr;                   /* --fdr: verdicts at a false discovery rate */
    /* inference traces (INFERENCE.md §4): TRACE@DIR inputs, and the options for all traces */
    const char **capture;      /* per report: its capture folder, or NULL */
    char **split;              /* per report: the TRACE part of TRACE@DIR (owned) */
    int inference, parent_module, num_kernels, pseudo_ops;
} options;

static const char inference_help[] =
    "\n"
    "inference traces (graph replay, INFERENCE.md): a trace input written TRACE@DIR is\n"
    "attributed through the capture traces in DIR; then every trace input gets the\n"
    "inference generator's sheets.  Options for all trace inputs: --inference,\n"
    "--group_by_parent_module, --group_by_num_kernels, --enable_pseudo_ops.\n";

static const char usage_text[] =
    "usage: tlcompare REPORT REPORT [REPORT ...] [-o FILE] [--output_csvs_dir DIR]\n"
    "                 [--names TAG ...] [--sheets GROUP ...] [--summary-md FILE]\n"
    "                 [--summary-json FILE] [--html FILE] [--fail-on-regression PCT [--min-time-ms MS]]\n"
    "                 [--min-delta-ms MS] [--min-delta-pct PCT] [--top N]\n"
    "                 [--confidence PCT] [--fdr] [--tracelens-keys] [--tracediff-dir DIR]\n"
    "                 [--gpu-arch NAME|FILE] [--no-summary] [--timings] [-v] [-q]\n";

static const char help_text[] =
    "Compare TraceLens performance reports: the first REPORT is the baseline, every other\n"
    "one a variant.  A REPORT is an .xlsx workbook, a directory of <sheet>.csv files, or a\n"
    "PyTorch profiler trace (.json / .json.gz, recognised by content: its report is built).\n"
    "Writes one workbook with side-by-side metrics and per-metric diffs, exactly as\n"
    "TraceLens_compare_perf_reports_pytorch does.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE         the workbook to write (default: comparison.xlsx)\n"
    "  --output_csvs_dir DIR     also write every result sheet as DIR/<sheet>.csv\n"
    "  --names TAG ...           one tag per report (default: the file or directory names)\n"
    "  --sheets GROUP ...        groups to compare: gpu_timeline ops_summary kernel_summary\n"
    "                            ops_all roofline perf all (default: all; perf, the\n"
    "                            other perf-model sheets, only when named)\n"
    "  --summary-md FILE         write the summary as Markdown (for a pull request)\n"
    "  --summary-json FILE       write the summary as JSON\n"
    "  --html FILE               write the comparison as one self-contained HTML page\n"
    "                            (summary, timeline, what moved, roofline, call tree)\n"
    "  --no-summary              no summary worksheet at the front of the workbook\n"
    "  --tracediff-dir DIR       two traces: write TraceLens' TraceDiff files into DIR\n"
    "  --gpu-arch NAME|FILE      traces: the perf sheets' roofline columns against a GPU's\n"
    "                            peaks (H100, H200, B200, MI300X, MI325X, MI355X, or a\n"
    "                            TraceLens-style JSON file)\n"
    "  --fail-on-regression PCT  exit with status 3 (after writing everything) when a\n"
    "                            variant's busy GPU time, or any op of at least\n"
    "                            --min-time-ms in the baseline, is more than PCT% slower\n"
    "  --min-time-ms MS          the gate's smallest op to judge (default: 1)\n"
    "  --min-delta-ms MS         the summary and the gate ignore changes smaller than MS\n"
    "  --min-delta-pct PCT       ... and changes smaller than PCT% (both default: 0;\n"
    "                            floating-point noise is always ignored)\n"
    "  --top N                   list the N largest regressions and improvements (default: 10)\n"
    "  --confidence PCT          the level of the verdicts' intervals (default: 95); the share of\n"
    "                            chance that any change listed is noise is kept at 100 - PCT%\n"
    "  --fdr                     hold the verdicts to a false discovery rate instead (Benjamini-\n"
    "                            Hochberg: finds more when many ops changed, lists some noise)\n"
    "  --tracelens-keys          pair rows on the groups' own keys only, exactly as the TraceLens\n"
    "                            tool (default: add is_recompute, gpu_pid, parent_module,\n"
    "                            Parent cpu_op, Parent op category, Kernel stream to the keys\n"
    "                            while they repeat in a report)\n"
    "  --timings                 print where the time went (stderr)\n"
    "  -v, --verbose             print a line per result sheet written\n"
    "  -q, --quiet               print nothing but errors\n"
    "  -h, --help                show this help and exit\n"
    "  --version                 show the version and exit\n"
    "\n"
    "exit status: 0 done, 1 failure (unreadable report, missing sheet, cannot write),\n"
    "2 usage error, 3 the --fail-on-regression gate failed (all outputs written).\n"
    "\n"
    "example:\n"
    "  tlcompare runs/h100.xlsx runs/mi300.xlsx --names h100 mi300 -o h100_vs_mi300.xlsx\n"
    "\n"
    "See tlcompare(1) for the result sheets and where tlcompare differs from TraceLens.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tlcompare: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'tlcompare --help')\n");
    return EXIT_USAGE;
}

/* Does argv[i] start another option?  ("-" alone and negative numbers do not.) */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9');
}

/* The value of an option written "--opt VALUE", "--opt=VALUE" or "-oVALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *eq)
{
    if (eq)
        return eq;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* One --sheets word: a group's bit into *named, or "all" into *all.  0, or the usage error's status. */
static int add_group(const char *g, unsigned *named, int *all)
{
    unsigned bit = tl_group_from_name(g);
    if (!bit)
        return usage_error("--sheets: unknown group '%s' (choose from gpu_timeline, "
                           "ops_summary, kernel_summary, ops_all, roofline, perf, all)", g);
    if (bit == TL_GROUP_ALL)
        *all = 1;
    else
        *named |= bit;
    return 0;
}

/* Every spelling tlcompare takes; a long one may be abbreviated to any prefix no other
 * shares, as TraceLens' argparse tools allow (base/opts.h). */
static const tl_opt tlcompare_opts[] = {
    {"-h", 0, 0}, {"--help", 0, 0}, {"--version", 0, 0}, {"-q", 0, 0}, {"--quiet", 0, 0}, {"-o", 1, 0}, {"--output", 1, 0},
    {"--output_csvs_dir", 1, 0}, {"--output-csvs-dir", 1, 0}, {"--summary-md", 1, 0}, {"--summary-json", 1, 0},
    {"--html", 1, 0},
    {"--tracediff-dir", 1, 0}, {"-v", 0, 0}, {"--verbose", 0, 0}, {"--tracelens-keys", 0, 0}, {"--min-delta-ms", 1, 0},
    {"--min-delta-pct", 1, 0}, {"--top", 1, 0}, {"--timings", 0, 0}, {"--no-summary", 0, 0}, {"--fail-on-regression", 1, 0},
    {"--min-time-ms", 1, 0}, {"--names", 1, 0}, {"--sheets", 1, 0}, {"--gpu-arch", 1, 0}, {"--confidence", 1, 0},
    {"--fdr", 0, 0}, {"--inference", 0, 0}, {"--group_by_parent_module", 0, 0}, {"--group_by_num_kernels", 0, 0},
    {"--enable_pseudo_ops", 0, 0},
};

static int parse_args(int argc, char **argv, options *o)
{
    o->reports = tl_xcalloc((size_t)argc, sizeof *o->reports);
    o->names = tl_xcalloc((size_t)argc, sizeof *o->names);
    o->output = "comparison.xlsx";
    o->fail_pct = -1;
    o->min_ms = 1;
    int only_positional = 0;
    unsigned sheets_named = 0;
    int sheets_given = 0, all_given = 0;

    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_positional || !is_option(a)) {
            o->reports[o->nreports++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_positional = 1;
            continue;
        }
        /* split "--opt=value" */
        const char *eq = NULL;
        char name[64];
        if (a[1] == '-' && strchr(a, '=')) {
            size_t n = (size_t)(strchr(a, '=') - a);
            if (n >= sizeof name)
                return usage_error("unknown option '%s'", a);
            memcpy(name, a, n);
            name[n] = '\0';
            eq = a + n + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        if (a[1] == '-') {
            tl_buf why = {0};
            const tl_opt *opt = tl_opt_find(tlcompare_opts, sizeof tlcompare_opts / sizeof *tlcompare_opts, name, &why);
            if (!opt) {
                int rc = usage_error("%s", tl_buf_cstr(&why));
                tl_buf_free(&why);
                return rc;
            }
            tl_buf_free(&why);
            snprintf(name, sizeof name, "%s", opt->name);
        }

        if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            fputs(usage_text, stdout);
            fputc('\n', stdout);
            fputs(help_text, stdout);
            fputs(inference_help, stdout);
            exit(0);
        } else if (!strcmp(name, "--version")) {
            printf("tlcompare %s\n", TL_VERSION);
            exit(0);
        } else if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output") || !strncmp(a, "-o", 2)) {
            if (a[1] != '-' && a[2] != '\0')
                eq = a + 2; /* -oFILE */
            o->output = option_value(argc, argv, &i, eq);
            if (!o->output || !*o->output)
                return usage_error("%s needs a file name", name);
        } else if (!strcmp(name, "--output_csvs_dir") || !strcmp(name, "--output-csvs-dir")) {
            o->csv_dir = option_value(argc, argv, &i, eq);
            if (!o->csv_dir || !*o->csv_dir)
                return usage_error("%s needs a directory", name);
        } else if (!strcmp(name, "--summary-md") || !strcmp(name, "--summary-json")) {
            const char *v = option_value(argc, argv, &i, eq);
            if (!v || !*v)
                return usage_error("%s needs a file name", name);
            *(name[10] == 'm' ? &o->summary_md : &o->summary_json) = v;
        } else if (!strcmp(name, "--html")) {
            o->html = option_value(argc, argv, &i, eq);
            if (!o->html || !*o->html)
                return usage_error("%s needs a file name", name);
        } else if (!strcmp(name, "--gpu-arch")) {
            o->gpu_arch = option_value(argc, argv, &i, eq);
            if (!o->gpu_arch || !*o->gpu_arch)
                return usage_error("%s needs a GPU name or a file", name);
        } else if (!strcmp(name, "--tracediff-dir")) {
            o->tracediff_dir = option_value(argc, argv, &i, eq);
            if (!o->tracediff_dir || !*o->tracediff_dir)
                return usage_error("%s needs a directory", name);
        } else if (!strcmp(name, "-v") || !strcmp(name, "--verbose")) {
            o->verbose = 1;
        } else if (!strcmp(name, "--tracelens-keys")) {
            o->tracelens_keys = 1;
        } else if (!strcmp(name, "--min-delta-ms") || !strcmp(name, "--min-delta-pct")) {
            const char *v = option_value(argc, argv, &i, eq);
            char *end = NULL;
            double x = v ? strtod(v, &end) : NAN;
            if (!v || end == v || *end || !isfinite(x) || x < 0)
                return usage_error("%s needs a number of at least 0", name);
            *(name[12] == 'm' ? &o->min_delta_ms : &o->min_delta_pct) = x;
        } else if (!strcmp(name, "--top")) {
            const char *v = option_value(argc, argv, &i, eq);
            char *end = NULL;
            long x = v ? strtol(v, &end, 10) : 0;
            if (!v || end == v || *end || x < 1 || x > 100000)
                return usage_error("%s needs a whole number from 1 to 100000", name);
            o->top = (size_t)x;
        } else if (!strcmp(name, "--confidence")) {
            const char *v = option_value(argc, argv, &i, eq);
            char *end = NULL;
            double x = v ? strtod(v, &end) : NAN;
            if (v && end != v && !*end && x >= 1)
                x /= 100; /* 95 is 95%; 0.95 is taken as it is */
            if (!v || end == v || *end || !(x >= 0.5 && x < 1))
                return usage_error("%s needs a level from 50 to below 100 (percent)", name);
            o->confidence = x;
        } else if (!strcmp(name, "--fdr")) {
            o->fdr = 1;
        } else if (!strcmp(name, "--timings")) {
            o->timings = 1;
        } else if (!strcmp(name, "--no-summary")) {
            o->no_summary = 1;
        } else if (!strcmp(name, "--fail-on-regression") || !strcmp(name, "--min-time-ms")) {
            const char *v = option_value(argc, argv, &i, eq);
            char *end = NULL;
            double x = v ? strtod(v, &end) : NAN;
            if (!v || end == v || *end || !isfinite(x) || x < 0)
                return usage_error("%s needs a number of at least 0", name);
            *(name[2] == 'f' ? &o->fail_pct : &o->min_ms) = x;
        } else if (!strcmp(name, "--names")) {
            o->names_given = 1;
            if (eq)
                o->names[o->nnames++] = eq;
            while (i + 1 < argc && !is_option(argv[i + 1]))
                o->names[o->nnames++] = argv[++i];
        } else if (!strcmp(name, "--sheets")) {
            sheets_given = 1;
            int got = 0, rc;
            if (eq && (rc = add_group(eq, &sheets_named, &all_given)) != 0)
                return rc;
            got += eq != NULL;
            while (i + 1 < argc && !is_option(argv[i + 1])) {
                if ((rc = add_group(argv[++i], &sheets_named, &all_given)) != 0)
                    return rc;
                got++;
            }
            if (!got)
                return usage_error("%s needs at least one group", "--sheets");
        } else if (!strcmp(name, "--inference")) {
            o->inference = 1;
        } else if (!strcmp(name, "--group_by_parent_module")) {
            o->parent_module = 1;
        } else if (!strcmp(name, "--group_by_num_kernels")) {
            o->num_kernels = 1;
        } else if (!strcmp(name, "--enable_pseudo_ops")) {
            o->pseudo_ops = 1;
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }

    size_t olen = strlen(o->output);
    if (olen >= 4 && !strcasecmp(o->output + olen - 4, ".csv"))
        return usage_error("-o names the workbook (.xlsx), not a CSV file: for CSVs give --output_csvs_dir DIR "
                           "(one <sheet>.csv per result; '%s' is not written)", o->output);
    /* TRACE@DIR: a trace with its capture folder (INFERENCE.md §0.1) */
    o->capture = tl_xcalloc((size_t)argc, sizeof *o->capture);
    o->split = tl_xcalloc((size_t)argc, sizeof *o->split);
    for (size_t i = 0; i < o->nreports; i++) {
        struct stat st;
        if (tl_capture_split_arg(o->reports[i], &o->split[i], &o->capture[i])) {
            o->reports[i] = o->split[i];
        } else if (strchr(o->reports[i], '@') && stat(o->reports[i], &st) != 0) {
            const char *at = strrchr(o->reports[i], '@');
            fprintf(stderr, "tlcompare: cannot open '%s': no such file, and '%.*s' is no trace to attach the capture "
                            "folder '%s' to\n", o->reports[i], (int)(at - o->reports[i]), o->reports[i], at + 1);
            return 1;
        }
    }

    /* Only groups listed by name must exist in the baseline; "all" takes what is there. */
    o->named = sheets_named;
    o->run = (!sheets_given || all_given ? TL_GROUP_ALL : 0) | sheets_named;
    return 0;
}

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

static void free_captures(options *o)
{
    for (size_t i = 0; o->split && i < o->nreports; i++)
        free(o->split[i]);
    free(o->split);
    free(o->capture);
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        free(o.reports);
        free(o.names);
        free_captures(&o);
        return rc;
    }
    tl_quiet = o.quiet;
    tl_output_install_cleanup();
    tl_progress_start(!o.quiet);
    double t_start = tl_now();

    tl_compare_opts co;
    tl_compare_opts_init(&co);
    co.inputs = o.reports;
    co.ninputs = o.nreports;
    co.captures = o.capture;
    co.names = o.names;
    co.nnames = o.nnames;
    co.names_given = o.names_given;
    co.output = o.output;
    co.csv_dir = o.csv_dir;
    co.summary_md = o.summary_md;
    co.summary_json = o.summary_json;
    co.html = o.html;
    co.tracediff_dir = o.tracediff_dir;
    co.gpu_arch = o.gpu_arch;
    co.run = o.run;
    co.named = o.named;
    co.no_summary = o.no_summary;
    co.tracelens_keys = o.tracelens_keys;
    co.fail_pct = o.fail_pct;
    co.min_ms = o.min_ms;
    co.min_delta_ms = o.min_delta_ms;
    co.min_delta_pct = o.min_delta_pct;
    co.top = o.top;
    co.confidence = o.confidence;
    co.fdr = o.fdr;
    co.inference = o.inference;
    co.parent_module = o.parent_module;
    co.num_kernels = o.num_kernels;
    co.pseudo_ops = o.pseudo_ops;
    tl_comparison cmp;
    rc = tl_compare_run(&co, &cmp);
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
        if (!o.quiet) {
            /* the answer first: the summary, then one line for what was written (-v: a line
             * per sheet, before the summary) */
            size_t nempty = 0;
            for (size_t i = 0; i < results->n; i++) {
                const tl_result *r = &results->items[i];
                nempty += r->nrows == 0;
                if (o.verbose)
                    printf("Wrote sheet '%s' with %zu row%s \xC3\x97 %zu column%s\n", r->name, r->nrows,
                           r->nrows == 1 ? "" : "s", r->ncols, r->ncols == 1 ? "" : "s");
            }
            const char *no_color = getenv("NO_COLOR");
            print_summary(&cmp, isatty(STDOUT_FILENO) && !(no_color && *no_color));
            printf("%sWrote %s: %zu result sheet%s", summary->nvariants ? "\n" : "", o.output, results->n,
                   results->n == 1 ? "" : "s");
            if (nempty)
                printf(" (%zu with no rows)", nempty);
            if (o.csv_dir)
                printf(", and the same as CSVs in %s", o.csv_dir);
            printf("%s\n", o.verbose ? "" : "; -v lists them");
        }
        fflush(stdout);
        tl_xlsx_warn_cut_text(); /* after the answer: one line for every cell cut */
        tl_timing.total = tl_now() - t_start;
        if (o.timings)
            fprintf(stderr, "timings: read %.3f s, compare %.3f s, format %.3f s, summary %.3f s, workbook %.3f s, "
                            "csv %.3f s, html %.3f s, total %.3f s\n", tl_timing.read, tl_timing.compare, tl_timing.format,
                    tl_timing.summary, tl_timing.write_xlsx, tl_timing.write_csv, tl_timing.html, tl_timing.total);
        if (rc == TL_RUN_REGRESSION) {
            tl_summary_print_violations(summary, stderr);
            rc = EXIT_REGRESSION;
        }
    }
    tl_comparison_free(&cmp);
    free_captures(&o);
    free(o.reports);
    free(o.names);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "tlcompare: cannot write the summary to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
