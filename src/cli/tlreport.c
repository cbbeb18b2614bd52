/*
 * tlreport.c - the tlreport command line (TRACES.md §0): one PyTorch profiler trace in,
 * its TraceLens report out (a workbook and/or a directory of CSVs), with the reference
 * generator's option spellings, --help, --version and exit codes 0 (done), 1 (failure),
 * 2 (usage).
 */
#include "base/opts.h"
#include "base/util.h"
#include "io/output.h"
#include "run/compare.h"
#include "run/report.h"
#include "trace/capture.h"
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

static const char usage_text[] =
    "usage: tlreport TRACE[@CAPTURE_DIR] [--capture-folder DIR] [--inference] [-o FILE]\n"
    "                [--output_csvs_dir DIR] [--gpu-arch NAME|FILE] [--include_unlinked_kernels]\n"
    "                [--topk_ops N] [--html FILE] [-q]\n";

static const char help_text[] =
    "Build the TraceLens performance report of a PyTorch profiler trace (a Chrome-trace\n"
    "JSON file, plain or gzip-compressed, as torch.profiler exports it): the sheets\n"
    "gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args,\n"
    "unified_perf_summary, the perf-model sheets (GEMM, SDPA_fwd, CONV_fwd, ...,\n"
    "Reduce_fwd) and kernel_summary, exactly as TraceLens_generate_perf_report_pytorch\n"
    "makes them.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE         the workbook to write (default: <tag>_perf_report.xlsx\n"
    "                            here, unless only --output_csvs_dir is given)\n"
    "  --output_csvs_dir DIR     write every sheet as DIR/<sheet>.csv\n"
    "  --gpu-arch NAME|FILE      add the roofline columns against a GPU's peaks: a bundled\n"
    "                            GPU (H100, H200, B200, MI300X, MI325X, MI355X) or a\n"
    "                            TraceLens-style JSON file\n"
    "  --include_unlinked_kernels  gpu_timeline counts the GPU events with no launch too\n"
    "                            (work from before the profiling window)\n"
    "  --topk_ops N              keep the first N rows of ops_unique_args\n"
    "  --html FILE               also write the report as one self-contained HTML page\n"
    "                            (GPU time, the largest ops, the roofline)\n"
    "  -q, --quiet               print nothing but errors\n"
    "  -h, --help                show this help and exit\n"
    "  --version                 show the version and exit\n"
    "The reference's spellings work too: --profile_json_path TRACE, --output_xlsx_path FILE,\n"
    "--kernel_summary (always on), --gpu_arch_json_path FILE, --gpu_arch_platform NAME;\n"
    "its options for sheets tlreport does not make\n"
    "(--disable_coll_analysis, --short_kernel_study, --detect_recompute, ...) are accepted\n"
    "with a warning.  Long options may be abbreviated (--output_csvs), as with argparse.\n"
    "\n"
    "inference traces (CUDA/HIP graph replay, INFERENCE.md):\n"
    "  --capture-folder DIR      attribute the replayed kernels through the graph-capture\n"
    "                            traces in DIR (also --capture_folder DIR, or TRACE@DIR)\n"
    "  --inference               the inference generator's sheets, without a capture folder\n"
    "  --group_by_parent_module  parent_module and call-stack columns (implies --inference)\n"
    "  --group_by_num_kernels    ops_unique_args grouped by num_kernels too\n"
    "  --include_call_stack      Python functions in the call tree\n"
    "  --enable_pseudo_ops       SGLang's numbered profiler names unnumbered\n"
    "  --enable_kernel_summary, --disable_coll_analysis: accepted (kernel_summary is always on)\n"
    "\n"
    "exit status: 0 done, 1 failure (unreadable or invalid trace, cannot write), 2 usage error.\n"
    "\n"
    "example:\n"
    "  tlreport runs/rank0.pt.trace.json.gz -o rank0.xlsx --output_csvs_dir rank0_csvs\n"
    "\n"
    "See tlreport(1).\n";

