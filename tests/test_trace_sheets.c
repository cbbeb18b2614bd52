/*
 * test_trace_sheets.c - the report sheets of a trace (TRACES.md §2-§4) on small made-up
 * traces: unions and gpu_timeline, the launchers (execute pass-through, runtime events
 * as launchers, communication kernels), categories, ops_summary's order and sums,
 * ops_unique_args' groups and kernel statistics, kernel_summary's fill-ins and layout;
 * and the pandas/numpy arithmetic underneath (values checked against pandas 1.5.3 and
 * numpy 1.24).
 */
#include "testutil.h"

#include "trace/pdnum.h"
#include "trace/trace.h"
#include "trace/trace_report.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

#define X(cat, name, pid, tid, ts, dur, args) \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" #pid ",\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":" #dur args "}"
#define FLOW(ph, id, pid, tid, ts) \
    "{\"ph\":\"" ph "\",\"id\":" #id ",\"pid\":" #pid ",\"tid\":" #tid ",\"ts\":" #ts ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"
/* a launch with correlation c at ts, its two flows, and its GPU event */
#define LAUNCH(c, ts, gcat, kname, gts, gdur, stream)                                                   \
    X("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, 1, ",\"args\":{\"correlation\":" #c "}") ","      \
    FLOW("s", c, 1, 1, ts) "," FLOW("f", c, 0, stream, gts) ","                                        \
    X(gcat, kname, 0, stream, gts, gdur, ",\"args\":{\"correlation\":" #c ",\"stream\":" #stream "}")

typedef struct sheets {
    tl_trace *t;
    tl_results r;
    tl_arena arena;
} sheets;

static void build(sheets *s, const char *json)
{
    tl_error err = {0};
    memset(s, 0, sizeof *s);
    tl_arena_init(&s->arena);
    s->t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    if (!s->t)
        fail_msg("load: %s", err.msg);
    if (tl_trace_sheets(s->t, &s->arena, &s->r, &err) != 0)
        fail_msg("sheets: %s", err.msg);
}

static void drop(sheets *s)
{
    tl_results_free(&s->r);
    tl_trace_free(s->t);
    tl_arena_free(&s->arena);
}

static const tl_table *sheet(const sheets *s, const char *name)
{
    for (size_t i = 0; i < s->r.n; i++)
        if (strcmp(s->r.items[i].name, name) == 0)
            return s->r.items[i].table;
    return NULL;
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    if (c < 0)
        fail_msg("no column '%s'", col);
    assert_true(row < t->nrows);
    return &t->cols[c].cells[row];
}

static double num(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *c = cell(t, col, row);
    if (c->kind == TL_INT)
        return (double)c->v.i;
    if (c->kind != TL_FLOAT)
        fail_msg("column '%s' row %zu is not a number", col, row);
    return c->v.f;
}

static const char *str(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *c = cell(t, col, row);
    if (c->kind == TL_MISSING)
        return NULL;
    assert_int_equal(c->kind, TL_STR);
    return c->v.s;
}

#define assert_str(got, want)                  \
    do {                                       \
        const char *g_ = (got);                \
        assert_non_null(g_);                   \
        assert_string_equal(g_, (want));       \
    } while (0)

/* ---- the arithmetic -------------------------------------------------------------- */

static void test_pdnum(void **state)
{
    (void)state;
    double a[299];
    for (int i = 1; i < 300; i++)
        a[i - 1] = 0.1 * i + 1e-3 * (i % 7);
    assert_true(tl_np_sum(a, 299) == 4485.897); /* numpy; a left-to-right sum gives 4485.897000000001 */
    double b[17] = {1e16, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_true(tl_np_sum(b, 17) == 1.0000000000000016e+16);
    tl_kahan k = {0};
    tl_welford w = {0};
    for (int i = 0; i < 17; i++) {
        tl_kahan_add(&k, b[i]);
        tl_welford_add(&w, b[i]);
    }
    assert_true(k.sum == 1.0000000000000016e+16); /* pandas' groupby sum */
    assert_true(tl_welford_std(&w) == 2425356250363329.5);
    double c[10] = {0.1, 0.2, 0.3, 1e10, 0.4, 0.5, 1e-10, 0.6, 0.7, 0.8};
    tl_welford w2 = {0};
    for (int i = 0; i < 10; i++)
        tl_welford_add(&w2, c[i]);
    assert_true(tl_welford_std(&w2) == 3162277660.0418878); /* a two-pass std: ...041888 */
    tl_welford one = {0};
    tl_welford_add(&one, 5);
    assert_true(isnan(tl_welford_std(&one)));
    double x[5] = {0.768, 1.057, 0.8, 0.832, 0.8};
    assert_true(tl_np_std(x, 5) == 0.10477327903621225);
    assert_true(tl_np_mean(x, 5) == 0.8513999999999999);
    assert_true(tl_np_median(x, 5) == 0.8);
    assert_true(tl_np_median(x, 4) == 0.8160000000000001);
}

/* sort_values(ascending=False) with its default quicksort: pandas' order, ties included */
static int dbl_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The selection under the medians: the k-th value of a sort, the smaller ones before it,
 * whichever the input's shape, and the same when it gives up choosing pivots and sorts. */
static void test_selection(void **state)
{
    (void)state;
    enum { MAXN = 4097 };
    static double a[MAXN], sorted[MAXN], work[MAXN];
    const size_t sizes[] = {1, 2, 3, 17, 1000, 4096, 4097};
    uint64_t x = 7;
    for (int shape = 0; shape < 6; shape++) {
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005u + 1442695040888963407u;
                double r = (double)(x >> 40);
                a[i] = shape == 0 ? r                                   /* random */
                     : shape == 1 ? (double)(x >> 61)                   /* a few values, many equal */
                     : shape == 2 ? (double)i                           /* ascending */
                     : shape == 3 ? (double)(n - i)                     /* descending */
                     : shape == 4 ? (double)(i < n / 2 ? i : n - i)     /* organ pipe */
                                  : 2.5;                                /* all equal */
            }
            memcpy(sorted, a, n * sizeof *a);
            qsort(sorted, n, sizeof *sorted, dbl_cmp);
            const size_t ks[] = {0, n / 2, n - 1, (size_t)(x % n)};
            const unsigned rounds[] = {0, 1, 3, 1000};
            for (size_t ki = 0; ki < 4; ki++) {
                for (size_t ri = 0; ri < 4; ri++) {
                    size_t k = ks[ki];
                    memcpy(work, a, n * sizeof *a);
                    double got = tl_kth_smallest_within(work, n, k, rounds[ri]);
                    if (got != sorted[k] || work[k] != got)
                        fail_msg("shape %d, n %zu, k %zu, rounds %u: %g, want %g", shape, n, k, rounds[ri], got, sorted[k]);
                    for (size_t i = 0; i < n; i++)
                        if (i < k ? work[i] > got : i > k && work[i] < got)
                            fail_msg("shape %d, n %zu, k %zu, rounds %u: %g at %zu", shape, n, k, rounds[ri], work[i], i);
                }
            }
            double want = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            assert_true(tl_np_median(a, n) == want);
            memcpy(work, a, n * sizeof *a);
            assert_true(tl_kth_smallest(work, n, n / 2) == sorted[n / 2]);
        }
    }
    /* a -0.0 among zeros keeps the sort's answer, sign and all */
    const double z[] = {0.0, -0.0, 0.0, 1.0, -1.0};
    double zs[5];
    memcpy(zs, z, sizeof zs);
    qsort(zs, 5, sizeof *zs, dbl_cmp);
    double m = tl_np_median(z, 5);
    assert_true(m == 0.0 && signbit(m) == signbit(zs[2]));
}

static void test_sort_order(void **state)
{
    (void)state;
    double keys[24] = {3, 1, 3, 2, 3, 1, 2, 2, 3, 1, 1, 2, 3, 3, 1, 2, 2, 1, 3, 2, 1, 1, 3, 2};
    size_t want[24] = {0, 8, 22, 18, 13, 12, 4, 2, 6, 19, 3, 16, 7, 15, 11, 23, 14, 1, 17, 10, 9, 20, 21, 5};
    size_t got[24];
    tl_pd_sort_desc(keys, 24, got);
    for (int i = 0; i < 24; i++)
        assert_int_equal(got[i], want[i]);
    /* 22 keys of three values: one partition step, then insertion sorts of at most 16
     * elements (pandas 1.5.3's order; a cut-off of 17 gives another order of the ties) */
    double k22[22] = {0, 1, 1, 1, 1, 2, 1, 0, 1, 1, 2, 0, 0, 1, 0, 2, 1, 1, 0, 2, 1, 1};
    size_t w22[22] = {15, 19, 5, 10, 21, 9, 13, 1, 8, 17, 20, 6, 4, 3, 2, 16, 18, 0, 14, 12, 7, 11};
    tl_pd_sort_desc(k22, 22, got);
    for (int i = 0; i < 22; i++)
        assert_int_equal(got[i], w22[i]);
    /* a long sorted run takes the partition path and still sorts */
    double *big = malloc(1000 * sizeof *big);
    size_t *o = malloc(1000 * sizeof *o);
    for (int i = 0; i < 1000; i++)
        big[i] = (double)((i * 7919) % 1000);
    tl_pd_sort_desc(big, 1000, o);
    for (int i = 1; i < 1000; i++)
        assert_true(big[o[i - 1]] >= big[o[i]]);
    free(big);
    free(o);
}

/* ---- gpu_timeline ----------------------------------------------------------------- */

static void test_gpu_timeline(void **state)
{
    (void)state;
    sheets s;
    build(&s, "{\"traceEvents\":["
              X("cpu_op", "aten::mm", 1, 1, 0, 100, "") ","
              LAUNCH(1, 1, "kernel", "gemm", 1000, 10, 7) ","                    /* compute 1000-1010 */
              LAUNCH(2, 2, "kernel", "ncclKernel_AllReduce", 1005, 10, 8) ","    /* comm 1005-1015 */
              LAUNCH(3, 3, "gpu_memcpy", "Memcpy HtoD", 1012, 6, 9) ","          /* memcpy 1012-1018 */
              LAUNCH(4, 4, "gpu_memset", "Memset", 1020, 2, 7) ","               /* compute 1020-1022 */
              LAUNCH(5, 5, "kernel", "__amd_rocclr_copyBuffer.kd", 1030, 5, 7) "," /* memcpy 1030-1035 */
              LAUNCH(6, 6, "kernel", "RCCL_allreduce", 1040, 20, 8) ","          /* comm 1040-1060 */
              LAUNCH(7, 7, "kernel", "gemm2", 1050, 2, 7) ","                    /* compute inside it */
              X("kernel", "unlinked", 0, 7, 1100, 50, ",\"args\":{\"stream\":7}") "]}");
    const tl_table *g = sheet(&s, "gpu_timeline");
    assert_non_null(g);
    assert_int_equal(g->nrows, 8);
    static const char *const types[8] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
                                         "idle_time", "total_time", "total_comm_time", "total_memcpy_time"};
    double want_us[8] = {14, 23, 8, 45, 15, 60, 30, 11};
    for (size_t r = 0; r < 8; r++) {
        assert_str(str(g, "type", r), types[r]);
        assert_true(fabs(num(g, "time ms", r) - want_us[r] / 1e3) < 1e-12);
        assert_true(fabs(num(g, "percent", r) - want_us[r] / 60 * 100) < 1e-9);
    }
    assert_true(num(g, "percent", 5) == 100.0);
    drop(&s);
}

