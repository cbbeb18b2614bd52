/*
 * test_ranks_memory.c - what the multi-rank collective report's memory is made of: a
 * collective row's size, and a rank read for the report costing its collective kernels,
 * not its trace (read kernels-only: a rank with 60,000 other events takes no more memory
 * to read than one with none), and the whole report's peak not growing with the ranks.
 */
#include "testutil.h"

#include "ranks/ranks.h"
#include "run/compare.h"
#include "run/collreport.h"

#include <malloc.h>
#include <sys/resource.h>

/* Every rank of every set holds a row per collective kernel until the report is made. */
static void test_row_size(void **state)
{
    (void)state;
    assert_int_equal(sizeof(tl_cval), 16);
    assert_true(sizeof(tl_coll_row) <= 224);
}

/* A rank's trace: `filler` triples of cpu_op, launch and (non-collective) kernel, then two
 * allreduces. */
static void write_rank(const char *path, int filler)
{
    tl_buf b = {0};
    tl_buf_adds(&b, "{\"traceEvents\":[");
    for (int i = 0; i < filler; i++)
        tl_buf_printf(&b,
                      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add_%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,"
                      "\"args\":{\"External id\":%d,\"Input Dims\":[[%d,3]]}},"
                      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,"
                      "\"dur\":2,\"args\":{\"correlation\":%d,\"External id\":%d}},"
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":3,"
                      "\"args\":{\"correlation\":%d,\"stream\":7}},",
                      i % 97, 10 * i, i + 1, i, 10 * i + 1, i + 1, i + 1, i % 89, 10 * i + 4, i + 1);
    for (int k = 0; k < 2; k++)
        tl_buf_printf(&b,
                      "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32\",\"pid\":0,"
                      "\"tid\":7,\"ts\":%d,\"dur\":40,\"args\":{\"correlation\":%d,\"stream\":7,\"Process Group Name\":\"0\","
                      "\"Collective name\":\"allreduce\",\"Group size\":1,\"dtype\":\"Float\",\"In msg nelems\":1024,"
                      "\"Out msg nelems\":1024}}",
                      k ? "," : "", 10 * filler + 100 * k, filler + 1 + k);
    tl_buf_adds(&b, "]}");
    tt_write_file(path, b.data, b.len);
    tl_buf_free(&b);
}

/* The peak RSS (KB) of a child process that runs work(arg) (0: done), or -1 when the work
 * fails: a child starts from this process's heap, so what the work takes shows in its
 * peak, and what it leaves does not stay to raise the next measure. */
static long child_peak(int (*work)(const void *arg), const void *arg)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        long kb = -1;
        if (work(arg) == 0) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            kb = ru.ru_maxrss;
        }
        ssize_t w = write(fd[1], &kb, sizeof kb);
        _exit(w == (ssize_t)sizeof kb ? 0 : 1);
    }
    close(fd[1]);
    long kb = -1;
    ssize_t got = read(fd[0], &kb, sizeof kb);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_int_equal(got, (ssize_t)sizeof kb);
    return kb;
}

/* Reads the one rank at path (a const char *) for the report: 0 when it holds its two
 * collectives. */
static int read_rank(const void *path)
{
    tl_rank_set s = {0};
    s.n = 1;
    s.paths = tl_xcalloc(1, sizeof *s.paths);
    s.paths[0] = tl_xstrdup(path);
    tl_error err = {0};
    int rc = tl_ranks_read(&s, 1, &err) == 0 && tl_rank_facts_nrows(&s.facts[0]) == 2 ? 0 : -1;
    tl_rank_set_free(&s);
    return rc;
}

/* Reading a rank for the report holds its collective kernels, not its events: a rank of
 * 60,000 other events (~14 MB of JSON; ~10 MB as events and a tree) peaks within 3 MB of
 * a rank of none. */
static void test_trace_not_held(void **state)
{
    (void)state;
#if TT_UNDER_ASAN
    skip(); /* AddressSanitizer's quarantine holds what is freed: peaks say nothing */
#endif
    char *dir = tt_tmpdir();
    char small[512], big[512];
    snprintf(small, sizeof small, "%s/rank0_small.json", dir);
    snprintf(big, sizeof big, "%s/rank0_big.json", dir);
    write_rank(small, 0);
    write_rank(big, 20000);
    long base = child_peak(read_rank, small), peak = child_peak(read_rank, big);
    assert_true(base > 0 && peak > 0);
    if (peak - base > 3 * 1024)
        fail_msg("reading a rank of 60,000 events peaked %ld KB above one of none (at most 3 MB expected)", peak - base);
    tt_rmrf(dir);
    free(dir);
}

/* Rank r of an n-rank job: 40 rounds of an allreduce and an allgather in one process
 * group of every rank (its ranks' list written out, as PyTorch does), with a few
 * hundred filler kernels. */
