/*
 * test_cancel.c - the run's cancel flag stops the work after a trace's reading too: its
 * sheets, its perf sheets and the alignment of two traces each fail ("cancelled") once the
 * flag the trace was loaded under is set, and do their whole work while it is clear.
 *
 * A flag set before the load would stop the reader (tests/python/test_interrupt.py covers
 * that on 1 GB); here the trace is loaded whole first and its flag set afterwards, so that
 * each later step is seen to check it on its own.
 */
#include "testutil.h"

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

int main(void)
{
    const char *top = getenv("TL_TOP");
    snprintf(trace_path, sizeof trace_path, "%s/examples/traces/vit_h100.pt.trace.json.gz", top ? top : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_step_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
