/*
 * util.c - allocation, errors, warnings, byte buffers, paths (see util.h).
 */
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int tl_quiet = 0;
const char *tl_progname = "tlcompare";

static void (*fatal_cleanup)(void);
/* Thread-local state, initial-exec: in the Python module (a dlopen'd library) the default
 * model allocates a thread's block on its first access, and glibc aborts when that fails,
 * which it does when memory runs out: a few words fit in the space reserved up front. */
#define TL_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static TL_TLS const char *reading;
/* The last input any thread named, copied (the path may be freed before a helper fails):
 * for the helper threads of a run, which name none themselves.  Under its lock: threads
 * name their inputs while another one fails. */
static char reading_any[256];
static pthread_mutex_t reading_mu = PTHREAD_MUTEX_INITIALIZER;
static TL_TLS jmp_buf *oom_at;
static TL_TLS jmp_buf *oom_helper_at; /* this thread runs tl_oom_helper's fn: where it unwinds */
static TL_TLS unsigned oom_helper_gen; /* ... on behalf of the run of this generation */
static TL_TLS unsigned oom_at_gen;     /* oom_at's run's generation */
static char oom_msg[512]; /* the failure told: one run's at a time, written by its thread */
static atomic_int oom_catchers; /* threads with a catch point */
static atomic_uint oom_gen;     /* one more each time a thread sets a catch point */
/* A helper failed: the generation of the run it worked for (0: none), whose thread
 * unwinds; only that run's, so that a failure landing while its run finishes, or after,
 * is never taken by the next run.  The first failure's message is the one told. */
static atomic_uint oom_pending;
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;
static char pending_msg[512];
static TL_TLS pthread_mutex_t *oom_holding; /* the lock of this thread's tl_oom_lock section */

/* The helper threads of catching runs not joined yet, each with the thread that started
 * it.  A thread that unwinds stops and joins its own first: their work may point into
 * the frames it leaves, which are another call's memory once left.  A fixed table:
 * nothing to allocate when memory has run out; when it is full, a helper goes untracked
 * (as every one did before the table: its run's state is abandoned, never freed). */
#define MAX_TRACKED 1024
typedef struct tracked {
    pthread_t owner, thread;
    void (*stop)(void *);
    void *arg;
    int used;
} tracked;
static tracked tracked_helpers[MAX_TRACKED];
static atomic_size_t ntracked; /* 0: nothing to look for (the programs, which never catch) */
static pthread_mutex_t tracked_mu = PTHREAD_MUTEX_INITIALIZER;

void tl_oom_catch(jmp_buf *at)
{
    if (at && !oom_at) {
        atomic_fetch_add(&oom_catchers, 1);
        oom_at_gen = atomic_fetch_add(&oom_gen, 1) + 1;
    }
    else if (!at && oom_at)
        atomic_fetch_sub(&oom_catchers, 1);
    oom_at = at;
}

const char *tl_oom_message(void) { return oom_msg; }

void tl_oom_reset(void) { atomic_store(&oom_pending, 0); }

void tl_util_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&reading_mu, &fresh, sizeof fresh);
    memcpy(&pending_mu, &fresh, sizeof fresh);
    memcpy(&tracked_mu, &fresh, sizeof fresh);
    memset(tracked_helpers, 0, sizeof tracked_helpers); /* the parent's threads: not here to join */
    atomic_store(&ntracked, 0);
    oom_holding = NULL;
    atomic_store(&oom_pending, 0);
    atomic_store(&oom_catchers, oom_at ? 1 : 0); /* the threads that caught are not in the child */
}

void tl_oom_track(pthread_t thread, void (*stop)(void *), void *arg)
{
    pthread_mutex_lock(&tracked_mu);
    for (size_t i = 0; i < MAX_TRACKED; i++)
        if (!tracked_helpers[i].used) {
            tracked_helpers[i] = (tracked){pthread_self(), thread, stop, arg, 1};
            atomic_fetch_add(&ntracked, 1);
            break;
        }
    pthread_mutex_unlock(&tracked_mu);
}

/* Entry i is no longer tracked (under tracked_mu). */
static void drop_tracked(size_t i)
{
    tracked_helpers[i].used = 0;
    atomic_fetch_sub(&ntracked, 1);
}

void tl_oom_untrack(pthread_t thread)
{
    if (!atomic_load(&ntracked))
        return;
    pthread_mutex_lock(&tracked_mu);
    for (size_t i = 0; i < MAX_TRACKED; i++)
        if (tracked_helpers[i].used && pthread_equal(tracked_helpers[i].thread, thread)) {
            drop_tracked(i);
            break;
        }
    pthread_mutex_unlock(&tracked_mu);
}

