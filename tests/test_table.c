/*
 * test_table.c - the table model's own operations that the writers rely on: numbers
 * formatted once (tl_table_format_floats) read back exactly as tl_fmt_double writes them,
 * survive row reordering, and are dropped when the columns change.
 */
#include "testutil.h"

#include "base/numfmt.h"
#include "table/table.h"

#include <math.h>

static tl_table *float_table(size_t nrows)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    size_t a = tl_table_add_column(t, "mixed");
    size_t b = tl_table_add_column(t, "text");
    size_t c = tl_table_add_column(t, "floats");
    for (size_t r = 0; r < nrows; r++) {
        /* floats, ints, missing and strings interleaved; awkward doubles among them */
        static const double v[] = {0.1, 1e-05, 2764.172165254454, -0.0, 1e16, 5e-324, 1.7976931348623157e308,
                                   NAN, INFINITY, -INFINITY, 123456789012345680.0, 0.09218478672129195};
        double d = v[r % (sizeof v / sizeof *v)] * (r % 5 == 4 ? 3.0 : 1.0);
        t->cols[a].cells[r] = r % 3 == 0 ? tl_cell_int((int64_t)r) : r % 3 == 1 ? tl_cell_float(d) : tl_cell_missing();
        t->cols[b].cells[r] = tl_cell_str(r % 2 ? "x,y" : "plain");
        t->cols[c].cells[r] = tl_cell_float(d / (double)(r + 1));
    }
    return t;
}

/* Every float cell's text is tl_fmt_double's; other cells are untouched. */
static void check_texts(const tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++)
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *cell = &t->cols[c].cells[r];
            if (cell->kind != TL_FLOAT)
                continue;
            char want[TL_NUMFMT_MAX];
            size_t wn = tl_fmt_double(cell->v.f, want), n = 0;
            const char *got = tl_float_text(t, c, cell, &n);
            assert_non_null(got);
            assert_int_equal(n, wn);
            assert_memory_equal(got, want, n);
        }
}

static void test_format_floats(void **state)
{
    (void)state;
    tl_table *t = float_table(1000);
    size_t n;
    assert_null(tl_float_text(t, 0, &t->cols[0].cells[1], &n)); /* not formatted yet */
    tl_table_format_floats(t);
    assert_non_null(t->float_texts);
    assert_null(t->float_texts[1]); /* a column without floats has no texts */
    check_texts(t);
    const char *got = tl_float_text(t, 2, &t->cols[2].cells[0], &n);
    assert_int_equal(n, 3);
    assert_memory_equal(got, "0.1", 3);
    tl_table_format_floats(t); /* again: nothing changes */
    check_texts(t);

    /* reordering rows keeps them: each cell carries its own offset */
    size_t rows[] = {999, 3, 3, 0, 500};
    tl_table_take_rows(t, rows, 5);
    assert_non_null(t->float_texts);
    check_texts(t);

    /* changing the columns drops them */
    tl_table_remove_column(t, 1);
    assert_null(t->float_texts);
    tl_table_format_floats(t);
    check_texts(t);
    tl_table_add_column(t, "new");
    assert_null(t->float_texts);
    tl_table_free(t);
}

static void test_format_empty(void **state)
{
    (void)state;
    tl_table *t = tl_table_new();
    tl_table_format_floats(t); /* no columns, no rows */
    tl_table_free(t);
    t = float_table(0);
    tl_table_format_floats(t);
    check_texts(t);
    tl_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_floats),
        cmocka_unit_test(test_format_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
