/*
 * util.c - allocation, errors, warnings, byte buffers, paths (see util.h).
 */
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tl_quiet = 0;

static void out_of_memory(size_t n)
{
    fprintf(stderr, "tlcompare: out of memory (asked for %zu bytes)\n", n);
    exit(1);
}

void *tl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *tl_xrealloc(void *p, size_t n)
{
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
    *p = tl_xrealloc(*p, c * size);
    *cap = c;
}

void tl_error_vset(tl_error *e, const char *fmt, va_list ap)
{
    if (!e || e->set)
        return;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    /* One line, always: a stray newline from an input file must not split it. */
    for (char *c = e->msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    e->set = 1;
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
    fprintf(stderr, "tlcompare: %s", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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

void tl_buf_add(tl_buf *b, const void *p, size_t n)
{
    tl_buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tl_buf_addc(tl_buf *b, char c)
{
    if (b->len + 2 > b->cap)
        tl_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
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
