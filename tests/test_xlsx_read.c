/*
 * test_xlsx_read.c - the xlsx reader: cell kinds, layout, escapes, and every way a
 * workbook can be broken.
 *
 * The fixtures are built here, part by part, with libzip from hand-written XML, so that
 * each test shows exactly which markup it exercises; one test round-trips a workbook
 * written by libxlsxwriter, an independent writer.
 *
 * Worksheets are read by a fast scanner that falls back to expat (see xlsx_scan.c).  All
 * the tests run twice: as the reader runs (the scanner first), and with expat alone.  The
 * tests of the scanner itself read the same sheets both ways and compare, with chunk
 * boundaries everywhere, and check where it gives up that the fallback changes nothing.
 *
 * (~1,600 lines: one file, because the fixtures - the parts, the zip writer, the
 * comparison of two readings - are shared by every test of the reader.)
 */
#include "testutil.h"

#include "read/xlsx_read.h"

#include <glob.h>
#include <sys/resource.h>
#include <xlsxwriter.h>
#include <zip.h>

/* The options every workbook of these tests is opened with (tl_xlsx_opts: the bound on a
 * part, the chunk size, the scanner mode); a test that changes one restores it. */
static tl_xlsx_opts opts;

/* The scanner mode the current group of tests runs in (0 or 1). */
static int group_mode;

/* ---- fixtures ------------------------------------------------------------------- */

#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
#define NS_MAIN "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define NS_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define NS_PKG "http://schemas.openxmlformats.org/package/2006/relationships"

static const char ROOT_RELS[] =
    XML_DECL "<Relationships xmlns=\"" NS_PKG "\">"
             "<Relationship Id=\"rId1\" Type=\"" NS_REL "/officeDocument\" "
             "Target=\"xl/workbook.xml\"/></Relationships>";

static const char WB_ONE[] =
    XML_DECL "<workbook xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\"><sheets>"
             "<sheet name=\"Sheet1\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";

static const char WB_RELS_ONE[] =
    XML_DECL "<Relationships xmlns=\"" NS_PKG "\">"
             "<Relationship Id=\"rId1\" Type=\"" NS_REL "/worksheet\" "
             "Target=\"worksheets/sheet1.xml\"/>"
             "<Relationship Id=\"rId2\" Type=\"" NS_REL "/sharedStrings\" "
             "Target=\"sharedStrings.xml\"/>"
             "<Relationship Id=\"rId3\" Type=\"" NS_REL "/hyperlink\" "
             "Target=\"http://example.com/\" TargetMode=\"External\"/>"
             "</Relationships>";

typedef struct fixture {
    char *dir;
    char path[4096];
    tl_arena arena;
    tl_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    tl_arena_init(&f->arena);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    opts.part_limit = 0;
    opts.scanner = group_mode;
    opts.chunk = 0;
    opts.max_strings = 0;
    tl_arena_free(&f->arena);
    tt_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* printf into a new malloc'd string. */
static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    assert_true(n >= 0);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    va_start(ap, format);
    vsnprintf(s, (size_t)n + 1, format, ap);
    va_end(ap);
    return s;
}

/* Set f->path to <dir>/<name> and return it. */
static const char *path_of(fixture *f, const char *name)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    return f->path;
}

/* Write a zip archive of (name, content) pairs, the list ending with NULL, each entry
 * compressed with `method` (a ZIP_CM_*; ZIP_CM_DEFAULT is deflate). */
static void write_zip_method(const char *path, const char *const *parts, zip_int32_t method)
{
    int e = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &e);
    assert_non_null(z);
    for (size_t i = 0; parts[i]; i += 2) {
        zip_source_t *src = zip_source_buffer(z, parts[i + 1], strlen(parts[i + 1]), 0);
        assert_non_null(src);
        zip_int64_t idx = zip_file_add(z, parts[i], src, ZIP_FL_OVERWRITE);
        assert_true(idx >= 0);
        assert_int_equal(zip_set_file_compression(z, (zip_uint64_t)idx, method, 0), 0);
    }
    assert_int_equal(zip_close(z), 0);
}

/* Write a zip archive of (name, content) pairs, the list ending with NULL. */
static void write_zip(const char *path, const char *const *parts)
{
    write_zip_method(path, parts, ZIP_CM_DEFAULT);
}

/* A worksheet part holding the given <sheetData> content. */
static char *sheet_xml(const char *rows)
{
    return fmt(XML_DECL "<worksheet xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\">"
                        "<dimension ref=\"A1\"/><sheetData>%s</sheetData>"
                        "<pageMargins left=\"0.7\"/></worksheet>",
               rows);
}

/* A workbook with one sheet "Sheet1" of the given rows, and shared strings when
 * `sst` (the <si> elements) is not NULL.  Returns the path. */
static const char *one_sheet(fixture *f, const char *name, const char *rows, const char *sst)
{
    char *sheet = sheet_xml(rows);
    char *strings = sst ? fmt(XML_DECL "<sst xmlns=\"" NS_MAIN "\" count=\"9\">%s</sst>", sst)
                        : NULL;
    const char *parts[] = {
        "_rels/.rels", ROOT_RELS,
        "xl/workbook.xml", WB_ONE,
        "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
        "xl/worksheets/sheet1.xml", sheet,
        strings ? "xl/sharedStrings.xml" : NULL, strings,
        NULL,
    };
    path_of(f, name);
    write_zip(f->path, parts);
    free(sheet);
    free(strings);
    return f->path;
}

/* Open, read one sheet, close.  NULL and f->err set on failure. */
static tl_table *read_sheet(fixture *f, const char *path, const char *sheet)
{
    memset(&f->err, 0, sizeof f->err);
    tl_xlsx *x = tl_xlsx_open_opts(path, &opts, &f->err);
    if (!x)
        return NULL;
    tl_table *t = tl_xlsx_read_sheet(x, sheet, &f->arena, &f->err);
    tl_xlsx_close(x);
    return t;
}

/* Read the sheet and expect failure with exactly `want` as the message. */
static void expect_error(fixture *f, const char *path, const char *sheet, const char *want)
{
    tl_table *t = read_sheet(f, path, sheet);
    if (t)
        tl_table_free(t);
    assert_null(t);
    assert_true(f->err.set);
    assert_string_equal(f->err.msg, want);
}

static const tl_column *column(const tl_table *t, const char *name)
{
    long c = tl_table_find(t, name);
    if (c < 0)
        fail_msg("no column '%s'", name);
    return &t->cols[c];
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    assert_true(row < t->nrows);
    return &column(t, col)->cells[row];
}

static void assert_str(const tl_cell *c, const char *s)
{
    assert_int_equal(c->kind, TL_STR);
    assert_string_equal(c->v.s, s);
}

static void assert_int(const tl_cell *c, int64_t v)
{
    assert_int_equal(c->kind, TL_INT);
    assert_true(c->v.i == v);
}

static void assert_float(const tl_cell *c, double v)
{
    assert_int_equal(c->kind, TL_FLOAT);
    assert_true(c->v.f == v);
}

static void assert_missing(const tl_cell *c) { assert_int_equal(c->kind, TL_MISSING); }

#define INL(ref, text) "<c r=\"" ref "\" t=\"inlineStr\"><is><t>" text "</t></is></c>"

/* ---- cell kinds ----------------------------------------------------------------- */

static void test_strings(void **state)
{
    fixture *f = *state;
    const char *sst =
        "<si><t>name</t></si>"
        /* rich text: runs concatenated, the phonetic run left out */
        "<si><r><rPr><b/></rPr><t>Hel</t></r><r><t xml:space=\"preserve\">lo </t></r>"
        "<r><t>world</t></r><rPh sb=\"0\" eb=\"1\"><t>HE</t></rPh><phoneticPr fontId=\"1\"/></si>"
        "<si><t>line_x000D_break_x0009_tab</t></si>"
        "<si><t>_x005F_x0041_ and _x00e9_ _x00E9_ _x20ac_ _x0000_ _xZZZZ_ _x41_</t></si>"
        "<si><t>text</t></si>"
        "<si><t/></si>"
        "<si><t>NA</t></si>";
    const char *rows =
        "<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c>" INL("B1", "inline")
        "<c r=\"C1\" t=\"str\"><f>A1</f><v>formula</v></c></row>"
        "<row r=\"2\"><c r=\"A2\" t=\"s\"><v>1</v></c>"
        "<c r=\"B2\" t=\"inlineStr\"><is><r><t>ri</t></r><r><t>ch</t></r>"
        "<rPh><t>x</t></rPh></is></c>"
        "<c r=\"C2\" t=\"str\"><v>abc</v></c></row>"
        "<row r=\"3\"><c r=\"A3\" t=\"s\"><v> 2 </v></c>" INL("B3", "")
        "<c r=\"C3\" t=\"str\"><v>_x000D_x</v></c></row>"
        "<row r=\"4\"><c r=\"A4\" t=\"s\"><v>3</v></c><c r=\"B4\" t=\"inlineStr\"/>"
        "<c r=\"C4\" t=\"str\"><v>NA</v></c></row>"
        /* nothing present: an empty shared string, "NA", an empty str: the row is dropped */
        "<row r=\"5\"><c r=\"A5\" t=\"s\"><v>5</v></c>" INL("B5", "NA")
        "<c r=\"C5\" t=\"str\"/><c r=\"D5\" t=\"s\"><v>6</v></c></row>"
        "<row r=\"6\"><c r=\"A6\" t=\"s\"><v>4</v></c>" INL("B6", "x")
        "<c r=\"C6\" t=\"str\"><v>y</v></c></row>";
    const char *path = one_sheet(f, "strings.xlsx", rows, sst);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->ncols, 3);
    assert_int_equal(t->nrows, 4);
    assert_string_equal(t->cols[0].name, "name");
    assert_string_equal(t->cols[1].name, "inline");
    assert_string_equal(t->cols[2].name, "formula");

    assert_int_equal(column(t, "name")->type, TL_COL_STR);
    assert_str(cell(t, "name", 0), "Hello world");
    assert_str(cell(t, "name", 1), "line\rbreak\ttab");
    assert_str(cell(t, "name", 2),
               "_x0041_ and \xc3\xa9 \xc3\xa9 \xe2\x82\xac _x0000_ _xZZZZ_ _x41_");
    assert_str(cell(t, "name", 3), "text");

    assert_str(cell(t, "inline", 0), "rich");
    assert_missing(cell(t, "inline", 1));
    assert_missing(cell(t, "inline", 2));
    assert_str(cell(t, "inline", 3), "x");

    assert_str(cell(t, "formula", 0), "abc");
    assert_str(cell(t, "formula", 1), "\rx");
    assert_missing(cell(t, "formula", 2));
    assert_str(cell(t, "formula", 3), "y");
    tl_table_free(t);
}