static void test_no_gpu_events(void **state)
{
    (void)state;
    const char *json = "{\"traceEvents\":[" X("cpu_op", "a", 1, 1, 0, 1, "") ","
                       X("kernel", "k", 0, 7, 10, 1, ",\"args\":{\"correlation\":9}") "]}";
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    assert_non_null(t);
    tl_results r = {0};
    tl_arena a;
    tl_arena_init(&a);
    assert_int_equal(tl_trace_sheets(t, &a, &r, &err), -1);
    /* what is missing, and what the trace holds instead */
    assert_string_equal(err.msg, "t.json: its one GPU event is not linked to a launch, so there is no GPU timeline "
                                 "to report: it has no cuda_runtime or cuda_driver event to launch them; the trace "
                                 "holds 1 cpu_op, 1 kernel (--include_unlinked_kernels reports its GPU events without "
                                 "their launches)");
    assert_int_equal(r.n, 0);
    tl_trace_free(t);
    tl_arena_free(&a);
}

/* ---- launchers and the op sheets -------------------------------------------------- */

static const char *ops_trace =
    "{\"traceEvents\":["
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"python3\"}},"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}},"
    /* aten::mm twice with the same args, once with others; each launches two kernels */
    X("cpu_op", "aten::mm", 1, 1, 0, 10, ",\"args\":{\"Input Dims\":[[2,3]],\"Input type\":[\"float\"]}") ","
    LAUNCH(1, 1, "kernel", "gemm_a", 100, 4, 7) ","
    LAUNCH(2, 2, "kernel", "gemm_b", 102, 4, 7) ","                       /* overlaps: direct = union 6 */
    X("cpu_op", "aten::mm", 1, 1, 20, 10, ",\"args\":{\"Input Dims\":[[2,3]],\"Input type\":[\"float\"]}") ","
    LAUNCH(3, 21, "kernel", "gemm_a", 110, 2, 7) ","
    LAUNCH(4, 22, "kernel", "gemm_b", 113, 1, 7) ","
    X("cpu_op", "aten::mm", 1, 1, 40, 10, ",\"args\":{\"Input Dims\":[[4,4]],\"Input type\":[\"float\"]}") ","
    LAUNCH(5, 41, "kernel", "gemm_c", 120, 9, 7) ","
    /* an op under `execute`: the op is the launcher; an nccl kernel counts in its subtree only */
    X("cpu_op", "myconv", 1, 1, 60, 20, "") ","
    X("cpu_op", "execute", 1, 1, 61, 10, "") ","
    LAUNCH(6, 62, "kernel", "void at::native::vectorized_elementwise_kernel<4>", 130, 3, 7) ","
    LAUNCH(7, 63, "kernel", "ncclDevKernel", 140, 5, 8) ","
    /* a runtime call with no op above: the launcher itself */
    LAUNCH(8, 90, "kernel", "orphan", 150, 2, 7) ","
    /* triton */
    X("cpu_op", "triton_poi_fused_0", 1, 1, 95, 3, "") ","
    LAUNCH(9, 96, "kernel", "triton_poi_fused_0", 160, 1, 7) "]}";