/* Before this thread unwinds: the lock it declared released, then its helpers told to
 * stop (all of them, so that they wind down together) and joined.  Their own failures,
 * if any, unwind them by the same path. */
static void join_own_helpers(void)
{
    if (oom_holding) {
        pthread_mutex_unlock(oom_holding);
        oom_holding = NULL;
    }
    if (!atomic_load(&ntracked))
        return;
    pthread_t self = pthread_self();
    for (size_t i = 0; i < MAX_TRACKED; i++) {
        pthread_mutex_lock(&tracked_mu);
        tracked e = tracked_helpers[i];
        pthread_mutex_unlock(&tracked_mu);
        if (e.used && e.stop && pthread_equal(e.owner, self))
            e.stop(e.arg);
    }
    for (size_t i = 0; i < MAX_TRACKED; i++) {
        pthread_mutex_lock(&tracked_mu);
        tracked e = tracked_helpers[i];
        int mine = e.used && pthread_equal(e.owner, self);
        if (mine)
            drop_tracked(i);
        pthread_mutex_unlock(&tracked_mu);
        if (mine)
            pthread_join(e.thread, NULL);
    }
}

pthread_mutex_t *tl_oom_lock(pthread_mutex_t *mu)
{
    pthread_mutex_lock(mu);
    pthread_mutex_t *outer = oom_holding;
    oom_holding = mu;
    return outer;
}

void tl_oom_unlock(pthread_mutex_t *mu, pthread_mutex_t *outer)
{
    oom_holding = outer;
    pthread_mutex_unlock(mu);
}

void tl_oom_check(void)
{
    unsigned pending = atomic_load_explicit(&oom_pending, memory_order_acquire);
    if (oom_at && pending == oom_at_gen) {
        join_own_helpers();
        pthread_mutex_lock(&pending_mu);
        memcpy(oom_msg, pending_msg, sizeof oom_msg);
        pthread_mutex_unlock(&pending_mu);
        longjmp(*oom_at, 1);
    }
    if (!oom_at && oom_helper_at && pending && pending == oom_helper_gen) {
        /* another thread of this helper's run has failed: the run is lost, and its
         * helpers stop at their next allocation rather than finish work nobody takes */
        join_own_helpers();
        longjmp(*oom_helper_at, 1);
    }
}

unsigned tl_oom_context(void)
{
    return oom_at ? oom_at_gen : oom_helper_at ? oom_helper_gen : 0;
}

int tl_oom_helper(unsigned ctx, void (*fn)(void *), void *arg)
{
    jmp_buf at, *outer = oom_helper_at;
    if (!ctx) {
        /* no run catches: a failure here ends the process, even when this thread is a
         * catching run's helper at another level */
        oom_helper_at = NULL;
        fn(arg);
        oom_helper_at = outer;
        return 0;
    }
    unsigned outer_gen = oom_helper_gen;
    int rc = 0;
    if (setjmp(at) == 0) {
        oom_helper_at = &at;
        oom_helper_gen = ctx;
        fn(arg);
    } else {
        rc = -1;
    }
    oom_helper_at = outer;
    oom_helper_gen = outer_gen;
    return rc;
}

void tl_set_fatal_cleanup(void (*fn)(void)) { fatal_cleanup = fn; }

const char *tl_reading(const char *path)
{
    const char *was = reading;
    reading = path;
    if (path) {
        size_t k = strlen(path);
        if (k >= sizeof reading_any)
            k = sizeof reading_any - 1;
        pthread_mutex_lock(&reading_mu);
        memcpy(reading_any, path, k);
        reading_any[k] = '\0';
        pthread_mutex_unlock(&reading_mu);
    }
    return was;
}

/* The message names the input this thread was reading (the cause, most likely); then
 * the outputs being written are removed, as on SIGINT, and the process ends without
 * running exit handlers while other threads may still be at work. */
