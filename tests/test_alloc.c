/*
 * test_alloc.c - the allocation helpers of base/util.h that promise something about the
 * pages they return.
 *
 * tl_xcalloc_dense zeroes by writing: the block's pages are the process's own once it
 * returns.  A block left to calloc would be untouched (a large one is fresh from the
 * kernel, known to be zero), each page faulted in later, twice where it is read first.
 * The process's resident size tells the two apart: a page never touched is not in it.
 */
#include "testutil.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_block_is_resident_and_zero),
        cmocka_unit_test(test_the_measure_sees_an_untouched_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
