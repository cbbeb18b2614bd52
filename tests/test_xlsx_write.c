/*
 * test_xlsx_write.c - worksheet names (31 characters, collisions) and the workbook writer:
 * round trips through the project's reader, the package's structure, the summary sheet
 * and its chart, the zip writer's ZIP64 end records, and the escaping of text with the
 * special bytes at every offset (checked exactly against a byte-at-a-time model).
 */
#include "testutil.h"

#include "base/arena.h"
#include "base/pool.h"
#include "base/util.h"
#include "read/xlsx_read.h"
#include "write/xlsx_write.h"
#include "io/zip_write.h"

#include <math.h>
#include <zip.h>

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


/* ---- the workbook writer ------------------------------------------------------------------- */

/* A table of nrows rows whose columns are given one by one with put_col(). */
static tl_table *new_table(size_t nrows)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    return t;
}

static tl_column *put_col(tl_table *t, const char *name, const tl_cell *cells)
{
    size_t c = tl_table_add_column(t, name);
    for (size_t r = 0; cells && r < t->nrows; r++)
        t->cols[c].cells[r] = cells[r];
    return &t->cols[c];
}

static void add_result(tl_results *res, const char *name, tl_table *t, const char *const *hidden)
{
    TL_GROW(res->items, res->cap, res->n + 1);
    res->items[res->n++] = (tl_result){.name = name, .table = t, .hidden_suffixes = hidden};
}

static char *tmp_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The cell as it reads back: invalid UTF-8 replaced by U+FFFD (maximal subparts). */
static const char *INVALID_IN = "bad \xff utf8 \xe2\x82 end \xed\xa0\x80 \xf4\x90";
static const char *INVALID_OUT = "bad \xef\xbf\xbd utf8 \xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                                 "\xef\xbf\xbd\xef\xbf\xbd";

static void assert_cell_equal(const tl_cell *want, const tl_cell *got, const char *sheet, size_t col, size_t row)
{
    if (want->kind == TL_MISSING || (want->kind == TL_FLOAT && isnan(want->v.f)) ||
        (want->kind == TL_STR && !*want->v.s)) {
        if (got->kind != TL_MISSING)
            fail_msg("%s col %zu row %zu: expected missing, got kind %d", sheet, col, row, got->kind);
        return;
    }
    if (want->kind == TL_BOOL) {
        if (got->kind != TL_BOOL || got->v.b != want->v.b)
            fail_msg("%s col %zu row %zu: expected bool %d", sheet, col, row, want->v.b);
        return;
    }
    if (want->kind == TL_STR) {
        if (got->kind != TL_STR)
            fail_msg("%s col %zu row %zu: expected string '%s', got kind %d", sheet, col, row, want->v.s,
                     got->kind);
        const char *exp = strcmp(want->v.s, INVALID_IN) == 0 ? INVALID_OUT : want->v.s;
        if (strcmp(got->v.s, exp) != 0)
            fail_msg("%s col %zu row %zu: expected '%s', got '%s'", sheet, col, row, exp, got->v.s);
        return;
    }
    /* numbers: the reader makes integral floats ints, as pandas does */
    if (got->kind != TL_INT && got->kind != TL_FLOAT)
        fail_msg("%s col %zu row %zu: expected a number, got kind %d", sheet, col, row, got->kind);
    if (want->kind == TL_INT && got->kind == TL_INT) {
        if (want->v.i != got->v.i)
            fail_msg("%s col %zu row %zu: %lld != %lld", sheet, col, row, (long long)want->v.i,
                     (long long)got->v.i);
        return;
    }
    double w = tl_cell_number(want), g = tl_cell_number(got);
    if (!(w == g))
        fail_msg("%s col %zu row %zu: %.17g != %.17g", sheet, col, row, w, g);
}

static void assert_tables_equal(const tl_table *want, const tl_table *got, const char *sheet)
{
    if (want->nrows == 0) {
        assert_int_equal(got->nrows, 0); /* a header-only sheet reads back empty */
        return;
    }
    assert_int_equal(got->ncols, want->ncols);
    assert_int_equal(got->nrows, want->nrows);
    for (size_t c = 0; c < want->ncols; c++) {
        assert_string_equal(got->cols[c].name, want->cols[c].name);
        for (size_t r = 0; r < want->nrows; r++)
            assert_cell_equal(&want->cols[c].cells[r], &got->cols[c].cells[r], sheet, c, r);
    }
}

/* Results covering every kind of cell and the awkward texts. */
static void build_results(tl_results *res)
{
    memset(res, 0, sizeof *res);

    tl_table *num = new_table(8);
    put_col(num, "key", (tl_cell[]){tl_cell_str("a"), tl_cell_str("b"), tl_cell_str("c"), tl_cell_str("d"),
                                    tl_cell_str("e"), tl_cell_str("f"), tl_cell_str("g"), tl_cell_str("h")});
    put_col(num, "int", (tl_cell[]){tl_cell_int(0), tl_cell_int(-1), tl_cell_int(48), tl_cell_int(9007199254740993LL),
                                    tl_cell_int(INT64_MAX), tl_cell_int(-INT64_MAX), tl_cell_int(123456789012LL),
                                    tl_cell_int(7)});
    put_col(num, "float", (tl_cell[]){tl_cell_float(0.1), tl_cell_float(1e-05), tl_cell_float(1.2345678901234568e+17),
                                      tl_cell_float(-0.0), tl_cell_float(100.0), tl_cell_float(5e-324),
                                      tl_cell_float(-1.7976931348623157e308), tl_cell_float(2.5)});
    put_col(num, "float_missing", (tl_cell[]){tl_cell_float(NAN), tl_cell_missing(), tl_cell_float(INFINITY),
                                              tl_cell_float(-INFINITY), tl_cell_float(3.25), tl_cell_missing(),
                                              tl_cell_float(1e22), tl_cell_float(-2.5e-7)});
    put_col(num, "bool", (tl_cell[]){tl_cell_bool(1), tl_cell_bool(0), tl_cell_missing(), tl_cell_bool(1),
                                     tl_cell_bool(0), tl_cell_bool(0), tl_cell_bool(1), tl_cell_missing()});
    add_result(res, "numbers", num, NULL);

    static const char *texts[] = {
        "a & b < c > d \" e ' f",
        "line1\nline2\n",
        "tab\there",
        "_x0041_ and _x005f_ and _xZZZZ_ and _x12",
        "__x0041_ _x005F_x0041_ x_x0000_x _x_x1234_ _X0041_ _x00411_ _x0041_",
        "  leading and trailing  ",
        "\xc2\xb5s and \xf0\x9f\x98\x80 emoji",
        NULL, /* INVALID_IN */
        "cr\r\nlf, ctl \x01\x1f\x7f",
        "nonchar \xef\xbf\xbe\xef\xbf\xbf and _xFFFE_",
        "",
        "\t",
        "<tag attr=\"v\">&amp;</tag>",
    };
    size_t n = sizeof texts / sizeof *texts;
    tl_table *str = new_table(n);
    tl_cell cells[sizeof texts / sizeof *texts], keys[sizeof texts / sizeof *texts];
    for (size_t i = 0; i < n; i++) {
        cells[i] = tl_cell_str(texts[i] ? texts[i] : INVALID_IN);
        keys[i] = tl_cell_int((int64_t)i);
    }
    put_col(str, "row", keys);
    put_col(str, "text & <more>", cells);
    add_result(res, "strings", str, NULL);

    add_result(res, "empty", new_table(0), NULL);

    tl_table *head = new_table(0);
    put_col(head, "only", NULL);
    put_col(head, "a header", NULL);
    add_result(res, "header_only", head, NULL);

    static const char *const hidden[] = {"_max", "kernel_names", NULL};
    tl_table *hid = new_table(2);
    put_col(hid, "name", (tl_cell[]){tl_cell_str("x"), tl_cell_str("y")});
    put_col(hid, "t::time_max", (tl_cell[]){tl_cell_float(1.5), tl_cell_float(2.5)});
    put_col(hid, "t::time_mean", (tl_cell[]){tl_cell_float(1.0), tl_cell_float(2.0)});
    put_col(hid, "t::kernel_names", (tl_cell[]){tl_cell_str("k1"), tl_cell_str("k2")});
    tl_column *d = put_col(hid, "time_mean__v_diff", (tl_cell[]){tl_cell_float(-1.0), tl_cell_float(2.0)});
    d->role = TL_ROLE_DIFF;
    add_result(res, "unified_perf_summary_intersect_variant_one", hid, hidden);

    tl_table *hid2 = new_table(1);
    put_col(hid2, "name", (tl_cell[]){tl_cell_str("z")});
    add_result(res, "unified_perf_summary_intersect_variant_two", hid2, hidden);
}

