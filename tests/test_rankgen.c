/*
 * test_rankgen.c - the multi-rank collective report on rank sets from the project's
 * generator (gentrace --ranks): a planted straggler, late arrivals, seeded jitter and
 * all_to_allv splits, each sheet's numbers worked out by hand from what was planted.
 *
 * What gentrace plants (tools/gentrace.c, "rank sets"): every rank of a collective ends
 * together, base(k) after the last arrival, base = 20 µs + bytes / 200 000 µs; a rank's
 * kernel lasts from its arrival to that end.  The default collectives are an allreduce of
 * 1,048,576 Float, an allgather and a reducescatter of 524,288 BFloat16 a rank: 4 MiB
 * each on the wire for 4 ranks, so base = 20 + 4194304 / 200000 = 40 µs.
 *
 * The binary is build/tools/gentrace next to $TLCOMPARE (set by `make unit-test`), or
 * $GENTRACE.
 */
#include "testutil.h"

#include "ranks/ranks.h"

#include <errno.h>
#include <math.h>

static char gentrace[4096];

static void gen(const char *dir, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' --ranks %s -o '%s' >/dev/null", gentrace, args, dir);
    assert_int_equal(system(cmd), 0);
}

typedef struct set_run {
    tl_results res;
    tl_arena a;
    tl_rank_set s;
} set_run;

static void run_set(const char *dir, long n, int jobs, int heatmap, set_run *r)
{
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/rank*_trace.json", dir);
    tl_ranks_opts o = {.mode = TL_RANKS_PATTERN, .spec = pattern, .world_size = n, .jobs = jobs, .heatmap = heatmap};
    tl_error err = {0};
    memset(r, 0, sizeof *r);
    tl_arena_init(&r->a);
    if (tl_ranks_find(&o, &r->s, &err) != 0 || tl_ranks_read(&r->s, jobs, &err) != 0 ||
        tl_ranks_sheets(&r->s, &o, &r->a, &r->res, &err) != 0)
        fail_msg("%s", err.msg);
}

static void set_free(set_run *r)
{
    tl_results_free(&r->res);
    tl_rank_set_free(&r->s);
    tl_arena_free(&r->a);
}

static const tl_table *sheet(const tl_results *res, const char *name)
{
    for (size_t i = 0; i < res->n; i++)
        if (strcmp(res->items[i].name, name) == 0)
            return res->items[i].table;
    fail_msg("no sheet %s", name);
    return NULL;
}

static int has_sheet(const tl_results *res, const char *name)
{
    for (size_t i = 0; i < res->n; i++)
        if (strcmp(res->items[i].name, name) == 0)
            return 1;
    return 0;
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

static void assert_close(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want))))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* The row of collective_id `id` in a sheet. */
static size_t row_of(const tl_table *t, const char *id)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(cell(t, "collective_id", r)->v.s, id) == 0)
            return r;
    fail_msg("no collective %s", id);
    return 0;
}

/* 4 ranks, 12 collectives (3 kinds × 4 rounds); rank 2 arrives 300 µs after the others at
 * every one, and rank 1 arrives 1000 µs late at collective 3 (0_3), later than rank 2. */
