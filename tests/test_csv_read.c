/*
 * test_csv_read.c - the CSV reader and the typing rules of SPEC §1.
 */
#include "testutil.h"

#include "read/csv_read.h"

#include <math.h>

typedef struct fixture {
    tl_arena arena;
    tl_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    tl_arena_init(&f->arena);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tl_arena_free(&f->arena);
    free(f);
    return 0;
}

static tl_table *parse(fixture *f, const char *text)
{
    memset(&f->err, 0, sizeof f->err);
    return tl_csv_parse(text, strlen(text), "t.csv", &f->arena, &f->err);
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    assert_true(c >= 0);
    assert_true(row < t->nrows);
    return &t->cols[c].cells[row];
}

static void test_types(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "i,f,b,s,m,e,ib\n"
                           "48,1.5,True,x,1,,1\n"
                           "-3,2,False,y,NaN,,\n");
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_int_equal(t->ncols, 7);
    assert_int_equal(t->cols[0].type, TL_COL_NUM);
    assert_int_equal(cell(t, "i", 0)->kind, TL_INT);
    assert_int_equal(cell(t, "i", 1)->v.i, -3);
    /* a float column turns its integral texts into floats too */
    assert_int_equal(cell(t, "f", 1)->kind, TL_FLOAT);
    assert_true(cell(t, "f", 1)->v.f == 2.0);
    assert_int_equal(t->cols[2].type, TL_COL_BOOL);
    assert_int_equal(cell(t, "b", 0)->kind, TL_BOOL);
    assert_int_equal(cell(t, "b", 1)->v.b, 0);
    assert_int_equal(t->cols[3].type, TL_COL_STR);
    assert_string_equal(cell(t, "s", 1)->v.s, "y");
    /* integral text with a missing cell: floating point, as pandas reads it */
    assert_int_equal(cell(t, "m", 0)->kind, TL_FLOAT);
    assert_int_equal(cell(t, "m", 1)->kind, TL_MISSING);
    /* an all-missing column is numeric */
    assert_int_equal(t->cols[5].type, TL_COL_NUM);
    assert_int_equal(cell(t, "ib", 1)->kind, TL_MISSING);
    tl_table_free(t);
}

static void test_string_column_keeps_text(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "k\n1\nabc\n1.50\n");
    assert_non_null(t);
    assert_int_equal(t->cols[0].type, TL_COL_STR);
    assert_int_equal(cell(t, "k", 0)->kind, TL_STR);
    assert_string_equal(cell(t, "k", 0)->v.s, "1");
    assert_string_equal(cell(t, "k", 2)->v.s, "1.50");
    tl_table_free(t);
}

static void test_missing_spellings(void **state)
{
    fixture *f = *state;
    const char *spellings[] = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                               "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None",
                               "n/a", "nan", "null"};
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++)
        assert_true(tl_text_is_missing(spellings[i], strlen(spellings[i])));
    assert_false(tl_text_is_missing("none", 4));
    assert_false(tl_text_is_missing("NAN ", 4));
    assert_false(tl_text_is_missing("0", 1));
    tl_table *t = parse(f, "a,b\nNone,x\n\"\",y\n");
    assert_int_equal(cell(t, "a", 0)->kind, TL_MISSING);
    assert_int_equal(cell(t, "a", 1)->kind, TL_MISSING);
    tl_table_free(t);
}

static void test_numbers(void **state)
{
    (void)state;
    tl_cell c;
    assert_true(tl_text_to_number("1e5", 3, &c));
    assert_int_equal(c.kind, TL_FLOAT);
    assert_true(c.v.f == 1e5);
    assert_true(tl_text_to_number("+7", 2, &c));
    assert_int_equal(c.kind, TL_INT);
    assert_true(tl_text_to_number(".5", 2, &c));
    assert_true(tl_text_to_number("-inf", 4, &c));
    assert_true(c.v.f < 0);
    assert_true(tl_text_to_number("99999999999999999999", 20, &c));
    assert_int_equal(c.kind, TL_FLOAT);
    assert_false(tl_text_to_number("1,5", 3, &c));
    assert_false(tl_text_to_number("0x10", 4, &c));
    assert_false(tl_text_to_number(".", 1, &c));
    assert_false(tl_text_to_number("1e", 2, &c));
    assert_false(tl_text_to_number(" 1", 2, &c));
}

static void check_against_strtod(const char *text);

