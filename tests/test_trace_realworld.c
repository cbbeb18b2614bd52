/*
 * test_trace_realworld.c - what traces from outside the team's own set bring
 * (TRACES.md §4.6, §8): times written as JSON integers print as integers exactly where
 * the reference's columns are int64, older Kineto's async_cpu_to_gpu launch flows link
 * like ac2g (and only when the trace has no ac2g flow), refusals name what a trace holds,
 * and a time beyond 64 bits is read as the double it is.
 */
#include "testutil.h"

#include "perf/perf.h"
#include "trace/trace.h"
#include "trace/trace_report.h"

#include <math.h>

/* One complete event; ts and dur are spliced in as written (so "6" and "6.0" differ). */
#define X(cat, name, pid, tid, ts, dur, args)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" #pid ",\"tid\":" #tid ",\"ts\":" ts         \
    ",\"dur\":" dur args "}"
#define FLOWC(cat, ph, id, pid, tid, ts)                                                                               \
    "{\"ph\":\"" ph "\",\"id\":" #id ",\"pid\":" #pid ",\"tid\":" #tid ",\"ts\":" #ts ",\"cat\":\"" cat              \
    "\",\"name\":\"" cat "\",\"bp\":\"e\"}"
#define RT(c, ts) X("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, "1", ",\"args\":{\"correlation\":" #c "}")
#define KERNEL(c, name, ts, dur) X("kernel", name, 0, 7, ts, dur, ",\"args\":{\"correlation\":" #c ",\"stream\":7}")
#define MM_ARGS ",\"args\":{\"Input Dims\":[[16,32],[32,64]],\"Input type\":[\"float\",\"float\"]}"

/* Two aten::mm calls, each launching one kernel through ac2g flows; the times of the
 * second kernel and of the first op are the parameters, as written. */
#define TWO_MM(op_dur, k2_ts, k2_dur)                                                                                  \
    "{\"traceEvents\":["                                                                                               \
    X("cpu_op", "aten::mm", 1, 1, "0", op_dur, MM_ARGS) "," RT(1, "2") "," FLOWC("ac2g", "s", 1, 1, 1, 2) ","          \
    FLOWC("ac2g", "f", 1, 0, 7, 10) "," KERNEL(1, "gemm", "10", "4") ","                                              \
    X("cpu_op", "aten::mm", 1, 1, "20", "100", MM_ARGS) "," RT(2, "22") "," FLOWC("ac2g", "s", 2, 1, 1, 22) ","      \
    FLOWC("ac2g", "f", 2, 0, 7, 30) "," KERNEL(2, "gemm", k2_ts, k2_dur) "]}"

typedef struct rep {
    tl_trace *t;
    tl_results r;
    tl_arena arena;
} rep;

static void build(rep *s, const char *json)
{
    tl_error err = {0};
    memset(s, 0, sizeof *s);
    tl_arena_init(&s->arena);
    s->t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    if (!s->t)
        fail_msg("load: %s", err.msg);
    if (tl_perf_report_sheets(s->t, NULL, &s->arena, &s->r, &err) != 0)
        fail_msg("sheets: %s", err.msg);
}

static void drop(rep *s)
{
    tl_results_free(&s->r);
    tl_trace_free(s->t);
    tl_arena_free(&s->arena);
}

static const tl_cell *cell(const rep *s, const char *sheet, const char *col, size_t row)
{
    for (size_t i = 0; i < s->r.n; i++) {
        if (strcmp(s->r.items[i].name, sheet) != 0)
            continue;
        const tl_table *t = s->r.items[i].table;
        long c = tl_table_find(t, col);
        if (c < 0)
            fail_msg("%s: no column '%s'", sheet, col);
        assert_true(row < t->nrows);
        return &t->cols[c].cells[row];
    }
    fail_msg("no sheet '%s'", sheet);
    return NULL;
}

/* The cell is an int of value v (int64 in pandas), or a float of value v. */
static void want_int(const rep *s, const char *sheet, const char *col, int64_t v)
{
    const tl_cell *c = cell(s, sheet, col, 0);
    if (c->kind != TL_INT || c->v.i != v)
        fail_msg("%s '%s': want the int %lld, got kind %d (%g)", sheet, col, (long long)v, c->kind,
                 c->kind == TL_FLOAT ? c->v.f : (double)c->v.i);
}
static void want_float(const rep *s, const char *sheet, const char *col, double v)
{
    const tl_cell *c = cell(s, sheet, col, 0);
    if (c->kind != TL_FLOAT || c->v.f != v)
        fail_msg("%s '%s': want the float %g, got kind %d", sheet, col, v, c->kind);
}
static void want_text(const rep *s, const char *sheet, const char *col, const char *part)
{
    const tl_cell *c = cell(s, sheet, col, 0);
    assert_int_equal(c->kind, TL_STR);
    if (!strstr(c->v.s, part))
        fail_msg("%s '%s': '%s' not in %s", sheet, col, part, c->v.s);
}

