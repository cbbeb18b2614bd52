/*
 * test_summary_render.c - the terminal summary's columns: a huge percentage (+484066.7%)
 * keeps the name column where the others have it; two unaligned LCAs whose names share a
 * long start are never cut to the same text.
 */
#include "testutil.h"

#include "summary/lca.h"
#include "summary/summary.h"

#include <math.h>

/* The printout, into *text and *len (the caller's: open_memstream writes them on fclose). */
static void print_summary(const tl_summary *s, char **text, size_t *len)
{
    FILE *f = open_memstream(text, len);
    assert_non_null(f);
    tl_summary_print(s, f, 0);
    fclose(f);
}

/* The printout, into *text and *len (the caller's: open_memstream writes them on fclose). */
static void print_lca(const tl_lca_summary *s, char **text, size_t *len)
{
    FILE *f = open_memstream(text, len);
    assert_non_null(f);
    tl_lca_summary_print(s, f, 0);
    fclose(f);
}

/* The column of `name` on its line of `text`, or -1. */
static long column_of(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    if (!p)
        return -1;
    const char *bol = p;
    while (bol > text && bol[-1] != '\n')
        bol--;
    return (long)(p - bol);
}

static tl_summary_item item(const char *name, double base, double var)
{
    tl_summary_item it;
    memset(&it, 0, sizeof it);
    it.name = name;
    it.time_ms = (tl_delta){base, var};
    it.count = (tl_delta){10, 10};
    it.per_call_ms = (tl_delta){base / 10, var / 10};
    it.dir = 1;
    it.ci_lo = it.ci_hi = it.p = NAN;
    it.verdict = TL_VERDICT_NONE;
    return it;
}

static void test_huge_percentage_keeps_the_columns(void **state)
{
    (void)state;
    tl_summary_item regs[2] = {item("op_tiny_before", 0.0012, 5.8100), item("op_ordinary", 1.0, 1.01)};
    tl_variant_summary v;
    memset(&v, 0, sizeof v);
    v.tag = "new";
    v.regressions = regs;
    v.nregressions = 2;
    v.call_ratio = NAN;
    v.busy.verdict = TL_VERDICT_NONE;
    tl_summary s;
    memset(&s, 0, sizeof s);
    s.baseline = "old";
    s.source = "ops_summary";
    s.item = "op";
    s.variants = &v;
    s.nvariants = 1;
    s.confidence = 0.95;
    char *text = NULL;
    size_t len = 0;
    print_summary(&s, &text, &len);
    assert_non_null(strstr(text, "+4.8e+05%"));
    long a = column_of(text, "op_tiny_before"), b = column_of(text, "op_ordinary");
    assert_true(a > 0);
    assert_int_equal(a, b);
    free(text);
}

static void test_unaligned_lca_names_are_never_cut(void **state)
{
    (void)state;
    const char *n1 = "aten::_scaled_dot_product_flash_attention_for_cpu_backward_variant_one",
               *n2 = "aten::_scaled_dot_product_flash_attention_for_cpu_backward_variant_two";
    tl_lca_item g[2];
    memset(g, 0, sizeof g);
    for (int i = 0; i < 2; i++) {
        g[i].lca = g[i].node = i ? n2 : n1;
        g[i].ops1 = g[i].ops2 = i ? n2 : n1;
        g[i].count = 1;
        g[i].n1 = g[i].n2 = 1;
        g[i].ms1 = 1;
        g[i].ms2 = 2 + i;
        g[i].delta_ms = 1 + i;
        g[i].pct = 100 * (1 + i);
        g[i].unaligned = 1;
        g[i].ci_lo = g[i].ci_hi = g[i].p = NAN;
        g[i].verdict = TL_VERDICT_NONE;
    }
    tl_lca_summary s;
    memset(&s, 0, sizeof s);
    s.tag1 = "old";
    s.tag2 = "new";
    s.nlcas = s.ngroups = 2;
    s.groups = g;
    s.top = g;
    s.ntop = 2;
    s.max_top = 10;
    s.nslower = 2;
    s.confidence = 0.95;
    char *text = NULL;
    size_t len = 0;
    print_lca(&s, &text, &len);
    assert_non_null(strstr(text, n1));
    assert_non_null(strstr(text, n2));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_percentage_keeps_the_columns),
        cmocka_unit_test(test_unaligned_lca_names_are_never_cut),
    };
    return cmocka_run_group_tests_name("summary_render", tests, NULL, NULL);
}
