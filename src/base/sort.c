/*
 * sort.c - stable sorts of row indexes (see sort.h).
 */
#include "base/sort.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Bottom-up merge sort: short runs by insertion sort, then merges into a scratch array.
 * stopped is asked every STEP rows placed, so that a long sort answers a cancel within a
 * few milliseconds. */
int tl_sort_rows_until(size_t *idx, size_t n, tl_row_cmp cmp, tl_sort_stop stopped, void *ctx)
{
    enum { RUN = 16, STEP = 4096 };
    if (n < 2)
        return 0;
    for (size_t lo = 0; lo < n; lo += RUN) {
        if (stopped && lo % STEP == 0 && stopped(ctx))
            return -1;
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
        return 0;
    size_t *tmp = tl_xmalloc(n * sizeof *tmp);
    size_t *src = idx, *dst = tmp;
    int status = 0;
    for (size_t width = RUN; width < n && status == 0; width *= 2) {
        size_t done = 0; /* dst[0, done) is this pass's */
        for (size_t lo = 0; lo < n && status == 0; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            done = hi;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (stopped && k % STEP == 0 && stopped(ctx)) {
                    status = -1;
                    break;
                }
                dst[k++] = cmp(src[j], src[i], ctx) < 0 ? src[j++] : src[i++];
            }
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        /* stopped: the blocks not merged go over as they are, so dst holds every row */
        memcpy(dst + done, src + done, (n - done) * sizeof *dst);
        size_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        memcpy(idx, src, n * sizeof *idx);
    free(tmp);
    return status;
}

void tl_sort_rows(size_t *idx, size_t n, tl_row_cmp cmp, void *ctx) { (void)tl_sort_rows_until(idx, n, cmp, NULL, ctx); }

/* LSD radix sort on bytes, skipping the bytes that every key shares; insertion sort
 * for a few items.  Both are stable. */
void tl_sort_items(tl_sort_item *items, size_t n, tl_sort_item *tmp)
{
    if (n < 2)
        return;
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            tl_sort_item v = items[i];
            size_t j = i;
            while (j > 0 && items[j - 1].key > v.key) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = v;
        }
        return;
    }
    size_t (*count)[256] = tl_xcalloc(8, sizeof *count);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = items[i].key;
        for (int b = 0; b < 8; b++)
            count[b][(k >> (8 * b)) & 0xff]++;
    }
    tl_sort_item *own = NULL;
    if (!tmp)
        tmp = own = tl_xmalloc(n * sizeof *tmp);
    tl_sort_item *src = items, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        size_t *c = count[b];
        if (c[(items[0].key >> (8 * b)) & 0xff] == n)
            continue; /* every key has this byte: the pass would change nothing */
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t x = c[d];
            c[d] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++)
            dst[c[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
        tl_sort_item *t = src;
        src = dst;
        dst = t;
    }
    if (src != items)
        memcpy(items, src, n * sizeof *items);
    free(own);
    free(count);
}

uint64_t tl_sort_key_double(double d)
{
    if (d == 0)
        d = 0; /* -0.0 ties with 0.0, as with < */
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    /* negative: all bits flipped (larger magnitude first); positive: above every negative */
    return u >> 63 ? ~u : u | ((uint64_t)1 << 63);
}
