/*
 * test_trace_load.c - the trace reader and tree (TRACES.md §1-§2): what is kept from the
 * JSON and how, the call tree (nesting, touching intervals, ties, the bleed rule, cpu
 * roots), the links (both flows needed, the last finish flow wins, graph launches, the
 * External id fallback), the gpu lists, and the one-line errors; plain and gzip input.
 */
#include "testutil.h"

#include "io/gzip_stream.h"
#include "trace/jscan.h"
#include "trace/trace.h"


static tl_trace *load_text(const char *json, tl_error *err)
{
    memset(err, 0, sizeof *err);
    return tl_trace_load_mem(json, strlen(json), "t.json", err);
}

static tl_trace *must_load(const char *json)
{
    tl_error err;
    tl_trace *t = load_text(json, &err);
    if (!t)
        fail_msg("load failed: %s", err.msg);
    return t;
}

/* The kept event with this uid. */
static const tl_tev *by_uid(const tl_trace *t, uint32_t uid)
{
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].uid == uid)
            return &t->ev[i];
    fail_msg("no kept event with uid %u", uid);
    return NULL;
}

static uint32_t idx_of(const tl_trace *t, uint32_t uid) { return (uint32_t)(by_uid(t, uid) - t->ev); }

static uint32_t parent_uid(const tl_trace *t, uint32_t uid)
{
    const tl_tev *e = by_uid(t, uid);
    return e->parent == TL_TEV_NONE ? UINT32_MAX : t->ev[e->parent].uid;
}

/* "u1,u2,..." of a range of event indexes. */
static void uids(const tl_trace *t, const uint32_t *v, uint32_t n, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%u", i ? "," : "", t->ev[v[i]].uid);
}

static void assert_children(const tl_trace *t, uint32_t uid, const char *want)
{
    char got[512];
    uint32_t i = idx_of(t, uid);
    uids(t, tl_tev_children(t, i), t->ev[i].nchild, got, sizeof got);
    assert_string_equal(got, want);
}

static void assert_gpu(const tl_trace *t, uint32_t uid, const char *want)
{
    char got[512];
    uint32_t i = idx_of(t, uid);
    uids(t, tl_tev_gpu(t, i), t->ev[i].ngpu, got, sizeof got);
    assert_string_equal(got, want);
}

#define X(cat, name, pid, tid, ts, dur, args) \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" #pid ",\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":" #dur args "}"
#define FLOW(ph, id, pid, tid, ts) \
    "{\"ph\":\"" ph "\",\"id\":" #id ",\"pid\":" #pid ",\"tid\":" #tid ",\"ts\":" #ts ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"

/* A cpu_op's shape args and output type are kept once per combination: the ops with the
 * same five texts share one record, an op that differs in any one of them (the output
 * type too) has its own, and an op with none of them reads tl_op_args_none. */
static void test_op_args_shared(void **state)
{
    (void)state;
#define ARGS(dims, otype) ",\"args\":{\"Input Dims\":" dims ",\"Input type\":[\"float\"]" otype "}"
    tl_trace *t = must_load("{\"traceEvents\":[\n"
                            X("cpu_op", "a", 1, 1, 0, 10, ARGS("[[2,3]]", "")) ",\n"
                            X("cpu_op", "b", 1, 1, 1, 1, ARGS("[[2,3]]", "")) ",\n"
                            X("cpu_op", "c", 1, 1, 2, 1, ARGS("[[2,4]]", "")) ",\n"
                            X("cpu_op", "d", 1, 1, 3, 1, ARGS("[[2,3]]", ",\"Output type\":[\"float\"]")) ",\n"
                            X("cpu_op", "e", 1, 1, 4, 1, "") ",\n"
                            X("kernel", "k", 0, 7, 5, 1, ",\"args\":{\"stream\":7}") ",\n"
                            X("cpu_op", "f", 1, 1, 6, 1, ARGS("[[2,3]]", ",\"Output type\":[\"float\"]")) "\n"
                            "]}");
#undef ARGS
    assert_int_equal(t->nev, 7);
    const tl_op_args *a = tl_tev_x(t, by_uid(t, 0))->args, *b = tl_tev_x(t, by_uid(t, 1))->args,
                     *c = tl_tev_x(t, by_uid(t, 2))->args, *d = tl_tev_x(t, by_uid(t, 3))->args,
                     *e = tl_tev_x(t, by_uid(t, 4))->args, *k = tl_tev_x(t, by_uid(t, 5))->args,
                     *f = tl_tev_x(t, by_uid(t, 6))->args;
    assert_string_equal(a->input_dims, "((2, 3),)");
    assert_string_equal(a->input_type, "('float',)");
    assert_null(a->output_type);
    assert_ptr_equal(a, b);
    assert_true(c != a && d != a && d != c);
    assert_string_equal(c->input_dims, "((2, 4),)");
    assert_string_equal(d->output_type, "('float',)");
    assert_ptr_equal(d, f);
    assert_ptr_equal(e, &tl_op_args_none);
    assert_ptr_equal(k, &tl_op_args_none);
    tl_trace_free(t);
}

