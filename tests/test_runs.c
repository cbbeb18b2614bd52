/*
 * test_runs.c - comparing distributed runs (run/dist.h) on rank sets written by
 * tools/gentrace, whose answers are known by construction: an 8% compute slowdown planted
 * on rank 5 only is reported on rank 5 and not job-wide; a 20% bandwidth drop of one
 * all-reduce size on every rank is the top collective change, bus bandwidth within 1%; a
 * straggler moved from rank 2 to rank 6 is reported as moved; two runs of one configuration
 * with seeded per-rank jitter report no significant change in at least 92 of 100 seeds.
 * Also: the same outputs whatever -j, a run against a single trace refused, runs of
 * different world sizes compared unpaired.
 */
#include "testutil.h"

#include "run/compare.h"
#include "run/dist.h"
#include "write/xlsx_write.h"

#include <math.h>

static char tool_dir[2048]; /* where tlcompare and tools/gentrace are */

/* Write an N-rank run into dir/name: every rank `common` options, rank `special` also
 * `extra` (special < 0: none). */
static void gen_run(const char *dir, const char *name, int n, const char *common, int special, const char *extra)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", dir, name);
    assert_int_equal(system(cmd), 0);
    for (int r = 0; r < n; r++) {
        snprintf(cmd, sizeof cmd, "'%s/tools/gentrace' --world %d --rank %d %s %s -o '%s/%s/rank%d_trace.json'",
                 tool_dir, n, r, common, r == special ? extra : "", dir, name, r);
        assert_int_equal(system(cmd), 0);
    }
}

/* The options comparing dir/a with dir/b (results kept in memory); the paths hold until
 * the next call. */
static void opts_for(tl_compare_opts *o, const char *dir, const char *a, const char *b)
{
    static char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    static const char *in[2];
    in[0] = pa, in[1] = pb;
    tl_compare_opts_init(o);
    o->inputs = in;
    o->ninputs = 2;
}

/* Compare dir/a with dir/b, `jobs` workers. */
static int compare(tl_comparison *c, const char *dir, const char *a, const char *b, int jobs)
{
    tl_compare_opts o;
    opts_for(&o, dir, a, b);
    o.jobs = jobs;
    return tl_compare_run(&o, c);
}

static const tl_table *sheet(const tl_comparison *c, const char *name)
{
    for (size_t i = 0; i < c->results->n; i++)
        if (strcmp(c->results->items[i].name, name) == 0)
            return c->results->items[i].table;
    fail_msg("no sheet %s", name);
    return NULL;
}

static double num(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    if (c < 0)
        fail_msg("no column %s", col);
    return tl_column_number_at(&t->cols[c], row);
}

static int has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

static void test_rank5_slowdown(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 8, "--layers 4", -1, "");
    gen_run(dir, "b", 8, "--layers 4", 5, "--slow '*=8'");
    tl_comparison c;
    assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_OK);
    const char *json = c.summary->lead_json;
    assert_true(has(json, "\"ranks_moved_alone\": [5]"));
    assert_false(has(json, "job-wide"));
    assert_true(has(c.summary->lead_text, "rank 5 only: busy time"));
    /* rank 5's busy time up by most of 8% (the collectives' time did not change), the
     * others' not at all */
    const tl_table *rk = sheet(&c, TL_DIST_SHEET_RANKS);
    assert_int_equal(rk->nrows, 8);
    for (size_t r = 0; r < 8; r++) {
        double pct = num(rk, "busy_time_ms__b_pct", r);
        if (r == 5)
            assert_true(pct > 6 && pct < 8.5);
        else
            assert_true(pct == 0);
    }
    /* the ops that moved are named with rank 5, and no op changed job-wide */
    const tl_table *ops = sheet(&c, TL_DIST_SHEET_RANK_OPS);
    assert_true(ops->nrows > 0);
    for (size_t r = 0; r < ops->nrows; r++)
        assert_true(num(ops, "rank", r) == 5);
    assert_true(has(c.summary->lead_text, "aten::mm moved on rank 5 only"));
    assert_int_equal(c.summary->variants[0].nregressions, 0);
    /* the gate judges the slowest rank's busy time (rank 5's: about +7%) */
    assert_int_equal(c.status, TL_RUN_OK);
    assert_true(has(c.summary->variants[0].basis, "rank-to-rank spread"));
    tl_comparison_free(&c);
    tt_rmrf(dir);
    free(dir);
}

