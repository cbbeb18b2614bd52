/*
 * test_drop_in.c - what a user switching from TraceLens meets first, from the command
 * line: tags of an input given twice, inputs that are no report, nested and impossible
 * outputs, argparse's abbreviated options and the generator's flags (tlreport), the
 * folded Excel warning, and the Makefile's set-up lines.  The inputs are made by the
 * project's generators (build/tools/genreport, build/tools/gentrace, next to $TLCOMPARE)
 * or written here.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tlcompare;
static char bindir[1024], top[1024];

typedef struct fx {
    char *dir;
} fx;

static int sys_in(fx *f, const char *cmd)
{
    char c[16384];
    snprintf(c, sizeof c, "cd '%s' && %s", f->dir, cmd);
    int ws = system(c);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    *state = f;
    char c[12000];
    snprintf(c, sizeof c,
             "'%s/tools/genreport' --example baseline --csv base --xlsx base.xlsx >/dev/null && "
             "'%s/tools/genreport' --example candidate --csv cand >/dev/null && "
             "'%s/tools/gentrace' --layers 1 -o t1.json.gz && '%s/tools/gentrace' --layers 1 --seed 2 -o t2.json.gz",
             bindir, bindir, bindir, bindir);
    assert_int_equal(sys_in(f, c), 0);
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

/* tlcompare (or, with `prog` "tlreport", tlreport) with `args`; stdout to out.txt, stderr
 * to err.txt.  Returns the exit status. */
static int run_prog(fx *f, const char *prog, const char *args)
{
    char c[12000];
    snprintf(c, sizeof c, "'%s/%s' %s >out.txt 2>err.txt", bindir, prog, args);
    return sys_in(f, c);
}

static int run(fx *f, const char *args) { return run_prog(f, "tlcompare", args); }

static char *slurp(fx *f, const char *name) { return tt_slurp_in(f->dir, name); }

static void assert_err_has(fx *f, const char *want)
{
    char *e = slurp(f, "err.txt");
    assert_non_null(e);
    if (!strstr(e, want))
        print_error("stderr:\n%s\nwant: %s\n", e, want);
    assert_non_null(strstr(e, want));
    free(e);
}

static int exists(fx *f, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    return stat(p, &st) == 0;
}

static void write_in(fx *f, const char *name, const char *text, size_t n)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    tt_write_file(p, text, n);
}

/* ---- tags ---------------------------------------------------------------------------- */

static void test_same_input_twice_is_tagged_2(void **state)
{
    fx *f = *state;
    /* every kind of input: a CSV directory, a workbook, a trace */
    assert_int_equal(run(f, "base base -q -o a.xlsx --output_csvs_dir a_csv"), 0);
    char *s = slurp(f, "a_csv/ops_summary.csv");
    assert_non_null(strstr(s, "base::Count") );
    assert_non_null(strstr(s, "base_2::Count"));
    free(s);
    assert_int_equal(run(f, "base base -o a.xlsx"), 0);
    assert_err_has(f, "warning: reports 1 and 2 are the same input, tagged 'base'; report 2 is tagged 'base_2'");
    assert_int_equal(run(f, "base.xlsx base.xlsx -o b.xlsx"), 0);
    assert_err_has(f, "report 2 is tagged 'base_2'");
    assert_int_equal(run(f, "t1.json.gz t1.json.gz -o c.xlsx"), 0);
    assert_err_has(f, "report 2 is tagged 't1_2'");
    /* three times: _2, _3 */
    assert_int_equal(run(f, "base base base -o d.xlsx"), 0);
    assert_err_has(f, "report 3 is tagged 'base_3'");
}

/* A --names tag given to several reports makes them runs of one side; one tag on every
 * report leaves nothing to compare, for every input kind. */