/* What is kept, how UIDs count, names interned, shape args as Python reprs. */
static void test_events_kept(void **state)
{
    (void)state;
    tl_trace *t = must_load(
        "{\"schemaVersion\":1,\"metadata\":{\"env\":{\"A\":[1,2,{\"x\":null}]}},\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":7,\"tid\":0,\"args\":{\"name\":\"python3\"}},\n"
        "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":7,\"tid\":0,\"args\":{\"labels\":\"CPU\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":9,\"args\":{\"name\":\"thread 9 (python3)\"}},\n"
        X("python_function", "f.py(1): g", 7, 9, 100, 50, ",\"args\":{\"Python id\":3}") ",\n"
        X("cpu_op", "aten::mm", 7, 9, 101.5, 10.25,
          ",\"args\":{\"External id\":5,\"Input Dims\":[[2,3],[3],[]],\"Input type\":[\"c10::BFloat16\",\"it's\",\"\"],"
          "\"Input Strides\":[[[1,2]],[]],\"Concrete Inputs\":[\"\",\"1\",\"a\\\"b\\\\c\\u00e9\"]}") ",\n"
        X("cpu_op", "aten::mm", 7, 9, 120, 1, "") ",\n"
        "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":7,\"tid\":9,\"ts\":121,\"s\":\"t\"},\n"
        X("kernel", "k", 0, 7, 130, 2, ",\"args\":{\"stream\":7,\"correlation\":3}") ",\n"
        X("cpu_op", "odd", "Spans", 9, 1, 1, "") ",\n"
        X("gpu_memset", "Memset (Device)", 0, 7, 140, 1, ",\"args\":{\"stream\":7}") ",\n"
        /* a metadata event with a cat: its args' name is read for its ph */
        "{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"process_name\",\"pid\":8,\"tid\":0,\"args\":{\"name\":\"worker\"}}\n"
        "],\"displayTimeUnit\":\"ms\"}");
    assert_int_equal(t->nev, 4); /* two cpu_ops, a kernel, a memset; not the string-pid op */
    assert_int_equal(t->ncpu_ops, 2);
    const tl_tev *mm = by_uid(t, 4), *mm2 = by_uid(t, 5), *k = by_uid(t, 7), *ms = by_uid(t, 9);
    assert_string_equal(mm->name, "aten::mm");
    assert_ptr_equal(mm->name, mm2->name); /* interned */
    assert_int_equal(mm->kind, TL_TEV_CPU_OP);
    assert_true(mm->ts == 101.5 && mm->dur == 10.25 && tl_tev_end(mm) == 111.75);
    assert_string_equal(tl_tev_x(t, mm)->args->input_dims, "((2, 3), (3,), ())");
    assert_string_equal(tl_tev_x(t, mm)->args->input_type, "('c10::BFloat16', \"it's\", '')");
    assert_string_equal(tl_tev_x(t, mm)->args->input_strides, "(((1, 2),), ())");
    assert_string_equal(tl_tev_x(t, mm)->args->concrete_inputs, "('', '1', 'a\"b\\\\c\xc3\xa9')");
    assert_null(tl_tev_x(t, mm2)->args->input_dims);
    assert_int_equal(k->kind, TL_TEV_KERNEL);
    assert_int_equal(tl_tev_x(t, k)->stream, 7);
    assert_int_equal(ms->kind, TL_TEV_MEMSET);
    assert_int_equal(tl_tev_pid(t, ms), 0);
    assert_int_equal(tl_tev_tid(t, ms), 7);
    assert_true(tl_tev_thread(t, mm) == tl_tev_thread(t, mm2) && tl_tev_thread(t, mm) != tl_tev_thread(t, ms));
    assert_string_equal(tl_trace_process_name(t, 7), "python3");
    assert_string_equal(tl_trace_process_label(t, 7), "CPU");
    assert_string_equal(tl_trace_thread_name(t, 7, 9), "thread 9 (python3)");
    assert_string_equal(tl_trace_thread_name(t, 7, 10), "Unknown");
    assert_string_equal(tl_trace_process_name(t, 0), "Unknown");
    assert_string_equal(tl_trace_process_name(t, 8), "worker");
    tl_trace_free(t);
}

/* Negative durations are kept as they are (the reference's numbers), counted for the
 * warning that explains a negative busy time. */
static void test_negative_durations(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":[\n"
                            X("cpu_op", "aten::mm", 7, 9, 100, 10, "") ",\n"
                            X("kernel", "k", 0, 7, 130, -1, ",\"args\":{\"stream\":7}") ",\n"
                            X("kernel", "k", 0, 7, 140, -2.5, ",\"args\":{\"stream\":7}") "\n"
                            "]}");
    assert_int_equal(t->nev, 3);
    assert_int_equal(t->nnegative, 2);
    assert_int_equal(t->first_negative, 1);
    assert_true(tl_tev_end(by_uid(t, 2)) == 137.5);
    tl_trace_free(t);
    t = must_load("{\"traceEvents\":[" X("kernel", "k", 0, 7, 130, 0, "") "]}");
    assert_int_equal(t->nnegative, 0);
    tl_trace_free(t);
    /* a second traceEvents array replaces the first, its negative durations too */
    t = must_load("{\"traceEvents\":[" X("kernel", "k", 0, 7, 130, -1, "") "],"
                  "\"traceEvents\":[" X("kernel", "k", 0, 7, 130, 0, "") "," X("kernel", "k", 0, 7, 140, -3, "") "]}");
    assert_int_equal(t->nev, 2);
    assert_int_equal(t->nnegative, 1);
    assert_int_equal(t->first_negative, 1);
    tl_trace_free(t);
}

/* A ts or dur of NaN or ±Infinity (Python's json writes them) places nothing: the event
 * is left out, and counted for the warning that says so. */
static void test_nonfinite_times(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":[\n"
                            X("cpu_op", "aten::mm", 7, 9, 100, 10, "") ",\n"
                            X("kernel", "k", 0, 7, 130, NaN, "") ",\n"
                            X("kernel", "k", 0, 7, Infinity, 1, "") ",\n"
                            X("kernel", "k", 0, 7, -Infinity, 1, "") ",\n"
                            X("kernel", "k", 0, 7, 140, 2, "") "\n"
                            "]}");
    assert_int_equal(t->nev, 2);
    assert_int_equal(t->nnonfinite, 3);
    assert_int_equal(t->first_nonfinite, 1);
    tl_trace_free(t);
    /* a second traceEvents array replaces the first, its count too */
    t = must_load("{\"traceEvents\":[" X("kernel", "k", 0, 7, NaN, 1, "") "],"
                  "\"traceEvents\":[" X("kernel", "k", 0, 7, 130, 0, "") "]}");
    assert_int_equal(t->nnonfinite, 0);
    tl_trace_free(t);
}

/* Duplicate thread names: the last wins. */
static void test_names_last_wins(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":["
                            "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"a\"}},"
                            "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"b\"}}]}");
    assert_string_equal(tl_trace_thread_name(t, 1, 2), "b");
    tl_trace_free(t);
}

/* An event's name given twice, around its args: the last is its name (Python's json keeps
 * the last key), and whether it is a communication kernel's follows that name, not the one
 * the args' collective test saw. */
static void test_event_name_last_wins(void **state)
{
    (void)state;
    static const char *const names[2][2] = {{"ncclDevKernel_AllReduce", "gemm_kernel"}, {"gemm_kernel", "ncclDevKernel_AllReduce"}};
    for (int k = 0; k < 2; k++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
                 "\"ts\":10,\"dur\":5,\"args\":{\"stream\":7,\"correlation\":3},\"name\":\"%s\"}]}",
                 names[k][0], names[k][1]);
        tl_trace *t = must_load(json);
        assert_int_equal(t->nev, 1);
        assert_string_equal(t->ev[0].name, names[k][1]);
        assert_int_equal((t->ev[0].flags & TL_TEV_COMM) != 0, k == 1);
        tl_trace_free(t);
    }
}

