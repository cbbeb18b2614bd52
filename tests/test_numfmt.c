/*
 * test_numfmt.c - numbers must read exactly as Python's repr() writes them.
 *
 * Besides fixed cases, tl_fmt_double (Ryu-style digit generation) is compared byte for
 * byte with numfmt.c's snprintf/strtod reference on random bit patterns and on families
 * of awkward values.  The environment tunes the run:
 *   TL_NUMFMT_EXHAUSTIVE=1   10 million random bit patterns (default 2 million) and five
 *                            times more of every other family: about 30 s of CPU;
 *   TL_NUMFMT_QUICK=1        a fiftieth of the default, for valgrind;
 *   TL_NUMFMT_BENCH=1        no tests: time fast and slow paths on 1M values of the form
 *                            random() * 1000.0 / 7 and print ns per number.
 */
#include "testutil.h"

#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

/* numfmt.c internals for the tests: the slow reference and the fast path's fallbacks. */
size_t tl__fmt_double_slow(double d, char *buf);
unsigned long tl__fmt_double_fallbacks(void);

static void check_double(double d, const char *want)
{
    char buf[TL_NUMFMT_MAX];
    size_t n = tl_fmt_double(d, buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_fixed_notation(void **state)
{
    (void)state;
    check_double(0.1, "0.1");
    check_double(100.0, "100.0");
    check_double(1.5, "1.5");
    check_double(-2.25, "-2.25");
    check_double(0.0, "0.0");
    check_double(-0.0, "-0.0");
    check_double(0.0001, "0.0001");
    check_double(123456789012345.6, "123456789012345.6");
    check_double(1e15, "1000000000000000.0");
    check_double(2738.978795898438, "2738.978795898438");
    check_double(1.0 / 3.0, "0.3333333333333333");
    check_double(2.0 / 3.0, "0.6666666666666666");
    check_double(0.1 + 0.2, "0.30000000000000004");
}

static void test_scientific_notation(void **state)
{
    (void)state;
    check_double(1e-05, "1e-05");
    check_double(1.5e-05, "1.5e-05");
    check_double(1e16, "1e+16");
    check_double(1.2345678901234568e+17, "1.2345678901234568e+17");
    check_double(5e-324, "5e-324");
    check_double(1.7976931348623157e+308, "1.7976931348623157e+308");
    check_double(-3e100, "-3e+100");
}

static void test_special_values(void **state)
{
    (void)state;
    check_double(INFINITY, "inf");
    check_double(-INFINITY, "-inf");
    check_double(NAN, "nan");
}

/* Whatever the value, the text reads back to the same double. */
static void test_round_trip(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d))
            continue;
        char buf[TL_NUMFMT_MAX];
        tl_fmt_double(d, buf);
        assert_true(strtod(buf, NULL) == d);
    }
}

/* ---- the fast path against the slow reference ----------------------------------------- */

/* Multiplier on the default sizes, from the environment. */
static double scale(void)
{
    const char *ex = getenv("TL_NUMFMT_EXHAUSTIVE"), *quick = getenv("TL_NUMFMT_QUICK");
    if (ex && *ex && strcmp(ex, "0") != 0)
        return 5.0;
    if (quick && *quick && strcmp(quick, "0") != 0)
        return 0.02;
    return 1.0;
}

static long scaled(long n)
{
    long s = (long)((double)n * scale());
    return s > 0 ? s : 1;
}

static uint64_t rng_state = 0x243F6A8885A308D3u;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static long n_compared;

/* 0 when the fast and slow paths agree on d (and on -d). */
static int differs(double d)
{
    char fast[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX];
    /* the sign is one character: check it on a sample */
    for (int neg = 0; neg < 2; neg++, d = -d) {
        size_t n = tl_fmt_double(d, fast);
        tl__fmt_double_slow(d, slow);
        if (strcmp(fast, slow) != 0 || n != strlen(slow)) {
            print_error("%a (bits %016llx): fast \"%s\", slow \"%s\"\n", d,
                        (unsigned long long)to_bits(d), fast, slow);
            return 1;
        }
        if (rng() & 15)
            break;
    }
    return 0;
}

static void same(double d)
{
    n_compared++;
    if (differs(d))
        fail();
}

/* d and its n neighbours on either side. */
static void same_around(double d, int n)
{
    same(d);
    double up = d, down = d;
    for (int i = 0; i < n; i++) {
        up = nextafter(up, INFINITY);
        down = nextafter(down, 0);
        if (isfinite(up))
            same(up);
        if (down > 0)
            same(down);
    }
}

/* Runs first, so the tables are built while two threads race to use them. */
struct thread_arg {
    uint64_t seed;
    long bad;
};