static void test_ops_summary(void **state)
{
    (void)state;
    sheets s;
    build(&s, ops_trace);
    const tl_table *o = sheet(&s, "ops_summary");
    assert_non_null(o);
    assert_int_equal(o->nrows, 4);
    /* aten::mm: 6 + 3 (gemm_a 110-112, gemm_b 113-114) + 9 = 18 */
    assert_str(str(o, "name", 0), "aten::mm");
    assert_true(num(o, "total_direct_kernel_time_sum", 0) == 18);
    assert_true(num(o, "Count", 0) == 3);
    assert_str(str(o, "Categories", 0), "['GEMM']");
    assert_str(str(o, "name", 1), "myconv");
    assert_true(num(o, "total_direct_kernel_time_sum", 1) == 3);
    assert_true(num(o, "total_subtree_kernel_time_sum", 1) == 8); /* with the nccl kernel */
    assert_str(str(o, "Categories", 1), "['elementwise']");
    assert_str(str(o, "name", 2), "cudaLaunchKernel");
    assert_str(str(o, "Categories", 2), "['other']");
    assert_str(str(o, "name", 3), "triton_poi_fused_0");
    assert_str(str(o, "Categories", 3), "['triton']");
    assert_true(fabs(num(o, "Percentage (%)", 0) - 18.0 / 24 * 100) < 1e-9);
    assert_true(fabs(num(o, "Cumulative Percentage (%)", 3) - 100) < 1e-9);
    assert_true(num(o, "total_direct_kernel_time_ms", 0) == 0.018);

    const tl_table *c = sheet(&s, "ops_summary_by_category");
    assert_non_null(c);
    assert_str(str(c, "op category", 0), "GEMM");
    assert_true(num(c, "Count", 0) == 3);
    assert_int_equal(c->ncols, 5);
    assert_int_equal(tl_table_find(c, "total_direct_kernel_time_sum"), -1);
    drop(&s);
}

