/*
 * util.h - the small things every module uses: checked allocation, an error slot,
 * a growable byte buffer, and warnings.
 */
#ifndef TL_UTIL_H
#define TL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* Allocation that never returns NULL: out of memory ends the process with a message
 * (after the fatal clean-up below), unless the failing thread set a catch point with
 * tl_oom_catch: then it unwinds there (longjmp) with the message kept for it. */
void *tl_xmalloc(size_t n);
void *tl_xcalloc(size_t n, size_t size);
/* Zeroed memory written through now: for a table read before it is written (a hash
 * table's probes, counters).  A large calloc block is left untouched, so each of its
 * pages would be faulted twice there (the shared zero page on the first read, a copy on
 * the first write, which also flushes the other threads' TLBs). */
void *tl_xcalloc_dense(size_t n, size_t size);
void *tl_xrealloc(void *p, size_t n);
/* tl_xrealloc of a block whose first `used` bytes are in use (used <= n): where realloc
 * would copy them (blocks from 64 KiB to 32 MiB), into a new block whose pages for them
 * are mapped in one call first; larger blocks are moved by the kernel without a copy. */
void *tl_xrealloc_mapped(void *p, size_t used, size_t n);
/* The whole pages of [p, p + n) mapped for writing in one call, for a block about to be
 * written through (a file read into it, an array filled): the first write to a fresh
 * page otherwise takes a page fault of its own, which costs microseconds in a virtual
 * machine.  Blocks under 64 KiB, and kernels without MADV_POPULATE_WRITE (before Linux
 * 5.14), are left as they are; nothing is written, so it never changes what is there. */
void tl_populate(void *p, size_t n);
/* tl_xmalloc of a block the caller writes whole at once (an array filled from another):
 * its pages mapped in one call (tl_populate). */
void *tl_xmalloc_filled(size_t n);
/* For a block filled front to back whose end is not known (room for the worst case, an
 * array grown by doubling): the pages up to a little past `used` mapped, a step at a time
 * as it grows; *mapped is how far they are (0 at first), cap the block's size.  A block
 * moved by realloc keeps its count: the pages copied are mapped as well. */
void tl_populate_more(void *block, size_t cap, size_t used, size_t *mapped);
#define TL_POPULATE_STEP ((size_t)256 * 1024)
static inline void tl_populate_ahead(void *block, size_t cap, size_t used, size_t *mapped)
{
    if (used + TL_POPULATE_STEP / 2 > *mapped && *mapped < cap)
        tl_populate_more(block, cap, used, mapped);
}
char *tl_xstrdup(const char *s);

/* What an allocation failure calls before the process ends: the removal of the
 * outputs being written (io/output.h installs it). */
void tl_set_fatal_cleanup(void (*fn)(void));

/* The input the calling thread is reading now (NULL: none), named when memory runs
 * out, in this thread or in a helper of the run that has none of its own; returns the
 * one set before, to put back. */
const char *tl_reading(const char *path);

/* A catch point for allocation failures in the calling thread (NULL: none, the failure
 * ends the process).  A library front end that must outlive a run that ran out of memory
 * (the Python module) sets one around the run: after the longjmp, the run's state is
 * abandoned (its memory not given back), and tl_oom_message() says what failed.  The
 * failures of this thread come back here, and those of its helpers (below) at its next
 * tl_xmalloc or tl_oom_check (which tl_pool_wait and tl_thread_join make). */
#include <setjmp.h>
void tl_oom_catch(jmp_buf *at);
const char *tl_oom_message(void);

/* For a helper thread of a run (tl_thread_create's threads, the pool's jobs): the run it
 * works for is told by the thread that starts it or queues its job (tl_oom_context(),
 * taken there: a helper scheduled late, after its run has already unwound, must still
 * know it belongs to a run that catches).  tl_oom_helper(ctx, fn, arg) runs fn(arg) with
 * its allocation failures caught when ctx is not 0: returns 0, or -1 after a failure,
 * which is then pending for the run's thread: it unwinds at its next tl_xmalloc or
 * tl_oom_check().  With ctx 0 (no run catches: the programs) a failure ends the process,
 * as always.  A helper still at work after its run's thread has unwound (the run
 * abandoned) ends quietly when it fails, its failure told to no later run.
 * tl_oom_reset() clears a pending failure (the catching thread, once it has unwound). */
unsigned tl_oom_context(void);
int tl_oom_helper(unsigned ctx, void (*fn)(void *), void *arg);
void tl_oom_check(void);
void tl_oom_reset(void);

/* A thread that unwinds (its own failure, or its run's) first joins the helper threads
 * it started and has not joined: they may work on its frames, which are gone once it
 * has left them.  Its other helpers stop at their next allocation meanwhile.
 * tl_oom_track(thread, stop, arg) records a helper the calling thread has started for a
 * catching run (base/thread.c does); stop(arg), when given, wakes a helper that may be
 * waiting for its starter (a queue it fills, work it is given).  tl_oom_untrack(thread)
 * when it has been joined. */
#include <pthread.h>
void tl_oom_track(pthread_t thread, void (*stop)(void *), void *arg);
void tl_oom_untrack(pthread_t thread);

/* Lock mu for a section that allocates: an allocation failure inside it releases mu
 * before the thread joins its helpers and unwinds (they may need it to end).  Returns
 * the lock declared before (a section around this one), for tl_oom_unlock to restore. */