/* Nesting, touching intervals as siblings, equal ts in array order, cpu roots. */
static void test_tree_nesting(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":["
                            X("cpu_op", "outer", 1, 1, 0, 100, "") ","       /* 0 */
                            X("cpu_op", "a", 1, 1, 10, 20, "") ","           /* 1 */
                            X("cpu_op", "b", 1, 1, 30, 10, "") ","           /* 2: touches a: sibling */
                            X("cuda_runtime", "r", 1, 1, 31, 2, "") ","      /* 3: in b */
                            X("cpu_op", "c", 1, 1, 50, 5, "") ","            /* 4 */
                            X("cpu_op", "d", 1, 1, 50, 3, "") ","            /* 5: same ts as c: after it, inside it */
                            X("cpu_op", "other", 1, 2, 5, 1, "") ","         /* 6: another thread: a root */
                            X("cpu_op", "late", 1, 1, 200, 1, "") ","        /* 7: a root again */
                            X("cpu_op", "x", 1, 3, 0, 10, "") ","            /* 8 */
                            X("cpu_op", "y", 1, 3, 10, 5, "") "]}");        /* 9: touches x, alone: a root */
    assert_children(t, 0, "1,2,4");
    assert_children(t, 2, "3");
    assert_children(t, 4, "5");
    assert_int_equal(parent_uid(t, 0), UINT32_MAX);
    assert_int_equal(parent_uid(t, 5), 4);
    assert_int_equal(t->nroots, 5);
    assert_int_equal(t->ev[t->roots[0]].uid, 0);
    assert_int_equal(t->ev[t->roots[1]].uid, 8); /* ts order across threads, ties in array order */
    assert_int_equal(t->ev[t->roots[2]].uid, 6);
    assert_int_equal(t->ev[t->roots[3]].uid, 9);
    assert_int_equal(t->ev[t->roots[4]].uid, 7);
    assert_true(by_uid(t, 9)->flags & TL_TEV_IN_TREE);
    assert_true(by_uid(t, 0)->flags & TL_TEV_CPU_ROOT);
    assert_false(by_uid(t, 1)->flags & TL_TEV_CPU_ROOT);
    assert_true(by_uid(t, 3)->flags & TL_TEV_IN_TREE);
    assert_true(by_uid(t, 3)->flags & TL_TEV_NON_GPU_PATH);
    tl_trace_free(t);
}

/* The per-event records: a Python frame whose args are passed over has no aux record
 * (it reads as tl_tev_aux_none), one whose args come before its cat does; every other
 * kept event has one; (pid, tid) pairs are in the thread table once each; a second
 * traceEvents array replaces the first's records too. */
static void test_aux_records(void **state)
{
    (void)state;
    const char *json =
        "{\"traceEvents\":[" X("cpu_op", "x", 1, 1, 0, 1, "") "],\"traceEvents\":[\n"
        X("python_function", "f.py(1): g", 7, 9, 100, 50, ",\"args\":{\"Python id\":3,\"Sequence number\":4}") ",\n"
        "{\"ph\":\"X\",\"args\":{\"Sequence number\":4},\"cat\":\"python_function\",\"name\":\"f.py(2): h\","
        "\"pid\":7,\"tid\":9,\"ts\":101,\"dur\":5},\n"
        X("cpu_op", "aten::mm", 7, 9, 102, 1, ",\"args\":{\"Sequence number\":5}") ",\n"
        X("kernel", "k", 0, 7, 130, 2, ",\"args\":{\"stream\":7,\"correlation\":3}") "\n"
        "]}";
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(json, strlen(json), "aux.json", TL_LOAD_PYTHON, &err);
    if (!t)
        fail_msg("load failed: %s", err.msg);
    assert_int_equal(t->nev, 4);
    const tl_tev *f = by_uid(t, 0), *h = by_uid(t, 1), *mm = by_uid(t, 2), *k = by_uid(t, 3);
    assert_false(tl_tev_has_aux(f));
    assert_ptr_equal(tl_tev_x(t, f), &tl_tev_aux_none);
    assert_true(!tl_tev_x(t, f)->has_args && tl_tev_x(t, f)->seq == TL_SEQ_NONE);
    assert_true(tl_tev_x(t, f)->stream == TL_TEV_NO_STREAM && tl_tev_x(t, f)->corr == -1);
    assert_true(tl_tev_has_aux(h) && tl_tev_x(t, h)->has_args && tl_tev_x(t, h)->seq == 4);
    assert_true(tl_tev_has_aux(mm) && tl_tev_x(t, mm)->seq == 5);
    assert_int_equal(tl_tev_x(t, k)->stream, 7);
    assert_int_equal(t->naux, 3);
    assert_int_equal(t->nthreads, 3); /* (1, 1) of the first array stays, unused */
    assert_true(tl_tev_thread(t, f) == tl_tev_thread(t, h) && tl_tev_thread(t, h) == tl_tev_thread(t, mm) &&
                tl_tev_thread(t, mm) != tl_tev_thread(t, k));
    assert_true(tl_tev_pid(t, f) == 7 && tl_tev_tid(t, f) == 9 && tl_tev_pid(t, k) == 0 && tl_tev_tid(t, k) == 7);
    /* the frames are in the tree like cpu_ops */
    assert_int_equal(parent_uid(t, 1), 0);
    assert_int_equal(parent_uid(t, 2), 1);
    tl_trace_free(t);
}

/* The tree's ts order when the array comes in sorted runs (a profiler writes ops, runtime
 * calls and Python frames as separate streams), ties across runs in array order: the
 * root's zero-length children, listed in (ts, array position) order whatever the runs;
 * a few runs (merged, the scratch on either side) and many (the radix sort). */
static int ts_uid_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b; /* {ts, uid} */
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

