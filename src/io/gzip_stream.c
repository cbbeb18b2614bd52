/*
 * gzip_stream.c - plain or gzip bytes of a file or a memory block, as one stream.
 */
#include "io/gzip_stream.h"

#include "base/thread.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RAW_CHUNK (256u * 1024u)

/* A gzip file is inflated ahead on a helper thread, into a ring of slots the reader
 * copies out of: inflating is a third of the work of reading a trace, and the parse that
 * consumes the text cannot go faster than its input comes. */
#define AHEAD_SLOTS 4
#define AHEAD_SLOT (512u * 1024u)

typedef struct ahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf[AHEAD_SLOTS];
    long len[AHEAD_SLOTS]; /* a filled slot's bytes: fewer than AHEAD_SLOT then 0 at the end, -1 on an error */
    tl_error err;          /* the helper's error, for the slot that holds -1 */
    uint64_t raw_off;      /* compressed bytes consumed when the last slot was filled */
    size_t head, tail;     /* slots filled so far, and handed out in full */
    size_t pos;            /* the reader's bytes taken from slot tail */
    int stop;              /* the stream is being closed */
} ahead;

struct tl_instream {
    char *name;
    int fd;                    /* -1 for a memory stream */
    const unsigned char *mem;  /* memory stream: all of it */
    size_t mem_len, mem_pos;
    unsigned char *raw;        /* file stream: the chunk being inflated or handed out */
    size_t raw_len, raw_pos;   /* plain file: bytes in raw, bytes handed out */
    int raw_eof;               /* no more bytes from the file */
    int primed;                /* raw holds bytes read at the open, not yet handed to fill() */
    uint64_t size;             /* a regular file's size (0 for anything else) */
    int positioned;            /* read with pread at raw_consumed + raw_len, the fd shared */
    uint64_t raw_consumed;     /* bytes of the file before raw[0] */
    int gzip;
    int member_done;           /* the current gzip member ended (trailer checked) */
    int at_end;
    struct inflate_state *inf; /* ~85 KiB: on the heap */
    ahead *ah;                 /* the helper thread inflating a gzip file ahead (NULL: none) */
    int ah_tried;              /* the helper was started, or could not be */
    uint64_t ah_from;          /* text_pos when the helper started (UINT64_MAX: it never did) */
    uint64_t text_pos;         /* bytes of text handed out so far (less those put back) */
    unsigned char *back;       /* bytes put back (tl_instream_unread): handed out first */
    size_t back_len, back_pos;
};

static tl_instream *stream_new(const char *name)
{
    tl_instream *s = tl_xcalloc(1, sizeof *s);
    s->name = tl_xstrdup(name);
    s->fd = -1;
    s->ah_from = UINT64_MAX;
    return s;
}

/* One read of up to n bytes of the file: at byte `off` for a stream that shares its
 * descriptor (tl_instream_reopen), else where the descriptor is.  The bytes read (0 at
 * the end), or -1 with the error set. */
static long read_at(tl_instream *s, unsigned char *buf, size_t n, uint64_t off, tl_error *err)
{
    for (;;) {
        ssize_t k = s->positioned ? pread(s->fd, buf, n, (off_t)off) : read(s->fd, buf, n);
        if (k >= 0)
            return (long)k;
        if (errno != EINTR) {
            tl_error_set(err, "%s: read error: %s", s->name, strerror(errno));
            return -1;
        }
    }
}

/* Refill the input: for a file, the next chunk into raw; for memory, all of it at once.
 * Returns the number of new bytes (0 at the end) or -1 with the error set. */
static long fill(tl_instream *s, tl_error *err)
{
    if (s->fd < 0) {
        if (s->mem_pos >= s->mem_len)
            return 0;
        s->raw = (unsigned char *)(uintptr_t)s->mem; /* read only; the cast is for the field */
        s->raw_len = s->mem_len;
        s->raw_pos = 0;
        s->mem_pos = s->mem_len;
        return (long)s->mem_len;
    }
    if (s->raw_eof)
        return 0;
    if (s->primed) { /* the FIFO's first bytes, read when it was opened */
        s->primed = 0;
    } else {
        s->raw_consumed += s->raw_len;
        s->raw_len = s->raw_pos = 0;
    }
    while (s->raw_len < RAW_CHUNK) {
        long k = read_at(s, s->raw + s->raw_len, RAW_CHUNK - s->raw_len, s->raw_consumed + s->raw_len, err);
        if (k < 0)
            return -1;
        if (k == 0) {
            s->raw_eof = 1;
            break;
        }
        s->raw_len += (size_t)k;
    }
    return (long)s->raw_len;
}

