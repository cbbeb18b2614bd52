/*
 * fuzz_run.c - the run layer's entry points as the Python module calls them: reports built
 * in memory from arbitrary cells (run/memreport.h), compared by tl_compare_run with the
 * results kept, then everything a Comparison offers: the result tables, the summary in
 * every rendering, the gate again with other settings, and writing the kept results.
 *
 * Input: a flags byte, then a little program that builds the reports:
 *   flags: bits 0-1 reports - 2 (0 and 3 mean 2), bit 2 --tracelens-keys, bit 3 write the
 *          kept results as CSVs (and, with bit 4, the workbook), bits 5-7 the --sheets group;
 *   per report: a sheet count byte (% 4), and per sheet: its name (a byte indexing
 *   runfz_sheets), a column count and a row count byte (% 9, % 17), each column's name
 *   (a byte indexing runfz_columns, or past it: text of the next byte's length), then the
 *   cells row by row, each a kind byte and its payload (8 bytes of an int or a double, a
 *   boolean byte, or a text of the next byte's length).
 * A missing byte reads as 0.  The first report's sheets of runs (ranks_gpu_timeline,
 * stragglers) are handed to the run as its own sheets, as a comparison of runs adds them:
 * the page draws its heatmap and bars per rank from them.
 * Every result must be a well-formed table, and the run must
 * return its errors (a sheet given twice, a report without TraceLens sheets) rather than
 * fail any other way.
 */
#include "fuzz.h"

#include "compare/groups.h"
#include "run/compare.h"
#include "run/memreport.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>


static const char *const runfz_sheets[] = {
    "gpu_timeline", "ops_summary", "kernel_summary", "ops_unique_args", "unified_perf_summary", "GEMM",
    "SDPA_fwd", "BinaryElementwise", "Normalization", "ops_all", "ranks_gpu_timeline", "stragglers",
};
#define RUNFZ_NSHEETS (sizeof runfz_sheets / sizeof *runfz_sheets)

/* The columns the groups key on, diff and sort by (and a few they copy). */
static const char *const runfz_columns[] = {
    "type", "time ms", "percent", "name", "total_direct_kernel_time_sum", "total_direct_kernel_time_ms",
    "Count", "Categories", "Percentage (%)", "Parent op category", "Parent cpu_op", "Kernel name",
    "Kernel stream", "Kernel duration (µs)_sum", "Kernel duration (µs)_count", "Kernel duration (µs)_mean",
    "op category", "Input Dims", "Input type", "Input Strides", "Concrete Inputs", "operation_count",
    "total_direct_kernel_time_mean", "ex_UID", "kernel_details_summary", "param: M", "param: N", "param: K",
    "Kernel Time (µs)_sum", "Kernel Time (µs)_mean", "TFLOPS/s_mean", "TB/s_mean", "GFLOPS_first",
    "Data Moved (MB)_first", "name_count", "UID_first", "is_recompute", "gpu_pid", "parent_module",
    /* the sheets of runs' (the reports are tagged report1, report2) */
    "rank", "busy_time_ms::report1", "busy_time_ms::report2", "busy_time_ms__report2_diff",
    "exposed_comm_time_ms::report1", "exposed_comm_time_ms::report2", "exposed_comm_time_ms__report2_diff",
    "idle_time_ms::report2", "report1::mean_wait_time_us", "report2::mean_wait_time_us",
    "mean_wait_time_us__report2_diff",
};
#define RUNFZ_NCOLUMNS (sizeof runfz_columns / sizeof *runfz_columns)

static const unsigned runfz_groups[8] = {
    TL_GROUP_ALL, TL_GROUP_GPU_TIMELINE, TL_GROUP_OPS_SUMMARY, TL_GROUP_KERNEL_SUMMARY,
    TL_GROUP_OPS_ALL, TL_GROUP_ROOFLINE, TL_GROUP_PERF, TL_GROUP_ALL | TL_GROUP_PERF,
};

typedef struct runfz_in {
    const uint8_t *p;
    size_t n, at;
} runfz_in;

static uint8_t runfz_byte(runfz_in *in) { return in->at < in->n ? in->p[in->at++] : 0; }

static void runfz_bytes(runfz_in *in, void *out, size_t k)
{
    for (size_t i = 0; i < k; i++)
        ((uint8_t *)out)[i] = runfz_byte(in);
}

