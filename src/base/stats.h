/*
 * stats.h - the statistics a verdict rests on: sample moments (pooled exactly from
 * per-group count/mean/std), Student's t distribution, Welch's interval for a difference,
 * and the Benjamini-Hochberg step that controls the false discovery rate across many tests.
 *
 * Pure math on doubles (libm only).  The t distribution is computed here, not taken from a
 * library: its tail is the regularized incomplete beta function (a continued fraction,
 * evaluated by the modified Lentz method), and its quantile is found by safeguarded Newton
 * steps on that tail.  test_stats checks both against published table values.
 */
#ifndef TL_STATS_H
#define TL_STATS_H

#include <stddef.h>

/* ---- moments ----------------------------------------------------------------------------- */

/* A sample summarised: n values, their mean, and the sum of squared deviations from it. */
typedef struct tl_moments {
    double n, mean, m2;
} tl_moments;

/* Add one value (Welford's update: no cancellation for values far from 0). */
void tl_moments_add(tl_moments *m, double x);

/* `a` becomes the moments of a's and b's values together (Chan et al.'s pairwise
 * formula: exact, whatever the two means). */
void tl_moments_merge(tl_moments *a, const tl_moments *b);

/* The moments of a group given as count, mean and sample standard deviation (divisor
 * n - 1, as pandas' std), as TraceLens' per-argument rows give them; a std that is NaN
 * (pandas' std of one value) counts as 0 when n <= 1.  Merging such groups gives the
 * moments of all their values exactly. */
tl_moments tl_moments_of(double n, double mean, double std);

/* The sample variance (divisor n - 1); NaN for fewer than 2 values. */
double tl_moments_var(const tl_moments *m);

/* ---- Student's t ------------------------------------------------------------------------- */

/* The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1. */
double tl_betainc(double a, double b, double x);

/* P(|T| > |t|) for T with `df` degrees of freedom (df > 0, need not be whole; infinite df
 * is the normal distribution).  NaN for df <= 0 or NaN input. */
double tl_t_two_sided_p(double t, double df);

/* The p quantile of T with `df` degrees of freedom (0 < p < 1): P(T <= q) = p.  NaN
 * outside that range. */
double tl_t_quantile(double p, double df);

/* ---- Welch's interval ---------------------------------------------------------------------- */

/* An estimate (a mean, a total), the variance of that estimate, and the degrees of
 * freedom the variance rests on (n - 1 for a sample of n). */
typedef struct tl_estimate {
    double value, var, df;
} tl_estimate;

/* The difference b - a, its interval at `confidence` (0.95: 95%), the two-sided p value
 * of "no difference", and the Welch-Satterthwaite degrees of freedom. */
typedef struct tl_interval {
    double diff, lo, hi, p, df;
} tl_interval;

/* Welch's interval for b.value - a.value: standard error sqrt(a.var + b.var), degrees of
 * freedom (a.var + b.var)^2 / (a.var^2 / a.df + b.var^2 / b.df).  With no spread at all
 * (both variances 0) the interval is the difference itself and p is 0 for a difference,
 * 1 for none.  lo, hi, p and df are NaN when a variance or df is NaN or a df is <= 0. */
tl_interval tl_welch(tl_estimate a, tl_estimate b, double confidence);

/* ---- moderated variances (empirical Bayes) --------------------------------------------------- */

/* The digamma and trigamma functions (x > 0). */
double tl_digamma(double x);
double tl_trigamma(double x);

/*
 * The prior of many variances s2[i] (each on df[i] > 0 degrees of freedom; entries with
 * df <= 0 or a NaN or non-positive s2 are skipped), by Smyth's moment estimator (Smyth 2004,
 * "Linear models and empirical Bayes methods for assessing differential expression"): the
 * log-variances' mean gives the prior variance *s0, the part of their spread that sampling
 * does not explain gives the prior degrees of freedom *d0 (0 when every variance is its own,
 * capped at the sum of df: the prior is estimated from no more than that).  Each variance
 * then moderates to (d0 s0 + df s2) / (d0 + df) on d0 + df degrees of freedom.  Fewer than 3
 * usable variances: *d0 = 0.
 */
void tl_variance_prior(const double *s2, const double *df, size_t n, double *s0, double *d0);

/* ---- false discovery rate ----------------------------------------------------------------- */

/*
 * The Benjamini-Hochberg step at false discovery rate q over p[0..n): reject[i] = 1 for
 * the tests whose p is at most the largest p_(k) with p_(k) <= k q / m (m: the p values
 * that are not NaN; a NaN p is no test and never rejected).  Returns how many are rejected.
 * Under independent (or positively dependent) tests the expected share of false rejections
 * among the rejections is at most q; when every null is true, the chance of any rejection
 * is at most q.
 */
size_t tl_bh(const double *p, size_t n, double q, unsigned char *reject);

/*
 * Holm's step-down at family-wise level a over p[0..n): the p values in ascending order are
 * rejected while p_(k) <= a / (m - k + 1) (k = 1, 2, ...; m as above, NaN never rejected).
 * Returns how many are rejected.  Whatever the number of true changes and however the tests
 * depend on each other, the chance of rejecting any true null is at most a: the error that a
 * CI gate and an engineer chasing every listed op pay for.
 */
size_t tl_holm(const double *p, size_t n, double a, unsigned char *reject);

#endif