static void out_of_memory(size_t n)
{
    /* no allocation can be counted on here: the message is made in this thread's own
     * fixed buffer (helpers of one run fail at once), the path cut by hand */
    char msg[sizeof oom_msg], any[sizeof reading_any];
    pthread_mutex_lock(&reading_mu);
    memcpy(any, reading_any, sizeof any);
    pthread_mutex_unlock(&reading_mu);
    const char *what = reading ? reading : any[0] ? any : NULL;
    if (what) {
        size_t k = strlen(what);
        snprintf(msg, sizeof msg, "out of memory (asked for %zu bytes) while reading '%.*s%s'", n,
                 (int)(k > 200 ? 200 : k), what, k > 200 ? "..." : "");
    } else {
        snprintf(msg, sizeof msg, "out of memory (asked for %zu bytes)", n);
    }
    if (oom_at) {
        memcpy(oom_msg, msg, sizeof oom_msg);
        /* the helpers stop at their next allocation (the catching thread clears this
         * once it has unwound, tl_oom_reset) */
        atomic_store_explicit(&oom_pending, oom_at_gen, memory_order_release);
        join_own_helpers();
        longjmp(*oom_at, 1);
    }
    if (oom_helper_at) {
        /* told to the run that started this helper, if it is still going: a helper of a
         * run that has already unwound (its state abandoned) only ends, quietly */
        pthread_mutex_lock(&pending_mu);
        if (atomic_load(&oom_catchers) && oom_helper_gen == atomic_load(&oom_gen) &&
            atomic_load(&oom_pending) != oom_helper_gen) {
            memcpy(pending_msg, msg, sizeof pending_msg);
            atomic_store_explicit(&oom_pending, oom_helper_gen, memory_order_release);
        }
        pthread_mutex_unlock(&pending_mu);
        join_own_helpers();
        longjmp(*oom_helper_at, 1);
    }
    fprintf(stderr, "%s: %s\n", tl_progname, msg);
    if (fatal_cleanup)
        fatal_cleanup();
    _exit(1);
}

void *tl_xmalloc(size_t n)
{
    if (atomic_load_explicit(&oom_pending, memory_order_relaxed))
        tl_oom_check();
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t size)
{
    if (atomic_load_explicit(&oom_pending, memory_order_relaxed))
        tl_oom_check();
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

/* memset through a pointer the compiler cannot see through: a malloc followed by a
 * memset of zeros is otherwise folded into a calloc (gcc and clang both do it), which
 * leaves a fresh block's pages untouched - the very faults this function is for. */
static void *(*volatile zero_fill)(void *, int, size_t) = memset;

void *tl_xcalloc_dense(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        out_of_memory(SIZE_MAX);
    size_t bytes = n * size;
    void *p = tl_xmalloc(bytes);
    tl_populate(p, bytes);
    zero_fill(p, 0, bytes ? bytes : 1);
    return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14's value, for older headers */
#endif

/* Unset once the kernel refuses the advice (EINVAL: too old), not to ask again. */
static atomic_int populate_known_absent;

void tl_populate(void *p, size_t n)
{
    if (n < 64 * 1024 || atomic_load_explicit(&populate_known_absent, memory_order_relaxed))
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
        atomic_store_explicit(&populate_known_absent, 1, memory_order_relaxed);
}

void *tl_xmalloc_filled(size_t n)
{
    void *p = tl_xmalloc(n);
    tl_populate(p, n);
    return p;
}

/* TL_POPULATE_STEP: big enough that a call maps many pages, small enough that a block
 * left unfilled maps little it does not use. */
void tl_populate_more(void *block, size_t cap, size_t used, size_t *mapped)
{
    while (*mapped < cap && used + TL_POPULATE_STEP / 2 > *mapped) {
        size_t n = cap - *mapped < TL_POPULATE_STEP ? cap - *mapped : TL_POPULATE_STEP;
        tl_populate((char *)block + *mapped, n);
        *mapped += n;
    }
}

void *tl_xrealloc(void *p, size_t n)
{
    if (atomic_load_explicit(&oom_pending, memory_order_relaxed))
        tl_oom_check();
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *tl_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = tl_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

/* A sanitizer's runtime in the process, built in or preloaded into a program built
 * without it (as the Python module's sanitizer tests run the command-line tools): its
 * malloc is then the one in use, glibc's arenas hold nothing and were never set up, and
 * malloc_trim reads a main arena with no top chunk (SIGSEGV in mtrim).  The runtimes'
 * entry points, weak: null unless one is loaded. */
extern void __asan_init(void) __attribute__((weak));
extern void __tsan_init(void) __attribute__((weak));

void tl_release_freed(void)
{
#ifdef __GLIBC__
    if (!__asan_init && !__tsan_init)
        malloc_trim(0);
#endif
}

/* From GROW_COPY_MIN bytes a block's copy has pages enough to map in one call; from
 * GROW_REMAP_MIN (glibc's largest threshold for serving a block by mmap) realloc moves
 * the pages themselves (mremap), and copies nothing. */
#define GROW_COPY_MIN ((size_t)64 * 1024)
#define GROW_REMAP_MIN ((size_t)32 * 1024 * 1024)

void *tl_xrealloc_mapped(void *p, size_t used, size_t n)
{
    if (!p || used < GROW_COPY_MIN || used >= GROW_REMAP_MIN)
        return tl_xrealloc(p, n);
    /* realloc would copy the bytes into fresh pages, a fault each: the pages they go to
     * mapped first, in one call */
    void *q = tl_xmalloc(n);
    tl_populate(q, used);
    memcpy(q, p, used);
    free(p);
    return q;
}

void tl_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > ((size_t)-1) / 2 / size)
            out_of_memory(need * size);
        c *= 2;
    }
    *p = tl_xrealloc_mapped(*p, *cap * size, c * size);
    *cap = c;
}

