/*
 * cleanup.h - the temporary paths of a process's outputs, removed on every exit it can
 * catch, and the signals that end it.
 *
 * Every temporary file or directory an output is staged in, and every directory made for
 * one, is tracked here from the moment it exists until it is renamed into place or
 * removed; the list has no fixed size.  An error path calls tl_cleanup_remove_all(); the
 * handlers installed by tl_cleanup_install() do the same for SIGINT, SIGTERM and SIGHUP
 * and end the process with status 128 + signal ("nothing written").  SIGPIPE and SIGXFSZ
 * are ignored instead, so that a reader that went away or a file size limit is an EPIPE
 * or EFBIG error of the write that met it: a one-line message, exit status 1, the same
 * cleanup.
 *
 * Once a run's outputs are in place (tl_cleanup_set_written), a terminating signal no
 * longer means "nothing written": the handler says "interrupted after the outputs were
 * written" and the process dies by the signal itself (its default action), so that a
 * caller can tell the two apart (exit status 130 versus killed by SIGINT).
 *
 * The list may be changed from any thread: a change blocks the terminating signals in
 * its thread and holds a spin lock that the handler also takes, so the handler (run by a
 * thread that is not changing the list) never sees it half changed.
 */
#ifndef TL_CLEANUP_H
#define TL_CLEANUP_H

#include <signal.h>

/* Install the handlers (SIGINT, SIGTERM, SIGHUP) and ignore SIGPIPE and SIGXFSZ. */
void tl_cleanup_install(void);

/* Remember `path` (a file, or a directory to be removed after what it holds). */
void tl_cleanup_track(const char *path);

/* Forget `path` (renamed into place, or removed by its owner). */
void tl_cleanup_untrack(const char *path);

/* Remove every tracked path, newest first, and forget them all. */
void tl_cleanup_remove_all(void);

/* How many paths are tracked (for tests). */
size_t tl_cleanup_count(void);

/* Block, in the calling thread, the signals the handlers take; *old gets the mask to
 * restore with tl_cleanup_unblock (where a signal that came meanwhile is delivered). */
void tl_cleanup_block(sigset_t *old);
void tl_cleanup_unblock(const sigset_t *old);

/* 1: the outputs are in place, a signal now ends the process saying so; 0: not (yet). */
void tl_cleanup_set_written(int written);

/* In the child of a fork: the list and its lock start afresh (the lock may have been held
 * by a thread of the parent that the child does not have; the paths are the parent's to
 * remove). */
void tl_cleanup_after_fork(void);

#endif
