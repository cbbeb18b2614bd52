/*
 * main.c - the tlcompare command line (SPEC §1): the TraceLens comparison tool's words
 * and defaults, plus --help, --version and exit codes 0 (done), 1 (failure), 2 (usage).
 */
#include "compare/groups.h"
#include "io/output.h"
#include "base/progress.h"
#include "read/open.h"
#include "write/sink.h"
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
    int no_summary;           /* --no-summary: no summary worksheet */
    double fail_pct;          /* --fail-on-regression PCT; < 0: no gate */
    double min_ms;            /* --min-time-ms MS */
} options;

static const char usage_text[] =
    "usage: tlcompare REPORT REPORT [REPORT ...] [-o FILE] [--output_csvs_dir DIR]\n"
    "                 [--names TAG ...] [--sheets GROUP ...] [--summary-md FILE]\n"
    "                 [--summary-json FILE] [--fail-on-regression PCT [--min-time-ms MS]]\n"
    "                 [--no-summary] [--timings] [-q]\n";

static const char help_text[] =
    "Compare TraceLens performance reports: the first REPORT is the baseline, every other\n"
    "one a variant.  A REPORT is an .xlsx workbook or a directory of <sheet>.csv files.\n"
    "Writes one workbook with side-by-side metrics and per-metric diffs, exactly as\n"
    "TraceLens_compare_perf_reports_pytorch does.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE         the workbook to write (default: comparison.xlsx)\n"
    "  --output_csvs_dir DIR     also write every result sheet as DIR/<sheet>.csv\n"
    "  --names TAG ...           one tag per report (default: the file or directory names)\n"
    "  --sheets GROUP ...        groups to compare: gpu_timeline ops_summary kernel_summary\n"
    "                            ops_all roofline all (default: all)\n"
    "  --summary-md FILE         write the summary as Markdown (for a pull request)\n"
    "  --summary-json FILE       write the summary as JSON\n"
    "  --no-summary              no summary worksheet at the front of the workbook\n"
    "  --fail-on-regression PCT  exit with status 3 (after writing everything) when a\n"
    "                            variant's busy GPU time, or any op of at least\n"
    "                            --min-time-ms in the baseline, is more than PCT% slower\n"
    "  --min-time-ms MS          the gate's smallest op to judge (default: 1)\n"
    "  --timings                 print where the time went (stderr)\n"
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
                           "ops_summary, kernel_summary, ops_all, roofline, all)", g);
    if (bit == TL_GROUP_ALL)
        *all = 1;
    else
        *named |= bit;
    return 0;
}

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

        if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            fputs(usage_text, stdout);
            fputc('\n', stdout);
            fputs(help_text, stdout);
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
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }

    if (o->nreports < 2)
        return usage_error("need at least two reports, got %s",
                           o->nreports == 0 ? "none" : "one");
    if (o->names_given && o->nnames != o->nreports) {
        fprintf(stderr, "tlcompare: --names gives %zu tag%s for %zu reports; give exactly one per report "
                        "(see 'tlcompare --help')\n",
                o->nnames, o->nnames == 1 ? "" : "s", o->nreports);
        return EXIT_USAGE;
    }
    /* Only groups listed by name must exist in the baseline; "all" takes what is there. */
    o->named = sheets_named;
    o->run = !sheets_given || all_given ? TL_GROUP_ALL : sheets_named;
    return 0;
}

/* 1 when paths a and b name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 when writing the file `out` would change the input report `report`: it is that
 * workbook, or a <sheet>.csv inside that CSV directory (existing or not: a new one
 * would be read as a sheet next time). */
static int clobbers(const char *out, const char *report)
{
    size_t n = strlen(out);
    if (same_file(out, report))
        return 1;
    if (n < 4 || strcmp(out + n - 4, ".csv") != 0 || !tl_is_dir(report))
        return 0;
    char *dir = tl_xstrdup(out);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    int r = same_file(slash ? dir : ".", report);
    free(dir);
    return r;
}