static void test_repeated_names_tag_is_an_error(void **state)
{
    fx *f = *state;
    static const char *const inputs[] = {"base cand", "base.xlsx cand"};
    for (size_t i = 0; i < 2; i++) {
        char a[256];
        snprintf(a, sizeof a, "%s --names x x -o e.xlsx", inputs[i]);
        assert_int_equal(run(f, a), 2);
        assert_err_has(f, "tlcompare: every report has the tag 'x': the runs of one side leave nothing to compare");
        assert_false(exists(f, "e.xlsx"));
    }
}

/* ---- inputs that are no report ------------------------------------------------------- */

static void test_inputs_that_are_not_reports(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "base/ops_summary.csv cand -o x.xlsx"), 1);
    assert_err_has(f, "base/ops_summary.csv: a single CSV file (one sheet); a CSV report is the directory of its "
                      "<sheet>.csv files: pass its directory ('base/')");
    write_in(f, "layers.json", "[12, 24]\n", 9);
    assert_int_equal(run(f, "layers.json cand -o x.xlsx"), 1);
    /* a .json file is read as a trace, and the trace reader says why it is none */
    assert_err_has(f, "layers.json: not a trace: the JSON text does not start with an object");
    write_in(f, "notes.txt", "baseline run on node 7\n", 23);
    assert_int_equal(run(f, "notes.txt cand -o x.xlsx"), 1);
    assert_err_has(f, "notes.txt: a text file, not a report; a report is a TraceLens workbook (.xlsx)");
    write_in(f, "plot.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    assert_int_equal(run(f, "plot.png cand -o x.xlsx"), 1);
    assert_err_has(f, "plot.png: a PNG image; a report is");
    assert_false(exists(f, "x.xlsx"));
}

/* ---- outputs ------------------------------------------------------------------------- */

static void test_outputs(void **state)
{
    fx *f = *state;
    /* nested paths are made, as TraceLens makes them */
    assert_int_equal(run(f, "t1.json.gz t2.json.gz -q -o n1/n2/c.xlsx --output_csvs_dir m1/m2/m3 "
                            "--tracediff-dir d1/d2"), 0);
    assert_true(exists(f, "n1/n2/c.xlsx"));
    assert_true(exists(f, "m1/m2/m3/ops_summary.csv"));
    assert_true(exists(f, "d1/d2/lca_summary.csv"));
    /* a run that fails once its outputs are prepared leaves no directory it made: a
     * baseline without the group named */
    mkdir(strcat(strcpy((char[4096]){0}, f->dir), "/onlyops"), 0755);
    write_in(f, "onlyops/ops_summary.csv", "name,total_direct_kernel_time_ms,Count\naten::mm,1.0,3\n", 51);
    assert_int_equal(run(f, "onlyops base -q -o p1/p2/c.xlsx --output_csvs_dir q1/q2 --sheets gpu_timeline"), 1);
    assert_err_has(f, "gpu_timeline");
    assert_false(exists(f, "p1"));
    assert_false(exists(f, "q1"));
    /* -o is the workbook */
    assert_int_equal(run(f, "base cand -o out.csv"), 2);
    assert_err_has(f, "-o names the workbook (.xlsx), not a CSV file: for CSVs give --output_csvs_dir DIR");
    assert_false(exists(f, "out.csv"));
    /* a full standard output is said */
    char c[8192];
    snprintf(c, sizeof c, "'%s/tlcompare' base cand -o full.xlsx >/dev/full 2>err.txt", bindir);
    assert_int_equal(sys_in(f, c), 1);
    assert_err_has(f, "tlcompare: cannot write the summary to standard output: No space left on device");
}