/* A text of the next byte's length (its bytes as they come, NUL included: cut there). */
static const char *runfz_text(runfz_in *in, tl_report *rep, size_t *len)
{
    char buf[256];
    size_t k = runfz_byte(in);
    runfz_bytes(in, buf, k);
    buf[k] = '\0';
    *len = strlen(buf);
    return tl_mem_report_text(rep, buf, *len);
}

static tl_cell runfz_cell(runfz_in *in, tl_report *rep)
{
    switch (runfz_byte(in) % 6) {
    case 1: {
        int64_t i;
        runfz_bytes(in, &i, sizeof i);
        return tl_cell_int(i % 1000003);
    }
    case 2: {
        double f;
        runfz_bytes(in, &f, sizeof f);
        return isnan(f) ? tl_cell_missing() : tl_cell_float(f);
    }
    case 3: return tl_cell_bool(runfz_byte(in) & 1);
    case 4: {
        size_t n;
        const char *s = runfz_text(in, rep, &n);
        return tl_cell_strn(s, n);
    }
    case 5: return tl_cell_float((double)(int8_t)runfz_byte(in) / 4); /* small, often equal values */
    default: return tl_cell_missing();
    }
}

/* One report from the program; 0, or -1 (the builder's own error, e.g. a sheet twice). */
static int runfz_report(runfz_in *in, tl_report *rep, size_t k)
{
    char name[32];
    snprintf(name, sizeof name, "report%zu", k + 1);
    tl_mem_report_open(rep, name);
    size_t nsheets = runfz_byte(in) % 4;
    for (size_t s = 0; s < nsheets; s++) {
        const char *sheet = runfz_sheets[runfz_byte(in) % RUNFZ_NSHEETS];
        size_t ncols = runfz_byte(in) % 9, nrows = runfz_byte(in) % 17;
        const char *names[8];
        for (size_t c = 0; c < ncols; c++) {
            size_t pick = runfz_byte(in), len;
            names[c] = pick < RUNFZ_NCOLUMNS ? runfz_columns[pick] : runfz_text(in, rep, &len);
        }
        tl_builder *b = tl_mem_report_begin_sheet(rep, sheet, names, ncols);
        for (size_t r = 0; r < nrows; r++) {
            for (size_t c = 0; c < ncols; c++)
                tl_builder_cell(b, c, runfz_cell(in, rep));
            tl_builder_end_row(b, 1);
        }
        tl_error err = {0};
        if (tl_mem_report_end_sheet(rep, &err) != 0) {
            TL_FUZZ_CHECK(err.msg[0] != '\0');
            return -1;
        }
    }
    return 0;
}

/* The first report's sheets of runs, copied into *extra (tables the run takes over; their
 * strings are the report's, which the run keeps until it is freed). */
static void runfz_extra(tl_report *rep, tl_arena *arena, tl_results *extra)
{
    static const char *const names[] = {"ranks_gpu_timeline", "stragglers"};
    for (size_t i = 0; i < 2; i++) {
        tl_error err = {0};
        tl_table *t = tl_report_has_sheet(rep, names[i]) ? tl_report_read_sheet(rep, names[i], arena, &err) : NULL;
        if (!t)
            continue;
        if (extra->n == extra->cap) {
            extra->cap = extra->cap ? 2 * extra->cap : 2;
            extra->items = tl_xrealloc(extra->items, extra->cap * sizeof *extra->items);
        }
        extra->items[extra->n++] = (tl_result){names[i], t, NULL, t->nrows, t->ncols, NULL};
    }
}

static char runfz_dir[256];

static void runfz_rm(void)
{
    if (!runfz_dir[0])
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", runfz_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_run: cannot remove %s\n", runfz_dir);
}

