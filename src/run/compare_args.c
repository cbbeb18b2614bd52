/*
 * compare_args.c - tlcompare's options as a table, and the rules between them (see
 * compare_args.h; the meaning of each option: man/tlcompare.1, docs/).
 */
#include "run/compare_args.h"

#include "compare/groups.h"
#include "trace/capture.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define F(field) offsetof(tl_compare_args, field)
#define BOTH (TL_OPT_CLI | TL_OPT_PY)
#define CLI TL_OPT_CLI
#define AT_LEAST_0 "a number of at least 0"

static const tl_optdef compare_opts[] = {
    {{"-o", "--output"}, NULL, TL_OPT_TEXT, CLI, "FILE", 0, 0, "a file name",
     "the workbook to write (default: comparison.xlsx)", F(run.output)},
    {{"--output_csvs_dir", "--output-csvs-dir"}, NULL, TL_OPT_TEXT, CLI, "DIR", 0, 0, "a directory",
     "also write every result sheet as DIR/<sheet>.csv", F(run.csv_dir)},
    {{"--names"}, "names", TL_OPT_LIST, BOTH, "TAG", 0, 0, "at least one tag",
     "one tag per report (default: the file or directory names); a tag repeated makes runs of one side",
     F(names)},
    {{"--sheets"}, "sheets", TL_OPT_LIST, BOTH, "GROUP", 0, 0, "at least one group",
     "groups to compare: gpu_timeline ops_summary kernel_summary ops_all roofline perf all (default: all; "
     "perf, the other perf-model sheets, only when named)", F(sheets)},
    {{"--summary-md"}, "summary_md", TL_OPT_TEXT, BOTH, "FILE", 0, 0, "a file name",
     "write the summary as Markdown (for a pull request)", F(run.summary_md)},
    {{"--summary-json"}, "summary_json", TL_OPT_TEXT, BOTH, "FILE", 0, 0, "a file name",
     "write the summary as JSON", F(run.summary_json)},
    {{"--html"}, "html", TL_OPT_TEXT, BOTH, "FILE", 0, 0, "a file name",
     "write the comparison as one self-contained HTML page (summary, where the time went, what moved, "
     "roofline, call tree)", F(run.html)},
    {{"--no-summary"}, "no_summary", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "no summary worksheet at the front of the workbook", F(run.no_summary)},
    {{"--tracediff-dir"}, "tracediff_dir", TL_OPT_TEXT, BOTH, "DIR", 0, 0, "a directory",
     "two traces: write TraceLens' TraceDiff files into DIR", F(run.tracediff_dir)},
    {{"--gpu-arch"}, "gpu_arch", TL_OPT_TEXT, BOTH, "NAME|FILE[,NAME|FILE]", 0, 0, "a GPU name or a file",
     "traces: the perf sheets' roofline columns against a GPU's peaks (H100, H200, B200, MI300X, MI325X, "
     "MI355X, or a TraceLens-style JSON file); two, comma-separated, when the sides ran on different GPUs: "
     "the baseline's, then the variants'; not with inference traces", F(run.gpu_arch)},
    {{"--fail-on-regression"}, "fail_on_regression", TL_OPT_NUMBER, BOTH, "PCT", 0, INFINITY, AT_LEAST_0,
     "exit with status 3 (after writing everything) when a variant's busy GPU time, or any op of at least "
     "--min-time-ms in the baseline, is more than PCT% slower", F(run.fail_pct)},
    {{"--min-time-ms"}, "min_time_ms", TL_OPT_NUMBER, BOTH, "MS", 0, INFINITY, AT_LEAST_0,
     "the gate's smallest op to judge (default: 1)", F(run.min_ms)},
    {{"--min-delta-ms"}, "min_delta_ms", TL_OPT_NUMBER, BOTH, "MS", 0, INFINITY, AT_LEAST_0,
     "the summary and the gate ignore changes smaller than MS", F(run.min_delta_ms)},
    {{"--min-delta-pct"}, "min_delta_pct", TL_OPT_NUMBER, BOTH, "PCT", 0, INFINITY, AT_LEAST_0,
     "... and changes smaller than PCT% (both default: 0; floating-point noise is always ignored)",
     F(run.min_delta_pct)},
    {{"--top"}, "top", TL_OPT_SIZE, BOTH, "N", 1, 100000, "a whole number from 1 to 100000",
     "list the N largest regressions and improvements (default: 10)", F(run.top)},
    /* a percent (95) or a fraction (0.95): the check makes it a fraction */
    {{"--confidence"}, "confidence", TL_OPT_NUMBER, BOTH, "PCT", 0.5, 100, "a level from 50 to below 100 (percent)",
     "the level of the verdicts' intervals (default: 95); the share of chance that any change listed is noise "
     "is kept at 100 - PCT%", F(run.confidence)},
    {{"--fdr"}, "fdr", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "hold the verdicts to a false discovery rate instead (Benjamini-Hochberg: finds more when many ops "
     "changed, lists some noise)", F(run.fdr)},
    {{"--steps"}, "steps", TL_OPT_TEXT, BOTH, "FROM:TO", 0, 0, "a range of steps such as 2: or 3:10",
     "two traces with ProfilerStep#N steps: the steps the verdicts take, by position in each trace (1-based, "
     "inclusive; TO left out: to the last; default: 2: when a trace has 3 or more steps, else all)",
     F(run.steps)},
    {{"--force-compare"}, "force_compare", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "judge and gate even runs the comparability guard calls unlike (another workload, few ops aligned)",
     F(run.force_compare)},
    {{"--tracelens-keys"}, "tracelens_keys", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "pair rows on the groups' own keys only, exactly as the TraceLens tool (default: add is_recompute, "
     "gpu_pid, parent_module, Parent cpu_op, Parent op category, Kernel stream to the keys while they "
     "repeat in a report)", F(run.tracelens_keys)},
    {{"-j", "--jobs"}, "jobs", TL_OPT_LONG, BOTH, "N", 1, 64, "a whole number from 1 to 64",
     "runs: ranks read at once (default: the CPUs available); the output is the same whatever N", F(jobs)},
    {{"--timings"}, NULL, TL_OPT_FLAG, CLI, NULL, 0, 0, NULL, "print where the time went (stderr)", F(timings)},
    {{"-v", "--verbose"}, NULL, TL_OPT_FLAG, CLI, NULL, 0, 0, NULL, "print a line per result sheet written",
     F(verbose)},
    {{"-q", "--quiet"}, "quiet", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL, "print nothing but errors", F(quiet)},
    {{"-h", "--help"}, NULL, TL_OPT_HELP, CLI, NULL, 0, 0, NULL, "show this help and exit", F(help)},
    {{"--version"}, NULL, TL_OPT_VERSION, CLI, NULL, 0, 0, NULL, "show the version and exit", F(version)},
    {{NULL}, NULL, TL_OPT_HEADING, CLI, NULL, 0, 0, NULL,
     "inference traces (graph replay, docs/inference.md): a trace input written TRACE@DIR is attributed "
     "through the capture traces in DIR; then every trace input gets the inference generator's sheets.  "
     "For all trace inputs:", 0},
    {{"--inference"}, "inference", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "the inference generator's sheets, without a capture folder", F(run.inference)},
    {{"--group_by_parent_module"}, "group_by_parent_module", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "parent_module and call-stack columns", F(run.parent_module)},
    {{"--group_by_num_kernels"}, "group_by_num_kernels", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "ops_unique_args grouped by num_kernels too", F(run.num_kernels)},
    {{"--enable_pseudo_ops"}, "enable_pseudo_ops", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL,
     "SGLang's numbered profiler names unnumbered", F(run.pseudo_ops)},
    /* the Python module's own: a capture folder per input, beside the TRACE@DIR spelling */
    {{NULL}, "captures", TL_OPT_LIST, TL_OPT_PY | TL_OPT_NONES, "DIR", 0, 0, "one capture folder (or None) per input",
     NULL, F(captures)},
};