typedef struct options {
    const char *trace;
    const char *output;
    const char *csv_dir;
    const char *gpu_arch;      /* --gpu-arch NAME|FILE */
    const char *html;          /* --html FILE */
    const char *gpu_arch_json; /* --gpu_arch_json_path FILE */
    const char *gpu_arch_name; /* --gpu_arch_platform NAME */
    int quiet;
    int unlinked;   /* --include_unlinked_kernels */
    long topk_ops;  /* --topk_ops, -1 for all */
    const char *ignored[8];   /* the generator options given that change nothing, warned about */
    size_t nignored;
    const char *capture_dir; /* --capture-folder or TRACE@DIR */
    char *trace_buf;         /* the TRACE part of TRACE@DIR */
    int inference, parent_module, num_kernels, call_stack, pseudo_ops;
} options;



static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tlreport: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'tlreport --help')\n");
    return EXIT_USAGE;
}

/* What each spelling does (the table's id). */
enum {
    O_HELP, O_VERSION, O_QUIET, O_OUTPUT, O_CSVS, O_TRACE, O_ALWAYS, O_UNLINKED, O_TOPK_OPS, O_IGNORED,
    O_GPU_ARCH, O_GPU_ARCH_JSON, O_GPU_ARCH_NAME, O_CAPTURE, O_INFERENCE, O_PARENT_MODULE, O_NUM_KERNELS,
    O_CALL_STACK, O_PSEUDO_OPS, O_HTML
};

/* Every spelling tlreport takes, its own and TraceLens_generate_perf_report_pytorch's; a
 * long one may be abbreviated as argparse allows (base/opts.h). */
static const tl_opt tlreport_opts[] = {
    {"-h", 0, O_HELP}, {"--help", 0, O_HELP}, {"--version", 0, O_VERSION}, {"-q", 0, O_QUIET},
    {"--quiet", 0, O_QUIET}, {"-o", 1, O_OUTPUT}, {"--output", 1, O_OUTPUT}, {"--output_xlsx_path", 1, O_OUTPUT},
    {"--output_csvs_dir", 1, O_CSVS}, {"--profile_json_path", 1, O_TRACE}, {"--kernel_summary", 0, O_ALWAYS},
    {"--include_unlinked_kernels", 0, O_UNLINKED}, {"--topk_ops", 1, O_TOPK_OPS},
    {"--gpu-arch", 1, O_GPU_ARCH}, {"--gpu_arch_json_path", 1, O_GPU_ARCH_JSON},
    {"--gpu_arch_platform", 1, O_GPU_ARCH_NAME}, {"--html", 1, O_HTML},
    /* inference traces (INFERENCE.md §0) */
    {"--capture-folder", 1, O_CAPTURE}, {"--capture_folder", 1, O_CAPTURE}, {"--inference", 0, O_INFERENCE},
    {"--group_by_parent_module", 0, O_PARENT_MODULE}, {"--group_by_num_kernels", 0, O_NUM_KERNELS},
    {"--include_call_stack", 0, O_CALL_STACK}, {"--enable_pseudo_ops", 0, O_PSEUDO_OPS},
    {"--enable_kernel_summary", 0, O_ALWAYS},
    /* the generator's options for what tlreport does not make: accepted, with a warning */
    {"--disable_coll_analysis", 0, O_ALWAYS}, {"--micro_idle_thresh_us", 1, O_IGNORED},
    {"--short_kernel_study", 0, O_IGNORED}, {"--short_kernel_threshold_us", 1, O_IGNORED},
    {"--short_kernel_histogram_bins", 1, O_IGNORED}, {"--topk_short_kernels", 1, O_IGNORED},
    {"--topk_roofline_ops", 1, O_IGNORED}, {"--comparison_json_path", 1, O_IGNORED},
    {"--extension_file", 1, O_IGNORED}, {"--python_path", 1, O_IGNORED},
    {"--enable-origami", 0, O_IGNORED}, {"--inductor_cache_dir", 1, O_IGNORED},
    {"--include_overlap_info", 0, O_IGNORED}, {"--detect_recompute", 0, O_IGNORED},
    {"--include_first_occurrence_time", 0, O_IGNORED},
};

