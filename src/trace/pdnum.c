/*
 * pdnum.c - numpy's and pandas' sums, statistics and sort order (see pdnum.h).
 *
 * Written from the algorithms' descriptions in TRACES.md §4.5 and the behaviour of the
 * libraries: pairwise summation in blocks of 8 accumulators below 128 values, halving
 * (at a multiple of 8) above; introsort as median-of-3 quicksort with insertion sort on
 * partitions of at most 16 elements, the larger part pushed and the smaller done first,
 * and a heapsort once the depth budget (2 log2 n) runs out.
 */
#include "trace/pdnum.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PW_BLOCK 128

static double pairwise(const double *a, size_t n)
{
    if (n < 8) {
        double r = 0.0;
        for (size_t i = 0; i < n; i++)
            r += a[i];
        return r;
    }
    if (n <= PW_BLOCK) {
        double r[8];
        size_t i;
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        for (i = 8; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += a[i + k];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

double tl_np_sum(const double *a, size_t n) { return 0.0 + pairwise(a, n); }

double tl_np_mean(const double *a, size_t n) { return tl_np_sum(a, n) / (double)n; }

double tl_np_std(const double *a, size_t n)
{
    double m = tl_np_mean(a, n);
    double *d = tl_xmalloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        double x = a[i] - m;
        d[i] = x * x;
    }
    double v = tl_np_sum(d, n) / (double)n;
    free(d);
    return sqrt(v);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

double tl_kth_smallest_within(double *a, size_t n, size_t k, unsigned rounds)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (lo < hi) {
        if (rounds-- == 0) {
            /* an input built against the pivot rule: what is left is sorted instead */
            qsort(a + lo, (size_t)(hi - lo + 1), sizeof *a, cmp_double);
            break;
        }
        double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        double pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        /* a[lo..j] <= pivot, a[i..hi] >= pivot, and those between equal it */
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            break;
    }
    return a[k];
}

double tl_kth_smallest(double *a, size_t n, size_t k)
{
    unsigned rounds = 8;
    for (size_t m = n; m > 1; m >>= 1)
        rounds += 2;
    return tl_kth_smallest_within(a, n, k, rounds);
}

void tl_middle_values(double *a, size_t n, double *lower, double *upper)
{
    *upper = tl_kth_smallest(a, n, n / 2);
    *lower = n > 1 ? a[0] : *upper;
    for (size_t i = 1; i < n / 2; i++) /* the largest of those below the upper middle */
        if (a[i] > *lower)
            *lower = a[i];
}

double tl_np_median(const double *a, size_t n)
{
    double *s = tl_xmalloc(n * sizeof *s);
    memcpy(s, a, n * sizeof *s);
    /* A NaN or a -0.0 has no single place among the others (the sort puts it where its
     * merges leave it): those inputs keep the sort, so that the median is the same bits. */
    int plain = 1;
    for (size_t i = 0; i < n && plain; i++)
        plain = !isnan(s[i]) && !(s[i] == 0 && signbit(s[i]));
    double lower, upper;
    if (plain) {
        tl_middle_values(s, n, &lower, &upper);
    } else {
        qsort(s, n, sizeof *s, cmp_double);
        upper = s[n / 2];
        lower = n > 1 ? s[n / 2 - 1] : upper;
    }
    double r = upper;
    if (n % 2 == 0) {
        double two[2] = {lower, upper};
        r = tl_np_sum(two, 2) / 2.0;
    }
    free(s);
    return r;
}

double tl_welford_std(const tl_welford *w)
{
    if (w->n < 2)
        return NAN;
    return sqrt(w->m2 / (double)(w->n - 1));
}

/* numpy's float order: NaN last. */
static inline int lt(double a, double b) { return a < b || (b != b && a == a); }

#define SWAP(x, y)          \
    do {                    \
        size_t tmp_ = (x);  \
        (x) = (y);          \
        (y) = tmp_;         \
    } while (0)

static void aheapsort(const double *v, size_t *tosort, size_t n)
{
    size_t *a = tosort - 1; /* 1-based, as the classic formulation */
    size_t i, j, l, tmp;
    for (l = n >> 1; l > 0; --l) {
        tmp = a[l];
        for (i = l, j = l << 1; j <= n;) {
            if (j < n && lt(v[a[j]], v[a[j + 1]]))
                j += 1;
            if (lt(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
    for (; n > 1;) {
        tmp = a[n];
        a[n] = a[1];
        n -= 1;
        for (i = 1, j = 2; j <= n;) {
            if (j < n && lt(v[a[j]], v[a[j + 1]]))
                j++;
            if (lt(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
}

void tl_np_argsort(const double *v, size_t *idx, size_t n)
{
    /* numpy partitions while more than 16 elements remain (pr - pl > 15) and insertion-sorts
     * the rest: the cut-off decides how tied keys come out.  STACK: 2 pointers a push;
     * pushes <= the depth budget, 2 log2 n. */
    enum { SMALL = 15, STACK = 256 };
    if (n < 2)
        return;
    size_t *pl = idx, *pr = idx + n - 1;
    size_t *stack[STACK], **sp = stack;
    int depth[STACK / 2], *dp = depth;
    int budget = 0;
    for (size_t m = n; m > 1; m >>= 1)
        budget++;
    budget *= 2;

    for (;;) {
        if (budget < 0) {
            aheapsort(v, pl, (size_t)(pr - pl) + 1);
            goto pop;
        }
        while (pr - pl > SMALL) {
            size_t *pm = pl + ((pr - pl) >> 1);
            if (lt(v[*pm], v[*pl]))
                SWAP(*pm, *pl);
            if (lt(v[*pr], v[*pm]))
                SWAP(*pr, *pm);
            if (lt(v[*pm], v[*pl]))
                SWAP(*pm, *pl);
            double vp = v[*pm];
            size_t *pi = pl, *pj = pr - 1;
            SWAP(*pm, *pj);
            for (;;) {
                do
                    ++pi;
                while (lt(v[*pi], vp));
                do
                    --pj;
                while (lt(vp, v[*pj]));
                if (pi >= pj)
                    break;
                SWAP(*pi, *pj);
            }
            size_t *pk = pr - 1;
            SWAP(*pi, *pk);
            /* the larger part waits on the stack */
            if (pi - pl < pr - pi) {
                *sp++ = pi + 1;
                *sp++ = pr;
                pr = pi - 1;
            } else {
                *sp++ = pl;
                *sp++ = pi - 1;
                pl = pi + 1;
            }
            *dp++ = --budget;
        }
        for (size_t *pi = pl + 1; pi <= pr; ++pi) {
            size_t vi = *pi;
            double vv = v[vi];
            size_t *pj = pi, *pk = pi - 1;
            while (pj > pl && lt(vv, v[*pk]))
                *pj-- = *pk--;
            *pj = vi;
        }
    pop:
        if (sp == stack)
            break;
        pr = *(--sp);
        pl = *(--sp);
        budget = *(--dp);
    }
}

void tl_pd_sort_desc(const double *keys, size_t n, size_t *out)
{
    /* pandas' nargsort: NaNs aside; the rest reversed, argsorted, mapped, reversed */
    size_t nn = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        nn += !isnan(keys[i]);
    double *v = tl_xmalloc((nn ? nn : 1) * sizeof *v);
    size_t *rows = tl_xmalloc((nn ? nn : 1) * sizeof *rows), *perm = tl_xmalloc((nn ? nn : 1) * sizeof *perm);
    for (size_t i = n; i-- > 0;) {
        if (!isnan(keys[i])) {
            v[k] = keys[i];
            rows[k] = i;
            k++;
        }
    }
    for (size_t i = 0; i < nn; i++)
        perm[i] = i;
    tl_np_argsort(v, perm, nn);
    for (size_t i = 0; i < nn; i++)
        out[i] = rows[perm[nn - 1 - i]];
    k = nn;
    for (size_t i = 0; i < n; i++)
        if (isnan(keys[i]))
            out[k++] = i;
    free(v);
    free(rows);
    free(perm);
}
