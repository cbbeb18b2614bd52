/*
 * test_output.c - hostile outputs and inputs around the parsers: outputs that are not
 * regular files, outputs that collide or cannot all be committed, a CSV directory on
 * another file system, long names, concurrent runs, kept modes, FIFOs among the
 * reports, input text in messages, invalid UTF-8 in the summary.
 *
 * The CLI cases run the real binary ($TLCOMPARE) in a fresh directory, its stdout and
 * stderr collected in files of a second one (so that the first holds only what the run
 * made), and kill it past a timeout: a hang fails the test.  The message cleaning and
 * UTF-8 repair are also tested directly.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "base/util.h"

#define RUN_TIMEOUT_MS 20000

static const char *tlcompare;

typedef struct fixture {
    char *dir;  /* where the runs work */
    char *logs; /* their stdout and stderr */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    f->logs = tt_tmpdir();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char mnt[4200];
    snprintf(mnt, sizeof mnt, "%s/mnt", f->dir);
    umount(mnt); /* the cross-device test's tmpfs, when a failure left it */
    tt_rmrf(f->dir);
    tt_rmrf(f->logs);
    free(f->dir);
    free(f->logs);
    free(f);
    return 0;
}

static const char *at(const fixture *f, const char *rel)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", f->dir, rel);
    return b;
}

static void put(const fixture *f, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", at(f, rel));
    for (char *p = path + strlen(f->dir) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", path, strerror(errno));
            *p = '/';
        }
    }
    tt_write_file(path, text, strlen(text));
}

static char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    tl_buf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
        tl_buf_add(&b, chunk, got);
    fclose(fp);
    if (n)
        *n = b.len;
    return b.data ? b.data : calloc(1, 1);
}

static char *read_rel(const fixture *f, const char *rel) { return slurp(at(f, rel), NULL); }

static void assert_file_is(const fixture *f, const char *rel, const char *text)
{
    char *got = read_rel(f, rel);
    if (!got)
        fail_msg("%s is missing", rel);
    if (strcmp(got, text) != 0)
        fail_msg("%s changed: now '%.200s'", rel, got);
    free(got);
}

static int is_workbook(const fixture *f, const char *rel)
{
    size_t n = 0;
    char *got = slurp(at(f, rel), &n);
    int ok = got && n > 4 && memcmp(got, "PK\x03\x04", 4) == 0;
    free(got);
    return ok;
}

/* No ".<name>.tmp-XXXXXX" left in `dir`. */
static void assert_no_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-"))
            fail_msg("temporary output left behind: %s/%s", dir, e->d_name);
    closedir(d);
}

/* ---- running the binary ---------------------------------------------------------- */

