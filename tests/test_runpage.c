/*
 * test_runpage.c - the page's parts of runs and steps (run/page.h) on hand-made sheets: the
 * heatmap's cells are the sheets' cells, the stragglers' rows placed by their rank whatever
 * their order, missing columns and ranks out of range left empty (never read past), and a
 * comparison without runs or steps adds nothing.
 */
#include "testutil.h"

#include "run/dist.h"
#include "run/page.h"
#include "table/table.h"

#include <math.h>

/* A table of `nrows` rows with columns names[0..ncols), cell (r, c) = v[r * ncols + c]
 * (NaN: missing). */
static tl_table *table(const char *const *names, size_t ncols, size_t nrows, const double *v)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    for (size_t c = 0; c < ncols; c++) {
        tl_table_add_column(t, names[c]);
        for (size_t r = 0; r < nrows; r++)
            if (!isnan(v[r * ncols + c]))
                t->cols[c].cells[r] = tl_cell_float(v[r * ncols + c]);
    }
    return t;
}

static const char *const kRanks[] = {"rank", "busy_time_ms::a", "busy_time_ms::b", "busy_time_ms__b_diff",
                                     "exposed_comm_time_ms::a", "exposed_comm_time_ms::b",
                                     "exposed_comm_time_ms__b_diff", "computation_time_ms::a", "computation_time_ms::b",
                                     "total_time_ms::a", "total_time_ms::b"};
enum { NR = sizeof kRanks / sizeof *kRanks };

static tl_table *ranks_sheet(void)
{
    const double v[3 * NR] = {0, 8, 9, 1, 0.5, 0.25, -0.25, 6, 6, 12, 13,
                              1, 8, 8, 0, 0.5, 0.5, 0, 6, 6, 12, 12,
                              2, 7, 10, 3, 0.5, 2, 1.5, 6, NAN, 12, 16};
    return table(kRanks, NR, 3, v);
}

/* stragglers keyed by rank, out of order, one rank out of range and one missing */
static tl_table *stragglers_sheet(void)
{
    static const char *const names[] = {"rank", "a::mean_wait_time_us", "b::mean_wait_time_us",
                                        "mean_wait_time_us__b_diff"};
    const double v[3 * 4] = {2, 10, 0, -10,
                             7, 99, 99, 0,
                             0, 5, 300, 295};
    return table(names, 4, 3, v);
}

static void test_heatmap_from_the_sheets(void **state)
{
    (void)state;
    tl_run_page p;
    tl_run_page_init(&p);
    tl_result r1 = {TL_DIST_SHEET_RANKS, ranks_sheet(), NULL, 3, NR, NULL};
    tl_result r2 = {TL_DIST_SHEET_STRAGGLERS, stragglers_sheet(), NULL, 3, 4, NULL};
    tl_result other = {"ops_summary", ranks_sheet(), NULL, 3, NR, NULL};
    tl_run_page_observe(&p, &other);
    tl_run_page_observe(&p, &r1);
    tl_run_page_observe(&p, &r2);
    /* the sheets may be freed once passed: the page keeps copies */
    tl_table_free(r1.table);
    tl_table_free(r2.table);
    tl_table_free(other.table);
    tl_page_opts opt = {0};
    tl_run_page_opts(&p, NULL, NULL, &opt);
    assert_int_equal(opt.nextras, 1);
    assert_string_equal(opt.extras[0].id, "ranks");
    assert_int_equal(p.nheat, 1);
    const tl_page_heatmap *h = &p.heat[0];
    assert_int_equal(h->nrows, 3);
    assert_int_equal(h->ncols, 3);
    assert_string_equal(h->side[0], "a");
    assert_string_equal(h->side[1], "b");
    assert_string_equal(h->row[2], "rank 2");
    /* busy, exposed comm, wait: each side's value and the sheet's own difference */
    assert_true(h->v[0][2 * 3 + 0] == 7 && h->v[1][2 * 3 + 0] == 10 && h->diff[2 * 3 + 0] == 3);
    assert_true(h->v[0][0 * 3 + 1] == 0.5 && h->v[1][0 * 3 + 1] == 0.25 && h->diff[0 * 3 + 1] == -0.25);
    assert_true(h->v[0][0 * 3 + 2] == 5 && h->v[1][0 * 3 + 2] == 300 && h->diff[0 * 3 + 2] == 295);
    assert_true(h->v[0][2 * 3 + 2] == 10 && h->v[1][2 * 3 + 2] == 0 && h->diff[2 * 3 + 2] == -10);
    assert_true(isnan(h->v[0][1 * 3 + 2]) && isnan(h->diff[1 * 3 + 2])); /* rank 1 has no row */
    /* the bars per rank: the sides of a rank together; a missing cell stays missing */
    assert_int_equal(opt.nbar_sets, 1);
    const tl_page_bar_set *b = &opt.bar_sets[0];
    assert_int_equal(b->n, 6);
    assert_string_equal(b->bars[5].label, "b rank 2");
    assert_true(isnan(b->bars[5].part_ms[0]) && b->bars[5].part_ms[1] == 2 && b->bars[5].total_ms == 16);
    assert_true(b->bars[4].part_ms[0] == 6 && isnan(b->bars[4].part_ms[2]));
    /* the section escapes what it writes */
    tl_buf out = {0};
    opt.extras[0].write(opt.extras[0].ctx, &out);
    assert_non_null(strstr(tl_buf_cstr(&out), "<table class=\"heat\" id=\"heat-0\">"));
    tl_buf_free(&out);
    tl_run_page_free(&p);
}

/* No stragglers sheet: two columns; a ranks sheet without two sides: no heatmap at all. */
static void test_partial_sheets(void **state)
{
    (void)state;
    tl_run_page p;
    tl_run_page_init(&p);
    tl_result r1 = {TL_DIST_SHEET_RANKS, ranks_sheet(), NULL, 3, NR, NULL};
    tl_run_page_observe(&p, &r1);
    tl_page_opts opt = {0};
    tl_run_page_opts(&p, NULL, NULL, &opt);
    assert_int_equal(p.heat[0].ncols, 2);
    tl_table_free(r1.table);
    tl_run_page_free(&p);

    tl_run_page_init(&p);
    static const char *const one[] = {"rank", "busy_time_ms::a"};
    const double v[2] = {0, 1};
    tl_result r = {TL_DIST_SHEET_RANKS, table(one, 2, 1, v), NULL, 1, 2, NULL};
    tl_result st = {TL_DIST_SHEET_STRAGGLERS, stragglers_sheet(), NULL, 3, 4, NULL};
    tl_run_page_observe(&p, &r);
    tl_run_page_observe(&p, &st);
    memset(&opt, 0, sizeof opt);
    tl_run_page_opts(&p, NULL, NULL, &opt);
    assert_int_equal(opt.nextras, 0);
    assert_int_equal(opt.nbar_sets, 0);
    tl_table_free(r.table);
    tl_table_free(st.table);
    tl_run_page_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heatmap_from_the_sheets),
        cmocka_unit_test(test_partial_sheets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
