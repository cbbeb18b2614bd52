/*
 * test_diff_cli.c - the morphology-aware diff from the command line: two small traces
 * written here, tlcompare ($TLCOMPARE) run on them, its outputs read back.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>

static const char *tlcompare;

/* A small trace: aten::_convolution over the vendor's convolution with `nconv` launches,
 * then an aten::add_; each launch linked to its kernel by an ac2g flow. */
static char *trace_text(int rocm, int nconv, double kdur)
{
    const char *rt = rocm ? "hipLaunchKernel" : "cudaLaunchKernel";
    const char *conv = rocm ? "aten::miopen_convolution" : "aten::cudnn_convolution";
    int gpid = rocm ? 2 : 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f, "{\"traceEvents\": [\n"
               "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::_convolution\", \"pid\": 1, \"tid\": 1, "
               "\"ts\": 0, \"dur\": 100, \"args\": {\"Input Dims\": [[1, 3, 8, 8], [4, 3, 3, 3]]}},\n"
               "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 50},\n",
            conv);
    for (int i = 0; i <= nconv; i++) {
        int c = 10 + i;
        double ts = i < nconv ? 2 + 10 * i : 61;
        if (i == nconv)
            fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_\", \"pid\": 1, \"tid\": 1, "
                       "\"ts\": 60, \"dur\": 10},\n");
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": %g, "
                "\"dur\": 2, \"args\": {\"correlation\": %d}},\n"
                "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %d, \"pid\": 1, \"tid\": 1, \"ts\": %g},\n"
                "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %d, \"pid\": %d, \"tid\": 7, \"ts\": %d, "
                "\"bp\": \"e\"},\n"
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d_%s\", \"pid\": %d, \"tid\": 7, \"ts\": %d, "
                "\"dur\": %g, \"args\": {\"correlation\": %d, \"stream\": 7}}%s\n",
                rt, ts, c, c, ts, c, gpid, 1000 + 100 * i, i, i == nconv ? "add" : rocm ? "rocm" : "cuda", gpid,
                1000 + 100 * i, kdur, c, i == nconv ? "" : ",");
    }
    fprintf(f, "]}\n");
    fclose(f);
    return buf;
}

typedef struct fx {
    char *dir;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    char p[4096];
    char *a = trace_text(1, 3, 30), *b = trace_text(0, 2, 40);
    snprintf(p, sizeof p, "%s/mi300.json", f->dir);
    tt_write_file(p, a, strlen(a));
    snprintf(p, sizeof p, "%s/h100.json", f->dir);
    tt_write_file(p, b, strlen(b));
    snprintf(p, sizeof p, "%s/broken.json", f->dir);
    tt_write_file(p, b, strlen(b) / 2); /* cut in the middle */
    free(a);
    free(b);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    tt_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Run tlcompare with `args` in the fixture's directory; returns its exit status. */
static int run(fx *f, const char *args)
{ return tt_run_in(f->dir, tlcompare, args); }

static char *slurp(fx *f, const char *name) { return tt_slurp_in(f->dir, name); }

static int exists(fx *f, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    return stat(p, &st) == 0;
}

static void test_files(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "mi300.json h100.json -o c.xlsx --output_csvs_dir csv --tracediff-dir td "
                            "--summary-md s.md --summary-json s.json"), 0);
    static const char *const files[] = {"diff_stats.csv", "diff_stats_unique_args_summary.csv", "lca_summary.csv",
                                        "merged_tree_output.txt", "cpu_op_map.json", "cpu_op_map_trace1.json",
                                        "cpu_op_map_trace2.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[256];
        snprintf(p, sizeof p, "td/%s", files[i]);
        assert_true(exists(f, p));
    }
    assert_true(exists(f, "csv/lca_summary.csv"));
    assert_true(exists(f, "csv/diff_stats.csv"));
    assert_true(exists(f, "c.xlsx"));
    /* [miopen] vs [cudnn] pair by position; the launches below differ by name */
    char *tree = slurp(f, "td/merged_tree_output.txt");
    assert_string_equal(tree, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::_convolution\n"
                              "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 combined: aten::miopen_convolution | aten::cudnn_convolution\n"
                              "    \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
                              "    \xe2\x94\x82   \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: k0_rocm\n"
                              "    \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
                              "    \xe2\x94\x82   \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: k1_rocm\n"
                              "    \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
                              "    \xe2\x94\x82   \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: k2_rocm\n"
                              "    \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
                              "    \xe2\x94\x82   \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: k0_cuda\n"
                              "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
                              "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: k1_cuda\n"
                              "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::add_\n"
                              "        \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
                              "        \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: k3_add\n"
                              "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: cudaLaunchKernel\n"
                              "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: k2_add\n");
    free(tree);
    /* diff_stats: 3 + 2 convolution kernels under LCA 1, then add_'s (LCA 10) */
    char *ds = slurp(f, "td/diff_stats.csv");
    assert_non_null(strstr(ds, "k0_rocm,aten::miopen_convolution,1,trace1,,,,,30.0,90.0,"
                               "aten::miopen_convolution | aten::cudnn_convolution,1,"));
    assert_non_null(strstr(ds, "k1_cuda,aten::cudnn_convolution,1,trace2,,,,,40.0,80.0,"));
    free(ds);
    /* the CSV directory's copies of the two sheets are the same text, byte for byte */
    static const char *const same[] = {"diff_stats.csv", "lca_summary.csv"};
    for (size_t i = 0; i < 2; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "td/%s", same[i]);
        snprintf(b, sizeof b, "csv/%s", same[i]);
        char *ta = slurp(f, a), *tb = slurp(f, b);
        assert_true(strlen(ta) > 100);
        assert_string_equal(ta, tb);
        free(ta);
        free(tb);
    }
    /* the summary: one line for the convolution, read across vendors */
    char *out = slurp(f, "out.txt");
    assert_non_null(strstr(out, "\nmi300 -> h100 by lowest common op (2 aligned, 2 distinct: 1 slower, 1 faster)\n"
                                "  GPU time under these ops: mi300 0.120 of 0.120 ms (100.0%), h100 0.120 of 0.120 ms "
                                "(100.0%)\n"));
    assert_non_null(strstr(out, "    -0.010 ms    -11.1%          aten::miopen_convolution | aten::cudnn_convolution      "
                                "     0.090 -> 0.080, 3 -> 2 kernels\n"));
    free(out);
    char *md = slurp(f, "s.md");
    assert_non_null(strstr(md, "**`mi300` -> `h100` by lowest common op**"));
    free(md);
    char *js = slurp(f, "s.json");
    assert_non_null(strstr(js, "\"lca\": {\"baseline\": \"mi300\", \"variant\": \"h100\", \"count\": 2"));
    free(js);
}