static void free_results(tl_results *res) { tl_results_free(res); }

static void check_round_trip(const tl_results *res, const char *path, int threads)
{
    tl_error err = {0};
    tl_xlsx_write_opts opts = {NULL, threads, 0};
    int rc = tl_xlsx_write(res, &opts, path, &err);
    if (rc != 0)
        fail_msg("tl_xlsx_write: %s", err.msg);

    tl_xlsx *x = tl_xlsx_open(path, &err);
    if (!x)
        fail_msg("tl_xlsx_open: %s", err.msg);
    assert_int_equal(tl_xlsx_sheet_count(x), res->n);
    const char **names = malloc(res->n * sizeof *names);
    for (size_t i = 0; i < res->n; i++)
        names[i] = res->items[i].name;
    char **tabs = tl_tab_names(names, res->n);
    free(names);
    tl_arena arena;
    tl_arena_init(&arena);
    for (size_t i = 0; i < res->n; i++) {
        assert_string_equal(tl_xlsx_sheet_name(x, i), tabs[i]);
        tl_table *got = tl_xlsx_read_sheet(x, tabs[i], &arena, &err);
        if (!got)
            fail_msg("read sheet %s: %s", tabs[i], err.msg);
        assert_tables_equal(res->items[i].table, got, tabs[i]);
        tl_table_free(got);
    }
    tl_arena_free(&arena);
    tl_tab_names_free(tabs, res->n);
    tl_xlsx_close(x);
}

static void test_round_trip(void **state)
{
    (void)state;
    tl_results res;
    build_results(&res);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "rt.xlsx");
    check_round_trip(&res, path, 2);
    check_round_trip(&res, path, 1);
    check_round_trip(&res, path, 7);
    /* the sheet names: cut to 31, the second cut one ends in ~2 */
    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open(path, &err);
    assert_non_null(x);
    assert_string_equal(tl_xlsx_sheet_name(x, 4), "unified_perf_summary_intersect_");
    assert_string_equal(tl_xlsx_sheet_name(x, 5), "unified_perf_summary_intersec~2");
    tl_xlsx_close(x);
    free_results(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* The inflated text of one zip entry (NUL-terminated, malloc'd), or NULL when absent. */
static char *zip_text(zip_t *z, const char *name)
{
    zip_int64_t idx = zip_name_locate(z, name, 0);
    if (idx < 0)
        return NULL;
    zip_stat_t st;
    assert_int_equal(zip_stat_index(z, (zip_uint64_t)idx, 0, &st), 0);
    char *buf = malloc(st.size + 1);
    zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)idx, 0);
    assert_non_null(f);
    assert_int_equal(zip_fread(f, buf, st.size), (zip_int64_t)st.size);
    zip_fclose(f);
    buf[st.size] = '\0';
    return buf;
}

static int zip_has(zip_t *z, const char *name) { return zip_name_locate(z, name, 0) >= 0; }