static void test_long_error_keeps_its_reason(void **state)
{
    fx *f = *state;
    char a[4096], name[2100];
    memset(name, 'd', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    for (size_t i = 200; i < sizeof name - 1; i += 201)
        name[i] = '/'; /* components under NAME_MAX */
    snprintf(a, sizeof a, "'%s.xlsx' cand -o y.xlsx", name);
    assert_int_equal(run(f, a), 1);
    char *e = slurp(f, "err.txt");
    assert_non_null(strstr(e, ": No such file or directory\n"));
    assert_null(strchr(e, '\n')[1] ? strchr(e, '\n') + 1 : NULL);
    free(e);
}

/* ---- options ------------------------------------------------------------------------- */

static void test_abbreviated_options(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "base cand -q --outp=z.xlsx --output_csvs z_csv --nam b c"), 2); /* --outp: 3 options */
    assert_err_has(f, "tlcompare: ambiguous option: --outp could match --output, --output_csvs_dir, --output-csvs-dir");
    assert_int_equal(run(f, "base cand -q -o z.xlsx --output_csvs z_csv --nam b c --sh ops_summary"), 0);
    char *s = slurp(f, "z_csv/ops_summary.csv");
    assert_non_null(s);
    assert_non_null(strstr(s, "c::Count"));
    free(s);
    assert_false(exists(f, "z_csv/gpu_timeline.csv"));
    assert_int_equal(run(f, "base cand --bogus"), 2);
    assert_err_has(f, "unknown option '--bogus'");
}