static void check_runs(const double *ts, size_t n)
{
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"traceEvents\":[" X("cpu_op", "root", 1, 1, 0, 100000, ""));
    for (size_t i = 0; i < n; i++)
        tl_buf_printf(&b, ",{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"c%zu\",\"pid\":1,\"tid\":1,\"ts\":%g,\"dur\":0}",
                      i % 3 == 2 ? "python_function" : "cpu_op", i, ts[i]);
    tl_buf_printf(&b, "]}");
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(b.data, b.len, "runs.json", TL_LOAD_PYTHON, &err);
    if (!t)
        fail_msg("load failed: %s", err.msg);
    double *want = malloc(2 * n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        want[2 * i] = ts[i];
        want[2 * i + 1] = (double)(i + 1); /* uid: after the root */
    }
    qsort(want, n, 2 * sizeof *want, ts_uid_cmp);
    uint32_t r = idx_of(t, 0);
    assert_int_equal(t->ev[r].nchild, n);
    const uint32_t *ch = tl_tev_children(t, r);
    for (size_t i = 0; i < n; i++) {
        if (t->ev[ch[i]].uid != (uint32_t)want[2 * i + 1])
            fail_msg("child %zu: uid %u (ts %g), want uid %.0f (ts %g)", i, t->ev[ch[i]].uid, t->ev[ch[i]].ts,
                     want[2 * i + 1], want[2 * i]);
    }
    free(want);
    tl_trace_free(t);
    tl_buf_free(&b);
}

static void test_tree_sorted_runs(void **state)
{
    (void)state;
    enum { N = 3000 };
    double *ts = malloc(N * sizeof *ts);
    /* a long run, a short one with ties to it (merged from the back), a shorter one
     * still, then a long run after them (merged from the front) */
    size_t n = 0;
    for (int i = 0; i < 200; i++)
        ts[n++] = 10.0 * i;
    for (int i = 0; i < 20; i++)
        ts[n++] = (i % 2 ? 5.0 : 0.0) + 50.0 * i;
    for (int i = 0; i < 5; i++)
        ts[n++] = 100.0 * i;
    for (int i = 0; i < 400; i++)
        ts[n++] = 1.0 + 5.0 * i;
    check_runs(ts, n);
    /* already in order, with ties: one run */
    n = 0;
    for (int i = 0; i < 300; i++)
        ts[n++] = (double)(i / 3);
    check_runs(ts, n);
    /* more runs than are merged: the radix sort */
    n = 0;
    for (int r = 0; r < 100; r++)
        for (int i = 0; i < 30; i++)
            ts[n++] = (double)((r * 7919 + i * 13) % 500);
    check_runs(ts, n);
    free(ts);
}

/* The bleed rule: a small overlap pops the top (with two on the stack); a large one
 * drops the event, whose would-be children nest under the stack. */
static void test_tree_bleed(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":["
                            X("cpu_op", "root", 1, 1, 0, 100, "") ","       /* 0 */
                            X("cpu_op", "a", 1, 1, 10, 10, "") ","          /* 1: ends 20 */
                            X("cuda_runtime", "r", 1, 1, 19.5, 5, "") ","   /* 2: overlap 0.5: pops a, under root */
                            X("cpu_op", "big", 1, 1, 30, 10, "") ","        /* 3: ends 40 */
                            X("cpu_op", "bleeder", 1, 1, 35, 10, "") ","    /* 4: overlap 5: dropped */
                            X("cpu_op", "inner", 1, 1, 36, 1, "") ","       /* 5: nests under big */
                            X("cpu_op", "lone", 2, 2, 0, 10, "") ","        /* 6 */
                            X("cpu_op", "lone2", 2, 2, 9.5, 5, "") "]}");  /* 7: small overlap, one on stack: dropped */
    assert_int_equal(parent_uid(t, 2), 0);
    assert_children(t, 0, "1,2,3");
    assert_children(t, 3, "5");
    assert_false(by_uid(t, 4)->flags & TL_TEV_IN_TREE);
    assert_int_equal(parent_uid(t, 4), UINT32_MAX);
    assert_int_equal(by_uid(t, 4)->nchild, 0);
    assert_false(by_uid(t, 7)->flags & TL_TEV_IN_TREE);
    assert_false(by_uid(t, 4)->flags & TL_TEV_CPU_ROOT);
    assert_int_equal(t->nroots, 2);
    tl_trace_free(t);
}

static const char *link_trace =
    "{\"traceEvents\":["
    X("cpu_op", "op", 1, 1, 0, 100, "") ","                                                         /* 0 */
    X("cpu_op", "inner", 1, 1, 10, 50, "") ","                                                      /* 1 */
    X("cuda_runtime", "cudaLaunchKernel", 1, 1, 11, 2, ",\"args\":{\"correlation\":10}") ","       /* 2 */
    FLOW("s", 10, 1, 1, 11) ","                                                                     /* 3 */
    FLOW("f", 10, 0, 7, 200) ","                                                                    /* 4 */
    X("kernel", "k10", 0, 7, 200, 5, ",\"args\":{\"correlation\":10,\"stream\":7}") ","             /* 5 */
    X("cuda_runtime", "cudaMemsetAsync", 1, 1, 20, 2, ",\"args\":{\"correlation\":11}") ","        /* 6: no s flow */
    FLOW("f", 11, 0, 7, 210) ","                                                                    /* 7 */
    X("gpu_memset", "m11", 0, 7, 210, 1, ",\"args\":{\"correlation\":11}") ","                      /* 8: unlinked */
    X("cuda_runtime", "cudaLaunchKernel", 1, 1, 30, 2, ",\"args\":{\"correlation\":12}") ","       /* 9 */
    FLOW("s", 12, 1, 1, 30) ","                                                                     /* 10 */
    FLOW("f", 12, 0, 8, 220) ","                                                                    /* 11: superseded */
    X("kernel", "k12a", 0, 8, 220, 5, ",\"args\":{\"correlation\":12}") ","                         /* 12 */
    X("kernel", "k12b", 0, 9, 230, 5, ",\"args\":{\"correlation\":12}") ","                         /* 13 */
    FLOW("f", 12, 0, 9, 230) ","                                                                    /* 14: the last wins */
    X("cuda_runtime", "cudaGraphLaunch", 1, 1, 70, 2, ",\"args\":{\"correlation\":20}") ","        /* 15 */
    X("kernel", "g1", 0, 7, 300, 1, ",\"args\":{\"correlation\":20}") ","                           /* 16 */
    X("kernel", "x", 0, 7, 305, 1, ",\"args\":{\"correlation\":21}") ","                            /* 17 */
    X("gpu_memcpy", "g2", 0, 7, 310, 1, ",\"args\":{\"correlation\":20}") ","                       /* 18 */
    X("cuda_runtime", "cudaStreamSynchronize", 1, 1, 80, 2, ",\"args\":{\"correlation\":30}") "]}"; /* 19 */

/* Links need both flows; the last finish flow of an id wins; graph launches take every
 * GPU event of their id; gpu lists run up the ancestors, in link order. */