static void start_member(tl_instream *s)
{
    isal_inflate_init(s->inf);
    s->inf->crc_flag = ISAL_GZIP; /* parse the header; check the trailer's CRC and length */
    s->member_done = 0;
}

/* Sets up gzip or plain reading from the first bytes.  Returns 0 or -1 (err set). */
static int sniff(tl_instream *s, tl_error *err)
{
    if (fill(s, err) < 0)
        return -1;
    if (s->raw_len >= 2 && s->raw[0] == 0x1f && s->raw[1] == 0x8b) {
        s->gzip = 1;
        s->inf = tl_xmalloc(sizeof *s->inf);
        start_member(s);
        s->inf->next_in = s->raw;
        s->inf->avail_in = (uint32_t)s->raw_len;
    }
    return 0;
}

tl_instream *tl_instream_open(const char *path, tl_error *err)
{
    /* O_NONBLOCK: opening a FIFO to read would wait for a writer that may never come */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    tl_instream *s = stream_new(path);
    s->fd = fd;
    s->raw = tl_xmalloc(RAW_CHUNK);
    struct stat st;
    int have_st = fstat(fd, &st) == 0;
    if (have_st && S_ISFIFO(st.st_mode)) {
        /* A writer that opened the FIFO, even one still waiting in open(), counts: the
         * read then has data or would block.  With none it sees the end at once. */
        ssize_t k;
        do
            k = read(fd, s->raw, RAW_CHUNK);
        while (k < 0 && errno == EINTR);
        if (k == 0) {
            tl_error_set(err, "%s: cannot read: a FIFO with no writer", path);
            tl_instream_close(s);
            return NULL;
        }
        if (k > 0) {
            s->raw_len = (size_t)k;
            s->primed = 1;
        }
    } else if (have_st && S_ISREG(st.st_mode)) {
        s->size = (uint64_t)st.st_size;
        tl_populate(s->raw, s->size < RAW_CHUNK ? (size_t)s->size : RAW_CHUNK); /* what reads will fill */
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (sniff(s, err) < 0) {
        tl_instream_close(s);
        return NULL;
    }
    return s;
}

tl_instream *tl_instream_open_mem(const void *data, size_t n, const char *name)
{
    tl_instream *s = stream_new(name);
    tl_error ignored = {0};
    s->mem = data;
    s->mem_len = n;
    (void)sniff(s, &ignored); /* memory cannot fail to read */
    return s;
}

int tl_instream_is_gzip(const tl_instream *s) { return s->gzip; }

/* The compressed bytes the inflate state has consumed (by whoever inflates). */
static uint64_t inflate_offset(const tl_instream *s)
{
    return s->raw_consumed + (uint64_t)(s->inf->next_in - s->raw);
}

uint64_t tl_instream_raw_offset(const tl_instream *s)
{
    if (s->ah) {
        pthread_mutex_lock(&s->ah->mu);
        uint64_t off = s->ah->raw_off;
        pthread_mutex_unlock(&s->ah->mu);
        return off;
    }
    if (s->gzip)
        return inflate_offset(s);
    return s->raw_consumed + s->raw_pos;
}

uint64_t tl_instream_seekable_size(const tl_instream *s)
{
    if (s->gzip)
        return 0;
    return s->fd < 0 ? (uint64_t)s->mem_len : s->size;
}

uint64_t tl_instream_size_hint(const tl_instream *s)
{
    if (!s->gzip)
        return s->fd < 0 ? (uint64_t)s->mem_len : s->size;
    uint64_t size = s->fd < 0 ? (uint64_t)s->mem_len : s->size;
    if (size < 18)
        return 0;
    /* the last member's ISIZE: its text's length modulo 4 GiB, bounded by deflate's
     * largest ratio (1032:1), so that a trailer that lies cannot make a small file look
     * huge */
    unsigned char t[4];
    if (s->fd < 0)
        memcpy(t, s->mem + size - 4, 4);
    else if (pread(s->fd, t, 4, (off_t)(size - 4)) != 4)
        return 0;
    uint64_t isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
    return isize < size * 1032 ? isize : size * 1032;
}

/* A gzip stream goes forward only, inflating what it passes over. */
static int seek_forward(tl_instream *s, uint64_t off, tl_error *err)
{
    if (off < s->text_pos) {
        tl_error_set(err, "%s: cannot seek back to byte %llu of gzip data", s->name, (unsigned long long)off);
        return -1;
    }
    unsigned char *scratch = off > s->text_pos ? tl_xmalloc(RAW_CHUNK) : NULL;
    while (s->text_pos < off) {
        uint64_t want = off - s->text_pos;
        long k = tl_instream_read(s, scratch, want < RAW_CHUNK ? (size_t)want : RAW_CHUNK, err);
        if (k <= 0) {
            if (k == 0)
                tl_error_set(err, "%s: cannot seek to byte %llu: the data ends first", s->name, (unsigned long long)off);
            free(scratch);
            return -1;
        }
    }
    free(scratch);
    return 0;
}

int tl_instream_seek(tl_instream *s, uint64_t off, tl_error *err)
{
    if (s->gzip)
        return seek_forward(s, off, err);
    uint64_t size = tl_instream_seekable_size(s);
    if (size == 0 || off > size) {
        tl_error_set(err, "%s: cannot seek to byte %llu", s->name, (unsigned long long)off);
        return -1;
    }
    s->back_len = s->back_pos = 0;
    s->text_pos = off;
    if (s->fd < 0) {
        /* a memory stream hands out all its bytes at once: start them at off */
        s->raw = (unsigned char *)(uintptr_t)s->mem;
        s->raw_len = s->mem_len;
        s->raw_pos = (size_t)off;
        s->mem_pos = s->mem_len;
        return 0;
    }
    if (!s->positioned && lseek(s->fd, (off_t)off, SEEK_SET) < 0) {
        tl_error_set(err, "%s: cannot seek to byte %llu: %s", s->name, (unsigned long long)off, strerror(errno));
        return -1;
    }
    s->raw_consumed = off;
    s->raw_len = s->raw_pos = 0;
    s->raw_eof = 0;
    s->primed = 0;
    return 0;
}

tl_instream *tl_instream_reopen(const tl_instream *s, tl_error *err)
{
    if (tl_instream_seekable_size(s) == 0 && !(s->gzip && (s->fd < 0 || s->size))) {
        tl_error_set(err, "%s: cannot be read twice at once", s->name);
        return NULL;
    }
    if (s->fd < 0)
        return tl_instream_open_mem(s->mem, s->mem_len, s->name);
    int fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        tl_error_set(err, "%s: cannot open again: %s", s->name, strerror(errno));
        return NULL;
    }
    tl_instream *c = stream_new(s->name);
    c->fd = fd;
    c->raw = tl_xmalloc(RAW_CHUNK);
    c->size = s->size;
    c->positioned = 1;
    c->ah_tried = 1; /* plain bytes, or inflated by the thread that reads it */
    if (s->gzip && sniff(c, err) < 0) {
        tl_instream_close(c);
        return NULL;
    }
    return c;
}

