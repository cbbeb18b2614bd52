/*
 * test_numfmt.c - numbers must read exactly as Python's repr() writes them, and read
 * back exactly as strtod reads them.
 *
 * Besides fixed cases, tl_fmt_double (Ryu/Schubfach-style digit generation) is compared
 * byte for byte with numfmt.c's snprintf/strtod reference on random bit patterns and on
 * families of awkward values (test_numfmt_scalar.c does the same for the build without
 * SSE2), tl_fmt_int with snprintf, and neither may write past the room numfmt.h
 * promises.  tl_decimal_to_double (Eisel-Lemire), and tl_text_to_number which uses it,
 * are compared bit for bit with strtod on random doubles printed in several ways, random
 * decimals over the whole exponent range, and exact ties.  The environment tunes the
 * run:
 *   TL_NUMFMT_EXHAUSTIVE=1   10 million random bit patterns (default 2 million) and five
 *                            times more of every other family: about 30 s of CPU;
 *   TL_NUMFMT_QUICK=1        a fiftieth of the default, for valgrind;
 *   TL_NUMFMT_PARSE_SOAK=N   N cases (instead of 100000 / 300000, and N / 10 ties
 *                            instead of 3000) in each random test of the parser, e.g.
 *                            100000000: four and a half minutes on two cores;
 *   TL_NUMFMT_BENCH=1        no tests: time fast and slow paths on 1M values of the form
 *                            random() * 1000.0 / 7 and print ns per number, tl_fmt_int
 *                            on 1M integers of 1 to 19 digits, and the parser on the
 *                            doubles' repr() against strtod.
 */
#include "testutil.h"

#include "base/numfmt.h"
#include "table/table.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

/* numfmt.c internals for the tests: the slow reference, the general path alone, and how
 * often the fast path fell back. */
size_t tl__fmt_double_slow(double d, char *buf);
size_t tl__fmt_double_general(double d, char *buf);
unsigned long tl__fmt_double_fallbacks(void);
unsigned long tl__fmt_double_doubts(void);

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

/* ---- the parser against strtod: helpers -------------------------------------------- */

/* 0 when tl_text_to_number reads text bit for bit as strtod does (as strtoll does, for
 * an integer); otherwise prints the case and returns 1. */
static int parse_differs(const char *text)
{
    tl_cell c;
    double want = strtod(text, NULL);
    if (!tl_text_to_number(text, strlen(text), &c)) {
        print_error("\"%s\": not read as a number\n", text);
        return 1;
    }
    if (c.kind == TL_INT) {
        errno = 0;
        long long v = strtoll(text, NULL, 10);
        if (strpbrk(text, ".eE") || errno || c.v.i != v) {
            print_error("\"%s\": read as the integer %lld\n", text, (long long)c.v.i);
            return 1;
        }
        return 0;
    }
    if (c.kind != TL_FLOAT || to_bits(c.v.f) != to_bits(want)) {
        print_error("\"%s\": read as %a (bits %016llx, kind %d), strtod: %a (bits %016llx)\n",
                    text, c.v.f, (unsigned long long)to_bits(c.v.f), c.kind, want,
                    (unsigned long long)to_bits(want));
        return 1;
    }
    return 0;
}

/* 0 when tl_decimal_to_double(w, q) gives strtod's double for "<w>e<q>", or declines a
 * result that is not above DBL_MIN (subnormal, zero, or rounded up to DBL_MIN); it must
 * not decline other values (it may in theory, about once in 2^74 random inputs, which
 * these deterministic tests do not meet).  Otherwise prints the case and returns 1. */
