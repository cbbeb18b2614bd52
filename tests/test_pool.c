/*
 * test_pool.c - the worker pool (pool.h): every job runs exactly once, wait(upto) returns
 * only when jobs 0 .. upto-1 have ended, the caller takes part, and discarding drops the
 * jobs that had not started; a helper's allocation failure is told to its own run and to
 * no later one.
 */
#include "testutil.h"

#include "base/pool.h"
#include "base/util.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The allocation failures below are asked for (a size no allocator gives): AddressSanitizer
 * is to answer NULL, as malloc does, instead of ending the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#define NJOBS 200

typedef struct counter {
    atomic_int runs;        /* times this job ran */
    atomic_int worker;      /* the worker slot that ran it */
    int slots;
    int spin_us;            /* how long the job takes */
    atomic_int *started;    /* shared: jobs begun */
    atomic_int *seq;        /* shared: jobs ended, to see the order */
    int pos;                /* this job's place in that order */
} counter;

static atomic_int bad_worker; /* a job saw a worker slot out of range (cmocka asserts only
                                 on the test's own thread) */

static void sleep_us(int us)
{
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

static void count_job(void *arg, int worker)
{
    counter *c = arg;
    if (worker < 0 || worker >= c->slots)
        atomic_store(&bad_worker, 1);
    if (c->started)
        atomic_fetch_add(c->started, 1);
    if (c->spin_us)
        sleep_us(c->spin_us);
    atomic_store(&c->worker, worker);
    if (c->seq)
        c->pos = atomic_fetch_add(c->seq, 1);
    atomic_fetch_add(&c->runs, 1);
}

static void run_all(int threads)
{
    tl_pool *p = tl_pool_new(threads);
    int slots = tl_pool_slots(p);
    assert_int_equal(slots, threads + 1); /* threads start on this machine */
    static counter jobs[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        jobs[i] = (counter){.slots = slots, .spin_us = i % 7 == 0 ? 200 : 0};
        assert_int_equal(tl_pool_add(p, count_job, &jobs[i]), (size_t)i + 1);
    }
    /* wait(k) must see jobs 0..k-1 ended, whoever ran them */
    for (size_t k = 1; k <= NJOBS; k += 37) {
        tl_pool_wait(p, k);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(atomic_load(&jobs[i].runs), 1);
    }
    tl_pool_wait(p, (size_t)-1); /* beyond the queue: all of it */
    int by_caller = 0;
    for (int i = 0; i < NJOBS; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        by_caller += atomic_load(&jobs[i].worker) == threads;
    }
    if (threads == 0)
        assert_int_equal(by_caller, NJOBS); /* no thread: the caller ran every job */
    assert_int_equal(atomic_load(&bad_worker), 0);
    tl_pool_free(p, 0);
}

static void test_every_job_runs_once(void **state)
{
    (void)state;
    run_all(0);
    run_all(1);
    run_all(3);
}

/* The caller helps: with one slow worker busy, wait() runs the queued jobs itself,
 * newest first. */
static void test_caller_helps_newest_first(void **state)
{
    (void)state;
    tl_pool *p = tl_pool_new(1);
    atomic_int started = 0, seq = 0;
    counter slow = {.slots = 2, .spin_us = 300000, .started = &started};
    counter quick[4];
    tl_pool_add(p, count_job, &slow);
    while (atomic_load(&started) == 0) /* the worker has taken the slow job */
        sleep_us(100);
    for (int i = 0; i < 4; i++) {
        quick[i] = (counter){.slots = 2, .seq = &seq};
        tl_pool_add(p, count_job, &quick[i]);
    }
    tl_pool_wait(p, 5);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(atomic_load(&quick[i].runs), 1);
        assert_int_equal(atomic_load(&quick[i].worker), 1); /* the caller's slot */
        assert_int_equal(quick[i].pos, 3 - i);              /* newest first */
    }
    assert_int_equal(atomic_load(&slow.runs), 1);
    tl_pool_free(p, 0);
}

/* free(discard): the running job ends, the queued ones never start. */
static void test_discard(void **state)
{
    (void)state;
    tl_pool *p = tl_pool_new(1);
    atomic_int started = 0;
    counter jobs[6];
    for (int i = 0; i < 6; i++) {
        jobs[i] = (counter){.slots = 2, .spin_us = 50000, .started = &started};
        tl_pool_add(p, count_job, &jobs[i]);
    }
    while (atomic_load(&started) == 0)
        sleep_us(100);
    tl_pool_free(p, 1);
    int ran = 0;
    for (int i = 0; i < 6; i++)
        ran += atomic_load(&jobs[i].runs);
    assert_int_equal(atomic_load(&jobs[0].runs), 1);
    assert_true(ran < 6);
}

