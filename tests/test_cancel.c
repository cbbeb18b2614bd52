/*
 * test_cancel.c - the run's cancel flag stops the work after a trace's reading too: its
 * sheets, its perf sheets and the alignment of two traces each fail ("cancelled") once the
 * flag the trace was loaded under is set, and do their whole work while it is clear.
 *
 * A flag set before the load would stop the reader (tests/python/test_interrupt.py covers
 * that on 1 GB); here the trace is loaded whole first and its flag set afterwards, so that
 * each later step is seen to check it on its own.  The sort those steps use for their
 * longest orderings stops when asked, and leaves every row in place.
 */
#include "testutil.h"

#include "base/sort.h"
#include "diff/diff.h"
#include "perf/perf.h"
#include "trace/trace.h"
#include "trace/trace_report.h"

static char trace_path[4096];

static tl_trace *load(tl_cancel *flag)
{
    tl_error err = {0};
    tl_trace *t = tl_trace_load_cancel(trace_path, 0, flag, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_ptr_equal(t->cancel, flag);
    return t;
}

/* Run step `which` on t (and u, for the alignment): its result (0 / -1) and message. */
static int step(int which, tl_trace *t, tl_trace *u, tl_error *err)
{
    tl_arena arena;
    tl_arena_init(&arena);
    tl_results out = {0};
    static const tl_sheet_opts so;
    static const tl_perf_opts po;
    int rc;
    if (which == 0) {
        rc = tl_trace_sheets_opts(t, &so, &arena, &out, err);
    } else if (which == 1) {
        rc = tl_perf_sheets_opts(t, NULL, &po, &arena, &out, err);
    } else {
        tl_diff *d = tl_diff_run(t, u, NULL, err);
        rc = d ? 0 : -1;
        tl_diff_free(d);
    }
    if (rc == 0)
        assert_true(out.n > 0 || which == 2);
    tl_results_free(&out);
    tl_arena_free(&arena);
    return rc;
}

static void test_each_step_stops(void **state)
{
    (void)state;
    tl_cancel flag;
    atomic_init(&flag, 0);
    tl_trace *t = load(&flag), *u = load(&flag);
    static const char *const names[] = {"the sheets", "the perf sheets", "the alignment"};
    for (int which = 0; which < 3; which++) {
        tl_error err = {0};
        atomic_store(&flag, 0);
        if (step(which, t, u, &err) != 0)
            fail_msg("%s failed without a cancel: %s", names[which], err.msg);
        tl_cancel_set(&flag);
        memset(&err, 0, sizeof err);
        if (step(which, t, u, &err) != -1)
            fail_msg("%s went on after the cancel", names[which]);
        if (!strstr(err.msg, ": cancelled"))
            fail_msg("%s: '%s'", names[which], err.msg);
    }
    /* a trace kept past its run forgets the flag */
    tl_trace_uncancel(t);
    tl_trace_uncancel(u);
    tl_error err = {0};
    assert_int_equal(step(0, t, u, &err), 0);
    assert_int_equal(step(2, t, u, &err), 0);
    tl_trace_free(t);
    tl_trace_free(u);
}

/* The long sorts of a run (the pair diff's groups) ask whether to stop as they go. */
typedef struct sort_probe {
    const uint32_t *key;
    long asks, stop_at;     /* stop on this ask (0: never) */
    long cmps, most_between; /* comparisons since the last ask, and the most seen */
} sort_probe;

static int probe_cmp(size_t a, size_t b, void *ctx)
{
    sort_probe *p = ctx;
    p->cmps++;
    return p->key[a] < p->key[b] ? -1 : p->key[a] > p->key[b];
}

static int probe_stop(void *ctx)
{
    sort_probe *p = ctx;
    if (p->cmps > p->most_between)
        p->most_between = p->cmps;
    p->cmps = 0;
    return ++p->asks == p->stop_at;
}

static void test_sort_stops_when_asked(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint32_t *key = malloc(N * sizeof *key);
    size_t *idx = malloc(N * sizeof *idx), *want = malloc(N * sizeof *want);
    unsigned char *seen = malloc(N);
    uint64_t x = 42;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        key[i] = (uint32_t)(x >> 50); /* many equal keys: the order must stay stable */
        want[i] = i;
    }
    sort_probe ref = {key, 0, 0, 0, 0};
    tl_sort_rows(want, N, probe_cmp, &ref);

    /* never stopped: tl_sort_rows' order, asked all along (the insertion runs' 25 and
     * each merge pass's), never more than a few thousand rows apart */
    sort_probe p = {key, 0, 0, 0, 0};
    for (size_t i = 0; i < N; i++)
        idx[i] = i;
    assert_int_equal(tl_sort_rows_until(idx, N, probe_cmp, probe_stop, &p), 0);
    assert_memory_equal(idx, want, N * sizeof *idx);
    assert_true(p.asks > 100);
    assert_true(p.most_between <= 4096 * 16);

    /* stopped in the insertion runs and in a merge pass: -1, every row still there once */
    const long stops[] = {3, 40, 150};
    for (size_t s = 0; s < sizeof stops / sizeof *stops; s++) {
        sort_probe q = {key, 0, stops[s], 0, 0};
        for (size_t i = 0; i < N; i++)
            idx[i] = i;
        assert_int_equal(tl_sort_rows_until(idx, N, probe_cmp, probe_stop, &q), -1);
        assert_int_equal(q.asks, stops[s]);
        memset(seen, 0, N);
        for (size_t i = 0; i < N; i++) {
            assert_true(idx[i] < N && !seen[idx[i]]);
            seen[idx[i]] = 1;
        }
    }
    free(key);
    free(idx);
    free(want);
    free(seen);
}

int main(void)
{
    const char *top = getenv("TL_TOP");
    snprintf(trace_path, sizeof trace_path, "%s/examples/traces/vit_h100.pt.trace.json.gz", top ? top : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_step_stops),
        cmocka_unit_test(test_sort_stops_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