pthread_mutex_t *tl_oom_lock(pthread_mutex_t *mu);
void tl_oom_unlock(pthread_mutex_t *mu, pthread_mutex_t *outer);

/* In the child of a fork made while other threads ran: this module's locks start afresh
 * (a thread the child does not have may have held one), and no failure is pending. */
void tl_util_after_fork(void);

/* Grow *p (an array of *cap elements of size `size`) so that it holds at least `need`. */
void tl_grow(void **p, size_t *cap, size_t need, size_t size);

/*
 * Give the pages of freed memory back to the system.  Memory a helper thread allocated
 * and another thread freed stays with the helper's malloc arena, where the threads that
 * allocate next do not look: after a large structure made on a helper is freed, this
 * keeps the process's resident size that of what it holds.  A no-op without glibc, and
 * under a sanitizer (its own malloc).
 */
void tl_release_freed(void);
/* The check inline: on the hot paths (an event's records, a byte of a repr) the room is
 * nearly always there already. */
static inline void tl_grow_for(void **p, size_t *cap, size_t need, size_t size)
{
    if (need > *cap)
        tl_grow(p, cap, need, size);
}
#define TL_GROW(arr, cap, need) tl_grow_for((void **)&(arr), &(cap), (need), sizeof *(arr))
/* TL_GROW for an array filled front to back: its pages mapped ahead of the writes
 * (tl_populate_ahead; `mapped` starts at 0). */
#define TL_GROW_AHEAD(arr, cap, need, mapped) \
    (TL_GROW(arr, cap, need), tl_populate_ahead((arr), (cap) * sizeof *(arr), (need) * sizeof *(arr), &(mapped)))

/*
 * An error slot.  Functions that can fail take a `tl_error *` and, on failure, write one
 * line into it (no trailing newline) naming the file, sheet, row or column at fault.
 * Only the first message is kept: it is the cause, later ones are consequences.
 */
typedef struct tl_error {
    int set;
    char msg[1024];
} tl_error;

void tl_error_set(tl_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_error_vset(tl_error *e, const char *fmt, va_list ap);

/* A message that begins with the path `from` (a temporary file) begins with `to` instead
 * (the output it stands for): a user knows the one, not the other. */
void tl_error_rename_path(tl_error *e, const char *from, const char *to);

/* Warnings and notes go to stderr as "tlcompare: warning: ..." unless silenced. */
extern int tl_quiet;
/* The program named at the start of warnings and fatal errors ("tlcompare"); a program
 * sets it once, first thing in main(). */
extern const char *tl_progname;
void tl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer (always NUL-terminated when len > 0 or after tl_buf_cstr). */
typedef struct tl_buf {
    char *data;
    size_t len;
    size_t cap;
} tl_buf;

void tl_buf_reserve(tl_buf *b, size_t extra);
/* Append n bytes / one byte (inline: the scanners append a value a few bytes at a time). */
static inline void tl_buf_add(tl_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap)
        tl_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}
static inline void tl_buf_addc(tl_buf *b, char c)
{
    if (b->len + 2 > b->cap)
        tl_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
void tl_buf_adds(tl_buf *b, const char *s);
void tl_buf_printf(tl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *tl_buf_cstr(tl_buf *b);
void tl_buf_clear(tl_buf *b);
void tl_buf_free(tl_buf *b);

/* Where the last component of `path` is: path[*start .. *end), trailing slashes left out
 * ("out/h100_csvs/" -> "h100_csvs"). */
void tl_path_base(const char *path, size_t *start, size_t *end);

/* The last path component without its extension: "runs/base.xlsx" -> "base",
 * "out/h100_csvs/" -> "h100_csvs".  Returns a malloc'd string. */
char *tl_path_stem(const char *path);

/* 1 when the path names an existing directory, 0 otherwise. */
int tl_is_dir(const char *path);

/*
 * Messages quote input text ('name'), and input can be anything: a 100 MB column name,
 * a tag with a line break.  tl_message_clean() appends `msg` to `out` with every quoted
 * part longer than TL_QUOTE_MAX bytes cut (its full length given) and every control
 * character escaped (\n, \t, \xHH), so that a message stays one short line (at most
 * TL_MESSAGE_MAX bytes, whatever fooled the quote rules).  The
 * error slot and the warnings pass every message through it.
 */
#define TL_QUOTE_MAX 100
#define TL_MESSAGE_MAX 2000 /* a cleaned message longer than this loses its middle */
void tl_message_clean(tl_buf *out, const char *msg, size_t n);

/* Append s[0..n) with each byte that is not part of a valid UTF-8 sequence replaced by
 * U+FFFD: JSON and Markdown readers reject invalid UTF-8, and op names come from input. */
void tl_buf_add_utf8(tl_buf *b, const char *s, size_t n);

/* The same for a whole buffer, in place. */
void tl_utf8_sanitize(tl_buf *b);

/* The time written into outputs (a workbook's creation time, its zip entries' dates):
 * SOURCE_DATE_EPOCH when set to a whole number of seconds (the reproducible-builds
 * convention, so two runs can be compared byte for byte), else now.  (time_t)-1 when
 * neither is known. */
#include <time.h>
time_t tl_output_time(void);

#endif