static int decimal_differs(uint64_t w, int q)
{
    char text[48];
    snprintf(text, sizeof text, "%llue%d", (unsigned long long)w, q);
    double want = strtod(text, NULL), got = -1.0;
    if (!tl_decimal_to_double(w, q, &got)) {
        if (want <= DBL_MIN)
            return 0;
        print_error("%s: declined, strtod gives %a\n", text, want);
        return 1;
    }
    if (to_bits(got) != to_bits(want)) {
        print_error("%s: %a (bits %016llx), strtod: %a (bits %016llx)\n", text, got,
                    (unsigned long long)to_bits(got), want, (unsigned long long)to_bits(want));
        return 1;
    }
    return 0;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
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

/* Runs first, so the tables are built while two threads race to use them, one through
 * the formatter, the other through the parser. */
struct thread_arg {
    uint64_t seed;
    int parse_first; /* the first call: the parser's, else the formatter's */
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
        char fast[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX], text[40];
        if (a->parse_first) { /* mostly 17 digits: past the integer and Clinger paths */
            snprintf(text, sizeof text, "%.17g", d);
            a->bad += parse_differs(text);
        }
        tl_fmt_double(d, fast);
        tl__fmt_double_slow(d, slow);
        a->bad += strcmp(fast, slow) != 0;
        a->bad += parse_differs(fast);
    }
    return NULL;
}

static void test_fast_two_threads_first_use(void **state)
{
    (void)state;
    struct thread_arg a[2] = {{0x9E3779B97F4A7C15u, 0, 0}, {0xD1B54A32D192ED03u, 1, 0}};
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
    unsigned long fallbacks = tl__fmt_double_fallbacks(), doubts = tl__fmt_double_doubts();
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
    print_message("%ld random bit patterns (two threads); products in doubt: %lu; slow-path "
                  "fallbacks: %lu\n",
                  n, tl__fmt_double_doubts() - doubts, tl__fmt_double_fallbacks() - fallbacks);
}

/* The general path, which the common one leaves the products in doubt to (never in
 * these tests): on its own, against the slow reference. */