/* The fast conversions must give exactly what strtod gives, on every kind of decimal. */
static void test_numbers_match_strtod(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252u;
    char text[64];
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int digits = 1 + (int)(x % 19), point = (int)((x >> 8) % (unsigned)(digits + 1));
        int exp = (int)((x >> 16) % 60) - 30, use_exp = (x >> 24) % 4 == 0, neg = (x >> 28) & 1;
        size_t n = 0;
        if (neg)
            text[n++] = '-';
        uint64_t y = x;
        for (int d = 0; d < digits; d++) {
            if (d == point && d > 0)
                text[n++] = '.';
            text[n++] = (char)('0' + y % 10);
            y = y / 10 ^ (y << 7);
        }
        if (point == digits)
            text[n++] = '.';
        if (use_exp)
            n += (size_t)snprintf(text + n, sizeof text - n, "e%d", exp);
        text[n] = '\0';
        check_against_strtod(text);
    }
    const char *fixed[] = {"0.000123456789012345678901", "00012", "1234567890123456789012345", "1e-400",
                           "-0", "-0.0", "000.000", "99999999999999999999", "123456789012345678",
                           "1234567890123456789", "0.1e1", ".5e-3", "5.", "1E+22", "123456789012345e7",
                           "1234567890123456e6", "9007199254740993", "9007199254740993.0"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        check_against_strtod(fixed[i]);
}

static void check_against_strtod(const char *text)
{
    tl_cell c;
    assert_true(tl_text_to_number(text, strlen(text), &c));
    double want = strtod(text, NULL);
    double got = c.kind == TL_INT ? (double)c.v.i : c.v.f;
    /* an integer compares by value: pandas reads "-0" as the integer 0 */
    if (c.kind == TL_INT ? got != want : memcmp(&want, &got, sizeof got) != 0)
        fail_msg("'%s': got %.17g, strtod gives %.17g", text, got, want);
}

static void test_quoting_and_line_ends(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "\xEF\xBB\xBFname,v\r\n"
                           "\"a, \"\"quoted\"\"\r\nline\",1\r"
                           "plain,2\n"
                           "\n"
                           "\"x\"tail,3");
    assert_non_null(t);
    assert_string_equal(t->cols[0].name, "name");
    assert_int_equal(t->nrows, 3);
    assert_string_equal(cell(t, "name", 0)->v.s, "a, \"quoted\"\r\nline");
    assert_string_equal(cell(t, "name", 1)->v.s, "plain");
    assert_string_equal(cell(t, "name", 2)->v.s, "xtail");
    assert_int_equal(cell(t, "v", 2)->v.i, 3);
    tl_table_free(t);
}

/* Every form a quoted field takes, as its own record between a text column and a number
 * column: its text unquoted (held in the input or rebuilt, whichever the form needs), the
 * field after it intact, and the lines counted through quoted line breaks. */
static void test_quoted_forms(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *field, *want; /* want NULL: missing */
    } forms[] = {
        {"\"abc\"", "abc"},         {"\"\"", NULL},          {"\"a\"\"b\"", "a\"b"},
        {"\"\"\"\"", "\""},        {"\"ab\"cd", "abcd"},     {"\"a\"\"b\"cd", "a\"bcd"},
        {"\"\"x", "x"},            {"\"a\nb\"", "a\nb"},    {"\"a\"\"\nb\"\"\"", "a\"\nb\""},
        {"\"x,y\"", "x,y"},        {"\"NaN\"", NULL},       {"\"\"\"\"tail", "\"tail"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char text[128];
        snprintf(text, sizeof text, "k,v\n%s,7\n\"last\",8", forms[i].field);
        tl_table *t = parse(f, text);
        assert_non_null(t);
        assert_int_equal(t->nrows, 2);
        const tl_cell *c = cell(t, "k", 0);
        if (!forms[i].want) {
            assert_int_equal(c->kind, TL_MISSING);
        } else {
            assert_int_equal(c->kind, TL_STR);
            assert_string_equal(c->v.s, forms[i].want);
        }
        assert_string_equal(cell(t, "k", 1)->v.s, "last");
        assert_int_equal(cell(t, "v", 0)->v.i, 7);
        assert_int_equal(cell(t, "v", 1)->v.i, 8);
        tl_table_free(t);
    }
    /* a quoted number is a number; lines are counted through quoted line breaks */
    tl_table *t = parse(f, "k\n\"1.5\"\n\"2\"\n");
    assert_non_null(t);
    assert_true(cell(t, "k", 0)->v.f == 1.5);
    tl_table_free(t);
    assert_null(parse(f, "k,v\n\"a\nb\",1\n\"c\"\"\n\",2\n1,2,3\n"));
    assert_string_equal(f->err.msg, "t.csv line 6: 3 fields, the header has 2");
}

/* A numeric column's missing spellings stay missing, its numbers numbers, wherever they
 * fall (the number is tried first there). */
