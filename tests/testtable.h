/*
 * testtable.h - tables for the tests: made from CSV text, and written back to it (the
 * simplest exact picture of all of a table).
 */
#ifndef TL_TESTTABLE_H
#define TL_TESTTABLE_H

#include "testutil.h"

#include "read/csv_read.h"
#include "write/csv_write.h"

/* The table of CSV `text`, in arena `a` (the test fails with the reader's message if it
 * is refused). */
static inline tl_table *tt_csv(const char *text, tl_arena *a)
{
    tl_error err = {0};
    tl_table *t = tl_csv_parse(text, strlen(text), "t.csv", a, &err);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

/* The arena of a test program whose tests make tables (tt_arena_setup and
 * tt_arena_teardown as cmocka's setup and teardown: a fresh arena for each test), and a
 * table of CSV text made in it. */
__attribute__((unused)) static tl_arena tt_arena;

static inline int tt_arena_setup(void **state)
{
    (void)state;
    tl_arena_init(&tt_arena);
    return 0;
}

static inline int tt_arena_teardown(void **state)
{
    (void)state;
    tl_arena_free(&tt_arena);
    return 0;
}

static inline tl_table *tt_arena_csv(const char *text) { return tt_csv(text, &tt_arena); }

/* The CSV text of `t`, to free. */
static inline char *tt_as_csv(const tl_table *t)
{
    tl_buf b = {0};
    tl_csv_format(t, &b);
    return b.data ? b.data : strdup("");
}

#endif
