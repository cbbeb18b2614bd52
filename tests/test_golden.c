/*
 * test_golden.c - the project's own end-to-end cases, tests/golden/<case>/ (README.md
 * there): tlcompare ($TLCOMPARE) runs each case's `args` inside its folder, and
 *
 *   - every CSV it writes is byte for byte the expected one, and it writes no other;
 *   - the workbook holds a summary sheet and then one sheet per result, in the order of
 *     expected/order.txt, under the tabs write/tabname.h makes, each reading back (with
 *     the project's reader) to the values of the expected CSV;
 *   - a case with expected/status fails with that exit status, the message of
 *     expected/stderr, and leaves no output behind.
 *
 * So a fresh clone tests the whole path without the conformance suite.
 */
#include "testutil.h"

#include "read/csv_read.h"
#include "read/xlsx_read.h"
#include "write/tabname.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Format a path into array b, failing the test when it does not fit. */
#define PATHF(b, ...) assert_true(snprintf((b), sizeof(b), __VA_ARGS__) < (int)sizeof(b))

/* The text of a file (malloc'd, NUL-terminated), its length in *n; NULL when unreadable. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    tl_buf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        tl_buf_add(&b, chunk, k);
    fclose(f);
    *n = b.len;
    char *s = tl_xmalloc(b.len + 1);
    if (b.len)
        memcpy(s, b.data, b.len);
    s[b.len] = '\0';
    tl_buf_free(&b);
    return s;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Two cells hold the same value: numbers by value (the workbook reader, like pandas, gives
 * 100 for the CSV's "100.0"), the rest exactly. */
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

/* The CSV files of `dir`, sorted (malloc'd names); their count in *n. */
static char **csv_files(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) {
            TL_GROW(v, cap, *n + 1);
            v[(*n)++] = tl_xstrdup(e->d_name);
        }
    }
    closedir(d);
    for (size_t i = 1; i < *n; i++) /* a few dozen names: insertion sort */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The workbook against expected/: the tabs in order, each sheet's values. */
static void check_workbook(const char *name, const char *xlsx, const char *expected)
{
    char path[4096];
    size_t len;
    PATHF(path, "%s/order.txt", expected);
    char *order = slurp(path, &len);
    if (!order)
        fail_msg("%s: no expected/order.txt", name);
    char **results = NULL;
    size_t n = 0, cap = 0;
    for (char *line = strtok(order, "\n"); line; line = strtok(NULL, "\n")) {
        TL_GROW(results, cap, n + 1);
        results[n++] = tl_xstrdup(line);
    }
    free(order);

    tl_error err = {0};
    tl_arena arena;
    tl_arena_init(&arena);
    tl_xlsx *x = tl_xlsx_open(xlsx, &err);
    if (!x)
        fail_msg("%s: %s", name, err.msg);
    if (tl_xlsx_sheet_count(x) != n + 1)
        fail_msg("%s: the workbook has %zu sheets, expected a summary and %zu results", name,
                 tl_xlsx_sheet_count(x), n);
    assert_string_equal(tl_xlsx_sheet_name(x, 0), "summary");
    char **tabs = tl_tab_names((const char *const *)results, n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tl_xlsx_sheet_name(x, i + 1), tabs[i]) != 0)
            fail_msg("%s: sheet %zu is '%s', expected '%s'", name, i + 2, tl_xlsx_sheet_name(x, i + 1), tabs[i]);
        PATHF(path, "%s/%s.csv", expected, results[i]);
        tl_table *c = tl_csv_read_file(path, &arena, &err);
        if (!c)
            fail_msg("%s: %s", name, err.msg);
        tl_table *w = tl_xlsx_read_sheet(x, tabs[i], &arena, &err);
        if (!w)
            fail_msg("%s: %s", name, err.msg);
        if (w->ncols != c->ncols || w->nrows != c->nrows)
            fail_msg("%s, sheet '%s': %zu x %zu in the workbook, %zu x %zu expected", name, tabs[i], w->nrows,
                     w->ncols, c->nrows, c->ncols);
        for (size_t k = 0; k < c->ncols; k++) {
            if (strcmp(w->cols[k].name, c->cols[k].name) != 0)
                fail_msg("%s, sheet '%s': column %zu is '%s', expected '%s'", name, tabs[i], k + 1,
                         w->cols[k].name, c->cols[k].name);
            for (size_t r = 0; r < c->nrows; r++)
                if (!same_cell(&w->cols[k].cells[r], &c->cols[k].cells[r]))
                    fail_msg("%s, sheet '%s', column '%s', row %zu: not the expected value", name, tabs[i],
                             c->cols[k].name, r + 2);
        }
        tl_table_free(c);
        tl_table_free(w);
    }
    tl_tab_names_free(tabs, n);
    free_names(results, n);
    tl_xlsx_close(x);
    tl_arena_free(&arena);
}