static int check_args(void *args, tl_error *err) { return tl_compare_args_check(args, err); }

const tl_tool tl_compare_tool = {
    .prog = "tlcompare",
    .positional = "REPORT REPORT [REPORT ...]",
    .positional_off = offsetof(tl_compare_args, inputs),
    .intro = "Compare TraceLens performance reports: the first REPORT is the baseline, every other one a "
             "variant.  A REPORT is an .xlsx workbook, a directory of <sheet>.csv files, or a PyTorch "
             "profiler trace (.json / .json.gz, recognised by content: its report is built).  Writes one "
             "workbook with side-by-side metrics and per-metric diffs, exactly as "
             "TraceLens_compare_perf_reports_pytorch does.  Long options may be abbreviated, as with "
             "argparse.\n",
    .outro = "exit status: 0 done, 1 failure (unreadable report, missing sheet, cannot write),\n"
             "2 usage error, 3 the --fail-on-regression gate failed (all outputs written).\n"
             "\n"
             "example:\n"
             "  tlcompare runs/h100.xlsx runs/mi300.xlsx --names h100 mi300 -o h100_vs_mi300.xlsx\n"
             "\n"
             "See tlcompare(1) for the result sheets and where tlcompare differs from TraceLens.\n",
    .opts = compare_opts,
    .nopts = sizeof compare_opts / sizeof *compare_opts,
    .quiet_off = offsetof(tl_compare_args, quiet),
    .check = check_args,
};