#define US "(\xc2\xb5s)"

/* Every time an integer: the columns of §4.6 are ints, means and medians floats. */
static void test_int_times(void **state)
{
    (void)state;
    rep s;
    build(&s, TWO_MM("10", "30", "6"));
    want_int(&s, "kernel_summary", "Kernel duration " US "_sum", 10);
    want_int(&s, "kernel_summary", "Kernel duration " US "_min", 4);
    want_int(&s, "kernel_summary", "Kernel duration " US "_max", 6);
    want_float(&s, "kernel_summary", "Kernel duration " US "_mean", 5.0);
    want_int(&s, "ops_summary", "total_direct_kernel_time_sum", 10);
    want_int(&s, "ops_summary", "total_subtree_kernel_time_sum", 10);
    want_float(&s, "ops_summary", "total_direct_kernel_time_ms", 0.01);
    want_int(&s, "ops_unique_args", "total_direct_kernel_time_min", 4);
    want_int(&s, "ops_unique_args", "total_subtree_kernel_time_max", 6);
    want_float(&s, "ops_unique_args", "total_direct_kernel_time_mean", 5.0);
    want_text(&s, "ops_unique_args", "kernel_details_summary",
              "'count': 2, 'total_duration_us': 10, 'mean_duration_us': 5.0, 'median_duration_us': 5.0, "
              "'std_dev_duration_us': 1.0, 'min_duration_us': 4, 'max_duration_us': 6}");
    want_int(&s, "unified_perf_summary", "total_duration_us", 110);
    want_int(&s, "unified_perf_summary", "duration_us_min", 10);
    want_int(&s, "unified_perf_summary", "duration_us_max", 100);
    want_float(&s, "unified_perf_summary", "duration_us_median", 55.0);
    want_int(&s, "unified_perf_summary", "Kernel Time " US "_sum", 10);
    want_int(&s, "unified_perf_summary", "Kernel Time " US "_max", 6);
    want_float(&s, "unified_perf_summary", "Kernel Time " US "_mean", 5.0);
    want_int(&s, "GEMM", "Kernel Time " US "_sum", 10);
    want_int(&s, "GEMM", "Kernel Time " US "_min", 4);
    want_float(&s, "GEMM", "Kernel Time " US "_median", 5.0);
    want_text(&s, "GEMM", "kernel_details__summarize_kernel_stats", "'total_duration_us': 10, ");
    drop(&s);
}

/* One float among the inputs turns its columns float, and only those. */
static void test_mixed_times(void **state)
{
    (void)state;
    rep s;
    /* a kernel's dur written "6.0": every kernel-duration column is float */
    build(&s, TWO_MM("10", "30", "6.0"));
    want_float(&s, "kernel_summary", "Kernel duration " US "_sum", 10.0);
    want_float(&s, "kernel_summary", "Kernel duration " US "_min", 4.0);
    want_float(&s, "ops_summary", "total_direct_kernel_time_sum", 10.0);
    want_float(&s, "unified_perf_summary", "Kernel Time " US "_sum", 10.0);
    want_text(&s, "ops_unique_args", "kernel_details_summary", "'total_duration_us': 10.0, ");
    want_text(&s, "ops_unique_args", "kernel_details_summary", "'min_duration_us': 4.0, 'max_duration_us': 6.0}");
    want_text(&s, "GEMM", "kernel_details__summarize_kernel_stats", "'total_duration_us': 10.0, ");
    want_int(&s, "unified_perf_summary", "total_duration_us", 110); /* the ops' own durations are all ints */
    drop(&s);

    /* a kernel's ts written "30.0": busy times are float, durations stay ints */
    build(&s, TWO_MM("10", "30.0", "6"));
    want_int(&s, "kernel_summary", "Kernel duration " US "_sum", 10);
    want_float(&s, "ops_summary", "total_direct_kernel_time_sum", 10.0);
    want_float(&s, "ops_unique_args", "total_direct_kernel_time_max", 6.0);
    want_float(&s, "unified_perf_summary", "Kernel Time " US "_sum", 10.0);
    want_float(&s, "GEMM", "Kernel Time " US "_sum", 10.0);
    want_text(&s, "ops_unique_args", "kernel_details_summary", "'total_duration_us': 10, ");
    drop(&s);

    /* an op's dur written "10.5": its duration columns are float, kernel times ints */
    build(&s, TWO_MM("10.5", "30", "6"));
    want_float(&s, "unified_perf_summary", "total_duration_us", 110.5);
    want_float(&s, "unified_perf_summary", "duration_us_min", 10.5);
    want_int(&s, "unified_perf_summary", "Kernel Time " US "_sum", 10);
    want_int(&s, "kernel_summary", "Kernel duration " US "_sum", 10);
    drop(&s);
}

