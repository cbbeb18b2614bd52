/*
 * test_tabname.c - worksheet names Excel accepts (write/tabname.h): the 31-unit limit in
 * UTF-16 units, forbidden and control characters, apostrophes at either end, case-blind
 * uniqueness, "History"; and end to end, the tabs of a comparison whose tags hold such
 * characters, with the CSV files keeping the full result names.
 */
#include "testutil.h"

#include "base/arena.h"
#include "base/util.h"
#include "read/xlsx_read.h"
#include "write/tabname.h"

#include <sys/stat.h>

#define EMOJI "\xF0\x9F\x98\x80" /* U+1F600: 4 bytes of UTF-8, 2 units of UTF-16 */

/* UTF-16 units of UTF-8 text s (valid). */
static size_t utf16_units(const char *s)
{
    size_t n = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
        if ((*u & 0xC0) != 0x80)
            n++;
        if (*u >= 0xF0)
            n++; /* a 4-byte sequence: a surrogate pair */
    }
    return n;
}

static char *repeat(const char *prefix, const char *unit, size_t times)
{
    tl_buf b = {0};
    tl_buf_adds(&b, prefix);
    for (size_t i = 0; i < times; i++)
        tl_buf_adds(&b, unit);
    char *out = strdup(tl_buf_cstr(&b));
    tl_buf_free(&b);
    return out;
}

static void test_cut_in_utf16_units(void **state)
{
    (void)state;
    char *forty = repeat("", EMOJI, 40), *tagged = repeat("ops_", EMOJI, 40);
    const char *names[] = {forty, tagged};
    char **tabs = tl_tab_names(names, 2);
    /* 15 emoji are 30 units; a 16th would make 32 */
    assert_int_equal(utf16_units(tabs[0]), 30);
    assert_int_equal(strlen(tabs[0]), 15 * 4);
    /* "ops_" and 13 emoji: 30 units */
    assert_int_equal(utf16_units(tabs[1]), 30);
    assert_int_equal(strlen(tabs[1]), 4 + 13 * 4);
    tl_tab_names_free(tabs, 2);

    /* a taken name's suffix never splits a character either: 14 emoji and "~2" */
    const char *twice[] = {forty, forty};
    tabs = tl_tab_names(twice, 2);
    assert_int_equal(strlen(tabs[1]), 14 * 4 + 2);
    assert_string_equal(tabs[1] + 14 * 4, "~2");
    assert_true(utf16_units(tabs[1]) <= TL_TAB_MAX);
    tl_tab_names_free(tabs, 2);
    free(forty);
    free(tagged);
}

static void test_apostrophes_controls_and_bad_bytes(void **state)
{
    (void)state;
    const char *names[] = {
        "GEMM_intersect_bob'",                  /* a tag ending in an apostrophe */
        "'quoted",                              /* one starting with it */
        "abcdefghijklmnopqrstuvwxyz1234'5678",  /* the cut leaves one at the end */
        "GEMM_intersect_a\nb\tc\rd\x7f" "e",     /* controls from a tag */
        "ops_\xC2\x85x",                        /* a C1 control (NEL) */
        "a\xFF" "b\xC3",                        /* bytes that are not UTF-8 */
        "",
    };
    char **tabs = tl_tab_names(names, 7);
    assert_string_equal(tabs[0], "GEMM_intersect_bob_");
    assert_string_equal(tabs[1], "_quoted");
    assert_string_equal(tabs[2], "abcdefghijklmnopqrstuvwxyz1234_");
    assert_string_equal(tabs[3], "GEMM_intersect_a_b_c_d_e");
    assert_string_equal(tabs[4], "ops__x");
    assert_string_equal(tabs[5], "a_b_");
    assert_string_equal(tabs[6], "_");
    tl_tab_names_free(tabs, 7);
}