static void test_busbw_drop(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    /* 13 layers: the last gradient bucket holds one layer, a size of its own */
    gen_run(dir, "a", 8, "--layers 13", -1, "");
    gen_run(dir, "b", 8, "--layers 13 --coll-slow 25", -1, "");
    tl_comparison c;
    assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_OK);
    const tl_table *co = sheet(&c, TL_DIST_SHEET_COLL);
    assert_int_equal(co->nrows, 2);
    size_t hit = 0, found = 0;
    for (size_t r = 0; r < co->nrows; r++) {
        double ratio = num(co, "b::bus bw (GB/s)_mean", r) / num(co, "a::bus bw (GB/s)_mean", r);
        if (fabs(ratio - 1) > 1e-9) {
            /* 25% longer is a 20% lower bandwidth */
            assert_true(fabs(ratio / 0.8 - 1) < 0.01);
            hit = r, found++;
        }
    }
    assert_int_equal(found, 1);
    char want[96];
    snprintf(want, sizeof want, "\"in_msg_nelems\": %lld", (long long)num(co, "In msg nelems", hit));
    assert_true(has(c.summary->lead_json, want));
    assert_true(has(c.summary->lead_text, "collective that changed most: allreduce"));
    tl_comparison_free(&c);
    /* the gate: a 20% drop fails at 10%, passes at 25% */
    for (int k = 0; k < 2; k++) {
        tl_compare_opts o;
        opts_for(&o, dir, "a", "b");
        o.fail_pct = k ? 25 : 10;
        assert_int_equal(tl_compare_run(&o, &c), k ? TL_RUN_OK : TL_RUN_REGRESSION);
        assert_true(has(c.summary->lead_text, "gate failed: this bus bandwidth dropped 20.0%") == !k);
        /* the reason among the gate's violations, and in the JSON */
        assert_true(has(c.summary->lead_violations, "b collective allreduce") == !k);
        assert_true(has(c.summary->lead_json, "(-20.0%, limit -10%)\"]") == !k);
        assert_true(has(c.summary->lead_json, "\"gate_violations\": []") == k);
        tl_comparison_free(&c);
    }
    /* the command line under -q: the violation on stderr, nothing on stdout */
    char prog[4200];
    snprintf(prog, sizeof prog, "%s/tlcompare", tool_dir);
    tt_run_want_in(dir, prog, "a b -q -o w.xlsx --fail-on-regression 10", 3);
    char *err = tt_slurp_in(dir, "err.txt"), *out = tt_slurp_in(dir, "out.txt");
    assert_true(has(err, "tlcompare: regression: b collective allreduce, group 0, BFloat16"));
    assert_true(has(err, "bus bw") && has(err, "(-20.0%, limit -10%)"));
    assert_string_equal(out, "");
    free(err);
    free(out);
    tt_rmrf(dir);
    free(dir);
}

/* The summary sheet opens with the runs' block: the answer as a table. */
static void test_summary_sheet_block(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 4, "--layers 13", -1, "");
    gen_run(dir, "b", 4, "--layers 13 --coll-slow 25", 1, "--slow '*=20'");
    tl_comparison c;
    static char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/a", dir);
    snprintf(pb, sizeof pb, "%s/b", dir);
    const char *in[2] = {pa, pb};
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.inputs = in;
    o.ninputs = 2;
    o.fail_pct = 5;
    assert_int_equal(tl_compare_run(&o, &c), TL_RUN_REGRESSION);
    tl_arena a;
    tl_arena_init(&a);
    tl_summary_sheet *sh = tl_summary_sheet_build(c.summary, &a);
    assert_true(sh->nblocks > 1);
    assert_string_equal(sh->blocks[0].title, "a -> b: the runs (4 vs 4 ranks)");
    const tl_table *t = sh->blocks[0].table;
    assert_string_equal(t->cols[1].name, "a");
    assert_string_equal(t->cols[2].name, "b");
    /* by row name: the slowest rank moved to rank 1, its busy time +20% or so, the planted
     * 20% bandwidth drop (the slower collectives add to the 20% slower ops), two gate lines */
    size_t gates = 0, seen = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *what = t->cols[0].cells[r].v.s;
        if (strcmp(what, "slowest rank") == 0)
            assert_true(num(t, "b", r) == 1), seen++;
        if (strcmp(what, "slowest rank's busy time (ms)") == 0)
            assert_true(num(t, "delta %", r) > 20 && num(t, "delta %", r) < 23), seen++;
        if (strcmp(what, "rank 1 busy time (ms)") == 0)
            seen++;
        if (strcmp(what, "bus bw of the collective that changed most (GB/s)") == 0)
            assert_true(fabs(num(t, "delta %", r) + 20) < 0.2), seen++;
        gates += strcmp(what, "gate failed") == 0;
    }
    assert_int_equal(seen, 4);
    assert_int_equal(gates, 2);
    /* the ops' blocks follow as before */
    assert_string_equal(sh->blocks[1].title, "a -> b: GPU time");
    tl_summary_sheet_free(sh);
    tl_arena_free(&a);
    tl_comparison_free(&c);
    tt_rmrf(dir);
    free(dir);
}

