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
#include <sys/wait.h>

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_compare.c"
#include "../fuzz/fuzz_csv.c"
#include "../fuzz/fuzz_xlsx.c"
#include "../fuzz/fuzz_trace.c"
#include "../fuzz/fuzz_capture.c"
#include "../fuzz/fuzz_open.c"
#include "../fuzz/fuzz_run.c"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
