/*
 * direct_out.c - a new file whose bulk is written around the page cache (see direct_out.h).
 */
#define _GNU_SOURCE /* O_DIRECT, fopencookie */
#include "io/direct_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Direct writes need the buffer, the length and the file offset aligned to the device's
 * logical block (512 bytes or 4 KiB); 4 KiB serves both. */
#define DIRECT_ALIGN 4096u
#define DIRECT_BLOCK (1u << 20)

typedef struct direct_out {
    int fd;
    int direct;  /* O_DIRECT is on */
    char *block; /* DIRECT_BLOCK bytes, aligned; allocated at the first write */
    size_t len;  /* bytes waiting in it */
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

/* Returns n, or 0 with errno set on a failure (fopencookie: never negative, which
 * glibc's fwrite would count as bytes written). */
static ssize_t cookie_write(void *c, const char *p, size_t n)
{
    direct_out *w = c;
    if (!w->block) {
        void *b = NULL;
        if (posix_memalign(&b, DIRECT_ALIGN, DIRECT_BLOCK) != 0) {
            errno = ENOMEM;
            return 0;
        }
        w->block = b;
    }
    size_t done = 0;
    while (done < n) {
        size_t k = DIRECT_BLOCK - w->len < n - done ? DIRECT_BLOCK - w->len : n - done;
        memcpy(w->block + w->len, p + done, k);
        w->len += k;
        done += k;
        if (w->len == DIRECT_BLOCK) {
            if (write_all(w, w->block, w->len) != 0)
                return 0;
            w->len = 0;
        }
    }
    return (ssize_t)n;
}

static int cookie_close(void *c)
{
    direct_out *w = c;
    int rc = 0;
    if (w->len && ((w->direct && buffered(w) != 0) || write_all(w, w->block, w->len) != 0))
        rc = -1;
    int saved = errno;
    if (close(w->fd) != 0 && rc == 0)
        saved = errno, rc = -1;
    free(w->block);
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
        *w = (direct_out){fd, try_direct(fd), NULL, 0};
        f = fopencookie(w, "wb", (cookie_io_functions_t){NULL, cookie_write, NULL, cookie_close});
    }
    if (!f) {
        int saved = errno;
        free(w);
        close(fd);
        errno = saved ? saved : ENOMEM;
    }
    return f;
}
