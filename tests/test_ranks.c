/*
 * test_ranks.c - the multi-rank collective report (MULTIRANK.md) on rank sets written
 * here with planted arrivals, checked against values worked out by hand; the rank
 * regex; the refusals; the same sheets whatever the number of workers.
 */
#include "testutil.h"

#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include <math.h>

/* One collective kernel event of a rank: an allreduce of `nelems` floats in group "0". */
static void kernel(tl_buf *b, int first, double ts, double dur, long nelems)
{
    tl_buf_printf(b,
                  "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32\",\"pid\":0,"
                  "\"tid\":7,\"ts\":%.17g,\"dur\":%.17g,\"args\":{\"correlation\":%d,\"stream\":7,"
                  "\"Process Group Name\":\"0\",\"Process Group Ranks\":[0, 1],\"Collective name\":\"allreduce\","
                  "\"Group size\":2,\"dtype\":\"Float\",\"In msg nelems\":%ld,\"Out msg nelems\":%ld,"
                  "\"In split size\":[],\"Out split size\":[]}}",
                  first ? "" : ",", ts, dur, (int)ts, nelems, nelems);
}

/* Rank r's trace: two allreduces; rank 1 arrives 10 µs, then 5 µs after rank 0. */
static void write_rank(const char *dir, int r)
{
    static const double ts[2][2] = {{100, 300}, {110, 305}};
    static const double dur[2][2] = {{50, 40}, {40, 35}};
    tl_buf b = {0};
    tl_buf_printf(&b, "{\"deviceProperties\":[{}, {}],\"traceEvents\":[");
    for (int k = 0; k < 2; k++)
        kernel(&b, k == 0, ts[r][k], dur[r][k], 1048576);
    tl_buf_printf(&b, "]}");
    char path[512];
    snprintf(path, sizeof path, "%s/rank%d_trace.json", dir, r);
    tt_write_file(path, b.data, b.len);
    tl_buf_free(&b);
}

static const tl_table *sheet(const tl_results *res, const char *name)
{
    for (size_t i = 0; i < res->n; i++)
        if (strcmp(res->items[i].name, name) == 0)
            return res->items[i].table;
    fail_msg("no sheet %s", name);
    return NULL;
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    if (c < 0)
        fail_msg("no column %s", col);
    assert_true(row < t->nrows);
    return &t->cols[c].cells[row];
}

static double num(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *c = cell(t, col, row);
    return c->kind == TL_INT ? (double)c->v.i : c->kind == TL_FLOAT ? c->v.f : NAN;
}

static void run_set(const char *dir, int jobs, tl_results *res, tl_arena *a, tl_rank_set *s)
{
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/rank*_trace.json", dir);
    tl_ranks_opts o = {.mode = TL_RANKS_PATTERN, .spec = pattern, .world_size = 2, .jobs = jobs};
    tl_error err = {0};
    if (tl_ranks_find(&o, s, &err) != 0 || tl_ranks_read(s, jobs, &err) != 0 ||
        tl_ranks_sheets(s, &o, a, res, &err) != 0)
        fail_msg("%s", err.msg);
}