static void test_straggler_moved(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 8, "--layers 4", 2, "--arrive-late 2000");
    gen_run(dir, "b", 8, "--layers 4", 6, "--arrive-late 2000");
    tl_comparison c;
    assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_OK);
    assert_true(has(c.summary->lead_json, "\"straggler\": {\"baseline\": 2, \"variant\": 6, \"change\": \"moved\"}"));
    assert_true(has(c.summary->lead_text, "straggler moved: rank 2 -> rank 6"));
    /* side by side: rank 2 arrived last every time in a, rank 6 in b */
    const tl_table *st = sheet(&c, TL_DIST_SHEET_STRAGGLERS);
    for (size_t r = 0; r < st->nrows; r++) {
        long rank = (long)num(st, "rank", r);
        assert_true(num(st, "a::pct_arrived_last", r) == (rank == 2 ? 100 : 0));
        assert_true(num(st, "b::pct_arrived_last", r) == (rank == 6 ? 100 : 0));
    }
    tl_comparison_free(&c);
    tt_rmrf(dir);
    free(dir);
}

/* Two runs of one configuration, every rank's op times off by its own seeded factor (2%):
 * nothing significant in at least 92 of 100 seeds. */
static void test_jitter_null(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    int quiet = tl_quiet;
    tl_quiet = 1;
    int clean = 0;
    for (int s = 1; s <= 100; s++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/a' '%s/b'", dir, dir);
        assert_int_equal(system(cmd), 0);
        for (int side = 0; side < 2; side++) {
            snprintf(cmd, sizeof cmd, "mkdir -p '%s/%c'", dir, "ab"[side]);
            assert_int_equal(system(cmd), 0);
            for (int r = 0; r < 8; r++) {
                snprintf(cmd, sizeof cmd,
                         "'%s/tools/gentrace' --world 8 --rank %d --layers 2 --run-cv 2 --run-seed %d "
                         "-o '%s/%c/rank%d_trace.json'",
                         tool_dir, r, s * 1000 + side * 500 + r, dir, "ab"[side], r);
                assert_int_equal(system(cmd), 0);
            }
        }
        tl_comparison c;
        assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_OK);
        const char *j = c.summary->lead_json;
        const tl_variant_summary *v = &c.summary->variants[0];
        clean += has(j, "\"verdict\": \"within noise\"") && has(j, "\"ranks_moved_alone\": []") &&
                 has(j, "\"top_collective\": null") && has(j, "\"change\": \"none\"") && v->nregressions == 0 &&
                 v->nimprovements == 0;
        tl_comparison_free(&c);
    }
    tl_quiet = quiet;
    print_message("jitter: %d of 100 seeds without a significant change\n", clean);
    assert_true(clean >= 92);
    tt_rmrf(dir);
    free(dir);
}

/* The outputs do not depend on the number of workers. */
static void test_jobs_identical(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 4, "--layers 2", 1, "--arrive-late 500");
    gen_run(dir, "b", 4, "--layers 2 --coll-slow 10", 3, "--slow '*=5'");
    char args[1024], *out[2][2];
    for (int j = 0; j < 2; j++) {
        snprintf(args, sizeof args, "a b -j %d -q --output_csvs_dir csv%d --summary-json s%d.json -o w%d.xlsx", j ? 4 : 1,
                 j, j, j);
        char prog[4200];
        snprintf(prog, sizeof prog, "%s/tlcompare", tool_dir);
        tt_run_ok_in(dir, prog, args);
        char name[64];
        snprintf(name, sizeof name, "s%d.json", j);
        out[j][0] = tt_slurp_in(dir, name);
        snprintf(name, sizeof name, "csv%d/collectives.csv", j);
        out[j][1] = tt_slurp_in(dir, name);
    }
    for (int k = 0; k < 2; k++) {
        assert_non_null(out[0][k]);
        assert_string_equal(out[0][k], out[1][k]);
        free(out[0][k]);
        free(out[1][k]);
    }
    char cmd[8192];
    /* every sheet (the workbook carries its time of writing) */
    snprintf(cmd, sizeof cmd, "cd '%s' && diff -r csv0 csv1 >/dev/null", dir);
    assert_int_equal(system(cmd), 0);
    tt_rmrf(dir);
    free(dir);
}

