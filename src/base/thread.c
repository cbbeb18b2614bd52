/*
 * thread.c - helper threads with the termination signals blocked (see thread.h).
 */
#include "base/thread.h"

#include <signal.h>

int tl_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old); /* the new thread inherits the mask */
    int rc = pthread_create(thread, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