/* Why an accepted option changes nothing (by its first letters: the table above). */
static const struct {
    const char *prefix, *why;
} ignored_why[] = {
    {"--micro_idle", "gpu_timeline has one idle_time row"},
    {"--short_kernel", "no short-kernel sheets are made"},
    {"--topk_short", "no short-kernel sheets are made"},
    {"--topk_roofline", "the reference ignores it too"},
    {"--comparison_json", "compare two traces with tlcompare TRACE TRACE (its --tracediff-dir writes TraceDiff's files)"},
    {"--extension_file", "no extensions are loaded"},
    {"--python_path", "no GEMM simulator is run"},
    {"--enable-origami", "no simulated times are made"},
    {"--inductor_cache", "Triton kernel metadata is not read"},
    {"--include_overlap", "no overlap sheets are made"},
    {"--detect_recompute", "no is_recompute column is made"},
    {"--include_first", "no first_occurrence_time column is made"},
};

static void warn_ignored(const char *name)
{
    for (size_t i = 0; i < sizeof ignored_why / sizeof *ignored_why; i++)
        if (!strncmp(name, ignored_why[i].prefix, strlen(ignored_why[i].prefix))) {
            tl_warn("%s is accepted for TraceLens compatibility and ignored: %s", name, ignored_why[i].why);
            return;
        }
}

static int parse_args(int argc, char **argv, options *o)
{
    o->topk_ops = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0') {
            if (o->trace)
                return usage_error("one trace at a time: '%s' is a second one", a);
            o->trace = a;
            continue;
        }
        char name[64];
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        if (!strncmp(a, "-o", 2) && a[2] && a[1] != '-') {
            o->output = a + 2; /* -oFILE */
            continue;
        }
        if (nlen >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, nlen);
        name[nlen] = 0;
        if (eq)
            eq++;
        tl_buf why = {0};
        const tl_opt *opt = tl_opt_find(tlreport_opts, sizeof tlreport_opts / sizeof *tlreport_opts, name, &why);
        if (!opt) {
            int rc = usage_error("%s", tl_buf_cstr(&why));
            tl_buf_free(&why);
            return rc;
        }
        tl_buf_free(&why);
        const char *v = NULL;
        if (opt->takes_value) {
            v = eq ? eq : i + 1 < argc ? argv[++i] : NULL;
            if (!v || !*v)
                return usage_error("%s needs a value", opt->name);
        } else if (eq) {
            return usage_error("%s takes no value", opt->name);
        }
        switch (opt->id) {
        case O_HELP:
            fputs(usage_text, stdout);
            fputs("\n", stdout);
            fputs(help_text, stdout);
            return -1;
        case O_VERSION:
            printf("tlreport %s\n", TL_VERSION);
            return -1;
        case O_QUIET:
            o->quiet = 1;
            break;
        case O_OUTPUT:
            o->output = v;
            break;
        case O_CSVS:
            o->csv_dir = v;
            break;
        case O_TRACE:
            if (o->trace)
                return usage_error("one trace at a time: %s names a second one", opt->name);
            o->trace = v;
            break;
        case O_GPU_ARCH:
            o->gpu_arch = v;
            break;
        case O_HTML:
            o->html = v;
            break;
        case O_GPU_ARCH_JSON:
            o->gpu_arch_json = v;
            break;
        case O_GPU_ARCH_NAME:
            o->gpu_arch_name = v;
            break;
        case O_UNLINKED:
            o->unlinked = 1;
            break;
        case O_TOPK_OPS: {
            char *end = NULL;
            long k = strtol(v, &end, 10);
            if (end == v || *end || k < 0)
                return usage_error("--topk_ops needs a whole number of rows, got '%s'", v);
            o->topk_ops = k;
            break;
        case O_CAPTURE:
            if (o->capture_dir)
                return usage_error("two capture folders given ('%s')", v);
            o->capture_dir = v;
            break;
        case O_INFERENCE:
            o->inference = 1;
            break;
        case O_PARENT_MODULE:
            o->parent_module = 1;
            break;
        case O_NUM_KERNELS:
            o->num_kernels = 1;
            break;
        case O_CALL_STACK:
            o->call_stack = 1;
            break;
        case O_PSEUDO_OPS:
            o->pseudo_ops = 1;
            break;
        }
        case O_IGNORED:
            if (o->nignored < sizeof o->ignored / sizeof *o->ignored)
                o->ignored[o->nignored++] = opt->name;
            break;
        default: /* O_ALWAYS: what tlreport always does */
            break;
        }
    }
    if (!o->trace)
        return usage_error("%s", "no trace given");
    const char *dir;
    if (tl_capture_split_arg(o->trace, &o->trace_buf, &dir)) {
        if (o->capture_dir)
            return usage_error("two capture folders given ('%s' and the one after '@')", o->capture_dir);
        o->trace = o->trace_buf;
        o->capture_dir = dir;
    } else if (strrchr(o->trace, '@') && access(o->trace, F_OK) != 0) {
        const char *at = strrchr(o->trace, '@');
        fprintf(stderr, "tlreport: cannot open '%s': no such file, and '%.*s' is no trace to attach the capture folder "
                        "'%s' to\n", o->trace, (int)(at - o->trace), o->trace, at + 1);
        return 1;
    }
    if (!!o->gpu_arch + !!o->gpu_arch_json + !!o->gpu_arch_name > 1)
        return usage_error("%s", "one GPU description at a time: --gpu-arch, --gpu_arch_json_path or --gpu_arch_platform");
    /* The inference generator has none of the eager one's extra options: refused by name
     * there (INFERENCE.md §0), accepted with a warning here. */
    int inference = o->capture_dir || o->inference || o->parent_module;
    for (size_t k = 0; k < o->nignored; k++) {
        if (inference)
            return usage_error("'%s' (an option of TraceLens' generator) is not supported with inference traces",
                               o->ignored[k]);
        warn_ignored(o->ignored[k]);
    }
    if (inference && (o->unlinked || o->topk_ops >= 0 || o->gpu_arch || o->gpu_arch_json || o->gpu_arch_name))
        return usage_error("%s", "--include_unlinked_kernels, --topk_ops and the GPU description are not supported "
                                 "with inference traces");
    return 0;
}

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

