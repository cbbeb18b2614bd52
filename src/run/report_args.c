/*
 * report_args.c - tlreport's options as a table, and the rules between them (see
 * report_args.h; the meaning of each option: man/tlreport.1, docs/).
 */
#include "run/report_args.h"

#include "run/compare.h"
#include "trace/capture.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define F(field) offsetof(tl_report_args, field)
#define BOTH (TL_OPT_CLI | TL_OPT_PY)
#define CLI TL_OPT_CLI
/* The rows of one kind of run only: one trace's report, or a rank set's (the check
 * refuses each in the other kind, by name) */
#define ONE_TRACE TL_OPT_MODE_A
#define RANK_SET TL_OPT_MODE_B
#define IGNORED(spelling, metavar, why) \
    {{spelling}, NULL, TL_OPT_IGNORED, CLI | ONE_TRACE, metavar, 0, 0, "a value", why, F(ignored)}

static const tl_optdef report_opts[] = {
    {{"-o", "--output", "--output_xlsx_path"}, "output_xlsx", TL_OPT_TEXT, BOTH, "FILE", 0, 0, "a file name",
     "the workbook to write (default: <tag>_perf_report.xlsx here, unless only --output_csvs_dir is given)",
     F(output)},
    {{"--output_csvs_dir"}, "output_csvs_dir", TL_OPT_TEXT, BOTH, "DIR", 0, 0, "a directory",
     "write every sheet as DIR/<sheet>.csv", F(csv_dir)},
    {{"--profile_json_path"}, NULL, TL_OPT_TEXT, CLI, "TRACE", 0, 0, "a trace file",
     "the trace (the reference's spelling of TRACE)", F(profile_json_path)},
    {{"--gpu-arch"}, "gpu_arch", TL_OPT_TEXT, BOTH | ONE_TRACE, "NAME|FILE", 0, 0, "a GPU name or a file",
     "add the roofline columns against a GPU's peaks: a bundled GPU (H100, H200, B200, MI300X, MI325X, "
     "MI355X) or a TraceLens-style JSON file", F(run.gpu_arch)},
    {{"--gpu_arch_json_path"}, NULL, TL_OPT_TEXT, CLI | ONE_TRACE, "FILE", 0, 0, "a file name",
     "the reference's spelling of --gpu-arch FILE", F(gpu_arch_json)},
    {{"--gpu_arch_platform"}, NULL, TL_OPT_TEXT, CLI | ONE_TRACE, "NAME", 0, 0, "a GPU name",
     "the reference's spelling of --gpu-arch NAME", F(gpu_arch_name)},
    {{"--include_unlinked_kernels"}, "include_unlinked_kernels", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "gpu_timeline counts the GPU events with no launch too (work from before the profiling window)",
     F(run.unlinked)},
    {{"--topk_ops"}, "topk_ops", TL_OPT_LONG, BOTH | ONE_TRACE, "N", 0, (double)LONG_MAX, "a whole number of rows",
     "keep the first N rows of ops_unique_args", F(run.topk_ops)},
    {{"--html"}, "html", TL_OPT_TEXT, BOTH | ONE_TRACE, "FILE", 0, 0, "a file name",
     "also write the report as one self-contained HTML page (GPU time, the largest ops, the roofline)",
     F(run.html)},
    {{"--kernel_summary"}, NULL, TL_OPT_FLAG, CLI | ONE_TRACE, NULL, 0, 0, NULL, "accepted (kernel_summary is always written)",
     F(kernel_summary)},
    {{"-q", "--quiet"}, "quiet", TL_OPT_FLAG, BOTH, NULL, 0, 0, NULL, "print nothing but errors", F(quiet)},
    {{"-h", "--help"}, NULL, TL_OPT_HELP, CLI, NULL, 0, 0, NULL, "show this help and exit", F(help)},
    {{"--version"}, NULL, TL_OPT_VERSION, CLI, NULL, 0, 0, NULL, "show the version and exit", F(version)},
    {{NULL}, NULL, TL_OPT_HEADING, CLI, NULL, 0, 0, NULL, "inference traces (CUDA/HIP graph replay, docs/inference.md):", 0},
    {{"--capture-folder", "--capture_folder"}, "capture_folder", TL_OPT_TEXT, BOTH | ONE_TRACE, "DIR", 0, 0, "a directory",
     "attribute the replayed kernels through the graph-capture traces in DIR (also TRACE@DIR)",
     F(run.capture_dir)},
    {{"--inference"}, "inference", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "the inference generator's sheets, without a capture folder", F(run.inference)},
    {{"--group_by_parent_module"}, "group_by_parent_module", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "parent_module and call-stack columns (implies --inference)", F(run.parent_module)},
    {{"--group_by_num_kernels"}, "group_by_num_kernels", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "ops_unique_args grouped by num_kernels too", F(run.num_kernels)},
    {{"--include_call_stack"}, "include_call_stack", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "Python functions in the call tree", F(run.call_stack)},
    {{"--enable_pseudo_ops"}, "enable_pseudo_ops", TL_OPT_FLAG, BOTH | ONE_TRACE, NULL, 0, 0, NULL,
     "SGLang's numbered profiler names unnumbered", F(run.pseudo_ops)},
    {{"--enable_kernel_summary"}, NULL, TL_OPT_FLAG, CLI | ONE_TRACE, NULL, 0, 0, NULL,
     "accepted (kernel_summary is always on)", F(enable_kernel_summary)},
    {{"--disable_coll_analysis"}, NULL, TL_OPT_FLAG, CLI | ONE_TRACE, NULL, 0, 0, NULL,
     "no coll_analysis sheet (made by default for a trace with collective kernels)", F(run.no_coll)},
    {{NULL}, NULL, TL_OPT_HEADING, CLI, NULL, 0, 0, NULL,
     "TraceLens generator options for what tlreport does not make: accepted with a warning, refused with "
     "inference traces:", 0},
    IGNORED("--micro_idle_thresh_us", "US", "gpu_timeline has one idle_time row"),
    IGNORED("--short_kernel_study", NULL, "no short-kernel sheets are made"),
    IGNORED("--short_kernel_threshold_us", "US", "no short-kernel sheets are made"),
    IGNORED("--short_kernel_histogram_bins", "N", "no short-kernel sheets are made"),
    IGNORED("--topk_short_kernels", "N", "no short-kernel sheets are made"),
    IGNORED("--topk_roofline_ops", "N", "the reference ignores it too"),
    IGNORED("--comparison_json_path", "TRACE",
            "compare two traces with tlcompare TRACE TRACE (its --tracediff-dir writes TraceDiff's files)"),
    IGNORED("--extension_file", "FILE", "no extensions are loaded"),
    IGNORED("--python_path", "PATH", "no GEMM simulator is run"),
    IGNORED("--enable-origami", NULL, "no simulated times are made"),
    IGNORED("--inductor_cache_dir", "DIR", "Triton kernel metadata is not read"),
    IGNORED("--include_overlap_info", NULL, "no overlap sheets are made"),
    IGNORED("--detect_recompute", NULL, "no is_recompute column is made"),
    IGNORED("--include_first_occurrence_time", NULL, "no first_occurrence_time column is made"),
    /* ---- many ranks: TraceLens_generate_multi_rank_collective_report_pytorch's spellings ---- */
    {{NULL}, NULL, TL_OPT_HEADING, CLI, NULL, 0, 0, NULL,
     "many ranks (one trace per rank of a distributed job: the multi-rank collective report of "
     "TraceLens_generate_multi_rank_collective_report_pytorch; without -o and --output_csvs_dir, "
     "nccl_analysis_report.xlsx beside the rank files):", 0},
    {{"--trace_pattern"}, NULL, TL_OPT_TEXT, CLI, "P", 0, 0, "a pattern with one '*'",
     "rank i's file is P with its one '*' replaced by i", F(trace_pattern)},
    {{"--trace_glob"}, NULL, TL_OPT_TEXT, CLI, "G", 0, 0, "a glob",
     "the files G matches (** recursive, sorted), each rank from its name by --rank_regex", F(trace_glob)},
    {{"--rank_regex"}, NULL, TL_OPT_TEXT, CLI | RANK_SET, "RX", 0, 0, "a regex",
     "with --trace_glob or --ranks: the rank's regex, Python syntax as far as POSIX extended regexes go "
     "(default rank[\\[\\-_/]?(?P<rank>\\d+))", F(rank_regex)},
    {{"--trace_dir"}, NULL, TL_OPT_TEXT, CLI, "DIR", 0, 0, "a directory", "rank i's file is DIR/rank<i>_trace.json",
     F(trace_dir)},
    {{"--ranks"}, NULL, TL_OPT_TEXT, CLI, "DIR", 0, 0, "a directory",
     "DIR's files named like ranks; the world size is how many ranks they name", F(ranks_dir)},
    {{"--world_size"}, NULL, TL_OPT_LONG, CLI, "N", 1, 1 << 24, "a whole number of ranks",
     "the number of ranks (required, but with --ranks)", F(world_size)},
    {{"--agg_metrics"}, NULL, TL_OPT_LIST, CLI | RANK_SET, "AGG", 0, 0, "at least one reducer",
     "the reducers of the implicit-sync summary: mean median min max std var sum count first last "
     "(default: mean median min max)", F(aggs)},
    {{"--gpus_per_node"}, NULL, TL_OPT_LONG, CLI | RANK_SET, "G", 1, 1 << 24, "a whole number of GPUs",
     "node columns for G GPUs a node (default: the length of rank 0's deviceProperties)", F(gpus_per_node)},
    {{"--all2allv_heatmap"}, NULL, TL_OPT_FLAG, CLI | RANK_SET, NULL, 0, 0, NULL, "also the all_to_allv (src, dst) heatmap",
     F(heatmap)},
    {{"-j", "--jobs"}, NULL, TL_OPT_LONG, CLI | RANK_SET, "N", 1, 64, "a whole number from 1 to 64",
     "ranks read at once (default: the CPUs available); the output is the same whatever N", F(jobs)},
    {{"--max_workers"}, NULL, TL_OPT_LONG, CLI | RANK_SET, "K", 1, (double)LONG_MAX, "a whole number",
     "accepted (-j says how many ranks are read at once)", F(max_workers)},
    {{"--use_multiprocessing"}, NULL, TL_OPT_FLAG, CLI | RANK_SET, NULL, 0, 0, NULL,
     "accepted (ranks are always read in parallel)", F(use_multiprocessing)},
    {{"--detailed_analysis"}, NULL, TL_OPT_FLAG, CLI | RANK_SET, NULL, 0, 0, NULL,
     "accepted (the detailed sheets are always made)", F(detailed_analysis)},
    /* the Python module's own: the sheets returned (and written) */
    {{NULL}, "sheets", TL_OPT_LIST, TL_OPT_PY, "SHEET", 0, 0, "at least one sheet", NULL, F(only)},
    {{NULL}, "_drop", TL_OPT_LIST, TL_OPT_PY | TL_OPT_HIDDEN, "SHEET", 0, 0, "sheet names", NULL, F(drop)},
};

