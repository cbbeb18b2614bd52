/*
 * test_run_fuzz.c - fuzz/fuzz_run.c's seeds reach the comparison (test_regressions.c
 * replays them and the target's past findings).
 */
#include "testutil.h"

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_run.c"

static const char *top = ".";

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
        cmocka_unit_test(test_seed_compares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
