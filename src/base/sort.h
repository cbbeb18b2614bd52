/*
 * sort.h - stable sorts of row indexes.
 *
 * Every ordering in the comparison must be stable ("rows with equal keys keep the order
 * above", "ties keep their order"), which qsort does not promise.  Two kinds are here: a
 * merge sort by a comparison function, for any order, and a radix sort of rows that carry
 * their sort key as a 64-bit integer, for the hot paths whose order can be put that way
 * (a number, a rank): no call per comparison, and linear time.
 */
#ifndef TL_SORT_H
#define TL_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef int (*tl_row_cmp)(size_t a, size_t b, void *ctx);

/* Sort idx[0..n) stably by cmp. */
void tl_sort_rows(size_t *idx, size_t n, tl_row_cmp cmp, void *ctx);

/* Whether a sort should give up (a run cancelled); given the comparison's ctx. */
typedef int (*tl_sort_stop)(void *ctx);

/* tl_sort_rows, asking stopped (may be NULL: never) every few thousand rows: -1 when it
 * said to stop, idx then holding the same rows in no promised order; else 0. */
int tl_sort_rows_until(size_t *idx, size_t n, tl_row_cmp cmp, tl_sort_stop stopped, void *ctx);

/* A row (32-bit: tables stay far below 2^32 rows) and its sort key. */
typedef struct tl_sort_item {
    uint64_t key;
    uint32_t row;
} tl_sort_item;

/* Sort items[0..n) stably by key, ascending (an LSD radix sort; tmp: n items of scratch,
 * or NULL to have one allocated). */
void tl_sort_items(tl_sort_item *items, size_t n, tl_sort_item *tmp);

/* A key that orders doubles as < does, for tl_sort_items: -0.0 and 0.0 get the same key.
 * Not for NaN. */
uint64_t tl_sort_key_double(double d);

/* A key that orders int64 values as < does. */
static inline uint64_t tl_sort_key_int(int64_t i) { return (uint64_t)i ^ ((uint64_t)1 << 63); }

#endif