static void test_links(void **state)
{
    (void)state;
    tl_trace *t = must_load(link_trace);
    assert_int_equal(parent_uid(t, 5), 2);
    assert_true(by_uid(t, 5)->flags & TL_TEV_LINKED);
    assert_false(by_uid(t, 8)->flags & TL_TEV_LINKED); /* no start flow */
    assert_int_equal(parent_uid(t, 8), UINT32_MAX);
    assert_false(by_uid(t, 12)->flags & TL_TEV_LINKED);
    assert_int_equal(parent_uid(t, 13), 9);
    assert_true(by_uid(t, 15)->flags & TL_TEV_GRAPH_LAUNCH);
    assert_children(t, 15, "16,18");
    assert_children(t, 2, "5");
    assert_children(t, 1, "2,6,9");
    assert_children(t, 0, "1,15,19");
    assert_gpu(t, 2, "5");
    assert_gpu(t, 1, "5,13");
    assert_gpu(t, 0, "5,13,16,18");
    assert_gpu(t, 6, "");
    assert_int_equal(tl_tev_x(t, by_uid(t, 5))->corr, 10);
    assert_true(by_uid(t, 6)->flags & TL_TEV_NON_GPU_PATH);
    assert_true(by_uid(t, 19)->flags & TL_TEV_NON_GPU_PATH);
    assert_false(by_uid(t, 0)->flags & TL_TEV_NON_GPU_PATH);
    assert_false(by_uid(t, 5)->flags & TL_TEV_NON_GPU_PATH); /* GPU events never */
    assert_false(by_uid(t, 8)->flags & TL_TEV_NON_GPU_PATH);
    tl_trace_free(t);
}

/* The (pid, tid, link id) table is written by every event with args, kept or not, the
 * last write winning: an event that is not kept (here: no dur) written after a kernel at
 * its place takes the link from it; written before, it changes nothing. */
static void test_links_last_write(void **state)
{
    (void)state;
    tl_trace *t = must_load(
        "{\"traceEvents\":["
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 0, 2, ",\"args\":{\"correlation\":10}") ","  /* 0 */
        FLOW("s", 10, 1, 1, 0) "," FLOW("f", 10, 0, 7, 100) ","                                  /* 1, 2 */
        X("kernel", "k10", 0, 7, 100, 5, ",\"args\":{\"correlation\":10}") ","                  /* 3 */
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"late\",\"pid\":0,\"tid\":7,\"ts\":110,"
        "\"args\":{\"correlation\":10}},"                                                       /* 4 */
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 10, 2, ",\"args\":{\"correlation\":11}") "," /* 5 */
        FLOW("s", 11, 1, 1, 10) "," FLOW("f", 11, 0, 7, 120) ","                                 /* 6, 7 */
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"early\",\"pid\":0,\"tid\":7,\"ts\":115,"
        "\"args\":{\"correlation\":11}},"                                                       /* 8 */
        X("kernel", "k11", 0, 7, 120, 5, ",\"args\":{\"correlation\":11}") "]}");               /* 9 */
    assert_int_equal(t->nev, 4);
    assert_false(by_uid(t, 3)->flags & TL_TEV_LINKED);
    assert_int_equal(parent_uid(t, 3), UINT32_MAX);
    assert_true(by_uid(t, 9)->flags & TL_TEV_LINKED);
    assert_int_equal(parent_uid(t, 9), 5);
    assert_gpu(t, 0, "");
    assert_gpu(t, 5, "9");
    tl_trace_free(t);
}

/* A GPU event is found at its flow's finish: another event with the same link id at
 * another stream where flows finish, written after it, is not the one. */
static void test_links_by_place(void **state)
{
    (void)state;
    tl_trace *t = must_load(
        "{\"traceEvents\":["
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 0, 2, ",\"args\":{\"correlation\":10}") ","  /* 0 */
        FLOW("s", 10, 1, 1, 0) "," FLOW("f", 10, 0, 7, 100) ","                                  /* 1, 2 */
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 10, 2, ",\"args\":{\"correlation\":11}") "," /* 3 */
        FLOW("s", 11, 1, 1, 10) "," FLOW("f", 11, 0, 8, 120) ","                                 /* 4, 5 */
        X("kernel", "a10", 0, 7, 100, 5, ",\"args\":{\"correlation\":10}") ","                  /* 6 */
        X("kernel", "b11", 0, 8, 120, 5, ",\"args\":{\"correlation\":11}") ","                  /* 7 */
        X("kernel", "b10", 0, 8, 130, 5, ",\"args\":{\"correlation\":10}") ","                  /* 8 */
        X("kernel", "a11", 0, 7, 140, 5, ",\"args\":{\"correlation\":11}") "]}");               /* 9 */
    assert_gpu(t, 0, "6");
    assert_gpu(t, 3, "7");
    assert_false(by_uid(t, 8)->flags & TL_TEV_LINKED);
    assert_false(by_uid(t, 9)->flags & TL_TEV_LINKED);
    tl_trace_free(t);
}

/* When the first launch lacks a correlation, External id is the key. */
/* A second traceEvents array replaces the first (Python's json keeps the last key):
 * nothing of the first array's link ids is left over, however many of its events had one. */
static void test_links_second_array(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"traceEvents\":[");
    for (int i = 0; i < 40; i++)
        tl_buf_printf(&b, "%s" X("cuda_runtime", "cudaLaunchKernel", 1, 1, 1, 1, ",\"args\":{\"correlation\":%d}"),
                      i ? "," : "", 100 + i);
    tl_buf_printf(&b, "],%s", link_trace + 1);
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(b.data, b.len, "t.json", &err);
    if (!t)
        fail_msg("load failed: %s", err.msg);
    assert_int_equal(t->nev, 14);
    assert_int_equal(parent_uid(t, 5), 2);
    assert_int_equal(parent_uid(t, 13), 9);
    assert_children(t, 15, "16,18");
    assert_gpu(t, 0, "5,13,16,18");
    assert_int_equal(tl_tev_x(t, by_uid(t, 2))->corr, 10);
    assert_int_equal(tl_tev_x(t, by_uid(t, 19))->corr, 30);
    tl_trace_free(t);
    tl_buf_free(&b);
}

static void test_external_id_key(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":["
                            X("cuda_runtime", "cudaLaunchKernel", 1, 1, 0, 2, ",\"args\":{\"External id\":4}") ","
                            FLOW("s", 4, 1, 1, 0) "," FLOW("f", 4, 0, 7, 10) ","
                            X("kernel", "k", 0, 7, 10, 1, ",\"args\":{\"External id\":4,\"correlation\":99}") "]}");
    assert_int_equal(parent_uid(t, 3), 0);
    assert_int_equal(tl_tev_x(t, by_uid(t, 3))->corr, 4);
    tl_trace_free(t);
}

