/*
 * direct_out.c - a new file whose bulk is written around the page cache (see direct_out.h).
 */
#define _GNU_SOURCE /* O_DIRECT, fopencookie */
#include "io/direct_out.h"

#include "base/thread.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Direct writes need the buffer, the length and the file offset aligned to the device's
 * logical block (512 bytes or 4 KiB); 4 KiB serves both. */
#define DIRECT_ALIGN 4096u
#define DIRECT_BLOCK (1u << 20)

/*
 * A direct write returns once the disk has the block, so the thread that makes the file
 * would wait for the disk at every block.  A full block is handed instead to a writer
 * thread of the file's own, started at the first one, and the maker fills the other:
 * the disk's time is spent beside the making, with two blocks of memory.  Where the
 * thread cannot be started, the blocks are written by the maker.
 */
typedef struct direct_out {
    int fd;
    int direct;     /* O_DIRECT is on (changed by whichever thread writes the blocks) */
    char *block[2]; /* DIRECT_BLOCK bytes each, aligned; allocated at the first write */
    size_t mapped[2]; /* how much of each block tl_populate_ahead has mapped */
    int cur;        /* the block being filled */
    size_t len;     /* bytes waiting in it */
    /* the writer thread, under mu */
    pthread_t thread;
    int started;    /* the thread runs (or ran: it is joined by close or by its starter's unwinding) */
    int stopped;    /* told to end by the unwinding of the thread that started it */
    int quit;       /* told to end by close */
    const char *pending; /* a full block handed over and not yet written, or NULL */
    int err;        /* errno of a failed block write, or 0 */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} direct_out;

/* Turn O_DIRECT off: for the last partial block, or for good when the file system
 * refuses it. */
static int buffered(direct_out *w)
{
    int fl = fcntl(w->fd, F_GETFL);
    if (fl < 0 || fcntl(w->fd, F_SETFL, fl & ~O_DIRECT) != 0)
        return -1;
    w->direct = 0;
    return 0;
}

static int write_all(direct_out *w, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EINVAL && w->direct) { /* no direct writes here after all */
            if (buffered(w) != 0)
                return -1;
            continue;
        }
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        if (w->direct && (size_t)k % DIRECT_ALIGN && buffered(w) != 0)
            return -1; /* a short direct write leaves the offset unaligned */
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void *writer_main(void *arg)
{
    direct_out *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->pending && !w->quit && !w->stopped)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->pending)
            break;
        const char *b = w->pending;
        pthread_mutex_unlock(&w->mu);
        int e = write_all(w, b, DIRECT_BLOCK) != 0 ? errno : 0;
        pthread_mutex_lock(&w->mu);
        if (e && !w->err)
            w->err = e;
        w->pending = NULL;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void writer_stop(void *arg)
{
    direct_out *w = arg;
    pthread_mutex_lock(&w->mu);
    w->stopped = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Wait until the writer has no block (0), or it failed or was stopped (-1, errno set). */
static int writer_idle(direct_out *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->pending && !w->err)
        pthread_cond_wait(&w->cv, &w->mu);
    int e = w->err ? w->err : w->stopped ? ECANCELED : 0;
    pthread_mutex_unlock(&w->mu);
    if (e)
        errno = e;
    return e ? -1 : 0;
}

/* The full current block: to the writer thread (the maker goes on in the other), or
 * written here when there is no thread. */
static int block_full(direct_out *w)
{
    if (!w->started && tl_thread_create_stoppable(&w->thread, writer_main, w, writer_stop, w) == 0)
        w->started = 1;
    if (!w->started)
        return write_all(w, w->block[w->cur], DIRECT_BLOCK);
    if (writer_idle(w) != 0)
        return -1;
    pthread_mutex_lock(&w->mu);
    w->pending = w->block[w->cur];
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    w->cur ^= 1;
    return 0;
}

/* Returns n, or 0 with errno set on a failure (fopencookie: never negative, which
 * glibc's fwrite would count as bytes written). */
static ssize_t cookie_write(void *c, const char *p, size_t n)
{
    direct_out *w = c;
    if (!w->block[0]) {
        for (int i = 0; i < 2; i++) {
            void *b = NULL;
            if (posix_memalign(&b, DIRECT_ALIGN, DIRECT_BLOCK) != 0) {
                errno = ENOMEM;
                return 0;
            }
            w->block[i] = b;
        }
    }
    size_t done = 0;
    while (done < n) {
        size_t k = DIRECT_BLOCK - w->len < n - done ? DIRECT_BLOCK - w->len : n - done;
        tl_populate_ahead(w->block[w->cur], DIRECT_BLOCK, w->len + k, &w->mapped[w->cur]);
        memcpy(w->block[w->cur] + w->len, p + done, k);
        w->len += k;
        done += k;
        if (w->len == DIRECT_BLOCK) {
            if (block_full(w) != 0)
                return 0;
            w->len = 0;
        }
    }
    return (ssize_t)n;
}

/* The writer's last block written and the thread ended: 0, or -1 with errno set when a
 * block failed.  A thread its starter's unwinding stopped was joined there. */
static int writer_end(direct_out *w)
{
    if (!w->started)
        return 0;
    int rc = writer_idle(w);
    int e = errno;
    pthread_mutex_lock(&w->mu);
    int joined = w->stopped;
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (!joined)
        tl_thread_join(w->thread, NULL);
    errno = e;
    return rc;
}

static int cookie_close(void *c)
{
    direct_out *w = c;
    int rc = writer_end(w);
    if (rc == 0 && w->len && ((w->direct && buffered(w) != 0) || write_all(w, w->block[w->cur], w->len) != 0))
        rc = -1;
    int saved = errno;
    if (close(w->fd) != 0 && rc == 0)
        saved = errno, rc = -1;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->block[0]);
    free(w->block[1]);
    free(w);
    errno = saved;
    return rc;
}

/* O_DIRECT for a regular file only (on a pipe it would mean packet mode), and only where
 * the file system takes it. */
static int try_direct(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
}

FILE *tl_direct_fopen(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return NULL;
    direct_out *w = calloc(1, sizeof *w);
    FILE *f = NULL;
    if (w) {
        w->fd = fd;
        w->direct = try_direct(fd);
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        f = fopencookie(w, "wb", (cookie_io_functions_t){NULL, cookie_write, NULL, cookie_close});
        if (!f) {
            pthread_mutex_destroy(&w->mu);
            pthread_cond_destroy(&w->cv);
        }
    }
    if (!f) {
        int saved = errno;
        free(w);
        close(fd);
        errno = saved ? saved : ENOMEM;
    }
    return f;
}
