/*
 * test_commit.c - the commit protocol of a run's outputs under signals, neighbours and
 * limits (io/output.h, io/cleanup.h).
 *
 * A set of four outputs (an existing workbook, an existing CSV directory of three files,
 * an existing summary, a CSV directory not made yet) is committed in a forked child with
 * the real handlers installed; the test hook raises SIGINT after the K-th rename or the
 * K-th fsync.  Whatever K: a child that exits 130 changed nothing and left no temporary;
 * a child killed by SIGINT (after saying so) left every output new; there is no third
 * outcome.  Concurrent children committing one set leave it whole and from one of them.
 * The CLI cases ($TLCOMPARE) check the ignored SIGPIPE and SIGXFSZ: a one-line error,
 * exit 1, no temporary left.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "base/util.h"
#include "io/cleanup.h"
#include "io/output.h"

static const char *csv_names[] = {"a.csv", "b.csv", "c.csv"};
#define NCSV 3
#define NRENAMES 6 /* workbook, three CSVs into the existing directory, summary, new directory */

static char *path_in(const char *dir, const char *rel)
{
    char *p = malloc(strlen(dir) + strlen(rel) + 2);
    sprintf(p, "%s/%s", dir, rel);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        _exit(90);
    fputs(text, f);
    fclose(f);
}

/* The old set: every output but the new directory, each holding "old". */
static void make_old_set(const char *dir)
{
    char *p = path_in(dir, "x.xlsx");
    write_text(p, "old");
    free(p);
    p = path_in(dir, "csv");
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
    for (int i = 0; i < NCSV; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "csv/%s", csv_names[i]);
        p = path_in(dir, rel);
        write_text(p, "old");
        free(p);
    }
    p = path_in(dir, "s.md");
    write_text(p, "old");
    free(p);
}

/* Stage the set with `text` in every file and commit it; 0 or -1. */
static int commit_set(const char *dir, const char *text)
{
    tl_error err = {0};
    const char *files[] = {"x.xlsx", "s.md"};
    const char *dirs[] = {"csv", "new"};
    tl_output *outs[4] = {0};
    int n = 0, rc = -1;
    for (int i = 0; i < 2; i++) {
        char *t = path_in(dir, files[i]);
        outs[n] = tl_output_new(t, 0, &err);
        free(t);
        if (!outs[n])
            goto done;
        write_text(tl_output_temp(outs[n++]), text);
        t = path_in(dir, dirs[i]);
        outs[n] = tl_output_new(t, 1, &err);
        free(t);
        if (!outs[n])
            goto done;
        for (int k = 0; k < NCSV; k++) {
            char *f = tl_output_add(outs[n], csv_names[k]);
            write_text(f, text);
            free(f);
        }
        n++;
    }
    rc = tl_output_commit(outs, 4, &err);
done:
    for (int i = 0; i < 4; i++)
        tl_output_free(outs[i]);
    return rc;
}

/* "old", "new" (all of the set so), "mixed", or "missing" (an old file gone). */
static const char *set_state(const char *dir, const char *old_text, const char *new_text)
{
    const char *rels[] = {"x.xlsx", "csv/a.csv", "csv/b.csv", "csv/c.csv", "s.md"};
    int nold = 0, nnew = 0;
    for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        char *s = tt_slurp_in(dir, rels[i]);
        if (!s)
            return "missing";
        nold += strcmp(s, old_text) == 0;
        nnew += strcmp(s, new_text) == 0;
        free(s);
    }
    char *nd = path_in(dir, "new");
    struct stat st;
    int new_dir = stat(nd, &st) == 0;
    free(nd);
    if (nold == 5 && !new_dir)
        return "old";
    if (nnew == 5 && new_dir)
        return "new";
    return "mixed";
}

/* How many entries under `dir` (recursively) have ".tmp-" in their names. */
static int count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n += strstr(e->d_name, ".tmp-") != NULL;
        char *p = path_in(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            n += count_temps(p);
        free(p);
    }
    closedir(d);
    return n;
}

/* ---- the signal hook ---------------------------------------------------------------- */