static void assert_load_error(const char *json, size_t n, const char *want)
{
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(json, n, "bad.json", &err);
    assert_null(t);
    assert_true(err.set);
    if (!strstr(err.msg, want))
        fail_msg("error '%s' lacks '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, "bad.json"));
    assert_null(strchr(err.msg, '\n'));
}

#define BAD(json, want) assert_load_error(json, sizeof json - 1, want)

static void test_errors(void **state)
{
    (void)state;
    BAD("", "not a trace: the file is empty");
    BAD(" \n\t", "not a trace: the file holds only white space");
    BAD("\xef\xbb\xbf{\"traceEvents\": []}", "not a trace: the text starts with a UTF-8 byte-order mark");
    BAD("\x78\x9c\xab\xae\x05\x00\x01\x75\x00\xf9", "not a trace: the file is a zlib stream, not gzip");
    BAD("PK\x03\x04", "not a trace: the file is a zip archive (a workbook?), not JSON");
    BAD("[1,2]", "does not start with an object");
    BAD("{\"a\":1}", "no traceEvents");
    BAD("{\"traceEvents\":{}}", "traceEvents is not an array");
    BAD("{\"traceEvents\":[1]}", "an event that is not an object at byte 16 of the JSON text (event 0)");
    BAD("{\"traceEvents\":[{}, {\"ph\":\"X\",}]}", "expected a key string at byte 30");
    BAD("{\"traceEvents\":[{\"ts\":1.}]}", "a bad number");
    BAD("{\"traceEvents\":[{\"ts\":01}]}", "a bad number");
    BAD("{\"traceEvents\":[{\"pid\":01}]}", "a bad number"); /* an id's leading zero too */
    BAD("{\"traceEvents\":[{\"pid\":-}]}", "a bad number");
    BAD("{\"traceEvents\":[{\"pid\":1x}]}", "expected ',' or '}'");
    BAD("{\"traceEvents\":[{\"tid\":12345678901234567890}]}", "\"tid\" is an integer beyond 64 bits");
    BAD("{\"traceEvents\":[{\"name\":\"a\\qb\"}]}", "a bad escape");
    BAD("{\"traceEvents\":[{\"name\":\"a\nb\"}]}", "control character");
    BAD("{\"traceEvents\":[{\"name\":\"ab", "ends inside a string");
    BAD("{\"traceEvents\":[{\"cat\":\"python_function\",\"args\":{\"a\":[1,2}}]}", "expected ',' or the end of an array");
    BAD("{\"traceEvents\":[]} x", "text after the top-level object");
    BAD("{\"traceEvents\":[{\"ph\":tru}]}", "expected a value");
    BAD("{\"traceEvents\":[], \"x\": [[[[", "ends");
    /* nesting past the limit is an error, not a stack overflow */
    char *deep = malloc(40000);
    strcpy(deep, "{\"traceEvents\":[],\"m\":");
    size_t k = strlen(deep);
    for (int i = 0; i < 5000; i++)
        deep[k++] = '[';
    deep[k] = 0;
    assert_load_error(deep, k, "nested more than");
    free(deep);
}

/* Values the scanner must get right: escapes, surrogates, NaN, big numbers. */
static void test_values(void **state)
{
    (void)state;
    tl_trace *t = must_load("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\\u0062\\ud83d\\ude00\\/\",\"pid\":1,"
                            "\"tid\":1,\"ts\":1419247333430.849,\"dur\":2.5e1,\"args\":{\"Concrete Inputs\":[1e-05,1.5,"
                            "123456789012345678901234,-0,true,null,{\"k\":[1]}],\"x\":NaN,\"y\":-Infinity}}]}");
    assert_string_equal(t->ev[0].name, "ab\xf0\x9f\x98\x80/");
    assert_true(t->ev[0].ts == 1419247333430.849);
    assert_true(t->ev[0].dur == 25.0);
    assert_string_equal(tl_tev_x(t, &t->ev[0])->args->concrete_inputs, "(1e-05, 1.5, 123456789012345678901234, 0, True, None, {'k': (1,)})");
    tl_trace_free(t);
    /* ids in every form the number grammar allows: plain (up to 18 digits and beyond),
     * negative, -0, and as floats with an integral value; a fraction is no id */
    t = must_load("{\"traceEvents\":["
                  X("cpu_op", "a", 123456789012345678, -7, 1, 1, ",\"args\":{\"External id\":-0}") ","
                  X("cpu_op", "b", 1234567890123456789, 2.0, 2, 1, ",\"args\":{\"External id\":5e2}") ","
                  X("cpu_op", "c", 1e1, 3, 3, 1, ",\"args\":{\"External id\":2.5}") ","
                  X("cpu_op", "d", 1.5, 3, 4, 1, "") "]}");
    assert_int_equal(t->nev, 3); /* d's pid is no integer */
    assert_int_equal(tl_tev_pid(t, &t->ev[0]), 123456789012345678LL);
    assert_int_equal(tl_tev_tid(t, &t->ev[0]), -7);
    assert_int_equal(tl_tev_pid(t, &t->ev[1]), 1234567890123456789LL);
    assert_int_equal(tl_tev_tid(t, &t->ev[1]), 2);
    assert_int_equal(tl_tev_pid(t, &t->ev[2]), 10);
    tl_trace_free(t);
}

/* Times in every length up to and past the plain form's 19 digits, fractions of every
 * length, signs and zeros: each read as the correctly rounded double (strtod's). */
static void test_times_exact(void **state)
{
    (void)state;
    enum { N = 3000 };
    char (*txt)[2][48] = malloc(N * sizeof *txt);
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"traceEvents\":[");
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < N; i++) {
        for (int f = 0; f < 2; f++) {
            char *o = txt[i][f];
            size_t k = 0;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int nint = 1 + (int)(x % 16), nfrac = (int)((x >> 8) % 9), neg = f == 1 && (x >> 20) % 7 == 0;
            if (neg)
                o[k++] = '-';
            for (int d = 0; d < nint; d++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                o[k++] = (char)('0' + (d == 0 && nint > 1 ? 1 + x % 9 : x % 10));
            }
            if (nfrac) {
                o[k++] = '.';
                for (int d = 0; d < nfrac; d++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    o[k++] = (char)('0' + x % 10);
                }
            }
            o[k] = 0;
        }
        tl_buf_printf(&b, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":%s,\"dur\":%s}",
                      i ? "," : "", txt[i][0], txt[i][1]);
    }
    tl_buf_printf(&b, "]}");
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(b.data, b.len, "times.json", &err);
    if (!t)
        fail_msg("load failed: %s", err.msg);
    assert_int_equal(t->nev, N);
    for (int i = 0; i < N; i++) {
        double ts = strtod(txt[i][0], NULL), dur = strtod(txt[i][1], NULL);
        if (memcmp(&t->ev[i].ts, &ts, sizeof ts) != 0 || memcmp(&t->ev[i].dur, &dur, sizeof dur) != 0)
            fail_msg("event %d: ts %s read as %.17g, dur %s as %.17g", i, txt[i][0], t->ev[i].ts, txt[i][1], t->ev[i].dur);
    }
    tl_trace_free(t);
    tl_buf_free(&b);
    free(txt);
}