/* The shared strings are read once and serve every sheet and every read. */
static void test_shared_strings_reused(void **state)
{
    fixture *f = *state;
    const char *rows = "<row><c r=\"A1\" t=\"s\"><v>0</v></c></row>"
                       "<row><c r=\"A2\" t=\"s\"><v>1</v></c></row>"
                       "<row><c r=\"A3\" t=\"s\"><v>1</v></c></row>";
    const char *path = one_sheet(f, "reuse.xlsx", rows, "<si><t>op</t></si><si><t>gemm</t></si>");

    memset(&f->err, 0, sizeof f->err);
    tl_xlsx *x = tl_xlsx_open_opts(path, &opts, &f->err);
    assert_non_null(x);
    for (int i = 0; i < 3; i++) {
        tl_arena a;
        tl_arena_init(&a);
        tl_table *t = tl_xlsx_read_sheet(x, "Sheet1", &a, &f->err);
        assert_non_null(t);
        assert_int_equal(t->nrows, 2);
        assert_str(cell(t, "op", 0), "gemm");
        /* one copy of a repeated string per read */
        assert_ptr_equal(cell(t, "op", 0)->v.s, cell(t, "op", 1)->v.s);
        tl_table_free(t);
        tl_arena_free(&a);
    }
    tl_xlsx_close(x);
}

static void test_numbers(void **state)
{
    fixture *f = *state;
    const char *rows =
        "<row r=\"1\">" INL("A1", "int") INL("B1", "float") INL("C1", "mixed") INL("D1", "big")
        "</row>"
        "<row r=\"2\"><c r=\"A2\"><v>42</v></c><c r=\"B2\" t=\"n\"><v>2.5</v></c>"
        "<c r=\"C2\"><v>1</v></c><c r=\"D2\"><v>12345678901234567890</v></c></row>"
        "<row r=\"3\"><c r=\"A3\"><v>1e3</v></c><c r=\"B3\"><v>1</v></c>"
        "<c r=\"C3\" s=\"1\"><f>1+1</f></c></row>"
        "<row r=\"4\"><c r=\"A4\"><v>48.0</v></c><c r=\"B4\"><v>-0.25</v></c>"
        "<c r=\"C4\"><v>7</v></c><c r=\"D4\"><v>1E300</v></c></row>"
        "<row r=\"5\"><c r=\"A5\"><v>-0</v></c><c r=\"B5\"><v> 3.5\n</v></c>"
        "<c r=\"C5\"><v>NaN</v></c><c r=\"D5\"><v>-9223372036854775808</v></c></row>"
        "<row r=\"6\"><c r=\"A6\"><v>9007199254740993</v></c><c r=\"B6\"><v>1.5E-3</v></c>"
        "<c r=\"C6\"><v>2</v></c><c r=\"D6\"><v>-INF</v></c></row>";
    const char *path = one_sheet(f, "numbers.xlsx", rows, NULL);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 5);
    assert_int_equal(t->ncols, 4);

    /* integral values, however written, make an integer column */
    assert_int_equal(column(t, "int")->type, TL_COL_NUM);
    assert_int(cell(t, "int", 0), 42);
    assert_int(cell(t, "int", 1), 1000);
    assert_int(cell(t, "int", 2), 48);
    assert_int(cell(t, "int", 3), 0);
    assert_int(cell(t, "int", 4), 9007199254740993LL); /* exact, not through a double */

    assert_float(cell(t, "float", 0), 2.5);
    assert_float(cell(t, "float", 1), 1.0);
    assert_float(cell(t, "float", 2), -0.25);
    assert_float(cell(t, "float", 3), 3.5);
    assert_float(cell(t, "float", 4), 1.5e-3);

    /* a missing value (no <v>, NaN) makes the column floating point */
    assert_float(cell(t, "mixed", 0), 1.0);
    assert_missing(cell(t, "mixed", 1));
    assert_float(cell(t, "mixed", 2), 7.0);
    assert_missing(cell(t, "mixed", 3));
    assert_float(cell(t, "mixed", 4), 2.0);

    assert_float(cell(t, "big", 0), 12345678901234567890.0);
    assert_missing(cell(t, "big", 1));
    assert_float(cell(t, "big", 2), 1e300);
    assert_float(cell(t, "big", 3), -9223372036854775808.0);
    assert_int_equal(cell(t, "big", 4)->kind, TL_FLOAT);
    assert_true(cell(t, "big", 4)->v.f < -1e308);
    tl_table_free(t);
}

static void test_bool_error_date(void **state)
{
    fixture *f = *state;
    const char *rows =
        "<row>" INL("A1", "flag") INL("B1", "err") INL("C1", "when") INL("D1", "code") "</row>"
        "<row><c r=\"A2\" t=\"b\"><v>1</v></c><c r=\"B2\" t=\"e\"><v>#N/A</v></c>"
        "<c r=\"C2\" t=\"d\"><v>2024-01-02T03:04:05</v></c>"
        "<c r=\"D2\" t=\"e\"><v>#DIV/0!</v></c></row>"
        "<row><c r=\"A3\" t=\"b\"><v>0</v></c><c r=\"B3\" t=\"e\"><v>#DIV/0!</v></c>"
        "<c r=\"C3\" t=\"d\"><v>2024-02-03</v></c><c r=\"D3\" t=\"e\"><v>#N/A</v></c></row>";
    const char *path = one_sheet(f, "bool.xlsx", rows, NULL);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_int_equal(column(t, "flag")->type, TL_COL_BOOL);
    assert_int_equal(cell(t, "flag", 0)->kind, TL_BOOL);
    assert_int_equal(cell(t, "flag", 0)->v.b, 1);
    assert_int_equal(cell(t, "flag", 1)->kind, TL_BOOL);
    assert_int_equal(cell(t, "flag", 1)->v.b, 0);
    assert_missing(cell(t, "err", 0));
    assert_str(cell(t, "err", 1), "#DIV/0!");
    assert_str(cell(t, "when", 0), "2024-01-02T03:04:05");
    assert_str(cell(t, "when", 1), "2024-02-03");
    assert_str(cell(t, "code", 0), "#DIV/0!");
    assert_missing(cell(t, "code", 1));
    tl_table_free(t);
}

/* ---- layout --------------------------------------------------------------------- */

static void test_layout(void **state)
{
    fixture *f = *state;
    const char *rows =
        /* a styled blank first row: not the header */
        "<row r=\"1\"><c r=\"A1\" s=\"3\"/></row>"
        /* the header: B missing, a styled blank in D that makes no column */
        "<row r=\"3\">" INL("A3", "a") INL("C3", "c") "<c r=\"D3\" s=\"2\"/></row>"
        /* cells without r: A, B, C */
        "<row r=\"4\"><c t=\"inlineStr\"><is><t>x</t></is></c><c><v>1</v></c><c><v>2</v></c>"
        "</row>"
        "<row r=\"5\"/>"
        "<row r=\"6\"><c r=\"B6\" s=\"1\"/></row>"
        /* no row r; C7, then the cell after it (D), then F past the header */
        "<row><c r=\"C7\"><v>5</v></c><c><v>6</v></c><c r=\"F7\"><v>9</v></c></row>";
    const char *path = one_sheet(f, "layout.xlsx", rows, NULL);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_int_equal(t->ncols, 6);
    const char *names[] = {"a", "Unnamed: 1", "c", "Unnamed: 3", "Unnamed: 4", "Unnamed: 5"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(t->cols[i].name, names[i]);
    assert_str(cell(t, "a", 0), "x");
    assert_missing(cell(t, "a", 1));
    assert_float(cell(t, "Unnamed: 1", 0), 1.0);
    assert_missing(cell(t, "Unnamed: 1", 1));
    assert_int(cell(t, "c", 0), 2);
    assert_int(cell(t, "c", 1), 5);
    assert_missing(cell(t, "Unnamed: 3", 0));
    assert_float(cell(t, "Unnamed: 3", 1), 6.0);
    assert_missing(cell(t, "Unnamed: 4", 1));
    assert_float(cell(t, "Unnamed: 5", 1), 9.0);
    tl_table_free(t);
}

/* Header cells that are not text become names the way pandas prints them. */
static void test_header_kinds(void **state)
{
    fixture *f = *state;
    const char *rows =
        "<row><c r=\"A1\"><v>7</v></c><c r=\"B1\"><v>2.5</v></c><c r=\"C1\" t=\"b\"><v>1</v></c>"
        "<c r=\"D1\" t=\"e\"><v>#DIV/0!</v></c>" INL("E1", "NA") "<c r=\"F1\"><v>48.0</v></c>"
        "<c r=\"G1\"><v>0.1</v></c>" INL("H1", "a") INL("I1", "a") "</row>"
        "<row><c r=\"A2\"><v>1</v></c></row>";
    const char *path = one_sheet(f, "header.xlsx", rows, NULL);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 1);
    const char *names[] = {"7", "2.5", "True", "#DIV/0!", "NA", "48", "0.1", "a", "a.1"};
    assert_int_equal(t->ncols, 9);
    for (size_t i = 0; i < 9; i++)
        assert_string_equal(t->cols[i].name, names[i]);
    assert_int(cell(t, "7", 0), 1);
    tl_table_free(t);
}

/* Several sheets: workbook order, absolute and odd relative targets, no shared strings,
 * no _rels/.rels, and the empty shapes a sheet can take. */
