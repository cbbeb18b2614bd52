/*
 * test_roundtrip.c - the workbook tlcompare writes, read back with the project's own
 * reader, holds exactly what the CSV directory of the same run holds: every result
 * sheet, in order, with the same header and the same values.
 *
 * Runs the real binary ($TLCOMPARE) on the bundled examples ($TL_TOP/examples), in both
 * input formats and with three reports, so the whole path (read, compare, stream, write)
 * is covered.
 */
#include "testutil.h"

#include "read/csv_read.h"
#include "read/xlsx_read.h"
#include "write/xlsx_write.h"

#include <math.h>
#include <sys/wait.h>

static const char *top(void)
{
    const char *t = getenv("TL_TOP");
    return t ? t : ".";
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Two cells hold the same value: numbers by value (the CSV keeps "100.0" a float where
 * the workbook reader, like pandas, gives the integer 100), the rest exactly. */
static int same_cell(const tl_cell *a, const tl_cell *b)
{
    if (tl_cell_is_number(a) && tl_cell_is_number(b) && a->kind != TL_BOOL && b->kind != TL_BOOL)
        return tl_cell_number(a) == tl_cell_number(b);
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case TL_MISSING: return 1;
    case TL_BOOL: return a->v.b == b->v.b;
    case TL_STR: return strcmp(a->v.s, b->v.s) == 0;
    default: return 0;
    }
}

/* Compare the workbook `xlsx` with the CSV directory `dir` for the sheets listed in the
 * run's stdout ("Wrote sheet 'NAME' ..."), in that order. */
static void check_run(const char *xlsx, const char *dir, const char *log)
{
    tl_arena arena;
    tl_arena_init(&arena);
    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open(xlsx, &err);
    if (!x)
        fail_msg("%s", err.msg);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[512];
    char *names[512];
    size_t nsheets = 0;
    while (fgets(line, sizeof line, f)) {
        char name[256];
        if (sscanf(line, "Wrote sheet '%255[^']'", name) == 1 && nsheets < 512)
            names[nsheets++] = strdup(name);
    }
    fclose(f);
    /* the summary sheet leads the workbook; the results follow in order, under their tabs */
    assert_string_equal(tl_xlsx_sheet_name(x, 0), "summary");
    char **tabs = tl_tab_names((const char *const *)names, nsheets);
    for (size_t i = 0; i < nsheets; i++) {
        const char *name = names[i];
        char path[2048];
        snprintf(path, sizeof path, "%s/%s.csv", dir, name);
        tl_table *c = tl_csv_read_file(path, &arena, &err);
        if (!c)
            fail_msg("%s", err.msg);
        const char *sheet = tl_xlsx_sheet_name(x, i + 1);
        assert_non_null(sheet);
        assert_string_equal(sheet, tabs[i]);
        tl_table *w = tl_xlsx_read_sheet(x, sheet, &arena, &err);
        if (!w)
            fail_msg("%s", err.msg);
        assert_int_equal(w->ncols, c->ncols);
        assert_int_equal(w->nrows, c->nrows);
        for (size_t k = 0; k < c->ncols; k++) {
            assert_string_equal(w->cols[k].name, c->cols[k].name);
            for (size_t r = 0; r < c->nrows; r++)
                if (!same_cell(&w->cols[k].cells[r], &c->cols[k].cells[r]))
                    fail_msg("%s, column '%s', row %zu differs between the workbook and the CSV", name,
                             c->cols[k].name, r + 1);
        }
        tl_table_free(c);
        tl_table_free(w);
    }
    tl_tab_names_free(tabs, nsheets);
    for (size_t i = 0; i < nsheets; i++)
        free(names[i]);
    assert_true(nsheets > 10);
    assert_int_equal(tl_xlsx_sheet_count(x), nsheets + 1);
    tl_xlsx_close(x);
    tl_arena_free(&arena);
}

static void roundtrip(const char *args)
{
    const char *tool = getenv("TLCOMPARE");
    assert_non_null(tool);
    char *dir = tt_tmpdir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s -v -o '%s/out.xlsx' --output_csvs_dir '%s/csvs' >'%s/log' 2>/dev/null",
             top(), tool, args, dir, dir, dir);
    assert_int_equal(run(cmd), 0);
    char xlsx[1024], csvs[1024], log[1024];
    snprintf(xlsx, sizeof xlsx, "%s/out.xlsx", dir);
    snprintf(csvs, sizeof csvs, "%s/csvs", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    check_run(xlsx, csvs, log);
    tt_rmrf(dir);
    free(dir);
}

static void test_csv_reports(void **state)
{
    (void)state;
    roundtrip("examples/baseline examples/candidate");
}

static void test_xlsx_reports(void **state)
{
    (void)state;
    roundtrip("examples/baseline.xlsx examples/candidate.xlsx");
}

static void test_three_reports_mixed(void **state)
{
    (void)state;
    roundtrip("examples/baseline examples/candidate.xlsx examples/baseline.xlsx --names a b c");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_reports),
        cmocka_unit_test(test_xlsx_reports),
        cmocka_unit_test(test_three_reports_mixed),
    };
    return cmocka_run_group_tests_name("roundtrip", tests, NULL, NULL);
}