static int check_args(void *args, tl_error *err) { return tl_report_args_check(args, err); }

const tl_tool tl_report_tool = {
    .prog = "tlreport",
    .positional = "TRACE[@CAPTURE_DIR]",
    .positional_off = offsetof(tl_report_args, traces),
    .intro = "Build the TraceLens performance report of a PyTorch profiler trace (a Chrome-trace JSON file, "
             "plain or gzip-compressed, as torch.profiler exports it): the sheets gpu_timeline, "
             "ops_summary_by_category, ops_summary, ops_unique_args, unified_perf_summary, the perf-model "
             "sheets (GEMM, SDPA_fwd, CONV_fwd, ..., Reduce_fwd) and kernel_summary, exactly as "
             "TraceLens_generate_perf_report_pytorch makes them.  Long options may be abbreviated "
             "(--output_csvs), as with argparse.\n",
    .outro = "exit status: 0 done, 1 failure (unreadable or invalid trace, cannot write), 2 usage error.\n"
             "\n"
             "example:\n"
             "  tlreport runs/rank0.pt.trace.json.gz -o rank0.xlsx --output_csvs_dir rank0_csvs\n"
             "\n"
             "See tlreport(1).\n",
    .opts = report_opts,
    .nopts = sizeof report_opts / sizeof *report_opts,
    .quiet_off = offsetof(tl_report_args, quiet),
    .check = check_args,
};

