/*
 * test_unwind.c - a thread that unwinds after an allocation failure (base/util.h) first
 * stops and joins the helpers it started: none is left at work on the frames it leaves,
 * one waiting for it is woken, and the lock it held while it allocated is released.
 *
 * The helpers below end by themselves after a few seconds, so that a broken guarantee
 * fails its test rather than hanging it.
 */
#include "testutil.h"

#include "base/thread.h"
#include "base/util.h"
#include "io/direct_out.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The allocation failures below are asked for (a size no allocator gives): AddressSanitizer
 * is to answer NULL, as malloc does, instead of ending the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#define MAGIC 0x5eed5eedL
#define GIVE_UP_S 8.0

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 1 while the thread of kernel id `tid` is in this process. */
static int thread_alive(long tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld", tid);
    return access(path, F_OK) == 0;
}

/* What a helper shares with the one that started it, in the starter's frame. */
typedef struct frame {
    volatile long magic;
    atomic_long tid;     /* the helper's kernel thread id */
    atomic_int started;
    atomic_int stopped;  /* the helper was told to stop */
    pthread_mutex_t *lock;
    atomic_int locked;   /* the helper had the lock */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} frame;

static void frame_init(frame *f)
{
    f->magic = MAGIC;
    atomic_init(&f->tid, 0);
    atomic_init(&f->started, 0);
    atomic_init(&f->stopped, 0);
    f->lock = NULL;
    atomic_init(&f->locked, 0);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

static void announce(frame *f)
{
    atomic_store(&f->tid, (long)syscall(SYS_gettid));
    atomic_store(&f->started, 1);
}

/* A tenth of a millisecond off the CPU: a thread that spins without blocking can starve
 * the others under valgrind, whose threads take turns. */
static void pause_briefly(void) { nanosleep(&(struct timespec){0, 100000}, NULL); }

static void wait_started(frame *f)
{
    while (!atomic_load(&f->started))
        pause_briefly();
}

/* Times a working helper saw its frame no longer its starter's. */
static atomic_int frames_seen_gone;

/* At work on the frame, allocating as it goes, until its run is lost (it then stops at
 * its next allocation) or it gives up. */
static void *working_helper(void *arg)
{
    frame *f = arg;
    announce(f);
    for (double end = now() + GIVE_UP_S; now() < end;) {
        if (f->magic != MAGIC)
            atomic_fetch_add(&frames_seen_gone, 1);
        free(tl_xmalloc(64));
        pause_briefly();
    }
    return NULL;
}

/* When a helper gives up, on the clock its waits use. */
static struct timespec give_up_time(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += (time_t)GIVE_UP_S;
    return t;
}

/* Waiting for its starter, allocating nothing, until told to stop or it gives up. */
static void *waiting_helper(void *arg)
{
    frame *f = arg;
    announce(f);
    struct timespec until = give_up_time();
    pthread_mutex_lock(&f->mu);
    while (!atomic_load(&f->stopped))
        if (pthread_cond_timedwait(&f->cv, &f->mu, &until) != 0)
            break;
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

static void stop_waiting(void *arg)
{
    frame *f = arg;
    pthread_mutex_lock(&f->mu);
    atomic_store(&f->stopped, 1);
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* At work on the frame without allocating (its run's failure cannot stop it there),
 * until told to stop or it gives up. */
static void *busy_helper(void *arg)
{
    frame *f = arg;
    announce(f);
    for (double end = now() + GIVE_UP_S; now() < end && !atomic_load(&f->stopped);) {
        if (f->magic != MAGIC)
            atomic_fetch_add(&frames_seen_gone, 1);
        pause_briefly();
    }
    return NULL;
}

/* Needing the starter's lock to end. */
static void *locking_helper(void *arg)
{
    frame *f = arg;
    announce(f);
    struct timespec until = give_up_time();
    if (pthread_mutex_timedlock(f->lock, &until) == 0) {
        atomic_store(&f->locked, 1);
        pthread_mutex_unlock(f->lock);
    }
    return NULL;
}

/* body(arg) in a run that catches its allocation failures; 1 when it unwound (as each
 * body below must). */
static int unwinds(void (*body)(void *), void *arg)
{
    jmp_buf at;
    volatile int unwound = 0;
    if (setjmp(at) == 0) {
        tl_oom_catch(&at);
        body(arg);
    } else {
        unwound = 1;
        tl_oom_reset();
    }
    tl_oom_catch(NULL);
    return unwound;
}

static void fail_to_allocate(void) { free(tl_xmalloc(SIZE_MAX / 2)); }

/* ---- a helper fails while its own helper works on its frame ---- */

static long grandchild_tid;

static void *failing_starter(void *arg)
{
    (void)arg;
    frame f;
    frame_init(&f);
    pthread_t th;
    assert_int_equal(tl_thread_create_stoppable(&th, busy_helper, &f, stop_waiting, &f), 0);
    wait_started(&f);
    grandchild_tid = atomic_load(&f.tid);
    fail_to_allocate(); /* unwinds this helper: f is gone after */
    return NULL;
}

static void start_failing_starter(void *arg)
{
    (void)arg;
    pthread_t th;
    assert_int_equal(tl_thread_create(&th, failing_starter, NULL), 0);
    tl_thread_join(th, NULL); /* unwinds: its helper failed */
}

static void test_failing_helper_joins_its_helper_first(void **state)
{
    (void)state;
    assert_int_equal(unwinds(start_failing_starter, NULL), 1);
    assert_false(thread_alive(grandchild_tid));
    assert_int_equal(atomic_load(&frames_seen_gone), 0);
}

/* ---- the run's thread fails: its helpers stop, working or waiting ---- */

static void start_two_then_fail(void *arg)
{
    frame *f = arg; /* f[0] for the working helper, f[1] for the waiting one */
    pthread_t a, b;
    assert_int_equal(tl_thread_create(&a, working_helper, &f[0]), 0);
    assert_int_equal(tl_thread_create_stoppable(&b, waiting_helper, &f[1], stop_waiting, &f[1]), 0);
    wait_started(&f[0]);
    wait_started(&f[1]);
    fail_to_allocate();
}

static void test_failing_run_stops_and_joins_its_helpers(void **state)
{
    (void)state;
    static frame f[2];
    frame_init(&f[0]);
    frame_init(&f[1]);
    double t0 = now();
    assert_int_equal(unwinds(start_two_then_fail, f), 1);
    assert_false(thread_alive(atomic_load(&f[0].tid)));
    assert_false(thread_alive(atomic_load(&f[1].tid)));
    assert_int_equal(atomic_load(&f[1].stopped), 1);
    double took = now() - t0;
    if (took >= GIVE_UP_S / 2) /* they stopped when told, not when they gave up */
        fail_msg("the helpers took %.2f s to stop", took);
}

/* ---- the lock held while allocating is let go before the helpers are joined ---- */

static void fail_holding_the_lock(void *arg)
{
    frame *f = arg;
    tl_oom_lock(f->lock);
    pthread_t th;
    assert_int_equal(tl_thread_create(&th, locking_helper, f), 0);
    wait_started(f);
    fail_to_allocate();
}

static void test_lock_held_is_released_for_the_helpers(void **state)
{
    (void)state;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static frame f;
    frame_init(&f);
    f.lock = &lock;
    assert_int_equal(unwinds(fail_holding_the_lock, &f), 1);
    assert_int_equal(atomic_load(&f.locked), 1);
    assert_false(thread_alive(atomic_load(&f.tid)));
    assert_int_equal(pthread_mutex_trylock(&lock), 0); /* released, and not taken again */
    pthread_mutex_unlock(&lock);
}

/* ---- a helper joined before the failure is not joined again ---- */

static void join_then_fail(void *arg)
{
    frame *f = arg;
    pthread_t th;
    assert_int_equal(tl_thread_create_stoppable(&th, waiting_helper, f, stop_waiting, f), 0);
    wait_started(f);
    stop_waiting(f);
    tl_thread_join(th, NULL); /* no longer tracked: the failure below joins nothing */
    fail_to_allocate();
}

static void test_joined_helpers_are_not_joined_again(void **state)
{
    (void)state;
    static frame f;
    frame_init(&f);
    assert_int_equal(unwinds(join_then_fail, &f), 1);
    assert_false(thread_alive(atomic_load(&f.tid)));
}

/* ---- a file written around the page cache: its writer thread ---- */

/* Threads of this process (/proc/self/task). */
static int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static FILE *direct_file;

static void write_blocks_then_fail(void *arg)
{
    static unsigned char blocks[3u << 20]; /* static: nothing to leak when this unwinds */
    direct_file = tl_direct_fopen(arg);
    assert_non_null(direct_file);
    assert_int_equal(fwrite(blocks, 1, sizeof blocks, direct_file), sizeof blocks); /* its writer runs */
    fail_to_allocate();
}

/* The writer thread of a file being made is stopped and joined when the thread that
 * started it unwinds; closing the file after says the write failed, and joins nothing
 * twice. */
static void test_direct_file_writer_stops_with_its_starter(void **state)
{
    (void)state;
    char path[] = "/tmp/tl-unwind-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    int before = task_count();
    assert_int_equal(unwinds(write_blocks_then_fail, path), 1);
    assert_int_equal(task_count(), before);
    /* a thread started now takes the ended writer's place (glibc reuses a joined thread's
     * descriptor): a second join of the writer would wait for this one to end */
    static frame f;
    frame_init(&f);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, waiting_helper, &f), 0);
    wait_started(&f);
    errno = 0;
    assert_int_equal(fclose(direct_file), EOF);
    assert_int_equal(errno, ECANCELED);
    assert_true(thread_alive(atomic_load(&f.tid)));
    stop_waiting(&f);
    pthread_join(th, NULL);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failing_helper_joins_its_helper_first),
        cmocka_unit_test(test_failing_run_stops_and_joins_its_helpers),
        cmocka_unit_test(test_lock_held_is_released_for_the_helpers),
        cmocka_unit_test(test_joined_helpers_are_not_joined_again),
        cmocka_unit_test(test_direct_file_writer_stops_with_its_starter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