static void test_general_path(void **state)
{
    (void)state;
    char general[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX];
    long n = scaled(200000);
    for (long i = 0; i < n; i++) {
        uint64_t b = rng();
        double d = i & 1 ? from_bits(b) : (double)(b >> (11 + b % 40)) / 1000.0;
        size_t len = tl__fmt_double_general(d, general);
        tl__fmt_double_slow(d, slow);
        if (strcmp(general, slow) != 0 || len != strlen(slow)) {
            print_error("%a: general \"%s\", slow \"%s\"\n", d, general, slow);
            fail();
        }
    }
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

/* ---- the parser: tl_decimal_to_double and tl_text_to_number against strtod ---------- */

/* Cases per random test of the parser: TL_NUMFMT_PARSE_SOAK, else scaled(n). */
static long parse_count(long n)
{
    const char *soak = getenv("TL_NUMFMT_PARSE_SOAK");
    if (soak && atol(soak) > 0)
        return atol(soak);
    return scaled(n);
}

static void parse_same(const char *text)
{
    if (parse_differs(text))
        fail();
}

/* text reads as want, bit for bit, and as strtod reads it. */
static void parse_is(const char *text, double want)
{
    tl_cell c;
    assert_true(tl_text_to_number(text, strlen(text), &c));
    if (c.kind != TL_FLOAT || to_bits(c.v.f) != to_bits(want)) {
        print_error("\"%s\": read as %a (kind %d), want %a\n", text, c.v.f, c.kind, want);
        fail();
    }
    parse_same(text);
}

/* tl_decimal_to_double(w, q) decides, and gives want. */
static void decimal_is(uint64_t w, int q, double want)
{
    double got = -1.0;
    if (!tl_decimal_to_double(w, q, &got) || to_bits(got) != to_bits(want)) {
        print_error("%llue%d: got %a, want %a\n", (unsigned long long)w, q, got, want);
        fail();
    }
    if (decimal_differs(w, q))
        fail();
}

/* Hard cases, with the answer written out (and strtod's agreeing). */
static void test_parse_known_answers(void **state)
{
    (void)state;
    /* ties and near ties at 2^53 (spacing 2) and 2^52 (spacing 1) */
    parse_is("9007199254740993.0", 0x1p53);
    parse_is("9007199254740993e0", 0x1p53);
    parse_is("9007199254740995.0", 0x1p53 + 4);
    parse_is("9007199254740993.01", 0x1p53 + 2);
    parse_is("9007199254740992.99", 0x1p53);
    parse_is("9007199254740992.5", 0x1p53);
    parse_is("4503599627370496.5", 0x1p52);
    parse_is("4503599627370497.5", 0x1p52 + 2);
    parse_is("4503599627370497.4999", 0x1p52 + 1);
    parse_is("4503599627370497.5001", 0x1p52 + 2);
    /* on either side of 1 + 2^-53 = 1.000000000000000111022... */
    parse_is("1.000000000000000112", 0x1.0000000000001p0);
    parse_is("1.000000000000000111", 0x1p0);
    /* more than 19 digits: strtod's; this one is exactly 1 + 2^-53, a tie */
    parse_is("1.00000000000000011102230246251565404236316680908203125", 1.0);
    parse_is("1.00000000000000011102230246251565404236316680908203126", 0x1.0000000000001p0);
    /* the normal/subnormal boundary, the smallest and largest doubles */
    parse_is("2.2250738585072011e-308", 0x0.fffffffffffffp-1022);
    parse_is("2.2250738585072012e-308", 0x1p-1022);
    parse_is("2.2250738585072014e-308", 0x1p-1022);
    parse_is("4.4501477170144023e-308", 0x1.fffffffffffffp-1022);
    parse_is("4.9406564584124654e-324", 0x1p-1074);
    parse_is("2.4703282292062328e-324", 0x1p-1074);
    parse_is("2.4703282292062327e-324", 0.0);
    parse_is("1e-400", 0.0);
    parse_is("1.7976931348623157e308", DBL_MAX);
    parse_is("1.7976931348623158e308", DBL_MAX);
    parse_is("1.7976931348623159e308", INFINITY);
    parse_is("1797693134862315807e290", DBL_MAX); /* DBL_MAX's upper midpoint is */
    parse_is("1797693134862315808e290", INFINITY); /* 1.7976931348623158079e308 */
    parse_is("1e308", 0x1.1ccf385ebc8ap1023);
    parse_is("1e309", INFINITY);
    parse_is("-1e309", -INFINITY);
    parse_is("8.98846567431158e307", 0x1p1023);
    /* classics */
    parse_is("1e23", 0x1.52d02c7e14af6p76);
    parse_is("7.2057594037927933e16", 0x1p56);
    parse_is("0.1", 0.1);
    parse_is("0.3", 0.3);
    parse_is("1e-23", 1e-23);
    parse_is("3.0517578125e-5", 0x1p-15);
    parse_is("0.09218478672129195", 0.09218478672129195);
    parse_is("2764.172165254454", 2764.172165254454);
    parse_is("2738.978795898438", 2738.978795898438);
    parse_is("1.2345678901234568e+17", 1.2345678901234568e+17);
    parse_is("-0.30000000000000004", -0.30000000000000004);
    /* zeros keep their sign */
    parse_is("-0.0", -0.0);
    parse_is("-0e-400", -0.0);
    parse_is("0e999", 0.0);
    parse_is("-0.000000000000000000000000e50", -0.0);
    /* integers: int64 stays an integer, beyond it a float */
    tl_cell c;
    assert_true(tl_text_to_number("123456789012345678", 18, &c));
    assert_int_equal(c.kind, TL_INT);
    assert_true(c.v.i == 123456789012345678);
    assert_true(tl_text_to_number("-9223372036854775808", 20, &c));
    assert_int_equal(c.kind, TL_INT);
    assert_true(c.v.i == INT64_MIN);
    parse_is("9223372036854775808", 0x1p63);
    parse_is("-9999999999999999999", -1e19);
    parse_is("18446744073709551615", 0x1p64);
    parse_is("123456789012345678.0", 123456789012345678.0);

    /* the function itself: these it must decide */
    decimal_is(9007199254740993u, 0, 0x1p53);
    decimal_is(45035996273704965u, -1, 0x1p52);   /* a tie with q < 0 */
    decimal_is(45035996273704975u, -1, 0x1p52 + 2);
    decimal_is(22250738585072014u, -324, 0x1p-1022);
    decimal_is(17976931348623157u, 292, DBL_MAX);
    decimal_is(17976931348623159u, 292, INFINITY);
    decimal_is(1, 309, INFINITY);
    decimal_is(1, 308, 1e308);
    decimal_is(18446744073709551615u, 0, 0x1p64);
    decimal_is(18446744073709551615u, -343, 0.0); /* below half the smallest subnormal */
    decimal_is(1, -343, 0.0);
    decimal_is(0, 0, 0.0);
    decimal_is(0, 400, 0.0);
    decimal_is(0, -400, 0.0);
    decimal_is(1, 0, 1.0);
    decimal_is(1, -1, 0.1);
    decimal_is(1, 23, 1e23);
    decimal_is(72057594037927933u, 0, 0x1p56);
    /* and these it may decline (subnormal), but not get wrong */
    assert_int_equal(decimal_differs(49406564584124654u, -340), 0);
    assert_int_equal(decimal_differs(22250738585072011u, -324), 0);
    assert_int_equal(decimal_differs(22250738585072013u, -324), 0);
    assert_int_equal(decimal_differs(1, -342), 0);
    assert_int_equal(decimal_differs(18446744073709551615u, -342), 0);
}

/* Leading and trailing zeros, points and exponents in every place the grammar allows. */
static void test_parse_zeros_and_forms(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "0.000123", "1230000e-3", "000123.4500", "0000.0000", "00", "-00.0e-0", "+.5", "5.",
        "-.000000000000000000000000000000012345678901234567", "0.0000000000000000000001",
        "100000000000000000000000.0", "1000000000000000000000000", "1e+22", "1E22",
        "1.e-7", ".1e1", "123456789012345678901234567890e-30",
        "0.00000000000000000000000000000000000000000000000000000000000000000000000012",
        "4.000000000000000000000000000000000000000000000000000000000000000000001",
        "0.09218478672129195000", "09218478672129195e-17", "2764.1721652544540000000",
        "9007199254740993.000000000000000000001", "9.007199254740993e15",
        "1.7976931348623157e+308", "179769313486231570000000000e282", "+1e-0", "-1E+000010",
        "0.000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000049",
        "1e-99999999", "1e99999999", "-1e-99999999",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        parse_same(texts[i]);
}

/* Random doubles (bit patterns, and values as reports hold them) printed with %.17g,
 * %.16g, %.15g and repr(): n of each per thread. */
struct parse_arg {
    uint64_t state;
    long n, bad;
};

static void *parse_doubles_body(void *p)
{
    struct parse_arg *a = p;
    static const char *const fmts[] = {"%.17g", "%.16g", "%.15g"};
    char text[40];
    for (long i = 0; i < a->n && a->bad < 10; i++) {
        uint64_t z = splitmix(&a->state);
        double d;
        switch (i & 3) {
        case 0: d = (double)(z % 100000000000000u) / 1e9; break; /* ms from ns */
        case 1: d = (double)(z >> 33) * 1000.0 / 7; break;
        default: d = from_bits(z); break;
        }
        if (!isfinite(d))
            continue;
        for (int f = 0; f < 3; f++) {
            snprintf(text, sizeof text, fmts[f], d);
            a->bad += parse_differs(text);
        }
        tl_fmt_double(d, text);
        a->bad += parse_differs(text);
    }
    return NULL;
}

static void test_parse_random_doubles(void **state)
{
    (void)state;
    long n = parse_count(100000);
    struct parse_arg a[2] = {{0x3243F6A8885A308Du, n / 2, 0}, {0x13198A2E03707344u, n - n / 2, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, parse_doubles_body, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(a[0].bad + a[1].bad, 0);
    print_message("%ld random doubles, each read in four spellings (two threads)\n", n);
}

static const uint64_t pow10_64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
    1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
    100000000000000u, 1000000000000000u, 10000000000000000u, 100000000000000000u,
    1000000000000000000u, 10000000000000000000u};

/* Spell w * 10^q (w > 0) at random: "<w>e<q>", the point inside or before the digits,
 * fixed notation, leading zeros, trailing zeros after a point, a sign. */
static void spell(uint64_t w, int q, uint64_t r, char *text, size_t size)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)w);
    const char *sign = r & 1 ? "-" : r & 2 ? "+" : "";
    const char *e = r & 4 ? "E" : "e";
    const char *lead = r & 8 ? "000" : "";
    r >>= 4;
    switch (r % 4) {
    case 0:
        snprintf(text, size, "%s%s%s%s%d", sign, lead, digits, e, q);
        break;
    case 1: { /* d.ddd e, or .dddd e */
        int at = (int)(r / 4 % (unsigned)(len + 1));
        snprintf(text, size, "%s%s%.*s.%s%s%+d", sign, lead, at, digits, digits + at, e,
                 q + len - at);
        break;
    }
    default: /* fixed notation where short enough, trailing zeros after a point */
        if (q >= 0 && q <= 30)
            snprintf(text, size, "%s%s%s%0*d.%s", sign, lead, digits, q, 0,
                     r & 64 ? "000" : "0");
        else if (q < 0 && q >= -40 && -q < len)
            snprintf(text, size, "%s%s%.*s.%s%s", sign, lead, len + q, digits,
                     digits + len + q, r & 64 ? "000" : "");
        else if (q < 0 && q >= -40)
            snprintf(text, size, "%s0.%0*d%s", sign, -q - len, 0, digits);
        else
            snprintf(text, size, "%s%s%s%s%d", sign, lead, digits, e, q);
        break;
    }
}