static void test_structure_and_hidden_columns(void **state)
{
    (void)state;
    tl_results res;
    build_results(&res);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "s.xlsx");
    tl_error err = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);

    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    assert_non_null(z);
    const char *parts[] = {"[Content_Types].xml", "_rels/.rels", "docProps/app.xml", "docProps/core.xml",
                           "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/styles.xml",
                           "xl/worksheets/sheet1.xml", "xl/worksheets/sheet6.xml"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (!zip_has(z, parts[i]))
            fail_msg("no part %s", parts[i]);
    assert_false(zip_has(z, "xl/worksheets/sheet7.xml"));
    assert_false(zip_has(z, "xl/charts/chart1.xml"));
    assert_false(zip_has(z, "xl/drawings/drawing1.xml"));

    /* sheet 5: columns B (time_max) and D (kernel_names) hidden, the others not */
    char *xml = zip_text(z, "xl/worksheets/sheet5.xml");
    assert_non_null(xml);
    assert_non_null(strstr(xml, "<col min=\"2\" max=\"2\""));
    assert_true(strstr(strstr(xml, "<col min=\"2\" max=\"2\""), "/>") >
                strstr(strstr(xml, "<col min=\"2\" max=\"2\""), "hidden=\"1\""));
    const char *c1 = strstr(xml, "<col min=\"1\" max=\"1\""), *c3 = strstr(xml, "<col min=\"3\" max=\"3\"");
    const char *c4 = strstr(xml, "<col min=\"4\" max=\"4\""), *c5 = strstr(xml, "<col min=\"5\" max=\"5\"");
    assert_non_null(c1);
    assert_non_null(c3);
    assert_non_null(c4);
    assert_non_null(c5);
    assert_true(strstr(c1, "/>") < strstr(c1, "hidden") || !strstr(c1, "hidden"));
    assert_true(strstr(c3, "/>") < strstr(c3, "hidden") || !strstr(c3, "hidden"));
    assert_true(strstr(c4, "/>") > strstr(c4, "hidden=\"1\""));
    assert_true(strstr(c5, "/>") < strstr(c5, "hidden") || !strstr(c5, "hidden"));
    /* presentation: frozen header, autofilter, a colour rule on the diff column */
    assert_non_null(strstr(xml, "state=\"frozen\""));
    assert_non_null(strstr(xml, "<autoFilter ref=\"A1:E3\"/>"));
    assert_non_null(strstr(xml, "<conditionalFormatting sqref=\"E2:E3\">"));
    assert_non_null(strstr(xml, "<c r=\"A1\" s=\"1\" t=\"inlineStr\"><is><t>name</t></is></c>"));
    free(xml);

    /* NaN and the infinities are text, as in the CSV: a number cell holding one makes
     * Excel repair the workbook and openpyxl (pandas.read_excel) fail on it */
    xml = zip_text(z, "xl/worksheets/sheet1.xml");
    assert_non_null(strstr(xml, "t=\"inlineStr\"><is><t>nan</t></is></c>"));
    assert_non_null(strstr(xml, "t=\"inlineStr\"><is><t>-inf</t></is></c>"));
    assert_null(strstr(xml, "NaN</v>"));
    assert_null(strstr(xml, "<v>nan"));
    free(xml);

    /* the empty result: an empty worksheet */
    xml = zip_text(z, "xl/worksheets/sheet3.xml");
    assert_non_null(strstr(xml, "<sheetData/>"));
    free(xml);

    xml = zip_text(z, "xl/workbook.xml");
    assert_non_null(strstr(xml, "<definedName name=\"_xlnm._FilterDatabase\" localSheetId=\"0\" hidden=\"1\">"
                                "'numbers'!$A$1:$E$9</definedName>"));
    free(xml);
    zip_close(z);
    free_results(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

static void test_number_formats_and_colours(void **state)
{
    (void)state;
    tl_results res = {0};
    tl_table *t = new_table(1);
    const char *names[] = {"b::time ms", "b::Kernel Time (\xc2\xb5s)_sum", "b::Count", "b::Percentage (%)",
                           "b::TFLOPS/s_mean", "TFLOPS/s_mean__v_diff", "TFLOPS/s_mean__v_pct",
                           "time ms__v_diff", "b::name_count", "b::mean_count", "b::busy_usage"};
    tl_cell vals[] = {tl_cell_float(1.5), tl_cell_float(2.5), tl_cell_int(3), tl_cell_float(4.5),
                      tl_cell_float(5.5), tl_cell_float(6.5), tl_cell_float(7.5), tl_cell_float(8.5),
                      tl_cell_int(9), tl_cell_float(1.25), tl_cell_float(1.5)};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        tl_column *c = put_col(t, names[i], &vals[i]);
        if (strstr(names[i], "__"))
            c->role = TL_ROLE_DIFF;
    }
    add_result(&res, "formats", t, NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "f.xlsx");
    tl_error err = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    char *xml = zip_text(z, "xl/worksheets/sheet1.xml");
    /* styles: 2 = 0.00, 3 = #,##0.000, 4 = #,##0.00, 5 = #,##0 */
    assert_non_null(strstr(xml, "<c r=\"A2\" s=\"3\"><v>1.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"B2\" s=\"4\"><v>2.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"C2\" s=\"5\"><v>3</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"D2\" s=\"2\"><v>4.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"E2\"><v>5.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"F2\"><v>6.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"G2\" s=\"2\"><v>7.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"H2\" s=\"3\"><v>8.5</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"I2\" s=\"5\"><v>9</v></c>"));
    assert_non_null(strstr(xml, "<c r=\"J2\"><v>1.25</v></c>"));   /* not integral: General */
    assert_non_null(strstr(xml, "<c r=\"K2\"><v>1.5</v></c>"));    /* "_usage" is no unit */
    /* time is lower-is-better (red when it grew), TFLOPS/s the other way */
    const char *lower = strstr(xml, "<conditionalFormatting sqref=\"H2:H2\">");
    const char *higher = strstr(xml, "<conditionalFormatting sqref=\"F2:F2 G2:G2\">");
    assert_non_null(lower);
    assert_non_null(higher);
    assert_non_null(strstr(lower, "dxfId=\"0\" priority=\"1\" operator=\"greaterThan\""));
    assert_non_null(strstr(higher, "dxfId=\"1\" priority=\"3\" operator=\"greaterThan\""));
    free(xml);
    xml = zip_text(z, "xl/styles.xml");
    assert_non_null(strstr(xml, "<dxfs count=\"2\">"));
    free(xml);
    zip_close(z);
    tl_results_free(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

static void test_summary_sheet_and_chart(void **state)
{
    (void)state;
    tl_results res;
    build_results(&res);
    /* a result named like the summary: the summary's tab gives way */
    tl_table *t = new_table(1);
    put_col(t, "x", (tl_cell[]){tl_cell_int(1)});
    add_result(&res, "Summary", t, NULL);

    tl_table *blk = new_table(2);
    put_col(blk, "op", (tl_cell[]){tl_cell_str("aten::mm"), tl_cell_str("aten::add")});
    put_col(blk, "base (ms)", (tl_cell[]){tl_cell_float(2.0), tl_cell_float(1.0)});
    tl_column *dc = put_col(blk, "delta (ms)", (tl_cell[]){tl_cell_float(0.5), tl_cell_float(-0.25)});
    dc->role = TL_ROLE_DIFF;
    tl_sheet_block blocks[] = {{"first block", blk}, {NULL, blk}};
    const char *cats[] = {"aten::mm", "it's <odd> & long"};
    double base[] = {2.0, 1.0}, var[] = {2.5, NAN};
    tl_chart_series series[] = {{"base", base}, {"var", var}};
    tl_sheet_chart chart = {"Top ops", "GPU kernel time (ms)", 2, cats, 2, series};
    tl_summary_sheet sum = {"summary", blocks, 2, &chart};

    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "sum.xlsx");
    tl_error err = {0};
    tl_xlsx_write_opts opts = {&sum, 2, 0};
    if (tl_xlsx_write(&res, &opts, path, &err) != 0)
        fail_msg("%s", err.msg);

    tl_xlsx *x = tl_xlsx_open(path, &err);
    assert_non_null(x);
    assert_int_equal(tl_xlsx_sheet_count(x), res.n + 1);
    assert_string_equal(tl_xlsx_sheet_name(x, 0), "summary~2");
    assert_string_equal(tl_xlsx_sheet_name(x, 1), "numbers");
    assert_string_equal(tl_xlsx_sheet_name(x, res.n), "Summary");
    tl_arena arena;
    tl_arena_init(&arena);
    tl_table *got = tl_xlsx_read_sheet(x, "numbers", &arena, &err);
    assert_non_null(got);
    assert_tables_equal(res.items[0].table, got, "numbers");
    tl_table_free(got);
    /* the summary reads as a table whose "header" is the first title line */
    got = tl_xlsx_read_sheet(x, "summary~2", &arena, &err);
    assert_non_null(got);
    assert_string_equal(got->cols[0].name, "first block");
    tl_table_free(got);
    tl_arena_free(&arena);
    tl_xlsx_close(x);

    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    assert_non_null(z);
    assert_true(zip_has(z, "xl/charts/chart1.xml"));
    assert_true(zip_has(z, "xl/drawings/drawing1.xml"));
    assert_true(zip_has(z, "xl/drawings/_rels/drawing1.xml.rels"));
    assert_true(zip_has(z, "xl/worksheets/_rels/sheet1.xml.rels"));
    char *xml = zip_text(z, "xl/charts/chart1.xml");
    assert_non_null(strstr(xml, "<c:barChart><c:barDir val=\"bar\"/>"));
    /* layout: title 1, header 2, rows 3-4, blank, header 6, rows 7-8, blank, "chart data" 10,
     * header 11, rows 12-13 */
    assert_non_null(strstr(xml, "<c:f>'summary~2'!$B$11</c:f>"));
    assert_non_null(strstr(xml, "<c:f>'summary~2'!$A$12:$A$13</c:f>"));
    assert_non_null(strstr(xml, "<c:f>'summary~2'!$C$12:$C$13</c:f>"));
    assert_non_null(strstr(xml, "<c:v>it's &lt;odd&gt; &amp; long</c:v>"));
    assert_non_null(strstr(xml, "<c:pt idx=\"0\"><c:v>2.5</c:v></c:pt></c:numCache>")); /* NaN: no point */
    free(xml);
    xml = zip_text(z, "xl/worksheets/sheet1.xml");
    assert_non_null(strstr(xml, "<c r=\"A10\" s=\"1\" t=\"inlineStr\"><is><t>chart data</t></is></c>"));
    assert_non_null(strstr(xml, "<c r=\"C13\"") == NULL ? "ok" : NULL);
    /* the summary shows times as ms: no column of raw digits */
    assert_non_null(strstr(xml, "<c r=\"B12\" s=\"3\"><v>2.0</v></c><c r=\"C12\" s=\"3\"><v>2.5</v></c>"));
    assert_non_null(strstr(xml, "<conditionalFormatting sqref=\"C3:C4 C7:C8\">"));
    assert_non_null(strstr(xml, "<drawing r:id=\"rId1\"/>"));
    free(xml);
    xml = zip_text(z, "xl/drawings/drawing1.xml");
    assert_non_null(strstr(xml, "<xdr:from><xdr:col>4</xdr:col>")); /* 3 columns of blocks, one apart */
    free(xml);
    zip_close(z);

    /* without a chart: no drawing parts */
    sum.chart = NULL;
    assert_int_equal(tl_xlsx_write(&res, &opts, path, &err), 0);
    z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    assert_non_null(z);
    assert_false(zip_has(z, "xl/charts/chart1.xml"));
    assert_false(zip_has(z, "xl/drawings/drawing1.xml"));
    zip_close(z);

    tl_table_free(blk);
    free_results(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

static void test_no_results_and_errors(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "none.xlsx");
    tl_results res = {0};
    tl_error err = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    tl_xlsx *x = tl_xlsx_open(path, &err);
    assert_non_null(x);
    assert_int_equal(tl_xlsx_sheet_count(x), 1); /* a workbook needs a sheet */
    tl_xlsx_close(x);

    char *bad = tmp_path(dir, "no/such/dir/x.xlsx");
    assert_int_equal(tl_xlsx_write(&res, NULL, bad, &err), -1);
    assert_true(err.set);
    assert_non_null(strstr(err.msg, bad));
    free(bad);

    /* more rows than a worksheet holds: refused before anything is written */
    tl_table *t = new_table(1048576);
    put_col(t, "x", NULL);
    add_result(&res, "huge", t, NULL);
    char *big = tmp_path(dir, "big.xlsx");
    tl_error err2 = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, big, &err2), -1);
    assert_non_null(strstr(err2.msg, "huge"));
    assert_int_equal(access(big, F_OK), -1);
    /* more columns than a worksheet holds */
    tl_results wide = {0};
    tl_table *w = new_table(1);
    for (int c = 0; c < 16385; c++)
        put_col(w, "c", NULL);
    add_result(&wide, "wide", w, NULL);
    tl_error err3 = {0};
    assert_int_equal(tl_xlsx_write(&wide, NULL, big, &err3), -1);
    assert_non_null(strstr(err3.msg, "wide"));
    tl_results_free(&wide);
    free(big);
    tl_results_free(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

static void test_long_text_is_cut(void **state)
{
    (void)state;
    size_t n = 40000;
    char *s = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(s + 2 * i, "\xc2\xb5", 2); /* two bytes, one character */
    s[2 * n] = '\0';
    tl_results res = {0};
    tl_table *t = new_table(1);
    put_col(t, "text", (tl_cell[]){tl_cell_str(s)});
    add_result(&res, "long", t, NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "long.xlsx");
    tl_error err = {0};
    int quiet = tl_quiet;
    tl_quiet = 1;
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    tl_quiet = quiet;
    tl_xlsx *x = tl_xlsx_open(path, &err);
    assert_non_null(x);
    tl_arena arena;
    tl_arena_init(&arena);
    tl_table *got = tl_xlsx_read_sheet(x, "long", &arena, &err);
    assert_non_null(got);
    assert_int_equal(strlen(got->cols[0].cells[0].v.s), 2 * 32767);
    tl_table_free(got);
    tl_arena_free(&arena);
    tl_xlsx_close(x);
    tl_results_free(&res);
    free(s);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* A sheet whose XML is many compressor pieces long reads back whole. */
static void test_large_sheet_round_trip(void **state)
{
    (void)state;
    size_t n = 40000;
    tl_arena arena;
    tl_arena_init(&arena);
    tl_table *t = new_table(n);
    size_t c0 = tl_table_add_column(t, "name"), c1 = tl_table_add_column(t, "b::time ms");
    size_t c2 = tl_table_add_column(t, "b::Count");
    for (size_t r = 0; r < n; r++) {
        t->cols[c0].cells[r] = tl_cell_str(tl_arena_printf(
            &arena, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>> #%zu", r));
        t->cols[c1].cells[r] = tl_cell_float((double)r / 7.0);
        t->cols[c2].cells[r] = tl_cell_int((int64_t)r * 1000003);
    }
    tl_results res = {0};
    add_result(&res, "big", t, NULL);
    add_result(&res, "big_again", new_table(0), NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "big.xlsx");
    check_round_trip(&res, path, 2);
    check_round_trip(&res, path, 1);
    tl_results_free(&res);
    tl_arena_free(&arena);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* Rows [lo, hi) of the test sheet below, as a table of their own. */
static tl_table *part_rows(tl_arena *a, size_t lo, size_t hi)
{
    tl_table *t = new_table(hi - lo);
    size_t c0 = tl_table_add_column(t, "name"), c1 = tl_table_add_column(t, "b::time ms");
    size_t c2 = tl_table_add_column(t, "b::Count");
    for (size_t r = lo; r < hi; r++) {
        t->cols[c0].cells[r - lo] = r % 5 ? tl_cell_str(tl_arena_printf(a, "kernel <%zu> & \"q\"", r * 7919 % 1000))
                                          : tl_cell_str("");
        t->cols[c1].cells[r - lo] = r % 11 ? tl_cell_float((double)r / 3.0) : tl_cell_float(NAN);
        t->cols[c2].cells[r - lo] = tl_cell_int((int64_t)r * 1000003);
    }
    return t;
}

/* The book of results {"first" (3 rows), the test sheet (n rows; whole, or in parts of
 * `part` rows given to tl_xlsx_writer_add_part), "last" (empty)} written to path. */
static void write_parts(const char *path, size_t n, size_t part, tl_arena *a)
{
    tl_error err = {0};
    tl_pool *pool = tl_pool_new(1);
    tl_xlsx_writer *w = tl_xlsx_writer_open(path, 0, pool, &err);
    assert_non_null(w);
    tl_result first = {.name = "first", .table = part_rows(a, 0, 3)};
    assert_int_equal(tl_xlsx_writer_add(w, &first, &err), 0);
    tl_table *whole = NULL;
    if (!part) {
        tl_result r = {.name = "rows", .table = whole = part_rows(a, 0, n)};
        assert_int_equal(tl_xlsx_writer_add(w, &r, &err), 0);
    }
    for (size_t lo = 0; part && lo < n; lo += part) {
        tl_result r = {.name = "rows", .table = part_rows(a, lo, lo + part < n ? lo + part : n)};
        assert_int_equal(tl_xlsx_writer_add_part(w, &r, n, &err), 0); /* the table is the writer's */
    }
    tl_result last = {.name = "last", .table = new_table(0)};
    assert_int_equal(tl_xlsx_writer_add(w, &last, &err), 0);
    assert_int_equal(tl_xlsx_writer_close(w, NULL, &err), 0);
    tl_pool_free(pool, 0);
    tl_table_free(first.table);
    tl_table_free(whole);
    tl_table_free(last.table);
}

/* A sheet given in parts is the sheet given whole: every part of the package the same
 * text (its head with the first part, its tail and conditional formats with the last, the
 * row numbers running on), whatever the parts' sizes. */
static void test_sheet_in_parts(void **state)
{
    (void)state;
    tl_arena arena;
    tl_arena_init(&arena);
    char *dir = tt_tmpdir();
    char *whole = tmp_path(dir, "whole.xlsx"), *parts = tmp_path(dir, "parts.xlsx");
    static const char *const entries[] = {"xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml",
                                          "xl/worksheets/sheet3.xml", "xl/workbook.xml", "[Content_Types].xml",
                                          "docProps/app.xml"};
    static const size_t sizes[][2] = {{1000, 250}, {1000, 999}, {1000, 1000}, {457, 200}, {5000, 1024}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        write_parts(whole, sizes[k][0], 0, &arena);
        write_parts(parts, sizes[k][0], sizes[k][1], &arena);
        int e1, e2;
        zip_t *a = zip_open(whole, ZIP_RDONLY, &e1), *b = zip_open(parts, ZIP_RDONLY, &e2);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
            char *x = zip_text(a, entries[i]), *y = zip_text(b, entries[i]);
            assert_non_null(x);
            assert_non_null(y);
            if (strcmp(x, y) != 0)
                fail_msg("%zu rows in parts of %zu: %s differs", sizes[k][0], sizes[k][1], entries[i]);
            free(x);
            free(y);
        }
        zip_close(a);
        zip_close(b);
    }
    /* a sheet larger than a worksheet is refused at its first part, its table freed */
    tl_error err = {0};
    tl_pool *pool = tl_pool_new(1);
    tl_xlsx_writer *w = tl_xlsx_writer_open(parts, 0, pool, &err);
    tl_result r = {.name = "huge", .table = part_rows(&arena, 0, 300)};
    assert_int_equal(tl_xlsx_writer_add_part(w, &r, 1048576, &err), -1);
    assert_non_null(strstr(err.msg, "result 'huge' has 1048576 rows x 3 columns, more than a worksheet holds"));
    tl_xlsx_writer_abort(w);
    tl_pool_free(pool, 1);
    /* a sheet whose parts stop short of its rows: the book is refused, not written without it */
    pool = tl_pool_new(1);
    err = (tl_error){0};
    w = tl_xlsx_writer_open(parts, 0, pool, &err);
    r = (tl_result){.name = "short", .table = part_rows(&arena, 0, 300)};
    assert_int_equal(tl_xlsx_writer_add_part(w, &r, 500, &err), 0);
    assert_int_equal(tl_xlsx_writer_close(w, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "result 'short' was given 300 of its 500 rows"));
    tl_pool_free(pool, 1);
    /* parts beyond the sheet's rows, or of other columns: refused, the part's table freed */
    pool = tl_pool_new(1);
    err = (tl_error){0};
    w = tl_xlsx_writer_open(parts, 0, pool, &err);
    r = (tl_result){.name = "over", .table = part_rows(&arena, 0, 250)};
    assert_int_equal(tl_xlsx_writer_add_part(w, &r, 300, &err), 0);
    r = (tl_result){.name = "over", .table = part_rows(&arena, 250, 310)};
    assert_int_equal(tl_xlsx_writer_add_part(w, &r, 300, &err), -1);
    assert_non_null(strstr(err.msg, "a part of result 'over' (60 rows x 3 columns) does not fit: 250 of its 300 rows"));
    tl_xlsx_writer_abort(w);
    tl_pool_free(pool, 1);
    free(whole);
    free(parts);
    tt_rmrf(dir);
    free(dir);
    tl_arena_free(&arena);
}

/* More than 65,535 entries: the ZIP64 end records; libzip must read it back. */
static void test_zip64_many_entries(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "many.zip");
    tl_error err = {0};
    tl_zip *z = tl_zip_create(path, &err);
    assert_non_null(z);
    size_t n = 70000;
    for (size_t i = 0; i < n; i++) {
        char name[32], data[64];
        snprintf(name, sizeof name, "e/%zu.txt", i);
        int len = snprintf(data, sizeof data, "entry %zu entry %zu entry %zu", i, i, i);
        assert_int_equal(tl_zip_add(z, name, data, (size_t)len, &err), 0);
    }
    assert_int_equal(tl_zip_close(z, &err), 0);
    int zerr = 0;
    zip_t *zr = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    assert_non_null(zr);
    assert_int_equal(zip_get_num_entries(zr, 0), (zip_int64_t)n);
    char *text = zip_text(zr, "e/69999.txt");
    assert_string_equal(text, "entry 69999 entry 69999 entry 69999");
    free(text);
    text = zip_text(zr, "e/0.txt");
    assert_string_equal(text, "entry 0 entry 0 entry 0");
    free(text);
    zip_close(zr);

    /* a larger entry, deflated, and an empty one */
    z = tl_zip_create(path, &err);
    tl_buf big = {0};
    for (int i = 0; i < 100000; i++)
        tl_buf_printf(&big, "<c r=\"A%d\"><v>%d.5</v></c>", i, i);
    assert_int_equal(tl_zip_add(z, "big.xml", big.data, big.len, &err), 0);
    assert_int_equal(tl_zip_add(z, "empty", "", 0, &err), 0);
    assert_int_equal(tl_zip_close(z, &err), 0);
    zr = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    assert_non_null(zr);
    text = zip_text(zr, "big.xml");
    assert_string_equal(text, big.data);
    free(text);
    text = zip_text(zr, "empty");
    assert_string_equal(text, "");
    free(text);
    zip_stat_t st;
    assert_int_equal(zip_stat(zr, "big.xml", 0, &st), 0);
    assert_int_equal(st.comp_method, ZIP_CM_DEFLATE);
    assert_true(st.comp_size < st.size / 4);
    zip_close(zr);
    tl_buf_free(&big);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* ---- text escaping at every offset (the writer copies plain text a block at a time) --------- */

static int model_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

/* The length of the valid UTF-8 sequence at s[0..n) (s[0] >= 0x80), or 0 with *skip = the
 * bytes one U+FFFD stands for (the maximal ill-formed prefix, at least 1). */
static size_t model_utf8(const unsigned char *s, size_t n, size_t *skip)
{
    static const struct { unsigned char first_lo, first_hi, len, lo, hi; } forms[] = {
        {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF}, {0xE1, 0xEC, 3, 0x80, 0xBF},
        {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF},
        {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
    };
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        if (s[0] < forms[f].first_lo || s[0] > forms[f].first_hi)
            continue;
        size_t k = 1;
        while (k < forms[f].len && k < n &&
               (k == 1 ? s[k] >= forms[f].lo && s[k] <= forms[f].hi : s[k] >= 0x80 && s[k] <= 0xBF))
            k++;
        if (k == forms[f].len)
            return k;
        *skip = k;
        return 0;
    }
    *skip = 1;
    return 0;
}

/* What the writer should make of text s[0..n), byte by byte from the rules: in a cell
 * (`cell`) or in an attribute value. */
static void model_text(tl_buf *b, const unsigned char *s, size_t n, int cell)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t skip = 0, len = model_utf8(s + i, n - i, &skip);
            if (len == 3 && c == 0xEF && s[i + 1] == 0xBF && s[i + 2] >= 0xBE)
                tl_buf_adds(b, !cell ? "\xEF\xBF\xBD" : s[i + 2] == 0xBE ? "_xFFFE_" : "_xFFFF_");
            else if (len)
                tl_buf_add(b, s + i, len);
            else
                tl_buf_adds(b, "\xEF\xBF\xBD");
            i += len ? len : skip;
            continue;
        }
        if (c == '&')
            tl_buf_adds(b, "&amp;");
        else if (c == '<')
            tl_buf_adds(b, "&lt;");
        else if (c == '>')
            tl_buf_adds(b, "&gt;");
        else if (c == '"')
            tl_buf_adds(b, "&quot;");
        else if (c == '\t' || c == '\n')
            cell ? tl_buf_addc(b, (char)c) : tl_buf_adds(b, c == '\t' ? "&#9;" : "&#10;");
        else if (c < 0x20 && cell)
            tl_buf_printf(b, "_x%04X_", c);
        else if (c == '\r')
            tl_buf_adds(b, "&#13;");
        else if (c < 0x20)
            tl_buf_adds(b, "\xEF\xBF\xBD");
        else if (c == 'x' && cell && i >= 1 && s[i - 1] == '_' && n - i >= 6 && model_hex(s[i + 1]) &&
                 model_hex(s[i + 2]) && model_hex(s[i + 3]) && model_hex(s[i + 4]) && s[i + 5] == '_')
            tl_buf_adds(b, "x005F_x");
        else
            tl_buf_addc(b, (char)c);
        i++;
    }
}

/* The XML of a text cell (at `ref`, "A7"), from the model. */
static void model_cell(tl_buf *b, const char *ref, const char *s, size_t n, int bold)
{
    tl_buf_printf(b, "<c r=\"%s\"%s t=\"inlineStr\"><is><t", ref, bold ? " s=\"1\"" : "");
    const char *ws = " \t\n\r";
    if (strchr(ws, s[0]) || strchr(ws, s[n - 1]))
        tl_buf_adds(b, " xml:space=\"preserve\"");
    tl_buf_addc(b, '>');
    model_text(b, (const unsigned char *)s, n, 1);
    tl_buf_adds(b, "</t></is></c>");
}

/* Texts of nrows x ncols cells, each malloc'd to its exact size (so the sanitizer build
 * catches a read past one); column 0 of row r is at texts[r * ncols]. */
typedef struct text_sheet {
    size_t nrows, ncols;
    char **texts;
    size_t *lens;
} text_sheet;

static void text_sheet_init(text_sheet *ts, size_t ncols)
{
    memset(ts, 0, sizeof *ts);
    ts->ncols = ncols;
}

static void text_sheet_row(text_sheet *ts, const char *const *cols, const size_t *lens)
{
    ts->texts = realloc(ts->texts, (ts->nrows + 1) * ts->ncols * sizeof *ts->texts);
    ts->lens = realloc(ts->lens, (ts->nrows + 1) * ts->ncols * sizeof *ts->lens);
    for (size_t c = 0; c < ts->ncols; c++) {
        char *t = malloc(lens[c] + 1);
        memcpy(t, cols[c], lens[c]);
        t[lens[c]] = '\0';
        ts->texts[ts->nrows * ts->ncols + c] = t;
        ts->lens[ts->nrows * ts->ncols + c] = lens[c];
    }
    ts->nrows++;
}

static void text_sheet_free(text_sheet *ts)
{
    for (size_t i = 0; i < ts->nrows * ts->ncols; i++)
        free(ts->texts[i]);
    free(ts->texts);
    free(ts->lens);
}

/* Write the texts as a one-sheet workbook (column names `names`), with an integer
 * column after them; check every row's XML against the model, exactly. */
static void check_text_sheet(const text_sheet *ts, const char *const *names)
{
    tl_table *t = new_table(ts->nrows);
    for (size_t c = 0; c < ts->ncols; c++) {
        tl_column *col = put_col(t, names[c], NULL);
        for (size_t r = 0; r < ts->nrows; r++)
            col->cells[r] = tl_cell_strn(ts->texts[r * ts->ncols + c], ts->lens[r * ts->ncols + c]);
    }
    tl_column *num = put_col(t, "n", NULL);
    for (size_t r = 0; r < ts->nrows; r++)
        num->cells[r] = tl_cell_int((int64_t)r);
    tl_results res = {0};
    add_result(&res, "texts", t, NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "texts.xlsx");
    tl_error err = {0};
    if (tl_xlsx_write(&res, NULL, path, &err) != 0)
        fail_msg("tl_xlsx_write: %s", err.msg);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    assert_non_null(z);
    char *xml = zip_text(z, "xl/worksheets/sheet1.xml");
    assert_non_null(xml);
    zip_close(z);

    tl_buf want = {0};
    char ref[32];
    tl_buf_adds(&want, "<row r=\"1\">");
    for (size_t c = 0; c <= ts->ncols; c++) {
        snprintf(ref, sizeof ref, "%c1", (char)('A' + c));
        model_cell(&want, ref, c < ts->ncols ? names[c] : "n", strlen(c < ts->ncols ? names[c] : "n"), 1);
    }
    tl_buf_adds(&want, "</row>");
    const char *at = strstr(xml, want.data);
    if (!at)
        fail_msg("header row: want %s", want.data);
    for (size_t r = 0; r < ts->nrows; r++) {
        tl_buf_clear(&want);
        tl_buf_printf(&want, "<row r=\"%zu\">", r + 2);
        for (size_t c = 0; c < ts->ncols; c++) {
            size_t n = ts->lens[r * ts->ncols + c];
            snprintf(ref, sizeof ref, "%c%zu", (char)('A' + c), r + 2);
            if (n)
                model_cell(&want, ref, ts->texts[r * ts->ncols + c], n, 0);
        }
        tl_buf_printf(&want, "<c r=\"%c%zu\"><v>%zu</v></c></row>", (char)('A' + ts->ncols), r + 2, r);
        at = strstr(at, want.data);
        if (!at) {
            tl_buf got = {0}; /* for the message: what the row holds */
            char key[40];
            snprintf(key, sizeof key, "<row r=\"%zu\">", r + 2);
            const char *g = strstr(xml, key), *e = g ? strstr(g, "</row>") : NULL;
            if (g && e)
                tl_buf_add(&got, g, (size_t)(e - g) + 6);
            fail_msg("row %zu:\nwant %s\ngot  %s", r + 2, want.data, got.data ? got.data : "(none)");
        }
        at += want.len;
    }
    free(want.data);
    free(xml);
    tl_results_free(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* Pieces that need a look, put into plain text at every offset. */
static const char *const PIECES[] = {
    "&", "<", ">", "\"", "x", "_", "_x", "\t", "\n", "\r", "\x01", "\x1f", "\x7f", " ",
    "\xc2\xb5",                 /* µ: two bytes */
    "\xe2\x82\xac",             /* €: three */
    "\xf0\x9f\x98\x80",         /* four */
    "\xef\xbf\xbd",             /* U+FFFD itself */
    "\xef\xbf\xbe", "\xef\xbf\xbf", /* U+FFFE, U+FFFF: no XML characters */
    "\xff", "\x80", "\xc2", "\xe2\x82", "\xf0\x9f\x98", /* invalid, truncated */
    "\xed\xa0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80", "\xc0\xaf", /* surrogate, overlong, too big */
    "_x0041_", "_x005F_", "_xabcd_", "_xFFFF_", /* look-alikes, escaped */
    "_x004g_", "_x0041", "_X0041_", "x0041_", "_x00411_", "__x0041_", "_x_x0041_", /* and not */
    "^x", "#", "'", "=", "?", "y", "-", /* bytes next to the special ones */
};

static void test_text_escapes_at_every_offset(void **state)
{
    (void)state;
    static const char fill[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    text_sheet ts;
    text_sheet_init(&ts, 1);
    char buf[128];
    for (size_t p = 0; p < sizeof PIECES / sizeof *PIECES; p++) {
        size_t pl = strlen(PIECES[p]);
        for (size_t len = 0; len <= 40; len++) {
            if (len < pl) { /* plain text of that length */
                if (p == 0) {
                    memcpy(buf, fill, len);
                    const char *cols[] = {buf};
                    text_sheet_row(&ts, cols, &len);
                }
                continue;
            }
            for (size_t off = 0; off <= 17 && off + pl <= len; off++) {
                memcpy(buf, fill, len);
                memcpy(buf + off, PIECES[p], pl);
                const char *cols[] = {buf};
                text_sheet_row(&ts, cols, &len);
            }
        }
    }
    /* two pieces: every pair of offsets in a 40-byte text, for a few pieces */
    static const char *const pairs[] = {"&", "\xc2\xb5", "_x0041_", "\xff", "\x01"};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++) {
            size_t la = strlen(pairs[a]), lb = strlen(pairs[b]), len = 40;
            for (size_t o1 = 0; o1 <= 17; o1++)
                for (size_t o2 = o1 + la; o2 + lb <= len && o2 <= 33; o2 += 3) {
                    memcpy(buf, fill, len);
                    memcpy(buf + o1, pairs[a], la);
                    memcpy(buf + o2, pairs[b], lb);
                    const char *cols[] = {buf};
                    text_sheet_row(&ts, cols, &len);
                }
        }
    const char *names[] = {"text"};
    check_text_sheet(&ts, names);
    text_sheet_free(&ts);
}

/* A few cells written out in full, so that the model above is anchored too. */
static void test_text_escapes_literal(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        {"0123456789abcdef_x0041_", "<t>0123456789abcdef_x005F_x0041_</t>"},
        {"0123456789abcde_x0041_", "<t>0123456789abcde_x005F_x0041_</t>"},
        {"0123456789abcdefghijklmn_x0041_", "<t>0123456789abcdefghijklmn_x005F_x0041_</t>"},
        {"0123456789abcdefghijklm\xe2\x82\xac", "<t>0123456789abcdefghijklm\xe2\x82\xac</t>"},
        {"0123456789abcdefghijklmn\xe2\x82", "<t>0123456789abcdefghijklmn\xef\xbf\xbd</t>"},
        {"0123456789abcdefghijklmn\x01z", "<t>0123456789abcdefghijklmn_x0001_z</t>"},
        {"0123456789abcdef <a & \"b\">", "<t>0123456789abcdef &lt;a &amp; &quot;b&quot;&gt;</t>"},
        {"0123456789abcdef\xef\xbf\xbe ", "<t xml:space=\"preserve\">0123456789abcdef_xFFFE_ </t>"},
        {"0123456789abcdefghijklmnopqrstu_", "<t>0123456789abcdefghijklmnopqrstu_</t>"},
        {"0123456789abcdefghijklmnopqrst_x", "<t>0123456789abcdefghijklmnopqrst_x</t>"},
    };
    size_t n = sizeof cases / sizeof *cases;
    tl_table *t = new_table(n);
    tl_column *col = put_col(t, "t", NULL);
    for (size_t i = 0; i < n; i++)
        col->cells[i] = tl_cell_str(cases[i].in);
    tl_results res = {0};
    add_result(&res, "lit", t, NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "lit.xlsx");
    tl_error err = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    char *xml = zip_text(z, "xl/worksheets/sheet1.xml");
    zip_close(z);
    for (size_t i = 0; i < n; i++) {
        char want[256];
        snprintf(want, sizeof want, "<c r=\"A%zu\" t=\"inlineStr\"><is>%s</is></c></row>", i + 2, cases[i].out);
        if (!strstr(xml, want))
            fail_msg("case %zu: no %s", i, want);
    }
    free(xml);
    tl_results_free(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* Random texts, dense in special bytes, several to a row and long enough to make the
 * sheet many compressor pieces long (and the buffer grow inside rows). */
static void test_text_escapes_random(void **state)
{
    (void)state;
    static const char alphabet[] = "aaaaaaaabcxxxx____0123456789ABCDEFf&<>\"' ^#=?-y\t\n\r\x01\x1f\x7f"
                                   "\x80\xbf\xc2\xe0\xed\xef\xbe\xbf\xf0\xf4\x90\xa0\x8f\xff";
    uint64_t seed = 0x9E3779B97F4A7C15u;
    text_sheet ts;
    text_sheet_init(&ts, 3);
    char buf[3][2100];
    for (size_t r = 0; r < 2500; r++) {
        const char *cols[3];
        size_t lens[3];
        for (size_t c = 0; c < 3; c++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t len = (size_t)(seed >> 33) % (c == 2 ? 2000 : 80);
            int plain = (int)((seed >> 20) % 3) == 0;
            for (size_t i = 0; i < len; i++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                unsigned k = (unsigned)(seed >> 40);
                buf[c][i] = plain && k % 8 ? (char)('a' + k % 26) : alphabet[k % (sizeof alphabet - 1)];
            }
            cols[c] = buf[c];
            lens[c] = len;
        }
        text_sheet_row(&ts, cols, lens);
    }
    const char *names[] = {"a", "b & <c>", "_x0041_ \xc2\xb5 \xff"};
    check_text_sheet(&ts, names);
    text_sheet_free(&ts);
}

/* Attribute values (the sheet names in workbook.xml) at every offset. */
static void test_attr_escapes_at_every_offset(void **state)
{
    (void)state;
    static const char *const pieces[] = {"&", "<", ">", "\"", "\t", "\n", "\r", "\x01", "\xc2\xb5",
                                         "\xef\xbf\xbe", "\xff", "_x0041_", "'"};
    size_t np = sizeof pieces / sizeof *pieces, nres = 0;
    char names[13 * 31][40];
    tl_results res = {0};
    for (size_t p = 0; p < np; p++)
        for (size_t off = 0; off + strlen(pieces[p]) <= 30; off++) {
            char *nm = names[nres++];
            snprintf(nm, 40, "%03zu_abcdefghijklmnopqrstuvwxyz", nres); /* 30 bytes, unique */
            memcpy(nm + off, pieces[p], strlen(pieces[p]));
            add_result(&res, nm, new_table(0), NULL);
        }
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "names.xlsx");
    tl_error err = {0};
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    char *xml = zip_text(z, "xl/workbook.xml");
    zip_close(z);
    const char **list = malloc(nres * sizeof *list);
    for (size_t i = 0; i < nres; i++)
        list[i] = names[i];
    char **tabs = tl_tab_names(list, nres);
    for (size_t i = 0; i < nres; i++) {
        tl_buf want = {0};
        tl_buf_adds(&want, "<sheet name=\"");
        model_text(&want, (const unsigned char *)tabs[i], strlen(tabs[i]), 0);
        tl_buf_printf(&want, "\" sheetId=\"%zu\"", i + 1);
        if (!strstr(xml, want.data))
            fail_msg("sheet %zu: no %s", i, want.data);
        free(want.data);
    }
    tl_tab_names_free(tabs, nres);
    free(list);
    free(xml);
    tl_results_free(&res);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

/* The cut to Excel's 32,767 characters falls where it did, escapes and all. */
static void test_long_text_cut_escaped(void **state)
{
    (void)state;
    size_t n = 32766;
    char *s = malloc(n + 64);
    memset(s, 'a', n);
    strcpy(s + n, "&\xc2\xb5<tail>"); /* character 32,767 is '&'; the rest is cut */
    char *u = malloc(2 * n + 64); /* two-byte characters: 32,766 of them, then "_x0041_" */
    for (size_t i = 0; i < n; i++)
        memcpy(u + 2 * i, "\xc2\xb5", 2);
    strcpy(u + 2 * n, "_x0041_");
    tl_table *t = new_table(2);
    put_col(t, "t", (tl_cell[]){tl_cell_str(s), tl_cell_str(u)});
    tl_results res = {0};
    add_result(&res, "cut", t, NULL);
    char *dir = tt_tmpdir();
    char *path = tmp_path(dir, "cut.xlsx");
    tl_error err = {0};
    int quiet = tl_quiet;
    tl_quiet = 1;
    assert_int_equal(tl_xlsx_write(&res, NULL, path, &err), 0);
    tl_quiet = quiet;
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
    char *xml = zip_text(z, "xl/worksheets/sheet1.xml");
    zip_close(z);
    assert_non_null(strstr(xml, "aaaa&amp;</t></is></c></row>"));
    assert_non_null(strstr(xml, "\xc2\xb5\xc2\xb5_</t></is></c></row>")); /* "_x0041_" cut to "_": no escape */
    free(xml);
    tl_results_free(&res);
    free(s);
    free(u);
    free(path);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_names_unchanged),
        cmocka_unit_test(test_cut_and_collisions),
        cmocka_unit_test(test_cut_counts_characters_and_forbidden_characters),
        cmocka_unit_test(test_path_stem),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_structure_and_hidden_columns),
        cmocka_unit_test(test_number_formats_and_colours),
        cmocka_unit_test(test_summary_sheet_and_chart),
        cmocka_unit_test(test_no_results_and_errors),
        cmocka_unit_test(test_long_text_is_cut),
        cmocka_unit_test(test_large_sheet_round_trip),
        cmocka_unit_test(test_sheet_in_parts),
        cmocka_unit_test(test_zip64_many_entries),
        cmocka_unit_test(test_text_escapes_at_every_offset),
        cmocka_unit_test(test_text_escapes_literal),
        cmocka_unit_test(test_text_escapes_random),
        cmocka_unit_test(test_attr_escapes_at_every_offset),
        cmocka_unit_test(test_long_text_cut_escaped),
    };
    return cmocka_run_group_tests_name("xlsx_write", tests, NULL, NULL);
}