static void test_straggler_and_late(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "4 --straggler 2:300 --late 1:3:1000");
    set_run r;
    run_set(dir, 4, 2, 0, &r);

    const tl_table *is = sheet(&r.res, "nccl_implicit_sync");
    assert_int_equal(is->nrows, 12);
    for (int k = 0; k < 12; k++) {
        char id[16];
        snprintf(id, sizeof id, "0_%d", k);
        size_t row = row_of(is, id);
        int late = k == 3;
        /* the latest start is rank 2's (+300), or rank 1's (+1000) at 0_3 */
        double w[4] = {300, 300, 0, 300};
        if (late) {
            w[0] = w[3] = 1000;
            w[1] = 0;
            w[2] = 700;
        }
        for (int q = 0; q < 4; q++) {
            char col[32];
            snprintf(col, sizeof col, "rank_%d_wait_time", q);
            assert_close(num(is, col, row), w[q]);
        }
        assert_close(num(is, "skew in start time", row), late ? 1000 : 300);
        assert_close(num(is, "avg_wait_time", row), late ? 2700.0 / 4 : 900.0 / 4);
        /* ranks 0 and 3 tie for the longest wait: the highest rank is named */
        assert_int_equal(cell(is, "earliest arrival rank", row)->v.i, 3);
        /* the last to arrive waits for nobody: its kernel is the collective's own 40 µs */
        assert_close(num(is, "comm_latency", row), 40);
        assert_close(num(is, "skew in end time", row), 0);
        /* 4 MiB in 40 µs: (4 / 1024) / 40e-6 = 97.65625 GB/s; bus factor 2·3/4 (allreduce),
         * 3/4 (allgather, reducescatter) */
        assert_close(num(is, "Full msg size (MB)", row), 4);
        assert_close(num(is, "algo bw (GB/s)", row), 97.65625);
        assert_close(num(is, "bus bw (GB/s)", row), k % 3 == 0 ? 97.65625 * 2 * 3 / 4 : 97.65625 * 3 / 4);
    }

    const tl_table *st = sheet(&r.res, "straggler_summary");
    assert_int_equal(st->nrows, 4);
    /* least waiting first: rank 2 (700 at 0_3), rank 1 (11 × 300), then ranks 0 and 3 */
    static const int order[4] = {2, 1, 0, 3};
    static const double total[4] = {700, 3300, 4300, 4300};
    static const int last[4] = {11, 1, 0, 0}, first[4] = {0, 0, 0, 12};
    for (int q = 0; q < 4; q++) {
        assert_int_equal(cell(st, "rank", (size_t)q)->v.i, order[q]);
        assert_close(num(st, "total_wait_time_us", (size_t)q), total[q]);
        assert_int_equal(cell(st, "times_arrived_last", (size_t)q)->v.i, last[q]);
        assert_int_equal(cell(st, "times_arrived_first", (size_t)q)->v.i, first[q]);
        /* a rank's kernels: 12 × 40 µs plus its waits */
        assert_close(num(st, "total_nccl_dur_us", (size_t)q), 480 + total[q]);
    }
    assert_close(num(st, "pct_arrived_last", 0), 91.7); /* 11 / 12, rounded to 0.1 */

    const tl_table *ss = sheet(&r.res, "nccl_summary_implicit_sync");
    assert_int_equal(ss->nrows, 3); /* one per kind, each 4 times */
    for (size_t g = 0; g < 3; g++) {
        assert_int_equal(cell(ss, "count", g)->v.i, 4);
        assert_close(num(ss, "comm_latency_mean", g), 40);
        assert_close(num(ss, "Total comm latency (ms)", g), 0.16);
    }
    /* the allreduce's group holds 0_3: skews 300, 300, 300, 1000 */
    for (size_t g = 0; g < 3; g++)
        if (strcmp(cell(ss, "Collective name", g)->v.s, "allreduce") == 0) {
            assert_close(num(ss, "skew in start time_mean", g), (3 * 300 + 1000) / 4.0);
            assert_close(num(ss, "skew in start time_max", g), 1000);
        }
    assert_false(has_sheet(&r.res, "nccl_all2allv"));
    set_free(&r);
    tt_rmrf(dir);
    free(dir);
}

/* Jitter of up to 50 µs under a 300 µs straggler: the straggler is still last every time,
 * every other rank waits 300 ± 50 µs, all ranks still end together; the same seed gives
 * the same sheets, on any number of workers. */
