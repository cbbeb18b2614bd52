/*
 * test_alloc.c - the allocation helpers of base/util.h that promise something about the
 * pages they return.
 *
 * tl_xcalloc_dense zeroes by writing: the block's pages are the process's own once it
 * returns.  A block left to calloc would be untouched (a large one is fresh from the
 * kernel, known to be zero), each page faulted in later, twice where it is read first.
 * The process's resident size tells the two apart: a page never touched is not in it.
 *
 * tl_populate maps a block's pages without writing them (the same measure sees them),
 * tl_populate_ahead a step at a time, and tl_grow keeps an array's elements whichever
 * way it moves them.
 */
#include "testutil.h"

#include "base/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define BLOCK ((size_t)64 << 20)

/* Resident bytes of this process (/proc/self/statm), or 0 when it cannot be read. */
static size_t resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (!f)
        return 0;
    int ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
    fclose(f);
    return ok ? resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

/* A BLOCK allocated by `alloc` as 64-byte elements, and *grew: how much the resident
 * size grew meanwhile (the test is skipped where that cannot be read). */
static unsigned char *alloc_measured(void *(*alloc)(size_t, size_t), size_t *grew)
{
    size_t before = resident_bytes();
    if (!before)
        skip();
    unsigned char *p = alloc(BLOCK / 64, 64);
    size_t after = resident_bytes();
    *grew = after > before ? after - before : 0;
    return p;
}

static void test_dense_block_is_resident_and_zero(void **state)
{
    (void)state;
    size_t grew;
    unsigned char *p = alloc_measured(tl_xcalloc_dense, &grew);
    /* every page written: the block's size, less a margin for what the allocator or a
     * sanitizer's own bookkeeping gave back meanwhile */
    assert_true(grew >= BLOCK / 8 * 7);
    for (size_t i = 0; i < BLOCK; i += 4093)
        assert_int_equal(p[i], 0);
    assert_int_equal(p[BLOCK - 1], 0);
    free(p);
}

/* The same measure sees what the test above rules out: calloc leaves a fresh large block
 * untouched (when it does not, there is nothing to tell apart, and the test says so). */
static void test_the_measure_sees_an_untouched_block(void **state)
{
    (void)state;
    size_t grew;
    free(alloc_measured(tl_xcalloc, &grew));
    if (grew >= BLOCK / 8 * 7)
        skip(); /* this allocator writes its zeros (valgrind's does) */
    assert_true(grew < BLOCK / 8);
}

/* Whether this kernel maps pages on advice (Linux 5.14 on): without it tl_populate does
 * nothing, and the test that measures it is skipped. */
static int kernel_populates(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    int ok = madvise(p, page, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
    munmap(p, page);
    return ok;
}

static void *xmalloc_elements(size_t n, size_t size) { return tl_xmalloc(n * size); }

static void test_populate_maps_the_block_and_keeps_its_bytes(void **state)
{
    (void)state;
    if (!kernel_populates())
        skip();
    size_t untouched;
    unsigned char *p = alloc_measured(xmalloc_elements, &untouched);
    if (untouched >= BLOCK / 8)
        skip(); /* this allocator writes its blocks (valgrind's does) */
    for (size_t i = 0; i < 3 * 4096; i++)
        p[i] = (unsigned char)(i * 7 + 1);
    size_t before = resident_bytes();
    tl_populate(p, BLOCK);
    size_t after = resident_bytes();
    assert_true(after > before && after - before >= BLOCK / 8 * 7);
    for (size_t i = 0; i < 3 * 4096; i++)
        assert_int_equal(p[i], (unsigned char)(i * 7 + 1));
    free(p);
}

/* Ahead of the writes by a step at most, a step at a time, and never past the block. */
static void test_populate_ahead_keeps_a_step_ahead(void **state)
{
    (void)state;
    size_t cap = 5 * TL_POPULATE_STEP / 2, mapped = 0;
    char *p = tl_xmalloc(cap);
    tl_populate_ahead(p, cap, 1, &mapped);
    assert_int_equal(mapped, TL_POPULATE_STEP);
    tl_populate_ahead(p, cap, TL_POPULATE_STEP / 4, &mapped);
    assert_int_equal(mapped, TL_POPULATE_STEP); /* still half a step ahead */
    tl_populate_ahead(p, cap, TL_POPULATE_STEP / 2 + 1, &mapped);
    assert_int_equal(mapped, 2 * TL_POPULATE_STEP);
    tl_populate_ahead(p, cap, 2 * TL_POPULATE_STEP, &mapped);
    assert_int_equal(mapped, cap); /* the last part, to the block's end only */
    tl_populate_ahead(p, cap, cap, &mapped);
    assert_int_equal(mapped, cap);
    free(p);
}

/* An array grown past the sizes where tl_grow copies it and where realloc moves it: every
 * element kept. */
static void test_grow_keeps_the_elements(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0, n = (size_t)48 << 20 >> 2; /* 48 MiB of elements */
    for (size_t i = 0; i < n; i++) {
        TL_GROW(a, cap, i + 1);
        a[i] = (uint32_t)(i * 2654435761u);
    }
    assert_true(cap >= n);
    for (size_t i = 0; i < n; i++)
        if (a[i] != (uint32_t)(i * 2654435761u))
            fail_msg("element %zu lost in a growth", i);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_block_is_resident_and_zero),
        cmocka_unit_test(test_the_measure_sees_an_untouched_block),
        cmocka_unit_test(test_populate_maps_the_block_and_keeps_its_bytes),
        cmocka_unit_test(test_populate_ahead_keeps_a_step_ahead),
        cmocka_unit_test(test_grow_keeps_the_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