static const char *hook_step;
static unsigned hook_k;
static unsigned seen_fsyncs, fsyncs_before_rename, seen_renames;

static void raise_at(const char *step, unsigned k)
{
    if (strcmp(step, hook_step) == 0 && k == hook_k)
        raise(SIGINT);
}

static void count_steps(const char *step, unsigned k)
{
    if (strcmp(step, "fsync") == 0)
        seen_fsyncs = k;
    else if (++seen_renames == 1)
        fsyncs_before_rename = seen_fsyncs;
}

/* Commit the new set over the old one in a child that gets SIGINT at step k; its wait
 * status, its stderr in `errfile`. */
static int child_commit(const char *dir, const char *step, unsigned k, const char *errfile)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        tl_progname = "tltest";
        tl_output_install_cleanup();
        tl_cleanup_set_written(0); /* the parent's earlier commits are not this run's */
        hook_step = step;
        hook_k = k;
        tl_output_set_test_hook(raise_at);
        int rc = commit_set(dir, "new");
        _exit(rc == 0 ? 0 : 1);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return ws;
}

/* One child interrupted at `step` k: exit 130 with nothing changed, or killed by SIGINT
 * (after saying so) with everything new.  `written` says which is expected. */
static void interrupted_at(const char *step, unsigned k, int written)
{
    char *dir = tt_tmpdir(), *logs = tt_tmpdir();
    make_old_set(dir);
    char *errfile = path_in(logs, "err.txt");
    int ws = child_commit(dir, step, k, errfile);
    const char *state = set_state(dir, "old", "new");
    char *msg = tt_slurp_in(logs, "err.txt");
    if (written) {
        if (!WIFSIGNALED(ws) || WTERMSIG(ws) != SIGINT || strcmp(state, "new") != 0)
            fail_msg("SIGINT after %s %u: status %#x, set %s (want killed by SIGINT, new)", step, k, ws, state);
        assert_non_null(strstr(msg, "tltest: interrupted after the outputs were written\n"));
    } else {
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 130 || strcmp(state, "old") != 0)
            fail_msg("SIGINT after %s %u: status %#x, set %s (want exit 130, old)", step, k, ws, state);
        assert_string_equal(msg, "");
    }
    if (count_temps(dir) != 0)
        fail_msg("SIGINT after %s %u: %d temporaries left", step, k, count_temps(dir));
    free(msg);
    free(errfile);
    tt_rmrf(dir);
    tt_rmrf(logs);
    free(dir);
    free(logs);
}

static void test_signal_after_each_rename(void **state)
{
    (void)state;
    for (unsigned k = 1; k <= NRENAMES; k++)
        interrupted_at("rename", k, 1);
}

static void test_signal_after_each_fsync(void **state)
{
    (void)state;
    /* a dry run counts the fsyncs, and those before the first rename */
    char *dir = tt_tmpdir();
    make_old_set(dir);
    seen_fsyncs = seen_renames = fsyncs_before_rename = 0;
    tl_output_set_test_hook(count_steps);
    assert_int_equal(commit_set(dir, "new"), 0);
    tl_output_set_test_hook(NULL);
    assert_string_equal(set_state(dir, "old", "new"), "new");
    assert_int_equal(seen_renames, NRENAMES);
    assert_true(fsyncs_before_rename > 0 && seen_fsyncs > fsyncs_before_rename);
    tt_rmrf(dir);
    free(dir);
    for (unsigned k = 1; k <= seen_fsyncs; k++)
        interrupted_at("fsync", k, k > fsyncs_before_rename);
}

/* Thousands of files staged in one directory output: every one is tracked, so an
 * interruption at the first fsync leaves no temporary directory behind. */