static void test_ops_unique_args(void **state)
{
    (void)state;
    sheets s;
    build(&s, ops_trace);
    const tl_table *u = sheet(&s, "ops_unique_args");
    assert_non_null(u);
    assert_int_equal(u->nrows, 5);
    assert_int_equal(u->ncols, 27);
    /* by direct sum: mm (2,3) 6+3, mm (4,4) 9 (ex_UID breaks the tie: the earlier first) */
    assert_str(str(u, "name", 0), "aten::mm");
    assert_str(str(u, "Input Dims", 0), "((2, 3),)");
    assert_str(str(u, "Input type", 0), "('float',)");
    assert_null(str(u, "Input Strides", 0));
    assert_str(str(u, "process_name", 0), "python3");
    assert_str(str(u, "process_label", 0), "Unknown");
    assert_str(str(u, "thread_name", 0), "main");
    assert_true(num(u, "operation_count", 0) == 2);
    assert_true(num(u, "total_direct_kernel_time_sum", 0) == 9);
    assert_true(num(u, "total_direct_kernel_time_mean", 0) == 4.5);
    assert_true(num(u, "total_direct_kernel_time_median", 0) == 4.5);
    assert_true(fabs(num(u, "total_direct_kernel_time_std", 0) - sqrt(4.5)) < 1e-12);
    assert_true(num(u, "total_direct_kernel_time_min", 0) == 3);
    assert_true(num(u, "total_direct_kernel_time_max", 0) == 6);
    assert_true(num(u, "ex_UID", 0) == 2);
    /* per kernel position, sorted by (total, name): gemm_b's 5 before gemm_a's 6; the
     * times are JSON integers, so total, min and max are ints (TRACES.md §4.6) */
    assert_str(str(u, "kernel_details_summary", 0),
               "[{'name': 'gemm_b', 'stream': 7, 'count': 2, 'total_duration_us': 5, 'mean_duration_us': 2.5, "
               "'median_duration_us': 2.5, 'std_dev_duration_us': 1.5, 'min_duration_us': 1, 'max_duration_us': 4}, "
               "{'name': 'gemm_a', 'stream': 7, 'count': 2, 'total_duration_us': 6, 'mean_duration_us': 3.0, "
               "'median_duration_us': 3.0, 'std_dev_duration_us': 1.0, 'min_duration_us': 2, 'max_duration_us': 4}]");
    drop(&s);
}