static void test_workbook_shapes(void **state)
{
    fixture *f = *state;
    const char *wb =
        XML_DECL "<x:workbook xmlns:x=\"" NS_MAIN "\" xmlns:rel=\"" NS_REL "\"><x:sheets>"
                 "<x:sheet name=\"Empty\" sheetId=\"1\" rel:id=\"rId7\"/>"
                 "<x:sheet name=\"HeaderOnly\" sheetId=\"2\" rel:id=\"rId2\"/>"
                 "<x:sheet name=\"Blank\" sheetId=\"3\" rel:id=\"rId3\"/>"
                 "<x:sheet name=\"NoData\" sheetId=\"4\" rel:id=\"rId1\"/>"
                 "<x:sheet name=\"GEMM &amp; co\" sheetId=\"5\" rel:id=\"rId5\"/>"
                 "</x:sheets></x:workbook>";
    const char *rels =
        XML_DECL "<Relationships xmlns=\"" NS_PKG "\">"
                 "<Relationship Id=\"rId1\" Type=\"" NS_REL "/worksheet\" "
                 "Target=\"/xl/worksheets/sheet4.xml\"/>"
                 "<Relationship Id=\"rId2\" Type=\"" NS_REL "/worksheet\" "
                 "Target=\"/xl/worksheets/sheet2.xml\"/>"
                 "<Relationship Id=\"rId3\" Type=\"" NS_REL "/worksheet\" "
                 "Target=\"./worksheets/../worksheets/sheet3.xml\"/>"
                 "<Relationship Id=\"rId5\" Type=\"" NS_REL "/worksheet\" "
                 "Target=\"worksheets/Sheet5.XML\"/>"
                 "<Relationship Id=\"rId7\" Type=\"" NS_REL "/worksheet\" "
                 "Target=\"/xl/worksheets/sheet1.xml\"/>"
                 "</Relationships>";
    char *s1 = fmt(XML_DECL "<worksheet xmlns=\"" NS_MAIN "\"><sheetData/></worksheet>");
    char *s2 = sheet_xml("<row>" INL("A1", "h1") INL("B1", "h2") "</row><row/>");
    char *s3 = sheet_xml("<row r=\"2\"><c r=\"A2\" s=\"1\"/></row>" "<row r=\"3\"/>");
    char *s4 = fmt(XML_DECL "<worksheet xmlns=\"" NS_MAIN "\"><dimension ref=\"A1\"/></worksheet>");
    char *s5 = sheet_xml("<row>" INL("A1", "k") "</row><row><c r=\"A2\"><v>3</v></c></row>");
    const char *parts[] = {
        "xl/workbook.xml", wb,
        "xl/_rels/workbook.xml.rels", rels,
        "xl/worksheets/sheet1.xml", s1,
        "xl/worksheets/sheet2.xml", s2,
        "xl/worksheets/sheet3.xml", s3,
        "xl/worksheets/sheet4.xml", s4,
        "xl/worksheets/sheet5.xml", s5,
        NULL,
    };
    path_of(f, "shapes.xlsx");
    write_zip(f->path, parts);
    free(s1), free(s2), free(s3), free(s4), free(s5);

    memset(&f->err, 0, sizeof f->err);
    tl_xlsx *x = tl_xlsx_open_opts(f->path, &opts, &f->err);
    assert_non_null(x);
    assert_int_equal(tl_xlsx_sheet_count(x), 5);
    assert_string_equal(tl_xlsx_sheet_name(x, 0), "Empty");
    assert_string_equal(tl_xlsx_sheet_name(x, 1), "HeaderOnly");
    assert_string_equal(tl_xlsx_sheet_name(x, 2), "Blank");
    assert_string_equal(tl_xlsx_sheet_name(x, 3), "NoData");
    assert_string_equal(tl_xlsx_sheet_name(x, 4), "GEMM & co");
    assert_null(tl_xlsx_sheet_name(x, 5));
    assert_true(tl_xlsx_has_sheet(x, "Blank"));
    assert_false(tl_xlsx_has_sheet(x, "blank"));

    const char *empty[] = {"Empty", "Blank", "NoData"};
    for (size_t i = 0; i < 3; i++) {
        tl_table *t = tl_xlsx_read_sheet(x, empty[i], &f->arena, &f->err);
        assert_non_null(t);
        assert_int_equal(t->nrows, 0);
        assert_int_equal(t->ncols, 0);
        tl_table_free(t);
    }
    tl_table *t = tl_xlsx_read_sheet(x, "HeaderOnly", &f->arena, &f->err);
    assert_non_null(t);
    assert_int_equal(t->nrows, 0);
    assert_int_equal(t->ncols, 2);
    assert_string_equal(t->cols[1].name, "h2");
    tl_table_free(t);

    /* a part name differing in case only: OPC names are case-insensitive */
    t = tl_xlsx_read_sheet(x, "GEMM & co", &f->arena, &f->err);
    assert_non_null(t);
    assert_int(cell(t, "k", 0), 3);
    tl_table_free(t);
    assert_false(f->err.set);
    tl_xlsx_close(x);
}

/* ---- hostile and broken input ------------------------------------------------------ */

static void test_not_a_zip(void **state)
{
    fixture *f = *state;
    char want[8192];

    path_of(f, "h100.xlsx");
    tt_write_file(f->path, "name,value\n1,2\n", 15);
    snprintf(want, sizeof want, "%s: not a zip archive (or a damaged one)", f->path);
    expect_error(f, f->path, "Sheet1", want);

    path_of(f, "missing.xlsx");
    snprintf(want, sizeof want, "%s: no such file", f->path);
    expect_error(f, f->path, "Sheet1", want);

    path_of(f, "empty.xlsx");
    tt_write_file(f->path, "", 0);
    snprintf(want, sizeof want, "%s: not a zip archive (or a damaged one)", f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* a valid zip archive with nothing in it: just the end-of-directory record */
    path_of(f, "nothing.xlsx");
    tt_write_file(f->path, "PK\5\6\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 22);
    snprintf(want, sizeof want, "%s: an empty zip archive, not an xlsx workbook", f->path);
    expect_error(f, f->path, "Sheet1", want);
}

static void test_truncated_zip(void **state)
{
    fixture *f = *state;
    const char *path = one_sheet(f, "cut.xlsx", "<row>" INL("A1", "a") "</row>", NULL);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    assert_true(n > 100 && n < sizeof buf);

    /* cut anywhere, the archive must be refused with a message naming it */
    size_t cuts[] = {n - 1, n - 10, n - 30, n / 2, 30};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        tt_write_file(path, buf, cuts[i]);
        tl_table *t = read_sheet(f, path, "Sheet1");
        assert_null(t);
        assert_true(f->err.set);
        assert_true(strncmp(f->err.msg, path, strlen(path)) == 0);
        assert_non_null(strstr(f->err.msg, "zip"));
    }
}

static void test_missing_parts(void **state)
{
    fixture *f = *state;
    char want[8192];

    const char *no_wb[] = {"_rels/.rels", ROOT_RELS, "xl/styles.xml", "<styleSheet/>", NULL};
    write_zip(path_of(f, "nowb.xlsx"), no_wb);
    snprintf(want, sizeof want, "%s: not an xlsx workbook (xl/workbook.xml is missing)", f->path);
    expect_error(f, f->path, "Sheet1", want);

    const char *no_rels[] = {"xl/workbook.xml", WB_ONE, NULL};
    write_zip(path_of(f, "norels.xlsx"), no_rels);
    snprintf(want, sizeof want,
             "%s: not an xlsx workbook (xl/_rels/workbook.xml.rels is missing)", f->path);
    expect_error(f, f->path, "Sheet1", want);

    const char *no_sheet[] = {"xl/workbook.xml", WB_ONE, "xl/_rels/workbook.xml.rels",
                              WB_RELS_ONE, NULL};
    write_zip(path_of(f, "nosheet.xlsx"), no_sheet);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1': part xl/worksheets/sheet1.xml is missing",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    const char *no_rel[] = {
        "xl/workbook.xml", WB_ONE,
        "xl/_rels/workbook.xml.rels", "<Relationships xmlns=\"" NS_PKG "\"/>",
        NULL,
    };
    write_zip(path_of(f, "norel.xlsx"), no_rel);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1': the workbook's relationships have no entry 'rId1'", f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "ok.xlsx", "<row>" INL("A1", "a") "</row>", NULL);
    snprintf(want, sizeof want, "%s: no sheet named 'GEMM'", f->path);
    expect_error(f, f->path, "GEMM", want);
}

static void test_malformed_xml(void **state)
{
    fixture *f = *state;
    char want[8192];

    const char *bad_sheet = XML_DECL "<worksheet xmlns=\"" NS_MAIN "\">\n"
                                     "<sheetData><row><c r=\"A1\"><v>1</v></row>\n"
                                     "</sheetData></worksheet>";
    const char *parts[] = {"xl/workbook.xml", WB_ONE, "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
                           "xl/worksheets/sheet1.xml", bad_sheet, NULL};
    write_zip(path_of(f, "h100.xlsx"), parts);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1': malformed XML at line 3: mismatched tag",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    const char *bad_wb[] = {"xl/workbook.xml", "<workbook><sheets><sheet name=\"a\"",
                            "xl/_rels/workbook.xml.rels", WB_RELS_ONE, NULL};
    write_zip(path_of(f, "badwb.xlsx"), bad_wb);
    snprintf(want, sizeof want,
             "%s, part xl/workbook.xml: malformed XML at line 1: unclosed token", f->path);
    expect_error(f, f->path, "a", want);

    /* an undeclared prefix is malformed too: namespaces are processed */
    const char *bad_rels[] = {"xl/workbook.xml", WB_ONE, "xl/_rels/workbook.xml.rels",
                              "<r:Relationships/>", NULL};
    write_zip(path_of(f, "badrels.xlsx"), bad_rels);
    snprintf(want, sizeof want,
             "%s, part xl/_rels/workbook.xml.rels: malformed XML at line 1: unbound prefix",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* a broken shared-string table only fails the reads that need it */
    one_sheet(f, "badsst.xlsx", "<row>" INL("A1", "a") "</row>", "<si><t>x</si>");
    snprintf(want, sizeof want,
             "%s, part xl/sharedStrings.xml: malformed XML at line 2: mismatched tag", f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* an empty part */
    const char *empty_sheet[] = {"xl/workbook.xml", WB_ONE, "xl/_rels/workbook.xml.rels",
                                 WB_RELS_ONE, "xl/worksheets/sheet1.xml", "", NULL};
    write_zip(path_of(f, "emptypart.xlsx"), empty_sheet);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1': malformed XML at line 1: no element found",
             f->path);
    expect_error(f, f->path, "Sheet1", want);
}