/* free without discard runs what is left, even with no thread. */
static void test_free_runs_the_rest(void **state)
{
    (void)state;
    tl_pool *p = tl_pool_new(0);
    counter jobs[5];
    for (int i = 0; i < 5; i++) {
        jobs[i] = (counter){.slots = 1};
        tl_pool_add(p, count_job, &jobs[i]);
    }
    assert_int_equal(atomic_load(&jobs[0].runs), 0); /* nothing runs until asked */
    tl_pool_free(p, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
}

/* ---- allocation failures of a run's helpers (base/util.h) ---- */

static unsigned helper_ctx;

static void fail_alloc(void *arg)
{
    (void)arg;
    free(tl_xmalloc(SIZE_MAX / 2));
}

static void *failing_helper(void *arg)
{
    *(int *)arg = tl_oom_helper(helper_ctx, fail_alloc, NULL);
    return NULL;
}

static int helper_fails(void)
{
    pthread_t th;
    int rc = 0;
    assert_int_equal(pthread_create(&th, NULL, failing_helper, &rc), 0);
    pthread_join(th, NULL);
    return rc;
}

/* A helper that fails while its run goes on: the run's thread unwinds at its next check,
 * with the helper's message. */
static void test_helper_failure_unwinds_its_run(void **state)
{
    (void)state;
    jmp_buf at;
    volatile int unwound = 0;
    if (setjmp(at) == 0) {
        tl_oom_catch(&at);
        helper_ctx = tl_oom_context();
        assert_int_equal(helper_fails(), -1);
        tl_oom_check();
    } else {
        unwound = 1;
        tl_oom_reset();
    }
    tl_oom_catch(NULL);
    assert_int_equal(unwound, 1);
    assert_non_null(strstr(tl_oom_message(), "out of memory"));
}

/* A helper of a run that has already unwound fails before its run lets go of its catch
 * point: the next run is not unwound by it. */
static void test_late_helper_failure_told_to_no_later_run(void **state)
{
    (void)state;
    jmp_buf at;
    volatile int unwound = 0;
    if (setjmp(at) == 0) {
        tl_oom_catch(&at);
        helper_ctx = tl_oom_context();
        free(tl_xmalloc(SIZE_MAX / 2));
    } else {
        unwound = 1;
        tl_oom_reset();
        assert_int_equal(helper_fails(), -1); /* the window the Python module has */
    }
    tl_oom_catch(NULL);
    assert_int_equal(unwound, 1);

    jmp_buf at2;
    volatile int finished = 0;
    if (setjmp(at2) == 0) {
        tl_oom_catch(&at2);
        free(tl_xmalloc(16));
        tl_oom_check();
        finished = 1;
    }
    tl_oom_catch(NULL);
    assert_int_equal(finished, 1);
}

/* Helpers of one run failing at once, each reading an input of its own, while the run's
 * thread fails too: the message the run takes as it unwinds (the helpers still failing)
 * is one of theirs or its own, whole. */
#define NFAILING 4

static const char *const failing_input[NFAILING + 1] = {
    "run.json", "helper-1.json", "the/second/helper/reads/a/longer/path.json",
    "h3.json", "and/the/fourth/one/a/path/longer/than/any/other/so/that/a/mix/shows.json"};

static pthread_barrier_t failing_together;

static void fail_alloc_reading(void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    tl_reading(failing_input[i]);
    pthread_barrier_wait(&failing_together);
    free(tl_xmalloc(SIZE_MAX / 2 - i));
}

static void *reading_helper(void *arg)
{
    tl_oom_helper(helper_ctx, fail_alloc_reading, arg);
    tl_reading(NULL);
    return NULL;
}

static void test_failures_at_once_tell_one_whole_message(void **state)
{
    (void)state;
    char want[NFAILING + 1][512];
    for (size_t i = 0; i <= NFAILING; i++)
        snprintf(want[i], sizeof want[i], "out of memory (asked for %zu bytes) while reading '%s'", SIZE_MAX / 2 - i,
                 failing_input[i]);
    for (int round = 0; round < 300; round++) {
        pthread_barrier_init(&failing_together, NULL, NFAILING + 1);
        pthread_t th[NFAILING];
        jmp_buf at;
        volatile int started = 0;
        char got[512];
        if (setjmp(at) == 0) {
            tl_oom_catch(&at);
            helper_ctx = tl_oom_context();
            for (; started < NFAILING; started++)
                assert_int_equal(
                    pthread_create(&th[started], NULL, reading_helper, (void *)(uintptr_t)(started + 1)), 0);
            tl_reading(failing_input[0]);
            pthread_barrier_wait(&failing_together);
            free(tl_xmalloc(SIZE_MAX / 2));
        }
        snprintf(got, sizeof got, "%s", tl_oom_message());
        tl_reading(NULL);
        tl_oom_reset();
        tl_oom_catch(NULL);
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&failing_together);
        int whole = 0;
        for (size_t i = 0; i <= NFAILING; i++)
            whole |= strcmp(got, want[i]) == 0;
        if (!whole)
            fail_msg("round %d: a message not one of the failures': '%s'", round, got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_job_runs_once),
        cmocka_unit_test(test_caller_helps_newest_first),
        cmocka_unit_test(test_discard),
        cmocka_unit_test(test_free_runs_the_rest),
        cmocka_unit_test(test_helper_failure_unwinds_its_run),
        cmocka_unit_test(test_late_helper_failure_told_to_no_later_run),
        cmocka_unit_test(test_failures_at_once_tell_one_whole_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
