/*
 * test_direct_out.c - files written around the page cache: every size around the block
 * and alignment boundaries, written in uneven pieces, read back byte for byte on the
 * test directory's file system and on tmpfs; the blocks really written direct where the
 * file system takes it (not left in the page cache); errors on a full device and on a
 * path that cannot be created.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "io/direct_out.h"

#define MIB (1u << 20)

static unsigned char *pattern(size_t n, uint32_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (unsigned char)(seed >> 24);
    }
    return p;
}

/* Write n bytes of pattern `seed` to path through tl_direct_fopen in uneven pieces (fwrite
 * of 1 to ~200k bytes, fputc now and then); returns the bytes written (malloc'd). */
static unsigned char *write_pattern(const char *path, size_t n, uint32_t seed)
{
    unsigned char *want = pattern(n, seed);
    FILE *f = tl_direct_fopen(path);
    assert_non_null(f);
    size_t done = 0;
    uint32_t r = seed ^ 0x9e3779b9u;
    while (done < n) {
        r = r * 1664525u + 1013904223u;
        if (r % 7 == 0) {
            assert_int_equal(fputc(want[done], f), want[done]);
            done++;
            continue;
        }
        size_t k = 1 + (r >> 8) % 200000;
        if (k > n - done)
            k = n - done;
        assert_int_equal(fwrite(want + done, 1, k, f), k);
        done += k;
    }
    assert_int_equal(fclose(f), 0);
    return want;
}

/* The file holds exactly want[0..n). */
static void check_file(const char *path, const unsigned char *want, size_t n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *got = malloc(n + 1);
    assert_int_equal(fread(got, 1, n + 1, f), n);
    fclose(f);
    if (n)
        assert_memory_equal(got, want, n);
    free(got);
}

static void write_and_check(const char *path, size_t n, uint32_t seed)
{
    unsigned char *want = write_pattern(path, n, seed);
    check_file(path, want, n);
    free(want);
}

static const size_t sizes[] = {0, 1, 511, 4095, 4096, 4097, MIB - 1, MIB, MIB + 1, 2 * MIB, 3 * MIB + 12345};

static void sizes_in(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        write_and_check(path, sizes[i], (uint32_t)i + 1);
    /* a longer file is truncated, not overwritten in part */
    write_and_check(path, 3 * MIB, 99);
    write_and_check(path, 5, 100);
    unlink(path);
}

static void test_sizes(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    sizes_in(dir);
    tt_rmrf(dir);
    free(dir);
}

static void test_sizes_tmpfs(void **state)
{
    (void)state;
    char tmpl[] = "/dev/shm/tl_direct_XXXXXX";
    if (!mkdtemp(tmpl))
        skip(); /* no tmpfs here */
    sizes_in(tmpl);
    rmdir(tmpl);
}

/* The new file's mode is fopen's: 0666 less the umask. */
static void test_mode(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[4096];
    snprintf(path, sizeof path, "%s/m.bin", dir);
    mode_t old = umask(027);
    FILE *f = tl_direct_fopen(path);
    umask(old);
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    tt_rmrf(dir);
    free(dir);
}

/* Where the file system takes direct writes, the whole blocks are not in the page cache
 * afterwards and the last partial one is. */
static void test_blocks_skip_the_cache(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), path[4096];
    snprintf(path, sizeof path, "%s/probe", dir);
    struct statfs fs;
    int probe = open(path, O_WRONLY | O_CREAT | O_DIRECT, 0600);
    int direct = probe >= 0 && statfs(dir, &fs) == 0 && fs.f_type != TMPFS_MAGIC;
    if (probe >= 0)
        close(probe);
    if (!direct) {
        tt_rmrf(dir);
        free(dir);
        skip(); /* a file system without direct I/O: the writes are ordinary ones */
    }
    snprintf(path, sizeof path, "%s/big.bin", dir);
    size_t n = 4 * MIB + 100, pages = (n + 4095) / 4096;
    unsigned char *want = write_pattern(path, n, 7);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    void *m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(m != MAP_FAILED);
    unsigned char *in = malloc(pages);
    assert_int_equal(mincore(m, n, in), 0);
    /* the first 64 KiB left out: valgrind reads the start of a file mapped for reading
     * (to see whether it is an object file) */
    size_t cached = 0;
    for (size_t i = 16; i + 1 < pages; i++)
        cached += in[i] & 1;
    assert_int_equal(cached, 0);      /* the four whole blocks went to the disk direct */
    assert_int_equal(in[pages - 1] & 1, 1); /* the last 100 bytes through the cache */
    munmap(m, n);
    close(fd);
    free(in);
    check_file(path, want, n);
    free(want);
    tt_rmrf(dir);
    free(dir);
}

/* A device that is full: the failure is fclose's (or a write's), with ENOSPC. */
static void test_full_device(void **state)
{
    (void)state;
    FILE *f = tl_direct_fopen("/dev/full");
    if (!f)
        skip();
    unsigned char *p = pattern(3 * MIB, 5);
    size_t w = fwrite(p, 1, 3 * MIB, f);
    errno = 0;
    int rc = fclose(f);
    assert_true(w < 3 * MIB || rc == EOF);
    assert_int_equal(errno, ENOSPC);
    free(p);
}

static void test_cannot_create(void **state)
{
    (void)state;
    errno = 0;
    assert_null(tl_direct_fopen("/nonexistent-dir-tl/x.csv"));
    assert_int_equal(errno, ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),         cmocka_unit_test(test_sizes_tmpfs),
        cmocka_unit_test(test_mode),          cmocka_unit_test(test_blocks_skip_the_cache),
        cmocka_unit_test(test_full_device),   cmocka_unit_test(test_cannot_create),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