/* A trace whose launches only older Kineto's flows link (TRACES.md §8). */
#define OLD_FLOWS_ONLY                                                                                                 \
    "{\"traceEvents\":["                                                                                               \
    X("cpu_op", "aten::mm", 1, 1, "0", "10", MM_ARGS) "," RT(1, "2") ","                                               \
    FLOWC("async_cpu_to_gpu", "s", 1, 1, 1, 2) "," FLOWC("async_cpu_to_gpu", "f", 1, 0, 7, 10) ","                    \
    FLOWC("async_cpu_to_gpu", "f", 77, 1, 1, 3) "," /* a finish without a start, on the host */                      \
    KERNEL(1, "gemm", "10", "4") "]}"

static void test_old_flows(void **state)
{
    (void)state;
    rep s;
    build(&s, OLD_FLOWS_ONLY);
    assert_int_equal(s.t->link_flows, TL_CAT_OLD_FLOW);
    assert_int_equal(s.t->census.n[TL_CAT_OLD_FLOW], 3);
    assert_int_equal(s.t->census.n[TL_CAT_AC2G], 0);
    const tl_tev *k = &s.t->ev[s.t->nev - 1];
    assert_true(k->kind == TL_TEV_KERNEL && (k->flags & TL_TEV_LINKED));
    assert_string_equal(s.t->ev[k->parent].name, "cudaLaunchKernel");
    want_int(&s, "ops_summary", "total_direct_kernel_time_sum", 4);
    drop(&s);
}

/* Both kinds in one trace: ac2g alone links.  Kernel 1 has a flow of each kind (linked
 * once), kernel 2 only an old one (not linked). */
static void test_both_flow_kinds(void **state)
{
    (void)state;
    static const char json[] =
        "{\"traceEvents\":["
        X("cpu_op", "aten::mm", 1, 1, "0", "10", MM_ARGS) "," RT(1, "2") ","
        FLOWC("ac2g", "s", 1, 1, 1, 2) "," FLOWC("ac2g", "f", 1, 0, 7, 10) ","
        FLOWC("async_cpu_to_gpu", "s", 1, 1, 1, 2) "," FLOWC("async_cpu_to_gpu", "f", 1, 0, 7, 10) ","
        KERNEL(1, "gemm", "10", "4") ","
        X("cpu_op", "aten::mm", 1, 1, "20", "10", MM_ARGS) "," RT(2, "22") ","
        FLOWC("async_cpu_to_gpu", "s", 2, 1, 1, 22) "," FLOWC("async_cpu_to_gpu", "f", 2, 0, 7, 30) ","
        KERNEL(2, "gemm", "30", "6") "]}";
    rep s;
    build(&s, json);
    assert_int_equal(s.t->link_flows, TL_CAT_AC2G);
    int linked = 0;
    for (size_t i = 0; i < s.t->nev; i++) {
        const tl_tev *e = &s.t->ev[i];
        if (e->kind == TL_TEV_KERNEL && (e->flags & TL_TEV_LINKED)) {
            linked++;
            assert_int_equal(e->dur, 4);
        }
        if (e->kind == TL_TEV_RUNTIME)
            assert_int_equal(e->ngpu, e->ts == 2 ? 1 : 0);
    }
    assert_int_equal(linked, 1);
    want_int(&s, "ops_summary", "total_direct_kernel_time_sum", 4);
    drop(&s);
}

static void refusal(const char *json, const char *want)
{
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    if (!t)
        fail_msg("load: %s", err.msg);
    tl_results r = {0};
    tl_arena a;
    tl_arena_init(&a);
    assert_int_equal(tl_trace_sheets(t, &a, &r, &err), -1);
    assert_int_equal(r.n, 0);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got:  %s\nwant: %s", err.msg, want);
    tl_trace_free(t);
    tl_arena_free(&a);
}