static struct stat stat_of(fx *f, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    assert_int_equal(stat(p, &st), 0);
    return st;
}

/* The CSV directory's diff_stats and lca_summary are the TraceDiff files under a second
 * name (their bytes written once); one that replaces a file of another mode takes that
 * mode alone, as a file of its own, and the other keeps its own. */
static void test_files_written_once(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "mi300.json h100.json -q --output_csvs_dir c1 --tracediff-dir t1"), 0);
    static const char *const shared[] = {"diff_stats.csv", "lca_summary.csv"};
    for (size_t i = 0; i < 2; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "t1/%s", shared[i]);
        snprintf(b, sizeof b, "c1/%s", shared[i]);
        assert_true(stat_of(f, a).st_ino == stat_of(f, b).st_ino);
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/c2", f->dir);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/c2/diff_stats.csv", f->dir);
    tt_write_file(p, "old\n", 4);
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(run(f, "mi300.json h100.json -q --output_csvs_dir c2 --tracediff-dir t2"), 0);
    struct stat kept = stat_of(f, "c2/diff_stats.csv"), own = stat_of(f, "t2/diff_stats.csv");
    struct stat fresh = stat_of(f, "t2/merged_tree_output.txt");
    assert_int_equal(kept.st_mode & 07777, 0600);
    assert_int_equal(own.st_mode & 07777, fresh.st_mode & 07777);
    assert_true((fresh.st_mode & 07777) != 0600);
    assert_true(kept.st_ino != own.st_ino);
    char *ta = slurp(f, "t2/diff_stats.csv"), *tb = slurp(f, "c2/diff_stats.csv");
    assert_true(strlen(ta) > 100);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    /* the other, new in both, is still one file */
    assert_true(stat_of(f, "t2/lca_summary.csv").st_ino == stat_of(f, "c2/lca_summary.csv").st_ino);
}

static void test_gate(void **state)
{
    fx *f = *state;
    /* add_: 30 us -> 40 us is +33%; 0.01 ms minimum so that it counts */
    assert_int_equal(run(f, "mi300.json h100.json -q -o g.xlsx --fail-on-regression 20 --min-time-ms 0.01"), 3);
    char *err = slurp(f, "err.txt");
    assert_non_null(strstr(err, "regression: h100 lowest common op aten::add_: 0.030 ms -> 0.040 ms (+33.3%"));
    free(err);
    assert_int_equal(run(f, "mi300.json h100.json -q -o g.xlsx --fail-on-regression 50 --min-time-ms 0.01"), 0);
}

static void test_nothing_half_written(void **state)
{
    fx *f = *state;
    /* an earlier run's directory stays as it was when this run fails */
    assert_int_equal(system("true"), 0);
    char p[4096];
    snprintf(p, sizeof p, "%s/keep", f->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/keep/diff_stats.csv", f->dir);
    tt_write_file(p, "old\n", 4);
    assert_int_equal(run(f, "mi300.json broken.json -q -o k.xlsx --tracediff-dir keep"), 1);
    char *old = slurp(f, "keep/diff_stats.csv");
    assert_string_equal(old, "old\n");
    free(old);
    assert_false(exists(f, "k.xlsx"));
    char *err = slurp(f, "err.txt");
    assert_non_null(strstr(err, "broken.json"));
    assert_null(strchr(strchr(err, '\n') + 1, '\n')); /* one line */
    free(err);
    /* the directory is not for reports */
    assert_int_equal(run(f, "mi300.json csv -q -o k.xlsx --tracediff-dir td2"), 2);
    assert_false(exists(f, "td2"));
    assert_false(exists(f, "k.xlsx"));
    /* and a successful run replaces the files it writes */
    assert_int_equal(run(f, "mi300.json h100.json -q -o k.xlsx --tracediff-dir keep"), 0);
    old = slurp(f, "keep/diff_stats.csv");
    assert_non_null(strstr(old, "name,cpu_op_name,cpu_op_uid,source,"));
    free(old);
}

static void test_identical(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "mi300.json mi300.json -o i.xlsx --tracediff-dir same"), 0);
    char *ds = slurp(f, "same/diff_stats.csv");
    assert_null(strstr(ds, "source"));
    free(ds);
    char *err = slurp(f, "err.txt");
    assert_non_null(strstr(err, "report 2 is tagged 'mi300_2'"));
    free(err);
}

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    if (!tlcompare) {
        fprintf(stderr, "test_diff_cli: set TLCOMPARE to the tlcompare binary (make unit-test does)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_files_written_once),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_nothing_half_written),
        cmocka_unit_test(test_identical),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