void tl_compare_args_init(tl_compare_args *a)
{
    memset(a, 0, sizeof *a);
    tl_compare_opts_init(&a->run);
    a->run.output = "comparison.xlsx";
}

static int usage(tl_error *err, const char *msg, const char *arg)
{
    tl_error_set(err, msg, arg);
    return TL_RUN_USAGE;
}

/* --sheets' words into the groups to run and those named (only those named must exist). */
static int groups(tl_compare_args *a, tl_error *err)
{
    if (!a->sheets.given)
        return 0;
    unsigned named = 0;
    int all = 0;
    for (size_t i = 0; i < a->sheets.n; i++) {
        unsigned bit = tl_group_from_name(a->sheets.v[i]);
        if (!bit)
            return usage(err, "--sheets: unknown group '%s' (choose from gpu_timeline, ops_summary, "
                              "kernel_summary, ops_all, roofline, perf, all)", a->sheets.v[i]);
        if (bit == TL_GROUP_ALL)
            all = 1;
        else
            named |= bit;
    }
    if (!a->sheets.n)
        return usage(err, "%s needs at least one group", "--sheets");
    a->run.named = named;
    a->run.run = (all ? TL_GROUP_ALL : 0) | named;
    return 0;
}

/* TRACE@DIR inputs (docs/inference.md): the trace and its capture folder apart; Python's
 * captures=[...] given instead. */
static int capture_folders(tl_compare_args *a, tl_error *err)
{
    size_t n = a->inputs.n;
    a->split = tl_xcalloc(n ? n : 1, sizeof *a->split);
    a->capture = tl_xcalloc(n ? n : 1, sizeof *a->capture);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        const char *in = a->inputs.v[i];
        if (a->run.given && a->run.given[i].ops)
            continue; /* a report already open: its name is no path */
        if (tl_capture_split_arg(in, &a->split[i], &a->capture[i])) {
            a->inputs.v[i] = a->split[i];
        } else if (strchr(in, '@') && stat(in, &st) != 0) {
            const char *at = strrchr(in, '@');
            tl_error_set(err, "cannot open '%s': no such file, and '%.*s' is no trace to attach the capture "
                              "folder '%s' to", in, (int)(at - in), in, at + 1);
            return TL_RUN_FAILED;
        }
    }
    if (a->captures.given) {
        if (a->captures.n != n) {
            tl_error_set(err, "captures: %zu given for %zu inputs; give one (or None) per input", a->captures.n, n);
            return TL_RUN_USAGE;
        }
        for (size_t i = 0; i < n; i++)
            a->capture[i] = a->captures.v[i];
    }
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= a->capture[i] != NULL;
    a->run.captures = any ? a->capture : NULL;
    return 0;
}