void tl_report_args_init(tl_report_args *a)
{
    memset(a, 0, sizeof *a);
    tl_run_report_opts_init(&a->run);
}

static int usage(tl_error *err, const char *msg, const char *arg)
{
    tl_error_set(err, msg, arg);
    return TL_RUN_USAGE;
}

/* The one trace, and its capture folder when written TRACE@DIR (docs/inference.md). */
static int one_trace(tl_report_args *a, tl_error *err)
{
    if (a->traces.n > 1)
        return usage(err, "one trace at a time: '%s' is a second one", a->traces.v[1]);
    if (a->profile_json_path && a->traces.n)
        return usage(err, "one trace at a time: %s names a second one", "--profile_json_path");
    const char *trace = a->traces.n ? a->traces.v[0] : a->profile_json_path;
    if (!trace)
        return usage(err, "%s", "no trace given");
    const char *dir;
    if (tl_capture_split_arg(trace, &a->trace_buf, &dir)) {
        if (a->run.capture_dir)
            return usage(err, "two capture folders given ('%s' and the one after '@')", a->run.capture_dir);
        trace = a->trace_buf;
        a->run.capture_dir = dir;
    } else if (strrchr(trace, '@') && access(trace, F_OK) != 0) {
        const char *at = strrchr(trace, '@');
        tl_error_set(err, "cannot open '%s': no such file, and '%.*s' is no trace to attach the capture folder "
                          "'%s' to", trace, (int)(at - trace), trace, at + 1);
        return TL_RUN_FAILED;
    }
    struct stat st;
    if (stat(trace, &st) == 0 && S_ISDIR(st.st_mode)) {
        tl_error_set(err, "%s: is a directory, not a trace (the collective report of a rank set, one trace per "
                          "rank, is tlreport's: tlreport --ranks %s)", trace, trace);
        return TL_RUN_FAILED;
    }
    a->run.trace = trace;
    return 0;
}