static void test_bad_cells(void **state)
{
    fixture *f = *state;
    char want[8192];
    const char *sst = "<si><t>a</t></si><si><t>b</t></si>";

    one_sheet(f, "h100.xlsx",
              "<row><c r=\"A1\" t=\"s\"><v>0</v></c></row>"
              "<row r=\"7\"><c r=\"A7\" t=\"s\"><v>1</v></c>"
              "<c r=\"B7\" t=\"s\"><v>99</v></c></row>",
              sst);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1', cell B7: shared string 99 out of range (the workbook has 2)",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "huge.xlsx",
              "<row><c r=\"A1\" t=\"s\"><v>99999999999999999999999999</v></c></row>", sst);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1', cell A1: shared string 99999999999999999999999999 out of range"
             " (the workbook has 2)", f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* no sharedStrings part at all: every index is out of range */
    one_sheet(f, "nosst.xlsx", "<row><c t=\"s\"><v>0</v></c></row>", NULL);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1', cell A1: shared string 0 out of range (the workbook has 0)",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "idx.xlsx", "<row><c r=\"C1\" t=\"s\"><v>-1</v></c></row>", sst);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1', cell C1: shared string index '-1' is not a number", f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "num.xlsx", "<row>" INL("A1", "a") "</row><row><c><v>12abc</v></c></row>", NULL);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1', cell A2: number cell holds '12abc'", f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "bool.xlsx", "<row><c r=\"A1\" t=\"b\"><v>2</v></c></row>", NULL);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1', cell A1: boolean cell holds '2'", f->path);
    expect_error(f, f->path, "Sheet1", want);

    one_sheet(f, "type.xlsx", "<row><c r=\"A1\" t=\"zz\"><v>2</v></c></row>", NULL);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1', cell A1: unknown cell type 'zz'", f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* absurd references: past XFD, not letters then digits, row 0, past the last row */
    const char *refs[] = {"XFE1", "1A", "A", "A0", "AAAA1", "A1048577", "A1x", "", "\xc3\xa9" "1"};
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
        char *rows = fmt("<row r=\"1\"><c r=\"%s\"><v>1</v></c></row>", refs[i]);
        one_sheet(f, "ref.xlsx", rows, NULL);
        free(rows);
        snprintf(want, sizeof want,
                 "%s, sheet 'Sheet1': invalid cell reference '%s' in row 1", f->path, refs[i]);
        expect_error(f, f->path, "Sheet1", want);
    }
    /* the last column is fine */
    one_sheet(f, "xfd.xlsx",
              "<row><c r=\"XFD1\"><v>1</v></c></row><row><c r=\"$XFD$2\"><v>2</v></c></row>",
              NULL);
    tl_table *t = read_sheet(f, f->path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->ncols, 16384);
    assert_int(cell(t, "1", 0), 2);
    tl_table_free(t);

    /* cells without r may not run past XFD either */
    tl_buf b = {0};
    tl_buf_adds(&b, "<row r=\"4\"><c r=\"XFC4\"><v>1</v></c><c><v>2</v></c><c><v>3</v></c></row>");
    one_sheet(f, "past.xlsx", tl_buf_cstr(&b), NULL);
    tl_buf_free(&b);
    snprintf(want, sizeof want, "%s, sheet 'Sheet1': row 4 has cells past column XFD", f->path);
    expect_error(f, f->path, "Sheet1", want);
}

static void test_duplicate_sheets(void **state)
{
    fixture *f = *state;
    char want[8192];
    const char *wb = XML_DECL "<workbook xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\"><sheets>"
                              "<sheet name=\"GEMM\" sheetId=\"1\" r:id=\"rId1\"/>"
                              "<sheet name=\"other\" sheetId=\"2\" r:id=\"rId1\"/>"
                              "<sheet name=\"GEMM\" sheetId=\"3\" r:id=\"rId1\"/>"
                              "</sheets></workbook>";
    const char *parts[] = {"xl/workbook.xml", wb, "xl/_rels/workbook.xml.rels", WB_RELS_ONE, NULL};
    write_zip(path_of(f, "dup.xlsx"), parts);
    snprintf(want, sizeof want, "%s, part xl/workbook.xml: two sheets are named 'GEMM'", f->path);
    expect_error(f, f->path, "GEMM", want);

    const char *wb2 = XML_DECL "<workbook xmlns=\"" NS_MAIN "\"><sheets><sheet sheetId=\"1\"/>"
                               "</sheets></workbook>";
    const char *parts2[] = {"xl/workbook.xml", wb2, "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
                            NULL};
    write_zip(path_of(f, "noname.xlsx"), parts2);
    snprintf(want, sizeof want, "%s, part xl/workbook.xml: sheet number 1 has no name", f->path);
    expect_error(f, f->path, "x", want);
}

/* Find the zip headers of entry `name` in buf and set its uncompressed size to `size`. */
static void patch_size(unsigned char *buf, size_t n, const char *name, uint32_t size)
{
    size_t len = strlen(name);
    int patched = 0;
    for (size_t i = 0; i + 46 + len <= n; i++) {
        size_t at = 0;
        if (memcmp(buf + i, "PK\3\4", 4) == 0 && memcmp(buf + i + 30, name, len) == 0)
            at = i + 22; /* local file header */
        else if (memcmp(buf + i, "PK\1\2", 4) == 0 && memcmp(buf + i + 46, name, len) == 0)
            at = i + 24; /* central directory header */
        if (at) {
            for (int k = 0; k < 4; k++)
                buf[at + (size_t)k] = (unsigned char)(size >> (8 * k));
            patched++;
        }
    }
    assert_int_equal(patched, 2);
}

static void test_decompression_bound(void **state)
{
    fixture *f = *state;
    char want[8192];
    tl_buf rows = {0};

    /* ~40 KiB of sheet XML that deflates to little */
    tl_buf_adds(&rows, "<row>" INL("A1", "a") "</row>");
    for (int i = 2; i < 1000; i++)
        tl_buf_printf(&rows, "<row r=\"%d\"><c r=\"A%d\"><v>%d</v></c></row>", i, i, i);
    const char *path = one_sheet(f, "h100.xlsx", tl_buf_cstr(&rows), NULL);
    tl_buf_free(&rows);

    tl_table *t = read_sheet(f, path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 998);
    tl_table_free(t);

    /* the size the zip directory declares is checked first */
    opts.part_limit = 4096;
    snprintf(want, sizeof want,
             "%s: part xl/worksheets/sheet1.xml inflates beyond 4 KiB; refusing "
             "(decompression bomb?)", path);
    expect_error(f, path, "Sheet1", want);

    /* and a part that lies about its size is caught while inflating */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    patch_size(buf, n, "xl/worksheets/sheet1.xml", 1000);
    tt_write_file(path, (const char *)buf, n);
    opts.part_limit = 4000;
    snprintf(want, sizeof want,
             "%s: part xl/worksheets/sheet1.xml inflates beyond 4000 bytes; refusing "
             "(decompression bomb?)", path);
    expect_error(f, path, "Sheet1", want);

    /* the bound covers the workbook's own parts too */
    opts.part_limit = 100;
    memset(&f->err, 0, sizeof f->err);
    assert_null(tl_xlsx_open_opts(path, &opts, &f->err));
    assert_non_null(strstr(f->err.msg, "inflates beyond 100 bytes"));
    opts.part_limit = 0;
}

/* A shared-string part of more empty strings than the bound (17 M <si/>, 85 MB of XML that
 * deflates to ~0.1 MB): a clear error, in bounded memory, not an ever-growing table. */
static void test_shared_strings_bomb(void **state)
{
    fixture *f = *state;
    size_t n = TL_XLSX_MAX_STRINGS + 4096, head = strlen(XML_DECL "<sst xmlns=\"" NS_MAIN "\">");
    char *sst = malloc(head + 5 * n + 8);
    assert_non_null(sst);
    memcpy(sst, XML_DECL "<sst xmlns=\"" NS_MAIN "\">", head);
    for (size_t i = 0; i < n; i++)
        memcpy(sst + head + 5 * i, "<si/>", 5);
    strcpy(sst + head + 5 * n, "</sst>");
    char *sheet = sheet_xml("<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c></row>");
    const char *parts[] = {
        "_rels/.rels", ROOT_RELS,
        "xl/workbook.xml", WB_ONE,
        "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
        "xl/worksheets/sheet1.xml", sheet,
        "xl/sharedStrings.xml", sst,
        NULL,
    };
    path_of(f, "sst_bomb.xlsx");
    write_zip(f->path, parts);
    free(sheet);
    free(sst);

    char want[4200];
    snprintf(want, sizeof want, "%s, part xl/sharedStrings.xml: more than %zu shared strings; "
             "refusing (a workbook bomb?)", f->path, (size_t)TL_XLSX_MAX_STRINGS);
    expect_error(f, f->path, "Sheet1", want);
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    /* KiB: under 1 GiB (the bomb would take gigabytes), 3 GiB with the sanitizers' shadow
     * memory and quarantine */
#if defined(__SANITIZE_ADDRESS__)
    assert_true(ru.ru_maxrss < 3L * 1024 * 1024);
#else
    assert_true(ru.ru_maxrss < 1024 * 1024);
#endif

    /* the bound is the caller's to lower */
    opts.max_strings = 1000;
    snprintf(want, sizeof want, "%s, part xl/sharedStrings.xml: more than 1000 shared strings; "
             "refusing (a workbook bomb?)", f->path);
    expect_error(f, f->path, "Sheet1", want);
    opts.max_strings = 0;
}

/* Elements nested past the bound, in a sheet and in the workbook part: one line naming
 * the sheet (or part), read no further; just under the bound still reads. */
