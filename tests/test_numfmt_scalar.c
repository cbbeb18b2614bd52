/*
 * test_numfmt_scalar.c - numfmt.c as machines without SSE2 build it: the digit writer
 * in 64-bit words instead of SSE2 registers (TL_NUMFMT_NO_SIMD).  This file includes the
 * source itself, so the library's numfmt.o is not linked; the writer is compared with
 * its own slow reference (snprintf/strtod) as test_numfmt.c does for the usual build.
 * TL_NUMFMT_QUICK=1 runs a fiftieth of the cases.
 */
#define TL_NUMFMT_NO_SIMD 1
#include "base/numfmt.c"

#include "testutil.h"

#ifdef NUMFMT_SSE2
#error "TL_NUMFMT_NO_SIMD did not take"
#endif

static long scaled(long n)
{
    const char *quick = getenv("TL_NUMFMT_QUICK");
    if (quick && *quick && strcmp(quick, "0") != 0)
        n /= 50;
    return n > 0 ? n : 1;
}

static uint64_t rng_state = 0x452821E638D01377u;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static void same(double d)
{
    char fast[TL_NUMFMT_MAX], slow[TL_NUMFMT_MAX];
    size_t n = tl_fmt_double(d, fast);
    tl__fmt_double_slow(d, slow);
    if (strcmp(fast, slow) != 0 || n != strlen(slow)) {
        print_error("%a: fast \"%s\", slow \"%s\"\n", d, fast, slow);
        fail();
    }
}

static void test_scalar_random_bits(void **state)
{
    (void)state;
    long n = scaled(300000);
    for (long i = 0; i < n; i++) {
        uint64_t b = rng();
        double d;
        memcpy(&d, &b, sizeof d);
        same(d);
    }
    same(0.0);
    same(-0.0);
    same(INFINITY);
    same(-INFINITY);
    same(NAN);
}

/* n digits (1 to 17) with the point at every position around those of fixed notation. */
static void test_scalar_every_layout(void **state)
{
    (void)state;
    long per = scaled(200);
    for (int n = 1; n <= 17; n++)
        for (int decpt = -8; decpt <= 20; decpt++)
            for (long i = 0; i < per; i++) {
                char text[48];
                uint64_t p = 1;
                for (int j = 1; j < n; j++)
                    p *= 10;
                uint64_t digits = i == 0 ? p : i == 1 ? 10 * p - 1 : p + rng() % (9 * p);
                snprintf(text, sizeof text, "%llue%d", (unsigned long long)digits, decpt - n);
                same(strtod(text, NULL));
                same(-strtod(text, NULL));
            }
}

static void test_scalar_integers(void **state)
{
    (void)state;
    long n = scaled(300000);
    for (long k = 0; k < n; k++) {
        int64_t i = (int64_t)(rng() >> (rng() % 64));
        if (k & 1)
            i = -i;
        if (k == 0)
            i = INT64_MIN;
        char want[32], buf[TL_NUMFMT_MAX];
        snprintf(want, sizeof want, "%lld", (long long)i);
        assert_int_equal(tl_fmt_int(i, buf), strlen(want));
        assert_string_equal(buf, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_random_bits),
        cmocka_unit_test(test_scalar_every_layout),
        cmocka_unit_test(test_scalar_integers),
    };
    return cmocka_run_group_tests_name("numfmt without SSE2", tests, NULL, NULL);
}