static void test_run_vs_trace_and_sizes(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 4, "--layers 2", -1, "");
    gen_run(dir, "b", 8, "--layers 2", -1, "");
    tl_comparison c;
    /* a run against one rank's trace: refused, saying so */
    assert_int_equal(compare(&c, dir, "a", "b/rank0_trace.json", 1), TL_RUN_USAGE);
    assert_true(has(c.err.msg, "is a run (a set of rank traces or reports) but"));
    tl_comparison_free(&c);
    /* ... or against nothing: named as missing, not as "not a run" */
    assert_int_equal(compare(&c, dir, "a", "nothing_here", 1), TL_RUN_FAILED);
    assert_true(has(c.err.msg, "nothing_here: No such file or directory"));
    tl_comparison_free(&c);
    /* the options only traces take are refused by name, never dropped */
    static const char *const two_traces[] = {"--tracediff-dir", "--steps", "--inference",
                                             "--group_by_parent_module", "--group_by_num_kernels",
                                             "--enable_pseudo_ops", "a capture folder"};
    for (size_t k = 0; k < sizeof two_traces / sizeof *two_traces; k++) {
        tl_compare_opts o;
        opts_for(&o, dir, "a", "b");
        const char *captures[2] = {NULL, "cap"};
        o.captures = k == 6 ? captures : NULL;
        o.tracediff_dir = k == 0 ? "td" : NULL;
        o.steps = k == 1 ? "2:" : NULL;
        o.inference = k == 2, o.parent_module = k == 3, o.num_kernels = k == 4, o.pseudo_ops = k == 5;
        assert_int_equal(tl_compare_run(&o, &c), TL_RUN_USAGE);
        char want[200];
        snprintf(want, sizeof want, "%s is not available for runs, which are read rank by rank", two_traces[k]);
        if (!has(c.err.msg, want))
            fail_msg("%s: '%s'", two_traces[k], c.err.msg);
        tl_comparison_free(&c);
    }
    /* 4 vs 8 ranks: the aggregates, unpaired */
    assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_OK);
    assert_true(has(c.summary->lead_text, "ranks are not paired"));
    assert_true(has(c.summary->lead_json, "\"paired\": false"));
    const tl_table *rk = sheet(&c, TL_DIST_SHEET_RANKS);
    assert_int_equal(rk->nrows, 8);
    assert_true(isnan(num(rk, "busy_time_ms::a", 5)) && !isnan(num(rk, "busy_time_ms::b", 5)));
    tl_comparison_free(&c);
    /* a run with a rank missing is still a run: the error names the rank */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm '%s/b/rank3_trace.json'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compare(&c, dir, "a", "b", 2), TL_RUN_FAILED);
    assert_true(has(c.err.msg, "rank 3"));
    tl_comparison_free(&c);
    tt_rmrf(dir);
    free(dir);
}

/* Run `name` of dir as per-rank reports in dir/<rname>: CSV directories (csv) or workbooks,
 * and its collective report (tlreport --ranks) as a workbook (coll 1), a CSV directory
 * (coll 2) or none (0). */
static void report_run(const char *dir, const char *name, const char *rname, int n, int csv, int coll)
{
    char cmd[8192];
    for (int r = 0; r < n; r++) {
        if (csv)
            snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tlreport' -q %s/rank%d_trace.json --output_csvs_dir %s/rank%d",
                     dir, tool_dir, name, r, rname, r);
        else
            snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tlreport' -q %s/rank%d_trace.json -o %s/rank%d_perf_report.xlsx",
                     dir, tool_dir, name, r, rname, r);
        assert_int_equal(system(cmd), 0);
    }
    if (coll) {
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tlreport' -q --ranks %s %s %s/%s", dir, tool_dir, name,
                 coll == 1 ? "-o" : "--output_csvs_dir", rname, coll == 1 ? "nccl_analysis_report.xlsx" : "collective");
        assert_int_equal(system(cmd), 0);
    }
}