static void test_tracking_has_no_cap(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), *logs = tt_tmpdir();
    char *errfile = path_in(logs, "err.txt");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        tl_output_install_cleanup();
        tl_cleanup_set_written(0);
        tl_error err = {0};
        char *t = path_in(dir, "many");
        tl_output *o = tl_output_new(t, 1, &err);
        for (int i = 0; o && i < 5000; i++) {
            char name[32];
            snprintf(name, sizeof name, "sheet_%d.csv", i);
            char *f = tl_output_add(o, name);
            write_text(f, "x");
            free(f);
        }
        if (!o || tl_cleanup_count() != 5001)
            _exit(2);
        hook_step = "fsync";
        hook_k = 1;
        tl_output_set_test_hook(raise_at);
        tl_output_commit(&o, 1, &err);
        _exit(3);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 130);
    /* nothing at all: not the directory, not its temporary */
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(n, 0);
    free(errfile);
    tt_rmrf(dir);
    tt_rmrf(logs);
    free(dir);
    free(logs);
}

static void test_cleanup_list_grows_and_shrinks(void **state)
{
    (void)state;
    char p[64];
    for (int i = 0; i < 10000; i++) {
        snprintf(p, sizeof p, "/nonexistent/tl-%d", i);
        tl_cleanup_track(p);
    }
    assert_int_equal(tl_cleanup_count(), 10000);
    for (int i = 0; i < 10000; i += 2) {
        snprintf(p, sizeof p, "/nonexistent/tl-%d", i);
        tl_cleanup_untrack(p);
    }
    assert_int_equal(tl_cleanup_count(), 5000);
    tl_cleanup_untrack("/nonexistent/never-tracked");
    assert_int_equal(tl_cleanup_count(), 5000);
    tl_cleanup_remove_all();
    assert_int_equal(tl_cleanup_count(), 0);
}

/* ---- neighbours --------------------------------------------------------------------- */

static void widen_window(const char *step, unsigned k)
{
    (void)k;
    if (strcmp(step, "rename") == 0) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
    }
}

/* `nproc` children commit the set at once, `rounds` times: each final set is whole and
 * from one of them. */
static void concurrent_rounds(int nproc, int rounds)
{
    char *dir = tt_tmpdir();
    make_old_set(dir);
    for (int r = 0; r < rounds; r++) {
        pid_t pids[8];
        fflush(NULL);
        for (int c = 0; c < nproc; c++) {
            pids[c] = fork();
            assert_true(pids[c] >= 0);
            if (pids[c] == 0) {
                tl_output_set_test_hook(widen_window);
                char text[32];
                snprintf(text, sizeof text, "run %d", c);
                _exit(commit_set(dir, text) == 0 ? 0 : 1);
            }
        }
        for (int c = 0; c < nproc; c++) {
            int ws;
            assert_int_equal(waitpid(pids[c], &ws, 0), pids[c]);
            assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        }
        int whole = 0;
        for (int c = 0; c < nproc; c++) {
            char text[32];
            snprintf(text, sizeof text, "run %d", c);
            whole += strcmp(set_state(dir, "old", text), "new") == 0;
        }
        if (whole != 1)
            fail_msg("round %d of %d runs: the set is mixed", r, nproc);
        assert_int_equal(count_temps(dir), 0);
    }
    tt_rmrf(dir);
    free(dir);
}

static void test_two_concurrent_commits(void **state)
{
    (void)state;
    concurrent_rounds(2, 100);
}

static void test_four_concurrent_commits(void **state)
{
    (void)state;
    concurrent_rounds(4, 100);
}

/* A workbook and a CSV directory in one directory made for both: a run that fails
 * removes it, whichever output is freed first. */
static void test_shared_made_directory_removed(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    for (int order = 0; order < 2; order++) {
        tl_error err = {0};
        char *x = path_in(dir, "made/deeper/x.xlsx"), *c = path_in(dir, "made/deeper/csv");
        tl_output *a = tl_output_new(x, 0, &err), *b = tl_output_new(c, 1, &err);
        assert_non_null(a);
        assert_non_null(b);
        free(tl_output_add(b, "a.csv"));
        tl_output_free(order ? b : a);
        tl_output_free(order ? a : b);
        char *m = path_in(dir, "made");
        struct stat st;
        assert_int_not_equal(stat(m, &st), 0);
        free(m);
        free(x);
        free(c);
    }
    tl_cleanup_remove_all();
    assert_int_equal(tl_cleanup_count(), 0);
    tt_rmrf(dir);
    free(dir);
}