/* The help text of an IGNORED row: why it changes nothing. */
static const char *why_ignored(const char *spelling)
{
    for (size_t i = 0; i < tl_report_tool.nopts; i++)
        if (report_opts[i].kind == TL_OPT_IGNORED && !strcmp(report_opts[i].cli[0], spelling))
            return report_opts[i].help;
    return "";
}

/* The first option of the rows flagged `kind` (ONE_TRACE or RANK_SET) that `a` gives. */
static const tl_optdef *given(const tl_report_args *a, unsigned kind)
{
    tl_report_args defaults;
    tl_report_args_init(&defaults);
    return tl_opts_given(&tl_report_tool, a, &defaults, kind);
}

/* A rank set's options (MULTIRANK.md §0.1, §8.4) into a->ranks. */
static int rank_set(tl_report_args *a, tl_error *err)
{
    tl_ranks_opts *r = &a->ranks;
    const char *spec[4] = {a->trace_pattern, a->trace_glob, a->trace_dir, a->ranks_dir};
    static const int mode[4] = {TL_RANKS_PATTERN, TL_RANKS_GLOB, TL_RANKS_DIR, TL_RANKS_SCAN};
    int n = 0;
    for (int i = 0; i < 4; i++)
        if (spec[i]) {
            r->mode = mode[i];
            r->spec = spec[i];
            n++;
        }
    if (n != 1)
        return usage(err, "%s", "give exactly one of --trace_dir, --trace_pattern, --trace_glob and --ranks");
    if (a->traces.n || a->profile_json_path)
        return usage(err, "a trace ('%s') and a rank set at once: give one",
                     a->traces.n ? a->traces.v[0] : a->profile_json_path);
    const tl_optdef *d = given(a, ONE_TRACE);
    if (d)
        return usage(err, "%s is an option of one trace's report; the collective report of a rank set does not "
                          "take it", tl_opts_label(d));
    const char *star = a->trace_pattern ? strchr(a->trace_pattern, '*') : NULL;
    if (a->trace_pattern && (!star || star != strrchr(a->trace_pattern, '*')))
        return usage(err, "--trace_pattern '%s' must hold exactly one '*' (where the rank goes)", a->trace_pattern);
    if (r->mode != TL_RANKS_SCAN && !a->world_size)
        return usage(err, "%s", "--world_size is required with --trace_dir, --trace_pattern and --trace_glob "
                                "(or use --ranks DIR, which counts the ranks)");
    if (a->rank_regex && r->mode != TL_RANKS_GLOB && r->mode != TL_RANKS_SCAN)
        return usage(err, "%s", "--rank_regex goes with --trace_glob or --ranks");
    if (a->aggs.n > TL_RANKS_MAX_AGGS)
        return usage(err, "--agg_metrics: more than %s reducers", "16");
    for (size_t i = 0; i < a->aggs.n; i++) {
        if (!tl_ranks_agg_known(a->aggs.v[i]))
            return usage(err, "--agg_metrics: '%s' is not one of mean median min max std var sum count first last",
                         a->aggs.v[i]);
        r->aggs[r->naggs++] = a->aggs.v[i];
    }
    r->rank_regex = a->rank_regex;
    r->world_size = a->world_size;
    r->gpus_per_node = a->gpus_per_node;
    r->heatmap = a->heatmap;
    r->jobs = (int)a->jobs;
    return 0;
}

