/*
 * test_run_fuzz.c - fuzz/fuzz_run.c's seeds reach the comparison (test_regressions.c
 * replays them and the target's past findings).
 */
#include "testutil.h"

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_run.c"

static const char *top = ".";

/* The two reports the fuzz target makes of seed fuzz/corpus/run/<seed>, read into
 * buf[cap] (which the reports may point into: the caller keeps it). */
static void seed_reports(const char *seed, uint8_t *buf, size_t cap, tl_report reps[2])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/corpus/run/%s", top, seed);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    runfz_in in = {buf, n, 1};
    memset(reps, 0, 2 * sizeof *reps);
    assert_int_equal(runfz_report(&in, &reps[0], 0), 0);
    assert_int_equal(runfz_report(&in, &reps[1], 1), 0);
}

/* The seeds compare: two reports of gpu_timeline and ops_summary give results (not just
 * errors), so that the fuzzer starts from runs that reach the summary and the gate. */
static void test_seed_compares(void **state)
{
    (void)state;
    uint8_t buf[8192];
    tl_report reps[2];
    seed_reports("two_reports", buf, sizeof buf, reps);
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

/* The runs seed: the first report's sheets of runs reach the page (its heatmap, every
 * cell; the stragglers' rows by rank), so that the fuzzer starts from pages that have one. */
static void test_seed_runs_page(void **state)
{
    (void)state;
    uint8_t buf[8192];
    tl_report reps[2];
    seed_reports("runs_page", buf, sizeof buf, reps);
    const char *names[2] = {"report1", "report2"};
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.inputs = names;
    o.ninputs = 2;
    o.given = reps;
    tl_arena arena;
    tl_arena_init(&arena);
    tl_results extra = {0};
    runfz_extra(&reps[0], &arena, &extra);
    assert_int_equal(extra.n, 2);
    o.extra = &extra;
    tl_comparison c;
    assert_int_equal(tl_compare_run(&o, &c), TL_RUN_OK);
    tl_buf page = {0};
    tl_comparison_html(&c, &page);
    const char *html = tl_buf_cstr(&page);
    size_t cells = 0;
    for (const char *p = strstr(html, "<g class=\"hm mark\""); p; p = strstr(p + 1, "<g class=\"hm mark\""))
        cells++;
    assert_int_equal(cells, 4 * 3 * 3);
    assert_non_null(strstr(html, "data-panel=\"1\" data-row=\"2\" data-col=\"2\" data-v=\"0\""));
    assert_non_null(strstr(html, "data-panel=\"1\" data-row=\"3\" data-col=\"2\" data-v=\"5700\""));
    assert_non_null(strstr(html, "<td>report2 rank 2</td>"));
    tl_buf_free(&page);
    tl_comparison_free(&c);
    for (size_t i = 0; i < extra.n; i++)
        assert_null(extra.items[i].table); /* the run took them */
    free(extra.items);
    tl_arena_free(&arena);
}

int main(void)
{
    const char *t = getenv("TL_TOP");
    if (t && *t)
        top = t;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_compares),
        cmocka_unit_test(test_seed_runs_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
