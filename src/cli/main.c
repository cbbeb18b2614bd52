/*
 * main.c - the tlcompare command line (SPEC §1): the TraceLens comparison tool's words
 * and defaults, plus --help, --version and exit codes 0 (done), 1 (failure), 2 (usage).
 */
#include "cli/tracediff.h"
#include "compare/groups.h"
#include "io/output.h"
#include "base/progress.h"
#include "read/open.h"
#include "write/sink.h"
#include "summary/summary.h"
#include "perf/gpu_arch.h"
#include "perf/perf.h"
#include "trace/trace_report.h"
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
    int verbose;              /* -v: a line per result sheet */
    int tracelens_keys;       /* --tracelens-keys: no row-key step */
    double min_delta_ms;      /* --min-delta-ms MS: smaller changes are not listed or gated */
    double min_delta_pct;     /* --min-delta-pct PCT */
    size_t top;               /* --top N: regressions and improvements listed */
    const char *tracediff_dir; /* --tracediff-dir DIR: the TraceDiff files of two traces */
    const char *gpu_arch;     /* --gpu-arch NAME|FILE: the roofline columns of traces' perf sheets */
} options;

static const char usage_text[] =
    "usage: tlcompare REPORT REPORT [REPORT ...] [-o FILE] [--output_csvs_dir DIR]\n"
    "                 [--names TAG ...] [--sheets GROUP ...] [--summary-md FILE]\n"
    "                 [--summary-json FILE] [--fail-on-regression PCT [--min-time-ms MS]]\n"
    "                 [--min-delta-ms MS] [--min-delta-pct PCT] [--top N]\n"
    "                 [--tracelens-keys] [--tracediff-dir DIR] [--gpu-arch NAME|FILE]\n"
    "                 [--no-summary] [--timings] [-v] [-q]\n";

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
    "                            ops_all roofline all (default: all)\n"
    "  --summary-md FILE         write the summary as Markdown (for a pull request)\n"
    "  --summary-json FILE       write the summary as JSON\n"
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

/* ---- default tags (SPEC §1, TRACES.md §0) ------------------------------------------- */

