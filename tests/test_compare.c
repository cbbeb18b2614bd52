/*
 * test_compare.c - SPEC §2: prefix, outer merge, diff/pct, column and row order, split.
 */
#include "testutil.h"

#include "compare.h"
#include "csv_read.h"
#include "csv_write.h"

static tl_arena arena;

static int setup(void **state)
{
    (void)state;
    tl_arena_init(&arena);
    tl_quiet = 1; /* the left-out warnings are expected here */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tl_arena_free(&arena);
    return 0;
}

static tl_table *csv(const char *text)
{
    tl_error err = {0};
    tl_table *t = tl_csv_parse(text, strlen(text), "t.csv", &arena, &err);
    assert_non_null(t);
    return t;
}

/* The CSV text of a table: the simplest exact picture of all of it. */
static char *as_csv(const tl_table *t)
{
    tl_buf b = {0};
    tl_csv_format(t, &b);
    return b.data ? b.data : strdup("");
}

static void assert_table(const tl_table *t, const char *want)
{
    char *got = as_csv(t);
    if (strcmp(got, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

static const char *tags2[] = {"base", "new"};
static const char *tags3[] = {"a", "b", "c"};

static tl_table *compare2(const char *base, const char *variant, const char *const *keys, size_t nk,
                          const char *const *diffs, size_t nd, tl_error *err)
{
    tl_table *in[2] = {csv(base), csv(variant)};
    tl_compare_spec spec = {"s", keys, nk, diffs, nd};
    return tl_compare(in, tags2, 2, &spec, &arena, err);
}

static const char *k_name[] = {"name"};
static const char *d_t[] = {"t"};

static void test_duplicates_give_all_pairs_in_order(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_table *t = compare2("name,t\nx,1\ny,2\nx,3\n", "name,t\nz,5\nx,10\nx,20\n", k_name, 1, d_t, 1, &err);
    assert_non_null(t);
    assert_table(t, "name,t__new_diff,t__new_pct,base::t,new::t\n"
                    "x,9.0,900.0,1.0,10.0\n"
                    "x,19.0,1900.0,1.0,20.0\n"
                    "x,7.0,233.33333333333334,3.0,10.0\n"
                    "x,17.0,566.6666666666667,3.0,20.0\n"
                    "y,,,2.0,\n"
                    "z,,,,5.0\n");
    tl_table_free(t);
}

static void test_integers_stay_integers_without_gaps(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_table *t = compare2("name,t\nx,4\ny,0\n", "name,t\ny,3\nx,6\n", k_name, 1, d_t, 1, &err);
    assert_non_null(t);
    /* the diff of two integer columns is an integer; pct is missing for a zero baseline */
    assert_table(t, "name,t__new_diff,t__new_pct,base::t,new::t\n"
                    "x,2,50.0,4,6\n"
                    "y,3,,0,3\n");
    tl_table_free(t);
}

static void test_key_order_and_missing_keys(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *keys[] = {"k1", "k2"};
    tl_table *t = compare2("k1,k2,t\nb,,1\na,2,2\nb,1,3\n,1,4\n",
                           "k1,k2,t\nb,,10\nB,1,20\n,1,30\n", keys, 2, d_t, 1, &err);
    assert_non_null(t);
    /* strings by code point (B < a < b), missing last; missing matches missing */
    assert_table(t, "k1,k2,t__new_diff,t__new_pct,base::t,new::t\n"
                    "B,1.0,,,,20.0\n"
                    "a,2.0,,,2.0,\n"
                    "b,1.0,,,3.0,\n"
                    "b,,9.0,900.0,1.0,10.0\n"
                    ",1.0,26.0,650.0,4.0,30.0\n");
    tl_table_free(t);
}

static void test_numbers_compare_by_value(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *keys[] = {"k"};
    tl_table *t = compare2("k,t\n1,1\n2.5,2\n10,3\n", "k,t\n1.0,5\n10.0,6\n", keys, 1, d_t, 1, &err);
    assert_non_null(t);
    assert_int_equal(t->nrows, 3);
    assert_table(t, "k,t__new_diff,t__new_pct,base::t,new::t\n"
                    "1.0,4.0,400.0,1,5.0\n"
                    "2.5,,,2,\n"
                    "10.0,3.0,100.0,3,6.0\n");
    tl_table_free(t);
}

static void test_column_order_three_reports(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *diffs[] = {"t", "n"};
    tl_table *in[3] = {csv("x,name,t,n\nq,op,1,2\n"), csv("n,name,t\n3,op,2\n"), csv("name,t,n,extra\nop,4,5,e\n")};
    tl_compare_spec spec = {"s", k_name, 1, diffs, 2};
    tl_table *t = tl_compare(in, tags3, 3, &spec, &arena, &err);
    assert_non_null(t);
    assert_table(t, "name,t__b_diff,t__b_pct,t__c_diff,t__c_pct,n__b_diff,n__b_pct,n__c_diff,n__c_pct,"
                    "a::x,a::t,a::n,b::n,b::t,c::t,c::n,c::extra\n"
                    "op,1,100.0,3,300.0,1,50.0,3,150.0,q,1,2,3,2,4,5,e\n");
    tl_table_free(t);
}

static void test_metric_or_key_missing_is_left_out(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *keys[] = {"name", "dims"};
    const char *diffs[] = {"t", "gone"};
    tl_table *t = compare2("name,dims,t\nop,a,1\n", "name,t\nop,2\n", keys, 2, diffs, 2, &err);
    assert_non_null(t);
    /* 'dims' is not in the variant: it is not a key; 'gone' is nowhere: no diffs */
    assert_table(t, "name,t__new_diff,t__new_pct,base::dims,base::t,new::t\n"
                    "op,1,100.0,a,1,2\n");
    tl_table_free(t);
}

static void test_no_keys_is_an_error(void **state)
{
    (void)state;
    tl_error err = {0};
    assert_null(compare2("a,t\n1,1\n", "name,t\nx,1\n", k_name, 1, d_t, 1, &err));
    assert_true(err.set);
    assert_non_null(strstr(err.msg, "sheet 's'"));
}

static void test_merge_bound(void **state)
{
    (void)state;
    tl_buf a = {0};
    tl_buf_adds(&a, "name,t\n");
    for (int i = 0; i < 1500; i++)
        tl_buf_adds(&a, "aten::mm,1\n");
    tl_error err = {0};
    tl_table *t = compare2(a.data, a.data, k_name, 1, d_t, 1, &err);
    assert_null(t);
    assert_string_equal(err.msg, "sheet 's': the key (name='aten::mm') is repeated (1500 x 1500 rows) and "
                                 "the merge would make more than 2000000 rows; refusing");
    tl_buf_free(&a);
}

static void test_sort_desc_is_stable_missing_last(void **state)
{
    (void)state;
    tl_table *t = csv("id,v\na,1\nb,\nc,3\nd,1\ne,3\n");
    tl_sort_desc(t, 1);
    assert_table(t, "id,v\nc,3.0\ne,3.0\na,1.0\nd,1.0\nb,\n");
    tl_table_free(t);
}

static void test_split(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *diffs[] = {"t"};
    tl_table *in[3] = {csv("name,t,only_a\nx,1,\ny,5,\nz,2,\n"), csv("name,t\nx,2\nw,7\n"),
                       csv("name,t\nx,3\ny,4\nz,9\n")};
    tl_compare_spec spec = {"s", k_name, 1, diffs, 1};
    tl_table *m = tl_compare(in, tags3, 3, &spec, &arena, &err);
    assert_non_null(m);
    size_t a = (size_t)tl_table_find(m, "a::t"), b = (size_t)tl_table_find(m, "b::t"),
           c = (size_t)tl_table_find(m, "c::t");

    tl_table *s = tl_split(m, TL_SPLIT_INTERSECT, 1, a, b, a, b);
    assert_table(s, "name,t__b_diff,t__b_pct,a::t,b::t\nx,1.0,100.0,1.0,2.0\n");
    tl_table_free(s);
    s = tl_split(m, TL_SPLIT_ONLY_BASELINE, 1, a, b, a, b);
    assert_table(s, "name,a::t\ny,5.0\nz,2.0\n");
    tl_table_free(s);
    s = tl_split(m, TL_SPLIT_ONLY_VARIANT, 1, a, b, a, b);
    assert_table(s, "name,b::t\nw,7.0\n");
    tl_table_free(s);
    s = tl_split(m, TL_SPLIT_INTERSECT, 2, a, c, a, c);
    assert_table(s, "name,t__c_diff,t__c_pct,a::t,c::t\ny,-1.0,-20.0,5.0,4.0\nz,7.0,350.0,2.0,9.0\n"
                    "x,2.0,200.0,1.0,3.0\n");
    tl_table_free(s);
    /* nothing only in c: no rows, so no columns at all */
    s = tl_split(m, TL_SPLIT_ONLY_VARIANT, 2, a, c, a, c);
    assert_int_equal(s->nrows, 0);
    assert_int_equal(s->ncols, 0);
    assert_table(s, "\n");
    tl_table_free(s);
    tl_table_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicates_give_all_pairs_in_order),
        cmocka_unit_test(test_integers_stay_integers_without_gaps),
        cmocka_unit_test(test_key_order_and_missing_keys),
        cmocka_unit_test(test_numbers_compare_by_value),
        cmocka_unit_test(test_column_order_three_reports),
        cmocka_unit_test(test_metric_or_key_missing_is_left_out),
        cmocka_unit_test(test_no_keys_is_an_error),
        cmocka_unit_test(test_merge_bound),
        cmocka_unit_test(test_sort_desc_is_stable_missing_last),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests_name("compare", tests, setup, teardown);
}
