/*
 * test_trace_kernels.c - the kernels-only load (TL_LOAD_KERNELS_ONLY) the multi-rank
 * collective report reads its ranks with: the same collective kernels and metadata as a
 * whole load, whatever the order of an event's keys, and nothing else kept; the same
 * when a second thread reads the second half; a damaged event it passes over is still
 * refused.
 */
#include "testutil.h"

#include "trace/trace.h"
#include "trace/trace_impl.h"

#include <math.h>

/* Every kind of event around three communication kernels: e3 has its cat after its args
 * and its name last, e5 has no link id (a communication kernel but no collective),
 * e4 is a kernel that is no communication kernel, e7 has its cat after its name, e11 is a
 * cpu_op whose cat comes last. */
static const char trace_text[] =
    "{\"deviceProperties\":[{\"name\":\"G\"},{}],\"distributedInfo\":{\"rank\":1,\"world_size\":4},"
    "\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,"
    "\"args\":{\"External id\":1,\"Input Dims\":[[2,3]]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":5,"
    "\"args\":{\"correlation\":7,\"External id\":1}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32\",\"pid\":0,\"tid\":7,"
    "\"ts\":100,\"dur\":20.5,\"args\":{\"correlation\":7,\"stream\":7,\"Process Group Name\":\"0\","
    "\"Process Group Ranks\":[0,1,2,3],\"Collective name\":\"allreduce\",\"Group size\":4,\"dtype\":\"Float\","
    "\"In msg nelems\":1024,\"Out msg nelems\":1024,\"In split size\":[],\"Out split size\":[]}},"
    "{\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":30,\"args\":{\"External id\":9,\"stream\":7,"
    "\"Process Group Name\":\"1\",\"Collective name\":\"allgather\",\"Group size\":2,\"dtype\":\"BFloat16\","
    "\"In msg nelems\":8,\"Out msg nelems\":16},\"cat\":\"kernel\",\"ph\":\"X\","
    "\"name\":\"ncclDevKernel_AllGather_RING_LL\"},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":9,"
    "\"args\":{\"correlation\":8,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_SendRecv\",\"pid\":0,\"tid\":7,\"ts\":400,\"dur\":3,"
    "\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":500,\"args\":{}},"
    "{\"ph\":\"X\",\"name\":\"rcclKernel_Broadcast\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":500,\"dur\":4,"
    "\"args\":{\"correlation\":11,\"stream\":7,\"Collective name\":\"broadcast\"}},"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":12},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":0,\"tid\":7,\"ts\":600,\"dur\":2,"
    "\"args\":{\"correlation\":12}},"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"GPU 0\"}},"
    "{\"ph\":\"X\",\"name\":\"aten::mul\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,"
    "\"args\":{\"External id\":2},\"cat\":\"cpu_op\"}"
    "]}";

static tl_trace *load(const char *text, size_t n, unsigned flags)
{
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(text, n, "t.json", flags, &err);
    if (!t)
        fail_msg("load: %s", err.msg);
    return t;
}

static void same_cval(const tl_cval *a, const tl_cval *b)
{
    assert_int_equal(a->kind, b->kind);
    if (a->kind == TL_CV_INT)
        assert_int_equal(a->i, b->i);
    else if (a->kind == TL_CV_FLOAT)
        assert_true(a->f == b->f);
    else if (a->kind == TL_CV_STR || a->kind == TL_CV_REPR)
        assert_string_equal(a->s, b->s);
}