static void write_job_rank(const char *dir, int r, int n)
{
    tl_buf b = {0}, ranks = {0};
    tl_buf_adds(&ranks, "[");
    for (int i = 0; i < n; i++)
        tl_buf_printf(&ranks, "%s%d", i ? ", " : "", i);
    tl_buf_adds(&ranks, "]");
    tl_buf_adds(&b, "{\"traceEvents\":[");
    for (int k = 0; k < 80; k++) {
        int ag = k % 2;
        tl_buf_printf(&b,
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_%d\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                      "\"dur\":3,\"args\":{\"correlation\":%d,\"stream\":7}},",
                      k % 5, 1000 * k, 2 * k + 1);
        tl_buf_printf(&b,
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_%s\",\"pid\":0,\"tid\":7,"
                      "\"ts\":%d,\"dur\":%d,\"args\":{\"correlation\":%d,\"stream\":7,\"Process Group Name\":\"0\","
                      "\"Process Group Ranks\":\"%s\",\"Collective name\":\"%s\",\"Group size\":%d,"
                      "\"dtype\":\"BFloat16\",\"In msg nelems\":%d,\"Out msg nelems\":%d}}%s",
                      ag ? "AllGather_RING_LL" : "AllReduce_Sum_bf16_RING_LL", 1000 * k + 10 + (r * 7 + k) % 13,
                      40 + (r + k) % 5, 2 * k + 2, tl_buf_cstr(&ranks), ag ? "allgather" : "allreduce", n, 1 << 16,
                      ag ? n << 16 : 1 << 16, k + 1 < 80 ? "," : "");
    }
    tl_buf_adds(&b, "]}");
    char path[600];
    snprintf(path, sizeof path, "%s/rank%d_trace.json", dir, r);
    tt_write_file(path, b.data, b.len);
    tl_buf_free(&b);
    tl_buf_free(&ranks);
}

/* A job's ranks to report on, and how: CSVs, or a workbook. */
typedef struct job {
    const char *dir;
    int n;
    int book;
} job;

/* Writes the report of ranks 0..n-1 of the job's dir as CSVs (or a workbook) with two
 * workers, as `tlreport -j 2 --output_csvs_dir` (-o) does, with its malloc settings; -1
 * when the report fails. */
static int report_job(const void *arg)
{
    const job *j = arg;
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    char pattern[600], out[600];
    snprintf(pattern, sizeof pattern, "%s/rank*_trace.json", j->dir);
    snprintf(out, sizeof out, "%s/out%d%s", j->dir, j->n, j->book ? ".xlsx" : "");
    tl_run_ranks_opts o = {{.mode = TL_RANKS_PATTERN, .spec = pattern, .world_size = j->n, .jobs = 2},
                           j->book ? out : NULL, j->book ? NULL : out};
    tl_run_ranks r;
    int rc = tl_run_ranks_build(&o, &r) == TL_RUN_OK ? 0 : -1;
    if (rc)
        fprintf(stderr, "report of %d ranks: %s\n", j->n, r.err.msg);
    tl_run_ranks_free(&r);
    return rc;
}

/* What the report of 256 ranks peaks at above the report of 16, per collective row more
 * (80 a rank): at most 256 bytes for CSVs.  Measured: ~130 (a row's times and its pointer
 * to its rank's shared metadata, and its cells in nccl_implicit_sync, a sheet with three
 * columns per rank).  The report that held every rank's rows whole (224 bytes, copied
 * once more when the sheets began), nccl_long as cells (19 a row) and each sheet until
 * the end took ~700: anything of the kind coming back fails here.  A workbook: at most
 * 400 bytes; measured ~330, nccl_long's two parts in flight and the XML of each being
 * wider at 256 ranks (a row names its group's ranks); with nccl_long given whole, ~620.
 * (A ratio of the two peaks says less: these small ranks need none of the MBs a real
 * trace's reading takes, which tools/bench_ranks.sh measures.) */
static void test_report_not_growing(void **state)
{
    (void)state;
#if TT_UNDER_ASAN
    skip(); /* AddressSanitizer's quarantine and shadow memory say nothing of the peak */
#endif
    char *dir = tt_tmpdir();
    for (int r = 0; r < 256; r++)
        write_job_rank(dir, r, 256);
    for (int book = 0; book < 2; book++) {
        job j16 = {dir, 16, book}, j256 = {dir, 256, book};
        long p16 = child_peak(report_job, &j16), p256 = child_peak(report_job, &j256);
        assert_true(p16 > 0 && p256 > 0);
        double per_row = (double)(p256 - p16) * 1024 / ((256 - 16) * 80);
        print_message("%s: 16 ranks %ld KB, 256 ranks %ld KB: %.0f bytes per collective row more\n",
                      book ? "workbook" : "CSVs", p16, p256, per_row);
        double most = book ? 400 : 256;
        if (per_row > most)
            fail_msg("%s: the report of 256 ranks peaked at %ld KB, the report of 16 at %ld KB: %.0f bytes per "
                     "collective row more (at most %.0f expected)", book ? "workbook" : "CSVs", p256, p16, per_row,
                     most);
    }
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_size),
        cmocka_unit_test(test_trace_not_held),
        cmocka_unit_test(test_report_not_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