static void test_planted_arrivals(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    write_rank(dir, 0);
    write_rank(dir, 1);
    tl_results res = {0};
    tl_arena a;
    tl_arena_init(&a);
    tl_rank_set s;
    run_set(dir, 1, &res, &a, &s);

    const tl_table *is = sheet(&res, "nccl_implicit_sync");
    assert_int_equal(is->nrows, 2);
    assert_string_equal(cell(is, "collective_id", 0)->v.s, "0_0");
    /* 0_0: rank 1 starts last at 110, so rank 0 waits 10; both end at 150 */
    assert_true(num(is, "rank_0_wait_time", 0) == 10 && num(is, "rank_1_wait_time", 0) == 0);
    assert_true(num(is, "skew in start time", 0) == 10);
    assert_int_equal(cell(is, "earliest arrival rank", 0)->v.i, 0);
    assert_true(num(is, "avg_wait_time", 0) == 5);
    assert_true(num(is, "comm_latency", 0) == 40);
    assert_true(num(is, "skew in end time", 0) == 0);
    /* 4 MiB over 40 µs: (4 / 1024) / 40e-6 = 97.65625 GB/s, bus factor 2(n-1)/n = 1 */
    assert_true(num(is, "In msg size (MB)", 0) == 4.0);
    assert_true(fabs(num(is, "algo bw (GB/s)", 0) - 97.65625) < 1e-9);
    assert_true(num(is, "bus bw (GB/s)", 0) == num(is, "algo bw (GB/s)", 0));
    /* integer times stay integers */
    assert_int_equal(cell(is, "rank_0_ts", 0)->kind, TL_INT);
    /* 0_1: rank 1 at 305, rank 0 waits 5 */
    assert_true(num(is, "rank_0_wait_time", 1) == 5);

    const tl_table *st = sheet(&res, "straggler_summary");
    assert_int_equal(st->nrows, 2);
    /* the straggler first: rank 1, never waiting, last every time */
    assert_int_equal(cell(st, "rank", 0)->v.i, 1);
    assert_true(num(st, "total_wait_time_us", 0) == 0.0);
    assert_int_equal(cell(st, "times_arrived_last", 0)->v.i, 2);
    assert_true(num(st, "pct_arrived_last", 0) == 100.0);
    assert_true(num(st, "total_nccl_dur_us", 0) == 75);
    assert_int_equal(cell(st, "rank", 1)->v.i, 0);
    assert_true(num(st, "total_wait_time_us", 1) == 15.0);
    assert_true(num(st, "mean_wait_time_us", 1) == 7.5);
    assert_int_equal(cell(st, "times_arrived_first", 1)->v.i, 2);
    assert_true(num(st, "total_nccl_dur_us", 1) == 90);
    /* two GPUs a node from deviceProperties: ranks 0 and 1 share node 0 */
    assert_int_equal(cell(st, "node_id", 0)->v.i, 0);
    assert_string_equal(cell(is, "node_span", 0)->v.s, "intra_node");

    const tl_table *sl = sheet(&res, "nccl_summary_long");
    assert_int_equal(sl->nrows, 2); /* one group per rank, rank 0's 90 µs first */
    assert_int_equal(cell(sl, "rank", 0)->v.i, 0);
    assert_int_equal(cell(sl, "dur_sum", 0)->v.i, 90);
    assert_true(num(sl, "dur_std", 0) == sqrt(50.0));

    /* the same sheets with two workers */
    tl_results res2 = {0};
    tl_arena a2;
    tl_arena_init(&a2);
    tl_rank_set s2;
    run_set(dir, 2, &res2, &a2, &s2);
    assert_int_equal(res.n, res2.n);
    for (size_t i = 0; i < res.n; i++) {
        const tl_table *x = res.items[i].table, *y = res2.items[i].table;
        assert_int_equal(x->nrows, y->nrows);
        assert_int_equal(x->ncols, y->ncols);
        for (size_t c = 0; c < x->ncols; c++)
            for (size_t r = 0; r < x->nrows; r++)
                assert_int_equal(tl_cell_key_cmp(&x->cols[c].cells[r], &y->cols[c].cells[r]), 0);
    }
    tl_results_free(&res);
    tl_results_free(&res2);
    tl_rank_set_free(&s);
    tl_rank_set_free(&s2);
    tl_arena_free(&a);
    tl_arena_free(&a2);
    tt_rmrf(dir);
    free(dir);
}

static void test_rank_regex(void **state)
{
    (void)state;
    regex_t re;
    size_t g;
    tl_error err = {0};
    assert_int_equal(tl_ranks_regex(TL_RANKS_DEFAULT_REGEX, &re, &g, &err), 0);
    assert_int_equal(tl_ranks_rank_of("in/host1/job_rank-12.pt.trace.json.gz", &re, g), 12);
    assert_int_equal(tl_ranks_rank_of("in/rank[3]x.json", &re, g), 3);
    assert_int_equal(tl_ranks_rank_of("in/rank/7/t.json", &re, g), 7); /* the whole path, after the base name */
    assert_int_equal(tl_ranks_rank_of("in/worker3.json", &re, g), -1);
    regfree(&re);
    /* the group named rank, not the first */
    assert_int_equal(tl_ranks_regex("(node)(\\d+)_gpu(?P<rank>\\d+)", &re, &g, &err), 0);
    assert_int_equal(tl_ranks_rank_of("node2_gpu5.json", &re, g), 5);
    regfree(&re);
    assert_int_equal(tl_ranks_regex("rank(?=\\d)", &re, &g, &err), -1);
    assert_non_null(strstr(err.msg, "not supported"));
}