/* Run one case; fails the test on the first difference. */
static void check_case(const char *tool, const char *dir, const char *name)
{
    char cdir[4096], expected[4096], path[4096], cmd[16384];
    size_t len;
    PATHF(cdir, "%s/%s", dir, name);
    PATHF(expected, "%s/expected", cdir);
    char *out = tt_tmpdir();
    /* The arguments split at white space, nothing quoted: as the conformance runner does. */
    PATHF(cmd, "cd '%s' && '%s' $(cat args) -o '%s/out.xlsx' --output_csvs_dir '%s/csvs' -q 2>'%s/stderr'",
          cdir, tool, out, out, out);
    int st = system(cmd);
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;

    PATHF(path, "%s/status", expected);
    char *want_status = slurp(path, &len);
    char got_path[4096], want_path[4096];
    if (want_status) {
        /* a failing case: that status, that message, nothing written */
        if (status != atoi(want_status))
            fail_msg("%s: exit status %d, expected %d", name, status, atoi(want_status));
        PATHF(want_path, "%s/stderr", expected);
        PATHF(got_path, "%s/stderr", out);
        char *want = slurp(want_path, &len), *got = slurp(got_path, &len);
        assert_non_null(want);
        assert_non_null(got);
        want[strcspn(want, "\n")] = '\0';
        if (!strstr(got, want))
            fail_msg("%s: stderr lacks '%s'; it says: %s", name, want, got);
        PATHF(got_path, "%s/out.xlsx", out);
        assert_false(exists(got_path));
        PATHF(got_path, "%s/csvs", out);
        assert_false(exists(got_path));
        free(want);
        free(got);
        free(want_status);
    } else {
        if (status != 0) {
            PATHF(got_path, "%s/stderr", out);
            char *got = slurp(got_path, &len);
            fail_msg("%s: exit status %d: %s", name, status, got ? got : "");
        }
        size_t nwant, ngot;
        char **want = csv_files(expected, &nwant);
        PATHF(got_path, "%s/csvs", out);
        char **got = csv_files(got_path, &ngot);
        assert_true(nwant > 0);
        for (size_t i = 0; i < nwant || i < ngot; i++) {
            if (i >= nwant || i >= ngot || strcmp(want[i], got[i]) != 0)
                fail_msg("%s: the CSV files differ from expected/ at '%s' / '%s'", name,
                         i < nwant ? want[i] : "(none)", i < ngot ? got[i] : "(none)");
            size_t na, nb;
            PATHF(want_path, "%s/%s", expected, want[i]);
            PATHF(got_path, "%s/csvs/%s", out, got[i]);
            char *a = slurp(want_path, &na), *b = slurp(got_path, &nb);
            assert_non_null(a);
            assert_non_null(b);
            if (na != nb || memcmp(a, b, na) != 0) {
                size_t k = 0;
                while (k < na && k < nb && a[k] == b[k])
                    k++;
                fail_msg("%s: %s differs from the expected one at byte %zu", name, want[i], k);
            }
            free(a);
            free(b);
        }
        free_names(want, nwant);
        free_names(got, ngot);
        PATHF(got_path, "%s/out.xlsx", out);
        check_workbook(name, got_path, expected);
    }
    tt_rmrf(out);
    free(out);
}

static void test_golden_cases(void **state)
{
    (void)state;
    const char *tool = getenv("TLCOMPARE"), *top = getenv("TL_TOP");
    if (!tool || !top)
        skip();
    char dir[4096];
    PATHF(dir, "%s/tests/golden", top);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t ncases = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char args[8192];
        PATHF(args, "%s/%s/args", dir, e->d_name);
        if (e->d_name[0] == '.' || !exists(args))
            continue;
        check_case(tool, dir, e->d_name);
        printf("golden: %s\n", e->d_name);
        ncases++;
    }
    closedir(d);
    assert_true(ncases >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cases),
    };
    return cmocka_run_group_tests_name("golden", tests, NULL, NULL);
}
