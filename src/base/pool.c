/*
 * pool.c - worker threads that run queued jobs (see pool.h).
 */
#include "base/pool.h"

#include "base/thread.h"
#include "base/util.h"

#include <pthread.h>
#include <stdlib.h>

#define POOL_MAX_THREADS 64

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

typedef struct pool_job {
    tl_job_fn fn;
    void *arg;
    unsigned oom_ctx; /* the run of the thread that queued it (base/util.h) */
    unsigned char state;
} pool_job;

typedef struct pool_worker {
    tl_pool *pool;
    int index;
    pthread_t thread;
} pool_worker;

struct tl_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a job was queued, or the pool stops */
    pthread_cond_t done;  /* a job ended */
    pool_job *jobs;       /* every job queued, in order (a few dozen per run) */
    size_t n, cap;
    size_t next;          /* the oldest job not taken */
    size_t ended;         /* jobs 0 .. ended-1 have run */
    int stop, discard;
    int nthreads;
    pool_worker workers[POOL_MAX_THREADS];
};

/* Take job i (under mu). */
static void take(tl_pool *p, size_t i)
{
    p->jobs[i].state = JOB_RUNNING;
    while (p->next < p->n && p->jobs[p->next].state != JOB_QUEUED)
        p->next++;
}

typedef struct call {
    pool_job j;
    int worker;
} call;

static void call_job(void *p)
{
    call *c = p;
    c->j.fn(c->j.arg, c->worker);
}

/* Run job i, taken by `worker`: called and returns under mu, released meanwhile.  A job
 * that runs out of memory ends as done: its waiter unwinds (base/util.h). */
static void run(tl_pool *p, size_t i, int worker)
{
    call c = {p->jobs[i], worker}; /* the array may move while the lock is released */
    pthread_mutex_unlock(&p->mu);
    if (worker == p->nthreads)
        c.j.fn(c.j.arg, worker); /* the waiting thread itself: its own failures unwind it */
    else
        tl_oom_helper(c.j.oom_ctx, call_job, &c);
    pthread_mutex_lock(&p->mu);
    p->jobs[i].state = JOB_DONE;
    while (p->ended < p->n && p->jobs[p->ended].state == JOB_DONE)
        p->ended++;
    pthread_cond_broadcast(&p->done);
}

static void *worker_main(void *arg)
{
    pool_worker *w = arg;
    tl_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next == p->n)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->next == p->n || p->discard)
            break;
        size_t i = p->next;
        take(p, i);
        run(p, i, w->index);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Have the workers end once the queue is empty, or at once (the jobs not taken
 * dropped) when `discard`. */
static void workers_stop(tl_pool *p, int discard)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    p->discard = discard;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* The starter unwinds after an allocation failure (base/util.h). */
static void pool_stop(void *arg) { workers_stop(arg, 1); }

tl_pool *tl_pool_new(int threads)
{
    tl_pool *p = tl_xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    for (int t = 0; t < threads; t++) {
        p->workers[t] = (pool_worker){p, t, 0};
        if (tl_thread_create_stoppable(&p->workers[t].thread, worker_main, &p->workers[t], pool_stop, p) != 0)
            break; /* fewer threads; with none, the caller runs every job */
        p->nthreads = t + 1;
    }
    return p;
}

int tl_pool_slots(const tl_pool *p) { return p->nthreads + 1; }

size_t tl_pool_add(tl_pool *p, tl_job_fn fn, void *arg)
{
    pthread_mutex_t *outer = tl_oom_lock(&p->mu);
    TL_GROW(p->jobs, p->cap, p->n + 1);
    p->jobs[p->n++] = (pool_job){fn, arg, tl_oom_context(), JOB_QUEUED};
    size_t n = p->n;
    pthread_cond_signal(&p->work);
    tl_oom_unlock(&p->mu, outer);
    return n;
}

void tl_pool_wait(tl_pool *p, size_t upto)
{
    pthread_mutex_lock(&p->mu);
    size_t end = upto < p->n ? upto : p->n;
    while (p->ended < end) {
        /* The newest job before `end` that nobody has taken (there is one whenever the
         * oldest untaken job, `next`, is before `end`). */
        size_t i = end;
        while (i > p->next && p->jobs[i - 1].state != JOB_QUEUED)
            i--;
        if (i > p->next) {
            take(p, i - 1);
            run(p, i - 1, p->nthreads);
        } else {
            pthread_cond_wait(&p->done, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    tl_oom_check();
}

void tl_pool_free(tl_pool *p, int discard)
{
    if (!p)
        return;
    if (!discard)
        tl_pool_wait(p, (size_t)-1);
    workers_stop(p, discard);
    for (int t = 0; t < p->nthreads; t++)
        tl_thread_join(p->workers[t].thread, NULL);
    free(p->jobs);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