int tl_report_args_check(tl_report_args *a, tl_error *err)
{
    tl_run_report_opts *o = &a->run;
    if (a->trace_pattern || a->trace_glob || a->trace_dir || a->ranks_dir || a->world_size)
        return rank_set(a, err);
    const tl_optdef *d = given(a, RANK_SET);
    if (d)
        return usage(err, "%s is an option of a rank set (--trace_pattern, --trace_glob, --trace_dir or --ranks), "
                          "not of one trace's report", tl_opts_label(d));
    int rc = one_trace(a, err);
    if (rc != 0)
        return rc;
    if (!!o->gpu_arch + !!a->gpu_arch_json + !!a->gpu_arch_name > 1)
        return usage(err, "%s", "one GPU description at a time: --gpu-arch, --gpu_arch_json_path or "
                                "--gpu_arch_platform");
    if (!o->gpu_arch)
        o->gpu_arch = a->gpu_arch_json ? a->gpu_arch_json : a->gpu_arch_name;
    /* The inference generator has none of the eager one's extra options: refused by name
     * there (docs/inference.md), accepted with a warning here. */
    int inference = o->capture_dir || o->inference || o->parent_module;
    for (size_t k = 0; k < a->ignored.n; k++) {
        if (inference)
            return usage(err, "'%s' (an option of TraceLens' generator) is not supported with inference traces",
                         a->ignored.v[k]);
        tl_warn("%s is accepted for TraceLens compatibility and ignored: %s", a->ignored.v[k],
                why_ignored(a->ignored.v[k]));
    }
    if (inference && (o->unlinked || o->topk_ops >= 0 || o->gpu_arch))
        return usage(err, "%s", "--include_unlinked_kernels, --topk_ops and the GPU description are not supported "
                                "with inference traces");
    return 0;
}

void tl_report_args_free(tl_report_args *a)
{
    free(a->trace_buf);
    a->trace_buf = NULL;
    tl_opts_free(&tl_report_tool, a);
}