static void test_tlreport_flags(void **state)
{
    fx *f = *state;
    /* --include_unlinked_kernels: the kernels from before the window count in gpu_timeline */
    assert_int_equal(run_prog(f, "tlreport", "t1.json.gz -q --output_csvs r1"), 0);
    assert_int_equal(run_prog(f, "tlreport", "t1.json.gz -q --output_csvs r2 --include_unlinked"), 0);
    char *a = slurp(f, "r1/gpu_timeline.csv"), *b = slurp(f, "r2/gpu_timeline.csv");
    char *ba = strstr(a, "\nbusy_time,"), *bb = strstr(b, "\nbusy_time,");
    assert_non_null(ba);
    assert_non_null(bb);
    double busy_a = strtod(ba + 11, NULL), busy_b = strtod(bb + 11, NULL);
    /* gentrace's 24 pre-window kernels: 30-66 µs each */
    assert_true(busy_b - busy_a > 24 * 0.024 && busy_b - busy_a < 24 * 0.08);
    free(a);
    free(b);
    /* --topk_ops: the first rows of ops_unique_args */
    assert_int_equal(run_prog(f, "tlreport", "--profile_json_path t1.json.gz -q --output_csvs_dir r3 --topk_ops 3"), 0);
    char *u = slurp(f, "r3/ops_unique_args.csv"), *full = slurp(f, "r1/ops_unique_args.csv");
    size_t lines = 0;
    for (char *p = u; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
    assert_memory_equal(u, full, strlen(u)); /* the same first rows */
    free(u);
    free(full);
    /* the generator's other flags are accepted, and said to change nothing */
    assert_int_equal(run_prog(f, "tlreport", "t1.json.gz --output_csvs_dir r4 --disable_coll_analysis "
                                             "--short_kernel_study --short_kernel_threshold_us 5"), 0);
    assert_err_has(f, "tlreport: warning: --short_kernel_study is accepted for TraceLens compatibility and "
                      "ignored: no short-kernel sheets are made");
    /* --disable_coll_analysis is the generator's default already: nothing to say */
    char *e = slurp(f, "err.txt");
    assert_null(strstr(e, "--disable_coll_analysis"));
    free(e);
    assert_err_has(f, "tlreport: warning: --short_kernel_threshold_us is accepted for TraceLens compatibility");
    assert_int_equal(run_prog(f, "tlreport", "t1.json.gz --out x.xlsx"), 2);
    assert_err_has(f, "tlreport: ambiguous option: --out could match --output, --output_xlsx_path, --output_csvs_dir");
}

/* ---- the folded Excel warning ---------------------------------------------------------- */

static void test_excel_cut_is_one_line_after_the_answer(void **state)
{
    fx *f = *state;
    /* two reports whose op name is 40,000 characters long */
    size_t n = 40000;
    char *name = malloc(n + 1);
    memset(name, 'x', n);
    name[n] = '\0';
    for (int r = 0; r < 2; r++) {
        char d[64], p[128];
        snprintf(d, sizeof d, "%s/long%d", f->dir, r);
        mkdir(d, 0755);
        snprintf(p, sizeof p, "%s/ops_summary.csv", d);
        FILE *fp = fopen(p, "w");
        fprintf(fp, "name,total_direct_kernel_time_ms,Count\n%s,%d.0,2\naten::mm,1.0,3\n", name, r + 1);
        fclose(fp);
    }
    free(name);
    char c[8192];
    snprintf(c, sizeof c, "'%s/tlcompare' long0 long1 -o l.xlsx >all.txt 2>&1", bindir);
    assert_int_equal(sys_in(f, c), 0);
    char *all = slurp(f, "all.txt");
    char *w = strstr(all, " held text longer than Excel's 32767 characters, cut in the workbook (the CSV keeps it "
                             "whole); the first: sheet '");
    assert_non_null(w);
    assert_null(strstr(w + 20, "longer than Excel")); /* one line */
    char *wrote = strstr(all, "\nWrote l.xlsx");
    assert_non_null(wrote);
    assert_true(wrote < w); /* after the answer */
    free(all);
}

/* ---- the summary's small things ---------------------------------------------------------- */

static void test_summary_small_things(void **state)
{
    fx *f = *state;
    /* a report against itself: no changes, said once */
    assert_int_equal(run(f, "base base -o s1.xlsx"), 0);
    char *o = slurp(f, "out.txt");
    assert_non_null(strstr(o, "\n  no changes: every op takes the same time in both\n"));
    free(o);
    /* groups the summary does not read: no empty block */
    assert_int_equal(run(f, "base cand -o s2.xlsx --sheets roofline"), 0);
    o = slurp(f, "out.txt");
    assert_null(strstr(o, "base -> cand"));
    free(o);
    /* no percentage over a baseline within noise of zero */
    static const char *const tl[2] = {"type,time ms,percent\nbusy_time,10.0,100.0\nidle_time,1e-09,0.0\n"
                                      "total_time,10.0,100.0\n",
                                      "type,time ms,percent\nbusy_time,10.0,14.5\nidle_time,59.15,85.5\n"
                                      "total_time,69.15,100.0\n"};
    for (int r = 0; r < 2; r++) {
        char d[64];
        snprintf(d, sizeof d, "idle%d", r);
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", f->dir, d);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/idle%d/gpu_timeline.csv", f->dir, r);
        tt_write_file(p, tl[r], strlen(tl[r]));
    }
    assert_int_equal(run(f, "idle0 idle1 -o s3.xlsx"), 0);
    o = slurp(f, "out.txt");
    char *idle = strstr(o, "\n  idle_time ");
    assert_non_null(idle);
    *strchr(idle + 1, '\n') = '\0';
    assert_non_null(strstr(idle, "+59.150         -"));
    assert_null(strstr(idle, "%"));
    free(o);
    /* a tag longer than the column: the table stays aligned */
    assert_int_equal(run(f, "idle0 idle1 --names a_rather_long_baseline_tag b -o s4.xlsx"), 0);
    o = slurp(f, "out.txt");
    char *h = strstr(o, "  GPU time (ms)"), *r1 = strstr(o, "\n  busy_time");
    assert_non_null(h);
    assert_non_null(r1);
    size_t hl = (size_t)(strchr(h, '\n') - h), rl = (size_t)(strchr(r1 + 1, '\n') - (r1 + 1));
    assert_int_equal(hl, rl);
    free(o);
}

/* ---- progress --------------------------------------------------------------------------- */

/* While the traces load, the progress line (stderr a terminal: script(1) gives one) shows
 * from 1 s on (--timings says how long the reading took: under a second, nothing). */