static void test_nesting_bound(void **state)
{
    fixture *f = *state;
    static const int depths[] = {998, 999, 200000};
    for (size_t k = 0; k < sizeof depths / sizeof depths[0]; k++) {
        int depth = depths[k];
        tl_buf b = {0};
        tl_buf_adds(&b, "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>name</t></is></c></row><row r=\"2\">"
                        "<c r=\"A2\"><v>1</v></c></row>");
        /* nested inside <sheetData>, after the rows: the depth counts from <worksheet> */
        for (int i = 0; i < depth; i++)
            tl_buf_adds(&b, "<x>");
        for (int i = 0; i < depth; i++)
            tl_buf_adds(&b, "</x>");
        const char *path = one_sheet(f, "deep.xlsx", tl_buf_cstr(&b), NULL);
        tl_buf_free(&b);
        tl_table *t = read_sheet(f, path, "Sheet1");
        if (depth + 2 <= 1000) { /* <worksheet><sheetData> and the <x> levels */
            if (!t)
                fail_msg("depth %d: %s", depth, f->err.msg);
            assert_int_equal(t->nrows, 1);
            tl_table_free(t);
            continue;
        }
        assert_null(t);
        char *want = fmt("%s, sheet 'Sheet1': elements nested more than 1000 deep; refusing", path);
        assert_string_equal(f->err.msg, want);
        free(want);
    }
}

static void test_hostile_xml(void **state)
{
    fixture *f = *state;
    char want[8192];

    /* entity expansion is refused outright, with the DTD */
    const char *laughs = "<?xml version=\"1.0\"?>\n"
                         "<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
                         "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
                         "<worksheet xmlns=\"" NS_MAIN "\"><sheetData><row><c t=\"inlineStr\">"
                         "<is><t>&lol2;</t></is></c></row></sheetData></worksheet>";
    const char *parts[] = {"xl/workbook.xml", WB_ONE, "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
                           "xl/worksheets/sheet1.xml", laughs, NULL};
    write_zip(path_of(f, "lol.xlsx"), parts);
    snprintf(want, sizeof want,
             "%s, sheet 'Sheet1': has a DOCTYPE declaration, which xlsx parts never have; refusing",
             f->path);
    expect_error(f, f->path, "Sheet1", want);

    /* deep nesting, stray elements inside <v> and <t>, cells and rows where they make no
     * sense, attributes missing: all ignored */
    tl_buf b = {0};
    tl_buf_adds(&b, "<row><c t=\"inlineStr\"><is><t>h<b>IGNORED</b>ead</t></is></c></row>"
                    "<c r=\"A9\"><v>5</v></c><v>6</v>"
                    "<row><c><v>1<x>2</x>0</v></c><c r=\"B2\"><v>3</v>");
    for (int i = 0; i < 900; i++) /* deep, within the bound (test_nesting_bound) */
        tl_buf_adds(&b, "<deep a=\"1\">");
    tl_buf_adds(&b, "<row><c><v>7</v></c></row>");
    for (int i = 0; i < 900; i++)
        tl_buf_adds(&b, "</deep>");
    tl_buf_adds(&b, "</c></row>");
    one_sheet(f, "deep.xlsx", tl_buf_cstr(&b), NULL);
    tl_buf_free(&b);
    tl_table *t = read_sheet(f, f->path, "Sheet1");
    assert_non_null(t);
    assert_int_equal(t->nrows, 1);
    assert_int_equal(t->ncols, 2);
    assert_int(cell(t, "head", 0), 10);
    assert_int(cell(t, "Unnamed: 1", 0), 3);
    tl_table_free(t);
}

/* ---- a workbook written by libxlsxwriter --------------------------------------------- */

static void write_with_xlsxwriter(const char *path, int constant_memory)
{
    lxw_workbook_options opt = {.constant_memory = constant_memory ? LXW_TRUE : LXW_FALSE};
    lxw_workbook *wb = workbook_new_opt(path, &opt);
    assert_non_null(wb);
    lxw_worksheet *ws = workbook_add_worksheet(wb, NULL);
    /* "Sheet2", left empty (not in constant_memory mode, where libxlsxwriter 1.1.4 never
     * closes the temporary file of an empty sheet) */
    if (!constant_memory)
        assert_non_null(workbook_add_worksheet(wb, NULL));
    lxw_format *bold = workbook_add_format(wb);
    format_set_bold(bold);

    worksheet_write_string(ws, 0, 0, "name", bold);
    worksheet_write_string(ws, 0, 1, "time ms", bold);
    worksheet_write_string(ws, 0, 2, "ok", bold);
    worksheet_write_string(ws, 0, 3, "note", bold);
    /* control characters go through _xHHHH_ escapes (libxlsxwriter 1.1.4 does not escape a
     * literal "_x0041_", so Excel, and we, would read that back as "A") */
    worksheet_write_string(ws, 1, 0, "gemm\r\n\tx\x01", NULL);
    worksheet_write_number(ws, 1, 1, 48.0, NULL);
    worksheet_write_boolean(ws, 1, 2, 1, NULL);
    worksheet_write_blank(ws, 1, 3, bold);
    worksheet_write_string(ws, 2, 0, "attn", NULL);
    worksheet_write_number(ws, 2, 1, 0.125, NULL);
    worksheet_write_boolean(ws, 2, 2, 0, NULL);
    worksheet_write_string(ws, 2, 3, "x", NULL);
    worksheet_write_blank(ws, 2, 4, bold);
    assert_int_equal(workbook_close(wb), LXW_NO_ERROR);
}

static void test_xlsxwriter_roundtrip(void **state)
{
    fixture *f = *state;

    for (int cm = 0; cm <= 1; cm++) {
        /* constant_memory writes inline strings, the default shared ones */
        path_of(f, cm ? "lxw_inline.xlsx" : "lxw_shared.xlsx");
        write_with_xlsxwriter(f->path, cm);
        memset(&f->err, 0, sizeof f->err);
        tl_xlsx *x = tl_xlsx_open_opts(f->path, &opts, &f->err);
        assert_non_null(x);
        assert_int_equal(tl_xlsx_sheet_count(x), cm ? 1 : 2);
        assert_string_equal(tl_xlsx_sheet_name(x, 0), "Sheet1");
        tl_table *t = tl_xlsx_read_sheet(x, "Sheet1", &f->arena, &f->err);
        assert_non_null(t);
        assert_int_equal(t->nrows, 2);
        assert_int_equal(t->ncols, 4);
        assert_str(cell(t, "name", 0), "gemm\r\n\tx\x01");
        assert_str(cell(t, "name", 1), "attn");
        assert_float(cell(t, "time ms", 0), 48.0);
        assert_float(cell(t, "time ms", 1), 0.125);
        assert_int_equal(column(t, "ok")->type, TL_COL_BOOL);
        assert_int_equal(cell(t, "ok", 0)->v.b, 1);
        assert_int_equal(cell(t, "ok", 1)->v.b, 0);
        assert_missing(cell(t, "note", 0));
        assert_str(cell(t, "note", 1), "x");
        tl_table_free(t);
        if (!cm) {
            t = tl_xlsx_read_sheet(x, "Sheet2", &f->arena, &f->err);
            assert_non_null(t);
            assert_int_equal(t->ncols, 0);
            tl_table_free(t);
        }
        tl_xlsx_close(x);
    }
}

/* ---- the fast worksheet scanner against expat ------------------------------------------ */

/* A workbook whose one sheet "Sheet1" is the worksheet part `sheet` (the whole XML), with
 * shared strings when `sst` (the <si> elements) is not NULL, compressed by `method`. */
static const char *book(fixture *f, const char *name, const char *sheet, const char *sst,
                        zip_int32_t method)
{
    char *strings = sst ? fmt(XML_DECL "<sst xmlns=\"" NS_MAIN "\">%s</sst>", sst) : NULL;
    const char *parts[] = {
        "_rels/.rels", ROOT_RELS,
        "xl/workbook.xml", WB_ONE,
        "xl/_rels/workbook.xml.rels", WB_RELS_ONE,
        "xl/worksheets/sheet1.xml", sheet,
        strings ? "xl/sharedStrings.xml" : NULL, strings,
        NULL,
    };
    path_of(f, name);
    write_zip_method(f->path, parts, method);
    free(strings);
    return f->path;
}

/* Read a sheet in scanner mode `mode` (see tl_xlsx_opts). */
static tl_table *read_mode(fixture *f, const char *path, const char *sheet, int mode)
{
    opts.scanner = mode;
    tl_table *t = read_sheet(f, path, sheet);
    opts.scanner = group_mode;
    return t;
}

static void assert_same_cell(const tl_cell *a, const tl_cell *b, const char *col, size_t row)
{
    if (a->kind != b->kind)
        fail_msg("column '%s', row %zu: kinds %d and %d", col, row, a->kind, b->kind);
    switch (a->kind) {
    case TL_INT:
        assert_true(a->v.i == b->v.i);
        break;
    case TL_FLOAT:
        assert_memory_equal(&a->v.f, &b->v.f, sizeof a->v.f);
        break;
    case TL_BOOL:
        assert_int_equal(a->v.b, b->v.b);
        break;
    case TL_STR:
        assert_int_equal(tl_cell_len(a), strlen(a->v.s));
        assert_int_equal(tl_cell_len(b), strlen(b->v.s));
        if (strcmp(a->v.s, b->v.s) != 0)
            fail_msg("column '%s', row %zu: '%s' and '%s'", col, row, a->v.s, b->v.s);
        break;
    }
}

/* Two tables with the same columns (names, types) and cells. */
static void assert_same_table(const tl_table *a, const tl_table *b)
{
    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->nrows, b->nrows);
    for (size_t c = 0; c < a->ncols; c++) {
        assert_string_equal(a->cols[c].name, b->cols[c].name);
        assert_int_equal(a->cols[c].type, b->cols[c].type);
        for (size_t r = 0; r < a->nrows; r++)
            assert_same_cell(&a->cols[c].cells[r], &b->cols[c].cells[r], a->cols[c].name, r);
    }
}

/* Expat's reading of a sheet: the table, or NULL and the message in `err`. */
static tl_table *expat_read(fixture *f, const char *path, const char *sheet, tl_error *err)
{
    tl_table *t = read_mode(f, path, sheet, 1);
    *err = f->err;
    return t;
}

/* `t` (or f->err) is what expat read (`want`, or `want_err`); frees both tables. */
static void expect_as_expat(fixture *f, tl_table *want, const tl_error *want_err, tl_table *t)
{
    if (!want) {
        if (t)
            fail_msg("expat failed (%s), the scanner did not", want_err->msg);
        assert_string_equal(f->err.msg, want_err->msg);
        return;
    }
    if (!t)
        fail_msg("expat read the sheet, the scanner did not: %s", f->err.msg);
    assert_same_table(want, t);
    tl_table_free(want);
    tl_table_free(t);
}

/* The scanner alone reads the sheet (it must not give up) exactly as expat does: the same
 * table, or the same error. */