static void test_jitter(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), *dir2 = tt_tmpdir();
    gen(dir, "8 --straggler 5:300 --jitter 50 --seed 7 --rounds 3");
    gen(dir2, "8 --straggler 5:300 --jitter 50 --seed 7 --rounds 3");
    set_run r, r2;
    run_set(dir, 8, 1, 0, &r);
    run_set(dir2, 8, 3, 0, &r2);
    const tl_table *is = sheet(&r.res, "nccl_implicit_sync");
    assert_int_equal(is->nrows, 9);
    double spread = 0;
    for (size_t row = 0; row < is->nrows; row++) {
        assert_true(num(is, "rank_5_wait_time", row) == 0);
        for (int q = 0; q < 8; q++) {
            char col[32];
            snprintf(col, sizeof col, "rank_%d_wait_time", q);
            double w = num(is, col, row);
            if (q != 5) {
                assert_true(w >= 250 - 1e-6 && w <= 350 + 1e-6);
                spread = fmax(spread, fabs(w - 300));
            }
        }
        assert_true(fabs(num(is, "skew in end time", row)) < 1e-3);
        /* 8 ranks: the allreduce 4 MiB (40 µs); allgather and reducescatter 8 MiB on the
         * wire, 20 + 8388608 / 200000 = 61 µs */
        const char *name = cell(is, "Collective name", row)->v.s;
        assert_close(num(is, "comm_latency", row), strcmp(name, "allreduce") == 0 ? 40 : 61);
    }
    assert_true(spread > 1); /* the jitter is there */
    const tl_table *st = sheet(&r.res, "straggler_summary");
    assert_int_equal(cell(st, "rank", 0)->v.i, 5);
    assert_int_equal(cell(st, "times_arrived_last", 0)->v.i, 9);
    /* the same seed, read on 3 workers: the same sheets */
    assert_int_equal(r.res.n, r2.res.n);
    for (size_t i = 0; i < r.res.n; i++) {
        const tl_table *x = r.res.items[i].table, *y = r2.res.items[i].table;
        assert_int_equal(x->nrows, y->nrows);
        assert_int_equal(x->ncols, y->ncols);
        for (size_t c = 0; c < x->ncols; c++)
            for (size_t q = 0; q < x->nrows; q++)
                assert_int_equal(tl_cell_key_cmp(&x->cols[c].cells[q], &y->cols[c].cells[q]), 0);
    }
    set_free(&r);
    set_free(&r2);
    tt_rmrf(dir);
    tt_rmrf(dir2);
    free(dir);
    free(dir2);
}

/* all_to_allv of 4096 and of 8192 Float a rank (one each per round, two rounds), split
 * nelems/4 × 1 or 2 to each rank ((src + dst) odd: × 2), so a rank sends 6144 elements
 * (24576 bytes, 0.0234375 MB) or twice that; base = 20 µs (+ 49152 / 200000 = 0).  Rank 1
 * arrives 100 µs late every time. */
