/*
 * arena.h - bump allocator for the strings of one comparison run.
 *
 * Every cell string read from a report, and every column name, lives as long as the
 * run does, so it is cheaper and simpler to allocate them from a few large blocks and
 * free them all at once than to track each one.
 */
#ifndef TL_ARENA_H
#define TL_ARENA_H

#include <stddef.h>

typedef struct tl_arena_block tl_arena_block;

typedef struct tl_arena {
    tl_arena_block *head; /* newest block first */
    size_t used;          /* bytes used in head */
    size_t cap;           /* capacity of head */
    size_t total;         /* bytes handed out, for statistics and limits */
} tl_arena;

/* Initialise an empty arena (no allocation happens until the first request). */
void tl_arena_init(tl_arena *a);

/* Free every block; the arena is empty and reusable afterwards. */
void tl_arena_free(tl_arena *a);

/* Allocate n bytes aligned for any object; aborts the process on out-of-memory. */
void *tl_arena_alloc(tl_arena *a, size_t n);

/* Copy n bytes of s into the arena and NUL-terminate the copy. */
char *tl_arena_strndup(tl_arena *a, const char *s, size_t n);

/* Copy the NUL-terminated string s into the arena. */
char *tl_arena_strdup(tl_arena *a, const char *s);

/* Move every block of `src` into `dst`, to be freed with it (what was allocated from src
 * stays where it is); src is left empty.  For work done on another thread in an arena of
 * its own whose results must live as long as dst's. */
void tl_arena_adopt(tl_arena *dst, tl_arena *src);

/* printf into the arena. */
char *tl_arena_printf(tl_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
