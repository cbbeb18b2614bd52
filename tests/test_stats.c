/*
 * test_stats.c - base/stats: the t distribution against published table values, Welch's
 * interval worked out by hand, the exact pooling of count/mean/std rows, and the
 * Benjamini-Hochberg step.
 */
#include "testutil.h"

#include "base/stats.h"

#include <math.h>

/* Two-sided critical values t_{1 - a/2, df} from the usual table (e.g. NIST/SEMATECH
 * e-Handbook of Statistical Methods, 1.3.6.7.2), to the 3 decimals printed there. */
static void test_t_quantiles_match_the_table(void **state)
{
    (void)state;
    static const struct {
        double p, df, q;
    } table[] = {
        {0.975, 1, 12.706},  {0.975, 2, 4.303},  {0.975, 5, 2.571},  {0.975, 10, 2.228},
        {0.975, 30, 2.042},  {0.975, 100, 1.984}, {0.95, 20, 1.725},  {0.99, 4, 3.747},
        {0.995, 10, 3.169},  {0.999, 3, 10.215}, {0.9995, 1, 636.619}, {0.90, 7, 1.415},
        {0.975, INFINITY, 1.960}, {0.995, INFINITY, 2.576},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        double q = tl_t_quantile(table[i].p, table[i].df);
        if (fabs(q - table[i].q) > 0.0006 * (1 + (table[i].q > 100)))
            fail_msg("t quantile %.4f at df %g: %.6f, the table says %.3f", table[i].p, table[i].df, q, table[i].q);
        /* symmetric, and the tail gives the level back */
        assert_true(fabs(tl_t_quantile(1 - table[i].p, table[i].df) + q) < 1e-9 * q);
        assert_true(fabs(tl_t_two_sided_p(q, table[i].df) - 2 * (1 - table[i].p)) < 1e-10);
    }
    /* fractional df (Welch's) lie between their neighbours */
    double q95 = tl_t_quantile(0.975, 9.5);
    assert_true(q95 < tl_t_quantile(0.975, 9) && q95 > tl_t_quantile(0.975, 10));
    assert_true(tl_t_quantile(0.5, 3) == 0);
    assert_true(isnan(tl_t_quantile(1, 3)) && isnan(tl_t_quantile(0.9, 0)));
    /* p values: t = 2.228 at df 10 is 5% two-sided; df 1 is the Cauchy: 1 - 2 atan(t) / pi */
    assert_true(fabs(tl_t_two_sided_p(2.228, 10) - 0.05) < 2e-4);
    assert_true(fabs(tl_t_two_sided_p(3.0, 1) - (1 - 2 * atan(3.0) / M_PI)) < 1e-12);
    assert_true(tl_t_two_sided_p(0, 5) == 1);
    /* the incomplete beta at known points: I_x(1, 1) = x, I_x(2, 1) = x^2, I_0.5(a, a) = 0.5 */
    assert_true(fabs(tl_betainc(1, 1, 0.3) - 0.3) < 1e-14);
    assert_true(fabs(tl_betainc(2, 1, 0.7) - 0.49) < 1e-14);
    assert_true(fabs(tl_betainc(7.5, 7.5, 0.5) - 0.5) < 1e-14);
}

/* Welch by hand: means 10 and 13, each with variance 1 on 9 df: se = sqrt(2), df = 4 /
 * (1/9 + 1/9) = 18, t_{0.975, 18} = 2.101 (table): 3 +- 2.971; p of t = 2.1213 at df 18 is
 * 0.048. */