void tl_instream_set_ahead(tl_instream *s, int on)
{
    if (!s->ah)
        s->ah_tried = !on;
}

uint64_t tl_instream_ahead_from(const tl_instream *s) { return s->ah_from; }

void tl_instream_unread(tl_instream *s, const void *buf, size_t n)
{
    if (n > s->text_pos)
        n = (size_t)s->text_pos; /* never more than was handed out */
    size_t left = s->back_len - s->back_pos;
    unsigned char *b = tl_xmalloc(n + left + 1);
    memcpy(b, buf, n);
    if (left)
        memcpy(b + n, s->back + s->back_pos, left);
    free(s->back);
    s->back = b;
    s->back_len = n + left;
    s->back_pos = 0;
    s->text_pos -= n;
}

/* A large read of a plain file straight into the caller's buffer (no copy through raw):
 * the bytes read, 0 at the end, -1 with the error set. */
static long read_direct(tl_instream *s, unsigned char *buf, size_t n, tl_error *err)
{
    s->raw_consumed += s->raw_len;
    s->raw_len = s->raw_pos = 0;
    long k = read_at(s, buf, n, s->raw_consumed, err);
    if (k < 0)
        return -1;
    if (k == 0)
        s->raw_eof = 1;
    s->raw_consumed += (uint64_t)k;
    return k;
}