/* ---- the process's limits (the real binary) ----------------------------------------- */

static const char *tlcompare;
static const char *top;

/* Run tlcompare on the bundled workbooks with `out` as -o, in `dir`, TMPDIR=`tmpdir`,
 * after `prepare` in the child; stdout a pipe of which `nread` bytes are read before
 * it is closed (-1: stdout to /dev/null).  Its wait status; its stderr in `errfile`. */
static int run_cli(const char *dir, const char *tmpdir, const char *out, const char *errfile, int nread,
                   void (*prepare)(void))
{
    char base[4096], cand[4096];
    snprintf(base, sizeof base, "%s/examples/traces/vit_h100.pt.trace.json.gz", top);
    snprintf(cand, sizeof cand, "%s/examples/traces/vit_mi300x.pt.trace.json.gz", top);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(91);
        setenv("TMPDIR", tmpdir, 1);
        close(fds[0]);
        if (nread < 0) {
            int nul = open("/dev/null", O_WRONLY);
            dup2(nul, 1);
        } else {
            dup2(fds[1], 1);
        }
        close(fds[1]);
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        signal(SIGPIPE, SIG_DFL); /* as a shell leaves it */
        signal(SIGXFSZ, SIG_DFL);
        if (prepare)
            prepare();
        execl(tlcompare, tlcompare, base, cand, "-q", "-o", out, "--output_csvs_dir", "csvs", (char *)NULL);
        _exit(92);
    }
    close(fds[1]);
    char buf[8];
    if (nread >= 0) {
        for (int got = 0; got < nread;) {
            ssize_t r = read(fds[0], buf, (size_t)(nread - got) < sizeof buf ? (size_t)(nread - got) : sizeof buf);
            if (r <= 0)
                break;
            got += (int)r;
        }
    }
    close(fds[0]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return ws;
}

static int one_line(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '\n' && memchr(s, '\n', n - 1) == NULL;
}

static void test_reader_closing_early(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), *tmp = tt_tmpdir(), *logs = tt_tmpdir();
    char *errfile = path_in(logs, "err.txt");
    for (int nread = 0; nread <= 5; nread += 5) {
        int ws = run_cli(dir, tmp, "/dev/stdout", errfile, nread, NULL);
        char *msg = tt_slurp_in(logs, "err.txt");
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 1)
            fail_msg("reader gone after %d bytes: status %#x (want exit 1), stderr: %s", nread, ws, msg);
        assert_true(one_line(msg));
        assert_non_null(strstr(msg, "/dev/stdout"));
        assert_int_equal(count_temps(tmp), 0);
        assert_int_equal(count_temps(dir), 0);
        char *csvs = path_in(dir, "csvs");
        struct stat st;
        /* a pipe cannot be taken back: the files were committed before it, whole */
        if (stat(csvs, &st) == 0)
            assert_int_equal(count_temps(csvs), 0);
        free(csvs);
        free(msg);
    }
    free(errfile);
    tt_rmrf(dir);
    tt_rmrf(tmp);
    tt_rmrf(logs);
    free(dir);
    free(tmp);
    free(logs);
}

static void small_file_limit(void)
{
    struct rlimit rl = {16384, 16384};
    setrlimit(RLIMIT_FSIZE, &rl);
}

static void test_file_size_limit(void **state)
{
    (void)state;
    char *dir = tt_tmpdir(), *tmp = tt_tmpdir(), *logs = tt_tmpdir();
    char *errfile = path_in(logs, "err.txt");
    int ws = run_cli(dir, tmp, "out.xlsx", errfile, -1, small_file_limit);
    char *msg = tt_slurp_in(logs, "err.txt");
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 1)
        fail_msg("ulimit -f: status %#x (want exit 1), stderr: %s", ws, msg);
    assert_true(one_line(msg));
    assert_non_null(strstr(msg, "File too large"));
    /* nothing at all in the directory */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            fail_msg("left behind: %s", e->d_name);
    closedir(d);
    free(msg);
    free(errfile);
    tt_rmrf(dir);
    tt_rmrf(tmp);
    tt_rmrf(logs);
    free(dir);
    free(tmp);
    free(logs);
}

