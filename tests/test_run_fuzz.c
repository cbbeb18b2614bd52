/*
 * test_run_fuzz.c - every seed and past finding of fuzz/fuzz_run.c (the run layer as the
 * Python module calls it) replayed through the fuzzer's own code, so that `make test`
 * (and its sanitizer build) keeps them fixed.
 */
#include "testutil.h"

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_run.c"

#include <dirent.h>

static const char *top = ".";

static size_t replay_dir(const char *sub)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fuzz/%s/run", top, sub);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        tl_buf b = {0};
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
            tl_buf_add(&b, chunk, k);
        fclose(f);
        assert_int_equal(tl_fuzz_run((const uint8_t *)(b.data ? b.data : ""), b.len), 0);
        tl_buf_free(&b);
        n++;
    }
    closedir(d);
    return n;
}

static void test_replay_run(void **state)
{
    (void)state;
    size_t seeds = replay_dir("corpus"), regressions = replay_dir("regressions");
    assert_true(seeds > 0);
    print_message("fuzz_run: %zu seeds, %zu regressions replayed\n", seeds, regressions);
}

/* The seeds compare: two reports of gpu_timeline and ops_summary give results (not just
 * errors), so that the fuzzer starts from runs that reach the summary and the gate. */
static void test_seed_compares(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/corpus/run/two_reports", top);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    runfz_in in = {buf, n, 1};
    tl_report reps[2];
    memset(reps, 0, sizeof reps);
    assert_int_equal(runfz_report(&in, &reps[0], 0), 0);
    assert_int_equal(runfz_report(&in, &reps[1], 1), 0);
    const char *names[2] = {"a", "b"};
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.inputs = names;
    o.ninputs = 2;
    o.given = reps;
    tl_comparison c;
    assert_int_equal(tl_compare_run(&o, &c), TL_RUN_OK);
    assert_true(c.results->n >= 2);
    assert_string_equal(c.results->items[0].name, "gpu_timeline");
    tl_comparison_free(&c);
}

int main(void)
{
    const char *t = getenv("TL_TOP");
    if (t && *t)
        top = t;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_run),
        cmocka_unit_test(test_seed_compares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
