/*
 * test_kmap.c - the trace's (a, b, c) -> value map: every key found again, absent keys
 * not found, and the probes short for the key patterns traces bring (ids counting up,
 * ids a run apart, ids a power of two apart) as for hostile ones (one `a`, every `b`).
 */
#include "testutil.h"

#include "trace/kmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000
/* Linear probing below half load: a fully mixed hash's longest probe over 200k keys is
 * some 20 slots; runs of 8 neighbours make it some 110. */
#define MAX_PROBE 256

typedef void (*key_fn)(size_t i, int64_t *a, int64_t *b, int64_t *c);

static void sequential(size_t i, int64_t *a, int64_t *b, int64_t *c) { *a = (int64_t)i + 1000, *b = 7, *c = 3; }
static void run_apart(size_t i, int64_t *a, int64_t *b, int64_t *c) { *a = (int64_t)i * 64, *b = 0, *c = 0; }
static void power_apart(size_t i, int64_t *a, int64_t *b, int64_t *c) { *a = (int64_t)i << 20, *b = 1, *c = 1; }
static void negative(size_t i, int64_t *a, int64_t *b, int64_t *c) { *a = -(int64_t)i, *b = -1, *c = INT64_MIN; }
static void one_a(size_t i, int64_t *a, int64_t *b, int64_t *c) { *a = 42, *b = (int64_t)i, *c = 0; }
static void low_bits_only(size_t i, int64_t *a, int64_t *b, int64_t *c)
{
    *a = (int64_t)(i & 63), *b = 0, *c = (int64_t)(i >> 6); /* 64 values of a, each with many c */
}

static void check_pattern(key_fn key, const char *what)
{
    tl_kmap m;
    tl_kmap_init(&m);
    for (size_t i = 0; i < N; i++) {
        int64_t a, b, c;
        int created = -1;
        key(i, &a, &b, &c);
        tl_kmap_put(&m, a, b, c, &created)->val = (uint32_t)i;
        if (created != 1)
            fail_msg("%s: key %zu put twice", what, i);
    }
    assert_int_equal(m.n, N);
    for (size_t i = 0; i < N; i++) {
        int64_t a, b, c;
        key(i, &a, &b, &c);
        uint32_t v = tl_kmap_get(&m, a, b, c, UINT32_MAX);
        if (v != (uint32_t)i)
            fail_msg("%s: key %zu found as %u", what, i, v);
        int created = -1;
        tl_kmap_put(&m, a, b, c, &created);
        if (created != 0)
            fail_msg("%s: key %zu made again", what, i);
    }
    /* absent keys: beside the present ones */
    int64_t a, b, c;
    key(N, &a, &b, &c);
    assert_int_equal(tl_kmap_get(&m, a, b, c, 99), 99);
    key(0, &a, &b, &c);
    assert_int_equal(tl_kmap_get(&m, a, -12345, c, 99), 99); /* no pattern has this b */
    size_t probe = tl_kmap_max_probe(&m);
    if (probe > MAX_PROBE)
        fail_msg("%s: a lookup reads up to %zu slots (at most %d expected)", what, probe, MAX_PROBE);
    if (getenv("KMAP_PROBES"))
        fprintf(stderr, "%s: %zu\n", what, probe);
    tl_kmap_free(&m);
}

static void test_ids_counting_up(void **state) { (void)state; check_pattern(sequential, "ids counting up"); }
static void test_ids_a_run_apart(void **state) { (void)state; check_pattern(run_apart, "ids 64 apart"); }
static void test_ids_a_power_apart(void **state) { (void)state; check_pattern(power_apart, "ids 2^20 apart"); }
static void test_negative_ids(void **state) { (void)state; check_pattern(negative, "negative ids"); }
static void test_one_a_many_b(void **state) { (void)state; check_pattern(one_a, "one a, every b"); }
static void test_low_bits_of_a(void **state) { (void)state; check_pattern(low_bits_only, "64 values of a"); }

/* An empty map finds nothing and reads nothing. */
static void test_empty(void **state)
{
    (void)state;
    tl_kmap m;
    tl_kmap_init(&m);
    assert_int_equal(tl_kmap_get(&m, 1, 2, 3, 5), 5);
    assert_int_equal(tl_kmap_max_probe(&m), 0);
    tl_kmap_reserve(&m, 1000);
    assert_true(m.cap >= 2002);
    assert_int_equal(tl_kmap_get(&m, 1, 2, 3, 5), 5);
    tl_kmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_counting_up), cmocka_unit_test(test_ids_a_run_apart),
        cmocka_unit_test(test_ids_a_power_apart), cmocka_unit_test(test_negative_ids),
        cmocka_unit_test(test_one_a_many_b), cmocka_unit_test(test_low_bits_of_a),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