static void expect_scanner_same(fixture *f, const char *path, const char *sheet)
{
    tl_error want_err;
    tl_table *want = expat_read(f, path, sheet, &want_err);
    expect_as_expat(f, want, &want_err, read_mode(f, path, sheet, 2));
}

/* The scanner gives up on the sheet, and the reader (falling back to expat) then reads it
 * exactly as expat does. */
static void expect_scanner_gives_up(fixture *f, const char *path, const char *why)
{
    tl_table *t = read_mode(f, path, "Sheet1", 2);
    if (t)
        fail_msg("the scanner read a sheet it should have given up on (%s)", why);
    if (!strstr(f->err.msg, "the fast scanner gave up") || !strstr(f->err.msg, why))
        fail_msg("the scanner failed otherwise than by giving up on %s: %s", why, f->err.msg);
    tl_error want_err;
    tl_table *want = expat_read(f, path, "Sheet1", &want_err);
    expect_as_expat(f, want, &want_err, read_mode(f, path, "Sheet1", 0));
}

#define WS_HEAD XML_DECL "<worksheet xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\">"
#define WS_DATA(rows) WS_HEAD "<sheetData>" rows "</sheetData></worksheet>"
#define NS_X14AC "http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac"
#define NS_MC "http://schemas.openxmlformats.org/markup-compatibility/2006"

/* Worksheets with every construct the scanner reads itself. */
static const char *const SCANNER_SHEETS[] = {
    /* as Excel writes them: namespaces, markup before and after the data, shared and
     * inline strings, formulas with cached values, rich text with phonetic runs */
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
    "<worksheet xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\" xmlns:mc=\"" NS_MC "\" "
    "mc:Ignorable=\"x14ac\" xmlns:x14ac=\"" NS_X14AC "\"><dimension ref=\"A1:C4\"/>"
    "<sheetViews><sheetView tabSelected=\"1\" workbookViewId=\"0\"/></sheetViews>"
    "<sheetFormatPr defaultRowHeight=\"15\" x14ac:dyDescent=\"0.25\"/><cols><col min=\"1\" "
    "max=\"1\" width=\"9.5\"/></cols><sheetData>"
    "<row r=\"1\" spans=\"1:3\" x14ac:dyDescent=\"0.25\"><c r=\"A1\" t=\"s\"><v>0</v></c>"
    "<c r=\"B1\" t=\"s\"><v>1</v></c><c r=\"C1\" s=\"3\" t=\"inlineStr\"><is><t>c</t></is></c>"
    "</row><row r=\"2\" spans=\"1:3\"><c r=\"A2\" s=\"1\"><v>1.5</v></c><c r=\"B2\" t=\"str\">"
    "<f>A2&amp;\"x\"</f><v>1.5x</v></c><c r=\"C2\" t=\"b\"><v>1</v></c></row>"
    "<row r=\"3\"><c r=\"A3\"><f t=\"shared\" ref=\"A3:A4\" si=\"0\">A2+1</f><v>2.5</v></c>"
    "<c r=\"B3\" t=\"e\"><f>1/0</f><v>#DIV/0!</v></c><c r=\"C3\" t=\"inlineStr\"><is><r><rPr>"
    "<b/><sz val=\"11\"/><rFont val=\"Calibri\"/></rPr><t xml:space=\"preserve\">rich </t></r>"
    "<r><t>text</t></r><rPh sb=\"0\" eb=\"1\"><t>ph</t></rPh><phoneticPr fontId=\"1\"/></is>"
    "</c></row><row r=\"4\"><c r=\"A4\"><f t=\"shared\" si=\"0\"/><v>3.5</v></c>"
    "<c r=\"B4\" s=\"2\"/><c r=\"C4\" t=\"d\"><v>2024-01-02T03:04:05</v></c></row>"
    "</sheetData><pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" "
    "header=\"0.3\" footer=\"0.3\"/><extLst><ext uri=\"{05C60535}\" xmlns:x14=\"urn:x14\">"
    "<x14:ignoredErrors><x14:ignoredError sqref=\"A1\"/></x14:ignoredErrors></ext></extLst>"
    "</worksheet>",
    /* references in text and in the attributes read, the other quote inside a value */
    WS_DATA("<row><c r=\"A1\" t=\"inlineStr\"><is><t>a &amp; b &lt;c&gt; &quot;d&quot; "
            "&apos;e&apos; &#65;&#x42;&#x20AC;&#128512;&#x1F600;&#000065;</t></is></c>"
            "<c r=\"&#66;1\" t='inline&#x53;tr'><is><t>\"q\" 'a'</t></is></c>"
            "<c r='C1' t=\"str\" s='a\"b'><v>&#9;tab&#10;nl&#13;cr</v></c></row>"
            "<row r=\"&#50;\"><c r=\"A2\" t=\"&#115;\"><v>&#48;</v></c><c r=\"B2\">"
            "<v>&#x31;&#x2e;5</v></c><c r=\"C2\" t=\"e\"><v>#N/A</v></c></row>"),
    /* white space wherever XML allows it; CRLF and CR line ends, in text and in values */
    XML_DECL "<worksheet\r\n xmlns=\"" NS_MAIN "\"\t>\n <sheetData >\r\n  <row\tr = \"1\" >\n"
    "   <c\n r = 'A1'\tt = \"inlineStr\" ><is ><t >one\r\ntwo\rthree\n</t ></is ></c >\r\n"
    "   <c r=\"B1\" t=\"inlineStr\"><is><t xml:space = \"preserve\">  pad\r\n\r\n </t></is></c>"
    "\n  </row >\n  <row r=\"2\"><c r=\"A2\" t=\"str\"><v>\r\n x \r\n</v></c>"
    "<c r=\"B2\"><v>\r\n 42 \r\n</v></c></row>\r\n <row r=\"3\"><c r=\"A3\" t=\"s\"\r\n"
    "><v>0</v></c><c r=\"B3\" t=\"n\" s=\"1\r\n\"><v>7</v></c></row></sheetData>\r\n"
    "</worksheet>\r\n\r\n",
    /* prefixes: every element prefixed, prefixed attributes, a prefix declared inside */
    XML_DECL "<x:worksheet xmlns:x=\"" NS_MAIN "\"><x:sheetData><x:row r=\"1\">"
    "<x:c r=\"A1\" t=\"inlineStr\"><x:is><x:t>h</x:t></x:is></x:c><x:c r=\"B1\" "
    "t=\"inlineStr\"><x:is><x:r><x:t>k</x:t></x:r></x:is></x:c></x:row>"
    "<x:row xmlns:y=\"" NS_MAIN "\" y:spans=\"1:2\"><y:c><y:v>5</y:v></y:c><x:c y:r=\"B2\">"
    "<x:v>6</x:v></x:c></x:row><row xmlns=\"" NS_MAIN "\"><c r=\"A3\"><v>1</v></c></row>"
    "</x:sheetData></x:worksheet>",
    /* UTF-8 of every length, "]" and ">" in text, attributes of other names */
    WS_DATA("<row><c r=\"A1\" t=\"inlineStr\" cm=\"1\"><is><t>\xc3\xa9\xe2\x82\xac\xf0\x9f\x98"
            "\x80 \xc2\x85 \xef\xbf\xbd ] ]] ]> ] ]> a]b &gt;&gt; x>y [1, 2]]</t></is></c>"
            "<c r=\"B1\" t=\"inlineStr\" vm=\"1\" ph=\"1\"><is><t>\xce\xbc"
            "s</t></is></c></row><row r=\"2\" ht=\"20\" customHeight=\"1\" hidden=\"0\">"
            "<c r=\"A2\" t=\"inlineStr\"><is><t>]]</t></is></c><c r=\"B2\"><v>2</v></c></row>"),
    /* empty and self-closing elements; a sheet of two sheetData */
    WS_HEAD "<sheetData><row r=\"1\"/><row r=\"2\"><c r=\"A2\" t=\"inlineStr\"><is><t>h</t>"
    "</is></c><c r=\"B2\" t=\"inlineStr\"><is><t/></is></c><c r=\"C2\" t=\"inlineStr\">"
    "<is><t>c</t></is></c></row><row r=\"3\"><c r=\"A3\"/><c r=\"B3\"><v/></c><c r=\"C3\" "
    "t=\"inlineStr\"><is/></c><c/><c><v>4</v></c></row><row/></sheetData><sheetData/>"
    "<sheetData><row r=\"9\"><c r=\"A9\" t=\"inlineStr\"><is><t>z</t></is></c></row>"
    "</sheetData></worksheet>",
    /* a byte-order mark and a declaration in single quotes; no sheetData at all */
    "\xef\xbb\xbf<?xml version='1.0' encoding='utf-8' standalone='no' ?><worksheet/>",
    /* no declaration */
    "<worksheet><sheetData><row><c t=\"inlineStr\"><is><t>n</t></is></c></row>"
    "<row><c><v>1</v></c></row></sheetData></worksheet>",
    /* stray elements, text and cells where they mean nothing (as in test_hostile_xml) */
    WS_DATA("<row><c t=\"inlineStr\"><is><t>h<b>IGNORED</b>ead</t><u>x</u></is>text</c>"
            "</row><c r=\"A9\"><v>5</v></c><v>6</v><row><c><v>1<x>2</x>0<x/></v><extLst>"
            "<ext><v>9</v></ext></extLst></c><c r=\"B2\"><v>3</v><is><t>i</t></is></c>"
            "<c r=\"C2\" t=\"inlineStr\"><v>v wins</v><is><t>i</t></is></c>"
            "<c r=\"D2\" t=\"inlineStr\"><is><t>a</t></is><is><t>b</t></is></c>"
            "<c r=\"E2\"><v>1</v><v>2</v></c><c r=\"F2\" t=\"inlineStr\"><t>no</t></c>"
            "<deep><deeper><row><c><v>8</v></c></row></deeper></deep></row>"
            "<row><c r=\"A3\"><f>SUM(A1:A2)</f></c><c r=\"B3\"><f>1</f><v>9</v></c></row>"),
    /* the cell kinds, numbers written every way, header cells of every kind */
    WS_DATA("<row><c r=\"A1\"><v>7</v></c><c r=\"B1\"><v>2.5</v></c><c r=\"C1\" t=\"b\"><v>1"
            "</v></c><c r=\"D1\" t=\"e\"><v>#DIV/0!</v></c><c r=\"E1\" t=\"inlineStr\"><is><t>NA"
            "</t></is></c><c r=\"F1\"><v>48.0</v></c><c r=\"G1\"><v>0.1</v></c><c r=\"H1\" "
            "t=\"str\"><v>x_x0041_y</v></c></row>"
            "<row><c r=\"A2\"><v>1e3</v></c><c r=\"B2\"><v> -0.25 </v></c><c r=\"C2\" t=\"b\">"
            "<v>false</v></c><c r=\"D2\" t=\"e\"><v>#N/A</v></c><c r=\"E2\" t=\"inlineStr\">"
            "<is><t>nan</t></is></c><c r=\"F2\"><v>12345678901234567890</v></c><c r=\"G2\">"
            "<v>0.30000000000000004</v></c><c r=\"H2\" t=\"str\"><v>_x000D__x005F_x0041_</v>"
            "</c></row><row><c r=\"A3\"><v>NaN</v></c><c r=\"B3\"><v>-INF</v></c>"
            "<c r=\"C3\" t=\"b\"><v>TRUE</v></c><c r=\"E3\" t=\"s\"><v> 1 </v></c></row>"),
    /* errors of the sheet's own: the same message both ways */
    WS_DATA("<row><c r=\"A1\"><v>1</v></c></row><row><c r=\"A2\"><v>12abc</v></c></row>"),
    WS_DATA("<row r=\"3\"><c r=\"XFE3\"><v>1</v></c></row>"),
    WS_DATA("<row><c r=\"A1\" t=\"zz\"><v>1</v></c></row>"),
    WS_DATA("<row><c r=\"A1\" t=\"s\"><v>9</v></c></row>"),
    WS_DATA("<row><c r=\"A&#9;1\"><v>1</v></c></row>"),
    WS_DATA("<row><c r=\"XFC1\"><v>1</v></c><c><v>2</v></c><c><v>3</v></c></row>"),
};