static void *thread_body(void *p)
{
    struct thread_arg *a = p;
    uint64_t x = a->seed;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d = i & 1 ? from_bits(x) : (double)(x >> 40) / 1000.0;
        if (!isfinite(d))
            continue;
        char fast[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX];
        tl_fmt_double(d, fast);
        tl__fmt_double_slow(d, slow);
        a->bad += strcmp(fast, slow) != 0;
    }
    return NULL;
}

static void test_fast_two_threads_first_use(void **state)
{
    (void)state;
    struct thread_arg a[2] = {{0x9E3779B97F4A7C15u, 0}, {0xD1B54A32D192ED03u, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_body, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(a[0].bad + a[1].bad, 0);
}

/* Known answers from Python, ties (round half to even on the digit) among them. */
static void test_fast_known_answers(void **state)
{
    (void)state;
    check_double(562949953421312.25, "562949953421312.2");
    check_double(562949953421312.75, "562949953421312.8");
    check_double(70368744177664.125, "70368744177664.12");
    check_double(70368744177664.375, "70368744177664.38");
    check_double(1152921504606846976.0, "1.152921504606847e+18");
    /* powers of two, where the interval reaches twice as far up as down: the closest
     * 16-digit decimal (below) does not read back, the next one up does */
    check_double(ldexp(1.0, -24), "5.960464477539063e-08");
    check_double(ldexp(1.0, 89), "6.189700196426902e+26");
    check_double(9007199254740993.0, "9007199254740992.0");
    check_double(9007199254740994.0, "9007199254740994.0");
    check_double(1e23, "1e+23");
    check_double(1e22, "1e+22");
    check_double(DBL_MIN, "2.2250738585072014e-308");
    check_double(nextafter(DBL_MIN, 0), "2.225073858507201e-308");
    check_double(3 * DBL_TRUE_MIN, "1.5e-323");
    check_double(0.1 + 0.7, "0.7999999999999999");
    check_double(1000.0 / 7, "142.85714285714286");
    check_double(9999999999999998.0, "9999999999999998.0");
    check_double(1e16 - 2, "9999999999999998.0");
    check_double(0.00001234, "1.234e-05");
    check_double(0.0001234, "0.0001234");
    check_double(123.0, "123.0");
}

/* Random bit patterns, n per thread; the slow reference takes 2 us on these. */
struct random_arg {
    uint64_t state;
    long n, bad;
    uint64_t first_bad;
};

static void *random_body(void *p)
{
    struct random_arg *a = p;
    char fast[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX];
    for (long i = 0; i < a->n; i++) {
        uint64_t z = (a->state += 0x9E3779B97F4A7C15u); /* splitmix64 */
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
        z ^= z >> 31;
        double d = from_bits(z);
        if (!isfinite(d))
            continue;
        tl_fmt_double(d, fast);
        tl__fmt_double_slow(d, slow);
        if (strcmp(fast, slow) != 0 && !a->bad++)
            a->first_bad = z;
    }
    return NULL;
}

static void test_fast_random_bits(void **state)
{
    (void)state;
    long n = scaled(2000000);
    unsigned long fallbacks = tl__fmt_double_fallbacks();
    struct random_arg a[2] = {{0x0123456789ABCDEFu, n / 2, 0, 0},
                              {0xFEDCBA9876543210u, n - n / 2, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, random_body, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        if (a[i].bad)
            differs(from_bits(a[i].first_bad)); /* prints it */
    assert_int_equal(a[0].bad + a[1].bad, 0);
    n_compared += n;
    print_message("%ld random bit patterns (two threads); slow-path fallbacks: %lu\n", n,
                  tl__fmt_double_fallbacks() - fallbacks);
}

/* Every binary exponent, with edge and random significands. */
static void test_fast_every_exponent(void **state)
{
    (void)state;
    const uint64_t mask = ((uint64_t)1 << 52) - 1;
    const uint64_t edges[] = {0, 1, 2, 3, 4, 5, mask, mask - 1, mask - 2, (uint64_t)1 << 51,
                              ((uint64_t)1 << 51) - 1, ((uint64_t)1 << 51) + 1};
    long per = scaled(16);
    for (uint64_t e = 0; e < 2047; e++) {
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            if (e || edges[i])
                same(from_bits(e << 52 | edges[i]));
        for (long i = 0; i < per; i++)
            same(from_bits(e << 52 | (rng() & mask)));
    }
}

/* Values as reports hold them: k/1000, millisecond times, a*1000/7, integers. */
static void test_fast_decimal_looking(void **state)
{
    (void)state;
    long n = scaled(50000);
    for (long k = 0; k < n; k++) {
        same((double)k / 1000.0);
        same((double)k / 100.0 + 0.01);
    }
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20};
    for (long i = 0; i < n; i++) {
        /* up to 16 significant digits, at any of 21 decimal positions */
        uint64_t digits = rng() % 10000000000000000u >> (rng() % 50);
        same((double)digits / p10[rng() % 21]);
        same((double)digits * p10[rng() % 8]);
        /* a millisecond time from a nanosecond count, like 2738.978795898438 */
        same((double)(rng() % 100000000000000u) / 1e9);
        same((double)(rng() % 2147483648u) * 1000.0 / 7);
        /* integers up to 2^53, and beyond */
        same((double)(rng() >> (11 + rng() % 53)));
        same((double)(rng() >> (rng() % 64)));
    }
    for (int i = 0; i <= 53; i++)
        same_around(ldexp(1.0, i), 3);
}

/* Powers of 10 and 2 and their neighbours, subnormals, the extremes. */
static void test_fast_powers_and_extremes(void **state)
{
    (void)state;
    for (int e = -323; e <= 308; e++) {
        char text[32];
        snprintf(text, sizeof text, "1e%d", e);
        same_around(strtod(text, NULL), 4);
        for (int m = 2; m <= 9; m++) {
            snprintf(text, sizeof text, "%de%d", m, e);
            double d = strtod(text, NULL);
            if (isfinite(d))
                same_around(d, 1);
        }
    }
    for (int e = -1074; e <= 1023; e++)
        same_around(ldexp(1.0, e), 3);
    same_around(DBL_MAX, 8);
    same_around(DBL_MIN, 8);
    same_around(DBL_TRUE_MIN, 8);
    same_around(nextafter(DBL_MIN, 0), 8); /* the largest subnormal */
    long n = scaled(50000);
    for (long k = 1; k <= n / 10; k++)
        same(k * DBL_TRUE_MIN);
    for (long i = 0; i < n; i++) {
        uint64_t m = rng() & (((uint64_t)1 << 52) - 1);
        same(from_bits(m >> (rng() % 52))); /* subnormals of every size */
    }
}

/* Binades where exact ties between two shortest candidates are common (a double there
 * can end in 5 just past the digits its precision allows), e.g. 2^46 + 0.125. */
static void test_fast_dense_binades(void **state)
{
    (void)state;
    long per = scaled(1000);
    for (int e = -70; e <= 80; e++)
        for (long i = 0; i < per; i++) {
            uint64_t m = ((uint64_t)1 << 52) | (rng() & (((uint64_t)1 << 52) - 1));
            same(ldexp((double)m, e - 52));
            /* few significant bits: the exact decimal is short, so ties are likelier */
            same(ldexp((double)(m >> (rng() % 50)), e - 52));
        }
    print_message("%ld values compared, fast path against slow, in all\n", n_compared);
}

/* ---- the micro-benchmark (TL_NUMFMT_BENCH=1) --------------------------------------- */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int bench(void)
{
    enum { N = 1000000 };
    double *v = malloc(N * sizeof *v);
    if (!v)
        return 1;
    srandom(1);
    for (int i = 0; i < N; i++)
        v[i] = (double)random() * 1000.0 / 7;
    char buf[TL_NUMFMT_MAX];
    size_t (*const fns[2])(double, char *) = {tl_fmt_double, tl__fmt_double_slow};
    const char *names[2] = {"tl_fmt_double (fast)", "snprintf/strtod reference"};
    for (int f = 0; f < 2; f++) {
        double best = 1e300;
        size_t total = 0;
        for (int round = 0; round < 3; round++) {
            double t0 = now_ns();
            for (int i = 0; i < N; i++)
                total += fns[f](v[i], buf);
            double t = (now_ns() - t0) / N;
            best = t < best ? t : best;
        }
        printf("%-26s %7.1f ns/number (best of 3 over %d values, %zu chars)\n", names[f],
               best, N, total);
    }
    free(v);
    return 0;
}

static void test_integers(void **state)
{
    (void)state;
    char buf[TL_NUMFMT_MAX];
    tl_fmt_int(0, buf);
    assert_string_equal(buf, "0");
    tl_fmt_int(-48, buf);
    assert_string_equal(buf, "-48");
    tl_fmt_int(INT64_MIN, buf);
    assert_string_equal(buf, "-9223372036854775808");
    tl_fmt_int(INT64_MAX, buf);
    assert_string_equal(buf, "9223372036854775807");
}

int main(void)
{
    if (getenv("TL_NUMFMT_BENCH"))
        return bench();
    const struct CMUnitTest tests[] = {
        /* first: the tables are built on first use, with two threads racing */
        cmocka_unit_test(test_fast_two_threads_first_use),
        cmocka_unit_test(test_fixed_notation), cmocka_unit_test(test_scientific_notation),
        cmocka_unit_test(test_special_values), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_integers), cmocka_unit_test(test_fast_known_answers),
        cmocka_unit_test(test_fast_random_bits), cmocka_unit_test(test_fast_every_exponent),
        cmocka_unit_test(test_fast_decimal_looking),
        cmocka_unit_test(test_fast_powers_and_extremes),
        cmocka_unit_test(test_fast_dense_binades),
    };
    return cmocka_run_group_tests_name("numfmt", tests, NULL, NULL);
}
