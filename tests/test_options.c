/*
 * test_options.c - the option contract (run/options.h, run/compare_args.h,
 * run/report_args.h): argv through the tables (argparse's spellings, abbreviations, lists,
 * ranges), the checks' rules between options, and --help generated from the tables.
 */
#include "testutil.h"

#include "base/util.h"
#include "compare/groups.h"
#include "run/compare_args.h"
#include "run/report_args.h"

#include <string.h>

/* argv from a NULL-terminated list ("prog" first added). */
static int parse_compare(tl_compare_args *a, tl_error *err, const char *const *words)
{
    char *argv[64] = {"tlcompare"};
    int argc = 1;
    while (*words)
        argv[argc++] = (char *)*words++;
    tl_compare_args_init(a);
    int rc = tl_opts_parse_argv(&tl_compare_tool, argc, argv, a, err);
    return rc ? rc : tl_compare_args_check(a, err);
}

static int parse_report(tl_report_args *a, tl_error *err, const char *const *words)
{
    char *argv[64] = {"tlreport"};
    int argc = 1;
    while (*words)
        argv[argc++] = (char *)*words++;
    tl_report_args_init(a);
    int rc = tl_opts_parse_argv(&tl_report_tool, argc, argv, a, err);
    return rc ? rc : tl_report_args_check(a, err);
}

static void test_spellings_and_values(void **state)
{
    tl_compare_args a;
    tl_error err = {0};
    const char *w[] = {"A", "-oout.xlsx", "--output_csvs", "csvs", "--top=7", "--names", "x", "y",
                       "--min-delta-p", "2.5", "B", "--conf", "90", "--", "-C", NULL};
    assert_int_equal(parse_compare(&a, &err, w), 0);
    assert_string_equal(a.run.output, "out.xlsx");
    assert_string_equal(a.run.csv_dir, "csvs");
    assert_int_equal(a.run.top, 7);
    assert_int_equal(a.run.nnames, 2);
    assert_string_equal(a.run.names[1], "y");
    assert_true(a.run.names_given);
    assert_true(a.run.min_delta_pct == 2.5);
    assert_true(a.run.confidence > 0.899 && a.run.confidence < 0.901);
    assert_int_equal(a.run.ninputs, 3); /* A, B, and "-C" after "--" */
    assert_string_equal(a.run.inputs[2], "-C");
    assert_int_equal(a.run.run, TL_GROUP_ALL);
    tl_compare_args_free(&a);
}

