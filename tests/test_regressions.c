/*
 * test_regressions.c - every input a fuzzer ever failed on, and every seed, replayed
 * through the fuzz targets themselves, so that every crash found stays a regression
 * test.
 *
 * The three targets of fuzz/ are compiled in here (without libFuzzer's entry point), so
 * an input runs exactly the code it ran under the fuzzer, with the targets' own checks;
 * under `make sanitize-test` with ASan + UBSan as well.  The inputs are the files of
 * fuzz/regressions/<target>/ (kept once the bug they found was fixed) and of
 * fuzz/corpus/<target>/ (the seeds).  Each runs in a child process, so that a crash is
 * reported with the name of the input that caused it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, in fuzz_xlsx.c */
#endif
#include "testutil.h"

#include <dirent.h>
#include <time.h>
#include <sys/wait.h>

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_compare.c"
#include "../fuzz/fuzz_csv.c"
#include "../fuzz/fuzz_xlsx.c"
#include "../fuzz/fuzz_trace.c"
#include "../fuzz/fuzz_capture.c"
#include "../fuzz/fuzz_open.c"
#include "../fuzz/fuzz_run.c"
#include "../fuzz/fuzz_ranks.c"

static const char *top = ".";

typedef int (*target_fn)(const uint8_t *, size_t);

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every file of <top>/fuzz/<kind>/<target>/ through `fn`; returns how many. */
static size_t replay_dir(const char *kind, const char *target, target_fn fn)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fuzz/%s/%s", top, kind, target);
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* no regressions for this target (yet) */
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);

    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t cap = 1 << 16, len = 0, got;
        uint8_t *data = malloc(cap);
        while ((got = fread(data + len, 1, cap - len, f)) > 0)
            if ((len += got) == cap)
                data = realloc(data, cap *= 2);
        fclose(f);

        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            fn(data, len);
            exit(0); /* exit, not _exit: the targets' atexit clean-up, and leak checks */
        }
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
            fail_msg("fuzz_%s failed on %s (%s %d)", target, path,
                     WIFEXITED(ws) ? "exit status" : "signal", WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
        free(data);
        free(names[i]);
    }
    free(names);
    return n;
}

static void replay(const char *target, target_fn fn)
{
    size_t seeds = replay_dir("corpus", target, fn);
    size_t regressions = replay_dir("regressions", target, fn);
    /* the seeds are part of the tree: finding none means the path is wrong */
    assert_true(seeds > 0);
    print_message("fuzz_%s: %zu seeds, %zu regressions replayed\n", target, seeds, regressions);
}

static void test_replay_csv(void **state)
{
    (void)state;
    replay("csv", tl_fuzz_csv);
}

static void test_replay_xlsx(void **state)
{
    (void)state;
    replay("xlsx", tl_fuzz_xlsx);
}

static void test_replay_compare(void **state)
{
    (void)state;
    replay("compare", tl_fuzz_compare);
}

static void test_replay_trace(void **state)
{
    (void)state;
    replay("trace", tl_fuzz_trace);
}

static void test_replay_capture(void **state)
{
    (void)state;
    replay("capture", tl_fuzz_capture);
}

static void test_replay_open(void **state)
{
    (void)state;
    replay("open", tl_fuzz_open);
}

static void test_replay_run(void **state)
{
    (void)state;
    replay("run", tl_fuzz_run);
}

static void test_replay_ranks(void **state)
{
    (void)state;
    replay("ranks", tl_fuzz_ranks);
}

/* A trace with one op and its kernel, the op's shape arguments `args` (JSON). */
static char *one_op_trace(const char *name, const char *args)
{
    tl_buf b = {0};
    tl_buf_adds(&b, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"");
    tl_buf_adds(&b, name);
    tl_buf_adds(&b, "\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 20, \"args\": {");
    tl_buf_adds(&b, args);
    tl_buf_adds(&b, "}}, {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": 2, \"dur\": 2, \"args\": {\"correlation\": 1}}, "
                    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 2}, "
                    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 30, "
                    "\"bp\": \"e\"}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 30, "
                    "\"dur\": 5, \"args\": {\"correlation\": 1, \"stream\": 7}}]}");
    return b.data;
}

/* The sanitizers' slowdown, which a time bound carries (ASan + UBSan: up to twentyfold). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER_SLOWDOWN 20
#else
#define SANITIZER_SLOWDOWN 1
#endif

/* Run the trace target on `text` in a child; fails when it crashes, breaks an invariant or
 * takes longer than `seconds` (a hang: the work takes milliseconds; times the sanitizers'
 * slowdown). */
