/*
 * test_runs_fold.c - a side's runs folded one at a time (tl_runs_fold) make the table their
 * collapse (tl_runs_collapse) makes of all of them at once, cell for cell and kind for kind:
 * rows a run lacks, metrics written as text, integer columns that the merge turns floating
 * point, columns some runs lack or type differently, runs without rows, and 200 random
 * sides of up to 40 runs (fixed seed).  Tables it cannot fold exactly are refused.
 */
#include "testtable.h"

#include "compare/runs.h"



/* a and b alike: the same CSV text, column names, types and roles, and cell kinds. */
static void assert_same(const tl_table *a, const tl_table *b)
{
    char *x = tt_as_csv(a), *y = tt_as_csv(b);
    if (strcmp(x, y) != 0)
        print_error("collapse:\n%s\nfold:\n%s\n", x, y);
    assert_string_equal(x, y);
    free(x);
    free(y);
    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->nrows, b->nrows);
    for (size_t c = 0; c < a->ncols; c++) {
        assert_string_equal(a->cols[c].name, b->cols[c].name);
        assert_int_equal(a->cols[c].type, b->cols[c].type);
        assert_int_equal(a->cols[c].role, b->cols[c].role);
        for (size_t r = 0; r < a->nrows; r++)
            assert_int_equal(a->cols[c].cells[r].kind, b->cols[c].cells[r].kind);
    }
}

static const char *k_name[] = {"name"};
static const char *d_metrics[] = {"t", "u"};

/* texts[0..k) collapsed at once and folded one by one: the same table. */
static void check_side(const char *const *texts, size_t k)
{
    tl_compare_spec spec = {"s", k_name, 1, d_metrics, 2, 0};
    tl_table **runs = tl_xcalloc(k, sizeof *runs);
    for (size_t i = 0; i < k; i++)
        runs[i] = tt_arena_csv(texts[i]);
    tl_error err = {0};
    int quiet = tl_quiet;
    tl_quiet = 1;
    tl_table *want = tl_runs_collapse(runs, k, "base", &spec, &tt_arena, &err);
    tl_quiet = quiet;
    assert_non_null(want);
    tl_runs_fold *f = tl_runs_fold_new("base", &spec, &tt_arena);
    for (size_t i = 0; i < k; i++) {
        tl_table *t = tt_arena_csv(texts[i]);
        assert_int_equal(tl_runs_fold_add(f, t, &err), 0);
        tl_table_free(t); /* the fold keeps nothing of it */
    }
    tl_table *got = tl_runs_fold_finish(f);
    assert_non_null(got);
    assert_same(want, got);
    tl_table_free(want);
    tl_table_free(got);
    free(runs);
}

static void test_cases(void **state)
{
    (void)state;
    /* rows some runs lack; repeated-free keys in any order; a metric as text */
    const char *a[] = {"name,t,note\nx,1,a\ny,10,b\n", "name,t,note\nz,7,d\nx,3,\n", "name,note,t\nx,f,2\ny,g,\"20\"\n"};
    check_side(a, 3);
    /* an integer column: floating point where a run lacks a row, or holds a float */
    const char *b[] = {"name,n,t\nx,1,1\ny,2,2\n", "name,n,t\nx,3,1\n", "name,n,t\nw,4,1\n"};
    check_side(b, 3);
    const char *c[] = {"name,n,t\nx,1,1\ny,2.5,2\n", "name,n,t\nx,3,1\ny,4,2\n"};
    check_side(c, 2);
    const char *c2[] = {"name,n,t\nx,1,1\ny,2,2\n", "name,n,t\nx,3,1\ny,4,2\n"};
    check_side(c2, 2);
    /* a column only later runs have, a column typed differently, a run without rows */
    const char *d[] = {"name,t\nx,1\n", "name,t,late,mixed\nx,2,9,1\ny,3,8,2\n", "name,t,mixed\n",
                       "name,t,mixed\ny,4,q\n"};
    check_side(d, 4);
    /* a run whose every other cell is missing does not count for its row */
    const char *e[] = {"name,t,u\nx,1,2\ny,,\n", "name,t,u\ny,5,6\n"};
    check_side(e, 2);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static unsigned next(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng >> 33) % n);
}

