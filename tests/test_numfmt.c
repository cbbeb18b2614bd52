/*
 * test_numfmt.c - numbers must read exactly as Python's repr() writes them.
 */
#include "testutil.h"

#include "numfmt.h"

#include <math.h>

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_notation), cmocka_unit_test(test_scientific_notation),
        cmocka_unit_test(test_special_values), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_integers),
    };
    return cmocka_run_group_tests_name("numfmt", tests, NULL, NULL);
}
