/*
 * test_xlsx_write.c - worksheet names (31 characters, collisions) and the workbook writer.
 */
#include "testutil.h"

#include "util.h"
#include "xlsx_write.h"

static void test_short_names_unchanged(void **state)
{
    (void)state;
    const char *names[] = {"gpu_timeline", "ops_summary"};
    char **tabs = tl_tab_names(names, 2);
    assert_string_equal(tabs[0], "gpu_timeline");
    assert_string_equal(tabs[1], "ops_summary");
    tl_tab_names_free(tabs, 2);
}

static void test_cut_and_collisions(void **state)
{
    (void)state;
    const char *names[] = {
        "unified_perf_summary_intersect_mi300x_long",     /* cut to 31 */
        "unified_perf_summary_intersect_mi300x_longer",   /* same cut: ~2 */
        "unified_perf_summary_intersect_mi300x_longest",  /* same cut: ~3 */
        "UNIFIED_PERF_SUMMARY_INTERSECT_MI300X_LONG_CAPS" /* Excel ignores case: ~4 */
    };
    char **tabs = tl_tab_names(names, 4);
    assert_string_equal(tabs[0], "unified_perf_summary_intersect_");
    assert_int_equal(strlen(tabs[0]), 31);
    assert_string_equal(tabs[1], "unified_perf_summary_intersec~2");
    assert_string_equal(tabs[2], "unified_perf_summary_intersec~3");
    assert_string_equal(tabs[3], "UNIFIED_PERF_SUMMARY_INTERSEC~4");
    tl_tab_names_free(tabs, 4);
}

static void test_cut_counts_characters_and_forbidden_characters(void **state)
{
    (void)state;
    const char *names[] = {"GEMM_intersect_\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5"
                           "\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5x",
                           "a/b[c]:d*e?f\\g"};
    char **tabs = tl_tab_names(names, 2);
    /* 15 ASCII + 16 two-byte characters = 31 characters, 47 bytes */
    assert_int_equal(strlen(tabs[0]), 47);
    assert_string_equal(tabs[1], "a_b_c__d_e_f_g");
    tl_tab_names_free(tabs, 2);
}

static void test_path_stem(void **state)
{
    (void)state;
    const char *cases[][2] = {{"runs/base.xlsx", "base"}, {"out/h100_csvs/", "h100_csvs"},
                              {"h100", "h100"},          {"a/b.c.d", "b.c"},
                              {".hidden", ".hidden"},    {"dir//", "dir"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = tl_path_stem(cases[i][0]);
        assert_string_equal(s, cases[i][1]);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_names_unchanged),
        cmocka_unit_test(test_cut_and_collisions),
        cmocka_unit_test(test_cut_counts_characters_and_forbidden_characters),
        cmocka_unit_test(test_path_stem),
    };
    return cmocka_run_group_tests_name("xlsx_write", tests, NULL, NULL);
}