/* gzip by content: the same events; two members; truncation and damage are errors. */
static void test_gzip(void **state)
{
    (void)state;
    size_t n = strlen(link_trace);
    unsigned char *z = malloc(2 * n + 1024);
    size_t zn = tt_gzip(link_trace, n, z, 2 * n + 1024);
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(z, zn, "t.json.gz", &err);
    assert_non_null(t);
    assert_int_equal(t->nev, 14);
    assert_int_equal(parent_uid(t, 13), 9);
    tl_trace_free(t);

    /* two members: the text split in the middle of a string */
    size_t half = 37;
    size_t z1 = tt_gzip(link_trace, half, z, 2 * n + 1024);
    size_t z2 = tt_gzip(link_trace + half, n - half, z + z1, 2 * n + 1024 - z1);
    t = tl_trace_load_mem(z, z1 + z2, "t.json.gz", &err);
    assert_non_null(t);
    assert_int_equal(t->nev, 14);
    tl_trace_free(t);

    zn = tt_gzip(link_trace, n, z, 2 * n + 1024);
    assert_load_error((const char *)z, zn - 5, "truncated gzip data");
    z[zn - 6] ^= 0x55; /* the CRC */
    assert_load_error((const char *)z, zn, "damaged gzip data");
    free(z);
}

/* The stream reads a file the same in any chunk size. */
static void test_stream_file(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.json", dir);
    tt_write_file(path, link_trace, strlen(link_trace));
    assert_true(tl_trace_sniff(path));
    tl_error err = {0};
    tl_instream *s = tl_instream_open(path, &err);
    assert_non_null(s);
    assert_false(tl_instream_is_gzip(s));
    char buf[7];
    size_t total = 0;
    long k;
    while ((k = tl_instream_read(s, buf, sizeof buf, &err)) > 0) {
        assert_memory_equal(buf, link_trace + total, (size_t)k);
        total += (size_t)k;
    }
    assert_int_equal(k, 0);
    assert_int_equal(total, strlen(link_trace));
    tl_instream_close(s);
    tl_trace *t = tl_trace_load(path, &err);
    assert_non_null(t);
    assert_int_equal(t->nev, 14);
    tl_trace_free(t);
    tt_write_file(path, "PK\3\4", 4);
    assert_false(tl_trace_sniff(path));
    assert_false(tl_trace_sniff(dir));
    tt_write_file(path, " \n {", 4);
    assert_true(tl_trace_sniff(path));
    snprintf(path, sizeof path, "%s/none.json", dir);
    assert_null(tl_trace_load(path, &err));
    assert_non_null(strstr(err.msg, "cannot open"));
    tt_rmrf(dir);
    free(dir);
}

/* A conformance trace, when the suite is there: sizes the reference's tree has. */
static void test_conformance_trace(void **state)
{
    (void)state;
    const char *top = getenv("TL_TOP");
    char path[1024];
    snprintf(path, sizeof path, "%s/../shared/conformance/traces/qwen_h100.json.gz", top ? top : ".");
    if (access(path, R_OK) != 0)
        skip();
    tl_error err = {0};
    tl_trace *t = tl_trace_load(path, &err);
    assert_non_null(t);
    size_t linked = 0, gpu = 0;
    for (size_t i = 0; i < t->nev; i++) {
        gpu += tl_tev_is_gpu(&t->ev[i]);
        linked += (t->ev[i].flags & TL_TEV_LINKED) != 0;
    }
    assert_int_equal(gpu, 1707);
    assert_int_equal(gpu - linked, 509); /* TRACES.md §1: unlinked GPU work */
    assert_int_equal(t->nroots, 1378);
    tl_trace_free(t);
}

/* A gzip file is inflated ahead on a helper thread: every byte in order in any read size,
 * over many of its slots and two members; its errors as the memory stream's; a stream
 * closed before its end stops the helper. */
/* The size hint the reader sizes its arrays by: a plain file's size, a gzip file's text
 * length from its trailer, bounded by what deflate could make of the file when the
 * trailer lies; gzip in memory alike. */
static void test_size_hint(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[512];
    size_t n = strlen(link_trace);
    tl_error err = {0};
    snprintf(path, sizeof path, "%s/t.json", dir);
    tt_write_file(path, link_trace, n);
    tl_instream *s = tl_instream_open(path, &err);
    assert_int_equal(tl_instream_size_hint(s), n);
    tl_instream_close(s);

    unsigned char *z = malloc(2 * n + 1024);
    size_t zn = tt_gzip(link_trace, n, z, 2 * n + 1024);
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    tt_write_file(path, (const char *)z, zn);
    s = tl_instream_open(path, &err);
    assert_true(tl_instream_is_gzip(s));
    assert_int_equal(tl_instream_size_hint(s), n);
    tl_instream_close(s);
    s = tl_instream_open_mem(z, zn, "t.json.gz");
    assert_int_equal(tl_instream_size_hint(s), n);
    tl_instream_close(s);

    memset(z + zn - 4, 0xff, 4); /* a trailer that claims 4 GiB */
    tt_write_file(path, (const char *)z, zn);
    s = tl_instream_open(path, &err);
    assert_int_equal(tl_instream_size_hint(s), (uint64_t)zn * 1032);
    tl_instream_close(s);
    free(z);
    tt_rmrf(dir);
    free(dir);
}