/* vsnprintf into a new buffer, whatever the length. */
static void buf_vprintf(tl_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0) {
        tl_buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void tl_error_vset(tl_error *e, const char *fmt, va_list ap)
{
    if (!e || e->set)
        return;
    /* Formatted whole, then cleaned: quoted input is cut in the middle, and what the
     * message says after it is kept. */
    tl_buf raw = {0}, clean = {0};
    buf_vprintf(&raw, fmt, ap);
    tl_message_clean(&clean, raw.data ? raw.data : "", raw.len);
    /* A message longer than the buffer (a path of a few KB) keeps its start and its end,
     * where the reason is; the middle gives way. */
    const char *m = tl_buf_cstr(&clean);
    size_t n = strlen(m);
    if (n < sizeof e->msg) {
        memcpy(e->msg, m, n + 1);
    } else {
        size_t tail = sizeof e->msg / 2, head = sizeof e->msg - tail - 4;
        while (head > 0 && ((unsigned char)m[head] & 0xC0) == 0x80)
            head--; /* whole UTF-8 characters on each side */
        size_t from = n - tail;
        while (from < n && ((unsigned char)m[from] & 0xC0) == 0x80)
            from++;
        memcpy(e->msg, m, head);
        memcpy(e->msg + head, "...", 3);
        memcpy(e->msg + head + 3, m + from, n - from + 1);
    }
    tl_buf_free(&raw);
    tl_buf_free(&clean);
    e->set = 1;
}

void tl_error_rename_path(tl_error *e, const char *from, const char *to)
{
    size_t n = strlen(from), m = strlen(to), len = strlen(e->msg);
    if (strncmp(e->msg, from, n) != 0 || len - n + m >= sizeof e->msg)
        return;
    memmove(e->msg + m, e->msg + n, len - n + 1);
    memcpy(e->msg, to, m);
}

void tl_error_set(tl_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tl_error_vset(e, fmt, ap);
    va_end(ap);
}

static void say(const char *what, const char *fmt, va_list ap)
{
    if (tl_quiet)
        return;
    tl_buf raw = {0}, clean = {0};
    buf_vprintf(&raw, fmt, ap);
    tl_message_clean(&clean, raw.data ? raw.data : "", raw.len);
    fprintf(stderr, "%s: %s%s\n", tl_progname, what, tl_buf_cstr(&clean));
    tl_buf_free(&raw);
    tl_buf_free(&clean);
}

void tl_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("warning: ", fmt, ap);
    va_end(ap);
}

void tl_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
}

void tl_buf_reserve(tl_buf *b, size_t extra)
{
    TL_GROW(b->data, b->cap, b->len + extra + 1);
}

void tl_buf_adds(tl_buf *b, const char *s) { tl_buf_add(b, s, strlen(s)); }