static void test_welch_interval(void **state)
{
    (void)state;
    tl_interval r = tl_welch((tl_estimate){10, 1, 9}, (tl_estimate){13, 1, 9}, 0.95);
    assert_true(r.diff == 3);
    assert_true(fabs(r.df - 18) < 1e-12);
    assert_true(fabs(r.hi - r.lo - 2 * 2.101 * sqrt(2.0)) < 2e-3);
    assert_true(fabs((r.lo + r.hi) / 2 - 3) < 1e-12);
    assert_true(fabs(r.p - 0.0481) < 5e-4);
    /* unequal: variances 4 (df 4) and 1 (df 19): df = 25 / (16/4 + 1/19) = 6.169 */
    r = tl_welch((tl_estimate){0, 4, 4}, (tl_estimate){-1, 1, 19}, 0.90);
    assert_true(fabs(r.df - 25 / (4 + 1.0 / 19)) < 1e-9);
    assert_true(fabs(r.hi - (-1 + tl_t_quantile(0.95, r.df) * sqrt(5.0))) < 1e-12);
    assert_true(r.lo < -1 && r.hi > 0 && r.p > 0.1);
    /* no spread: the difference alone, p 0 (or 1 for none) */
    r = tl_welch((tl_estimate){2, 0, 3}, (tl_estimate){2.5, 0, 3}, 0.95);
    assert_true(r.lo == 0.5 && r.hi == 0.5 && r.p == 0);
    r = tl_welch((tl_estimate){2, 0, 3}, (tl_estimate){2, 0, 3}, 0.95);
    assert_true(r.p == 1);
    /* an unknown spread gives no interval */
    r = tl_welch((tl_estimate){2, NAN, 3}, (tl_estimate){2, 1, 3}, 0.95);
    assert_true(isnan(r.lo) && isnan(r.p) && r.diff == 0);
}

/* Rows of count/mean/std pooled: the moments of all the values. */
static void test_pooling_rows_is_exact(void **state)
{
    (void)state;
    /* {1, 2, 3}: n 3, mean 2, std 1; {4, 6}: mean 5, std sqrt(2); {10}: std NaN */
    tl_moments m = tl_moments_of(3, 2, 1), b = tl_moments_of(2, 5, sqrt(2.0)), c = tl_moments_of(1, 10, NAN);
    tl_moments_merge(&m, &b);
    assert_true(m.n == 5);
    assert_true(fabs(m.mean - 3.2) < 1e-14);
    assert_true(fabs(tl_moments_var(&m) - 3.7) < 1e-13); /* (4.84 + 1.44 + 0.04 + 0.64 + 7.84) / 4 */
    tl_moments_merge(&m, &c);
    tl_moments d = {0};
    static const double all[] = {1, 2, 3, 4, 6, 10};
    for (int i = 0; i < 6; i++)
        tl_moments_add(&d, all[i]);
    assert_true(m.n == 6 && fabs(m.mean - d.mean) < 1e-14 && fabs(m.m2 - d.m2) < 1e-12);
    assert_true(fabs(d.mean - 13.0 / 3) < 1e-14);
    /* one value: no variance; merging into nothing copies */
    tl_moments e = {0}, one = tl_moments_of(1, 7, NAN);
    assert_true(isnan(tl_moments_var(&one)));
    tl_moments_merge(&e, &one);
    assert_true(e.n == 1 && e.mean == 7 && e.m2 == 0);
    /* values far from 0 keep their spread (no cancellation) */
    tl_moments f = {0};
    tl_moments_add(&f, 1e9 + 1);
    tl_moments_add(&f, 1e9 + 3);
    assert_true(fabs(tl_moments_var(&f) - 2) < 1e-6);
}

static void test_benjamini_hochberg(void **state)
{
    (void)state;
    unsigned char rej[8];
    /* sorted 0.005 0.01 0.03 0.04 0.5 against 0.01 0.02 0.03 0.04 0.05: four */
    const double p1[] = {0.01, 0.04, 0.03, 0.005, 0.5};
    assert_int_equal(tl_bh(p1, 5, 0.05, rej), 4);
    assert_true(rej[0] && rej[1] && rej[2] && rej[3] && !rej[4]);
    /* step-up: 0.02 is above its own threshold (0.0167) but below the last one kept */
    const double p2[] = {0.04, 0.02, 0.03};
    assert_int_equal(tl_bh(p2, 3, 0.05, rej), 3);
    /* none when the smallest p is above q / m */
    const double p3[] = {0.011, 0.5, 0.9, 0.2, 0.3};
    assert_int_equal(tl_bh(p3, 5, 0.05, rej), 0);
    /* NaN is no test: m counts the others */
    const double p4[] = {NAN, 0.04, NAN};
    assert_int_equal(tl_bh(p4, 3, 0.05, rej), 1);
    assert_true(!rej[0] && rej[1] && !rej[2]);
    assert_int_equal(tl_bh(p4, 0, 0.05, rej), 0);
}