/* A whole number from 1 at *p (advanced past it): 0, or -1. */
static int step_number(const char **p, size_t *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    size_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > 100000000)
            return -1;
        v = v * 10 + (size_t)(*s - '0');
    }
    *p = s;
    *out = v;
    return v >= 1 ? 0 : -1;
}

/* --steps: "FROM:TO", "FROM:" or ":TO" (1-based positions, inclusive; TO 0: to the last). */
static int parse_steps(const char *s, size_t *first, size_t *last)
{
    *first = 1;
    *last = 0;
    if (*s != ':' && step_number(&s, first) != 0)
        return -1;
    if (*s++ != ':')
        return -1;
    if (*s && step_number(&s, last) != 0)
        return -1;
    return *s || (*last && *last < *first) ? -1 : 0;
}

/* --gpu-arch BASE,VARIANT: each side's own GPU.  A file whose name holds a comma is one
 * description. */
static int split_arch(tl_compare_args *a, tl_error *err)
{
    tl_compare_opts *o = &a->run;
    struct stat st;
    if (!o->gpu_arch || !strchr(o->gpu_arch, ',') || stat(o->gpu_arch, &st) == 0)
        return 0;
    free(a->arch_split);
    a->arch_split = tl_xstrdup(o->gpu_arch);
    char *comma = strchr(a->arch_split, ',');
    *comma = '\0';
    if (!a->arch_split[0] || !comma[1] || strchr(comma + 1, ','))
        return usage(err, "--gpu-arch: expected one GPU or two, BASELINE,VARIANT, got '%s'", o->gpu_arch);
    o->gpu_arch = a->arch_split;
    o->gpu_arch_variant = comma + 1;
    return 0;
}

int tl_compare_args_check(tl_compare_args *a, tl_error *err)
{
    tl_compare_opts *o = &a->run;
    size_t olen = o->output ? strlen(o->output) : 0;
    if (olen >= 4 && !strcasecmp(o->output + olen - 4, ".csv"))
        return usage(err, "-o names the workbook (.xlsx), not a CSV file: for CSVs give --output_csvs_dir DIR "
                          "(one <sheet>.csv per result; '%s' is not written)", o->output);
    int rc = groups(a, err);
    if (rc != 0 || (rc = capture_folders(a, err)) != 0)
        return rc;
    o->inputs = a->inputs.v;
    o->ninputs = a->inputs.n;
    o->names = a->names.v;
    o->nnames = a->names.n;
    o->names_given = a->names.given;
    o->jobs = (int)a->jobs;
    if (o->confidence >= 1)
        o->confidence /= 100; /* 95 is 95%; 0.95 is taken as it is */
    if (o->confidence != 0 && !(o->confidence >= 0.5 && o->confidence < 1))
        return usage(err, "%s needs a level from 50 to below 100 (percent)", "--confidence");
    if (o->steps && parse_steps(o->steps, &o->step_first, &o->step_last) != 0)
        return usage(err, "--steps: expected FROM:TO, FROM: or :TO with whole step positions from 1 (FROM <= TO), "
                          "got '%s'", o->steps);
    /* The inference generator makes no roofline columns: a GPU given there would be
     * dropped without a word, so it is refused (as tlreport does). */
    if ((tl_compare_infer_option(o) || tl_compare_capture_given(o)) && o->gpu_arch)
        return usage(err, "%s", "--gpu-arch (the GPU description) is not supported with inference traces "
                                "(a capture folder, --inference or its options)");
    return split_arch(a, err);
}

void tl_compare_args_free(tl_compare_args *a)
{
    for (size_t i = 0; a->split && i < a->inputs.n; i++)
        free(a->split[i]);
    free(a->split);
    free(a->capture);
    free(a->arch_split);
    tl_opts_free(&tl_compare_tool, a);
    a->split = NULL;
    a->capture = NULL;
    a->arch_split = NULL;
}
