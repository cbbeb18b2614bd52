/*
 * test_kmap.c - the maps from integer keys: the trace's (a, b, c) -> value map and its
 * (id, tag) -> value map (every key found again, absent keys not found, and the probes
 * short for the key patterns traces bring - ids counting up, ids a run apart, ids a
 * power of two apart - as for hostile ones: one `a`, every `b`), and base's map from
 * fixed-size byte keys.
 */
#include "testutil.h"

#include "base/hash.h"

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

/* The same keys in a tl_idmap, (b, c) folded into its tag (distinct keys stay distinct
 * in every pattern). */
static uint32_t tag_of(int64_t b, int64_t c) { return (uint32_t)((uint64_t)b * 31 + (uint64_t)c); }

static void check_idmap_pattern(key_fn key, const char *what)
{
    tl_idmap m;
    tl_idmap_init(&m);
    for (size_t i = 0; i < N; i++) {
        int64_t a, b, c;
        int created = -1;
        key(i, &a, &b, &c);
        *tl_idmap_put(&m, a, tag_of(b, c), &created) = (uint32_t)i;
        if (created != 1)
            fail_msg("%s (idmap): key %zu put twice", what, i);
    }
    assert_int_equal(m.n, N);
    for (size_t i = 0; i < N; i++) {
        int64_t a, b, c;
        key(i, &a, &b, &c);
        uint32_t v = tl_idmap_get(&m, a, tag_of(b, c), UINT32_MAX);
        if (v != (uint32_t)i)
            fail_msg("%s (idmap): key %zu found as %u", what, i, v);
        int created = -1;
        if (*tl_idmap_put(&m, a, tag_of(b, c), &created) != (uint32_t)i || created != 0)
            fail_msg("%s (idmap): key %zu made again", what, i);
    }
    int64_t a, b, c;
    key(N, &a, &b, &c);
    assert_int_equal(tl_idmap_get(&m, a, tag_of(b, c), 99), 99);
    key(0, &a, &b, &c);
    assert_int_equal(tl_idmap_get(&m, a, tag_of(-12345, c), 99), 99);
    size_t probe = tl_idmap_max_probe(&m);
    if (probe > MAX_PROBE)
        fail_msg("%s (idmap): a lookup reads up to %zu slots (at most %d expected)", what, probe, MAX_PROBE);
    if (getenv("KMAP_PROBES"))
        fprintf(stderr, "%s (idmap): %zu\n", what, probe);
    tl_idmap_free(&m);
}

static void check_both(key_fn key, const char *what)
{
    check_pattern(key, what);
    check_idmap_pattern(key, what);
}

static void test_ids_counting_up(void **state) { (void)state; check_both(sequential, "ids counting up"); }
static void test_ids_a_run_apart(void **state) { (void)state; check_both(run_apart, "ids 64 apart"); }
static void test_ids_a_power_apart(void **state) { (void)state; check_both(power_apart, "ids 2^20 apart"); }
static void test_negative_ids(void **state) { (void)state; check_both(negative, "negative ids"); }
static void test_one_a_many_b(void **state) { (void)state; check_both(one_a, "one a, every b"); }
static void test_low_bits_of_a(void **state) { (void)state; check_both(low_bits_only, "64 values of a"); }

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

/* A tag tells keys of one id apart, the largest (UINT32_MAX - 1) too; an empty map
 * finds nothing. */
static void test_idmap_tags(void **state)
{
    (void)state;
    tl_idmap m;
    tl_idmap_init(&m);
    assert_int_equal(tl_idmap_get(&m, 5, 0, 7), 7);
    assert_int_equal(tl_idmap_max_probe(&m), 0);
    const uint32_t tags[] = {0, 1, UINT32_MAX - 1};
    for (uint32_t k = 0; k < 3; k++)
        *tl_idmap_put(&m, 5, tags[k], NULL) = 10 + k;
    for (uint32_t k = 0; k < 3; k++)
        assert_int_equal(tl_idmap_get(&m, 5, tags[k], 7), 10 + k);
    assert_int_equal(tl_idmap_get(&m, 5, 2, 7), 7);
    assert_int_equal(tl_idmap_get(&m, 6, 0, 7), 7);
    assert_int_equal(m.n, 3);
    tl_idmap_reserve(&m, 1000);
    assert_true(m.cap >= 2002);
    assert_int_equal(tl_idmap_get(&m, 5, UINT32_MAX - 1, 7), 12);
    tl_idmap_free(&m);
}

/* Byte keys: each found again with its value, through the map's growth; keys that
 * differ in one byte anywhere are different keys. */
static void test_bytemap(void **state)
{
    (void)state;
    typedef struct key {
        const void *p;
        uint64_t a, b;
    } key;
    tl_bytemap m;
    tl_bytemap_init(&m, sizeof(key));
    static char anchor[4];
    for (uint32_t i = 0; i < 50000; i++) {
        key k = {&anchor[i % 4], i / 4, i % 7};
        int created = -1;
        *tl_bytemap_put(&m, &k, &created) = i + 1;
        if (created != 1)
            fail_msg("key %u put twice", i);
    }
    assert_int_equal(m.n, 50000);
    for (uint32_t i = 0; i < 50000; i++) {
        key k = {&anchor[i % 4], i / 4, i % 7};
        int created = -1;
        uint32_t v = *tl_bytemap_put(&m, &k, &created);
        if (created != 0 || v != i + 1)
            fail_msg("key %u: created %d, value %u", i, created, v);
    }
    key k = {&anchor[0], 0, 1}; /* key 0 with its last field changed */
    int created = -1;
    assert_int_equal(*tl_bytemap_put(&m, &k, &created), 0);
    assert_int_equal(created, 1);
    tl_bytemap_free(&m);
    assert_int_equal(m.n, 0);
    assert_int_equal(m.size, sizeof(key));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_counting_up), cmocka_unit_test(test_ids_a_run_apart),
        cmocka_unit_test(test_ids_a_power_apart), cmocka_unit_test(test_negative_ids),
        cmocka_unit_test(test_one_a_many_b), cmocka_unit_test(test_low_bits_of_a),
        cmocka_unit_test(test_empty), cmocka_unit_test(test_idmap_tags), cmocka_unit_test(test_bytemap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