/* An op launched from thread tid at ts: its launch (correlation c) at t1, that launch's
 * kernel at tk. */
#define OP_ON(tid, ts, t1, tk, c)                                                                        \
    X("cpu_op", "aten::mm", 1, tid, ts, 10, ",\"args\":{\"Input Dims\":[[2, 3]]}") ","                  \
    X("cuda_runtime", "cudaLaunchKernel", 1, tid, t1, 1, ",\"args\":{\"correlation\":" #c "}") ","     \
    FLOW("s", c, 1, tid, t1) "," FLOW("f", c, 0, 7, tk) ","                                              \
    X("kernel", "gemm", 0, 7, tk, 2, ",\"args\":{\"correlation\":" #c ",\"stream\":7}")
#define THREAD_NAME(tid, nm) "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" #tid ",\"args\":{\"name\":\"" nm "\"}}"

/* ops_unique_args groups by the thread's name, not by the thread: the same op on two
 * threads of one name is one row, on a thread of another name a row of its own. */
static void test_ops_unique_args_threads(void **state)
{
    (void)state;
    sheets s;
    build(&s, "{\"traceEvents\":[" THREAD_NAME(1, "main") "," THREAD_NAME(2, "main") "," THREAD_NAME(3, "worker") ","
              OP_ON(1, 100, 101, 105, 1) "," OP_ON(3, 200, 201, 205, 2) "," OP_ON(2, 300, 301, 305, 3) ","
              OP_ON(1, 400, 401, 405, 4) "]}");
    const tl_table *u = sheet(&s, "ops_unique_args");
    assert_non_null(u);
    assert_int_equal(u->nrows, 2);
    assert_str(str(u, "thread_name", 0), "main");
    assert_true(num(u, "operation_count", 0) == 3);
    assert_true(num(u, "ex_UID", 0) == 3);
    assert_str(str(u, "thread_name", 1), "worker");
    assert_true(num(u, "operation_count", 1) == 1);
    drop(&s);
}

/* trunc_kernel_details, a one-row group, the rest of the order */
static void test_kernel_details_order(void **state)
{
    (void)state;
    sheets s;
    build(&s, ops_trace);
    const tl_table *u = sheet(&s, "ops_unique_args");
    assert_str(str(u, "trunc_kernel_details", 0),
               "[{'name': 'gemm_b', 'stream': 7, 'mean_duration_us': 2.5}, {'name': 'gemm_a', 'stream': 7, "
               "'mean_duration_us': 3.0}]");
    /* the second row: one launch, std empty */
    assert_true(num(u, "total_direct_kernel_time_sum", 1) == 9);
    assert_true(num(u, "ex_UID", 1) == 20);
    assert_int_equal(cell(u, "total_direct_kernel_time_std", 1)->kind, TL_MISSING);
    /* the elementwise op's long kernel name, cut at 64 characters */
    size_t r = 2;
    assert_str(str(u, "name", r), "myconv");
    assert_str(str(u, "op category", r), "elementwise");
    assert_str(str(u, "trunc_kernel_details", r),
               "[{'name': 'void at::native::vectorized_elementwise_kernel<4>', 'stream': 7, 'mean_duration_us': 3.0}]");
    assert_str(str(u, "name", 3), "cudaLaunchKernel");
    assert_null(str(u, "Input Dims", 3));
    assert_str(str(u, "name", 4), "triton_poi_fused_0");
    drop(&s);
}

/* Rows whose kernel list differs in length from the group's first are left out of the
 * per-kernel statistics (TraceLens warns and skips them). */
static void test_kernel_details_skip(void **state)
{
    (void)state;
    sheets s;
    build(&s, "{\"traceEvents\":["
              X("cpu_op", "aten::add", 1, 1, 0, 10, "") ","
              LAUNCH(1, 1, "kernel", "k1", 100, 4, 7) ","
              X("cpu_op", "aten::add", 1, 1, 20, 10, "") ","
              LAUNCH(2, 21, "kernel", "k1", 110, 2, 7) ","
              LAUNCH(3, 22, "kernel", "k2", 113, 1, 7) "]}");
    const tl_table *u = sheet(&s, "ops_unique_args");
    assert_int_equal(u->nrows, 1);
    assert_true(num(u, "operation_count", 0) == 2);
    assert_str(str(u, "kernel_details_summary", 0),
               "[{'name': 'k1', 'stream': 7, 'count': 1, 'total_duration_us': 4, 'mean_duration_us': 4.0, "
               "'median_duration_us': 4.0, 'std_dev_duration_us': 0.0, 'min_duration_us': 4, 'max_duration_us': 4}]");
    drop(&s);
}

/* ---- kernel_summary -------------------------------------------------------------- */

static void test_kernel_summary(void **state)
{
    (void)state;
    sheets s;
    build(&s, "{\"traceEvents\":["
              X("cpu_op", "aten::mm", 1, 1, 0, 10, "") ","
              LAUNCH(1, 1, "kernel", "gemm", 100, 4, 7) ","
              LAUNCH(2, 2, "kernel", "gemm", 110, 2, 7) ","
              LAUNCH(3, 20, "kernel", "lone", 120, 3, 7) ","                   /* no op: category runtime */
              X("cuda_runtime", "cudaGraphLaunch", 1, 1, 30, 1, ",\"args\":{\"correlation\":50}") ","
              X("kernel", "g", 0, 7, 130, 5, ",\"args\":{\"correlation\":50,\"stream\":7}") "," /* graph */
              X("kernel", "before", 0, 7, 10, 8, ",\"args\":{\"stream\":7}") ","           /* unlinked */
              LAUNCH(4, 3, "gpu_memcpy", "Memcpy", 140, 1, 7) "]}");
    const tl_table *k = sheet(&s, "kernel_summary");
    assert_non_null(k);
    assert_int_equal(k->ncols, 11);
    assert_int_equal(k->nrows, 4); /* memcpy excluded; the two gemm rows are one group */
    /* by sum: the unlinked kernel (8), GEMM (6), graph (5), runtime (3) */
    assert_null(str(k, "Parent op category", 0));
    assert_null(str(k, "Parent cpu_op", 0));
    assert_str(str(k, "Kernel name", 0), "before");
    assert_str(str(k, "Parent op category", 1), "GEMM");
    assert_str(str(k, "Parent cpu_op", 1), "aten::mm");
    assert_true(num(k, "Kernel duration (\xc2\xb5s)_sum", 1) == 6);
    assert_true(num(k, "Kernel duration (\xc2\xb5s)_count", 1) == 2);
    assert_int_equal(cell(k, "Kernel duration (\xc2\xb5s)_count", 1)->kind, TL_INT);
    assert_true(num(k, "Kernel duration (\xc2\xb5s)_mean", 1) == 3);
    assert_true(num(k, "Kernel duration (\xc2\xb5s)_min", 1) == 2);
    assert_true(num(k, "Kernel duration (\xc2\xb5s)_max", 1) == 4);
    assert_str(str(k, "Parent op category", 2), "graph");
    assert_str(str(k, "Parent cpu_op", 2), "cudaGraphLaunch");
    assert_str(str(k, "Parent op category", 3), "runtime");
    assert_str(str(k, "Parent cpu_op", 3), "cudaLaunchKernel");
    assert_int_equal(cell(k, "Kernel stream", 3)->kind, TL_INT);
    assert_true(num(k, "Percent of kernels time (%)", 0) == 8.0 / 22 * 100);
    assert_true(num(k, "Percent of total time (%)", 0) == 8.0 / 41 * 100);
    drop(&s);
}

/* A trace without cpu_ops: gpu_timeline and kernel_summary only, no Parent cpu_op
 * column; a kernel without a stream makes the stream column float. */
static void test_gpu_only(void **state)
{
    (void)state;
    sheets s;
    build(&s, "{\"traceEvents\":["
              LAUNCH(1, 1, "kernel", "k", 100, 4, 7) ","
              X("cuda_runtime", "cudaLaunchKernel", 1, 1, 5, 1, ",\"args\":{\"correlation\":2}") ","
              FLOW("s", 2, 1, 1, 5) "," FLOW("f", 2, 0, 9, 110) ","
              X("kernel", "nostream", 0, 9, 110, 2, ",\"args\":{\"correlation\":2}") "]}");
    assert_int_equal(s.r.n, 2);
    assert_string_equal(s.r.items[0].name, "gpu_timeline");
    assert_string_equal(s.r.items[1].name, "kernel_summary");
    const tl_table *k = s.r.items[1].table;
    assert_int_equal(tl_table_find(k, "Parent cpu_op"), -1);
    assert_int_equal(k->ncols, 10);
    assert_str(str(k, "Parent op category", 0), "runtime");
    assert_str(str(k, "Kernel name", 0), "k");
    assert_int_equal(cell(k, "Kernel stream", 0)->kind, TL_FLOAT);
    assert_int_equal(cell(k, "Kernel stream", 1)->kind, TL_MISSING);
    drop(&s);
}

/* A trace as a report: the sheets read back through the CSV typing. */
static void test_as_report(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/r.json", dir);
    tt_write_file(path, ops_trace, strlen(ops_trace));
    tl_report r;
    tl_error err = {0};
    assert_int_equal(tl_trace_report_open(&r, path, &err), 0);
    assert_string_equal(r.kind, "trace");
    assert_non_null(tl_trace_report_trace(&r));
    assert_true(tl_report_has_sheet(&r, "ops_summary"));
    assert_false(tl_report_has_sheet(&r, "GEMM"));
    tl_table *t = tl_report_read_sheet(&r, "ops_summary", &r.arena, &err);
    assert_non_null(t);
    assert_int_equal(t->nrows, 4);
    long c = tl_table_find(t, "Count");
    assert_true(c >= 0);
    assert_int_equal(t->cols[c].cells[0].kind, TL_INT);
    assert_int_equal(t->cols[c].type, TL_COL_NUM);
    tl_table_free(t);
    assert_null(tl_report_read_sheet(&r, "GEMM", &r.arena, &err));
    tl_report_close(&r);
    /* a bad trace: opening starts the load; waiting gives its one-line error */
    snprintf(path, sizeof path, "%s/bad.json", dir);
    tt_write_file(path, "{\"traceEvents\":[1]}", 19);
    memset(&err, 0, sizeof err);
    assert_int_equal(tl_trace_report_open(&r, path, &err), 0);
    assert_int_equal(tl_trace_report_wait(&r, &err), -1);
    assert_non_null(strstr(err.msg, "bad.json: not a valid trace: an event that is not an object"));
    assert_false(tl_report_has_sheet(&r, "gpu_timeline"));
    assert_null(tl_trace_report_trace(&r));
    tl_report_close(&r);
    tl_report dummy;
    tl_report_init(&dummy, "x");
    assert_int_equal(tl_trace_report_wait(&dummy, &err), 0);
    assert_null(tl_trace_report_trace(&dummy));
    tl_report_close(&dummy);
    tt_rmrf(dir);
    free(dir);
}

/* The sheets' builder of the test below: it holds until the test lets it go. */
typedef struct held_build {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int entered, go, gave_up;
} held_build;

static int held_sheets(const tl_trace *t, void *ctx, tl_arena *arena, tl_results *out, tl_error *err)
{
    held_build *h = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5; /* a report that waited for its sheets would never let it go */
    pthread_mutex_lock(&h->mu);
    h->entered = 1;
    pthread_cond_broadcast(&h->cv);
    while (!h->go && !h->gave_up)
        h->gave_up = pthread_cond_timedwait(&h->cv, &h->mu, &until) != 0;
    pthread_mutex_unlock(&h->mu);
    return tl_trace_sheets(t, arena, out, err);
}

/* A trace's report gives its trace once loaded, while its sheets are still in the
 * making (the alignment of two traces starts there); a trace that fails to load gives
 * none, and waiting says why. */
static void test_loaded_before_the_sheets(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/r.json", dir);
    tt_write_file(path, ops_trace, strlen(ops_trace));
    held_build h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    tl_report r;
    tl_error err = {0};
    assert_int_equal(tl_trace_report_open_with(&r, path, held_sheets, &h, &err), 0);
    tl_trace *t = tl_trace_report_loaded(&r);
    assert_non_null(t);
    assert_true(t->nev > 0);
    pthread_mutex_lock(&h.mu);
    assert_false(h.gave_up);
    while (!h.entered)
        pthread_cond_wait(&h.cv, &h.mu); /* the builder is at work on it, held */
    h.go = 1;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    assert_int_equal(tl_trace_report_wait(&r, &err), 0);
    assert_ptr_equal(tl_trace_report_trace(&r), t);
    assert_true(tl_report_has_sheet(&r, "ops_summary"));
    tl_report_close(&r);

    snprintf(path, sizeof path, "%s/bad.json", dir);
    tt_write_file(path, "{\"traceEvents\":[1]}", 19);
    assert_int_equal(tl_trace_report_open(&r, path, &err), 0);
    assert_null(tl_trace_report_loaded(&r));
    assert_int_equal(tl_trace_report_wait(&r, &err), -1);
    assert_non_null(strstr(err.msg, "an event that is not an object"));
    tl_report_close(&r);
    tl_report dummy;
    tl_report_init(&dummy, "x");
    assert_null(tl_trace_report_loaded(&dummy));
    tl_report_close(&dummy);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdnum),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_sort_order),
        cmocka_unit_test(test_gpu_timeline),
        cmocka_unit_test(test_no_gpu_events),
        cmocka_unit_test(test_ops_summary),
        cmocka_unit_test(test_ops_unique_args),
        cmocka_unit_test(test_ops_unique_args_threads),
        cmocka_unit_test(test_kernel_details_order),
        cmocka_unit_test(test_kernel_details_skip),
        cmocka_unit_test(test_kernel_summary),
        cmocka_unit_test(test_gpu_only),
        cmocka_unit_test(test_as_report),
        cmocka_unit_test(test_loaded_before_the_sheets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
