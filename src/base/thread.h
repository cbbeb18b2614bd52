/*
 * thread.h - helper threads that never take the process's termination signals.
 *
 * The main thread creates the output files and owns their cleanup; a SIGINT handled on
 * a helper thread could remove a temporary directory's files while the main thread adds
 * one, and leave the directory behind.  So every helper thread (readers, the workbook's
 * workers) starts with SIGINT, SIGTERM and SIGHUP blocked, and the handler always runs on
 * the main thread.
 */
#ifndef TL_THREAD_H
#define TL_THREAD_H

#include <pthread.h>

/* pthread_create() with the termination signals blocked in the new thread, and its
 * allocation failures caught for a run's thread that has a catch point (base/util.h). */
int tl_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

/* The same for a helper that may wait for its starter: stop(stop_arg) wakes it and has
 * it end, should the starter unwind after an allocation failure (base/util.h). */
int tl_thread_create_stoppable(pthread_t *thread, void *(*fn)(void *), void *arg, void (*stop)(void *),
                               void *stop_arg);

/* pthread_join(), then the joining thread unwinds if a helper ran out of memory. */
int tl_thread_join(pthread_t thread, void **ret);

#endif