typedef struct run_result {
    int status; /* exit status; 128 + n when killed by signal n */
    char *out, *err;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Start tlcompare with args[] in f->dir, output to <logs>/<tag>.out and .err. */
static pid_t start(const fixture *f, const char *tag, const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = tlcompare;
    memcpy(argv + 1, args, n * sizeof *argv);
    char out[4200], err[4200];
    snprintf(out, sizeof out, "%s/%s.out", f->logs, tag);
    snprintf(err, sizeof err, "%s/%s.err", f->logs, tag);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(f->dir) != 0)
            _exit(126);
        execv(tlcompare, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

/* Wait for it (draining `drain`, a FIFO's read end, when >= 0); kill it past the timeout. */
static run_result wait_for(const fixture *f, const char *tag, pid_t pid, int drain, tl_buf *drained)
{
    double deadline = now_ms() + RUN_TIMEOUT_MS;
    int ws;
    for (;;) {
        pid_t done = waitpid(pid, &ws, WNOHANG);
        if (drain >= 0) {
            char buf[65536];
            ssize_t got;
            while ((got = read(drain, buf, sizeof buf)) > 0)
                tl_buf_add(drained, buf, (size_t)got);
        }
        if (done == pid)
            break;
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("tlcompare did not finish within %d ms", RUN_TIMEOUT_MS);
        }
        usleep(500);
    }
    run_result r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.out", f->logs, tag);
    r.out = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/%s.err", f->logs, tag);
    r.err = slurp(path, NULL);
    return r;
}

static run_result run_args(const fixture *f, const char *const *args)
{
    return wait_for(f, "run", start(f, "run", args), -1, NULL);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define RUN(f, ...) run_args((f), ARGS(__VA_ARGS__))

static void expect_ok(const run_result *r)
{
    if (r->status != 0)
        fail_msg("tlcompare failed (exit %d): %s", r->status, r->err);
}

/* Exit `status` with exactly the one stderr line "tlcompare: <message>". */
static void expect_error(const run_result *r, int status, const char *message)
{
    char want[8192];
    snprintf(want, sizeof want, "tlcompare: %s\n", message);
    if (r->status != status || strcmp(r->err, want) != 0)
        fail_msg("expected exit %d and stderr\n  %s  got exit %d and stderr\n  %.2000s", status, want,
                 r->status, r->err);
}

/* ---- reports ---------------------------------------------------------------------- */

static const char GPU_A[] = "type,time ms\nbusy,10\nidle,5\n";
static const char GPU_B[] = "type,time ms\nbusy,12\nidle,4\n";
static const char OLD_WORKBOOK[] = "the workbook of an earlier run\n";
static const char OLD_CSV[] = "the CSV of an earlier run\n";
static const char OLD_MD[] = "the summary of an earlier run\n";

static void two_reports(const fixture *f)
{
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", GPU_B);
}

/* ==== 1. outputs that are not regular files ========================================= */

/* A FIFO with a reader is written through: the reader gets the workbook, the FIFO stays. */
static void test_fifo_output_is_written_through(void **state)
{
    fixture *f = *state;
    two_reports(f);
    assert_int_equal(mkfifo(at(f, "out.xlsx"), 0644), 0);
    int rd = open(at(f, "out.xlsx"), O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    tl_buf got = {0};
    pid_t pid = start(f, "run", ARGS("a", "b", "-o", "out.xlsx", "-q"));
    run_result r = wait_for(f, "run", pid, rd, &got);
    close(rd);
    expect_ok(&r);
    run_free(&r);
    struct stat st;
    assert_int_equal(lstat(at(f, "out.xlsx"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_true(got.len > 100 && memcmp(got.data, "PK\x03\x04", 4) == 0);
    tl_buf_free(&got);
    assert_no_temp_files(f->dir);
}

/* A FIFO nobody reads: refused before anything moved, not a hang. */
static void test_fifo_output_without_reader(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "csvs/gpu_timeline.csv", OLD_CSV);
    assert_int_equal(mkfifo(at(f, "out.xlsx"), 0644), 0);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--output_csvs_dir", "csvs");
    expect_error(&r, 1, "out.xlsx: cannot open for writing: a FIFO with no reader");
    run_free(&r);
    struct stat st;
    assert_int_equal(lstat(at(f, "out.xlsx"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_file_is(f, "csvs/gpu_timeline.csv", OLD_CSV);
    assert_no_temp_files(f->dir);
    assert_no_temp_files(at(f, "csvs"));
}

/* A character device (our own null device, not the system's) stays one. */
static void test_character_device_output_is_not_replaced(void **state)
{
    fixture *f = *state;
    if (mknod(at(f, "null"), S_IFCHR | 0666, makedev(1, 3)) != 0)
        skip(); /* not root: cannot make a device node */
    two_reports(f);
    run_result r = RUN(f, "a", "b", "-o", "null", "--summary-json", "null", "-q"); /* both: no loss */
    expect_ok(&r);
    run_free(&r);
    struct stat st;
    assert_int_equal(lstat(at(f, "null"), &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_no_temp_files(f->dir);
}

/* A pipe named through /proc (what /dev/stdout is): the summary appears on stdout. */
static void test_stdout_pipe_output(void **state)
{
    fixture *f = *state;
    two_reports(f);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        if (chdir(f->dir) != 0)
            _exit(126);
        execl(tlcompare, tlcompare, "a", "b", "-q", "--summary-json", "/proc/self/fd/1", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    tl_buf got = {0};
    char buf[4096];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0)
        tl_buf_add(&got, buf, (size_t)n);
    close(p[0]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    assert_true(got.len > 2 && got.data[0] == '{');
    assert_non_null(strstr(tl_buf_cstr(&got), "\"variants\""));
    tl_buf_free(&got);
}

static void test_socket_output_is_refused(void **state)
{
    fixture *f = *state;
    two_reports(f);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at(f, "out.xlsx"));
    if (strlen(at(f, "out.xlsx")) >= sizeof sa.sun_path || bind(s, (struct sockaddr *)&sa, sizeof sa) != 0)
        skip();
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx");
    expect_error(&r, 1, "out.xlsx: is a socket, not a file; refusing to write it");
    run_free(&r);
    struct stat st;
    assert_int_equal(lstat(at(f, "out.xlsx"), &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    close(s);
}

/* A link: the file it points to is written, the link stays; a dangling link's target is made. */
static void test_symlink_output_writes_its_target(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "real/target.xlsx", OLD_WORKBOOK);
    assert_int_equal(symlink("real/target.xlsx", at(f, "out.xlsx")), 0);
    assert_int_equal(symlink("real/new.md", at(f, "summary.md")), 0);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--summary-md", "summary.md", "-q");
    expect_ok(&r);
    run_free(&r);
    struct stat st;
    assert_int_equal(lstat(at(f, "out.xlsx"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(at(f, "summary.md"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(is_workbook(f, "real/target.xlsx"));
    char *md = read_rel(f, "real/new.md");
    assert_non_null(md);
    assert_non_null(strstr(md, "## a -> b\n"));
    free(md);
    assert_no_temp_files(f->dir);
    assert_no_temp_files(at(f, "real"));
}

/* ==== 2. a failed run changes nothing ================================================ */

/* The CSV directory holds a directory where a result's CSV goes: found before the
 * workbook and the summary are moved into place. */
static void test_failed_csv_commit_leaves_every_output(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "out.xlsx", OLD_WORKBOOK);
    put(f, "summary.md", OLD_MD);
    put(f, "csvs/keep.csv", OLD_CSV);
    assert_int_equal(mkdir(at(f, "csvs/gpu_timeline.csv"), 0755), 0);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--summary-md", "summary.md", "--output_csvs_dir", "csvs");
    expect_error(&r, 1, "csvs/gpu_timeline.csv: is a directory, not a file; refusing to replace it");
    assert_string_equal(r.out, "");
    run_free(&r);
    assert_file_is(f, "out.xlsx", OLD_WORKBOOK);
    assert_file_is(f, "summary.md", OLD_MD);
    assert_file_is(f, "csvs/keep.csv", OLD_CSV);
    assert_no_temp_files(f->dir);
    assert_no_temp_files(at(f, "csvs"));
}

/* ==== 3. a CSV directory on another file system ====================================== */

static void test_csv_dir_is_a_mount_point(void **state)
{
    fixture *f = *state;
    two_reports(f);
    assert_int_equal(mkdir(at(f, "mnt"), 0755), 0);
    if (geteuid() != 0 || mount("tltest", at(f, "mnt"), "tmpfs", 0, "size=16m") != 0) {
        fprintf(stderr, "test_csv_dir_is_a_mount_point: needs root to mount a tmpfs; skipped\n");
        skip();
    }
    /* twice: into the fresh mount, then over the CSVs there */
    for (int i = 0; i < 2; i++) {
        run_result r = RUN(f, "a", "b", "-q", "-o", "out.xlsx", "--output_csvs_dir", "mnt");
        expect_ok(&r);
        run_free(&r);
        char *csv = read_rel(f, "mnt/gpu_timeline.csv");
        assert_non_null(csv);
        assert_non_null(strstr(csv, "busy,2,20.0,10,12\n"));
        free(csv);
        assert_no_temp_files(at(f, "mnt"));
    }
    assert_int_equal(umount(at(f, "mnt")), 0);
}

/* ==== 4. two outputs at one path ===================================================== */

static void test_two_outputs_at_one_path(void **state)
{
    fixture *f = *state;
    two_reports(f);
    run_result r = RUN(f, "a", "b", "-o", "same", "--summary-md", "same");
    expect_error(&r, 2, "-o and --summary-md both name 'same'; give each output its own path "
                        "(see 'tlcompare --help')");
    run_free(&r);
    r = RUN(f, "a", "b", "-o", "out.xlsx", "--summary-md", "s.txt", "--summary-json", "./s.txt");
    expect_error(&r, 2, "--summary-md and --summary-json both name './s.txt'; give each output its own path "
                        "(see 'tlcompare --help')");
    run_free(&r);
    r = RUN(f, "a", "b", "-o", "x", "--output_csvs_dir", "a/../x/");
    expect_error(&r, 2, "-o and --output_csvs_dir both name 'a/../x/'; give each output its own path "
                        "(see 'tlcompare --help')");
    run_free(&r);
    /* an existing file under two names */
    put(f, "old.md", OLD_MD);
    assert_int_equal(symlink("old.md", at(f, "link.md")), 0);
    r = RUN(f, "a", "b", "--summary-md", "old.md", "--summary-json", "link.md");
    expect_error(&r, 2, "--summary-md and --summary-json both name 'link.md'; give each output its own path "
                        "(see 'tlcompare --help')");
    run_free(&r);
    assert_file_is(f, "old.md", OLD_MD);
    DIR *d = opendir(f->dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "a") && strcmp(e->d_name, "b") && strcmp(e->d_name, "old.md") &&
            strcmp(e->d_name, "link.md"))
            fail_msg("a refused run wrote %s", e->d_name);
    closedir(d);
}

/* ==== 8. invalid UTF-8 in the summary ================================================ */

/* 1 when s[0..n) is valid UTF-8 (written here independently of the code under test). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (k == 0 || i + k > n)
            return 0;
        unsigned cp = k == 1 ? c : k == 2 ? c & 0x1F : k == 3 ? c & 0x0F : c & 0x07;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k;
    }
    return 1;
}

static void test_summary_invalid_utf8_is_replaced(void **state)
{
    fixture *f = *state;
    two_reports(f);
    /* a lone continuation byte, a truncated sequence, an overlong '/' and a surrogate */
    static const char ops_a[] = "name,total_direct_kernel_time_ms,Count\n"
                                "bad\x80op,5,1\nbad\xE2\x82op,3,1\nover\xC0\xAFlong,2,1\nsur\xED\xA0\x80r,1,1\n";
    static const char ops_b[] = "name,total_direct_kernel_time_ms,Count\n"
                                "bad\x80op,9,1\nbad\xE2\x82op,1,1\nover\xC0\xAFlong,4,1\nsur\xED\xA0\x80r,2,1\n";
    put(f, "a/ops_summary.csv", ops_a);
    put(f, "b/ops_summary.csv", ops_b);
    run_result r = RUN(f, "a", "b", "--summary-md", "s.md", "--summary-json", "s.json");
    expect_ok(&r);
    size_t n;
    for (int i = 0; i < 3; i++) {
        char *text = i == 2 ? r.out : slurp(at(f, i ? "s.json" : "s.md"), &n);
        if (i == 2)
            n = strlen(text);
        assert_non_null(text);
        if (!valid_utf8((const unsigned char *)text, n))
            fail_msg("%s is not valid UTF-8", i == 2 ? "stdout" : i ? "s.json" : "s.md");
        assert_non_null(strstr(text, "bad\xEF\xBF\xBDop"));
        if (i != 2)
            free(text);
    }
    run_free(&r);
}

/* ==== 9. FIFOs among the reports ===================================================== */

static void test_fifo_in_a_report_directory(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "a/ops_summary.csv", "name,total_direct_kernel_time_ms,Count\nx,1,1\n");
    assert_int_equal(mkfifo(at(f, "b/ops_summary.csv"), 0644), 0);
    run_result r = RUN(f, "a", "b", "--sheets", "ops_summary");
    expect_error(&r, 1, "b/ops_summary.csv: not a regular file");
    run_free(&r);
}

static void test_fifo_as_a_report(void **state)
{
    fixture *f = *state;
    two_reports(f);
    assert_int_equal(mkfifo(at(f, "c.xlsx"), 0644), 0);
    run_result r = RUN(f, "a", "c.xlsx");
    expect_error(&r, 1, "c.xlsx: neither a workbook file nor a directory of CSVs");
    run_free(&r);
}

/* ==== 10. input text in messages ===================================================== */

/* A tag (here a directory name) with a line break: each warning stays one line. */
static void test_warning_escapes_control_characters(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "a/ops_summary.csv", "name,total_direct_kernel_time_ms,Count\nx,1,1\n");
    put(f, "two\nlines/gpu_timeline.csv", GPU_B);
    run_result r = RUN(f, "a", "two\nlines", "-o", "out.xlsx");
    expect_ok(&r);
    assert_string_equal(r.err, "tlcompare: warning: report 'two\\nlines' (two\\nlines) has no sheet "
                               "'ops_summary'; skipping ops_summary\n");
    run_free(&r);
}

/* A 20 KB tag in a warning: cut, with its length said. */
static void test_warning_cuts_long_input(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "a/ops_summary.csv", "name,total_direct_kernel_time_ms,Count\nx,1,1\n");
    put(f, "b/gpu_timeline.csv", GPU_B);
    char *tag = malloc(20001);
    memset(tag, 'x', 20000);
    tag[20000] = '\0';
    run_result r = RUN(f, "a", "b", "--names", "a", tag, "-o", "out.xlsx");
    expect_ok(&r);
    char want[512];
    snprintf(want, sizeof want, "tlcompare: warning: report '%.100s...(20000 bytes)' (b) has no sheet "
                                "'ops_summary'; skipping ops_summary\n", tag);
    assert_string_equal(r.err, want);
    run_free(&r);
    free(tag);
}

/* The same in the error slot. */
static void test_error_cuts_long_input(void **state)
{
    (void)state;
    char name[5001];
    memset(name, 'n', 5000);
    name[5000] = '\0';
    tl_error e = {0};
    tl_error_set(&e, "sheet 'x': column '%s' in\n'%s'", name, "two\nlines");
    char want[512];
    snprintf(want, sizeof want, "sheet 'x': column '%.100s...(5000 bytes)' in\\n'two\\nlines'", name);
    assert_string_equal(e.msg, want);
}

static void test_message_clean(void **state)
{
    (void)state;
    tl_buf b = {0};
    const char *m = "sheet 'a\tb': it's 'x\x01y', line\n2";
    tl_message_clean(&b, m, strlen(m));
    assert_string_equal(tl_buf_cstr(&b), "sheet 'a\\tb': it's 'x\\x01y', line\\n2");
    tl_buf_clear(&b);
    /* cut at a character boundary: 99 'x' then a 2-byte character straddling byte 100 */
    char q[300];
    memset(q, 'x', 99);
    strcpy(q + 99, "\xC3\xA9 and more text that goes past the limit of a hundred bytes, much more than that");
    char *msg = malloc(400);
    snprintf(msg, 400, "column '%s' missing", q);
    tl_message_clean(&b, msg, strlen(msg));
    char want[400];
    snprintf(want, sizeof want, "column '%.99s...(%zu bytes)' missing", q, strlen(q));
    assert_string_equal(tl_buf_cstr(&b), want);
    free(msg);
    /* whatever fools the quote rules is bounded anyway */
    tl_buf_clear(&b);
    char *big = malloc(100000);
    memset(big, 'z', 99999);
    big[0] = '\'';
    big[1] = '\'';
    big[2] = ' ';
    big[99999] = '\0';
    tl_message_clean(&b, big, strlen(big));
    assert_true(b.len <= TL_MESSAGE_MAX + 3);
    free(big);
    tl_buf_free(&b);
}

static void test_utf8_sanitize(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_buf_adds(&b, "ok \xC3\xA9 \xF0\x9F\x98\x80 \x80 \xE2\x82 \xC0\xAF \xED\xA0\x80 \xF4\x90\x80\x80 end");
    tl_utf8_sanitize(&b);
    assert_string_equal(tl_buf_cstr(&b), "ok \xC3\xA9 \xF0\x9F\x98\x80 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD "
                                         "\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD "
                                         "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end");
    tl_buf_free(&b);
}

/* ==== 11. long output names ========================================================== */

static void test_long_output_names(void **state)
{
    fixture *f = *state;
    two_reports(f);
    char wb[256], dir[256];
    memset(wb, 'w', 240);
    strcpy(wb + 240, ".xlsx"); /* 245 bytes: legal; its temporary name must fit too */
    memset(dir, 'd', 255);
    dir[255] = '\0';
    run_result r = RUN(f, "a", "b", "-q", "-o", wb, "--output_csvs_dir", dir);
    expect_ok(&r);
    run_free(&r);
    assert_true(is_workbook(f, wb));
    char rel[600];
    snprintf(rel, sizeof rel, "%s/gpu_timeline.csv", dir);
    char *csv = read_rel(f, rel);
    assert_non_null(csv);
    free(csv);
    assert_no_temp_files(f->dir);
}

/* ==== 13. concurrent runs ============================================================ */

static void test_concurrent_runs_make_one_csv_dir(void **state)
{
    fixture *f = *state;
    /* big enough that each run's open-to-commit window is long: the runs overlap */
    tl_buf a = {0}, b = {0};
    tl_buf_adds(&a, "type,time ms\n");
    tl_buf_adds(&b, "type,time ms\n");
    for (int i = 0; i < 20000; i++) {
        tl_buf_printf(&a, "t%d,%d\n", i, i);
        tl_buf_printf(&b, "t%d,%d\n", i, i + 1);
    }
    put(f, "a/gpu_timeline.csv", a.data);
    put(f, "b/gpu_timeline.csv", b.data);
    tl_buf_free(&a);
    tl_buf_free(&b);
    for (int round = 0; round < 40; round++) {
        pid_t p1 = start(f, "one", ARGS("a", "b", "-q", "-o", "out1.xlsx", "--output_csvs_dir", "csvs"));
        pid_t p2 = start(f, "two", ARGS("a", "b", "-q", "-o", "out2.xlsx", "--output_csvs_dir", "csvs"));
        run_result r1 = wait_for(f, "one", p1, -1, NULL), r2 = wait_for(f, "two", p2, -1, NULL);
        if (r1.status != 0 || r2.status != 0)
            fail_msg("round %d: exit %d / %d: %s%s", round, r1.status, r2.status, r1.err, r2.err);
        run_free(&r1);
        run_free(&r2);
        char *csv = read_rel(f, "csvs/gpu_timeline.csv");
        assert_non_null(csv);
        free(csv);
        assert_no_temp_files(f->dir);
        assert_no_temp_files(at(f, "csvs"));
        tt_rmrf(at(f, "csvs"));
    }
}

/* ==== also: modes kept, tags checked ================================================= */

static void test_existing_outputs_keep_their_mode(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "out.xlsx", OLD_WORKBOOK);
    put(f, "csvs/gpu_timeline.csv", OLD_CSV);
    put(f, "s.md", OLD_MD);
    assert_int_equal(chmod(at(f, "out.xlsx"), 0600), 0);
    assert_int_equal(chmod(at(f, "csvs/gpu_timeline.csv"), 0640), 0);
    assert_int_equal(chmod(at(f, "s.md"), 0604), 0);
    run_result r = RUN(f, "a", "b", "-q", "-o", "out.xlsx", "--output_csvs_dir", "csvs", "--summary-md", "s.md");
    expect_ok(&r);
    run_free(&r);
    assert_true(is_workbook(f, "out.xlsx"));
    struct stat st;
    assert_int_equal(stat(at(f, "out.xlsx"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(stat(at(f, "csvs/gpu_timeline.csv"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(stat(at(f, "s.md"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0604);
}

static void test_tags_with_control_characters(void **state)
{
    fixture *f = *state;
    two_reports(f);
    run_result r = RUN(f, "a", "b", "--names", "a", "b\tc");
    expect_error(&r, 2, "--names: tag 2 holds a control character (0x09); tags name sheets and files "
                        "(see 'tlcompare --help')");
    run_free(&r);
    r = RUN(f, "a", "b", "--names", "x\ny", "b");
    expect_error(&r, 2, "--names: tag 1 holds a control character (0x0A); tags name sheets and files "
                        "(see 'tlcompare --help')");
    run_free(&r);
    assert_false(access(at(f, "comparison.xlsx"), F_OK) == 0);
}

/* ============================================================================================ */

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    if (!tlcompare || access(tlcompare, X_OK) != 0) {
        fprintf(stderr, "test_output: set TLCOMPARE to the tlcompare binary (make unit-test does)\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_fifo_output_is_written_through),
        T(test_fifo_output_without_reader),
        T(test_character_device_output_is_not_replaced),
        T(test_stdout_pipe_output),
        T(test_socket_output_is_refused),
        T(test_symlink_output_writes_its_target),
        T(test_failed_csv_commit_leaves_every_output),
        T(test_csv_dir_is_a_mount_point),
        T(test_two_outputs_at_one_path),
        T(test_summary_invalid_utf8_is_replaced),
        T(test_fifo_in_a_report_directory),
        T(test_fifo_as_a_report),
        T(test_warning_escapes_control_characters),
        T(test_warning_cuts_long_input),
        cmocka_unit_test(test_error_cuts_long_input),
        cmocka_unit_test(test_message_clean),
        cmocka_unit_test(test_utf8_sanitize),
        T(test_long_output_names),
        T(test_concurrent_runs_make_one_csv_dir),
        T(test_existing_outputs_keep_their_mode),
        T(test_tags_with_control_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