static long read_plain(tl_instream *s, unsigned char *buf, size_t n, tl_error *err)
{
    size_t got = 0;
    while (got < n) {
        if (s->raw_pos == s->raw_len && s->fd >= 0 && !s->primed && !s->raw_eof && n - got >= RAW_CHUNK) {
            long k = read_direct(s, buf + got, n - got, err);
            if (k < 0)
                return -1;
            if (k == 0)
                break;
            got += (size_t)k;
            continue;
        }
        if (s->raw_pos == s->raw_len) {
            long k = fill(s, err);
            if (k < 0)
                return -1;
            if (k == 0)
                break;
        }
        size_t take = s->raw_len - s->raw_pos;
        if (take > n - got)
            take = n - got;
        memcpy(buf + got, s->raw + s->raw_pos, take);
        s->raw_pos += take;
        got += take;
    }
    return (long)got;
}

static long read_gzip(tl_instream *s, unsigned char *buf, size_t n, tl_error *err)
{
    struct inflate_state *z = s->inf;
    size_t got = 0;

    while (got < n && !s->at_end) {
        if (s->member_done) {
            /* Another member may follow, as gzip(1) allows; anything else is damage. */
            if (z->avail_in == 0) {
                long k = fill(s, err);
                if (k < 0)
                    return -1;
                if (k == 0) {
                    s->at_end = 1;
                    break;
                }
                z->next_in = s->raw;
                z->avail_in = (uint32_t)s->raw_len;
            }
            if (z->next_in[0] != 0x1f) {
                tl_error_set(err, "%s: data after the end of the gzip stream (byte %llu)", s->name,
                             (unsigned long long)inflate_offset(s));
                return -1;
            }
            unsigned char *next = z->next_in;
            uint32_t avail = z->avail_in;
            start_member(s);
            z->next_in = next;
            z->avail_in = avail;
        }
        if (z->avail_in == 0) {
            long k = fill(s, err);
            if (k < 0)
                return -1;
            if (k == 0) {
                tl_error_set(err, "%s: truncated gzip data (it ends at byte %llu)", s->name,
                             (unsigned long long)inflate_offset(s));
                return -1;
            }
            z->next_in = s->raw;
            z->avail_in = (uint32_t)s->raw_len;
        }
        z->next_out = buf + got;
        z->avail_out = (uint32_t)(n - got);
        uint32_t out_before = z->avail_out;
        int r = isal_inflate(z);
        got += out_before - z->avail_out;
        if (r < 0 || r == ISAL_NEED_DICT) {
            tl_error_set(err, "%s: damaged gzip data near byte %llu (%s)", s->name,
                         (unsigned long long)inflate_offset(s),
                         r == ISAL_INCORRECT_CHECKSUM ? "checksum mismatch"
                         : r == ISAL_INVALID_WRAPPER  ? "bad gzip header or trailer"
                                                      : "invalid compressed data");
            return -1;
        }
        if (z->block_state == ISAL_BLOCK_FINISH)
            s->member_done = 1;
    }
    return (long)got;
}

/* The helper: fills the free slots in order until the data ends, fails or the stream
 * is closed.  Only it touches the inflate state while it runs. */
static void *ahead_main(void *arg)
{
    tl_instream *s = arg;
    ahead *a = s->ah;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (!a->stop && a->head - a->tail == AHEAD_SLOTS)
            pthread_cond_wait(&a->cv, &a->mu);
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            break;
        size_t slot = a->head % AHEAD_SLOTS;
        tl_error e = {0};
        long k = read_gzip(s, a->buf[slot], AHEAD_SLOT, &e);
        pthread_mutex_lock(&a->mu);
        a->len[slot] = k;
        if (k < 0)
            a->err = e;
        a->raw_off = inflate_offset(s);
        a->head++;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        if (k <= 0) /* the end or an error: the slot holds the answer for good */
            break;
    }
    return NULL;
}

