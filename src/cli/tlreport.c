/*
 * tlreport.c - the tlreport command line (TRACES.md §0): one PyTorch profiler trace in,
 * its TraceLens report out (a workbook and/or a directory of CSVs), with the reference
 * generator's option spellings, --help, --version and exit codes 0 (done), 1 (failure),
 * 2 (usage).
 */
#include "base/util.h"
#include "io/output.h"
#include "table/result.h"
#include "trace/capture.h"
#include "trace/infer.h"
#include "trace/trace_report.h"
#include "write/csv_write.h"
#include "write/sink.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum { EXIT_USAGE = 2 };

static const char usage_text[] = "usage: tlreport TRACE[@CAPTURE_DIR] [--capture-folder DIR] [--inference] [-o FILE]\n"
                                 "                [--output_csvs_dir DIR] [-q]\n";

static const char help_text[] =
    "Build the TraceLens performance report of a PyTorch profiler trace (a Chrome-trace\n"
    "JSON file, plain or gzip-compressed, as torch.profiler exports it): the sheets\n"
    "gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args and\n"
    "kernel_summary, exactly as TraceLens_generate_perf_report_pytorch makes them.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE         the workbook to write (default: <tag>_perf_report.xlsx\n"
    "                            here, unless only --output_csvs_dir is given)\n"
    "  --output_csvs_dir DIR     write every sheet as DIR/<sheet>.csv\n"
    "  -q, --quiet               print nothing but errors\n"
    "  -h, --help                show this help and exit\n"
    "  --version                 show the version and exit\n"
    "The reference's spellings work too: --profile_json_path TRACE, --output_xlsx_path FILE,\n"
    "--kernel_summary (always on).\n"
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
    int quiet;
    const char *capture_dir; /* --capture-folder or TRACE@DIR */
    char *trace_buf;         /* the TRACE part of TRACE@DIR */
    int inference, parent_module, num_kernels, call_stack, pseudo_ops;
} options;

/* The reference generators' options that are later work here: refused by name. */
static const char *const refused_options[] = {
    "--micro_idle_thresh_us", "--include_unlinked_kernels", "--short_kernel_study", "--short_kernel_threshold_us",
    "--short_kernel_histogram_bins", "--extension_file", "--python_path", "--gpu_arch_json_path",
    "--gpu_arch_platform", "--enable-origami", "--comparison_json_path", "--comparison_capture_folder",
    "--include_overlap_info",
};


