/*
 * stats.c - moments, Student's t, Welch's interval, Benjamini-Hochberg (see stats.h).
 */
#include "base/stats.h"

#include "base/sort.h"
#include "base/util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ---- moments ----------------------------------------------------------------------------- */

void tl_moments_add(tl_moments *m, double x)
{
    m->n += 1;
    double d = x - m->mean;
    m->mean += d / m->n;
    m->m2 += d * (x - m->mean);
}

void tl_moments_merge(tl_moments *a, const tl_moments *b)
{
    if (b->n <= 0)
        return;
    if (a->n <= 0) {
        *a = *b;
        return;
    }
    double n = a->n + b->n, d = b->mean - a->mean;
    a->mean += d * (b->n / n);
    a->m2 += b->m2 + d * d * (a->n * b->n / n);
    a->n = n;
}

tl_moments tl_moments_of(double n, double mean, double std)
{
    tl_moments m = {n, mean, 0};
    if (n > 1 && !isnan(std))
        m.m2 = std * std * (n - 1);
    else if (n > 1)
        m.m2 = NAN; /* a spread that should be there is not */
    return m;
}

double tl_moments_var(const tl_moments *m) { return m->n >= 2 ? m->m2 / (m->n - 1) : NAN; }

/* ---- Student's t ------------------------------------------------------------------------- */

/* The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2),
 * where it converges fast. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        double m2 = 2.0 * m;
        /* the even step */
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        h *= d * c;
        /* the odd step */
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

double tl_betainc(double a, double b, double x)
{
    if (isnan(x) || isnan(a) || isnan(b) || a <= 0 || b <= 0 || x < 0 || x > 1)
        return NAN;
    if (x == 0 || x == 1)
        return x;
    double lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lfront) * beta_cf(a, b, x) / a;
    /* I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges on the other side */
    return 1 - exp(lfront) * beta_cf(b, a, 1 - x) / b;
}

double tl_t_two_sided_p(double t, double df)
{
    if (isnan(t) || isnan(df) || df <= 0)
        return NAN;
    if (isinf(t))
        return 0;
    if (isinf(df))
        return erfc(fabs(t) / sqrt(2.0));
    double x = df / (df + t * t);
    return tl_betainc(df / 2, 0.5, x);
}

/* The density of T at t. */
static double t_pdf(double t, double df)
{
    if (isinf(df))
        return exp(-t * t / 2) / sqrt(2 * M_PI);
    double lc = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI);
    return exp(lc - (df + 1) / 2 * log1p(t * t / df));
}

double tl_t_quantile(double p, double df)
{
    if (isnan(p) || isnan(df) || df <= 0 || p <= 0 || p >= 1)
        return NAN;
    if (p == 0.5)
        return 0;
    double u = p < 0.5 ? p : 1 - p, target = 2 * u; /* the two-sided tail of |q| */
    /* a bracket [lo, hi] around the root of tail(t) = target, t > 0 */
    double lo = 0, hi = 1;
    while (tl_t_two_sided_p(hi, df) > target && hi < 1e300)
        lo = hi, hi *= 2;
    double t = lo > 0 ? lo : 0.5 * hi;
    for (int it = 0; it < 200; it++) {
        double f = tl_t_two_sided_p(t, df) - target;
        if (f > 0)
            lo = t;
        else
            hi = t;
        if (fabs(f) <= 1e-15 * target || hi - lo <= 4 * DBL_EPSILON * hi)
            break;
        /* Newton on the tail (its slope is -2 pdf), bisection when it leaves the bracket */
        double slope = -2 * t_pdf(t, df), next = slope != 0 ? t - f / slope : NAN;
        if (!(next > lo && next < hi))
            next = hi / lo > 4 && lo > 0 ? sqrt(lo * hi) : 0.5 * (lo + hi);
        t = next;
    }
    return p < 0.5 ? -t : t;
}

/* ---- Welch's interval ---------------------------------------------------------------------- */

tl_interval tl_welch(tl_estimate a, tl_estimate b, double confidence)
{
    tl_interval r = {b.value - a.value, NAN, NAN, NAN, NAN};
    if (isnan(a.var) || isnan(b.var) || isnan(a.df) || isnan(b.df) || a.df <= 0 || b.df <= 0 || isnan(r.diff))
        return r;
    double se2 = a.var + b.var;
    if (se2 <= 0) {
        /* no spread on either side: the difference is what it is */
        r.lo = r.hi = r.diff;
        r.p = r.diff == 0 ? 1 : 0;
        r.df = a.df + b.df;
        return r;
    }
    double den = (a.var > 0 ? a.var * a.var / a.df : 0) + (b.var > 0 ? b.var * b.var / b.df : 0);
    r.df = se2 * se2 / den;
    double se = sqrt(se2);
    r.p = tl_t_two_sided_p(r.diff / se, r.df);
    double q = tl_t_quantile(0.5 + confidence / 2, r.df);
    r.lo = r.diff - q * se;
    r.hi = r.diff + q * se;
    return r;
}