static void test_scanner_constructs(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < sizeof SCANNER_SHEETS / sizeof *SCANNER_SHEETS; i++) {
        book(f, "scan.xlsx", SCANNER_SHEETS[i], "<si><t>s0</t></si><si><t>s1</t></si>",
             ZIP_CM_DEFAULT);
        expect_scanner_same(f, f->path, "Sheet1");
    }
    /* workbooks as libxlsxwriter writes them, shared strings and inline ones */
    for (int cm = 0; cm <= 1; cm++) {
        path_of(f, "lxw.xlsx");
        write_with_xlsxwriter(f->path, cm);
        expect_scanner_same(f, f->path, "Sheet1");
    }
}

/* Chunk boundaries anywhere: every chunk size from 1 byte (a boundary at every byte) up. */
static void test_scanner_chunks(void **state)
{
    fixture *f = *state;
    const size_t sheets[] = {0, 1, 2, 3, 4, 5, 9};
    for (size_t k = 0; k < sizeof sheets / sizeof *sheets; k++) {
        const char *sheet = SCANNER_SHEETS[sheets[k]];
        size_t n = strlen(sheet);
        book(f, "chunks.xlsx", sheet, "<si><t>s0</t></si><si><t>s1</t></si>", ZIP_CM_DEFAULT);
        tl_error want_err;
        tl_table *want = expat_read(f, f->path, "Sheet1", &want_err);
        assert_non_null(want);
        for (size_t chunk = 1; chunk <= n + 1; chunk += chunk < 80 ? 1 : 97) {
            opts.chunk = chunk;
            tl_table *t = read_mode(f, f->path, "Sheet1", 2);
            opts.chunk = 0;
            if (!t)
                fail_msg("sheet %zu, chunks of %zu bytes: %s", sheets[k], chunk, f->err.msg);
            assert_same_table(want, t);
            tl_table_free(t);
        }
        tl_table_free(want);
    }
}

/* What the scanner does not read itself, it leaves to expat, which reads it as ever. */
static void test_scanner_gives_up(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *sheet, *why;
    } cases[] = {
        {WS_DATA("<row><c><v>1</v></c><!-- a comment --></row>"), "comment"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t><![CDATA[a<b]]></t></is></c></row>"), "CDATA"},
        {WS_DATA("<?pi x?><row><c><v>1</v></c></row>"), "processing instruction"},
        {"<?xml version=\"1.0\"?>\n<!DOCTYPE worksheet [<!ENTITY e \"x\">]><worksheet>"
         "<sheetData><row><c t=\"inlineStr\"><is><t>&e;</t></is></c></row></sheetData>"
         "</worksheet>", "DTD"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&nbsp;</t></is></c></row>"), "entity"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&#0;</t></is></c></row>"), "character"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&#xD800;</t></is></c></row>"), "character"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&#xFFFE;</t></is></c></row>"), "character"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&amp</t></is></c></row>"), "reference"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>&amp x;</t></is></c></row>"), "entity"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>a ]]> b</t></is></c></row>"), "]]>"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>\xff</t></is></c></row>"), "UTF-8"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>\xc0\xa0</t></is></c></row>"), "UTF-8"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>\xed\xa0\x80</t></is></c></row>"), "UTF-8"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>\xef\xbf\xbe</t></is></c></row>"), "UTF-8"},
        {WS_DATA("<row><c t=\"inlineStr\"><is><t>\x01</t></is></c></row>"), "control"},
        {WS_DATA("<row><c r=\"A1\" r=\"B1\"><v>1</v></c></row>"), "same name"},
        {WS_DATA("<row><c r=\"A1\" r:r=\"B1\"><v>1</v></c></row>"), "same name"},
        {WS_DATA("<row><y:c><v>1</v></y:c></row>"), "prefix"},
        {WS_DATA("<row><c y:r=\"A1\"><v>1</v></c></row>"), "prefix"},
        {WS_DATA("<row><c xmlns:y=\"\"><v>1</v></c></row>"), "namespace"},
        {WS_DATA("<row><c xmlns:z=\"http://www.w3.org/2000/xmlns/\"><v>1</v></c></row>"),
         "namespace"},
        /* a URI holding expat's namespace separator, which expat refuses */
        {"<x:worksheet xmlns:x=\"a|b\"><x:sheetData/></x:worksheet>", "namespace"},
        {"<worksheet xmlns=\"a|b\"><sheetData/></worksheet>", "namespace"},
        {WS_DATA("<row><c><v>1</v></row>"), "does not match"},
        {WS_DATA("<row><c r=\"A1\"t=\"n\"><v>1</v></c></row>"), "malformed attribute"},
        {WS_DATA("<row><c r=A1><v>1</v></c></row>"), "malformed attribute"},
        {WS_DATA("<row><c r=\"<\"><v>1</v></c></row>"), "attribute value"},
        {WS_DATA("<row><a:b:c/></row>"), "qualified name"},
        {WS_DATA("<row>< c/></row>"), "malformed tag"},
        {WS_DATA("<row></ row></row>"), "end tag"},
        {WS_HEAD "<sheetData/></worksheet><worksheet/>", "second root"},
        {WS_HEAD "<sheetData/></worksheet>junk", "outside the root"},
        {WS_HEAD "<sheetData/></worksheet><!-- -->", "comment"},
        {WS_HEAD "<sheetData><row><c><v>1</v></c></row>", "ends inside"},
        {"", "ends inside"},
        {"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><worksheet/>", "encoding"},
        {"<?xml version=\"1.1\"?><worksheet/>", "version 1.0"},
        {"<?xml encoding=\"UTF-8\"?><worksheet/>", "version 1.0"},
        {"<?xml version=\"1.0\" standalone=\"maybe\"?><worksheet/>", "declaration"},
        {" <?xml version=\"1.0\"?><worksheet/>", "processing instruction"},
        {"\xfe\xff<worksheet/>", "outside the root"},
        {WS_DATA("<row><c><v>1</v></c><\xc3\xa9/></row>"), "malformed tag"},
        {WS_DATA("<row><c\xc3\xa9><v>1</v></c></row>"), "malformed attribute"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        book(f, "up.xlsx", cases[i].sheet, NULL, ZIP_CM_STORE);
        expect_scanner_gives_up(f, f->path, cases[i].why);
    }

    /* limits of its own: nesting, name and tag lengths, attribute count */
    tl_buf b = {0};
    tl_buf_adds(&b, WS_HEAD "<sheetData>");
    for (int i = 0; i < 300; i++)
        tl_buf_adds(&b, "<d>");
    for (int i = 0; i < 300; i++)
        tl_buf_adds(&b, "</d>");
    tl_buf_adds(&b, "<row><c><v>1</v></c></row></sheetData></worksheet>");
    book(f, "deep.xlsx", tl_buf_cstr(&b), NULL, ZIP_CM_DEFAULT);
    expect_scanner_gives_up(f, f->path, "nested too deep");

    tl_buf_clear(&b);
    tl_buf_adds(&b, WS_HEAD "<sheetData><row><c r=\"A1\" t=\"inlineStr\"><is><t>h</t></is></c>"
                            "</row><row>");
    for (int i = 0; i < 33; i++)
        tl_buf_printf(&b, "<c a%d=\"1\"><v>%d</v></c>", i, i);
    tl_buf_adds(&b, "<c");
    for (int i = 0; i < 33; i++)
        tl_buf_printf(&b, " a%d=\"1\"", i);
    tl_buf_adds(&b, "><v>1</v></c></row></sheetData></worksheet>");
    book(f, "attrs.xlsx", tl_buf_cstr(&b), NULL, ZIP_CM_DEFAULT);
    expect_scanner_gives_up(f, f->path, "too many attributes");

    tl_buf_clear(&b);
    tl_buf_adds(&b, WS_HEAD "<sheetData><row><c><v>1</v></c><");
    for (int i = 0; i < 60; i++)
        tl_buf_addc(&b, 'n');
    tl_buf_adds(&b, "/></row></sheetData></worksheet>");
    book(f, "name.xlsx", tl_buf_cstr(&b), NULL, ZIP_CM_DEFAULT);
    expect_scanner_gives_up(f, f->path, "long element name");

    tl_buf_clear(&b);
    tl_buf_adds(&b, WS_HEAD "<sheetData><row><c><v>1</v></c></row></sheetData><x a=\"");
    for (int i = 0; i < (2 << 20); i++)
        tl_buf_addc(&b, 'a' + i % 26);
    tl_buf_adds(&b, "\"/></worksheet>");
    book(f, "tag.xlsx", tl_buf_cstr(&b), NULL, ZIP_CM_DEFAULT);
    expect_scanner_gives_up(f, f->path, "longer than 1 MiB");
    tl_buf_free(&b);
}

/* The workbooks the conformance suite reads (written by openpyxl) read the same both ways,
 * the scanner never giving up.  Skipped when the suite is not there. */
static void test_scanner_conformance_inputs(void **state)
{
    fixture *f = *state;
    const char *top = getenv("TL_TOP");
    char pattern[4096];
    glob_t g;

    snprintf(pattern, sizeof pattern, "%s/../shared/conformance/cases/*/inputs/*.xlsx",
             top ? top : ".");
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        globfree(&g);
        skip();
    }
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *path = g.gl_pathv[k];
        memset(&f->err, 0, sizeof f->err);
        tl_xlsx *x = tl_xlsx_open_opts(path, &opts, &f->err);
        assert_non_null(x);
        size_t n = tl_xlsx_sheet_count(x);
        char **names = calloc(n, sizeof *names);
        for (size_t i = 0; i < n; i++)
            names[i] = strdup(tl_xlsx_sheet_name(x, i));
        tl_xlsx_close(x);
        for (size_t i = 0; i < n; i++) {
            expect_scanner_same(f, path, names[i]);
            free(names[i]);
        }
        free(names);
    }
    globfree(&g);
}