static void test_same_collectives(void **state)
{
    (void)state;
    tl_trace *full = load(trace_text, sizeof trace_text - 1, 0);
    tl_trace *k = load(trace_text, sizeof trace_text - 1, TL_LOAD_KERNELS_ONLY);
    /* the three collective kernels: e2, e3 (cat last), e7 (cat after name) */
    assert_int_equal(full->ncoll, 3);
    assert_int_equal(k->ncoll, full->ncoll);
    for (size_t i = 0; i < k->ncoll; i++) {
        const tl_tev *a = &full->ev[full->coll[i].ev], *b = &k->ev[k->coll[i].ev];
        assert_string_equal(a->name, b->name);
        assert_true(a->ts == b->ts && a->dur == b->dur);
        assert_int_equal(a->flags & (TL_TEV_TS_INT | TL_TEV_DUR_INT), b->flags & (TL_TEV_TS_INT | TL_TEV_DUR_INT));
        for (int c = 0; c < TL_COLL_NKEYS; c++)
            same_cval(&full->coll[i].v[c], &k->coll[i].v[c]);
    }
    assert_string_equal(k->ev[k->coll[1].ev].name, "ncclDevKernel_AllGather_RING_LL");
    assert_int_equal(k->coll[1].v[TL_COLL_OUT_NELEMS].i, 16);
    assert_string_equal(k->coll[2].v[TL_COLL_NAME].s, "broadcast");
    /* kept: the communication kernels alone (the one without a link id too), no tree */
    assert_int_equal(k->nev, 4);
    for (size_t i = 0; i < k->nev; i++)
        assert_int_equal(k->ev[i].kind, TL_TEV_KERNEL);
    assert_int_equal(k->ncpu_ops, 0);
    assert_int_equal(k->nroots, 0);
    assert_true(full->nev == 9 && full->ncpu_ops == 2);
    /* what the report reads beside the events, and every event counted */
    assert_int_equal(k->ndevices, 2);
    assert_int_equal(k->dist_rank, 1);
    assert_int_equal(k->dist_world, 4);
    assert_int_equal(k->nuid, full->nuid);
    assert_int_equal(k->census.n[TL_CAT_CPU_OP], 2);
    assert_int_equal(k->census.n[TL_CAT_KERNEL], 5);
    tl_trace_free(full);
    tl_trace_free(k);
}

/* A damaged event the kernels-only load passes over is refused all the same, naming
 * the event, as a whole load refuses it. */
static void test_damage_refused(void **state)
{
    (void)state;
    static const char *bad[] = {
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1x,\"dur\":2}]}",
        "{\"traceEvents\":[{\"cat\":\"cpu_op\",\"args\":{\"a\":[1,2}}]}",
        "{\"traceEvents\":[{\"cat\":\"kernel\",\"name\":\"gemm\",\"args\":{\"a\":tru}}]}",
        "{\"traceEvents\":[{\"cat\":\"cpu_op\",\"name\":\"a\",\"args\":{\"s\":\"unterminated",
        "{\"traceEvents\":[{\"cat\":\"cpu_op\"}, {\"cat\":\"cuda_runtime\",\"name\":\"x\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (unsigned f = 0; f <= TL_LOAD_KERNELS_ONLY; f += TL_LOAD_KERNELS_ONLY) {
            tl_error err = {0};
            tl_trace *t = tl_trace_load_mem_flags(bad[i], strlen(bad[i]), "bad.json", f, &err);
            if (t)
                fail_msg("case %zu (flags %u) was not refused", i, f);
            assert_non_null(strstr(err.msg, "bad.json"));
        }
    }
}

/* The events of trace_text `copies` times over (a trace large enough to be split). */
static char *repeated(int copies, size_t *n)
{
    const char *ev0 = strstr(trace_text, "\"traceEvents\":[") + 15;
    size_t head = (size_t)(ev0 - trace_text), body = sizeof trace_text - 1 - head - 2; /* without "]}" */
    tl_buf b = {0};
    tl_buf_add(&b, trace_text, head);
    for (int c = 0; c < copies; c++) {
        if (c)
            tl_buf_adds(&b, ",");
        tl_buf_add(&b, ev0, body);
    }
    tl_buf_adds(&b, "]}");
    *n = b.len;
    return b.data;
}

/* Read by two threads, split anywhere: the trace one reader makes, collective metadata of
 * every kind (ints, texts, reprs) merged from the second half, kernels-only or whole. */
static void test_split(void **state)
{
    (void)state;
    size_t n;
    char *text = repeated(40, &n);
    for (unsigned flags = 0; flags <= TL_LOAD_KERNELS_ONLY; flags += TL_LOAD_KERNELS_ONLY) {
        tl_trace_split_tune(UINT64_MAX, 500);
        tl_trace *one = load(text, n, flags);
        assert_int_equal(one->ncoll, 3 * 40);
        int held = 0;
        for (unsigned pm = 50; pm < 1000; pm += 50) {
            tl_trace_split_tune(0, pm);
            tl_trace *two = load(text, n, flags);
            char why[512];
            if (tl_trace_same(one, two, why, sizeof why) != 0)
                fail_msg("flags %u, split at %u/1000: %s", flags, pm, why);
            held += two->read_split != 0;
            tl_trace_free(two);
        }
        assert_true(held > 10);
        tl_trace_free(one);
    }
    tl_trace_split_tune((uint64_t)16 << 20, 440);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_collectives),
        cmocka_unit_test(test_damage_refused),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