static void test_usage_errors(void **state)
{
    static const struct {
        const char *w[6];
        const char *msg;
    } cases[] = {
        {{"A", "B", "--min-d", "1"}, "ambiguous option: --min-d could match --min-delta-ms, --min-delta-pct"},
        {{"A", "B", "--top", "0"}, "--top needs a whole number from 1 to 100000"},
        {{"A", "B", "--top", "3x"}, "--top needs a whole number from 1 to 100000"},
        {{"A", "B", "--min-time-ms", "-1"}, "--min-time-ms needs a number of at least 0"},
        {{"A", "B", "--fail-on-regression", "inf"}, "--fail-on-regression needs a number of at least 0"},
        {{"A", "B", "--confidence", "40"}, "--confidence needs a level from 50 to below 100 (percent)"},
        {{"A", "B", "--sheets", "nope"}, "--sheets: unknown group 'nope'"},
        {{"A", "B", "--sheets"}, "--sheets needs at least one group"},
        {{"A", "B", "--fdr=1"}, "--fdr takes no value"},
        {{"A", "B", "-o", "x.CSV"}, "-o names the workbook (.xlsx), not a CSV file"},
        {{"A", "B", "--inference", "--gpu-arch", "H100"}, "--gpu-arch (the GPU description) is not supported"},
        {{"A", "B", "--group_by_num_kernels", "--gpu-arch=H100"}, "not supported with inference traces"},
        {{"A", "B", "--nope"}, "unknown option '--nope'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_compare_args a;
        tl_error err = {0};
        int rc = parse_compare(&a, &err, cases[i].w);
        if (rc != TL_RUN_USAGE || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, err.msg, cases[i].msg);
        tl_compare_args_free(&a);
    }
}

static void test_groups_and_help_stop(void **state)
{
    tl_compare_args a;
    tl_error err = {0};
    const char *w[] = {"A", "B", "--sheets", "ops_summary", "perf", NULL};
    assert_int_equal(parse_compare(&a, &err, w), 0);
    assert_int_equal(a.run.named, tl_group_from_name("ops_summary") | tl_group_from_name("perf"));
    assert_int_equal(a.run.run, a.run.named);
    tl_compare_args_free(&a);
    /* --help stops the parse: what follows it is not read */
    const char *h[] = {"--he", "--nope", NULL};
    char *argv[] = {"tlcompare", (char *)h[0], (char *)h[1]};
    tl_compare_args_init(&a);
    assert_int_equal(tl_opts_parse_argv(&tl_compare_tool, 3, argv, &a, &err), 0);
    assert_true(a.help);
    tl_compare_args_free(&a);
}

static void test_report_rules(void **state)
{
    tl_report_args a;
    tl_error err = {0};
    const char *ok[] = {"t.json", "--gpu_arch_platform", "MI300X", "--topk_o", "5", "--kernel_summary", NULL};
    assert_int_equal(parse_report(&a, &err, ok), 0);
    assert_string_equal(a.run.trace, "t.json");
    assert_string_equal(a.run.gpu_arch, "MI300X");
    assert_int_equal(a.run.topk_ops, 5);
    tl_report_args_free(&a);

    static const struct {
        const char *w[6];
        const char *msg;
    } cases[] = {
        {{"t.json", "u.json"}, "one trace at a time: 'u.json' is a second one"},
        {{"--quiet"}, "no trace given"},
        {{"t.json", "--gpu-arch", "H100", "--gpu_arch_platform", "MI300X"}, "one GPU description at a time"},
        {{"t.json", "--inference", "--gpu-arch", "H100"}, "the GPU description are not supported with inference"},
        {{"t.json", "--capture-folder", "d", "--topk_ops", "3"}, "not supported with inference traces"},
        {{"t.json", "--group_by_parent_module", "--detect_recompute"}, "'--detect_recompute' (an option of"},
        {{"t.json", "--topk_ops", "-1"}, "--topk_ops needs a whole number of rows"},
        {{"t.json", "--micro_idle_thresh_us"}, "--micro_idle_thresh_us needs a value"},
        {{"--trace_pattern", "r.json", "--world_size", "2"}, "--trace_pattern 'r.json' must hold exactly one '*'"},
        {{"--trace_pattern", "r*_*.json", "--world_size", "2"}, "--trace_pattern 'r*_*.json' must hold exactly one"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        err = (tl_error){0}; /* an error slot keeps its first message */
        int rc = parse_report(&a, &err, cases[i].w);
        if (rc != TL_RUN_USAGE || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, err.msg, cases[i].msg);
        tl_report_args_free(&a);
    }
    /* a directory given as the trace: named, and the rank set's option suggested */
    char *dir = tt_tmpdir();
    const char *d[] = {dir, NULL};
    err = (tl_error){0};
    assert_int_equal(parse_report(&a, &err, d), TL_RUN_FAILED);
    char want[4200];
    snprintf(want, sizeof want, "%s: is a directory, not a trace (the collective report of a rank set, one trace "
             "per rank, is tlreport's: tlreport --ranks %s)", dir, dir);
    assert_string_equal(err.msg, want);
    tl_report_args_free(&a);
    tt_rmrf(dir);
    free(dir);
}

/* A value that the row takes (its kind's), for giving it on a command line. */
static const char *a_value(const tl_optdef *d)
{
    switch (d->kind) {
    case TL_OPT_TEXT: return "v";
    case TL_OPT_LIST: return d->lo > 0 ? "1" : "mean";
    case TL_OPT_LONG: case TL_OPT_SIZE: case TL_OPT_NUMBER: return "2";
    case TL_OPT_IGNORED: return d->metavar ? "2" : NULL;
    default: return NULL;
    }
}

/* Each option of one kind of tlreport run (one trace's report, a rank set's collective
 * report) given in the other kind is refused by its name, never dropped: every row the
 * table marks, each of its spellings. */
static void test_report_kinds_refuse_each_other(void **state)
{
    (void)state;
    size_t tried = 0;
    for (size_t i = 0; i < tl_report_tool.nopts; i++) {
        const tl_optdef *d = &tl_report_tool.opts[i];
        unsigned kind = d->where & (TL_OPT_MODE_A | TL_OPT_MODE_B);
        if (!kind || !(d->where & TL_OPT_CLI))
            continue;
        for (int k = 0; k < TL_OPT_MAX_SPELLINGS && d->cli[k]; k++) {
            const char *run[3][3] = {{"--trace_pattern", "r*.json", "--world_size"}, {"2"}, {"t.json"}};
            const char *w[8];
            size_t n = 0;
            if (kind == TL_OPT_MODE_A) { /* one trace's: given with a rank set */
                w[n++] = run[0][0], w[n++] = run[0][1], w[n++] = run[0][2], w[n++] = run[1][0];
            } else {
                w[n++] = run[2][0];
            }
            w[n++] = d->cli[k];
            if (a_value(d))
                w[n++] = a_value(d);
            w[n] = NULL;
            tl_report_args a;
            tl_error err = {0};
            int rc = parse_report(&a, &err, w);
            char want[128];
            snprintf(want, sizeof want, "%s is an option of %s", tl_opts_label(d),
                     kind == TL_OPT_MODE_A ? "one trace's report" : "a rank set");
            if (rc != TL_RUN_USAGE || strncmp(err.msg, want, strlen(want)) != 0)
                fail_msg("%s: rc %d, '%s' (expected '%s...')", d->cli[k], rc, err.msg, want);
            tl_report_args_free(&a);
            tried++;
        }
    }
    assert_true(tried >= 30); /* the GPU, html, inference and ignored options; the rank set's */
    /* and each kind takes its own */
    tl_report_args a;
    tl_error err = {0};
    const char *ranks[] = {"--trace_pattern", "r*.json", "--world_size", "2", "-j", "2", "--agg_metrics", "mean",
                           "--all2allv_heatmap", "--use_multiprocessing", NULL};
    assert_int_equal(parse_report(&a, &err, ranks), 0);
    tl_report_args_free(&a);
    const char *one[] = {"t.json", "--gpu-arch", "H100", "--html", "p.html", "--kernel_summary", NULL};
    assert_int_equal(parse_report(&a, &err, one), 0);
    tl_report_args_free(&a);
}

/* Every listed spelling is in --help, each option line starts with its row's spellings. */
static void test_help_from_the_table(void **state)
{
    const tl_tool *tools[] = {&tl_compare_tool, &tl_report_tool};
    for (size_t t = 0; t < 2; t++) {
        tl_buf help = {0};
        tl_opts_help(tools[t], &help);
        const char *h = tl_buf_cstr(&help);
        assert_non_null(strstr(h, "usage: "));
        for (size_t i = 0; i < tools[t]->nopts; i++) {
            const tl_optdef *d = &tools[t]->opts[i];
            if (!(d->where & TL_OPT_CLI) || d->kind == TL_OPT_HEADING)
                continue;
            char line[128];
            snprintf(line, sizeof line, "\n  %s", d->cli[0]);
            if (!strstr(h, line))
                fail_msg("%s --help: no line for %s", tools[t]->prog, d->cli[0]);
        }
        assert_non_null(strstr(h, tools[t]->outro));
        tl_buf_free(&help);
    }
}

int main(void)
{
    tl_quiet = 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings_and_values),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_groups_and_help_stop),
        cmocka_unit_test(test_report_rules),
        cmocka_unit_test(test_report_kinds_refuse_each_other),
        cmocka_unit_test(test_help_from_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
