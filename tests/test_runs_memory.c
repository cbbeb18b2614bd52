/*
 * test_runs_memory.c - comparing two distributed runs takes memory that does not grow
 * with their rank count: each rank is folded into its run's one report as it is read and
 * its tables let go, so 256 ranks a side peak within 1.45x of 16 (2.3x when every rank's
 * ops_summary and gpu_timeline were kept until the end), and each rank beyond the 16th
 * adds less than 6 KB to the peak, both sides together (2-4 KB measured: the collective
 * report's rows and facts, a few numbers, the file name; 7.5 KB when a run keeps its ranks'
 * tables until its collective report is made, 40 KB when the whole comparison did).  The peak is
 * tlcompare's own, run as a child; ranks from tools/gentrace with one layer (~300 KB),
 * the same run on both sides (as the bench's a512 vs a512).
 */
#include "testutil.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char tool_dir[2048]; /* where tlcompare and tools/gentrace are */

/* An n-rank run of one-layer ranks in dir/name. */
static void gen_run(const char *dir, const char *name, int n)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", dir, name);
    assert_int_equal(system(cmd), 0);
    for (int r = 0; r < n; r++) {
        snprintf(cmd, sizeof cmd, "'%s/tools/gentrace' --world %d --rank %d --layers 1 -o '%s/%s/rank%d_trace.json'",
                 tool_dir, n, r, dir, name, r);
        assert_int_equal(system(cmd), 0);
    }
}

/* tlcompare -q -j 2 dir/name dir/name --names a b -o dir/name.xlsx: its peak RSS (KB). */
static long peak_comparing(const char *dir, const char *name)
{
    char prog[4200], run[4200], out[4200];
    snprintf(prog, sizeof prog, "%s/tlcompare", tool_dir);
    snprintf(run, sizeof run, "%s/%s", dir, name);
    snprintf(out, sizeof out, "%s/%s.xlsx", dir, name);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(prog, prog, "-q", "-j", "2", run, run, "--names", "a", "b", "-o", out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return ru.ru_maxrss;
}

static void test_peak_flat_in_ranks(void **state)
{
    (void)state;
#if TT_UNDER_ASAN
    skip(); /* AddressSanitizer's quarantine holds what is freed: peaks say nothing */
#endif
    char *dir = tt_tmpdir();
    gen_run(dir, "r16", 16);
    gen_run(dir, "r256", 256);
    long small = peak_comparing(dir, "r16"), big = peak_comparing(dir, "r256");
    assert_true(small > 0 && big > 0);
    double ratio = (double)big / (double)small;
    printf("peak RSS: 256 vs 256 ranks %ld KB, 16 vs 16 ranks %ld KB: %.2fx, %.1f KB a rank\n", big, small, ratio,
           (double)(big - small) / (256 - 16));
    if (ratio > 1.45)
        fail_msg("comparing 256-rank runs peaked at %ld KB, %.2fx the 16-rank runs' %ld KB (at most 1.45x expected)",
                 big, ratio, small);
    double per_rank = (double)(big - small) / (256 - 16);
    if (per_rank > 6)
        fail_msg("each rank beyond the 16th added %.1f KB to the peak (at most 6 KB expected)", per_rank);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tt_tool_dir(tool_dir, sizeof tool_dir, "build");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_flat_in_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