static int compare_named(tl_comparison *c, const char *dir, const char *a, const char *b)
{
    static char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    static const char *in[2], *names[2] = {"A", "B"};
    in[0] = pa, in[1] = pb;
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.inputs = in;
    o.ninputs = 2;
    o.names = names;
    o.nnames = 2;
    o.names_given = 1;
    o.jobs = 2;
    return tl_compare_run(&o, c);
}

/* Runs given as per-rank reports (tlreport's, CSV directories on one side and workbooks on
 * the other, with the collective report beside them) answer as the runs' traces do: the
 * same lines, the same per-rank numbers; without a collective report the summary says the
 * collectives are not compared; a rank missing is named. */
static void test_reports_as_runs(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen_run(dir, "a", 8, "--layers 13", -1, "");
    gen_run(dir, "b", 8, "--layers 13 --coll-slow 25", 5, "--slow '*=8'");
    report_run(dir, "a", "ra", 8, 1, 1);
    report_run(dir, "b", "rb", 8, 0, 2);
    tl_comparison t, r;
    assert_int_equal(compare_named(&t, dir, "a", "b"), TL_RUN_OK);
    assert_int_equal(compare_named(&r, dir, "ra", "rb"), TL_RUN_OK);
    /* the known answers: rank 5 alone, the planted 20% bandwidth drop the top change */
    assert_true(has(r.summary->lead_json, "\"ranks_moved_alone\": [5]"));
    assert_true(has(r.summary->lead_text, "collective that changed most: allreduce"));
    assert_true(has(r.summary->lead_text, "(-20.0%)"));
    /* and the traces' answer, line for line */
    assert_string_equal(r.summary->lead_text, t.summary->lead_text);
    assert_string_equal(r.summary->lead_json, t.summary->lead_json);
    const tl_table *rt = sheet(&t, TL_DIST_SHEET_RANKS), *rr = sheet(&r, TL_DIST_SHEET_RANKS);
    assert_int_equal(rr->nrows, 8);
    assert_int_equal(rr->ncols, rt->ncols);
    for (size_t c = 0; c < rt->ncols; c++)
        for (size_t row = 0; row < rt->nrows; row++) {
            double x = tl_column_number_at(&rt->cols[c], row), y = num(rr, rt->cols[c].name, row);
            assert_true((isnan(x) && isnan(y)) || fabs(x - y) <= 1e-9 * (1 + fabs(x)));
        }
    assert_true(sheet(&r, TL_DIST_SHEET_COLL)->nrows == sheet(&t, TL_DIST_SHEET_COLL)->nrows);
    tl_comparison_free(&t);
    tl_comparison_free(&r);
    /* no collective report on one side: said, and no collective sheets */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm '%s/ra/nccl_analysis_report.xlsx'", dir);
    assert_int_equal(system(cmd), 0);
    int quiet = tl_quiet;
    tl_quiet = 1;
    assert_int_equal(compare_named(&r, dir, "ra", "rb"), TL_RUN_OK);
    assert_true(has(r.summary->lead_text, "collectives are not compared:"));
    for (size_t i = 0; i < r.results->n; i++)
        assert_true(strcmp(r.results->items[i].name, TL_DIST_SHEET_COLL) != 0);
    tl_comparison_free(&r);
    /* a rank missing, a report that is not one */
    snprintf(cmd, sizeof cmd, "rm '%s/rb/rank3_perf_report.xlsx'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compare_named(&r, dir, "ra", "rb"), TL_RUN_FAILED);
    assert_true(has(r.err.msg, "no report for rank 3"));
    tl_comparison_free(&r);
    snprintf(cmd, sizeof cmd, "cp '%s/rb/collective/nccl_long.csv' '%s/ra/rank2/gpu_timeline.csv'", dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(compare_named(&r, dir, "ra", "a"), TL_RUN_FAILED);
    assert_true(has(r.err.msg, "rank 2") && has(r.err.msg, "gpu_timeline"));
    tl_comparison_free(&r);
    tl_quiet = quiet;
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tt_tool_dir(tool_dir, sizeof tool_dir, "build");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank5_slowdown),  cmocka_unit_test(test_busbw_drop),
        cmocka_unit_test(test_straggler_moved), cmocka_unit_test(test_jobs_identical),
        cmocka_unit_test(test_run_vs_trace_and_sizes), cmocka_unit_test(test_reports_as_runs),
        cmocka_unit_test(test_summary_sheet_block),
        cmocka_unit_test(test_jitter_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