int tl_fuzz_run(const uint8_t *data, size_t size)
{
    static int quiet_set;
    if (!quiet_set) {
        tl_quiet = 1; /* the warnings of a million inputs */
        snprintf(runfz_dir, sizeof runfz_dir, "/tmp/tl_fuzz_run_%ld", (long)getpid());
        atexit(runfz_rm);
        quiet_set = 1;
    }
    runfz_in in = {data, size, 0};
    uint8_t flags = runfz_byte(&in);
    size_t n = (flags & 3) == 3 || (flags & 3) == 0 ? 2 : (size_t)(flags & 3) + 1;
    tl_report reps[3];
    memset(reps, 0, sizeof reps);
    const char *paths[3];
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!bad && runfz_report(&in, &reps[i], i) != 0)
            bad = 1;
        if (!reps[i].ops)
            tl_mem_report_open(&reps[i], "empty");
        paths[i] = reps[i].path;
    }
    if (bad) {
        for (size_t i = 0; i < n; i++)
            tl_report_close(&reps[i]);
        return 0;
    }
    char *names[3];
    for (size_t i = 0; i < n; i++)
        names[i] = tl_xstrdup(paths[i]); /* the run takes the reports; their names outlive them here */
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.inputs = (const char *const *)names;
    o.ninputs = n;
    o.given = reps;
    o.tracelens_keys = (flags >> 2) & 1;
    unsigned g = runfz_groups[flags >> 5];
    o.run = g;
    o.named = g & ~TL_GROUP_ALL;
    o.fail_pct = (double)runfz_byte(&in) - 128; /* negative: no gate */
    o.min_delta_ms = runfz_byte(&in) / 16.0;
    tl_arena arena;
    tl_arena_init(&arena);
    tl_results extra = {0};
    runfz_extra(&reps[0], &arena, &extra);
    o.extra = extra.n ? &extra : NULL;
    tl_comparison c;
    int st = tl_compare_run(&o, &c);
    TL_FUZZ_CHECK(st == TL_RUN_OK || st == TL_RUN_REGRESSION || st == TL_RUN_FAILED || st == TL_RUN_USAGE);
    if (st == TL_RUN_FAILED || st == TL_RUN_USAGE) {
        TL_FUZZ_CHECK(c.err.msg[0] != '\0' && !strchr(c.err.msg, '\n'));
        TL_FUZZ_CHECK(c.results == NULL && c.summary == NULL);
    } else {
        TL_FUZZ_CHECK(c.results && c.results->n > 0 && c.summary);
        for (size_t i = 0; i < c.results->n; i++) {
            const tl_result *r = &c.results->items[i];
            tl_fuzz_check_table(r->table, 0);
            TL_FUZZ_CHECK(r->nrows == r->table->nrows && r->ncols == r->table->ncols);
        }
        tl_buf b = {0};
        tl_comparison_summary_json(&c, &b);
        tl_comparison_summary_md(&c, &b);
        tl_comparison_summary_text(&c, 1, &b);
        /* the page: whatever the names, one script and a whole document */
        tl_buf page = {0};
        tl_comparison_html(&c, &page);
        TL_FUZZ_CHECK(page.len > 0 && strstr(tl_buf_cstr(&page), "</html>\n"));
        size_t scripts = 0;
        for (const char *p = strstr(page.data, "<script"); p; p = strstr(p + 1, "<script"))
            scripts++;
        TL_FUZZ_CHECK(scripts == 1);
        tl_buf_free(&page);
        tl_gate gate = {runfz_byte(&in) / 8.0, runfz_byte(&in) / 64.0, 0, runfz_byte(&in) / 32.0, runfz_byte(&in) % 5,
                        NULL, 0, runfz_byte(&in) & 1};
        tl_buf_clear(&b);
        int failed = tl_comparison_gate(&c, &gate, &b);
        TL_FUZZ_CHECK(failed == 0 || failed == 1);
        TL_FUZZ_CHECK(!failed || b.len > 0 || c.summary->lca);
        tl_buf_free(&b);
        if (flags & 8) {
            char csvs[300], xlsx[300];
            snprintf(csvs, sizeof csvs, "%s/csvs", runfz_dir);
            snprintf(xlsx, sizeof xlsx, "%s/c.xlsx", runfz_dir);
            tl_error err = {0};
            int rc = tl_comparison_write(&c, (flags & 16) ? xlsx : NULL, csvs, NULL, &err);
            /* a tag can hold '/', which no CSV file name can */
            TL_FUZZ_CHECK(rc == 0 || err.msg[0] != '\0');
            runfz_rm();
        }
    }
    tl_comparison_free(&c);
    for (size_t i = 0; i < extra.n; i++)
        tl_table_free(extra.items[i].table); /* those the run did not take */
    free(extra.items);
    tl_arena_free(&arena);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    return 0;
}

#ifndef TL_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return tl_fuzz_run(data, size); }
#endif
