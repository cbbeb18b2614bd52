/*
 * sort.c - stable merge sort of row indexes (see sort.h).
 */
#include "sort.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Bottom-up merge sort: short runs by insertion sort, then merges into a scratch array. */
void tl_sort_rows(size_t *idx, size_t n, tl_row_cmp cmp, void *ctx)
{
    enum { RUN = 16 };
    if (n < 2)
        return;
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            size_t v = idx[i], j = i;
            while (j > lo && cmp(idx[j - 1], v, ctx) > 0) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
    }
    if (n <= RUN)
        return;
    size_t *tmp = tl_xmalloc(n * sizeof *tmp);
    size_t *src = idx, *dst = tmp;
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cmp(src[j], src[i], ctx) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        size_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        memcpy(idx, src, n * sizeof *idx);
    free(tmp);
}
