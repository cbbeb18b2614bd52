/*
 * sort.h - stable sort of row indexes.
 *
 * Every ordering in the comparison must be stable ("rows with equal keys keep the order
 * above", "ties keep their order"), which qsort does not promise, so this is a merge sort.
 */
#ifndef TL_SORT_H
#define TL_SORT_H

#include <stddef.h>

typedef int (*tl_row_cmp)(size_t a, size_t b, void *ctx);

/* Sort idx[0..n) stably by cmp. */
void tl_sort_rows(size_t *idx, size_t n, tl_row_cmp cmp, void *ctx);

#endif
