/*
 * test_opts_cli.c - a command line's whole shape (run/options.h: tl_opts_cli and
 * tl_opts_error_line), as tlcompare, tlreport and tlreport-mpi take it: --help and
 * --version stop before the check, --quiet reaches tl_quiet before the check runs, the
 * tool's check applies its rules, and the error line a program prints.
 */
#include "testutil.h"

#include "base/util.h"
#include "run/compare.h"
#include "run/compare_args.h"
#include "run/report_args.h"

#include <string.h>

/* tlcompare's command line from a NULL-terminated list of words. */
static int cli_compare(tl_compare_args *a, tl_buf *out, tl_error *err, const char *const *words)
{
    char *argv[32] = {"tlcompare"};
    int argc = 1;
    while (*words)
        argv[argc++] = (char *)*words++;
    tl_compare_args_init(a);
    return tl_opts_cli(&tl_compare_tool, NULL, "9.9", argc, argv, a, out, err);
}

static int cli_report(tl_report_args *a, tl_buf *out, tl_error *err, const char *const *words)
{
    char *argv[32] = {"tlreport"};
    int argc = 1;
    while (*words)
        argv[argc++] = (char *)*words++;
    tl_report_args_init(a);
    return tl_opts_cli(&tl_report_tool, NULL, "9.9", argc, argv, a, out, err);
}

/* --help: the table's help, nothing checked (no input is needed); --version: the line. */
static void test_help_and_version_stop(void **state)
{
    tl_compare_args a;
    tl_buf out = {0}, want = {0};
    tl_error err = {0};
    const char *help[] = {"-o", "x.csv", "--help", NULL}; /* x.csv would fail the check */
    assert_int_equal(cli_compare(&a, &out, &err, help), TL_OPTS_SHOWN);
    tl_opts_help(&tl_compare_tool, &want);
    assert_string_equal(tl_buf_cstr(&out), tl_buf_cstr(&want));
    assert_string_equal(err.msg, "");
    tl_compare_args_free(&a);
    tl_buf_free(&out);
    tl_buf_free(&want);

    tl_report_args r;
    const char *version[] = {"--version", NULL};
    assert_int_equal(cli_report(&r, &out, &err, version), TL_OPTS_SHOWN);
    assert_string_equal(tl_buf_cstr(&out), "tlreport 9.9\n");
    tl_report_args_free(&r);
    tl_buf_free(&out);

    char *argv[] = {"tlreport-mpi", "--version"};
    tl_report_args_init(&r);
    assert_int_equal(tl_opts_cli(&tl_report_tool, "tlreport-mpi", "9.9", 2, argv, &r, &out, &err), TL_OPTS_SHOWN);
    assert_string_equal(tl_buf_cstr(&out), "tlreport-mpi 9.9\n");
    tl_report_args_free(&r);
    tl_buf_free(&out);
}

/* A run's command line: 0, nothing to print, the check's work done (the inputs moved
 * into the run's options), tl_quiet following --quiet. */
static void test_run_checked_and_quiet(void **state)
{
    tl_compare_args a;
    tl_buf out = {0};
    tl_error err = {0};
    const char *w[] = {"A.xlsx", "B.xlsx", "-q", NULL};
    tl_quiet = 0;
    assert_int_equal(cli_compare(&a, &out, &err, w), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(a.run.ninputs, 2);
    assert_string_equal(a.run.inputs[1], "B.xlsx");
    assert_int_equal(tl_quiet, 1);
    tl_compare_args_free(&a);

    const char *loud[] = {"A.xlsx", "B.xlsx", NULL};
    assert_int_equal(cli_compare(&a, &out, &err, loud), 0);
    assert_int_equal(tl_quiet, 0);
    tl_compare_args_free(&a);
    tl_quiet = 1;
}

/* The parser's and the check's usage errors, and the lines the programs print for them. */
static void test_errors_and_their_lines(void **state)
{
    tl_compare_args a;
    tl_buf out = {0};
    tl_error err = {0};
    const char *bogus[] = {"A.xlsx", "B.xlsx", "--bogus", NULL};
    int rc = cli_compare(&a, &out, &err, bogus);
    assert_int_equal(rc, TL_RUN_USAGE);
    tl_opts_error_line(&tl_compare_tool, NULL, rc, &err, &out);
    assert_string_equal(tl_buf_cstr(&out), "tlcompare: unknown option '--bogus' (see 'tlcompare --help')\n");
    tl_compare_args_free(&a);
    tl_buf_free(&out);

    /* a rule of the check, not of the parser */
    tl_report_args r;
    err = (tl_error){0};
    const char *two[] = {"t.json", "--inference", "--gpu-arch", "H100", NULL};
    rc = cli_report(&r, &out, &err, two);
    assert_int_equal(rc, TL_RUN_USAGE);
    assert_non_null(strstr(err.msg, "not supported with inference"));
    tl_report_args_free(&r);

    /* a failure that is not a usage error: no hint */
    err = (tl_error){0};
    tl_error_set(&err, "no such file");
    tl_opts_error_line(&tl_report_tool, "tlreport-mpi", TL_RUN_FAILED, &err, &out);
    assert_string_equal(tl_buf_cstr(&out), "tlreport-mpi: no such file\n");
    tl_buf_free(&out);
}

int main(void)
{
    tl_quiet = 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version_stop),
        cmocka_unit_test(test_run_checked_and_quiet),
        cmocka_unit_test(test_errors_and_their_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