static void test_refusals(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    write_rank(dir, 0);
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/rank*_trace.json", dir);
    tl_ranks_opts o = {.mode = TL_RANKS_PATTERN, .spec = pattern, .world_size = 3};
    tl_rank_set s;
    tl_error err = {0};
    assert_int_equal(tl_ranks_find(&o, &s, &err), -1);
    assert_non_null(strstr(err.msg, "ranks 1, 2 of 3: no file"));
    tl_rank_set_free(&s);
    err = (tl_error){0};
    o.spec = dir; /* no '*' */
    assert_int_equal(tl_ranks_find(&o, &s, &err), -1);
    if (!strstr(err.msg, "exactly one '*'"))
        fail_msg("%s", err.msg);
    tl_rank_set_free(&s);
    /* a rank file with no collective kernel at all */
    char p1[512];
    snprintf(p1, sizeof p1, "%s/rank1_trace.json", dir);
    tt_write_file(p1, "{\"traceEvents\":[]}", 18);
    snprintf(p1, sizeof p1, "%s/rank0_trace.json", dir);
    tt_write_file(p1, "{\"traceEvents\":[]}", 18);
    o.spec = pattern;
    o.world_size = 2;
    err = (tl_error){0};
    tl_results res = {0};
    tl_arena a;
    tl_arena_init(&a);
    assert_int_equal(tl_ranks_find(&o, &s, &err), 0);
    assert_int_equal(tl_ranks_read(&s, 2, &err), 0);
    assert_int_equal(tl_ranks_sheets(&s, &o, &a, &res, &err), -1);
    assert_non_null(strstr(err.msg, "no NCCL/RCCL collective kernels in any of the 2 rank files"));
    tl_rank_set_free(&s);
    /* a truncated rank file names its rank and file */
    err = (tl_error){0};
    tt_write_file(p1, "{\"traceEvents\":[{\"ph\":", 22);
    assert_int_equal(tl_ranks_find(&o, &s, &err), 0);
    assert_int_equal(tl_ranks_read(&s, 2, &err), -1);
    assert_non_null(strstr(err.msg, "rank 0 of 2: "));
    assert_non_null(strstr(err.msg, "rank0_trace.json"));
    tl_rank_set_free(&s);
    tl_results_free(&res);
    tl_arena_free(&a);
    tt_rmrf(dir);
    free(dir);
}

/* --agg_metrics' reducers, as pandas' groupby computes them: a missing value skipped,
 * std and var with one degree of freedom, the median of an even count the middle mean. */
static void test_reducers(void **state)
{
    (void)state;
    const double v[] = {4, NAN, 1, 3, 2};
    static const struct {
        const char *name;
        double want;
    } cases[] = {{"count", 4}, {"sum", 10}, {"mean", 2.5}, {"median", 2.5}, {"min", 1}, {"max", 4},
                 {"std", 1.2909944487358056}, {"var", 5.0 / 3}, {"first", 4}, {"last", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_cval c = tl_rk_agg(cases[i].name, v, 5, 1);
        double got = c.kind == TL_CV_INT ? (double)c.i : c.f;
        if (fabs(got - cases[i].want) > 1e-12) {
            print_error("%s: %.17g, want %.17g\n", cases[i].name, got, cases[i].want);
            fail();
        }
    }
    assert_int_equal(tl_rk_agg("count", v, 5, 0).kind, TL_CV_INT);
    assert_int_equal(tl_rk_agg("median", v + 1, 1, 0).kind, TL_CV_NONE); /* all missing: missing */
    assert_true(tl_rk_agg_known("var") && !tl_rk_agg_known("mode"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_arrivals),
        cmocka_unit_test(test_rank_regex),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_reducers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