static int has_suffix(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* 1 when `path` names a trace by its file name: *.json or *.json.gz. */
static int is_trace_name(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    return has_suffix(path + start, end - start, ".json") || has_suffix(path + start, end - start, ".json.gz");
}

/*
 * A report's default tag: a trace file's name without ".json.gz"/".json" and a trailing
 * ".pt.trace" (the profiler's own suffix, the same in every file); a directory's name whole
 * (a dot in "Qwen1.5-0.5B_csvs" is no extension); a workbook's name without its extension.
 */
static char *default_tag(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    const char *name = path + start;
    size_t n = end - start;
    if (is_trace_name(path)) {
        n -= has_suffix(name, n, ".json.gz") ? 8 : 5;
        if (has_suffix(name, n, ".pt.trace"))
            n -= 9;
    } else if ((*path && path[strlen(path) - 1] == '/') || tl_is_dir(path)) {
        /* the whole name */
    } else {
        return tl_path_stem(path);
    }
    char *t = tl_xmalloc(n + 1);
    memcpy(t, name, n);
    t[n] = '\0';
    return t;
}

/* The components of a path ("runs//h100/./perf_csvs/" -> runs, h100, perf_csvs), as
 * [start, end) offsets in starts[]/ends[]; returns how many. */
static size_t path_parts(const char *p, size_t *starts, size_t *ends)
{
    size_t n = 0;
    for (size_t i = 0; p[i];) {
        while (p[i] == '/')
            i++;
        size_t b = i;
        while (p[i] && p[i] != '/')
            i++;
        if (i > b && !(i - b == 1 && p[b] == '.'))
            starts[n] = b, ends[n++] = i;
    }
    return n;
}

static int same_part(const char *a, size_t as, size_t ae, const char *b, size_t bs, size_t be)
{
    return ae - as == be - bs && memcmp(a + as, b + bs, ae - as) == 0;
}

/*
 * Default tags that collide (reports all called perf_csvs) are replaced by the part of
 * each path where the paths differ: the leading and trailing components common to every
 * report dropped, the rest joined with '_' (the last component given as its default tag).
 * A report whose path has nothing of its own keeps its tag.
 */
static void differing_tags(char **tags, const char *const *paths, size_t n)
{
    int collide = 0;
    for (size_t i = 0; i < n && !collide; i++)
        for (size_t j = 0; j < i && !collide; j++)
            collide = strcmp(tags[i], tags[j]) == 0;
    if (!collide)
        return;
    size_t **st = tl_xcalloc(n, sizeof *st), **en = tl_xcalloc(n, sizeof *en), *np = tl_xcalloc(n, sizeof *np);
    size_t shortest = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(paths[i]) / 2 + 1;
        st[i] = tl_xmalloc(len * sizeof **st);
        en[i] = tl_xmalloc(len * sizeof **en);
        np[i] = path_parts(paths[i], st[i], en[i]);
        shortest = np[i] < shortest ? np[i] : shortest;
    }
    size_t lead = 0, trail = 0;
    for (int same = 1; lead < shortest && same; lead += same)
        for (size_t i = 1; i < n && same; i++)
            same = same_part(paths[0], st[0][lead], en[0][lead], paths[i], st[i][lead], en[i][lead]);
    for (int same = 1; lead + trail < shortest && same; trail += same) {
        for (size_t i = 1; i < n && same; i++) {
            size_t a = np[0] - 1 - trail, b = np[i] - 1 - trail;
            same = same_part(paths[0], st[0][a], en[0][a], paths[i], st[i][b], en[i][b]);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (lead + trail >= np[i])
            continue;
        tl_buf b = {0};
        for (size_t k = lead; k < np[i] - trail; k++) {
            if (k > lead)
                tl_buf_addc(&b, '_');
            if (k + 1 == np[i]) {
                tl_buf_adds(&b, tags[i]); /* the last component: its default tag */
            } else {
                tl_buf_add(&b, paths[i] + st[i][k], en[i][k] - st[i][k]);
            }
        }
        free(tags[i]);
        tags[i] = tl_xstrdup(tl_buf_cstr(&b));
        tl_buf_free(&b);
    }
    for (size_t i = 0; i < n; i++) {
        free(st[i]);
        free(en[i]);
    }
    free(st);
    free(en);
    free(np);
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

/* Write `text` (made valid UTF-8: op names come from the input) to output `out`'s
 * temporary file.  Returns 0 or -1. */
static int write_text(tl_output *out, tl_buf *text, tl_error *err)
{
    tl_utf8_sanitize(text);
    FILE *f = fopen(tl_output_temp(out), "wb");
    int bad = !f || fwrite(text->data ? text->data : "", 1, text->len, f) != text->len;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad) {
        tl_error_set(err, "%s: cannot write: %s", tl_output_target(out), strerror(errno));
        return -1;
    }
    return 0;
}

/* The summary on stdout, made valid UTF-8 like the files (a terminal shows U+FFFD). */
static void print_summary(const tl_summary *summary, int color)
{
    char *text = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&text, &n);
    if (!mem) {
        tl_summary_print(summary, stdout, color);
        return;
    }
    tl_summary_print(summary, mem, color);
    fclose(mem);
    tl_buf b = {text, n, n + 1};
    tl_utf8_sanitize(&b);
    fwrite(b.data, 1, b.len, stdout);
    tl_buf_free(&b);
}

/* A usage error when two outputs of the run name one path (the last one written would
 * silently win), or when a --names tag holds a control character. */
