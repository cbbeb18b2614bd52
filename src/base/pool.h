/*
 * pool.h - a few worker threads that run jobs while the caller goes on with other work.
 *
 * The workers take jobs oldest first.  When the caller has to wait for jobs, it runs
 * queued ones itself, newest first, so that it and the workers meet in the middle
 * instead of the caller sitting idle: on two cores, the backlog at the end of a run
 * is otherwise the one part of the work nobody shares.  Jobs must therefore not depend
 * on each other's order; each says where its own failures go.
 *
 * With zero threads (or when none can be started) every job runs in tl_pool_wait(),
 * in the caller, newest first like the rest.
 */
#ifndef TL_POOL_H
#define TL_POOL_H

#include <stddef.h>

typedef struct tl_pool tl_pool;

/* A job: `worker` is 0 .. threads-1 for the pool's threads and `threads` for the caller,
 * so that a kind of job can keep reusable state per thread (e.g. a compressor). */
typedef void (*tl_job_fn)(void *arg, int worker);

/* A pool of `threads` workers (0 .. 64; fewer when threads cannot be started). */
tl_pool *tl_pool_new(int threads);

/* The number of workers + 1: the bound of the `worker` argument of every job. */
int tl_pool_slots(const tl_pool *p);

/* Queue fn(arg); returns the number of jobs queued so far (this one's number + 1). */
size_t tl_pool_add(tl_pool *p, tl_job_fn fn, void *arg);

/* Return once jobs 0 .. upto-1 have run, running queued ones meanwhile. */
void tl_pool_wait(tl_pool *p, size_t upto);

/* Stop the workers and free the pool: after the queued jobs have run, or, with
 * `discard`, after the running ones only (the others never run). */
void tl_pool_free(tl_pool *p, int discard);

#endif