/* ---- moderated variances -------------------------------------------------------------------- */

double tl_digamma(double x)
{
    double r = 0;
    while (x < 12) /* psi(x) = psi(x + 1) - 1/x, then the asymptotic series */
        r -= 1 / x, x += 1;
    double f = 1 / (x * x);
    return r + log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

double tl_trigamma(double x)
{
    double r = 0;
    while (x < 12) /* psi'(x) = psi'(x + 1) + 1/x^2 */
        r += 1 / (x * x), x += 1;
    double f = 1 / (x * x);
    return r + 1 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)));
}

/* The y > 0 with trigamma(y) = x (x > 0), by Newton's method on 1 / trigamma (Smyth's). */
static double trigamma_inverse(double x)
{
    if (x > 1e7)
        return 1 / sqrt(x);
    if (x < 1e-6)
        return 1 / x;
    double y = 0.5 + 1 / x;
    for (int i = 0; i < 50; i++) {
        double tri = tl_trigamma(y);
        /* d(1/trigamma)/dy = -psi''/psi'^2; psi'' by a central difference is enough here */
        double h = 1e-5 * y, tetra = (tl_trigamma(y + h) - tl_trigamma(y - h)) / (2 * h);
        double dif = tri * (1 - tri / x) / tetra;
        y += dif;
        if (y <= 0)
            y = 1e-8;
        if (-dif / y < 1e-10)
            break;
    }
    return y;
}

void tl_variance_prior(const double *s2, const double *df, size_t n, double *s0, double *d0)
{
    double sum = 0, sumsq = 0, tri = 0, total_df = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(df[i] > 0) || !(s2[i] > 0))
            continue;
        /* log s2 less its expectation's sampling part: E[log s2] = log sigma2 + psi(d/2) - log(d/2) */
        double e = log(s2[i]) - tl_digamma(df[i] / 2) + log(df[i] / 2);
        sum += e;
        sumsq += e * e;
        tri += tl_trigamma(df[i] / 2);
        total_df += df[i];
        m++;
    }
    *s0 = NAN;
    *d0 = 0;
    if (m < 3)
        return;
    double mean = sum / (double)m, var = (sumsq - sum * mean) / (double)(m - 1);
    double excess = var - tri / (double)m; /* the spread sampling does not explain */
    *d0 = excess > 0 ? 2 * trigamma_inverse(excess) : INFINITY;
    /* E[e] = log s0 + psi(d0/2) - log(d0/2): 0 for an infinite d0 */
    *s0 = isinf(*d0) ? exp(mean) : exp(mean - tl_digamma(*d0 / 2) + log(*d0 / 2));
    if (*d0 > total_df)
        *d0 = total_df;
}

/* ---- false discovery rate ----------------------------------------------------------------- */

static int cmp_p(size_t a, size_t b, void *ctx)
{
    const double *p = ctx;
    return p[a] < p[b] ? -1 : p[a] > p[b];
}

/* The step-down and step-up procedures' common start: reject[] cleared, and the indices
 * of the p values that are not NaN, by ascending p, in *idx (malloc'd); their count. */
static size_t ranked(const double *p, size_t n, unsigned char *reject, size_t **idx)
{
    size_t m = 0;
    *idx = tl_xmalloc((n ? n : 1) * sizeof **idx);
    for (size_t i = 0; i < n; i++) {
        reject[i] = 0;
        if (!isnan(p[i]))
            (*idx)[m++] = i;
    }
    tl_sort_rows(*idx, m, cmp_p, (void *)p);
    return m;
}

size_t tl_bh(const double *p, size_t n, double q, unsigned char *reject)
{
    size_t *idx, m = ranked(p, n, reject, &idx);
    size_t k = 0; /* the largest rank whose p is under its threshold */
    for (size_t r = 1; r <= m; r++)
        if (p[idx[r - 1]] <= (double)r * q / (double)m)
            k = r;
    for (size_t r = 0; r < k; r++)
        reject[idx[r]] = 1;
    free(idx);
    return k;
}

size_t tl_holm(const double *p, size_t n, double a, unsigned char *reject)
{
    size_t *idx, m = ranked(p, n, reject, &idx);
    size_t k = 0;
    while (k < m && p[idx[k]] <= a / (double)(m - k))
        reject[idx[k++]] = 1;
    free(idx);
    return k;
}