static void test_gzip_file_ahead(void **state)
{
    (void)state;
    /* ~6 MB of text: a dozen slots of the helper */
    size_t n = 6u << 20;
    char *text = malloc(n);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + (i * 7 + i / 251) % 26);
    size_t cap = n + (1u << 20);
    unsigned char *z = malloc(cap);
    size_t z1 = tt_gzip(text, n / 3, z, cap);
    size_t zn = z1 + tt_gzip(text + n / 3, n - n / 3, z + z1, cap - z1);
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    tt_write_file(path, (const char *)z, zn);
    static const size_t sizes[] = {7, 65536, (1u << 20) + 1, 8u << 20};
    char *buf = malloc(8u << 20);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        tl_error err = {0};
        tl_instream *s = tl_instream_open(path, &err);
        assert_non_null(s);
        assert_true(tl_instream_is_gzip(s));
        size_t total = 0;
        long got;
        while ((got = tl_instream_read(s, buf, sizes[k], &err)) > 0) {
            assert_true(total + (size_t)got <= n);
            if (memcmp(buf, text + total, (size_t)got) != 0)
                fail_msg("read size %zu: bytes differ after %zu", sizes[k], total);
            total += (size_t)got;
            if (sizes[k] == 7 && total > (3u << 20))
                break; /* the rest is the same at a faster pace */
        }
        if (sizes[k] != 7) {
            assert_int_equal(got, 0);
            assert_int_equal(total, n);
            assert_int_equal(tl_instream_read(s, buf, sizes[k], &err), 0); /* the end stays the end */
            assert_int_equal(tl_instream_raw_offset(s), zn);
        }
        tl_instream_close(s);
    }
    /* closed at once, with the helper still filling */
    tl_error err = {0};
    tl_instream *s = tl_instream_open(path, &err);
    assert_int_equal(tl_instream_read(s, buf, 10, &err), 10);
    tl_instream_close(s);
    /* truncated, and a damaged CRC: the errors of the stream that inflates as it reads */
    tt_write_file(path, (const char *)z, zn - 5);
    s = tl_instream_open(path, &err);
    long got;
    while ((got = tl_instream_read(s, buf, 1u << 20, &err)) > 0)
        ;
    assert_int_equal(got, -1);
    assert_non_null(strstr(err.msg, "truncated gzip data"));
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(tl_instream_read(s, buf, 1u << 20, &err), -1); /* and stays so */
    tl_instream_close(s);
    z[zn - 6] ^= 0x55;
    tt_write_file(path, (const char *)z, zn);
    memset(&err, 0, sizeof err);
    s = tl_instream_open(path, &err);
    while ((got = tl_instream_read(s, buf, 1u << 20, &err)) > 0)
        ;
    assert_int_equal(got, -1);
    assert_non_null(strstr(err.msg, "damaged gzip data"));
    tl_instream_close(s);
    /* a trace loads the same from a gzip file as from memory */
    zn = tt_gzip(link_trace, strlen(link_trace), z, cap);
    tt_write_file(path, (const char *)z, zn);
    tl_trace *t = tl_trace_load(path, &err);
    assert_non_null(t);
    assert_int_equal(t->nev, 14);
    assert_int_equal(parent_uid(t, 13), 9);
    tl_trace_free(t);
    tt_rmrf(dir);
    free(dir);
    free(buf);
    free(z);
    free(text);
}

/* Python's repr() of a str, byte by byte: the oracle for tl_py_str_repr's block scan. */
static void repr_oracle(tl_buf *b, const char *s, size_t n)
{
    int sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    tl_buf_addc(b, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char hex[8];
        if (c == '\\' || c == (unsigned char)q) {
            tl_buf_addc(b, '\\');
            tl_buf_addc(b, (char)c);
        } else if (c == '\n' || c == '\r' || c == '\t') {
            tl_buf_addc(b, '\\');
            tl_buf_addc(b, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            tl_buf_adds(b, hex);
        } else {
            tl_buf_addc(b, (char)c);
        }
    }
    tl_buf_addc(b, q);
}

static void test_py_str_repr(void **state)
{
    (void)state;
    /* Python 3's repr() of these strings */
    static const char *const cases[][2] = {
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
         "'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>'"},
        {"it's a 16-byte b", "\"it's a 16-byte b\""},
        {"say \"hi\" and it's", "'say \"hi\" and it\\'s'"},
        {"tab\there\nnew\\slash\x7f\x01", "'tab\\there\\nnew\\\\slash\\x7f\\x01'"},
        {"caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 longer than sixteen bytes",
         "'caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 longer than sixteen bytes'"},
        {"", "''"},
    };
    tl_buf b = {0}, o = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_buf_clear(&b);
        tl_py_str_repr(&b, cases[i][0], strlen(cases[i][0]));
        assert_string_equal(tl_buf_cstr(&b), cases[i][1]);
    }
    /* every special byte at every offset of strings of 0..40 bytes, around the block
     * boundaries, against the byte-by-byte oracle */
    static const char special[] = {'\\', '\'', '"', '\n', '\r', '\t', 0x01, 0x1f, 0x7f, (char)0xc3, (char)0x80, 'x'};
    char s[48];
    for (size_t n = 0; n <= 40; n++)
        for (size_t at = 0; at < (n ? n : 1); at++)
            for (size_t k = 0; k < sizeof special; k++) {
                for (size_t q = 0; q < n; q++)
                    s[q] = (char)('a' + q % 26);
                if (n) {
                    s[at] = special[k];
                    s[n - 1 - (at * 7) % n] = special[(k + 3) % sizeof special]; /* a second one elsewhere */
                }
                tl_buf_clear(&b);
                tl_buf_clear(&o);
                tl_py_str_repr(&b, s, n);
                repr_oracle(&o, s, n);
                assert_int_equal(b.len, o.len);
                assert_memory_equal(b.data, o.data, o.len);
            }
    tl_buf_free(&b);
    tl_buf_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_kept),
        cmocka_unit_test(test_negative_durations),
        cmocka_unit_test(test_nonfinite_times),
        cmocka_unit_test(test_aux_records),
        cmocka_unit_test(test_names_last_wins),
        cmocka_unit_test(test_event_name_last_wins),
        cmocka_unit_test(test_tree_nesting),
        cmocka_unit_test(test_tree_bleed),
        cmocka_unit_test(test_tree_sorted_runs),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_links_last_write),
        cmocka_unit_test(test_links_by_place),
        cmocka_unit_test(test_external_id_key),
        cmocka_unit_test(test_links_second_array),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_times_exact),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_stream_file),
        cmocka_unit_test(test_conformance_trace),
        cmocka_unit_test(test_py_str_repr),
        cmocka_unit_test(test_gzip_file_ahead),
        cmocka_unit_test(test_size_hint),
        cmocka_unit_test(test_op_args_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
