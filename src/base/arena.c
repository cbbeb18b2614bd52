/*
 * arena.c - bump allocator (see arena.h).
 */
#include "base/arena.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_ARENA_BLOCK (256u * 1024u)

struct tl_arena_block {
    tl_arena_block *next;
    max_align_t data[]; /* flexible array keeps the payload aligned */
};

void tl_arena_init(tl_arena *a) { memset(a, 0, sizeof *a); }

void tl_arena_free(tl_arena *a)
{
    tl_arena_block *b = a->head;
    while (b) {
        tl_arena_block *next = b->next;
        free(b);
        b = next;
    }
    tl_arena_init(a);
}

static void *arena_alloc(tl_arena *a, size_t n, size_t align)
{
    size_t need = n ? n : 1;
    if (a->head)
        a->used = (a->used + align - 1) / align * align < a->cap ? (a->used + align - 1) / align * align : a->cap;
    if (!a->head || a->cap - a->used < need) {
        /* Large requests get a block of their own so they do not waste a shared one. */
        size_t cap = need > TL_ARENA_BLOCK / 4 ? need : TL_ARENA_BLOCK;
        tl_arena_block *b = tl_xmalloc(sizeof *b + cap);
        /* An arena past its first block goes on filling blocks: their pages mapped in
         * one call (an arena that stays small is left to fault its few pages) */
        if (a->head)
            tl_populate(b->data, cap);
        if (need > TL_ARENA_BLOCK / 4 && a->head) {
            /* Keep filling the current block: slot the big one in behind it. */
            b->next = a->head->next;
            a->head->next = b;
            a->total += need;
            return b->data;
        }
        b->next = a->head;
        a->head = b;
        a->cap = cap;
        a->used = 0;
    }
    void *p = (char *)a->head->data + a->used;
    a->used += need;
    a->total += need;
    return p;
}

void tl_arena_adopt(tl_arena *dst, tl_arena *src)
{
    if (!src->head)
        return;
    if (!dst->head) {
        *dst = *src;
    } else {
        /* behind dst's current block, which goes on being filled */
        tl_arena_block *tail = src->head;
        while (tail->next)
            tail = tail->next;
        tail->next = dst->head->next;
        dst->head->next = src->head;
        dst->total += src->total;
    }
    tl_arena_init(src);
}

void *tl_arena_alloc(tl_arena *a, size_t n) { return arena_alloc(a, n, sizeof(max_align_t)); }

char *tl_arena_strndup(tl_arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1, 1); /* text needs no alignment */
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *tl_arena_strdup(tl_arena *a, const char *s) { return tl_arena_strndup(a, s, strlen(s)); }

char *tl_arena_printf(tl_arena *a, const char *fmt, ...)
{
    /* Most results are short: format once into a stack buffer, again only if too long. */
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof small)
        return tl_arena_strndup(a, small, (size_t)n);
    char *p = tl_arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
