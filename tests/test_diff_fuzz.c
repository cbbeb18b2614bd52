/*
 * test_diff_fuzz.c - every seed (fuzz/corpus/diff/) and every past finding
 * (fuzz/regressions/diff/) of the diff's fuzz target, replayed through exactly the code
 * the fuzzer runs, in every `make test` (under ASan + UBSan too).
 */
#include "testutil.h"

#include <dirent.h>

#define TL_FUZZ_NO_MAIN
#include "../fuzz/fuzz_diff.c"

static size_t replay_dir(const char *top, const char *kind)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fuzz/%s/diff", top, kind);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t cap = 1 << 16, len = 0, got;
        uint8_t *data = malloc(cap);
        while ((got = fread(data + len, 1, cap - len, f)) > 0)
            if ((len += got) == cap)
                data = realloc(data, cap *= 2);
        fclose(f);
        assert_int_equal(tl_fuzz_diff(data, len), 0);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

static void test_replay_diff(void **state)
{
    (void)state;
    const char *top = getenv("TL_TOP");
    if (!top || !*top)
        top = ".";
    size_t seeds = replay_dir(top, "corpus"), regressions = replay_dir(top, "regressions");
    assert_true(seeds > 0); /* the seeds are in the tree: none found means a wrong path */
    print_message("fuzz_diff: %zu seeds, %zu regressions replayed\n", seeds, regressions);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_diff)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