static void test_alltoallv(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "4 --collectives alltoallv:Float:4096,alltoallv:Float:8192 --rounds 2 --straggler 1:100");
    set_run r;
    run_set(dir, 4, 2, 1, &r);
    const tl_table *a = sheet(&r.res, "nccl_all2allv");
    assert_int_equal(a->nrows, 4);
    /* total data descending: the 8192s (0_1, 0_3) first */
    static const char *const ids[4] = {"0_1", "0_3", "0_0", "0_2"};
    for (size_t row = 0; row < 4; row++) {
        double f = row < 2 ? 2 : 1; /* the size factor */
        assert_string_equal(cell(a, "collective_id", row)->v.s, ids[row]);
        assert_close(num(a, "total data communicated (MB)", row), f * 4 * 0.0234375);
        assert_int_equal(cell(a, "total nelems communicated", row)->v.i, (int64_t)f * 4 * 6144);
        /* from the first start to the last end: 100 µs late + 20 µs */
        assert_close(num(a, "wall_time (us)", row), 120);
        assert_close(num(a, "max_rank_dur (us)", row), 120);
        assert_close(num(a, "min_rank_dur (us)", row), 20);
        assert_close(num(a, "avg_rank_dur (us)", row), (3 * 120 + 20) / 4.0);
        assert_close(num(a, "throughput (GB/s)", row), (f * 4 * 0.0234375 / 1024) / (120 / 1e6));
        /* the last to arrive moves its data in 20 µs, the others in 120 */
        assert_close(num(a, "max_rank_throughput (GB/s)", row), (f * 0.0234375 / 1024) / (20 / 1e6));
        assert_close(num(a, "min_rank_throughput (GB/s)", row), (f * 0.0234375 / 1024) / (120 / 1e6));
        assert_close(num(a, "size_imbalance", row), 1);
        assert_close(num(a, "skew in start time", row), 100);
        assert_close(num(a, "skew in end time", row), 0);
        assert_close(num(a, "rank_1_skew in start time", row), 100);
        assert_close(num(a, "rank_0_skew in start time", row), 0);
        assert_close(num(a, "rank_0_skew in end time", row), 0);
        assert_string_equal(cell(a, "rank_0_In split size", row)->v.s,
                            row < 2 ? "[2048, 4096, 2048, 4096]" : "[1024, 2048, 1024, 2048]");
        assert_int_equal(cell(a, "rank_3_In msg nelems", row)->v.i, (int64_t)f * 6144);
    }
    const tl_table *s = sheet(&r.res, "nccl_summary_all2allv");
    assert_int_equal(s->nrows, 1);
    assert_string_equal(cell(s, "dtype", 0)->v.s, "Float");
    assert_int_equal(cell(s, "count", 0)->v.i, 4);
    assert_close(num(s, "Total wall_time (us)", 0), 480);
    assert_close(num(s, "Total wall_time (ms)", 0), 0.48);
    assert_close(num(s, "wall_time (us)_mean", 0), 120);
    assert_close(num(s, "total data communicated (MB)_mean", 0), 1.5 * 4 * 0.0234375);
    assert_close(num(s, "total data communicated (MB)_min", 0), 4 * 0.0234375);
    assert_close(num(s, "max_rank_dur (us)_max", 0), 120);
    /* the heatmap: per (src, dst), 2 rounds of (1024 + 2048) × (1 or 2) Float, 4 sends */
    const tl_table *h = sheet(&r.res, "nccl_all2allv_heatmap");
    assert_int_equal(h->nrows, 16);
    for (size_t q = 0; q < 16; q++) {
        int src = (int)(q / 4), dst = (int)(q % 4);
        assert_int_equal(cell(h, "src_rank", q)->v.i, src);
        assert_int_equal(cell(h, "dst_rank", q)->v.i, dst);
        double mb = 2.0 * 3072 * (1 + (src + dst) % 2) * 4 / 1048576;
        assert_close(num(h, "total_sent_MB", q), mb);
        assert_close(num(h, "avg_sent_MB", q), mb / 4);
        assert_int_equal(cell(h, "count", q)->v.i, 4);
    }
    set_free(&r);
    tt_rmrf(dir);
    free(dir);
}

/* The error of a rank set that is refused (its sheets not made). */
static void refused(const char *dir, long n, char *msg, size_t cap)
{
    char pattern[512];
    snprintf(pattern, sizeof pattern, "%s/rank*_trace.json", dir);
    tl_ranks_opts o = {.mode = TL_RANKS_PATTERN, .spec = pattern, .world_size = n, .jobs = 2};
    tl_error err = {0};
    tl_rank_set s = {0};
    tl_results res = {0};
    tl_arena a;
    tl_arena_init(&a);
    int rc = tl_ranks_find(&o, &s, &err);
    if (rc == 0)
        rc = tl_ranks_read(&s, 2, &err);
    if (rc == 0)
        rc = tl_ranks_sheets(&s, &o, &a, &res, &err);
    assert_int_equal(rc, -1);
    assert_int_equal(res.n, 0);
    assert_null(strchr(err.msg, '\n'));
    snprintf(msg, cap, "%s", err.msg);
    tl_results_free(&res);
    tl_rank_set_free(&s);
    tl_arena_free(&a);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp '%.2000s' '%.2000s'", from, to);
    assert_int_equal(system(cmd), 0);
}

/* Bad rank sets: an empty and a truncated rank file are refused naming the rank and the
 * file; a rank of another job (8 ranks, in a set of 4) is refused by its process group's
 * ranks; a rank's file in another rank's place is read (the place decides). */