static void test_unique_without_case(void **state)
{
    (void)state;
    const char *names[] = {
        "GEMM_intersect_\xC3\x89t\xC3\xA9",  /* Été */
        "gemm_INTERSECT_\xC3\xA9T\xC3\x89",  /* éTÉ: the same to Excel */
        "ops_\xD0\x9C\xD0\x98",              /* МИ */
        "ops_\xD0\xBC\xD0\xB8",              /* ми */
        "History",                           /* Excel reserves it */
        "ops_summary",
        "OPS_SUMMARY",
    };
    char **tabs = tl_tab_names(names, 7);
    assert_string_equal(tabs[0], names[0]);
    assert_string_equal(tabs[1], "gemm_INTERSECT_\xC3\xA9T\xC3\x89~2");
    assert_string_equal(tabs[2], names[2]);
    assert_string_equal(tabs[3], "ops_\xD0\xBC\xD0\xB8~2");
    assert_string_equal(tabs[4], "History~2");
    assert_string_equal(tabs[5], "ops_summary");
    assert_string_equal(tabs[6], "OPS_SUMMARY~2");
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < i; j++)
            assert_false(tl_tab_same(tabs[i], tabs[j]));
    tl_tab_names_free(tabs, 7);
    assert_true(tl_tab_same("\xC3\x85sa", "\xC3\xA5SA"));
    assert_false(tl_tab_same("abc", "abd"));
    assert_false(tl_tab_same("ab", "abc"));
}

/* The workbook of a comparison whose variant tag holds a newline, an apostrophe at its
 * end and emoji: every tab valid and unique, the CSVs named in full. */
static void test_tabs_of_a_comparison(void **state)
{
    (void)state;
    const char *tl = getenv("TLCOMPARE"), *top = getenv("TL_TOP");
    if (!tl || !top)
        skip();
    char *dir = tt_tmpdir();
    char tag[256];
    snprintf(tag, sizeof tag, "run" EMOJI EMOJI EMOJI EMOJI EMOJI EMOJI EMOJI EMOJI EMOJI EMOJI "'");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' '%s/examples/baseline' '%s/examples/candidate' --names base \"$(printf 'x\\ny')%s\" "
             "-o out.xlsx --output_csvs_dir csvs -q 2>err.txt",
             dir, tl, top, top, tag);
    int rc = system(cmd);
    char path[4096];
    if (rc != 0) {
        /* --names may refuse control characters: then the tag without the newline */
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && '%s' '%s/examples/baseline' '%s/examples/candidate' --names base \"xy%s\" "
                 "-o out.xlsx --output_csvs_dir csvs -q",
                 dir, tl, top, top, tag);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(path, sizeof path, "%s/out.xlsx", dir);
    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open(path, &err);
    if (!x)
        fail_msg("%s", err.msg);
    size_t n = tl_xlsx_sheet_count(x), split = 0;
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++) {
        const char *s = tl_xlsx_sheet_name(x, i);
        assert_true(utf16_units(s) >= 1 && utf16_units(s) <= TL_TAB_MAX);
        assert_null(strpbrk(s, "[]:*?/\\\n\r\t"));
        assert_true(s[0] != '\'' && s[strlen(s) - 1] != '\'');
        for (size_t j = 0; j < i; j++)
            assert_false(tl_tab_same(s, tl_xlsx_sheet_name(x, j)));
        split += strstr(s, "_only_variant_") != NULL;
    }
    assert_true(split > 0);
    tl_xlsx_close(x);
    /* a CSV keeps the result's full name, the tag whole (its last emoji and apostrophe) */
    snprintf(path, sizeof path, "%s/csvs/ops_unique_args_intersect_%sy%s.csv", dir, rc == 0 ? "x\n" : "x", tag);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_in_utf16_units),
        cmocka_unit_test(test_apostrophes_controls_and_bad_bytes),
        cmocka_unit_test(test_unique_without_case),
        cmocka_unit_test(test_tabs_of_a_comparison),
    };
    return cmocka_run_group_tests_name("tabname", tests, NULL, NULL);
}