static void trace_target_within(const char *what, const char *text, double seconds)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tl_fuzz_trace((const uint8_t *)text, strlen(text));
        exit(0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        fail_msg("fuzz_trace failed on %s (%s %d)", what, WIFEXITED(ws) ? "exit status" : "signal",
                 WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
    if (took > seconds * SANITIZER_SLOWDOWN)
        fail_msg("fuzz_trace took %.1f s on %s (at most %.0f)", took, what, seconds * SANITIZER_SLOWDOWN);
    print_message("fuzz_trace: %s in %.2f s\n", what, took);
}

/* Shape arguments are the trace author's: a million-entry Input Dims (one tensor of a
 * million dimensions, a million tensors), dimensions past 2^63 and products that overflow
 * go through the loader and every perf model without a crash, in bounded time (the
 * target's invariants hold; an op that does not fit its model only loses its row). */
static void test_trace_hostile_shapes(void **state)
{
    (void)state;
    enum { N = 1000000 };
    /* the skeleton links the op to its kernel, so that the models see it: with sane shapes
     * the op gets its GEMM row */
    char *ok = one_op_trace("aten::mm", "\"Input Dims\": [[4, 8], [8, 2]], \"Input type\": [\"float\", \"float\"]");
    tl_error err = {0};
    tl_trace *tr = tl_trace_load_mem(ok, strlen(ok), "ok.json", &err);
    assert_non_null(tr);
    tl_arena arena;
    tl_arena_init(&arena);
    tl_results res = {0};
    assert_int_equal(tl_perf_report_sheets(tr, NULL, &arena, &res, &err), 0);
    int gemm = 0;
    for (size_t i = 0; i < res.n; i++)
        gemm |= strcmp(res.items[i].name, "GEMM") == 0 && res.items[i].nrows == 1;
    assert_true(gemm);
    tl_results_free(&res);
    tl_arena_free(&arena);
    tl_trace_free(tr);
    free(ok);
    tl_buf d = {0};
    tl_buf_adds(&d, "\"Input Dims\": [[");
    for (int i = 0; i < N; i++)
        tl_buf_adds(&d, i ? ", 1" : "1");
    tl_buf_adds(&d, "], [8, 2]], \"Input type\": [\"float\", \"float\"]");
    static const char *const ops[] = {"aten::mm", "aten::add", "aten::native_layer_norm", "aten::sum",
                                      "aten::convolution", "aten::_scaled_dot_product_flash_attention"};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        char *t = one_op_trace(ops[o], d.data);
        char what[128];
        snprintf(what, sizeof what, "%s with a 10^6-dimension tensor", ops[o]);
        trace_target_within(what, t, 60);
        free(t);
    }
    tl_buf_clear(&d);
    tl_buf_adds(&d, "\"Input Dims\": [");
    for (int i = 0; i < N; i++)
        tl_buf_adds(&d, i ? ", [4, 8]" : "[4, 8]");
    tl_buf_adds(&d, "], \"Input type\": [\"float\"]");
    for (size_t o = 0; o < 2; o++) {
        char *t = one_op_trace(ops[o], d.data);
        char what[128];
        snprintf(what, sizeof what, "%s with 10^6 tensors", ops[o]);
        trace_target_within(what, t, 60);
        free(t);
    }
    static const char *const edges[] = {
        "\"Input Dims\": [[9223372036854775807, 4], [4, 9223372036854775807]], \"Input type\": [\"float\", \"float\"]",
        "\"Input Dims\": [[9223372036854775808, 4], [4, 2]], \"Input type\": [\"float\", \"float\"]",
        "\"Input Dims\": [[-9223372036854775808, 4], [4, -1]], \"Input type\": [\"float\", \"float\"]",
        "\"Input Dims\": [[4294967296, 4294967296], [4294967296, 4294967296]], \"Input type\": [\"float\", \"float\"]",
    };
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++)
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
            char *t = one_op_trace(ops[o], edges[e]);
            char what[160];
            snprintf(what, sizeof what, "%s with edge dimensions %zu", ops[o], e);
            trace_target_within(what, t, 20);
            free(t);
        }
    tl_buf_free(&d);
}

int main(void)
{
    const char *t = getenv("TL_TOP");
    if (t && *t)
        top = t;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_csv),
        cmocka_unit_test(test_replay_xlsx),
        cmocka_unit_test(test_replay_compare),
        cmocka_unit_test(test_replay_trace),
        cmocka_unit_test(test_replay_capture),
        cmocka_unit_test(test_replay_open),
        cmocka_unit_test(test_replay_run),
        cmocka_unit_test(test_replay_ranks),
        cmocka_unit_test(test_trace_hostile_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