/* A directory output whose files would replace an input: refused before anything is
 * written (the CSV directory holds <sheet>.csv, the TraceDiff directory its named files). */
static void test_directory_output_over_an_input(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir '%s/o' && cp '%s/examples/traces/vit_h100.pt.trace.json.gz' '%s/o/gpu_timeline.csv' && "
             "cp '%s/examples/traces/vit_mi300x.pt.trace.json.gz' '%s/o/diff_stats.csv'", dir, top, dir, top, dir);
    assert_int_equal(system(cmd), 0);
    char *before = tt_slurp_in(dir, "o/gpu_timeline.csv");
    struct {
        const char *prog, *args, *msg;
    } cases[] = {
        {tlcompare, "o/gpu_timeline.csv o/diff_stats.csv --output_csvs_dir o -o x.xlsx", "input report 'o/gpu_timeline.csv'"},
        {tlcompare, "o/gpu_timeline.csv o/diff_stats.csv --tracediff-dir o -o x.xlsx", "input report 'o/diff_stats.csv'"},
        {tlcompare, "o/gpu_timeline.csv o/diff_stats.csv --tracediff-dir ./o/ -o x.xlsx", "input report 'o/diff_stats.csv'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(tt_run_in(dir, cases[i].prog, cases[i].args), 2);
        char *err = tt_slurp_in(dir, "err.txt");
        if (!strstr(err, cases[i].msg))
            fail_msg("%s: %s", cases[i].args, err);
        free(err);
        char *now = tt_slurp_in(dir, "o/gpu_timeline.csv");
        assert_memory_equal(now, before, 100);
        free(now);
        assert_null(tt_slurp_in(dir, "x.xlsx"));
    }
    char tlreport[4200];
    snprintf(tlreport, sizeof tlreport, "%.*s/tlreport", (int)(strrchr(tlcompare, '/') - tlcompare), tlcompare);
    assert_int_equal(tt_run_in(dir, tlreport, "o/gpu_timeline.csv --output_csvs_dir o"), 2);
    free(before);
    tt_rmrf(dir);
    free(dir);
}

/* A full disk while the TraceDiff files are written: the message names the output, not
 * its temporary directory; nothing is left on the disk. */
static void test_full_disk_names_the_output(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char *mnt = path_in(dir, "mnt");
    assert_int_equal(mkdir(mnt, 0755), 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=300k") != 0) {
        free(mnt);
        tt_rmrf(dir);
        free(dir);
        skip();
    }
    char args[4096];
    snprintf(args, sizeof args, "'%s/examples/traces/vit_h100.pt.trace.json.gz' "
             "'%s/examples/traces/vit_mi300x.pt.trace.json.gz' --tracediff-dir mnt/td -o x.xlsx -q", top, top);
    int rc = tt_run_in(dir, tlcompare, args);
    char *err = tt_slurp_in(dir, "err.txt");
    assert_int_equal(rc, 1);
    assert_true(strncmp(err, "tlcompare: mnt/td/", 18) == 0);
    assert_null(strstr(err, ".tmp-"));
    assert_non_null(strstr(err, "No space left on device"));
    assert_int_equal(count_temps(mnt), 0);
    umount(mnt);
    free(err);
    free(mnt);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    top = getenv("TL_TOP");
    if (!tlcompare)
        tlcompare = "build/tlcompare";
    if (!top)
        top = ".";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signal_after_each_rename),
        cmocka_unit_test(test_signal_after_each_fsync),
        cmocka_unit_test(test_tracking_has_no_cap),
        cmocka_unit_test(test_cleanup_list_grows_and_shrinks),
        cmocka_unit_test(test_two_concurrent_commits),
        cmocka_unit_test(test_four_concurrent_commits),
        cmocka_unit_test(test_shared_made_directory_removed),
        cmocka_unit_test(test_reader_closing_early),
        cmocka_unit_test(test_file_size_limit),
        cmocka_unit_test(test_directory_output_over_an_input),
        cmocka_unit_test(test_full_disk_names_the_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