/* Random w of 1 to 19 digits (a quarter with trailing zeros), random q in [-360, 330]:
 * tl_decimal_to_double directly, and tl_text_to_number on a random spelling. */
static void *parse_decimals_body(void *p)
{
    struct parse_arg *a = p;
    char text[128];
    for (long i = 0; i < a->n && a->bad < 10; i++) {
        int k = 1 + (int)(splitmix(&a->state) % 19);
        uint64_t w = pow10_64[k - 1] + splitmix(&a->state) % (pow10_64[k] - pow10_64[k - 1]);
        uint64_t r = splitmix(&a->state);
        if ((r & 3) == 0) {
            int z = (int)((r >> 2) % (unsigned)k);
            w = w / pow10_64[z] * pow10_64[z];
        }
        int q = (int)(splitmix(&a->state) % 691) - 360;
        a->bad += decimal_differs(w, q);
        spell(w, q, splitmix(&a->state), text, sizeof text);
        a->bad += parse_differs(text);
    }
    return NULL;
}

static void test_parse_random_decimals(void **state)
{
    (void)state;
    long n = parse_count(300000);
    struct parse_arg a[2] = {{0xA4093822299F31D0u, n / 2, 0}, {0x082EFA98EC4E6C89u, n - n / 2, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, parse_decimals_body, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(a[0].bad + a[1].bad, 0);
    print_message("%ld random decimals w * 10^q, q in [-360, 330] (two threads)\n", n);
}

/* Exact ties w * 10^q = c * 2^f (c odd, 54 bits: a midpoint between two doubles) and
 * their decimal neighbours w - 1 and w + 1.  They exist only for q in [-4, 23]: then
 * w = (c / 5^q) * 2^g, or w = c * 5^-q * 2^g. */
static void test_parse_ties(void **state)
{
    (void)state;
    long n = parse_count(30000) / 10; /* three cases each */
    uint64_t st = 0x452821E638D01377u;
    char text[128];
    for (long i = 0; i < n; i++) {
        int q = -4 + (int)(splitmix(&st) % 28);
        uint64_t p5 = 1, base;
        for (int j = 0; j < (q < 0 ? -q : q); j++)
            p5 *= 5;
        if (q > 0) {
            uint64_t lo = (((uint64_t)1 << 53) + p5 - 1) / p5, hi = (((uint64_t)1 << 54) - 1) / p5;
            base = lo + splitmix(&st) % (hi - lo + 1);
            if (!(base & 1))
                base += base < hi ? 1 : (uint64_t)-1;
            if (!(base & 1) || base < lo)
                continue;
        } else {
            base = ((uint64_t)1 << 53 | (splitmix(&st) & (((uint64_t)1 << 53) - 1)) | 1) * p5;
        }
        uint64_t w = base << splitmix(&st) % (unsigned)(__builtin_clzll(base) + 1);
        for (uint64_t x = w - 1; x != w + 2; x++) {
            double got;
            if (!tl_decimal_to_double(x, q, &got)) {
                print_error("%llue%d: declined\n", (unsigned long long)x, q);
                fail();
            }
            if (decimal_differs(x, q))
                fail();
            spell(x, q, splitmix(&st), text, sizeof text);
            parse_same(text);
        }
    }
    print_message("%ld ties with their neighbours\n", n);
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
    /* Integers as reports hold them: counts and nanosecond times, 1 to 19 digits. */
    int64_t *iv = malloc(N * sizeof *iv);
    if (!iv)
        return 1;
    for (int i = 0; i < N; i++)
        iv[i] = (int64_t)(((uint64_t)random() << 32 | (uint64_t)random()) >> (random() % 64));
    double best_int = 1e300;
    size_t int_chars = 0;
    for (int round = 0; round < 3; round++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            int_chars += tl_fmt_int(iv[i], buf);
        double t = (now_ns() - t0) / N;
        best_int = t < best_int ? t : best_int;
    }
    printf("%-26s %7.1f ns/number (best of 3 over %d integers, %zu chars)\n", "tl_fmt_int", best_int,
           N, int_chars);
    free(iv);
    /* Reading their repr() back: tl_text_to_number, then strtod alone. */
    char(*texts)[TL_NUMFMT_MAX] = malloc(N * sizeof *texts);
    size_t *lens = malloc(N * sizeof *lens);
    if (!texts || !lens)
        return 1;
    for (int i = 0; i < N; i++)
        lens[i] = tl_fmt_double(v[i], texts[i]);
    for (int f = 0; f < 2; f++) {
        double best = 1e300, sum = 0;
        for (int round = 0; round < 3; round++) {
            double t0 = now_ns();
            for (int i = 0; i < N; i++) {
                tl_cell c;
                if (f == 0 && tl_text_to_number(texts[i], lens[i], &c))
                    sum += c.v.f;
                else if (f == 1)
                    sum += strtod(texts[i], NULL);
            }
            double t = (now_ns() - t0) / N;
            best = t < best ? t : best;
        }
        printf("%-26s %7.1f ns/number (best of 3, reading the repr() back; sum %g)\n",
               f == 0 ? "tl_text_to_number" : "strtod", best, sum);
    }
    free(texts);
    free(lens);
    free(v);
    return 0;
}

static void int_is(int64_t i)
{
    char want[32], buf[TL_NUMFMT_MAX];
    snprintf(want, sizeof want, "%lld", (long long)i);
    size_t n = tl_fmt_int(i, buf);
    if (strcmp(buf, want) != 0 || n != strlen(want)) {
        print_error("%s: \"%s\" (%zu)\n", want, buf, n);
        fail();
    }
}

/* Integers against snprintf: the extremes, every power of ten and its neighbours, and
 * random values of every length. */
static void test_integers(void **state)
{
    (void)state;
    int_is(0);
    int_is(1);
    int_is(-1);
    int_is(-48);
    int_is(INT64_MIN);
    int_is(INT64_MIN + 1);
    int_is(INT64_MAX);
    int_is(INT64_MAX - 1);
    for (int64_t p = 1;; p *= 10) {
        for (int64_t d = -1; d <= 1; d++) {
            int_is(p + d);
            int_is(-(p + d));
        }
        for (int64_t m = 2; m <= 9; m++)
            if (p <= INT64_MAX / m)
                int_is(m * p);
        if (p > INT64_MAX / 10)
            break;
    }
    long n = scaled(1000000);
    for (long k = 0; k < n; k++) {
        uint64_t r = rng();
        int64_t i = (int64_t)(r >> (rng() % 64));
        int_is(k & 1 ? i : -i);
    }
}

/* Every length of significand (1 to 17 digits) at every decimal position repr() writes
 * in fixed notation and around it: the writer places the point, pads with zeros or
 * switches to scientific notation by these two. */
static void test_fast_every_layout(void **state)
{
    (void)state;
    long per = scaled(40);
    for (int n = 1; n <= 17; n++)
        for (int decpt = -8; decpt <= 20; decpt++)
            for (long i = 0; i < per; i++) {
                char text[48];
                uint64_t digits = rng() % 100000000000000000u, p = 1;
                for (int j = 1; j < n; j++)
                    p *= 10;
                digits = p + digits % (9 * p); /* exactly n digits */
                if (i == 0)
                    digits = p; /* 1 followed by zeros */
                else if (i == 1)
                    digits = 10 * p - 1; /* all nines */
                snprintf(text, sizeof text, "%llue%d", (unsigned long long)digits, decpt - n);
                same(strtod(text, NULL));
            }
}

/* The functions write nothing past buf[26] (numfmt.h: they may write scratch bytes after
 * the NUL, within the first 27 of the TL_NUMFMT_MAX).  The sanitizer build also sees the
 * edge of a heap buffer of TL_NUMFMT_MAX bytes. */
enum { WRITTEN_MAX = 27 };

static void bounded(double d, int64_t i, unsigned char *guard, char *heap)
{
    memset(guard, 0xA5, TL_NUMFMT_MAX + 16);
    size_t n = tl_fmt_double(d, (char *)guard);
    assert_int_equal(n, strlen((char *)guard));
    for (int k = WRITTEN_MAX; k < TL_NUMFMT_MAX + 16; k++)
        if (guard[k] != 0xA5) {
            print_error("%a: byte %d written\n", d, k);
            fail();
        }
    memset(guard, 0xA5, TL_NUMFMT_MAX + 16);
    n = tl_fmt_int(i, (char *)guard);
    assert_int_equal(n, strlen((char *)guard));
    for (int k = WRITTEN_MAX; k < TL_NUMFMT_MAX + 16; k++)
        if (guard[k] != 0xA5) {
            print_error("%lld: byte %d written\n", (long long)i, k);
            fail();
        }
    tl_fmt_double(d, heap);
    tl_fmt_int(i, heap);
}

static void test_bounded_writes(void **state)
{
    (void)state;
    unsigned char guard[TL_NUMFMT_MAX + 16];
    char *heap = malloc(TL_NUMFMT_MAX);
    assert_non_null(heap);
    static const double fixed[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, DBL_MAX, -DBL_MAX, DBL_MIN,
                                   -DBL_TRUE_MIN, -1.2345678901234567e-308, -1.2345678901234567e+300,
                                   -0.00012345678901234567, -1234567890123456.7, -9999999999999998.0};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        bounded(fixed[k], INT64_MIN, guard, heap);
    long n = scaled(200000);
    for (long k = 0; k < n; k++) {
        uint64_t r = rng();
        bounded(from_bits(r), (int64_t)rng(), guard, heap);
        bounded(-(double)(r >> 11) / (double)((uint64_t)1 << (r % 64)), -(int64_t)(r >> (r % 64)), guard, heap);
    }
    free(heap);
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
        cmocka_unit_test(test_fast_random_bits), cmocka_unit_test(test_general_path),
        cmocka_unit_test(test_fast_every_exponent),
        cmocka_unit_test(test_fast_decimal_looking),
        cmocka_unit_test(test_fast_powers_and_extremes),
        cmocka_unit_test(test_fast_every_layout), cmocka_unit_test(test_fast_dense_binades),
        cmocka_unit_test(test_bounded_writes),
        cmocka_unit_test(test_parse_known_answers),
        cmocka_unit_test(test_parse_zeros_and_forms),
        cmocka_unit_test(test_parse_random_doubles),
        cmocka_unit_test(test_parse_random_decimals),
        cmocka_unit_test(test_parse_ties),
    };
    return cmocka_run_group_tests_name("numfmt", tests, NULL, NULL);
}