/* A refusal says what is missing and what the trace holds. */
static void test_refusals(void **state)
{
    (void)state;
    refusal("{\"traceEvents\":[" X("cpu_op", "aten::mm", 1, 1, "0", "10", "") "," RT(1, "2") ","
            KERNEL(1, "gemm", "10", "4") "," KERNEL(2, "gemm", "20", "4") "]}",
            "t.json: none of its 2 GPU events is linked to a launch, so there is no GPU timeline to report: it has "
            "no launch flows (ac2g, or older Kineto's async_cpu_to_gpu) to link its launches by; the trace holds "
            "2 kernel, 1 cpu_op, 1 cuda_runtime (--include_unlinked_kernels reports its GPU events without their "
            "launches)");
    /* flows whose ids are no launch's correlation */
    refusal("{\"traceEvents\":[" RT(1, "2") "," FLOWC("async_cpu_to_gpu", "s", 5, 1, 1, 2) ","
            FLOWC("async_cpu_to_gpu", "f", 5, 0, 7, 10) "," KERNEL(1, "gemm", "10", "4") "]}",
            "t.json: its one GPU event is not linked to a launch, so there is no GPU timeline to report: no launch "
            "flow (async_cpu_to_gpu) both starts at one of its 1 launch calls' correlation and ends on a GPU event; "
            "the trace holds 2 async_cpu_to_gpu, 1 cuda_runtime, 1 kernel (--include_unlinked_kernels reports its "
            "GPU events without their launches)");
    /* an MTIA-like trace: other categories, named */
    refusal("{\"traceEvents\":[" X("mtia_ccp_events", "k", 1, 1, "0", "1", "") ","
            X("mtia_ccp_events", "k", 1, 1, "2", "1", "") "," X("user_annotation", "ProfilerStep#1", 1, 2, "0", "9", "")
            ",{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}}]}",
            "t.json: no GPU events (kernel, gpu_memcpy, gpu_memset), so there is no GPU timeline to report; the "
            "trace holds 2 mtia_ccp_events, 1 user_annotation");
}

/* The census: counts by category, the largest first, the rest summed up past `max`. */
static void test_census_text(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_error err = {0};
    static const char json[] = "{\"traceEvents\":[" X("a", "x", 1, 1, "0", "1", "") "," X("b", "x", 1, 1, "0", "1", "")
        "," X("b", "x", 1, 1, "0", "1", "") "," X("kernel", "k", 0, 7, "0", "1", "") ","
        X("python_function", "f", 1, 1, "0", "1", "") "]}";
    tl_trace *t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    assert_non_null(t);
    tl_trace_census_text(t, &b, 8);
    assert_string_equal(tl_buf_cstr(&b), "2 b, 1 kernel, 1 python_function, 1 a");
    tl_buf_clear(&b);
    tl_trace_census_text(t, &b, 1);
    assert_string_equal(tl_buf_cstr(&b), "2 b, 3 of other categories");
    tl_buf_free(&b);
    tl_trace_free(t);
}

/* A ts beyond int64 is its double, not an error; a dur no double holds leaves its event
 * out (and says so); ids keep their 64-bit limit. */
static void test_times_beyond_64_bits(void **state)
{
    (void)state;
    tl_error err = {0};
    static const char big_ts[] = "{\"traceEvents\":[" X("cpu_op", "a", 1, 1, "12345678901234567890", "10", "") ","
                                 X("cpu_op", "b", 1, 1, "9223372036854775807", "10", "") ","
                                 X("cpu_op", "c", 1, 1, "9999999999999999999", "10", "") "]}";
    tl_trace *t = tl_trace_load_mem(big_ts, strlen(big_ts), "t.json", &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(t->nev, 3);
    assert_true(t->ev[0].ts == 12345678901234567890.0);
    assert_false(t->ev[2].flags & TL_TEV_TS_INT); /* 19 digits, beyond int64 */
    assert_false(t->ev[0].flags & TL_TEV_TS_INT); /* beyond int64: a float, as pandas holds it */
    assert_true(t->ev[1].flags & TL_TEV_TS_INT);  /* int64's largest is an int */
    assert_true(t->ev[0].flags & TL_TEV_DUR_INT);
    tl_trace_free(t);

    tl_buf b = {0};
    tl_buf_adds(&b, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1");
    for (int i = 0; i < 400; i++)
        tl_buf_addc(&b, '0');
    tl_buf_adds(&b, "}," X("cpu_op", "b", 1, 1, "5", "1", "") "]}");
    t = tl_trace_load_mem(b.data, b.len, "t.json", &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(t->nev, 1);
    assert_string_equal(t->ev[0].name, "b");
    assert_int_equal(t->nnonfinite, 1);
    assert_int_equal(t->first_nonfinite, 0);
    tl_trace_free(t);
    tl_buf_free(&b);

    static const char big_id[] = "{\"traceEvents\":[{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":12345678901234567890}]}";
    memset(&err, 0, sizeof err);
    assert_null(tl_trace_load_mem(big_id, strlen(big_id), "t.json", &err));
    assert_non_null(strstr(err.msg, "\"id\" is an integer beyond 64 bits (ids must fit in a 64-bit integer)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_times),     cmocka_unit_test(test_mixed_times),
        cmocka_unit_test(test_old_flows),     cmocka_unit_test(test_both_flow_kinds),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_census_text),
        cmocka_unit_test(test_times_beyond_64_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