/* ---- inflating ------------------------------------------------------------------------ */

/* Find the zip headers of entry `name` in buf and set its CRC-32 to `crc`. */
static void patch_crc(unsigned char *buf, size_t n, const char *name, uint32_t crc)
{
    size_t len = strlen(name);
    int patched = 0;
    for (size_t i = 0; i + 46 + len <= n; i++) {
        size_t at = 0;
        if (memcmp(buf + i, "PK\3\4", 4) == 0 && memcmp(buf + i + 30, name, len) == 0)
            at = i + 14; /* local file header */
        else if (memcmp(buf + i, "PK\1\2", 4) == 0 && memcmp(buf + i + 46, name, len) == 0)
            at = i + 16; /* central directory header */
        if (at) {
            for (int k = 0; k < 4; k++)
                buf[at + (size_t)k] = (unsigned char)(crc >> (8 * k));
            patched++;
        }
    }
    assert_int_equal(patched, 2);
}

/* The whole file into buf (static, 1 MiB); returns its size. */
static size_t slurp(const char *path, unsigned char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, cap, fp);
    fclose(fp);
    assert_true(n > 0 && n < cap);
    return n;
}

/* Deflated, stored and bzip2 entries (the last decompressed by libzip) all read alike;
 * parts larger than a chunk, inflated in many steps, too. */
static void test_inflate_methods(void **state)
{
    fixture *f = *state;
    tl_buf rows = {0};
    tl_buf_adds(&rows, "<row>" INL("A1", "name") INL("B1", "value") "</row>");
    for (int i = 2; i < 20000; i++)
        tl_buf_printf(&rows, "<row r=\"%d\">" INL("A%d", "kernel_%d &amp; co")
                             "<c r=\"B%d\"><v>%d.25</v></c></row>", i, i, i, i, i);
    char *sheet = sheet_xml(tl_buf_cstr(&rows));
    tl_buf_free(&rows);
    assert_true(strlen(sheet) > (size_t)1 << 20); /* many chunks */

    zip_int32_t methods[] = {ZIP_CM_DEFLATE, ZIP_CM_STORE, ZIP_CM_BZIP2};
    tl_table *first = NULL;
    for (size_t m = 0; m < 3; m++) {
        if (!zip_compression_method_supported(methods[m], 1))
            continue;
        book(f, "methods.xlsx", sheet, "<si><t>x</t></si>", methods[m]);
        for (int mode = 0; mode <= 1; mode++) {
            tl_table *t = read_mode(f, f->path, "Sheet1", mode);
            if (!t)
                fail_msg("method %d, mode %d: %s", methods[m], mode, f->err.msg);
            assert_int_equal(t->nrows, 19998);
            assert_str(cell(t, "name", 19997), "kernel_19999 & co");
            assert_float(cell(t, "value", 0), 2.25);
            if (!first) {
                first = t;
            } else {
                assert_same_table(first, t);
                tl_table_free(t);
            }
        }
    }
    tl_table_free(first);
    free(sheet);
}

/* A damaged archive does not read as silently wrong data: the CRC-32 and the size of what
 * was inflated are checked against the zip's directory. */
static void test_inflate_damage(void **state)
{
    fixture *f = *state;
    char want[8192];
    static unsigned char buf[1 << 20];
    const char *rows = "<row>" INL("A1", "a") "</row><row><c r=\"A2\"><v>1</v></c></row>";
    char *sheet = sheet_xml(rows);
    size_t n;

    for (int stored = 0; stored <= 1; stored++) {
        for (int mode = 0; mode <= 2; mode++) {
            /* a wrong CRC-32 in the zip's headers */
            book(f, "crc.xlsx", sheet, NULL, stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE);
            n = slurp(f->path, buf, sizeof buf);
            patch_crc(buf, n, "xl/worksheets/sheet1.xml", 0x12345678);
            tt_write_file(f->path, (const char *)buf, n);
            memset(&f->err, 0, sizeof f->err);
            tl_table *t = read_mode(f, f->path, "Sheet1", mode);
            assert_null(t);
            /* stored parts are checked by libzip, deflated ones inflated and checked here */
            snprintf(want, sizeof want, "%s, sheet 'Sheet1': damaged zip data in part "
                     "xl/worksheets/sheet1.xml: %s", f->path,
                     stored ? "CRC error" : "CRC-32 mismatch (the zip says 12345678, the "
                                            "data gives ");
            if (strncmp(f->err.msg, want, strlen(want)) != 0)
                fail_msg("stored %d, mode %d: %s", stored, mode, f->err.msg);

            /* a wrong uncompressed size (within the bound) */
            book(f, "size.xlsx", sheet, NULL, stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE);
            n = slurp(f->path, buf, sizeof buf);
            patch_size(buf, n, "xl/worksheets/sheet1.xml", (uint32_t)strlen(sheet) + 5);
            tt_write_file(f->path, (const char *)buf, n);
            t = read_mode(f, f->path, "Sheet1", mode);
            assert_null(t);
            if (stored)
                snprintf(want, sizeof want, "%s, sheet 'Sheet1': damaged zip data in part "
                         "xl/worksheets/sheet1.xml: ", f->path);
            else
                snprintf(want, sizeof want, "%s, sheet 'Sheet1': damaged zip data in part "
                         "xl/worksheets/sheet1.xml: %zu bytes where the zip directory says "
                         "%zu", f->path, strlen(sheet), strlen(sheet) + 5);
            if (strncmp(f->err.msg, want, strlen(want)) != 0)
                fail_msg("stored %d, mode %d: %s", stored, mode, f->err.msg);
        }
    }

    /* the small parts are checked too, and named */
    book(f, "wbcrc.xlsx", sheet, NULL, ZIP_CM_DEFLATE);
    n = slurp(f->path, buf, sizeof buf);
    patch_crc(buf, n, "xl/workbook.xml", 0);
    tt_write_file(f->path, (const char *)buf, n);
    memset(&f->err, 0, sizeof f->err);
    assert_null(tl_xlsx_open_opts(f->path, &opts, &f->err));
    snprintf(want, sizeof want,
             "%s, part xl/workbook.xml: damaged zip data: CRC-32 mismatch (the zip says "
             "00000000, the data gives ", f->path);
    assert_true(strncmp(f->err.msg, want, strlen(want)) == 0);

    /* garbled and cut deflate data: an error, whatever the scanner mode */
    book(f, "garbled.xlsx", sheet, NULL, ZIP_CM_DEFLATE);
    n = slurp(f->path, buf, sizeof buf);
    size_t at = 0;
    for (size_t i = 0; i + 24 <= n && !at; i++)
        if (memcmp(buf + i, "PK\3\4", 4) == 0 && memcmp(buf + i + 30, "xl/worksheets/sheet1.xml", 24) == 0)
            at = i + 30 + 24 + (size_t)(buf[i + 28] | buf[i + 29] << 8);
    assert_true(at > 0);
    for (int variant = 0; variant < 2; variant++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, buf, n);
        if (variant == 0) {
            for (size_t i = 0; i < 8; i++)
                copy[at + i] = 0xFF; /* an invalid block type */
        } else {
            copy[at] = 0x00; /* a stored block, not final, that runs past the data */
        }
        tt_write_file(f->path, (const char *)copy, n);
        free(copy);
        for (int mode = 0; mode <= 2; mode++) {
            tl_table *t = read_mode(f, f->path, "Sheet1", mode);
            assert_null(t);
            snprintf(want, sizeof want, "%s, sheet 'Sheet1': damaged zip data in part "
                     "xl/worksheets/sheet1.xml: ", f->path);
            if (strncmp(f->err.msg, want, strlen(want)) != 0)
                fail_msg("variant %d, mode %d: %s", variant, mode, f->err.msg);
        }
    }
    free(sheet);
}

/* Run every test with the reader as it is (the scanner first), then with expat alone. */
static int group_default(void **state)
{
    (void)state;
    group_mode = 0;
    opts.scanner = 0;
    return 0;
}

static int group_expat(void **state)
{
    (void)state;
    group_mode = 1;
    opts.scanner = 1;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_strings_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_error_date, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workbook_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_zip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_zip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_xml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_cells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_sheets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decompression_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_xml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_strings_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xlsxwriter_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inflate_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inflate_damage, setup, teardown),
    };
    const struct CMUnitTest scanner[] = {
        cmocka_unit_test_setup_teardown(test_scanner_constructs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nesting_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scanner_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scanner_gives_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scanner_conformance_inputs, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("xlsx_read", tests, group_default, NULL);
    failed += cmocka_run_group_tests_name("xlsx_read, expat alone", tests, group_expat, NULL);
    failed += cmocka_run_group_tests_name("xlsx_read, scanner against expat", scanner,
                                          group_default, NULL);
    return failed;
}
