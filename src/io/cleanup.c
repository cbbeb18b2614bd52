/*
 * cleanup.c - tracked temporary paths and the terminating signals (see cleanup.h).
 */
#include "io/cleanup.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

/* The tracked paths, oldest first; a forgotten one leaves a NULL until the list is
 * compacted.  Guarded by `busy`, which the signal handler takes too (and never gives
 * back: it ends the process). */
static char **paths;
static size_t npaths, cap, nlive;
static atomic_flag busy = ATOMIC_FLAG_INIT;
static volatile sig_atomic_t written;

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
#define NHANDLED (sizeof handled / sizeof handled[0])

void tl_cleanup_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&set, handled[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void tl_cleanup_unblock(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

static void acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        sched_yield();
}

static void release(void) { atomic_flag_clear_explicit(&busy, memory_order_release); }

void tl_cleanup_track(const char *path)
{
    char *copy = tl_xstrdup(path);
    /* grown before the lock: an allocation failure must not happen while it is held */
    sigset_t old;
    tl_cleanup_block(&old);
    acquire();
    if (npaths == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        char **grown = realloc(paths, ncap * sizeof *grown);
        if (!grown) {
            release();
            tl_cleanup_unblock(&old);
            free(copy);
            tl_xmalloc((size_t)-1 / 2); /* the out-of-memory path, outside the lock */
            return;
        }
        paths = grown;
        cap = ncap;
    }
    paths[npaths++] = copy;
    nlive++;
    release();
    tl_cleanup_unblock(&old);
}

/* Squeeze out the forgotten slots once they are most of the list (lock held). */
static void compact(void)
{
    size_t k = 0;
    for (size_t i = 0; i < npaths; i++)
        if (paths[i])
            paths[k++] = paths[i];
    npaths = k;
}

void tl_cleanup_untrack(const char *path)
{
    char *gone = NULL;
    sigset_t old;
    tl_cleanup_block(&old);
    acquire();
    for (size_t i = npaths; i-- > 0;) {
        if (paths[i] && strcmp(paths[i], path) == 0) {
            gone = paths[i];
            paths[i] = NULL;
            nlive--;
            break;
        }
    }
    if (npaths > 64 && nlive < npaths / 4)
        compact();
    while (npaths && !paths[npaths - 1])
        npaths--;
    release();
    tl_cleanup_unblock(&old);
    free(gone);
}

/* Newest first: the files inside a temporary directory go before the directory, and a
 * directory made for an output after what was staged in it. */
static void remove_paths(void)
{
    for (size_t i = npaths; i-- > 0;)
        if (paths[i] && unlink(paths[i]) != 0)
            rmdir(paths[i]);
}

void tl_cleanup_remove_all(void)
{
    sigset_t old;
    tl_cleanup_block(&old);
    acquire();
    remove_paths();
    char **was = paths;
    size_t n = npaths;
    paths = NULL;
    npaths = cap = nlive = 0;
    written = 0;
    release();
    tl_cleanup_unblock(&old);
    for (size_t i = 0; i < n; i++)
        free(was[i]);
    free(was);
}

size_t tl_cleanup_count(void)
{
    sigset_t old;
    tl_cleanup_block(&old);
    acquire();
    size_t n = nlive;
    release();
    tl_cleanup_unblock(&old);
    return n;
}

void tl_cleanup_set_written(int w) { written = w; }

void tl_cleanup_after_fork(void)
{
    /* the child has one thread: nobody else can hold or take the lock now */
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    paths = NULL;
    npaths = cap = nlive = 0;
    written = 0;
    atomic_flag_clear(&busy);
}

static void say(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void on_signal(int sig)
{
    acquire();
    remove_paths();
    if (!written)
        _exit(128 + sig); /* nothing was written: the documented status */
    /* The outputs are in place: say so, and end by the signal itself, which a caller can
     * tell from the status 128 + signal of a run that wrote nothing. */
    say(tl_progname);
    say(": interrupted after the outputs were written\n");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
}

static void out_of_memory_cleanup(void)
{
    /* called on the failing thread, which holds no lock of ours: tl_cleanup_track frees
     * it before it allocates */
    acquire();
    remove_paths();
    release();
}

void tl_cleanup_install(void)
{
    tl_set_fatal_cleanup(out_of_memory_cleanup);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&sa.sa_mask, handled[i]); /* one handler at a time */
    for (size_t i = 0; i < NHANDLED; i++)
        sigaction(handled[i], &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
}