/* Write the workbook and the CSVs under temporary names, then move them into place. */
/* Write `text` to a temporary file beside `target`; returns its path or NULL. */
static char *write_text_temp(const char *target, const tl_buf *text, tl_error *err)
{
    char *tmp = tl_output_temp_file(target, err);
    if (!tmp)
        return NULL;
    FILE *f = fopen(tmp, "wb");
    int bad = !f || fwrite(text->data ? text->data : "", 1, text->len, f) != text->len;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad) {
        tl_error_set(err, "%s: cannot write: %s", target, strerror(errno));
        free(tmp);
        return NULL;
    }
    return tmp;
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
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        free(o.reports);
        free(o.names);
        return rc;
    }
    tl_quiet = o.quiet;
    tl_output_install_cleanup();
    tl_progress_start(!o.quiet);
    double t_start = tl_now();

    tl_report *reports = tl_xcalloc(o.nreports, sizeof *reports);
    tl_arena arena;
    tl_arena_init(&arena);
    tl_error err = {0};
    tl_summary summary = {0};
    tl_summary_sheet *sheet = NULL;
    tl_buf md = {0}, json = {0};
    char *md_tmp = NULL, *json_tmp = NULL;
    tl_out *outputs = NULL;
    size_t opened = 0;
    rc = 1;

    /* Tags first: a usage error should not wait for the reports to be read. */
    char **tags = tl_xcalloc(o.nreports, sizeof *tags);
    for (size_t i = 0; i < o.nreports; i++)
        tags[i] = o.names_given ? tl_xstrdup(o.names[i]) : tl_path_stem(o.reports[i]);
    for (size_t i = 0; i < o.nreports && rc == 1; i++) {
        if (!*tags[i]) {
            fprintf(stderr, "tlcompare: report %zu has an empty tag; use --names\n", i + 1);
            rc = EXIT_USAGE;
        }
        for (size_t j = 0; j < i && rc == 1; j++) {
            if (strcmp(tags[i], tags[j]) == 0) {
                fprintf(stderr, "tlcompare: reports %zu and %zu both have the tag '%s'; tags must be "
                                "unique: use --names to disambiguate\n", j + 1, i + 1, tags[i]);
                rc = EXIT_USAGE;
            }
        }
    }
    for (size_t i = 0; i < o.nreports && rc == 1; i++) {
        const char *out = clobbers(o.output, o.reports[i]) ? o.output
                          : o.csv_dir && same_file(o.csv_dir, o.reports[i]) ? o.csv_dir
                          : o.summary_md && clobbers(o.summary_md, o.reports[i]) ? o.summary_md
                          : o.summary_json && clobbers(o.summary_json, o.reports[i]) ? o.summary_json
                                                                                     : NULL;
        if (out) {
            fprintf(stderr, "tlcompare: the output '%s' would overwrite the input report '%s'; "
                            "refusing\n", out, o.reports[i]);
            rc = EXIT_USAGE;
        }
    }
    if (rc != 1)
        goto done;

    for (; opened < o.nreports; opened++) {
        if (tl_report_open(&reports[opened], o.reports[opened], &err) != 0) {
            tl_report_close(&reports[opened]);
            goto fail;
        }
        reports[opened].tag = tags[opened];
        tags[opened] = NULL;
    }
    /* The outputs are written as the results come, under temporary names. */
    outputs = tl_out_open(o.output, o.csv_dir, !o.no_summary, &err);
    if (!outputs)
        goto fail;
    tl_sink sink = tl_out_sink(outputs);
    if (tl_run_groups(reports, o.nreports, o.run, o.named, &sink, &arena, &err) != 0)
        goto fail;
    const tl_results *results = tl_out_results(outputs);

    /* One note for all empty results: usually many only_* sheets, and not news. */
    {
        tl_buf empty = {0};
        size_t nempty = 0;
        for (size_t i = 0; i < results->n; i++)
            if (results->items[i].nrows == 0)
                tl_buf_printf(&empty, "%s%s", nempty++ ? ", " : "", results->items[i].name);
        if (nempty)
            tl_note("%zu result sheet%s with no matching rows: %s", nempty, nempty == 1 ? "" : "s",
                    tl_buf_cstr(&empty));
        tl_buf_free(&empty);
    }

    /* The summary is cheap and read from the results, so it is always built. */
    double t_summary = tl_now();
    const char **tagv = tl_xmalloc(o.nreports * sizeof *tagv);
    for (size_t i = 0; i < o.nreports; i++)
        tagv[i] = reports[i].tag;
    tl_gate gate = {o.fail_pct, o.min_ms};
    tl_summary_build(&summary, results, tagv, o.nreports, &gate, &arena);
    free(tagv);
    if (!o.no_summary && (summary.nvariants && (summary.source || summary.variants[0].has_timeline)))
        sheet = tl_summary_sheet_build(&summary, &arena);
    if (o.summary_md)
        tl_summary_markdown(&summary, &md);
    if (o.summary_json)
        tl_summary_json(&summary, &json);
    tl_timing.summary += tl_now() - t_summary;

    /* Finish everything, then move it all into place. */
    if (tl_out_finish(outputs, sheet, &err) != 0)
        goto fail;
    if (o.summary_md && !(md_tmp = write_text_temp(o.summary_md, &md, &err)))
        goto fail;
    if (o.summary_json && !(json_tmp = write_text_temp(o.summary_json, &json, &err)))
        goto fail;
    if (tl_out_commit(outputs, &err) != 0 || (md_tmp && tl_output_commit_file(md_tmp, o.summary_md, &err) != 0) ||
        (json_tmp && tl_output_commit_file(json_tmp, o.summary_json, &err) != 0))
        goto fail;
    tl_progress_done();

    if (!o.quiet) {
        for (size_t i = 0; i < results->n; i++)
            printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", results->items[i].name,
                   results->items[i].nrows, results->items[i].ncols);
        const char *no_color = getenv("NO_COLOR");
        tl_summary_print(&summary, stdout, isatty(STDOUT_FILENO) && !(no_color && *no_color));
    }
    tl_timing.total = tl_now() - t_start;
    if (o.timings)
        fprintf(stderr, "timings: read %.3f s, compare %.3f s, format %.3f s, summary %.3f s, workbook %.3f s, "
                        "csv %.3f s, total %.3f s\n", tl_timing.read, tl_timing.compare, tl_timing.format,
                tl_timing.summary, tl_timing.write_xlsx, tl_timing.write_csv, tl_timing.total);
    rc = 0;
    if (summary.gate_failed) {
        tl_summary_print_violations(&summary, stderr);
        rc = EXIT_REGRESSION;
    }
    goto done;

fail:
    tl_progress_done();
    tl_output_cleanup(); /* nothing half-written stays behind */
    fprintf(stderr, "tlcompare: %s\n", err.msg[0] ? err.msg : "failed");
    rc = 1;
done:
    for (size_t i = 0; i < o.nreports; i++)
        free(tags[i]);
    free(tags);
    for (size_t i = 0; i < opened; i++)
        tl_report_close(&reports[i]);
    free(reports);
    tl_summary_sheet_free(sheet);
    tl_summary_free(&summary);
    tl_out_free(outputs);
    tl_buf_free(&md);
    tl_buf_free(&json);
    free(md_tmp);
    free(json_tmp);
    tl_arena_free(&arena);
    free(o.reports);
    free(o.names);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}
