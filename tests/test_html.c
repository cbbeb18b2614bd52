/*
 * test_html.c - the page writer (write/html.h) on hand-made models: names are text, never
 * markup; the numbers shown are the model's; NaN and empty sections draw nothing broken;
 * the extension point's section lands in the page.  The browser tests are
 * tests/python/test_html.py.
 */
#include "testutil.h"

#include "write/html.h"

#include <math.h>

static const char *evil = "</script><script>alert(1)</script>";

/* How many times `needle` occurs in `hay`. */
static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_escaping(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_html_text(&b, "a<b>&\"c'\n\x01");
    assert_string_equal(tl_buf_cstr(&b), "a&lt;b&gt;&amp;\"c'\n?");
    b.len = 0;
    tl_html_attr(&b, "a<b>&\"c'\n");
    assert_string_equal(tl_buf_cstr(&b), "a&lt;b&gt;&amp;&quot;c&#39;?");
    tl_buf_free(&b);
}

static void extra(void *ctx, tl_buf *out)
{
    (*(int *)ctx)++;
    tl_buf_adds(out, "<p id=\"heatmap-here\">ranks</p>");
}

static void test_page_keeps_names_inert(void **state)
{
    (void)state;
    tl_page_move moves[2] = {
        {evil, 1.0, 3.5, 2.5, 250.0, 2.25, 2.75, "slower", "1 -> 1 calls"},
        {"a&b \"q\"", 2.0, 1.0, -1.0, -50.0, NAN, NAN, NULL, NULL},
    };
    tl_page_moves ml = {evil, moves, 2, evil};
    tl_page_bar bars[2] = {{evil, {1, 0, NAN, 0.5}, 1.5}, {"var", {NAN, NAN, NAN, NAN}, NAN}};
    tl_page_point pts[1] = {{evil, evil, {100, 120}, {300, NAN}}};
    tl_page_roofline roof = {evil, {"base", evil}, pts, 1,
                             {{evil, 3.35, 1, {989.5}, {evil}}, {evil, 5.3, 2, {1307, 163}, {"matrix_bf16", evil}}}, evil};
    tl_page_node nodes[2] = {{evil, 0, 0, 10, 12, 20, 0, 0, 0}, {"x", 1, 0, 5, 5, 0, 1, 0, 1}};
    tl_page_tree tree = {{"base", "var"}, nodes, 2, 10, 3, 2};
    int called = 0;
    tl_page_extra ex = {"ranks", evil, extra, &called};
    tl_page_bar_set sets[1] = {{evil, bars, 2, evil}};
    tl_page p = {.tool = "tlcompare", .title = evil, .summary_text = evil, .headline = evil, .bars = bars, .nbars = 2,
                 .bar_sets = sets, .nbar_sets = 1, .moves = &ml, .nmoves = 1, .roofs = &roof, .nroofs = 1,
                 .tree = &tree, .extras = &ex, .nextras = 1};
    tl_buf b = {0};
    tl_html_write(&p, &b);
    const char *html = tl_buf_cstr(&b);
    assert_null(strstr(html, evil));
    assert_int_equal(count(html, "<script"), 1);
    assert_int_equal(count(html, "</script>"), 1);
    assert_non_null(strstr(html, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(html, "data-name=\"a&amp;b &quot;q&quot;\""));
    /* the numbers are the model's, the interval as given, an untested one a dash */
    assert_non_null(strstr(html, "data-delta=\"2.5\" data-pct=\"250\" data-ci-lo=\"2.25\" data-ci-hi=\"2.75\""));
    assert_non_null(strstr(html, "<td>[+2.250, +2.750]</td>"));
    assert_non_null(strstr(html, "data-ci-lo=\"nan\""));
    assert_int_equal(called, 1);
    assert_non_null(strstr(html, "<section id=\"ranks\"><h2>&lt;/script&gt;"));
    assert_non_null(strstr(html, "<p id=\"heatmap-here\">ranks</p>"));
    assert_non_null(strstr(html, "3 nodes too narrow"));
    /* each side's GPU: the variant's lines dashed (memory, two peaks, the legend's sample) */
    assert_int_equal(count(html, "<line class=\"peak var"), 4);
    assert_non_null(strstr(html, "<table class=\"bars\" id=\"bars-0\">"));
    /* no NaN reaches a coordinate */
    assert_null(strstr(html, "=\"nan\" y"));
    assert_null(strstr(html, "width=\"nan\""));
    assert_null(strstr(html, "width=\"-"));
    tl_buf_free(&b);
}

/* The heatmap: the cells' values as given (data-v), a number in each, the difference hatched
 * where it is more and only there, NaN a dash and no coordinate, every name text. */
static void test_heatmap(void **state)
{
    (void)state;
    const char *rows[2] = {"rank 0", evil}, *cols[2] = {evil, "wait (\xc2\xb5s)"};
    const int dec[2] = {3, 1};
    const double a[4] = {8.25, 0, 8.5, 10}, b[4] = {8.75, 5707.1, 8.5, NAN}, d[4] = {0.5, 5707.1, -0.25, NAN};
    tl_page_heatmap h = {evil, {"a", evil}, 2, 2, rows, cols, dec, {a, b}, d};
    tl_buf o = {0};
    tl_html_heatmap(&o, &h, "heat-0");
    const char *html = tl_buf_cstr(&o);
    assert_null(strstr(html, evil));
    assert_null(strstr(html, "<script"));
    assert_int_equal(count(html, "<g class=\"hm mark\""), 12);
    assert_non_null(strstr(html, "data-panel=\"2\" data-row=\"0\" data-col=\"1\" data-v=\"5707.1000000000004\""));
    assert_non_null(strstr(html, "data-panel=\"1\" data-row=\"1\" data-col=\"1\" data-v=\"nan\""));
    assert_int_equal(count(html, "fill=\"url(#hatch)\""), 2); /* +0.5 and +5707.1, not -0.25 */
    assert_non_null(strstr(html, ">+5707.1</text>"));
    assert_non_null(strstr(html, "<td>-0.250</td>"));
    assert_non_null(strstr(html, "<td>-</td>"));
    assert_null(strstr(html, "=\"nan\" y"));
    assert_null(strstr(html, "width=\"nan\""));
    assert_non_null(strstr(html, "<table class=\"heat\" id=\"heat-0\">"));
    assert_int_equal(count(html, "<tr><td>"), 2);
    tl_buf_free(&o);
}

/* More ranks than are drawn: the first TL_PAGE_HEAT_MAX_ROWS, the table lists them all. */
static void test_heatmap_many_ranks(void **state)
{
    (void)state;
    enum { N = TL_PAGE_HEAT_MAX_ROWS + 88 };
    static const char *rows[N];
    static double v[N];
    const char *cols[1] = {"busy (ms)"};
    const int dec[1] = {3};
    for (int i = 0; i < N; i++)
        rows[i] = "rank", v[i] = i;
    tl_page_heatmap h = {"many", {"a", "b"}, N, 1, rows, cols, dec, {v, v}, v};
    tl_buf o = {0};
    tl_html_heatmap(&o, &h, "heat-0");
    const char *html = tl_buf_cstr(&o);
    assert_int_equal(count(html, "<g class=\"hm mark\""), 3 * TL_PAGE_HEAT_MAX_ROWS);
    assert_int_equal(count(html, "<tr><td>rank</td>"), N);
    assert_non_null(strstr(html, "the first 512 of 600 ranks drawn"));
    /* rows too thin for numbers: none in the cells, all in the tooltips */
    assert_null(strstr(html, "text-anchor=\"middle\">599.000</text>"));
    assert_non_null(strstr(html, "data-tip=\"rank, busy (ms): a 511.000\""));
    tl_buf_free(&o);
}

/* More bars than are drawn: the first TL_PAGE_MAX_BARS drawn, the table lists them all. */
static void test_many_bars(void **state)
{
    (void)state;
    enum { N = TL_PAGE_MAX_BARS + 6 };
    tl_page_bar bars[N];
    for (int i = 0; i < N; i++)
        bars[i] = (tl_page_bar){"rank", {1, 2, 3, 4}, 10};
    tl_page_bar_set set = {"per rank", bars, N, NULL};
    tl_page p = {.tool = "tlcompare", .title = "a vs b", .summary_text = "", .bar_sets = &set, .nbar_sets = 1};
    tl_buf o = {0};
    tl_html_write(&p, &o);
    const char *html = tl_buf_cstr(&o);
    assert_int_equal(count(html, "<rect class=\"mark\""), 4 * TL_PAGE_MAX_BARS);
    assert_int_equal(count(html, "<tr><td>rank</td>"), N);
    assert_non_null(strstr(html, "the first 64 of 70 bars drawn"));
    assert_non_null(strstr(html, "<a href=\"#time\">"));
    tl_buf_free(&o);
}

/* A bar with an infinite part (a report can hold one): the scale and the ticks come from
 * the finite bars, the infinite part is not drawn, and no coordinate is "inf" or "nan". */
static void test_infinite_bar(void **state)
{
    (void)state;
    tl_page_bar bars[2] = {{"a", {1, 2, 3, 4}, 10}, {"b", {INFINITY, 2, 3, 4}, INFINITY}};
    tl_page_bar_set set = {"sides", bars, 2, NULL};
    tl_page p = {.tool = "tlcompare", .title = "a vs b", .summary_text = "", .bar_sets = &set, .nbar_sets = 1};
    tl_buf o = {0};
    tl_html_write(&p, &o);
    const char *html = tl_buf_cstr(&o);
    assert_int_equal(count(html, "<rect class=\"mark\""), 4 + 3);
    assert_true(count(html, "<line class=\"grid\"") >= 3);
    assert_int_equal(count(html, "=\"inf"), 0);
    assert_int_equal(count(html, "=\"nan"), 0);
    assert_int_equal(count(html, "=\"-nan"), 0);
    tl_buf_free(&o);
}

static void test_empty_page(void **state)
{
    (void)state;
    tl_page p = {0};
    p.tool = "tlcompare";
    p.title = "a vs b";
    p.summary_text = "";
    tl_buf b = {0};
    tl_html_write(&p, &b);
    const char *html = tl_buf_cstr(&b);
    assert_non_null(strstr(html, "<section id=\"summary\">"));
    assert_null(strstr(html, "id=\"moved\""));
    assert_null(strstr(html, "id=\"tree\""));
    assert_null(strstr(html, "id=\"roofline\""));
    assert_non_null(strstr(html, "</html>\n"));
    tl_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_page_keeps_names_inert),
        cmocka_unit_test(test_heatmap),
        cmocka_unit_test(test_heatmap_many_ranks),
        cmocka_unit_test(test_many_bars),
        cmocka_unit_test(test_infinite_bar),
        cmocka_unit_test(test_empty_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