static void test_holm(void **state)
{
    (void)state;
    unsigned char rej[8];
    /* sorted 0.005 0.01 0.03 0.04 against 0.05/5 0.05/4 0.05/3: two, then 0.03 > 0.0167 stops */
    const double p1[] = {0.01, 0.04, 0.03, 0.005, 0.5};
    assert_int_equal(tl_holm(p1, 5, 0.05, rej), 2);
    assert_true(rej[0] && !rej[1] && !rej[2] && rej[3] && !rej[4]);
    /* step-down: it stops at the first p over its threshold, even if a later one is under its own */
    const double p2[] = {0.02, 0.024, 0.001};
    assert_int_equal(tl_holm(p2, 3, 0.05, rej), 3); /* 0.001 <= 0.0167, 0.02 <= 0.025, 0.024 <= 0.05 */
    const double p3[] = {0.03, 0.04, 0.001};
    assert_int_equal(tl_holm(p3, 3, 0.05, rej), 1); /* 0.03 > 0.025 stops after the first */
    const double p4[] = {NAN, 0.05};
    assert_int_equal(tl_holm(p4, 2, 0.05, rej), 1);
}

/* digamma, trigamma at known values; the prior of variances drawn from one sigma2 has a large
 * d0 and s0 near sigma2; of widely spread ones a small d0. */
static void test_variance_prior(void **state)
{
    (void)state;
    const double euler = 0.57721566490153286;
    assert_true(fabs(tl_digamma(1) + euler) < 1e-12);
    assert_true(fabs(tl_digamma(0.5) + euler + 2 * log(2.0)) < 1e-12);
    assert_true(fabs(tl_trigamma(1) - M_PI * M_PI / 6) < 1e-12);
    assert_true(fabs(tl_trigamma(0.5) - M_PI * M_PI / 2) < 1e-11);
    assert_true(fabs(tl_trigamma(10.5) - 0.0999169560591255) < 1e-12);
    /* the same variance everywhere: nothing left for the prior to explain, d0 capped at the df */
    double s2[6] = {4, 4, 4, 4, 4, 4}, df[6] = {3, 3, 3, 3, 3, 3}, s0, d0;
    tl_variance_prior(s2, df, 6, &s0, &d0);
    /* s0 undoes the bias of a log-variance: E[log s2] = log sigma2 + psi(d/2) - log(d/2) */
    assert_true(d0 == 18 && fabs(s0 - 4 * exp(-tl_digamma(1.5) + log(1.5))) < 1e-12);
    /* spread over three orders of magnitude on 20 df each: the variances are their own */
    double w[6] = {0.01, 100, 1, 0.1, 10, 1000}, wdf[6] = {20, 20, 20, 20, 20, 20};
    tl_variance_prior(w, wdf, 6, &s0, &d0);
    assert_true(d0 > 0 && d0 < 1);
    /* fewer than 3 usable: no prior */
    double x[3] = {1, NAN, 2}, xdf[3] = {3, 3, 0};
    tl_variance_prior(x, xdf, 3, &s0, &d0);
    assert_true(d0 == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_quantiles_match_the_table),
        cmocka_unit_test(test_welch_interval),
        cmocka_unit_test(test_pooling_rows_is_exact),
        cmocka_unit_test(test_benjamini_hochberg),
        cmocka_unit_test(test_holm),
        cmocka_unit_test(test_variance_prior),
    };
    return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
