/*
 * test_compare.c - SPEC §2: prefix, outer merge, diff/pct, column and row order, split.
 */
#include "testtable.h"

#include "compare/compare.h"
#include "compare/runs.h"
#include "base/sort.h"

#include <math.h>

static int setup(void **state)
{
    tl_quiet = 1; /* the left-out warnings are expected here */
    return tt_arena_setup(state);
}



static void assert_table(const tl_table *t, const char *want)
{
    char *got = tt_as_csv(t);
    if (strcmp(got, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

static const char *tags2[] = {"base", "new"};
static const char *tags3[] = {"a", "b", "c"};

static tl_table *compare2_as(const char *base, const char *variant, const char *const *keys, size_t nk,
                             const char *const *diffs, size_t nd, int tracelens_keys, tl_error *err)
{
    tl_table *in[2] = {tt_arena_csv(base), tt_arena_csv(variant)};
    tl_compare_spec spec = {"s", keys, nk, diffs, nd, tracelens_keys};
    return tl_compare(in, tags2, 2, &spec, &tt_arena, err);
}

static tl_table *compare2(const char *base, const char *variant, const char *const *keys, size_t nk,
                          const char *const *diffs, size_t nd, tl_error *err)
{
    return compare2_as(base, variant, keys, nk, diffs, nd, 0, err);
}

static const char *k_name[] = {"name"};
static const char *d_t[] = {"t"};

/* Repeated keys no column tells apart: the k-th row of a value with the k-th, a row left
 * over alone, in the order of the value's k-th rows (SPEC §2 step 0) */
static void test_duplicates_paired_in_order(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_table *t = compare2("name,t\nx,1\ny,2\nx,3\nx,4\n", "name,t\nz,5\nx,10\nx,20\n", k_name, 1, d_t, 1, &err);
    assert_non_null(t);
    assert_table(t, "name,t__new_diff,t__new_pct,base::t,new::t\n"
                    "x,9.0,900.0,1.0,10.0\n"
                    "x,17.0,566.6666666666667,3.0,20.0\n"
                    "x,,,4.0,\n"
                    "y,,,2.0,\n"
                    "z,,,,5.0\n");
    tl_table_free(t);
    /* three reports: the k-th of every report together; the ordinal column is gone */
    tl_table *in[3] = {tt_arena_csv("name,t\nx,1\nx,2\n"), tt_arena_csv("name,t\nx,10\n"), tt_arena_csv("name,t\nx,100\nx,200\nx,300\n")};
    tl_compare_spec spec = {"s", k_name, 1, d_t, 1, 0};
    t = tl_compare(in, tags3, 3, &spec, &tt_arena, &err);
    assert_non_null(t);
    assert_table(t, "name,t__b_diff,t__b_pct,t__c_diff,t__c_pct,a::t,b::t,c::t\n"
                    "x,9.0,900.0,99.0,9900.0,1.0,10.0,100\n"
                    "x,,,198.0,9900.0,2.0,,200\n"
                    "x,,,,,,,300\n");
    tl_table_free(t);
    /* a table compared with itself: every diff 0 */
    t = compare2("name,t\nx,1\nx,3\ny,2\nx,7\n", "name,t\nx,1\nx,3\ny,2\nx,7\n", k_name, 1, d_t, 1, &err);
    assert_table(t, "name,t__new_diff,t__new_pct,base::t,new::t\n"
                    "x,0,0.0,1,1\nx,0,0.0,3,3\nx,0,0.0,7,7\ny,0,0.0,2,2\n");
    tl_table_free(t);
}

/* --tracelens-keys: every pair, in row order */
static void test_duplicates_give_all_pairs_in_order(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_table *t = compare2_as("name,t\nx,1\ny,2\nx,3\n", "name,t\nz,5\nx,10\nx,20\n", k_name, 1, d_t, 1, 1, &err);
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
    tl_table *in[3] = {tt_arena_csv("x,name,t,n\nq,op,1,2\n"), tt_arena_csv("n,name,t\n3,op,2\n"), tt_arena_csv("name,t,n,extra\nop,4,5,e\n")};
    tl_compare_spec spec = {"s", k_name, 1, diffs, 2, 0};
    tl_table *t = tl_compare(in, tags3, 3, &spec, &tt_arena, &err);
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
    tl_table *t = compare2(a.data, a.data, k_name, 1, d_t, 1, &err); /* in order: 1500 rows */
    assert_non_null(t);
    assert_int_equal(t->nrows, 1500);
    tl_table_free(t);
    t = compare2_as(a.data, a.data, k_name, 1, d_t, 1, 1, &err);
    assert_null(t);
    assert_string_equal(err.msg, "sheet 's': the key (name='aten::mm') is repeated (rows: 1500 in 'base', 1500 in "
                                 "'new') and the merge would make 2250000 rows, more than a worksheet holds "
                                 "(1048575); refusing");
    tl_buf_free(&a);
}

/* Step 0: while the keys repeat, the row-key columns every table has are added, in order,
 * each kept only when it tells repeated rows apart (gpu_pid here does not); with
 * tracelens_keys the rows are paired every way. */
static void test_row_keys_added_while_keys_repeat(void **state)
{
    (void)state;
    static const char a[] = "name,gpu_pid,Kernel stream,Parent cpu_op,t\nk,1,7,aten::mm,1\nk,1,7,aten::addmm,2\n"
                            "j,1,7,aten::mm,5\n";
    static const char b[] = "name,Parent cpu_op,gpu_pid,Kernel stream,t\nk,aten::addmm,1,7,20\nk,aten::mm,1,7,10\n"
                            "j,aten::mm,1,7,50\n";
    tl_error err = {0};
    tl_table *t = compare2(a, b, k_name, 1, d_t, 1, &err);
    assert_non_null(t);
    assert_table(t, "name,Parent cpu_op,t__new_diff,t__new_pct,base::gpu_pid,base::Kernel stream,base::t,"
                    "new::gpu_pid,new::Kernel stream,new::t\n"
                    "j,aten::mm,45,900.0,1,7,5,1,7,50\n"
                    "k,aten::addmm,18,900.0,1,7,2,1,7,20\n"
                    "k,aten::mm,9,900.0,1,7,1,1,7,10\n");
    tl_table_free(t);

    tl_table *in[2] = {tt_arena_csv(a), tt_arena_csv(b)};
    tl_compare_spec spec = {"s", k_name, 1, d_t, 1, 1};
    t = tl_compare(in, tags2, 2, &spec, &tt_arena, &err);
    assert_non_null(t);
    assert_int_equal(t->nrows, 5); /* k: 2 x 2, j: 1 */
    assert_string_equal(t->cols[1].name, "t__new_diff");
    tl_table_free(t);
}

/* Runs of one side: rows paired across runs (repeated keys in order), each metric the mean
 * with its sample std beside it, other columns the first run's, and how many runs had the row. */
static void test_runs_collapse(void **state)
{
    (void)state;
    tl_table *in[3] = {tt_arena_csv("name,t,note\nx,1,a\ny,10,b\nx,5,c\n"), tt_arena_csv("name,t,note\nx,3,\nz,7,d\nx,6,e\n"),
                       tt_arena_csv("name,note,t\nx,f,2\ny,g,20\n")};
    tl_compare_spec spec = {"s", k_name, 1, d_t, 1, 0};
    tl_error err = {0};
    tl_table *t = tl_runs_collapse(in, 3, "base", &spec, &tt_arena, &err);
    assert_non_null(t);
    assert_table(t, "name,t,t_std,note,runs\n"
                    "x,2.0,1.0,a,3\n"          /* 1, 3, 2 */
                    "x,5.5,0.7071067811865476,c,2\n" /* the second x of runs 1 and 2 */
                    "y,15.0,7.0710678118654755,b,2\n"
                    "z,7.0,,d,1\n");
    tl_table_free(t);
}

static void test_sort_desc_is_stable_missing_last(void **state)
{
    (void)state;
    tl_table *t = tt_arena_csv("id,v\na,1\nb,\nc,3\nd,1\ne,3\n");
    tl_sort_desc(t, 1);
    assert_table(t, "id,v\nc,3.0\ne,3.0\na,1.0\nd,1.0\nb,\n");
    tl_table_free(t);
}

static void test_split(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *diffs[] = {"t"};
    tl_table *in[3] = {tt_arena_csv("name,t,only_a\nx,1,\ny,5,\nz,2,\n"), tt_arena_csv("name,t\nx,2\nw,7\n"),
                       tt_arena_csv("name,t\nx,3\ny,4\nz,9\n")};
    tl_compare_spec spec = {"s", k_name, 1, diffs, 1, 0};
    tl_table *m = tl_compare(in, tags3, 3, &spec, &tt_arena, &err);
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

/* The three reports of test_split, merged. */
static tl_table *split_merged(void)
{
    tl_error err = {0};
    static const char *diffs[] = {"t"};
    tl_table *in[3] = {tt_arena_csv("name,t,only_a\nx,1,p\ny,5,q\nz,2,\n"), tt_arena_csv("name,t,u\nx,2,1\nw,7,2\n"),
                       tt_arena_csv("name,t\nx,3\ny,4\nz,9\n")};
    tl_compare_spec spec = {"s", k_name, 1, diffs, 1, 0};
    tl_table *m = tl_compare(in, tags3, 3, &spec, &tt_arena, &err);
    assert_non_null(m);
    return m;
}

/* 1 when column `name` of t still has its cells. */
static int has_cells(const tl_table *t, const char *name)
{
    long i = tl_table_find(t, name);
    assert_true(i >= 0);
    return t->cols[i].cells != NULL;
}

/* The splits made in their order with each merged column freed once no later split reads
 * it are the splits of the whole table; what is freed when. */
static void test_split_release(void **state)
{
    (void)state;
    tl_table *whole = split_merged(), *m = split_merged();
    size_t a = (size_t)tl_table_find(m, "a::t");
    static const tl_split_kind kinds[] = {TL_SPLIT_INTERSECT, TL_SPLIT_ONLY_BASELINE, TL_SPLIT_ONLY_VARIANT};
    for (int v = 1; v <= 2; v++) {
        size_t var = (size_t)tl_table_find(m, v == 1 ? "b::t" : "c::t");
        for (size_t k = 0; k < 3; k++) {
            tl_table *want = tl_split(whole, kinds[k], v, a, var, a, var);
            tl_table *got = tl_split(m, kinds[k], v, a, var, a, var);
            char *w = tt_as_csv(want);
            assert_table(got, w);
            free(w);
            tl_table_free(want);
            tl_table_free(got);
            tl_split_release(m, kinds[k], v, 2, a);
            if (v == 1 && k == 1) /* the baseline's columns serve variant 2's splits yet */
                assert_true(has_cells(m, "a::only_a") && has_cells(m, "b::t") && has_cells(m, "t__b_diff"));
            if (v == 1 && k == 2) /* variant 1 done: its own and its diff columns go */
                assert_true(!has_cells(m, "b::t") && !has_cells(m, "b::u") && !has_cells(m, "t__b_pct") &&
                            has_cells(m, "c::t") && has_cells(m, "t__c_diff") && has_cells(m, "a::only_a"));
            if (v == 2 && k == 1) /* the last only_baseline: the baseline's go, but the row selector */
                assert_true(!has_cells(m, "a::only_a") && has_cells(m, "a::t") && has_cells(m, "c::t") &&
                            has_cells(m, "name"));
        }
    }
    assert_true(!has_cells(m, "c::t") && !has_cells(m, "t__c_diff") && has_cells(m, "a::t") && has_cells(m, "name"));
    tl_table_free(whole);
    tl_table_free(m);
}

/* ---- key order: hand-made tables, and a reference merge -------------------------------- */

/* The type the readers would give a column of these cells (numbers, booleans, or text). */
static uint8_t type_of(const tl_cell *cells, size_t n)
{
    int num = 1, boolean = 1;
    for (size_t r = 0; r < n; r++) {
        num &= cells[r].kind != TL_STR && cells[r].kind != TL_BOOL;
        boolean &= cells[r].kind == TL_MISSING || cells[r].kind == TL_BOOL;
    }
    return num ? TL_COL_NUM : boolean ? TL_COL_BOOL : TL_COL_STR;
}

/* A table with key columns k0.. (cells given row by row, nk a row) and an "id" column
 * holding each row's number. */
static const char *knames[] = {"k0", "k1", "k2", "k3"};
static tl_table *keyed_table(const tl_cell *keys, size_t nk, size_t nrows)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    tl_cell *col = malloc((nrows ? nrows : 1) * sizeof *col);
    for (size_t k = 0; k < nk; k++) {
        size_t c = tl_table_add_column(t, knames[k]);
        for (size_t r = 0; r < nrows; r++)
            col[r] = t->cols[c].cells[r] = keys[r * nk + k];
        t->cols[c].type = type_of(col, nrows);
    }
    free(col);
    size_t c = tl_table_add_column(t, "id");
    for (size_t r = 0; r < nrows; r++)
        t->cols[c].cells[r] = tl_cell_int((int64_t)r);
    t->cols[c].type = TL_COL_NUM;
    return t;
}

#define REF_MAX_KEYS 4
#define REF_MAX_TABLES 3

/* A row of the reference merge: its key cells and, per report, the row it came from. */
typedef struct ref_row {
    const tl_cell *key[REF_MAX_KEYS];
    long id[REF_MAX_TABLES];
} ref_row;

typedef struct ref_ctx {
    const ref_row *rows;
    size_t nk;
} ref_ctx;

static int ref_cmp(const ref_row *a, const ref_row *b, size_t nk)
{
    for (size_t k = 0; k < nk; k++) {
        int c = tl_cell_key_cmp(a->key[k], b->key[k]);
        if (c)
            return c;
    }
    return 0;
}

static int ref_cmp_idx(size_t a, size_t b, void *ctx)
{
    const ref_ctx *r = ctx;
    return ref_cmp(&r->rows[a], &r->rows[b], r->nk);
}

static size_t *ref_sorted(const ref_row *rows, size_t n, size_t nk)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    ref_ctx ctx = {rows, nk};
    tl_sort_rows(idx, n, ref_cmp_idx, &ctx);
    return idx;
}

/*
 * SPEC §2's merge written plainly: each side stably sorted by tl_cell_key_cmp, runs of
 * equal keys matched, a run found on both sides giving every pair (every_way: the
 * --tracelens-keys pairing) or its k-th row with the other's k-th, the rows left over
 * alone (in order), the key taken from the left row where there is one.  R's rows are
 * report `t`.
 */
static ref_row *ref_merge(const ref_row *L, size_t nl, const ref_row *R, size_t nr, size_t nk, int t,
                          int every_way, size_t *nout)
{
    size_t *li = ref_sorted(L, nl, nk), *ri = ref_sorted(R, nr, nk), n = 0, cap = 16;
    ref_row *out = malloc(cap * sizeof *out);
    size_t i = 0, j = 0;
    while (i < nl || j < nr) {
        int c = i == nl ? 1 : j == nr ? -1 : ref_cmp(&L[li[i]], &R[ri[j]], nk);
        size_t i2 = i, j2 = j;
        if (c <= 0)
            for (i2 = i + 1; i2 < nl && ref_cmp(&L[li[i]], &L[li[i2]], nk) == 0;)
                i2++;
        if (c >= 0)
            for (j2 = j + 1; j2 < nr && ref_cmp(&R[ri[j]], &R[ri[j2]], nk) == 0;)
                j2++;
        size_t add = c == 0 ? (i2 - i) * (j2 - j) : (i2 - i) + (j2 - j);
        while (n + add > cap)
            cap *= 2;
        out = realloc(out, cap * sizeof *out);
        if (c == 0 && !every_way) {
            for (size_t k = 0; k < i2 - i || k < j2 - j; k++) {
                ref_row row;
                const ref_row *l = k < i2 - i ? &L[li[i + k]] : NULL, *r = k < j2 - j ? &R[ri[j + k]] : NULL;
                for (size_t q = 0; q < nk; q++)
                    row.key[q] = l ? l->key[q] : r->key[q];
                for (int x = 0; x < REF_MAX_TABLES; x++)
                    row.id[x] = l ? l->id[x] : -1;
                row.id[t] = r ? r->id[t] : -1;
                out[n++] = row;
            }
            i = i2;
            j = j2;
            continue;
        }
        for (size_t a = i; a < (c <= 0 ? i2 : i + 1); a++) {
            for (size_t b = j; b < (c >= 0 ? j2 : j + 1); b++) {
                ref_row row;
                const ref_row *l = c <= 0 ? &L[li[a]] : NULL, *r = c >= 0 ? &R[ri[b]] : NULL;
                for (size_t k = 0; k < nk; k++)
                    row.key[k] = l ? l->key[k] : r->key[k];
                for (int x = 0; x < REF_MAX_TABLES; x++)
                    row.id[x] = l ? l->id[x] : -1;
                row.id[t] = r ? r->id[t] : -1;
                out[n++] = row;
            }
        }
        i = i2;
        j = j2;
    }
    free(li);
    free(ri);
    *nout = n;
    return out;
}

/* Merge tables of key cells with tl_compare and with the reference: the same rows, keys
 * and pairing, in the same order (in order, or every way). */
static void check_merge_as(tl_cell *const *keys, const size_t *nrows, size_t ntables, size_t nk, int every_way)
{
    static const char *tags[] = {"a", "b", "c"};
    tl_table *in[REF_MAX_TABLES];
    ref_row *ref = NULL;
    size_t nref = 0;
    for (size_t t = 0; t < ntables; t++) {
        in[t] = keyed_table(keys[t], nk, nrows[t]);
        ref_row *rows = malloc((nrows[t] ? nrows[t] : 1) * sizeof *rows);
        for (size_t r = 0; r < nrows[t]; r++) {
            for (size_t k = 0; k < nk; k++)
                rows[r].key[k] = &keys[t][r * nk + k];
            for (int x = 0; x < REF_MAX_TABLES; x++)
                rows[r].id[x] = x == (int)t ? (long)r : -1;
        }
        if (t == 0) {
            ref = rows;
            nref = nrows[0];
        } else {
            size_t n;
            ref_row *m = ref_merge(ref, nref, rows, nrows[t], nk, (int)t, every_way, &n);
            free(ref);
            free(rows);
            ref = m;
            nref = n;
        }
    }
    tl_error err = {0};
    const char *diffs[] = {"id"};
    tl_compare_spec spec = {"s", knames, nk, diffs, 1, every_way};
    tl_table *m = tl_compare(in, tags, ntables, &spec, &tt_arena, &err);
    assert_non_null(m);
    assert_int_equal(m->nrows, nref);
    long idcol[REF_MAX_TABLES];
    for (size_t t = 0; t < ntables; t++) {
        idcol[t] = tl_table_find(m, tl_arena_printf(&tt_arena, "%s::id", tags[t]));
        assert_true(idcol[t] >= 0);
    }
    for (size_t r = 0; r < nref; r++) {
        for (size_t k = 0; k < nk; k++) {
            const tl_cell *got = &m->cols[k].cells[r], *want = ref[r].key[k];
            assert_int_equal(tl_cell_key_cmp(got, want), 0);
            if (want->kind == TL_STR)
                assert_ptr_equal(got->v.s, want->v.s); /* the very cell */
        }
        for (size_t t = 0; t < ntables; t++) {
            const tl_cell *c = &m->cols[idcol[t]].cells[r];
            long id = c->kind == TL_MISSING ? -1 : (long)tl_cell_number(c);
            if (id != ref[r].id[t])
                print_error("row %zu report %zu: id %ld, want %ld\n", r, t, id, ref[r].id[t]);
            assert_int_equal(id, ref[r].id[t]);
        }
    }
    tl_table_free(m);
    free(ref);
}

static void check_merge(tl_cell *const *keys, const size_t *nrows, size_t ntables, size_t nk)
{
    check_merge_as(keys, nrows, ntables, nk, 0);
    check_merge_as(keys, nrows, ntables, nk, 1);
}

static void test_mixed_kind_keys(void **state)
{
    (void)state;
    /* baseline: 2, "b", missing, True, 1.5, "a"; variant: 1, "a", 2.0, missing, "é", "B" */
    tl_cell a[] = {tl_cell_int(2), tl_cell_str("b"), tl_cell_missing(), tl_cell_bool(1), tl_cell_float(1.5),
                   tl_cell_str("a")};
    tl_cell b[] = {tl_cell_int(1), tl_cell_str("a"), tl_cell_float(2.0), tl_cell_missing(),
                   tl_cell_str("\xc3\xa9"), tl_cell_str("B")};
    tl_table *in[2] = {keyed_table(a, 1, 6), keyed_table(b, 1, 6)};
    const char *diffs[] = {"id"};
    tl_compare_spec spec = {"s", knames, 1, diffs, 1, 0};
    tl_error err = {0};
    tl_table *t = tl_compare(in, tags2, 2, &spec, &tt_arena, &err);
    assert_non_null(t);
    /* numbers by value (True is 1, 2 is 2.0), then strings by code point, missing last
     * (and matching missing); the key cell is the baseline's where it has the row */
    assert_table(t, "k0,id__new_diff,id__new_pct,base::id,new::id\n"
                    "True,-3.0,-100.0,3.0,0.0\n"
                    "1.5,,,4.0,\n"
                    "2,2.0,,0.0,2.0\n"
                    "B,,,,5.0\n"
                    "a,-4.0,-80.0,5.0,1.0\n"
                    "b,,,1.0,\n"
                    "\xc3\xa9,,,,4.0\n"
                    ",1.0,50.0,2.0,3.0\n");
    tl_table_free(t);
}

static void test_ties_and_duplicates_on_several_keys(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *keys[] = {"k", "j"};
    /* k ties everywhere but the last rows; j decides, missing last; x/1 is twice on each
     * side (2 x 2 pairs, in row order) */
    tl_table *t = compare2_as("k,j,t\nx,2,1\nx,1,2\nx,,3\nx,1,4\ny,1,5\n",
                              "k,j,t\nx,1,10\nx,,20\nw,9,30\nx,1,40\nx,3,50\n", keys, 2, d_t, 1, 1, &err);
    assert_non_null(t);
    assert_table(t, "k,j,t__new_diff,t__new_pct,base::t,new::t\n"
                    "w,9.0,,,,30.0\n"
                    "x,1.0,8.0,400.0,2.0,10.0\n"
                    "x,1.0,38.0,1900.0,2.0,40.0\n"
                    "x,1.0,6.0,150.0,4.0,10.0\n"
                    "x,1.0,36.0,900.0,4.0,40.0\n"
                    "x,2.0,,,1.0,\n"
                    "x,3.0,,,,50.0\n"
                    "x,,17.0,566.6666666666667,3.0,20.0\n"
                    "y,1.0,,,5.0,\n");
    tl_table_free(t);
}

static void test_big_integers_beside_floats(void **state)
{
    (void)state;
    tl_error err = {0};
    const char *keys[] = {"k"};
    /* 2^53 + 1 and 2^53 differ as integers, yet both equal the float 2^53: the merge
     * compares pair by pair as tl_cell_key_cmp does, and matches the float with the first
     * integer of the sorted baseline only */
    tl_table *t = compare2("k,t\n9007199254740993,1\n9007199254740992,2\n", "k,t\n9007199254740992.0,5\n",
                           keys, 1, d_t, 1, &err);
    assert_non_null(t);
    assert_table(t, "k,t__new_diff,t__new_pct,base::t,new::t\n"
                    "9007199254740992,3.0,150.0,2,5.0\n"
                    "9007199254740993,,,1,\n");
    tl_table_free(t);
}

static void test_nan_key(void **state)
{
    (void)state;
    /* no reader makes a NaN key, but a NaN compares equal to every number: the merge then
     * goes by tl_cell_key_cmp pair by pair (NaN and 1.0 form one run, matched with 1.0) */
    tl_cell a[] = {tl_cell_float(NAN), tl_cell_float(1.0)};
    tl_cell b[] = {tl_cell_float(1.0)};
    tl_table *in[2] = {keyed_table(a, 1, 2), keyed_table(b, 1, 1)};
    const char *diffs[] = {"id"};
    tl_compare_spec spec = {"s", knames, 1, diffs, 1, 0};
    tl_error err = {0};
    tl_table *t = tl_compare(in, tags2, 2, &spec, &tt_arena, &err);
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_true(isnan(t->cols[0].cells[0].v.f));
    assert_true(t->cols[0].cells[1].v.f == 1.0);
    long bc = tl_table_find(t, "base::id"), vc = tl_table_find(t, "new::id");
    assert_int_equal(t->cols[bc].cells[0].v.i, 0);
    assert_int_equal(t->cols[bc].cells[1].v.i, 1);
    assert_int_equal(t->cols[vc].cells[0].v.i, 0);
    assert_int_equal(t->cols[vc].cells[1].v.i, 0);
    tl_table_free(t);
}

static void test_nan_in_a_later_key(void **state)
{
    (void)state;
    /* the first key tells almost every row apart; a later key holds a NaN: still the
     * pair-by-pair order of tl_cell_key_cmp */
    enum { N = 64 };
    tl_cell a[N * 2], b[N * 2];
    for (size_t r = 0; r < N; r++) {
        a[2 * r] = tl_cell_int((int64_t)(r * 7 % N));
        a[2 * r + 1] = r % 5 ? tl_cell_float((double)(r % 3)) : tl_cell_float(NAN);
        b[2 * r] = tl_cell_int((int64_t)(r * 11 % N));
        b[2 * r + 1] = tl_cell_float((double)(r % 2));
    }
    a[2] = a[0]; /* a repeated first key: a class of two rows for the second key */
    tl_cell *keys[2] = {a, b};
    size_t rows[2] = {N, N};
    /* every way only: a NaN equal to every number has no "k-th row of its value" that the
     * reference's runs and the row-key step's interning would agree on */
    check_merge_as(keys, rows, 2, 2, 1);
}

/* Texts sharing long prefixes (past 8 bytes, past 256), prefixes of one another, bytes
 * above 127: in code point order, which for UTF-8 is the order of unsigned bytes. */
static void test_long_common_prefixes(void **state)
{
    (void)state;
    enum { N = 120 };
    char *p300 = tl_arena_alloc(&tt_arena, 301);
    memset(p300, 'x', 300);
    p300[300] = '\0';
    tl_cell a[N], b[N];
    const char *tails[] = {"", "a", "ab", "b", "\xc3\xa9", "A", "~", "aa", "abcdefgh", "abcdefghi"};
    size_t n = 0;
    for (size_t i = 0; i < N; i++) {
        const char *s;
        switch (i % 4) {
        case 0: s = tl_arena_printf(&tt_arena, "%s%s%zu", p300, tails[i % 10], i / 10); break;
        case 1: s = tl_arena_printf(&tt_arena, "abcdefgh%s%zu", tails[i % 10], i / 10); break;
        case 2: s = tl_arena_printf(&tt_arena, "%s", tails[i % 10][0] ? tails[i % 10] : "z"); break;
        default: s = tl_arena_printf(&tt_arena, "%.*s%zu", (int)(i % 40), p300, i); break;
        }
        a[n] = tl_cell_str(s);
        b[N - 1 - n] = tl_cell_str(tl_arena_strdup(&tt_arena, s)); /* the same texts, reversed */
        n++;
    }
    tl_cell *keys[2] = {a, b};
    size_t rows[2] = {N / 2 + 7, N};
    check_merge(keys, rows, 2, 1); /* the baseline has some of the texts, the variant all */
    /* and the result is in strcmp order */
    tl_table *in[2] = {keyed_table(a, 1, N), keyed_table(b, 1, N)};
    const char *diffs[] = {"id"};
    tl_compare_spec spec = {"s", knames, 1, diffs, 1, 0};
    tl_error err = {0};
    tl_table *t = tl_compare(in, tags2, 2, &spec, &tt_arena, &err);
    assert_non_null(t);
    for (size_t r = 1; r < t->nrows; r++)
        assert_true(strcmp(t->cols[0].cells[r - 1].v.s, t->cols[0].cells[r].v.s) <= 0);
    tl_table_free(t);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

/* A random key cell: `kinds` says which kinds may come, `spread` how many values. */
static tl_cell random_key(unsigned kinds, uint32_t spread, const char *const *texts, size_t ntexts)
{
    for (;;) {
        switch (rnd(6)) {
        case 0:
            if (kinds & 1)
                return tl_cell_int((int64_t)rnd(spread) - (int64_t)spread / 4);
            break;
        case 1:
            if (kinds & 2) {
                double x = (double)rnd(spread) / 2 - 1;
                return tl_cell_float(x == 0 && rnd(2) ? -0.0 : x);
            }
            break;
        case 2:
            if (kinds & 4)
                return tl_cell_bool((int)rnd(2));
            break;
        case 3:
        case 4:
            if (kinds & 8)
                return tl_cell_str(texts[rnd(spread < ntexts ? spread : (uint32_t)ntexts)]);
            break;
        default:
            if (kinds & 16 && rnd(3) == 0)
                return tl_cell_missing();
            if (kinds & 32 && rnd(4) == 0) {
                /* what ranks cannot stand for: NaN, integers past 2^53 beside floats */
                switch (rnd(3)) {
                case 0: return tl_cell_float(NAN);
                case 1: return tl_cell_int(((int64_t)1 << 53) + rnd(3));
                default: return tl_cell_float((double)((int64_t)1 << 53));
                }
            }
            break;
        }
    }
}

/* Many random merges, against the reference: kinds mixed or not, few values (long runs
 * of duplicates) or many (classes of one or two rows), several keys, 2 or 3 reports. */
static void test_merge_matches_reference(void **state)
{
    (void)state;
    enum { NTEXTS = 400 };
    const char *texts[NTEXTS];
    const char *stems[] = {"aten::mm", "aten::add_", "((2, 171480, 11008), (2, 11008, 14336))", "a", "B", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < NTEXTS; i++)
        texts[i] = i < 6 ? stems[i] : tl_arena_printf(&tt_arena, "%s%zu", stems[i % 6], i / 3);
    static const unsigned kind_sets[] = {1, 1 | 16, 2 | 16, 1 | 2 | 16, 8, 8 | 16, 1 | 4 | 8 | 16, 31, 1 | 4,
                                         1 | 2 | 32, 31 | 32};
    rng_state = 42;
    for (int trial = 0; trial < 600; trial++) {
        size_t ntables = rnd(4) == 0 ? 3 : 2, nk = 1 + rnd(3);
        size_t maxrows = trial % 50 == 0 ? 400 : 40;
        tl_cell *keys[REF_MAX_TABLES];
        size_t rows[REF_MAX_TABLES];
        unsigned kinds[REF_MAX_KEYS];
        uint32_t spread[REF_MAX_KEYS];
        for (size_t k = 0; k < nk; k++) {
            kinds[k] = kind_sets[rnd(sizeof kind_sets / sizeof *kind_sets)];
            spread[k] = rnd(3) == 0 ? 2 + rnd(3) : 5 + rnd(maxrows * 2);
        }
        for (size_t t = 0; t < ntables; t++) {
            rows[t] = rnd((uint32_t)maxrows + 1);
            keys[t] = malloc((rows[t] * nk + 1) * sizeof(tl_cell));
            for (size_t r = 0; r < rows[t]; r++)
                for (size_t k = 0; k < nk; k++)
                    keys[t][r * nk + k] = random_key(kinds[k], spread[k], texts, NTEXTS);
            /* often a row repeated from another table: matches */
            if (t > 0 && rows[0] && rows[t])
                for (size_t r = 0; r < rows[t]; r++)
                    if (rnd(2))
                        memcpy(&keys[t][r * nk], &keys[0][rnd((uint32_t)rows[0]) * nk], nk * sizeof(tl_cell));
        }
        int transitive = 1; /* NaN and big integers beside floats: every way only (see above) */
        for (size_t k = 0; k < nk; k++)
            transitive &= !(kinds[k] & 32);
        if (transitive)
            check_merge(keys, rows, ntables, nk);
        else
            check_merge_as(keys, rows, ntables, nk, 1);
        for (size_t t = 0; t < ntables; t++)
            free(keys[t]);
    }
}

/* The descending sort, against tl_sort_rows with the comparison it replaces. */
static int ref_desc(size_t a, size_t b, void *ctx)
{
    const tl_cell *ca = &((const tl_cell *)ctx)[a], *cb = &((const tl_cell *)ctx)[b];
    int na = tl_cell_is_number(ca) && !isnan(tl_cell_number(ca));
    int nb = tl_cell_is_number(cb) && !isnan(tl_cell_number(cb));
    if (!na || !nb)
        return nb - na;
    double x = tl_cell_number(ca), y = tl_cell_number(cb);
    return x > y ? -1 : x < y;
}

static void test_sort_desc_matches_reference(void **state)
{
    (void)state;
    const tl_cell pool[] = {tl_cell_float(-0.0), tl_cell_float(0.0), tl_cell_int(0), tl_cell_bool(0),
                            tl_cell_bool(1), tl_cell_int(1), tl_cell_float(1.0), tl_cell_float(NAN),
                            tl_cell_float(INFINITY), tl_cell_float(-INFINITY), tl_cell_str("9"),
                            tl_cell_missing(), tl_cell_int(INT64_MAX), tl_cell_int(INT64_MIN),
                            tl_cell_int(-7), tl_cell_float(-7.5), tl_cell_float(1e300), tl_cell_float(4.9e-324)};
    rng_state = 7;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = rnd(trial % 20 == 0 ? 3000 : 60);
        tl_table *t = tl_table_new();
        t->nrows = n;
        size_t id = tl_table_add_column(t, "id"), v = tl_table_add_column(t, "v");
        for (size_t r = 0; r < n; r++) {
            t->cols[id].cells[r] = tl_cell_int((int64_t)r);
            t->cols[v].cells[r] = rnd(4) ? pool[rnd(sizeof pool / sizeof *pool)]
                                         : tl_cell_float((double)rnd(1000) / 8 - 60);
        }
        size_t *want = malloc((n ? n : 1) * sizeof *want);
        for (size_t r = 0; r < n; r++)
            want[r] = r;
        tl_sort_rows(want, n, ref_desc, t->cols[v].cells);
        tl_sort_desc(t, v);
        for (size_t r = 0; r < n; r++)
            assert_int_equal(t->cols[id].cells[r].v.i, (int64_t)want[r]);
        free(want);
        tl_table_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicates_paired_in_order),
        cmocka_unit_test(test_duplicates_give_all_pairs_in_order),
        cmocka_unit_test(test_integers_stay_integers_without_gaps),
        cmocka_unit_test(test_key_order_and_missing_keys),
        cmocka_unit_test(test_numbers_compare_by_value),
        cmocka_unit_test(test_column_order_three_reports),
        cmocka_unit_test(test_metric_or_key_missing_is_left_out),
        cmocka_unit_test(test_no_keys_is_an_error),
        cmocka_unit_test(test_merge_bound),
        cmocka_unit_test(test_row_keys_added_while_keys_repeat),
        cmocka_unit_test(test_runs_collapse),
        cmocka_unit_test(test_sort_desc_is_stable_missing_last),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_split_release),
        cmocka_unit_test(test_mixed_kind_keys),
        cmocka_unit_test(test_ties_and_duplicates_on_several_keys),
        cmocka_unit_test(test_big_integers_beside_floats),
        cmocka_unit_test(test_nan_key),
        cmocka_unit_test(test_nan_in_a_later_key),
        cmocka_unit_test(test_long_common_prefixes),
        cmocka_unit_test(test_merge_matches_reference),
        cmocka_unit_test(test_sort_desc_matches_reference),
    };
    return cmocka_run_group_tests_name("compare", tests, setup, tt_arena_teardown);
}