/* Have the helper end at its next wait (the stream is closed, or its reader unwinds
 * after an allocation failure, base/util.h). */
static void ahead_stop(void *arg)
{
    ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* Start the helper for a gzip file (once); without it the stream inflates as it reads. */
static void ahead_start(tl_instream *s)
{
    s->ah_tried = 1;
    /* a regular file only: a pipe's writer may stall, and the helper blocked in its read
     * would hold up the close of a stream whose reader has given up */
    struct stat st;
    if (!s->gzip || s->fd < 0 || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    ahead *a = tl_xcalloc(1, sizeof *a);
    for (int i = 0; i < AHEAD_SLOTS; i++)
        a->buf[i] = tl_xmalloc_filled(AHEAD_SLOT); /* each filled whole, and again */
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    s->ah = a;
    s->ah_from = s->text_pos;
    if (tl_thread_create_stoppable(&a->thread, ahead_main, s, ahead_stop, a) != 0) {
        s->ah = NULL; /* no thread: inflate here */
        s->ah_from = UINT64_MAX;
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        for (int i = 0; i < AHEAD_SLOTS; i++)
            free(a->buf[i]);
        free(a);
    }
}

/* read_gzip's contract from the slots: n bytes unless the data ends; -1 (err set) when
 * the inflating failed before n bytes were had. */
static long read_ahead(tl_instream *s, unsigned char *buf, size_t n, tl_error *err)
{
    ahead *a = s->ah;
    size_t got = 0;
    while (got < n) {
        pthread_mutex_lock(&a->mu);
        while (a->head == a->tail)
            pthread_cond_wait(&a->cv, &a->mu);
        size_t slot = a->tail % AHEAD_SLOTS;
        long k = a->len[slot];
        if (k < 0)
            *err = a->err;
        pthread_mutex_unlock(&a->mu);
        if (k < 0)
            return -1;
        if (k == 0)
            break; /* the end: the slot stays, and so does the answer */
        size_t take = (size_t)k - a->pos;
        if (take > n - got)
            take = n - got;
        memcpy(buf + got, a->buf[slot] + a->pos, take);
        a->pos += take;
        got += take;
        if (a->pos == (size_t)k) {
            pthread_mutex_lock(&a->mu);
            a->tail++;
            a->pos = 0;
            pthread_cond_broadcast(&a->cv);
            pthread_mutex_unlock(&a->mu);
        }
    }
    return (long)got;
}

/* The next bytes of the text, from wherever they come. */
static long read_text(tl_instream *s, unsigned char *buf, size_t n, tl_error *err)
{
    if (!s->ah_tried)
        ahead_start(s);
    if (s->ah)
        return read_ahead(s, buf, n, err);
    return s->gzip ? read_gzip(s, buf, n, err) : read_plain(s, buf, n, err);
}

long tl_instream_read(tl_instream *s, void *buf, size_t n, tl_error *err)
{
    if (n > (size_t)1 << 30)
        n = (size_t)1 << 30; /* avail_out is 32-bit */
    size_t got = 0;
    if (s->back_pos < s->back_len) {
        got = s->back_len - s->back_pos < n ? s->back_len - s->back_pos : n;
        memcpy(buf, s->back + s->back_pos, got);
        s->back_pos += got;
    }
    if (got < n) {
        long k = read_text(s, (unsigned char *)buf + got, n - got, err);
        if (k < 0)
            return -1;
        got += (size_t)k;
    }
    s->text_pos += got;
    return (long)got;
}

void tl_instream_close(tl_instream *s)
{
    if (!s)
        return;
    if (s->ah) {
        ahead *a = s->ah;
        ahead_stop(a);
        tl_thread_join(a->thread, NULL);
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        for (int i = 0; i < AHEAD_SLOTS; i++)
            free(a->buf[i]);
        free(a);
    }
    if (s->fd >= 0) {
        close(s->fd);
        free(s->raw);
    }
    free(s->inf);
    free(s->back);
    free(s->name);
    free(s);
}