static void test_missing_in_numeric_column(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "v\n1\n-nan\n1.#IND\n-1.#QNAN\nNaN\ninf\n-2.5\nNA\n3\n");
    assert_non_null(t);
    assert_int_equal(t->nrows, 9);
    static const int missing[] = {0, 1, 1, 1, 1, 0, 0, 1, 0};
    for (size_t r = 0; r < 9; r++)
        assert_int_equal(cell(t, "v", r)->kind == TL_MISSING, missing[r]);
    assert_true(cell(t, "v", 5)->v.f == INFINITY);
    assert_true(cell(t, "v", 6)->v.f == -2.5);
    assert_true(cell(t, "v", 8)->v.f == 3.0);
    tl_table_free(t);
}

static void test_short_rows_are_padded(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "a,b,c\n1\n2,3,4\n");
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_int_equal(cell(t, "c", 0)->kind, TL_MISSING);
    assert_int_equal(cell(t, "c", 1)->kind, TL_FLOAT); /* missing made it float */
    tl_table_free(t);
}

static void test_header_names(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "a,,a,a.1,a\n1,2,3,4,5\n");
    assert_non_null(t);
    assert_string_equal(t->cols[0].name, "a");
    assert_string_equal(t->cols[1].name, "Unnamed: 1");
    assert_string_equal(t->cols[2].name, "a.1");
    assert_string_equal(t->cols[3].name, "a.1.1");
    assert_string_equal(t->cols[4].name, "a.2");
    tl_table_free(t);
}

static void test_empty_inputs(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "");
    assert_non_null(t);
    assert_int_equal(t->ncols, 0);
    assert_int_equal(t->nrows, 0);
    tl_table_free(t);
    t = parse(f, "a,b\n");
    assert_non_null(t);
    assert_int_equal(t->ncols, 2);
    assert_int_equal(t->nrows, 0);
    tl_table_free(t);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    assert_null(parse(f, "a,b\n1,2\n3,4,5\n"));
    assert_string_equal(f->err.msg, "t.csv line 3: 3 fields, the header has 2");
    assert_null(parse(f, "a,b\n\"never closed,2\n"));
    assert_string_equal(f->err.msg, "t.csv line 2: a quoted field is never closed (missing '\"')");
    const char nul[] = "a\nx\0y\n";
    memset(&f->err, 0, sizeof f->err);
    assert_null(tl_csv_parse(nul, sizeof nul - 1, "t.csv", &f->arena, &f->err));
    assert_string_equal(f->err.msg, "t.csv line 2: NUL byte inside a field");
    /* UTF-16, with and without a byte-order mark, either byte order: said so */
    static const char le_bom[] = "\xFF\xFE" "a\0,\0b\0\n\0", be[] = "\0a\0,\0b\0\n";
    const char *const u16[] = {le_bom, be};
    const size_t n16[] = {sizeof le_bom - 1, sizeof be - 1};
    for (int i = 0; i < 2; i++) {
        memset(&f->err, 0, sizeof f->err);
        assert_null(tl_csv_parse(u16[i], n16[i], "t.csv", &f->arena, &f->err));
        assert_string_equal(f->err.msg, "t.csv: UTF-16 text; tlcompare reads CSV as UTF-8: save it as \"CSV UTF-8\", "
                                        "or convert it (iconv -f UTF-16 -t UTF-8)");
    }
}

static void test_invalid_utf8_is_carried(void **state)
{
    fixture *f = *state;
    tl_table *t = parse(f, "k\n\xff\xfe\xc3\n");
    assert_non_null(t);
    assert_string_equal(cell(t, "k", 0)->v.s, "\xff\xfe\xc3");
    tl_table_free(t);
}

static void test_big_field(void **state)
{
    fixture *f = *state;
    size_t n = 4u << 20;
    char *text = malloc(n + 16);
    strcpy(text, "k\n\"");
    memset(text + 3, 'x', n);
    strcpy(text + 3 + n, "\"\n");
    tl_table *t = parse(f, text);
    assert_non_null(t);
    assert_int_equal(strlen(cell(t, "k", 0)->v.s), n);
    tl_table_free(t);
    free(text);
}

static void test_read_file_errors(void **state)
{
    fixture *f = *state;
    assert_null(tl_csv_read_file("/nonexistent/x.csv", &f->arena, &f->err));
    assert_non_null(strstr(f->err.msg, "/nonexistent/x.csv: cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_column_keeps_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_spellings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
        cmocka_unit_test(test_numbers_match_strtod),
        cmocka_unit_test_setup_teardown(test_quoting_and_line_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quoted_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_in_numeric_column, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_rows_are_padded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_utf8_is_carried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_file_errors, setup, teardown),
    };
    return cmocka_run_group_tests_name("csv_read", tests, NULL, NULL);
}
