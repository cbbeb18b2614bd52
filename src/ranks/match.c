/*
 * match.c - the report's rows matched across ranks (MULTIRANK.md §3.6) and their 11-key
 * summary (§4): trace/collective.c's rules (the ones a trace's coll_analysis uses), run
 * over a view of the report's compact rows (rk_row: its times and a pointer to metadata
 * the rank's rows share), so the report never holds 224-byte tl_coll_rows.
 */
#include "ranks/ranks_impl.h"

#include <stddef.h>

static tl_coll_view rk_view(const rk_rows *rows)
{
    return (tl_coll_view){.base = rows->v,
                          .n = rows->n,
                          .size = sizeof *rows->v,
                          .meta = offsetof(rk_row, m),
                          .ts = offsetof(rk_row, ts),
                          .dur = offsetof(rk_row, dur),
                          .dur_int = offsetof(rk_row, dur_int),
                          .index = offsetof(rk_row, index_in_group),
                          .id = offsetof(rk_row, id)};
}

int tl_rk_match(rk_rows *rows, tl_arena *a)
{
    tl_coll_view w = rk_view(rows);
    return tl_coll_view_match(&w, a);
}

tl_table *tl_rk_summary(const rk_rows *rows)
{
    tl_coll_view w = rk_view(rows);
    return tl_coll_view_summary(&w);
}

int tl_rk_key_float(const rk_rows *rows, int key)
{
    tl_coll_view w = rk_view(rows);
    return tl_coll_key_float(&w, key);
}
