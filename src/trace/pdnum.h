/*
 * pdnum.h - the arithmetic and the orders of pandas and numpy that the report sheets
 * reproduce bit for bit (TRACES.md §4.5): Kahan-compensated group sums, numpy's pairwise
 * summation, pandas' one-pass group variance, and numpy's introsort (the default
 * `sort_values` order, whose tie order a stable sort does not give).
 * For src/trace/ and the layers above that reproduce pandas' numbers (perf, ranks).
 */
#ifndef TL_TRACE_PDNUM_H
#define TL_TRACE_PDNUM_H

#include <stddef.h>

/* pandas' groupby sum (and the sum behind its mean): Kahan-compensated, in row order. */
typedef struct tl_kahan {
    double sum, comp;
} tl_kahan;
static inline void tl_kahan_add(tl_kahan *k, double v)
{
    double y = v - k->comp;
    double t = k->sum + y;
    k->comp = t - k->sum - y;
    k->sum = t;
}

/* numpy's add.reduce of a[0..n) (the pairwise summation of Series.sum and np.sum). */
double tl_np_sum(const double *a, size_t n);

/* np.mean, np.std (population, ddof 0) and np.median of a[0..n), n >= 1; median selects
 * in a copy. */
double tl_np_mean(const double *a, size_t n);
double tl_np_std(const double *a, size_t n);
double tl_np_median(const double *a, size_t n);

/* The k-th smallest (0-based) of a[0..n), k < n, no NaN; a rearranged so that a[0..k) hold
 * values not above it.  A selection, linear on average; never worse than n log n, an
 * input built against its pivot rule included (a trace's durations are the input's to
 * choose): past 2 log2(n) + 8 rounds the rest of the range is sorted. */
double tl_kth_smallest(double *a, size_t n, size_t k);
/* The same, sorting after `rounds` rounds (the tests reach that path with few). */
double tl_kth_smallest_within(double *a, size_t n, size_t k, unsigned rounds);

/* The two middle values of a[0..n) (n >= 1, no NaN) by tl_kth_smallest: *upper the
 * (n/2)-th smallest, *lower the one before it in sorted order (*upper when n is 1).  The
 * median is *upper for odd n, their mean for even n.  a is rearranged. */
void tl_middle_values(double *a, size_t n, double *lower, double *upper);

/* pandas' groupby var (Welford's one-pass update) with ddof 1: feed values in row order,
 * then tl_welford_std (NaN for fewer than two values). */
typedef struct tl_welford {
    double mean, m2;
    size_t n;
} tl_welford;
static inline void tl_welford_add(tl_welford *w, double v)
{
    w->n++;
    double old = w->mean;
    w->mean += (v - old) / (double)w->n;
    w->m2 += (v - w->mean) * (v - old);
}
double tl_welford_std(const tl_welford *w);

/* The row order pandas' sort_values(ascending=False) gives keys[0..n) with its default
 * kind (numpy's introsort on the reversed rows, reversed back): out[0..n) receives row
 * indexes; NaN keys go last in row order. */
void tl_pd_sort_desc(const double *keys, size_t n, size_t *out);

/* numpy's argsort(kind="quicksort") of v[0..n) ascending into idx (which holds the
 * starting permutation, usually 0..n-1). */
void tl_np_argsort(const double *v, size_t *idx, size_t n);

#endif