static int check_outputs_and_tags(const options *o)
{
    const char *what[5] = {"-o", "--output_csvs_dir", "--summary-md", "--summary-json", "--tracediff-dir"};
    const char *path[5] = {o->output, o->csv_dir, o->summary_md, o->summary_json, o->tracediff_dir};
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < i; j++) {
            if (path[i] && path[j] && tl_output_same_target(path[i], path[j])) {
                tl_buf m = {0};
                tl_message_clean(&m, path[i], strlen(path[i]));
                fprintf(stderr, "tlcompare: %s and %s both name '%s'; give each output its own path "
                                "(see 'tlcompare --help')\n", what[j], what[i], tl_buf_cstr(&m));
                tl_buf_free(&m);
                return EXIT_USAGE;
            }
        }
    }
    for (size_t i = 0; o->names_given && i < o->nnames; i++) {
        for (const unsigned char *c = (const unsigned char *)o->names[i]; *c; c++) {
            if (*c < 0x20 || *c == 0x7F) {
                fprintf(stderr, "tlcompare: --names: tag %zu holds a control character (0x%02X); tags name "
                                "sheets and files (see 'tlcompare --help')\n", i + 1, *c);
                return EXIT_USAGE;
            }
        }
    }
    return 0;
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
    tl_output *texts[3] = {NULL, NULL, NULL}; /* --summary-md, --summary-json, --tracediff-dir */
    tl_out *outputs = NULL;
    size_t opened = 0;
    tl_cli_diff cdiff = {0};
    tl_lca_summary lsum = {0};
    rc = 1;

    /* Tags first: a usage error should not wait for the reports to be read. */
    char **tags = tl_xcalloc(o.nreports, sizeof *tags);
    for (size_t i = 0; i < o.nreports; i++)
        tags[i] = o.names_given ? tl_xstrdup(o.names[i]) : default_tag(o.reports[i]);
    if (!o.names_given)
        differing_tags(tags, o.reports, o.nreports);
    for (size_t i = 0; i < o.nreports && rc == 1; i++) {
        if (!*tags[i]) {
            fprintf(stderr, "tlcompare: report %zu has an empty tag; use --names\n", i + 1);
            rc = EXIT_USAGE;
        }
        for (size_t j = 0; j < i && rc == 1; j++) {
            if (strcmp(tags[i], tags[j]) == 0 && o.nreports == 2 && tl_trace_sniff(o.reports[0]) &&
                tl_trace_sniff(o.reports[1])) {
                /* a trace against itself (TRACES.md §5.2's identical traces): the call-tree
                 * diff needs no tags; the sheet comparison gets a distinct one */
                char *t = tl_xmalloc(strlen(tags[i]) + 3);
                sprintf(t, "%s_2", tags[i]);
                tl_warn("both traces have the tag '%s'; the variant is tagged '%s'", tags[i], t);
                free(tags[i]);
                tags[i] = t;
            } else if (strcmp(tags[i], tags[j]) == 0) {
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
    if (rc == 1 && check_outputs_and_tags(&o) != 0)
        rc = EXIT_USAGE;
    /* Two traces: their call trees are aligned too (TRACES.md §5). */
    int both_traces = o.nreports == 2 && tl_trace_sniff(o.reports[0]) && tl_trace_sniff(o.reports[1]);
    if (rc == 1 && o.tracediff_dir && !both_traces) {
        fprintf(stderr, "tlcompare: --tracediff-dir needs exactly two inputs, both traces (see 'tlcompare --help')\n");
        rc = EXIT_USAGE;
    }
    static tl_gpu_arch arch; /* lives as long as the reports that read it */
    if (rc == 1 && o.gpu_arch && tl_gpu_arch_load(o.gpu_arch, &arch, &err) != 0) {
        fprintf(stderr, "tlcompare: %s\n", err.msg);
        rc = 1;
        goto done;
    }
    if (rc != 1)
        goto done;

    for (; opened < o.nreports; opened++) {
        /* a profiler trace (by content) has its report sheets built on opening */
        int is_trace = tl_trace_sniff(o.reports[opened]);
        if ((is_trace ? tl_perf_report_open(&reports[opened], o.reports[opened], o.gpu_arch ? &arch : NULL, &err)
                      : tl_report_open(&reports[opened], o.reports[opened], &err)) != 0) {
            tl_report_close(&reports[opened]);
            goto fail;
        }
        reports[opened].tag = tags[opened];
        tags[opened] = NULL;
    }
    /* the traces load on helper threads, all at once: wait for them (reading, in --timings) */
    {
        double t0 = tl_now();
        for (size_t i = 0; i < opened; i++)
            if (tl_trace_report_wait(&reports[i], &err) != 0)
                goto fail;
        tl_timing.read += tl_now() - t0;
    }
    /* two traces: their call trees are aligned too (TRACES.md §5) */
    if (both_traces && tl_cli_diff_align(&cdiff, tl_trace_report_trace(&reports[0]), tl_trace_report_trace(&reports[1]),
                                         o.tracediff_dir != NULL, o.tracediff_dir != NULL, &err) != 0)
        goto fail;
    /* The outputs are written as the results come, under temporary names. */
    outputs = tl_out_open(o.output, o.csv_dir, !o.no_summary, &err);
    if (!outputs)
        goto fail;
    /* A report that holds no TraceLens sheet at all is no report: say so, rather than
     * compare nothing (and let a gate pass on it). */
    for (size_t i = 0; i < o.nreports; i++) {
        if (!tl_groups_any_sheet(&reports[i], TL_GROUP_ALL)) {
            tl_error_set(&err, "%s: no TraceLens sheet in this report (a TraceLens report holds gpu_timeline, "
                               "ops_summary, kernel_summary, ops_all, ops_unique_args, GEMM, ... sheets)",
                         o.reports[i]);
            goto fail;
        }
    }
    /* every output prepared (and so checked) before the work */
    if (o.summary_md && !(texts[0] = tl_output_new(o.summary_md, 0, &err)))
        goto fail;
    if (o.summary_json && !(texts[1] = tl_output_new(o.summary_json, 0, &err)))
        goto fail;
    if (o.tracediff_dir && !(texts[2] = tl_output_new(o.tracediff_dir, 1, &err)))
        goto fail;
    tl_sink sink = tl_out_sink(outputs);
    if (tl_run_groups_with(reports, o.nreports, o.run, o.named, o.tracelens_keys ? TL_RUN_TRACELENS_KEYS : 0,
                           &sink, &arena, &err) != 0)
        goto fail;
    if (tl_cli_diff_put(&cdiff, &sink, texts[2], &err) != 0)
        goto fail;
    const tl_results *results = tl_out_results(outputs);
    if (results->n == 0) {
        tl_error_set(&err, "nothing to compare: no sheet of the groups asked for is in every report "
                           "(see the warnings above)");
        goto fail;
    }
    if (o.fail_pct >= 0) {
        /* a gate that has nothing to judge has not passed */
        int judged = 0;
        for (size_t i = 0; i < results->n && !judged; i++)
            judged = !strcmp(results->items[i].name, "gpu_timeline") || !strcmp(results->items[i].name, "lca_summary") ||
                     !strcmp(results->items[i].name, "ops_summary") ||
                     !strcmp(results->items[i].name, "kernel_summary");
        if (!judged) {
            tl_error_set(&err, "--fail-on-regression: nothing to judge: no gpu_timeline, ops_summary or "
                               "kernel_summary was compared");
            goto fail;
        }
    }

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
    tl_gate gate = {o.fail_pct, o.min_ms, o.min_delta_ms, o.min_delta_pct, o.top};
    tl_summary_build(&summary, results, tagv, o.nreports, &gate, &arena);
    if (tl_cli_diff_result(&cdiff)) {
        tl_lca_summary_build(&lsum, tl_cli_diff_result(&cdiff), tagv[0], tagv[1], o.top ? o.top : TL_SUMMARY_TOP, o.fail_pct, o.min_ms,
                             &arena);
        summary.lca = &lsum;
        if (lsum.nviolations)
            summary.gate_failed = 1;
    }
    free(tagv);
    if (!o.no_summary && ((summary.nvariants && (summary.source || summary.variants[0].has_timeline)) || lsum.ntop))
        sheet = tl_summary_sheet_build(&summary, &arena);
    if (o.summary_md)
        tl_summary_markdown(&summary, &md);
    if (o.summary_json)
        tl_summary_json(&summary, &json);
    tl_timing.summary += tl_now() - t_summary;

    /* Finish everything, then move it all into place. */
    if (tl_out_finish(outputs, sheet, &err) != 0)
        goto fail;
    if (texts[0] && write_text(texts[0], &md, &err) != 0)
        goto fail;
    if (texts[1] && write_text(texts[1], &json, &err) != 0)
        goto fail;
    if (tl_out_commit_with(outputs, texts, 3, &err) != 0)
        goto fail;
    tl_progress_done();

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
        print_summary(&summary, isatty(STDOUT_FILENO) && !(no_color && *no_color));
        printf("%sWrote %s: %zu result sheet%s", summary.nvariants ? "\n" : "", o.output, results->n,
               results->n == 1 ? "" : "s");
        if (nempty)
            printf(" (%zu with no rows)", nempty);
        if (o.csv_dir)
            printf(", and the same as CSVs in %s", o.csv_dir);
        printf("%s\n", o.verbose ? "" : "; -v lists them");
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
    /* The outputs first: on a failure the workbook's workers may still be rendering tables
     * whose strings live in the reports' arenas and in the diff's. */
    tl_out_free(outputs);
    tl_cli_diff_free(&cdiff); /* after the outputs: its strings are in the tables they hold */
    for (size_t i = 0; i < o.nreports; i++)
        free(tags[i]);
    free(tags);
    for (size_t i = 0; i < opened; i++)
        tl_report_close(&reports[i]);
    free(reports);
    tl_summary_sheet_free(sheet);
    tl_summary_free(&summary);
    tl_lca_summary_free(&lsum);
    tl_buf_free(&md);
    tl_buf_free(&json);
    tl_output_free(texts[0]);
    tl_output_free(texts[1]);
    tl_output_free(texts[2]);
    tl_arena_free(&arena);
    free(o.reports);
    free(o.names);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}
