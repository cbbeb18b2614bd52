/*
 * test_hostile.c - traces a broken exporter, a fuzzer or an attacker can make, each small
 * (gentrace --shape writes them), that must not take the disk, the memory or the error
 * message: every limit of `man tlcompare`, LIMITS, is met here at its number and its message.
 *
 * The programs are build/tlcompare ($TLCOMPARE, as make unit-test sets it), tlreport and
 * tools/gentrace beside it.  Each case runs under a time limit, so that a hang fails.
 */
#include "testutil.h"

#include "base/util.h"
#include "diff/diff.h"
#include "io/output.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static char tlcompare[4096], tlreport[4096], gentrace[4096];
static char *tmpdir;

/* The path of `name` in the temporary directory (one of 64 buffers, reused in turn). */
static char *at(const char *name)
{
    static char buf[64][4096];
    static int k;
    k = (k + 1) % 64;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Run argv (NULL-terminated) with stdout to /dev/null, stderr to the file `errpath`,
 * killed after `secs`; returns the exit status (128 + signal when killed). */
static int run(const char *const *argv, const char *errpath, unsigned secs, long *rss_kb)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        int err = open(errpath ? errpath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (null < 0 || err < 0)
            _exit(126);
        dup2(null, 1);
        dup2(err, 2);
        alarm(secs); /* kept across execv: a hang ends in SIGALRM */
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    if (rss_kb)
        *rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

/* stderr of the last run, which must contain `want` (and not `unwanted`, when given). */
static void expect_msg(const char *errpath, const char *want, const char *unwanted)
{
    char *e = slurp(errpath, NULL);
    if (!strstr(e, want) || (unwanted && strstr(e, unwanted))) {
        fprintf(stderr, "stderr was: %s\nwanted: %s\n", e, want);
        fail();
    }
    free(e);
}

/* gentrace --shape S --count N --fan M -o name (in the temporary directory). */
static const char *gen(const char *shape, long count, long fan, const char *name)
{
    char c[32], f[32];
    snprintf(c, sizeof c, "%ld", count);
    snprintf(f, sizeof f, "%ld", fan);
    static char paths[16][4096];
    static int k;
    k = (k + 1) % 16;
    snprintf(paths[k], sizeof paths[k], "%s/%s", tmpdir, name);
    const char *path = paths[k];
    const char *argv[] = {gentrace, "--shape", shape, "--count", c, "--fan", f, "--level", "1", "-o", path, NULL};
    assert_int_equal(run(argv, NULL, 120, NULL), 0);
    return path;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* No temporary output (".NAME.tmp-XXXXXX") is left in the directory. */
static void expect_no_temporaries(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q 'tmp-'", dir);
    if (system(cmd) == 0) {
        snprintf(cmd, sizeof cmd, "ls -lA '%s' >&2", dir);
        (void)system(cmd);
        fail_msg("temporary outputs left in %s", dir);
    }
}

/* ---- the merged tree's size (depth) ------------------------------------------------------- */

/* A chain 3,000 calls deep: the tree text draws 64 levels and marks the rest, so it grows
 * with the nodes (~0.85 MB here), not with the square of the depth (18 MB before). */
static void test_deep_chain_tree_text_is_bounded(void **state)
{
    (void)state;
    const char *a = gen("chain", 3000, 1, "chain.json.gz");
    const char *argv[] = {tlcompare, a, a, "-o", at("chain.xlsx"), "--tracediff-dir", at("chain_td"), NULL};
    assert_int_equal(run(argv, at("chain.err"), 60, NULL), 0);
    long n = file_size(at("chain_td/merged_tree_output.txt"));
    assert_true(n > 0);
    assert_true(n < 1200000);
    /* 3,001 levels under the root call: line k (1-based) is at depth k - 1 */
    size_t len;
    char *text = slurp(at("chain_td/merged_tree_output.txt"), &len);
    char *line = text;
    for (int k = 1; k < 66; k++)
        line = strchr(line, '\n') + 1;
    char want[600] = "";
    for (int k = 0; k < 64; k++)
        strcat(want, "    ");
    strcat(want, "(+1) \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::op_0\n");
    assert_memory_equal(line, want, strlen(want));
    /* the line above, at depth 64, is drawn in full */
    char *prev = line - 1;
    while (prev > text && prev[-1] != '\n')
        prev--;
    assert_int_equal(line - prev, 64 * 4 + 10 + strlen("aten::op_0\n"));
    assert_non_null(strstr(text, "(+2937) \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kernel_0\n"));
    free(text);
    expect_msg(at("chain.err"), "the merged tree is 3002 levels deep: merged_tree_output.txt indents the first 64",
               NULL);
}

/* ---- the widest alignment: memory ------------------------------------------------------------ */

/* Lines in a file. */
static long count_lines(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    long n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    free(text);
    return n;
}

/* Peak RSS (KB) of tlcompare on two traces of 10^5 sibling calls of gentrace `shape`, every
 * output written; the whole comparison made (every op a row of its own, a side each). */
static long siblings_peak(const char *shape)
{
    const char *a = gen(shape, 100000, 1, "sib1.json.gz");
    const char *b = gen(shape, 100000, 2, "sib2.json.gz");
    const char *argv[] = {tlcompare, a, b, "-o", at("sib.xlsx"), "--output_csvs_dir", at("sib_csv"),
                          "--tracediff-dir", at("sib_td"), NULL};
    long rss;
    assert_int_equal(run(argv, at("sib.err"), 600, &rss), 0);
    fprintf(stderr, "two traces of 10^5 %s calls: peak RSS %.0f MB (bound 1500 MB)\n", shape, rss * 1024 / 1e6);
    int nested = strcmp(shape, "siblings") == 0; /* one op over them, and a launch of its own */
    assert_int_equal(count_lines(at("sib_csv/ops_summary.csv")), 200001 + nested);
    assert_int_equal(count_lines(at("sib_csv/ops_unique_args_only_baseline_sib2.csv")), 100001);
    assert_int_equal(count_lines(at("sib_csv/ops_unique_args_only_variant_sib2.csv")), 100001);
    assert_int_equal(count_lines(at("sib_td/diff_stats.csv")), 200001 + 2 * nested);
    if (nested) /* Wagner-Fischer's table would be 10^10 cells */
        expect_msg(at("sib.err"), "1 children lists too long to align whole were aligned in chunks", NULL);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", at("sib_csv"), at("sib_td"));
    assert_int_equal(system(cmd), 0);
    return rss;
}

/*
 * Two traces of 10^5 sibling calls, every name different: under one op, the alignment's
 * Wagner-Fischer case at its widest (cut into chunks within 2^28 cells); at the top level
 * (paired by position), report sheets of 10^5 rows a side whose merges keep every row
 * apart.  The whole comparison, every output written, stays under 1.5 GB of resident
 * memory (the bound the man page's LIMITS gives).  The top-level pair peaked at 1.80 GB
 * while each trace's sheets stayed in memory beside every sheet compared from them, and
 * each sheet's texts were held twice (the nested one at 1.38 GB); both take ~1.1 GB now,
 * varying by a few percent with the threads' timing: the margin is that and the
 * allocator's.  Not under ASan, whose shadow memory and quarantine count in the RSS.
 */
static void test_widest_alignment_memory_bounded(void **state)
{
    (void)state;
    if (TT_UNDER_ASAN)
        return;
    assert_true(siblings_peak("top-siblings") * 1024.0 < 1.5e9);
    assert_true(siblings_peak("siblings") * 1024.0 < 1.5e9);
}

/* ---- out of memory on the loading threads -------------------------------------------------- */

/* argv run as run() does, under an address-space limit of `mb` MB (set in the child). */
static int run_limited(const char *const *argv, const char *errpath, long mb)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        struct rlimit rl = {(rlim_t)mb << 20, (rlim_t)mb << 20};
        if (null < 0 || err < 0 || setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(126);
        dup2(null, 1);
        dup2(err, 2);
        alarm(120);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Two traces load on helper threads: running out of memory there is one line naming the
 * trace being read, exit 1, and nothing written.  Several limits, so that it happens at
 * different points of the loads (the first allocation past the limit fails, whichever
 * thread asks).  Not under ASan, which maps its shadow as it goes and aborts itself.
 */
static void test_out_of_memory_on_a_loading_thread_names_the_trace(void **state)
{
    (void)state;
    if (TT_UNDER_ASAN)
        return;
    const char *a = gen("siblings", 100000, 1, "oom1.json.gz");
    const char *b = gen("siblings", 100000, 2, "oom2.json.gz");
    char *dir = at("oomout");
    assert_int_equal(mkdir(dir, 0755), 0);
    static const long limits[] = {100, 200, 300};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        char out[4200], want_a[4200], want_b[4200];
        snprintf(out, sizeof out, "%s/c.xlsx", dir);
        const char *argv[] = {tlcompare, a, b, "-q", "-o", out, "--tracediff-dir", at("oomout/td"), NULL};
        assert_int_equal(run_limited(argv, at("oom.err"), limits[i]), 1);
        char *e = slurp(at("oom.err"), NULL);
        snprintf(want_a, sizeof want_a, "while reading '%s'\n", a);
        snprintf(want_b, sizeof want_b, "while reading '%s'\n", b);
        if (strncmp(e, "tlcompare: out of memory (asked for ", 36) != 0 ||
            (!strstr(e, want_a) && !strstr(e, want_b)) || strchr(e, '\n') != e + strlen(e) - 1)
            fail_msg("limit %ld MB: stderr was: %s", limits[i], e);
        free(e);
        expect_no_temporaries(dir);
        assert_int_equal(file_size(out), -1);
    }
}

/* ---- times that are no number ------------------------------------------------------------- */

/* Events whose ts or dur is NaN or Infinity (Python's json writes them) are left out with
 * one warning that counts them and names the first, from both tools; the rest is reported. */
static void test_nonfinite_times_warned(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 9, "
        "\"args\": {\"External id\": 1}},\n"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
        "\"dur\": 1, \"args\": {\"correlation\": 1}},\n"
        "{\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 4, "
        "\"args\": {\"stream\": 7, \"correlation\": 1}},\n"
        "{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 20, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": NaN, \"dur\": 4},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 30, \"dur\": Infinity},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": -Infinity, \"dur\": 1}\n"
        "]}\n";
    const char *path = at("nonfinite.json");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
    assert_int_equal(fclose(f), 0);
    char want[4200];
    snprintf(want, sizeof want,
             "%s: 3 events with a ts or dur of NaN, Infinity or beyond a double (the first is event 5); left out",
             path);
    const char *rep[] = {tlreport, path, "-o", at("nf.xlsx"), NULL};
    assert_int_equal(run(rep, at("nf.err"), 60, NULL), 0);
    expect_msg(at("nf.err"), want, NULL);
    const char *cmp[] = {tlcompare, path, path, "-o", at("nf2.xlsx"), NULL};
    assert_int_equal(run(cmp, at("nf2.err"), 60, NULL), 0);
    expect_msg(at("nf2.err"), want, NULL);
}

/* ---- graph-launch fan-out ----------------------------------------------------------------- */

/* 2,000 graph launches sharing one correlation with 10,000 kernels: 2e7 links.  Refused
 * at once, with the cause (not "calls nest too deeply"), before any link is made. */
static void test_graph_fanout_refused_before_linking(void **state)
{
    (void)state;
    const char *a = gen("graph-fanout", 2000, 10000, "fan.json.gz");
    const char *argv[] = {tlreport, a, "-o", at("fan.xlsx"), NULL};
    long rss;
    double t0 = now();
    assert_int_equal(run(argv, at("fan.err"), 60, &rss), 1);
    assert_true(now() - t0 < 5);
    assert_true(rss < 200 * 1024 || TT_UNDER_ASAN);
    expect_msg(at("fan.err"),
               "fan.json.gz: 2000 cudaGraphLaunch events share correlation 1, each linking the same 10000 GPU events: "
               "20000000 links, 19990000 of them repeats (the limit is 4194304 repeated links)",
               "nest too deeply");
    assert_int_equal(file_size(at("fan.xlsx")), -1);
}

/* Below the limit, every launch still links every kernel of its correlation. */
static void test_graph_fanout_small_links_all(void **state)
{
    (void)state;
    const char *a = gen("graph-fanout", 3, 5, "fan_small.json");
    tl_error err = {0};
    tl_trace *t = tl_trace_load(a, &err);
    assert_non_null(t);
    size_t nlaunch = 0;
    for (uint32_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (e->flags & TL_TEV_GRAPH_LAUNCH) {
            nlaunch++;
            assert_int_equal(e->ngpu, 5);
        }
        if (e->kind == TL_TEV_CPU_OP)
            assert_int_equal(e->ngpu, 15);
    }
    assert_int_equal(nlaunch, 3);
    tl_trace_free(t);
}

/* ---- GPU lists of nested ops -------------------------------------------------------------- */

/* 2,000 nested ops over 2,000 kernels: each op lists all 2,000 kernels, yet the lists
 * share one layout (O(events) entries, not 4 million), in link order. */
static void test_nested_gpu_lists_are_linear(void **state)
{
    (void)state;
    const char *a = gen("nested", 2000, 2000, "nested.json.gz");
    tl_error err = {0};
    double t0 = now();
    tl_trace *t = tl_trace_load(a, &err);
    assert_non_null(t);
    assert_true(now() - t0 < 10);
    assert_true(t->nidx <= 3 * t->nev);
    const uint32_t *root = NULL;
    for (uint32_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (e->kind != TL_TEV_CPU_OP)
            continue;
        assert_int_equal(e->ngpu, 2000);
        const uint32_t *g = tl_tev_gpu(t, i);
        if (!root)
            root = g;
        assert_memory_equal(g, root, 2000 * sizeof *g);
    }
    /* link order: the launches' array order, here also their kernels' order */
    for (uint32_t k = 1; k < 2000; k++)
        assert_true(root[k] > root[k - 1]);
    tl_trace_free(t);
}

/* Launches written in reverse time order: every ancestor's list is still in link order
 * (the trace's order of the launches), whatever the tree order. */
static void test_out_of_order_lists_keep_link_order(void **state)
{
    (void)state;
    const char *a = gen("out-of-order", 3, 4, "ooo.json");
    tl_error err = {0};
    tl_trace *t = tl_trace_load(a, &err);
    assert_non_null(t);
    size_t nops = 0;
    for (uint32_t i = 0; i < t->nev; i++) {
        if (t->ev[i].kind != TL_TEV_CPU_OP)
            continue;
        nops++;
        assert_int_equal(t->ev[i].ngpu, 4);
        const uint32_t *g = tl_tev_gpu(t, i);
        const char *want[4] = {"kernel_3", "kernel_2", "kernel_1", "kernel_0"};
        for (int k = 0; k < 4; k++)
            assert_string_equal(t->ev[g[k]].name, want[k]);
    }
    assert_int_equal(nops, 3);
    tl_trace_free(t);
}

/* Such lists need copies of their own: bounded, and refused before any is made. */
static void test_out_of_order_copies_bounded(void **state)
{
    (void)state;
    const char *a = gen("out-of-order", 20000, 4000, "ooo_big.json.gz");
    const char *argv[] = {tlreport, a, "-o", at("ooo.xlsx"), NULL};
    double t0 = now();
    assert_int_equal(run(argv, at("ooo.err"), 60, NULL), 1);
    assert_true(now() - t0 < 10);
    expect_msg(at("ooo.err"),
               "ooo_big.json.gz: 20000 nested calls launch GPU work out of their time order, so each needs a GPU list "
               "of its own: 80000000 entries, more than 67108864 (the limit)",
               NULL);
}

/* ---- strings and arguments ---------------------------------------------------------------- */

/* A name of 45M \u00e9 escapes: 270 MB of JSON text, 90 MB decoded.  The string cap holds
 * for the text a string takes, escapes included, not only for what it decodes to. */
static void test_escaped_string_capped(void **state)
{
    (void)state;
    const char *a = gen("escapes", 45000000, 1, "esc.json.gz");
    const char *argv[] = {tlreport, a, "-o", at("esc.xlsx"), NULL};
    long rss;
    assert_int_equal(run(argv, at("esc.err"), 120, &rss), 1);
    assert_true(rss < 600 * 1024 || TT_UNDER_ASAN);
    expect_msg(at("esc.err"), "esc.json.gz: not a valid trace: a string longer than 256 MiB at byte ", NULL);
}

/* Input Dims of 6M entries (18 MB as a tuple): one argument holds at most 16 MiB. */
static void test_huge_shape_argument_capped(void **state)
{
    (void)state;
    const char *a = gen("dims", 6000000, 1, "dims.json.gz");
    const char *argv[] = {tlreport, a, "-o", at("dims.xlsx"), NULL};
    assert_int_equal(run(argv, at("dims.err"), 60, NULL), 1);
    expect_msg(at("dims.err"),
               "dims.json.gz: not a valid trace: args \"Input Dims\" longer than 16 MiB as text (the limit for one "
               "argument) at byte ",
               NULL);
    /* and a shape of 1000 entries is read whole */
    a = gen("dims", 1000, 1, "dims_ok.json");
    tl_error err = {0};
    tl_trace *t = tl_trace_load(a, &err);
    assert_non_null(t);
    int seen = 0;
    for (uint32_t i = 0; i < t->nev; i++)
        if (tl_tev_x(t, &t->ev[i])->args->input_dims) {
            assert_int_equal(strlen(tl_tev_x(t, &t->ev[i])->args->input_dims), 2 + 1 + 999 * 3 + 1 + 2); /* "((1, 1, ..., 1),)" */
            seen = 1;
        }
    assert_true(seen);
    tl_trace_free(t);
}

/* ---- out of memory ------------------------------------------------------------------------ */

/* The allocator's failure removes the outputs being written, as SIGINT does, and names
 * the input being read. */
static void test_out_of_memory_cleans_up(void **state)
{
    (void)state;
    if (TT_UNDER_ASAN) /* ASan reports the impossible request itself */
        return;
    char *dir = at("oom");
    assert_int_equal(mkdir(dir, 0755), 0);
    char target[4200], errpath[4200];
    snprintf(target, sizeof target, "%s/c.xlsx", dir);
    snprintf(errpath, sizeof errpath, "%s.err", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        tl_progname = "tlcompare";
        tl_output_install_cleanup();
        tl_error err = {0};
        tl_output *o = tl_output_new(target, 0, &err);
        if (!o)
            _exit(3);
        tl_reading("traces/big.json.gz");
        volatile size_t huge = SIZE_MAX / 2;
        void *p = tl_xmalloc(huge);
        (void)p;
        _exit(4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    expect_msg(errpath, "tlcompare: out of memory (asked for 9223372036854775807 bytes) while reading "
                        "'traces/big.json.gz'", NULL);
    expect_no_temporaries(dir);
}

/* ---- FIFOs -------------------------------------------------------------------------------- */

/* A FIFO nobody writes: refused at once by both programs; one being written is read. */
static void test_fifo_inputs(void **state)
{
    (void)state;
    const char *fifo = at("in.fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *trace = gen("chain", 3, 1, "small.json");
    const char *a1[] = {tlreport, fifo, "-o", at("fifo.xlsx"), NULL};
    double t0 = now();
    assert_int_equal(run(a1, at("fifo1.err"), 10, NULL), 1);
    expect_msg(at("fifo1.err"), "in.fifo: cannot read: a FIFO with no writer", NULL);
    const char *a2[] = {tlcompare, fifo, trace, "-o", at("fifo.xlsx"), NULL};
    assert_int_equal(run(a2, at("fifo2.err"), 10, NULL), 1);
    expect_msg(at("fifo2.err"), "in.fifo: cannot read: a FIFO with no writer", NULL);
    assert_true(now() - t0 < 5);
    /* a writer waiting in open(): both read what it writes */
    for (int k = 0; k < 2; k++) {
        pid_t w = fork();
        assert_true(w >= 0);
        if (w == 0) {
            size_t n;
            char *text = slurp(trace, &n);
            int fd = open(fifo, O_WRONLY);
            if (fd < 0 || write(fd, text, n) != (ssize_t)n)
                _exit(1);
            _exit(0);
        }
        usleep(100000);
        const char *a3[] = {tlreport, fifo, "-q", "-o", at("fifo_ok.xlsx"), NULL};
        const char *a4[] = {tlcompare, fifo, trace, "-q", "-o", at("fifo_ok.xlsx"), NULL};
        assert_int_equal(run(k ? a4 : a3, at("fifo3.err"), 20, NULL), 0);
        int status;
        assert_int_equal(waitpid(w, &status, 0), w);
        assert_true(file_size(at("fifo_ok.xlsx")) > 0);
        unlink(at("fifo_ok.xlsx"));
    }
}

/* ---- the JSON the diff writes -------------------------------------------------------------- */

/* 1 when s[0..n) is valid UTF-8. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80                           ? 1
                   : (c & 0xe0) == 0xc0 && c >= 0xc2      ? 2
                   : (c & 0xf0) == 0xe0                   ? 3
                   : (c & 0xf8) == 0xf0 && c < 0xf5       ? 4
                                                          : 0;
        if (!k || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        if (k == 3 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)))
            return 0;
        if (k == 4 && ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90)))
            return 0;
        i += k;
    }
    return 1;
}

static const char bad_utf8_trace[] =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::\xff\xfeop\", \"pid\": 1, \"tid\": 1, \"ts\": 0, "
    "\"dur\": 10, \"args\": {\"External id\": 1}},"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
    "\"dur\": 1, \"args\": {\"correlation\": 1}},"
    "{\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"cat\": \"ac2g\", \"name\": \"ac2g\"},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kern\xc3\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 1, "
    "\"args\": {\"stream\": 7, \"correlation\": 1}},"
    "{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 20, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}"
    "]}";

/* Op and kernel names with invalid UTF-8: the cpu_op maps are valid UTF-8, with U+FFFD
 * where the bytes were, as --summary-json writes them. */
static void test_cpu_op_maps_are_utf8(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_trace *t1 = tl_trace_load_mem(bad_utf8_trace, sizeof bad_utf8_trace - 1, "a.json", &err);
    tl_trace *t2 = tl_trace_load_mem(bad_utf8_trace, sizeof bad_utf8_trace - 1, "b.json", &err);
    assert_non_null(t1);
    assert_non_null(t2);
    tl_diff *d = tl_diff_run(t1, t2, NULL, &err);
    assert_non_null(d);
    tl_buf b = {0};
    for (int w = 0; w < 3; w++) {
        tl_diff_cpu_op_map_json(d, w, &b);
        assert_true(b.len > 0);
        assert_true(valid_utf8((const unsigned char *)b.data, b.len));
        assert_non_null(strstr(tl_buf_cstr(&b), "aten::\xef\xbf\xbd\xef\xbf\xbdop"));
        assert_non_null(strstr(tl_buf_cstr(&b), "kern\xef\xbf\xbd\""));
    }
    tl_buf_free(&b);
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
}

/* ---- inputs that are not reports ---------------------------------------------------------- */

/* What tlcompare says of a BOM-prefixed .json, an empty .json, a zlib stream named
 * .json.gz: what is wrong with it as a trace (tlreport's words), not "not a zip archive";
 * with --tracediff-dir, an input that is no trace is named. */
static void test_non_report_inputs_named(void **state)
{
    (void)state;
    const char *trace = gen("chain", 3, 1, "ok.json");
    tt_write_file(at("bom.json"), "\xef\xbb\xbf{\"traceEvents\": []}", 22);
    tt_write_file(at("empty.json"), "", 0);
    /* a zlib stream: header 78 9c, then deflate data (of "{}") */
    tt_write_file(at("zlib.json.gz"), "\x78\x9c\xab\xae\x05\x00\x01\x75\x00\xf9", 10);
    const char *files[3] = {"bom.json", "empty.json", "zlib.json.gz"};
    const char *why[3] = {"bom.json: not a trace: the text starts with a UTF-8 byte-order mark, which JSON does not "
                          "allow (remove the first 3 bytes)",
                          "empty.json: not a trace: the file is empty",
                          "zlib.json.gz: not a trace: the file is a zlib stream, not gzip (compress it with gzip)"};
    for (int i = 0; i < 3; i++) {
        const char *a1[] = {tlcompare, at(files[i]), trace, "-o", at("x.xlsx"), NULL};
        assert_int_equal(run(a1, at("in.err"), 20, NULL), 1);
        expect_msg(at("in.err"), why[i], "zip archive");
        const char *a2[] = {tlreport, at(files[i]), "-o", at("x.xlsx"), NULL};
        assert_int_equal(run(a2, at("in.err"), 20, NULL), 1);
        expect_msg(at("in.err"), why[i], NULL);
        const char *a3[] = {tlcompare, at(files[i]), trace, "-o", at("x.xlsx"), "--tracediff-dir", at("td"), NULL};
        assert_int_equal(run(a3, at("in.err"), 20, NULL), 1);
        expect_msg(at("in.err"), why[i], "needs exactly two inputs");
    }
    assert_int_equal(mkdir(at("csvs"), 0755), 0);
    tt_write_file(at("csvs/ops_summary.csv"), "name,total\naten::mm,1\n", 23);
    const char *a4[] = {tlcompare, at("csvs"), trace, "-o", at("x.xlsx"), "--tracediff-dir", at("td"), NULL};
    assert_int_equal(run(a4, at("in.err"), 20, NULL), 2);
    expect_msg(at("in.err"), "--tracediff-dir needs two traces: '", NULL);
    expect_msg(at("in.err"), "/csvs' is not a PyTorch trace", NULL);
}

/* ---- messages ----------------------------------------------------------------------------- */

/* A trace of cpu_ops alone has no GPU events (not "GPU events without launch flows"),
 * and the message says what it holds instead. */
static void test_cpu_only_trace_message(void **state)
{
    (void)state;
    const char *a = gen("cpu-only", 10, 1, "cpu.json");
    const char *argv[] = {tlreport, a, "-o", at("cpu.xlsx"), NULL};
    assert_int_equal(run(argv, at("cpu.err"), 20, NULL), 1);
    expect_msg(at("cpu.err"),
               "cpu.json: no GPU events (kernel, gpu_memcpy, gpu_memset), so there is no GPU timeline to report; "
               "the trace holds 10 cpu_op",
               "launch flows");
}

/* Ids beyond int64 are refused (they were dropped, unlinking events silently); \u0000 in
 * a name is read as U+FFFD, so names that differ after it stay apart. */
static void test_big_ids_and_nul_escapes(void **state)
{
    (void)state;
    static const char big[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                              "\"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"correlation\": "
                              "99999999999999999999}}]}";
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(big, sizeof big - 1, "big.json", &err);
    assert_null(t);
    assert_non_null(strstr(err.msg, "big.json: not a valid trace: args \"correlation\" is an integer beyond 64 bits"));
    static const char bigpid[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", "
                                 "\"pid\": 18446744073709551616, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
    memset(&err, 0, sizeof err);
    assert_null(tl_trace_load_mem(bigpid, sizeof bigpid - 1, "bigpid.json", &err));
    assert_non_null(strstr(err.msg, "\"pid\" is an integer beyond 64 bits"));
    static const char nul[] = "{\"traceEvents\": ["
                              "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\\u0000a\", \"pid\": 1, \"tid\": 1, "
                              "\"ts\": 0, \"dur\": 1},"
                              "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\\u0000b\", \"pid\": 1, \"tid\": 1, "
                              "\"ts\": 5, \"dur\": 1}]}";
    memset(&err, 0, sizeof err);
    t = tl_trace_load_mem(nul, sizeof nul - 1, "nul.json", &err);
    assert_non_null(t);
    assert_int_equal(t->nev, 2);
    assert_string_equal(t->ev[0].name, "op\xef\xbf\xbd" "a");
    assert_string_equal(t->ev[1].name, "op\xef\xbf\xbd" "b");
    tl_trace_free(t);
}

static int setup(void **state)
{
    (void)state;
    tmpdir = tt_tmpdir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tt_rmrf(tmpdir);
    free(tmpdir);
    return 0;
}

int main(void)
{
    const char *tl = getenv("TLCOMPARE");
    if (!tl) {
        fprintf(stderr, "test_hostile: set TLCOMPARE (as make unit-test does)\n");
        return 1;
    }
    const char *slash = strrchr(tl, '/');
    int n = slash ? (int)(slash - tl) : 1;
    snprintf(tlcompare, sizeof tlcompare, "%s", tl);
    snprintf(tlreport, sizeof tlreport, "%.*s/tlreport", n, slash ? tl : ".");
    snprintf(gentrace, sizeof gentrace, "%.*s/tools/gentrace", n, slash ? tl : ".");
    tl_quiet = 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deep_chain_tree_text_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_widest_alignment_memory_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonfinite_times_warned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory_on_a_loading_thread_names_the_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_fanout_refused_before_linking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_fanout_small_links_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_gpu_lists_are_linear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order_lists_keep_link_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order_copies_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_escaped_string_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_shape_argument_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory_cleans_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_op_maps_are_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_report_inputs_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_only_trace_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_ids_and_nul_escapes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