void tl_buf_printf(tl_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    if ((size_t)n < sizeof small) {
        tl_buf_add(b, small, (size_t)n);
        return;
    }
    tl_buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *tl_buf_cstr(tl_buf *b)
{
    tl_buf_reserve(b, 0);
    b->data[b->len] = '\0';
    return b->data;
}

void tl_buf_clear(tl_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void tl_buf_free(tl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void tl_path_base(const char *path, size_t *start, size_t *end)
{
    size_t e = strlen(path);
    while (e > 1 && path[e - 1] == '/')
        e--;
    size_t s = e;
    while (s > 0 && path[s - 1] != '/')
        s--;
    *start = s;
    *end = e;
}

char *tl_path_stem(const char *path)
{
    size_t start, end;
    tl_path_base(path, &start, &end);
    /* Python's os.path.splitext: the last dot, unless it leads the name (".hidden"). */
    size_t stop = end;
    for (size_t i = end; i > start + 1; i--) {
        if (path[i - 1] == '.') {
            size_t j = start;
            while (j < i - 1 && path[j] == '.')
                j++;
            if (j < i - 1)
                stop = i - 1;
            break;
        }
    }
    size_t n = stop - start;
    char *s = tl_xmalloc(n + 1);
    memcpy(s, path + start, n);
    s[n] = '\0';
    return s;
}

int tl_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- messages and UTF-8 ------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one (overlong
 * forms, surrogates and code points past U+10FFFF are not). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return len;
}

void tl_buf_add_utf8(tl_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        size_t k;
        while (p < end && (k = utf8_seq(p, (size_t)(end - p))) != 0)
            p += k;
        tl_buf_add(b, run, (size_t)(p - run));
        if (p < end) {
            tl_buf_adds(b, "\xEF\xBF\xBD"); /* U+FFFD for each byte that starts no valid sequence */
            p++;
        }
    }
}

void tl_utf8_sanitize(tl_buf *b)
{
    const unsigned char *p = (const unsigned char *)b->data;
    size_t i = 0, k;
    while (i < b->len && (k = utf8_seq(p + i, b->len - i)) != 0)
        i += k;
    if (i == b->len)
        return; /* the usual case: nothing to copy */
    tl_buf fixed = {0};
    tl_buf_add_utf8(&fixed, b->data, b->len);
    tl_buf_free(b);
    *b = fixed;
}

/* A quote that opens quoted input: at the start, or after anything but a letter or digit. */
static int opens_quote(const char *s, size_t i)
{
    if (s[i] != '\'')
        return 0;
    if (i == 0)
        return 1;
    unsigned char c = (unsigned char)s[i - 1];
    return !(c >= '0' && c <= '9') && !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && c < 0x80;
}

/* A quote that closes quoted input: at the end, or before a space or punctuation. */
static int closes_quote(const char *s, size_t i, size_t n)
{
    return s[i] == '\'' && (i + 1 == n || strchr(" ,.;:)]!?", s[i + 1]) != NULL);
}

static void add_escaped(tl_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7F)
            tl_buf_addc(out, (char)c);
        else if (c == '\n')
            tl_buf_adds(out, "\\n");
        else if (c == '\r')
            tl_buf_adds(out, "\\r");
        else if (c == '\t')
            tl_buf_adds(out, "\\t");
        else
            tl_buf_printf(out, "\\x%02X", c);
    }
}

void tl_message_clean(tl_buf *out, const char *msg, size_t n)
{
    size_t i = 0, first = out->len;
    while (i < n) {
        if (!opens_quote(msg, i)) {
            size_t j = i + 1;
            while (j < n && !opens_quote(msg, j))
                j++;
            add_escaped(out, msg + i, j - i);
            i = j;
            continue;
        }
        size_t start = i + 1, close = start;
        while (close < n && !closes_quote(msg, close, n))
            close++;
        size_t len = close - start;
        tl_buf_addc(out, '\'');
        if (len <= TL_QUOTE_MAX) {
            add_escaped(out, msg + start, len);
        } else {
            /* cut at a character boundary, and say so */
            size_t cut = TL_QUOTE_MAX;
            while (cut > 0 && ((unsigned char)msg[start + cut] & 0xC0) == 0x80)
                cut--;
            add_escaped(out, msg + start, cut);
            tl_buf_printf(out, "...(%zu bytes)", len);
        }
        if (close < n)
            tl_buf_addc(out, '\'');
        i = close < n ? close + 1 : n;
    }
    /* Input that fooled the quote rules (a quote and a space inside a name, a path of
     * kilobytes) is bounded too: the middle gives way, the end (the reason) stays. */
    if (out->len - first > TL_MESSAGE_MAX) {
        size_t tail = TL_MESSAGE_MAX / 4, cut = first + TL_MESSAGE_MAX - tail - 3, from = out->len - tail;
        while (cut > first && ((unsigned char)out->data[cut] & 0xC0) == 0x80)
            cut--;
        while (from < out->len && ((unsigned char)out->data[from] & 0xC0) == 0x80)
            from++;
        memmove(out->data + cut + 3, out->data + from, out->len - from);
        memcpy(out->data + cut, "...", 3);
        out->len = cut + 3 + (out->len - from);
    }
    tl_buf_cstr(out);
}

time_t tl_output_time(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v >= 0)
            return (time_t)v;
    }
    return time(NULL);
}