/* A random run: a random subset of 12 names in random order; columns t, u (metrics), n
 * (integers, sometimes a float), s (texts), in a random order; cells sometimes missing. */
static char *random_run(void)
{
    static const char *const cols[] = {"t", "u", "n", "s"};
    int order[4] = {0, 1, 2, 3}, ncols = 2 + (int)next(3);
    for (int i = 3; i > 0; i--) {
        int j = (int)next((unsigned)i + 1), x = order[i];
        order[i] = order[j], order[j] = x;
    }
    tl_buf b = {0};
    tl_buf_adds(&b, "name");
    for (int c = 0; c < ncols; c++)
        tl_buf_printf(&b, ",%s", cols[order[c]]);
    tl_buf_adds(&b, "\n");
    int names[12], nn = 0;
    for (int i = 0; i < 12; i++)
        if (next(3))
            names[nn++] = i;
    for (int i = nn - 1; i > 0; i--) {
        int j = (int)next((unsigned)i + 1), x = names[i];
        names[i] = names[j], names[j] = x;
    }
    for (int r = 0; r < nn; r++) {
        tl_buf_printf(&b, "op%02d", names[r]);
        for (int c = 0; c < ncols; c++) {
            tl_buf_adds(&b, ",");
            if (!next(6))
                continue; /* missing */
            switch (order[c]) {
            case 0: case 1: tl_buf_printf(&b, "%.6g", next(100000) / 7.0); break;
            case 2: next(8) ? tl_buf_printf(&b, "%u", next(1000)) : tl_buf_printf(&b, "%u.5", next(1000)); break;
            default: tl_buf_printf(&b, "s%u", next(5)); break;
            }
        }
        tl_buf_adds(&b, "\n");
    }
    return b.data;
}

static void test_random_sides(void **state)
{
    (void)state;
    for (int side = 0; side < 200; side++) {
        size_t k = 2 + next(39);
        char **texts = tl_xcalloc(k, sizeof *texts);
        for (size_t i = 0; i < k; i++)
            texts[i] = random_run();
        check_side((const char *const *)texts, k);
        for (size_t i = 0; i < k; i++)
            free(texts[i]);
        free(texts);
    }
}

/* What the fold cannot pair exactly as the merge would is refused, saying where. */
static void test_refused(void **state)
{
    (void)state;
    tl_compare_spec spec = {"ops_summary", k_name, 1, d_metrics, 2, 0};
    tl_error err = {0};
    tl_runs_fold *f = tl_runs_fold_new("a", &spec, &tt_arena);
    tl_table *t = tt_arena_csv("name,t\nx,1\n");
    assert_int_equal(tl_runs_fold_add(f, t, &err), 0);
    tl_table_free(t);
    t = tt_arena_csv("name,t\nx,1\ny,2\nx,3\n");
    assert_int_equal(tl_runs_fold_add(f, t, &err), -1);
    assert_non_null(strstr(err.msg, "sheet 'ops_summary' of a run 2: the key (x) repeats"));
    tl_table_free(t);
    tl_runs_fold_free(f);

    f = tl_runs_fold_new("a", &spec, &tt_arena);
    memset(&err, 0, sizeof err); /* an error keeps its first message */
    t = tt_arena_csv("name,t\n1,1\n2,2\n");
    assert_int_equal(tl_runs_fold_add(f, t, &err), -1);
    assert_non_null(strstr(err.msg, "sheet 'ops_summary' of a run 1: row 1's key 'name' is not a text"));
    tl_table_free(t);
    memset(&err, 0, sizeof err);
    t = tt_arena_csv("op,t\nx,1\n");
    assert_int_equal(tl_runs_fold_add(f, t, &err), -1);
    assert_non_null(strstr(err.msg, "no key column 'name'"));
    tl_table_free(t);
    assert_null(tl_runs_fold_finish(tl_runs_fold_new("a", &spec, &tt_arena)));
    tl_runs_fold_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cases, tt_arena_setup, tt_arena_teardown),
        cmocka_unit_test_setup_teardown(test_random_sides, tt_arena_setup, tt_arena_teardown),
        cmocka_unit_test_setup_teardown(test_refused, tt_arena_setup, tt_arena_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
