/*
 * thread.c - helper threads with the termination signals blocked (see thread.h).
 */
#include "base/thread.h"

#include <signal.h>
#include <stdlib.h>

#include "base/util.h"

/* The helper's function, with its allocation failures caught (base/util.h: the run's
 * thread unwinds when it next allocates or joins). */
typedef struct start {
    void *(*fn)(void *);
    void *arg, *ret;
    unsigned oom_ctx; /* the run of the thread that started it */
} start;

static void call(void *p)
{
    start *s = p;
    s->ret = s->fn(s->arg);
}

static void *trampoline(void *p)
{
    start s = *(start *)p;
    free(p);
    s.ret = NULL;
    tl_oom_helper(s.oom_ctx, call, &s);
    return s.ret;
}

int tl_thread_join(pthread_t thread, void **ret)
{
    tl_oom_untrack(thread); /* first: once joined, its id may be a new thread's */
    int rc = pthread_join(thread, ret);
    tl_oom_check();
    return rc;
}

int tl_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    return tl_thread_create_stoppable(thread, fn, arg, NULL, NULL);
}

int tl_thread_create_stoppable(pthread_t *thread, void *(*fn)(void *), void *arg, void (*stop)(void *),
                               void *stop_arg)
{
    start *s = malloc(sizeof *s);
    if (!s)
        return -1;
    *s = (start){fn, arg, NULL, tl_oom_context()};
    unsigned ctx = s->oom_ctx; /* s belongs to the new thread once it runs */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old); /* the new thread inherits the mask */
    int rc = pthread_create(thread, NULL, trampoline, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        free(s);
    else if (ctx)
        tl_oom_track(*thread, stop, stop_arg);
    return rc;
}
