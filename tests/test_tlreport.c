/*
 * test_tlreport.c - the tlreport program (TRACES.md §0): outputs, the reference's option
 * spellings, the default output name, bad traces (one line naming the file, exit 1,
 * nothing written), usage errors (exit 2), --help and --version; and tlcompare taking a
 * trace where it takes a report.  Runs the real binary: tlreport beside $TLCOMPARE.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>

static char tlreport[1024], tlcompare[1024];
static char *dir;

static const char *good =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
    "\"args\":{\"correlation\":5}},"
    "{\"ph\":\"s\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":1,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
    "{\"ph\":\"f\",\"id\":5,\"pid\":0,\"tid\":7,\"ts\":100,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":4,"
    "\"args\":{\"correlation\":5,\"stream\":7}}]}";

/* Run a shell command in `dir`; its exit status. */
static int run(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && ", dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int exists(const char *name)
{
    char p[2048];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static char *slurp(const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int setup(void **state)
{
    (void)state;
    dir = tt_tmpdir();
    char p[2048];
    snprintf(p, sizeof p, "%s/run.pt.trace.json", dir);
    tt_write_file(p, good, strlen(good));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tt_rmrf(dir);
    free(dir);
    return 0;
}

static void test_outputs(void **state)
{
    (void)state;
    assert_int_equal(run("'%s' run.pt.trace.json -q -o r.xlsx --output_csvs_dir csvs", tlreport), 0);
    assert_true(exists("r.xlsx"));
    assert_true(exists("csvs/gpu_timeline.csv"));
    assert_true(exists("csvs/ops_summary.csv"));
    assert_true(exists("csvs/ops_unique_args.csv"));
    assert_true(exists("csvs/kernel_summary.csv"));
    assert_true(exists("csvs/ops_summary_by_category.csv"));
    assert_string_equal(slurp("csvs/ops_summary_by_category.csv"),
                        "op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)\n"
                        "GEMM,1,0.004,100.0,100.0\n");
    /* the default workbook name: the tag, here in the current directory */
    assert_int_equal(run("'%s' run.pt.trace.json > out.txt", tlreport), 0);
    assert_true(exists("run_perf_report.xlsx"));
    assert_non_null(strstr(slurp("out.txt"), "Wrote sheet 'gpu_timeline' with 8 rows"));
    /* the reference's spellings; CSVs alone when only the directory is given */
    assert_int_equal(run("'%s' --profile_json_path run.pt.trace.json --output_csvs_dir only --kernel_summary -q",
                         tlreport), 0);
    assert_true(exists("only/kernel_summary.csv"));
    assert_int_equal(run("'%s' --profile_json_path=run.pt.trace.json --output_xlsx_path=ref.xlsx -q", tlreport), 0);
    assert_true(exists("ref.xlsx"));
    /* gzip by content, whatever the name */
    assert_int_equal(run("gzip -c run.pt.trace.json > packed.bin && '%s' packed.bin -q -o gz.xlsx", tlreport), 0);
    assert_true(exists("gz.xlsx"));
}

static void test_bad_traces(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"notjson.json", "hello"},
        {"trunc.json", "{\"traceEvents\":[{\"ph\":\"X\""},
        {"noevents.json", "{\"schemaVersion\":1}"},
        {"notobj.json", "{\"traceEvents\":[[1]]}"},
        {"nogpu.json", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, bad[i][0]);
        tt_write_file(p, bad[i][1], strlen(bad[i][1]));
        assert_int_equal(run("'%s' %s -o bad.xlsx --output_csvs_dir badcsv 2> err.txt", tlreport, bad[i][0]), 1);
        const char *e = slurp("err.txt");
        assert_non_null(strstr(e, bad[i][0]));
        assert_int_equal(strncmp(e, "tlreport: ", 10), 0);
        assert_non_null(strchr(e, '\n'));
        assert_null(strchr(strchr(e, '\n') + 1, '\n')); /* one line */
        assert_false(exists("bad.xlsx"));
        assert_false(exists("badcsv"));
    }
    assert_int_equal(run("gzip -c run.pt.trace.json | head -c 100 > cut.gz && '%s' cut.gz -o bad.xlsx 2> err.txt",
                         tlreport), 1);
    assert_non_null(strstr(slurp("err.txt"), "truncated gzip"));
    assert_false(exists("bad.xlsx"));
}

static void test_usage(void **state)
{
    (void)state;
    assert_int_equal(run("'%s' > /dev/null 2>&1", tlreport), 2);
    assert_int_equal(run("'%s' a.json b.json > /dev/null 2>&1", tlreport), 2);
    assert_int_equal(run("'%s' run.pt.trace.json --bogus > /dev/null 2>&1", tlreport), 2);
    assert_int_equal(run("'%s' run.pt.trace.json -o > /dev/null 2>&1", tlreport), 2);
    assert_int_equal(run("'%s' run.pt.trace.json -o run.pt.trace.json > /dev/null 2>&1", tlreport), 2);
    assert_int_equal(run("'%s' --help > help.txt", tlreport), 0);
    assert_non_null(strstr(slurp("help.txt"), "usage: tlreport TRACE"));
    assert_int_equal(run("'%s' --version > v.txt", tlreport), 0);
    assert_int_equal(strncmp(slurp("v.txt"), "tlreport ", 9), 0);
}

/* tlcompare: a trace wherever a report goes, mixed with a CSV report */
static void test_tlcompare_takes_traces(void **state)
{
    (void)state;
    assert_int_equal(run("'%s' run.pt.trace.json -q --output_csvs_dir rep", tlreport), 0);
    assert_int_equal(run("'%s' run.pt.trace.json rep --names t r -q -o cmp.xlsx --output_csvs_dir cmp", tlcompare), 0);
    assert_true(exists("cmp/ops_summary.csv"));
    const char *o = slurp("cmp/ops_summary.csv");
    assert_non_null(strstr(o, "aten::mm,"));
    assert_int_equal(run("'%s' nogpu.json rep --names t r -q -o cmp2.xlsx 2> err.txt", tlcompare), 1);
    assert_non_null(strstr(slurp("err.txt"), "nogpu.json"));
    assert_false(exists("cmp2.xlsx"));
}

int main(void)
{
    const char *c = getenv("TLCOMPARE");
    if (!c) {
        fprintf(stderr, "test_tlreport: set TLCOMPARE to the tlcompare binary (make unit-test does)\n");
        return 1;
    }
    snprintf(tlcompare, sizeof tlcompare, "%s", c);
    snprintf(tlreport, sizeof tlreport, "%s", c);
    char *slash = strrchr(tlreport, '/');
    snprintf(slash ? slash + 1 : tlreport, sizeof tlreport - (size_t)(slash ? slash + 1 - tlreport : 0), "tlreport");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_bad_traces),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_tlcompare_takes_traces),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