static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tlreport: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'tlreport --help')\n");
    return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, options *o)
{
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
        if (nlen >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, nlen);
        name[nlen] = 0;
        if (eq)
            eq++;
        const char **dst = NULL;
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            fputs(usage_text, stdout);
            fputs("\n", stdout);
            fputs(help_text, stdout);
            return -1;
        } else if (!strcmp(name, "--version")) {
            printf("tlreport %s\n", TL_VERSION);
            return -1;
        } else if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(name, "--kernel_summary") || !strcmp(name, "--enable_kernel_summary") ||
                   !strcmp(name, "--disable_coll_analysis")) {
            /* always on; the reference's collective analysis is off from its CLI anyway */
        } else if (!strcmp(name, "--capture-folder") || !strcmp(name, "--capture_folder")) {
            const char *v = eq ? eq : i + 1 < argc ? argv[++i] : NULL;
            if (!v || !*v)
                return usage_error("%s needs a value", name);
            if (o->capture_dir)
                return usage_error("two capture folders given ('%s')", v);
            o->capture_dir = v;
        } else if (!strcmp(name, "--inference")) {
            o->inference = 1;
        } else if (!strcmp(name, "--group_by_parent_module")) {
            o->parent_module = 1;
        } else if (!strcmp(name, "--group_by_num_kernels")) {
            o->num_kernels = 1;
        } else if (!strcmp(name, "--include_call_stack")) {
            o->call_stack = 1;
        } else if (!strcmp(name, "--enable_pseudo_ops")) {
            o->pseudo_ops = 1;
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output") || !strcmp(name, "--output_xlsx_path")) {
            dst = &o->output;
        } else if (!strcmp(name, "--output_csvs_dir")) {
            dst = &o->csv_dir;
        } else if (!strcmp(name, "--profile_json_path")) {
            if (o->trace)
                return usage_error("one trace at a time: %s names a second one", name);
            dst = &o->trace;
        } else if (!strncmp(a, "-o", 2) && a[2]) {
            o->output = a + 2;
        } else {
            for (size_t r = 0; r < sizeof refused_options / sizeof *refused_options; r++)
                if (!strcmp(name, refused_options[r]) || !strncmp(name, "--topk_", 7))
                    return usage_error("'%s' (an option of TraceLens' generator) is not supported", name);
            return usage_error("unknown option '%s'", a);
        }
        if (dst) {
            const char *v = eq ? eq : i + 1 < argc ? argv[++i] : NULL;
            if (!v || !*v)
                return usage_error("%s needs a value", name);
            *dst = v;
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

/* Only CSVs: each into the directory's temporary, moved into place together. */
static int write_csvs_only(const tl_results *res, const char *dir, tl_error *err)
{
    tl_output *out = tl_output_new(dir, 1, err);
    if (!out)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < res->n && rc == 0; i++) {
        char *name = tl_xmalloc(strlen(res->items[i].name) + 5);
        sprintf(name, "%s.csv", res->items[i].name);
        char *file = tl_output_add(out, name);
        rc = tl_csv_write_file(res->items[i].table, file, err);
        free(file);
        free(name);
    }
    if (rc == 0)
        rc = tl_output_commit(&out, 1, err);
    tl_output_free(out);
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
    const char *clash = xlsx && tl_output_same_target(xlsx, o.trace)                 ? xlsx
                        : o.csv_dir && tl_output_same_target(o.csv_dir, o.trace)       ? o.csv_dir
                        : xlsx && o.csv_dir && tl_output_same_target(xlsx, o.csv_dir) ? o.csv_dir
                                                                                      : NULL;
    if (clash) {
        fprintf(stderr, "tlreport: the output '%s' would overwrite %s; refusing (see 'tlreport --help')\n", clash,
                clash == o.csv_dir && xlsx && tl_output_same_target(xlsx, o.csv_dir) ? "the workbook" : "the input trace");
        free(tag);
        free(default_out);
        return EXIT_USAGE;
    }

    tl_error err = {0};
    tl_arena arena;
    tl_arena_init(&arena);
    tl_results res = {0};
    tl_out *out = NULL;
    size_t *rows = NULL, *cols = NULL, nres = 0;
    const char **names = NULL;
    rc = 1;
    tl_sheet_opts so = {0};
    so.inference = o.capture_dir || o.inference || o.parent_module;
    so.parent_module = o.parent_module;
    so.num_kernels = o.num_kernels;
    tl_infer_opts io = {o.capture_dir, o.parent_module || o.call_stack, o.pseudo_ops, o.call_stack};
    tl_infer_stats st;
    tl_trace *t = so.inference || o.call_stack || o.pseudo_ops ? tl_infer_load(o.trace, &io, &st, &err)
                                                               : tl_trace_load(o.trace, &err);
    if (!t || tl_trace_sheets_opts(t, &so, &arena, &res, &err) != 0)
        goto fail;
    if (!o.capture_dir && !o.quiet)
        tl_infer_capture_hint(t, o.trace);
    nres = res.n;
    rows = tl_xmalloc((nres ? nres : 1) * sizeof *rows);
    cols = tl_xmalloc((nres ? nres : 1) * sizeof *cols);
    names = tl_xmalloc((nres ? nres : 1) * sizeof *names);
    for (size_t i = 0; i < nres; i++) {
        rows[i] = res.items[i].nrows;
        cols[i] = res.items[i].ncols;
        names[i] = res.items[i].name;
    }
    if (xlsx) {
        out = tl_out_open(xlsx, o.csv_dir, 0, &err);
        if (!out)
            goto fail;
        tl_sink sink = tl_out_sink(out);
        for (size_t i = 0; i < res.n; i++) {
            if (sink.put(sink.ctx, &res.items[i], &err) != 0) {
                for (size_t j = i + 1; j < res.n; j++)
                    tl_table_free(res.items[j].table);
                res.n = 0;
                goto fail;
            }
            res.items[i].table = NULL; /* the sink's now */
        }
        if (tl_out_finish(out, NULL, &err) != 0 || tl_out_commit(out, &err) != 0)
            goto fail;
    } else if (write_csvs_only(&res, o.csv_dir, &err) != 0) {
        goto fail;
    }
    if (!o.quiet && o.capture_dir && st.nlaunch) {
        tl_buf line = {0};
        tl_infer_summary(t, &st, &line);
        printf("%s\n", tl_buf_cstr(&line));
        tl_buf_free(&line);
    }
    if (!o.quiet)
        for (size_t i = 0; i < nres; i++)
            printf("Wrote sheet '%s' with %zu rows \xC3\x97 %zu columns\n", names[i], rows[i], cols[i]);
    rc = 0;
    goto done;
fail:
    tl_output_cleanup();
    fprintf(stderr, "tlreport: %s\n", err.msg[0] ? err.msg : "failed");
    rc = 1;
done:
    tl_out_free(out);
    tl_results_free(&res);
    tl_trace_free(t);
    tl_arena_free(&arena);
    free(rows);
    free(cols);
    free(names);
    free(tag);
    free(default_out);
    free(o.trace_buf);
    if (fflush(stdout) != 0 && rc == 0)
        rc = 1;
    return rc;
}