int main(int argc, char **argv)
{
    tl_progname = "tlreport";
#ifdef __GLIBC__
    /* The event arrays grow by doubling to hundreds of MB on a big trace: without this,
     * each growth is a fresh mmap whose pages fault in again. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        free(o.trace_buf);
        return rc < 0 ? 0 : rc;
    }
    tl_quiet = o.quiet;
    tl_output_install_cleanup();

    char *tag = trace_tag(o.trace);
    char *default_out = NULL;
    const char *xlsx = o.output;
    if (!xlsx && !o.csv_dir) {
        default_out = tl_xmalloc(strlen(tag) + 32);
        sprintf(default_out, "%s_perf_report.xlsx", *tag ? tag : "trace");
        xlsx = default_out;
    }
    tl_run_report_opts ro;
    tl_run_report_opts_init(&ro);
    ro.trace = o.trace;
    ro.capture_dir = o.capture_dir;
    ro.output = xlsx;
    ro.csv_dir = o.csv_dir;
    ro.html = o.html;
    ro.gpu_arch = o.gpu_arch ? o.gpu_arch : o.gpu_arch_json ? o.gpu_arch_json : o.gpu_arch_name;
    ro.unlinked = o.unlinked;
    ro.topk_ops = o.topk_ops;
    ro.inference = o.inference;
    ro.parent_module = o.parent_module;
    ro.num_kernels = o.num_kernels;
    ro.call_stack = o.call_stack;
    ro.pseudo_ops = o.pseudo_ops;
    ro.capture_hint = !o.quiet;
    tl_run_report rep;
    rc = tl_run_report_build(&ro, &rep);
    if (rc == TL_RUN_USAGE) {
        fprintf(stderr, "tlreport: %s%s\n", rep.err.msg, rep.usage_hint ? " (see 'tlreport --help')" : "");
        rc = EXIT_USAGE;
    } else if (rc != TL_RUN_OK) {
        tl_output_cleanup();
        fprintf(stderr, "tlreport: %s\n", rep.err.msg[0] ? rep.err.msg : "failed");
        rc = 1;
    } else {
        if (!o.quiet && rep.infer_line.len)
            printf("%s\n", tl_buf_cstr(&rep.infer_line));
        if (!o.quiet)
            for (size_t i = 0; i < rep.results.n; i++)
                printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", rep.results.items[i].name,
                       rep.results.items[i].nrows, rep.results.items[i].ncols);
        fflush(stdout);
        tl_xlsx_warn_cut_text(); /* after the answer: one line for every cell cut */
    }
    tl_run_report_free(&rep);
    free(tag);
    free(default_out);
    free(o.trace_buf);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "tlreport: cannot write to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