static void test_progress_while_traces_load(void **state)
{
    fx *f = *state;
    char c[12000];
    snprintf(c, sizeof c, "'%s/tools/gentrace' --size 40M --level 1 -o big.json.gz", bindir);
    assert_int_equal(sys_in(f, c), 0);
    snprintf(c, sizeof c, "script -qec \"'%s/tlcompare' big.json.gz t1.json.gz -o big.xlsx --no-summary --timings\" /dev/null "
                          ">tty.txt 2>&1 </dev/null", bindir);
    assert_int_equal(sys_in(f, c), 0);
    char *o = slurp(f, "tty.txt");
    assert_non_null(o);
    char *t = strstr(o, "timings: read ");
    assert_non_null(t);
    double read = strtod(t + 14, NULL);
    if (read >= 1.2)
        assert_non_null(strstr(o, "s] reading the traces"));
    else if (read < 0.9)
        assert_null(strstr(o, "reading the traces"));
    free(o);
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void test_make_names_missing_packages(void **state)
{
    fx *f = *state;
    /* a dpkg-query that knows of no package */
    assert_int_equal(sys_in(f, "mkdir -p stub && printf '#!/bin/sh\\nexit 1\\n' > stub/dpkg-query && "
                               "chmod +x stub/dpkg-query"), 0);
    char c[12000];
    /* (a make of its own: not the jobserver of a `make -j` running the tests) */
    snprintf(c, sizeof c, "PATH=\"$PWD/stub:$PATH\" env -u MAKEFLAGS -u MFLAGS make --no-print-directory -C '%s' -n all "
                          ">make.out 2>make.err", top);
    assert_int_equal(sys_in(f, c), 2);
    char *e = slurp(f, "make.err");
    assert_non_null(strstr(e, "missing Debian packages: pkg-config libzip-dev libexpat1-dev zlib1g-dev libisal-dev; "
                              "run 'make deps' (as root) to install them.  Stop.\n"));
    assert_null(strchr(e, '\n')[1] ? strchr(e, '\n') + 1 : NULL);
    free(e);
    /* the suite's absence says what the suite is */
    snprintf(c, sizeof c, "make --no-print-directory -C '%s' -s conformance BUILD='%s' CONFORMANCE=/nonexistent "
                          ">make.out 2>make.err", top, bindir);
    assert_int_equal(sys_in(f, c), 0);
    char *o = slurp(f, "make.out");
    assert_non_null(strstr(o, "conformance suite not found at /nonexistent: skipped (the shared contract's "
                              "executable cases: TraceLens' own outputs on real reports and traces"));
    free(o);
    /* both TraceLens names are installed */
    snprintf(c, sizeof c, "make --no-print-directory -C '%s' -s install BUILD='%s' DESTDIR='%s/inst' PREFIX=/usr "
                          ">make.out 2>make.err", top, bindir, f->dir);
    assert_int_equal(sys_in(f, c), 0);
    char p[8192];
    snprintf(p, sizeof p, "%s/inst/usr/bin/TraceLens_generate_perf_report_pytorch", f->dir);
    char link[256];
    ssize_t k = readlink(p, link, sizeof link - 1);
    assert_true(k > 0);
    link[k] = '\0';
    assert_string_equal(link, "tlreport");
    snprintf(p, sizeof p, "%s/inst/usr/bin/TraceLens_compare_perf_reports_pytorch", f->dir);
    assert_int_equal(access(p, X_OK), 0);
}

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    const char *t = getenv("TL_TOP");
    if (!tlcompare || !t) {
        fprintf(stderr, "test_drop_in: set TLCOMPARE and TL_TOP (make unit-test does)\n");
        return 1;
    }
    const char *slash = strrchr(tlcompare, '/');
    snprintf(bindir, sizeof bindir, "%.*s", slash ? (int)(slash - tlcompare) : 1, slash ? tlcompare : ".");
    snprintf(top, sizeof top, "%s", t);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_input_twice_is_tagged_2),
        cmocka_unit_test(test_repeated_names_tag_is_an_error),
        cmocka_unit_test(test_inputs_that_are_not_reports),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_long_error_keeps_its_reason),
        cmocka_unit_test(test_abbreviated_options),
        cmocka_unit_test(test_tlreport_flags),
        cmocka_unit_test(test_excel_cut_is_one_line_after_the_answer),
        cmocka_unit_test(test_summary_small_things),
        cmocka_unit_test(test_progress_while_traces_load),
        cmocka_unit_test(test_make_names_missing_packages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