static void test_bad_sets(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), *other = tt_tmpdir(), path[1024], from[1024], msg[1024];
    gen(dir, "4 --rounds 1");
    gen(other, "8 --rounds 1");
    snprintf(path, sizeof path, "%s/rank2_trace.json", dir);
    snprintf(from, sizeof from, "%s/rank2_trace.json", other);
    copy_file(path, from); /* keep rank 2 of the 4 in the 8's folder */
    tt_write_file(path, "", 0);
    refused(dir, 4, msg, sizeof msg);
    assert_non_null(strstr(msg, "rank 2 of 4"));
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, "empty"));
    tt_write_file(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"ker", 40);
    refused(dir, 4, msg, sizeof msg);
    assert_non_null(strstr(msg, "rank 2 of 4"));
    /* rank 2 of a job of 8: its collectives' process group holds 8 ranks */
    snprintf(from, sizeof from, "%s/rank2_trace.json", other);
    char keep[1024];
    snprintf(keep, sizeof keep, "%s/keep.json", other);
    copy_file(from, keep);
    snprintf(from, sizeof from, "%s/rank3_trace.json", other);
    copy_file(from, path);
    refused(dir, 4, msg, sizeof msg);
    assert_non_null(strstr(msg, "'Process Group Ranks'"));
    assert_non_null(strstr(msg, "in rank 2"));
    /* rank 1's file as rank 2: read (a warning says so) */
    snprintf(from, sizeof from, "%s/rank1_trace.json", dir);
    copy_file(from, path);
    set_run r;
    run_set(dir, 4, 2, 0, &r);
    assert_int_equal(r.s.facts[2].dist_rank, 1);
    assert_int_equal(r.s.facts[2].dist_world, 4);
    assert_int_equal(sheet(&r.res, "nccl_long")->nrows, 12);
    set_free(&r);
    tt_rmrf(dir);
    tt_rmrf(other);
    free(dir);
    free(other);
}

/* 10,000 rank files named by a pattern (hard links to one small trace): read, matched and
 * reported, one collective across all of them; one missing among them is named. */
static void test_ten_thousand(void **state)
{
    (void)state;
    enum { N = 10000 };
    char *dir = tt_tmpdir(), one[1024], path[1024];
    snprintf(one, sizeof one, "%s/one.json", dir);
    const char *trace =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32\", "
        "\"pid\": 0, \"tid\": 7, \"ts\": 100, \"dur\": 40, \"args\": {\"correlation\": 1, \"stream\": 7, "
        "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 9999]\", \"Collective name\": \"allreduce\", "
        "\"Group size\": 10000, \"dtype\": \"Float\", \"In msg nelems\": 256, \"Out msg nelems\": 256}}]}";
    tt_write_file(one, trace, strlen(trace));
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "%s/rank%d_trace.json", dir, i);
        assert_int_equal(link(one, path), 0);
    }
    set_run r;
    run_set(dir, N, 2, 0, &r);
    assert_int_equal(sheet(&r.res, "nccl_long")->nrows, N);
    const tl_table *is = sheet(&r.res, "nccl_implicit_sync");
    assert_int_equal(is->nrows, 1);
    assert_true(num(is, "skew in start time", 0) == 0);
    assert_int_equal(sheet(&r.res, "straggler_summary")->nrows, N);
    set_free(&r);
    snprintf(path, sizeof path, "%s/rank%d_trace.json", dir, 5000);
    assert_int_equal(unlink(path), 0);
    char msg[1024];
    refused(dir, N, msg, sizeof msg);
    assert_non_null(strstr(msg, "5000"));
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const char *g = getenv("GENTRACE"), *tl = getenv("TLCOMPARE");
    if (g) {
        snprintf(gentrace, sizeof gentrace, "%s", g);
    } else if (tl) {
        const char *slash = strrchr(tl, '/');
        int n = slash ? (int)(slash - tl) : 1;
        snprintf(gentrace, sizeof gentrace, "%.*s/tools/gentrace", n, slash ? tl : ".");
    } else {
        fprintf(stderr, "test_rankgen: set GENTRACE (or TLCOMPARE, as make unit-test does)\n");
        return 1;
    }
    if (access(gentrace, X_OK) != 0) {
        fprintf(stderr, "test_rankgen: %s: %s (make build/tools/gentrace)\n", gentrace, strerror(errno));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straggler_and_late),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_alltoallv),
        cmocka_unit_test(test_bad_sets),
        cmocka_unit_test(test_ten_thousand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
