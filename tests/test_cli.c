/*
 * test_cli.c - the tlcompare binary on bad input (it never crashes, never hangs, never
 * loses output), and the command line's good paths.
 *
 * Every test runs the real binary ($TLCOMPARE, set by `make unit-test`; the ASan build
 * under `make sanitize-test`) in a fresh temporary directory holding reports the test
 * writes itself: CSV directories, and workbooks zipped here with libzip from
 * hand-written XML.  A failure must
 *   - exit with 2 (usage) or 1 (anything else),
 *   - say so in exactly one line on stderr, naming the file / sheet / line / cell,
 *   - print nothing on stdout (no "Wrote sheet" for a result never written),
 *   - write nothing: no workbook, no CSV directory, no temporary file left behind;
 *     and when both outputs existed already, leave them byte for byte as they were.
 * expect_failure() runs each case twice to check both: once into an empty directory,
 * once over existing outputs.
 *
 * (~1,500 lines: one file, because every case shares those fixtures and expect_failure.)
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include <zip.h>

#include "base/util.h"
#include "read/csv_read.h"

/* No run of tlcompare in these tests should take anywhere near this long. */
#define RUN_TIMEOUT_MS 60000

static const char *tlcompare;

/* ---- running the binary ---------------------------------------------------------- */

typedef struct run_result {
    int status; /* exit status; 128 + n when killed by signal n */
    char *out, *err;
    size_t nout, nerr;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct child {
    pid_t pid;
    int out, err; /* read ends of its stdout and stderr */
} child;

/* Start tlcompare with args[] (NULL-terminated) in directory `dir`; `env` holds extra
 * "NAME=value" settings (NULL-terminated, or NULL). */
static child spawn(const char *dir, const char *const *args, const char *const *env)
{
    int po[2], pe[2];
    assert_int_equal(pipe(po), 0);
    assert_int_equal(pipe(pe), 0);
    size_t n = 0;
    while (args[n])
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = tlcompare;
    memcpy(argv + 1, args, n * sizeof *argv);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        if (chdir(dir) != 0)
            _exit(126);
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        execv(tlcompare, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    close(po[1]);
    close(pe[1]);
    return (child){pid, po[0], pe[0]};
}

/* Read everything the child writes until it exits; kill it (and fail) past the timeout:
 * a hang is a bug like any other. */
static run_result finish(child c)
{
    run_result r = {0};
    size_t cap_out = 0, cap_err = 0;
    int open_fds = 2;
    double deadline = now_ms() + RUN_TIMEOUT_MS;
    struct pollfd fds[2] = {{c.out, POLLIN, 0}, {c.err, POLLIN, 0}};

    while (open_fds > 0) {
        int left = (int)(deadline - now_ms());
        if (left <= 0) {
            kill(c.pid, SIGKILL);
            waitpid(c.pid, NULL, 0);
            fail_msg("tlcompare did not finish within %d ms", RUN_TIMEOUT_MS);
        }
        if (poll(fds, 2, left) < 0 && errno != EINTR)
            fail_msg("poll: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char **buf = i ? &r.err : &r.out;
            size_t *len = i ? &r.nerr : &r.nout, *cap = i ? &cap_err : &cap_out;
            if (*cap - *len < 65536 + 1) {
                *cap = *cap * 2 + 65536 + 1;
                *buf = realloc(*buf, *cap);
            }
            ssize_t got = read(fds[i].fd, *buf + *len, *cap - *len - 1);
            if (got > 0) {
                *len += (size_t)got;
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int ws;
    assert_int_equal(waitpid(c.pid, &ws, 0), c.pid);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    if (!r.out)
        r.out = calloc(1, 1);
    if (!r.err)
        r.err = calloc(1, 1);
    r.out[r.nout] = '\0';
    r.err[r.nerr] = '\0';
    return r;
}

static run_result run_env(const char *dir, const char *const *env, const char *const *args)
{
    return finish(spawn(dir, args, env));
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define RUN(f, ...) run_env((f)->dir, NULL, ARGS(__VA_ARGS__))

/* ---- fixtures --------------------------------------------------------------------- */

typedef struct fixture {
    char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    /* a test may have made a directory unwritable */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    tt_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* "<fixture dir>/<rel>" in a static buffer (one of a few, so two can be used at once). */
static const char *at(const fixture *f, const char *rel)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", f->dir, rel);
    return b;
}

/* Create the directories leading to `path`. */
static void mkdirs_for(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", tmp, strerror(errno));
            *p = '/';
        }
    }
}

static void putn(const fixture *f, const char *rel, const void *data, size_t n)
{
    const char *p = at(f, rel);
    mkdirs_for(p);
    tt_write_file(p, data, n);
}

static void put(const fixture *f, const char *rel, const char *text) { putn(f, rel, text, strlen(text)); }

static char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(fp);
    buf[len] = '\0';
    if (n)
        *n = len;
    return buf;
}

static char *read_rel(const fixture *f, const char *rel, size_t *n) { return slurp(at(f, rel), n); }

static int exists(const fixture *f, const char *rel)
{
    struct stat st;
    return lstat(at(f, rel), &st) == 0;
}

/* printf into a new malloc'd string. */
static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    assert_true(n >= 0);
    char *s = malloc((size_t)n + 1);
    va_start(ap, format);
    vsnprintf(s, (size_t)n + 1, format, ap);
    va_end(ap);
    return s;
}

/* ---- reports ---------------------------------------------------------------------- */

/* The baseline used throughout: a two-row gpu_timeline. */
static const char GPU_A[] = "type,time ms\nbusy,10\nidle,5\n";
static const char GPU_B[] = "type,time ms\nbusy,12\nidle,4\n";
/* What comparing GPU_A with a variant tagged b holding GPU_B gives. */
static const char GPU_AB_CSV[] = "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms\n"
                                 "busy,2,20.0,10,12\n"
                                 "idle,-1,-20.0,5,4\n";

static void two_reports(const fixture *f)
{
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", GPU_B);
}

/* ---- workbooks -------------------------------------------------------------------- */

#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
#define NS_MAIN "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define NS_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define NS_PKG "http://schemas.openxmlformats.org/package/2006/relationships"

typedef struct part {
    const char *name;
    const char *data; /* NULL: leave the part out */
    size_t len;       /* 0: strlen(data) */
} part;

static const char ROOT_RELS[] =
    XML_DECL "<Relationships xmlns=\"" NS_PKG "\"><Relationship Id=\"rId1\" Type=\"" NS_REL
             "/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>";

static const char WB_RELS[] =
    XML_DECL "<Relationships xmlns=\"" NS_PKG "\">"
             "<Relationship Id=\"rId1\" Type=\"" NS_REL "/worksheet\" Target=\"worksheets/sheet1.xml\"/>"
             "<Relationship Id=\"rId2\" Type=\"" NS_REL "/worksheet\" Target=\"worksheets/sheet2.xml\"/>"
             "<Relationship Id=\"rId9\" Type=\"" NS_REL "/sharedStrings\" Target=\"sharedStrings.xml\"/>"
             "</Relationships>";

/* workbook.xml listing sheets named n1 (and n2) as sheet1.xml (and sheet2.xml). */
static char *workbook_xml(const char *n1, const char *n2)
{
    return fmt(XML_DECL "<workbook xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\"><sheets>"
                        "<sheet name=\"%s\" sheetId=\"1\" r:id=\"rId1\"/>%s%s%s</sheets></workbook>",
               n1, n2 ? "<sheet name=\"" : "", n2 ? n2 : "",
               n2 ? "\" sheetId=\"2\" r:id=\"rId2\"/>" : "");
}

static char *sheet_xml(const char *rows)
{
    return fmt(XML_DECL "<worksheet xmlns=\"" NS_MAIN "\"><sheetData>%s</sheetData></worksheet>", rows);
}

/* The rows of GPU_B as worksheet XML: inline strings and numbers. */
#define GPU_B_ROWS                                                                                  \
    "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>type</t></is></c>"                         \
    "<c r=\"B1\" t=\"inlineStr\"><is><t>time ms</t></is></c></row>"                              \
    "<row r=\"2\"><c r=\"A2\" t=\"inlineStr\"><is><t>busy</t></is></c><c r=\"B2\"><v>12</v></c></row>" \
    "<row r=\"3\"><c r=\"A3\" t=\"inlineStr\"><is><t>idle</t></is></c><c r=\"B3\"><v>4</v></c></row>"

static void write_zip(const char *path, const part *parts, size_t n)
{
    int code = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    assert_non_null(z);
    for (size_t i = 0; i < n; i++) {
        if (!parts[i].data)
            continue;
        size_t len = parts[i].len ? parts[i].len : strlen(parts[i].data);
        zip_source_t *src = zip_source_buffer(z, parts[i].data, len, 0);
        assert_non_null(src);
        assert_true(zip_file_add(z, parts[i].name, src, ZIP_FL_ENC_UTF_8) >= 0);
    }
    assert_int_equal(zip_close(z), 0);
}

/* A workbook at `rel` with one sheet `name` holding `rows`, and shared strings `sst`
 * (NULL for none); `omit` names a part to leave out (NULL for none). */
static void workbook(const fixture *f, const char *rel, const char *name, const char *rows,
                     const char *sst, const char *omit)
{
    char *wb = workbook_xml(name, NULL), *sh = sheet_xml(rows);
    char *ss = sst ? fmt(XML_DECL "<sst xmlns=\"" NS_MAIN "\">%s</sst>", sst) : NULL;
    part parts[] = {
        {"_rels/.rels", ROOT_RELS, 0},       {"xl/workbook.xml", wb, 0},
        {"xl/_rels/workbook.xml.rels", WB_RELS, 0}, {"xl/worksheets/sheet1.xml", sh, 0},
        {"xl/sharedStrings.xml", ss, 0},
    };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (omit && strcmp(parts[i].name, omit) == 0)
            parts[i].data = NULL;
    mkdirs_for(at(f, rel));
    write_zip(at(f, rel), parts, sizeof parts / sizeof *parts);
    free(wb);
    free(sh);
    free(ss);
}

/* Set the uncompressed size that the zip at `path` declares for entry `name` (in its
 * local header and its central directory record) to `size`. */
static void patch_declared_size(const char *path, const char *name, uint32_t size)
{
    size_t n, nlen = strlen(name);
    char *z = slurp(path, &n);
    int patched = 0;
    assert_non_null(z);
    for (size_t i = 0; i + 46 + nlen <= n; i++) {
        unsigned char *p = (unsigned char *)z + i;
        /* offsets of the uncompressed size, the name length and the name (APPNOTE 4.3) */
        size_t size_at, nlen_at, name_at;
        if (memcmp(p, "PK\x03\x04", 4) == 0)
            size_at = 22, nlen_at = 26, name_at = 30; /* local file header */
        else if (memcmp(p, "PK\x01\x02", 4) == 0)
            size_at = 24, nlen_at = 28, name_at = 46; /* central directory header */
        else
            continue;
        if ((size_t)(p[nlen_at] | p[nlen_at + 1] << 8) != nlen || memcmp(p + name_at, name, nlen) != 0)
            continue;
        for (int k = 0; k < 4; k++)
            p[size_at + (size_t)k] = (unsigned char)(size >> (8 * k));
        patched++;
    }
    assert_int_equal(patched, 2);
    tt_write_file(path, z, n);
    free(z);
}

/* ---- checking that nothing was written --------------------------------------------- */

/* The names in `dir` that look like our temporary outputs (".<name>.tmp-XXXXXX"). */
static void assert_no_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-"))
            fail_msg("temporary output left behind: %s/%s", dir, e->d_name);
    closedir(d);
}

/* The outputs expect_failure() asks for, and what stands there before the second run. */
static const char OLD_WORKBOOK[] = "the workbook of an earlier run\n";
static const char OLD_CSV[] = "type,time ms__b_diff\nearlier,1\n";
static const char KEEP_CSV[] = "the user's own file\n";

static void put_old_outputs(const fixture *f)
{
    put(f, "out.xlsx", OLD_WORKBOOK);
    put(f, "csvs/gpu_timeline.csv", OLD_CSV);
    put(f, "csvs/keep.csv", KEEP_CSV);
}

static void assert_file_is(const fixture *f, const char *rel, const char *text)
{
    size_t n;
    char *got = read_rel(f, rel, &n);
    if (!got)
        fail_msg("%s is missing", rel);
    if (n != strlen(text) || memcmp(got, text, n) != 0)
        fail_msg("%s changed: now '%.200s'", rel, got);
    free(got);
}

static void assert_old_outputs_intact(const fixture *f)
{
    assert_file_is(f, "out.xlsx", OLD_WORKBOOK);
    assert_file_is(f, "csvs/gpu_timeline.csv", OLD_CSV);
    assert_file_is(f, "csvs/keep.csv", KEEP_CSV);
    /* and nothing new in the directory */
    DIR *d = opendir(at(f, "csvs"));
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 2);
}

/* A failed run: its exit status, exactly one line on stderr, nothing on stdout. */
static void assert_failed(const run_result *r, int status, const char *message)
{
    char *want = fmt("tlcompare: %s\n", message);
    if (r->status != status || strcmp(r->err, want) != 0)
        fail_msg("expected exit %d and stderr\n  %s  got exit %d and stderr\n  %s", status, want,
                 r->status, r->err);
    if (r->nout != 0)
        fail_msg("stdout after an error: '%.300s'", r->out);
    free(want);
}

/*
 * Run tlcompare with `args` (plus "-o out.xlsx --output_csvs_dir csvs" when `outputs`)
 * twice, each time expecting exit `status` and the one stderr line "tlcompare: <message>":
 * first with no outputs present (none may appear), then over existing ones (they must
 * stay as they were).  Either way no temporary file may remain.
 */
static void expect_failure_env(const fixture *f, const char *const *env, int status,
                               const char *message, const char *const *args, int outputs)
{
    size_t n = 0;
    while (args[n])
        n++;
    const char **all = calloc(n + 5, sizeof *all);
    memcpy(all, args, n * sizeof *all);
    if (outputs) {
        all[n++] = "-o";
        all[n++] = "out.xlsx";
        all[n++] = "--output_csvs_dir";
        all[n++] = "csvs";
    }

    assert_false(exists(f, "out.xlsx"));
    assert_false(exists(f, "csvs"));
    run_result r = run_env(f->dir, env, all);
    assert_failed(&r, status, message);
    run_free(&r);
    assert_false(exists(f, "out.xlsx"));
    assert_false(exists(f, "csvs"));
    assert_no_temp_files(f->dir);

    put_old_outputs(f);
    r = run_env(f->dir, env, all);
    assert_failed(&r, status, message);
    run_free(&r);
    assert_old_outputs_intact(f);
    assert_no_temp_files(f->dir);
    assert_no_temp_files(at(f, "csvs"));
    free(all);
    /* ready for the next case of the same test */
    unlink(at(f, "out.xlsx"));
    unlink(at(f, "csvs/gpu_timeline.csv"));
    unlink(at(f, "csvs/keep.csv"));
    assert_int_equal(rmdir(at(f, "csvs")), 0);
}

#define EXPECT_FAILURE(f, status, message, ...)                                                     \
    expect_failure_env((f), NULL, (status), (message), ARGS(__VA_ARGS__), 1)

/* A successful run writing out.xlsx and csvs/: exit 0, and the CSV of result `sheet`. */
static char *run_ok(const fixture *f, const char *const *args, const char *sheet, run_result *keep)
{
    size_t n = 0;
    while (args[n])
        n++;
    const char **all = calloc(n + 5, sizeof *all);
    memcpy(all, args, n * sizeof *all);
    all[n++] = "-o";
    all[n++] = "out.xlsx";
    all[n++] = "--output_csvs_dir";
    all[n++] = "csvs";
    run_result r = run_env(f->dir, NULL, all);
    free(all);
    if (r.status != 0)
        fail_msg("tlcompare failed (exit %d): %s", r.status, r.err);
    assert_true(exists(f, "out.xlsx"));
    assert_no_temp_files(f->dir);
    char *rel = fmt("csvs/%s.csv", sheet);
    char *csv = read_rel(f, rel, NULL);
    if (!csv)
        fail_msg("%s was not written; stderr: %s", rel, r.err);
    free(rel);
    if (keep)
        *keep = r;
    else
        run_free(&r);
    return csv;
}

#define RUN_OK(f, sheet, ...) run_ok((f), ARGS(__VA_ARGS__), (sheet), NULL)

/* ==== usage errors: exit 2 ========================================================== */

static void test_usage_no_reports(void **state)
{
    fixture *f = *state;
    expect_failure_env(f, NULL, 2, "need at least two reports, got none (see 'tlcompare --help')",
                       ARGS("-o", "out.xlsx", "--output_csvs_dir", "csvs"), 0);
}

static void test_usage_one_report(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 2, "need at least two reports, got one (see 'tlcompare --help')", "a");
}

static void test_usage_unknown_option(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 2, "unknown option '--bogus' (see 'tlcompare --help')", "a", "b", "--bogus");
}

/* The options of traces, given reports: refused by name, never dropped. */
static void test_usage_trace_options_with_reports(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 2,
                   "--steps chooses the steps of two traces compared with each other; these inputs are not two "
                   "traces (see 'tlcompare --help')",
                   "a", "b", "--steps", "2:");
    EXPECT_FAILURE(f, 2,
                   "--inference reads traces as TraceLens' inference generator does; none of the inputs is a trace "
                   "(see 'tlcompare --help')",
                   "a", "b", "--inference");
    EXPECT_FAILURE(f, 2,
                   "--group_by_num_kernels reads traces as TraceLens' inference generator does; none of the inputs "
                   "is a trace (see 'tlcompare --help')",
                   "a", "b", "--group_by_num_kernels");
}

/* Two traces with capture folders: the options of the call trees' comparison refused by
 * name; a missing input is said to be missing (exit 1), not taken for one of another kind. */
static void test_usage_trace_options_with_capture_folders(void **state)
{
    fixture *f = *state;
    put(f, "ta/exec.json", "{\"traceEvents\": []}");
    put(f, "ta/capture/keep", "");
    put(f, "tb/exec.json", "{\"traceEvents\": []}");
    put(f, "tb/capture/keep", "");
    EXPECT_FAILURE(f, 2, "--steps is not available for traces with capture folders (see 'tlcompare --help')",
                   "ta/exec.json@ta/capture", "tb/exec.json@tb/capture", "--steps", "2:");
    EXPECT_FAILURE(f, 2,
                   "--tracediff-dir is not available for traces with capture folders (see 'tlcompare --help')",
                   "ta/exec.json@ta/capture", "tb/exec.json@tb/capture", "--tracediff-dir", "td");
    EXPECT_FAILURE(f, 1, "missing.json: No such file or directory", "ta/exec.json", "missing.json", "--steps", "2:");
    EXPECT_FAILURE(f, 1, "missing.json: No such file or directory", "ta/exec.json", "missing.json",
                   "--tracediff-dir", "td");
    EXPECT_FAILURE(f, 1, "missing.json: No such file or directory", "missing.json", "missing2.json", "--inference");
}

static void test_usage_names_count_mismatch(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 2,
                   "--names gives 1 tag for 2 reports; give exactly one per report (see 'tlcompare --help')",
                   "a", "b", "--names", "base");
    EXPECT_FAILURE(f, 2,
                   "--names gives 3 tags for 2 reports; give exactly one per report (see 'tlcompare --help')",
                   "a", "b", "--names", "x", "y", "z");
}

static void test_usage_duplicate_tags(void **state)
{
    fixture *f = *state;
    put(f, "run1/h100/gpu_timeline.csv", GPU_A);
    /* the same report twice: the second is tagged h100_2 */
    run_result r = RUN(f, "run1/h100", "run1//h100/", "-o", "out.xlsx");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "warning: reports 1 and 2 are the same input, tagged 'h100'; report 2 is tagged "
                                  "'h100_2'"));
    run_free(&r);
    unlink(at(f, "out.xlsx"));
    two_reports(f);
    /* one --names tag on every report: runs of one side, nothing to compare them with */
    EXPECT_FAILURE(f, 2,
                   "every report has the tag 'same': the runs of one side leave nothing to compare; give "
                   "the other side's reports another tag",
                   "a", "b", "--names", "same", "same");
}

/* A --names tag on several reports makes them runs of one side: its columns hold the mean over
 * the runs, with <m>_std and runs beside them. */
static void test_repeated_tags_are_runs(void **state)
{
    fixture *f = *state;
    put(f, "a1/gpu_timeline.csv", "type,time ms\nbusy_time,10\ntotal_time,20\n");
    put(f, "a2/gpu_timeline.csv", "type,time ms\nbusy_time,12\ntotal_time,22\n");
    put(f, "b/gpu_timeline.csv", "type,time ms\nbusy_time,15\ntotal_time,25\n");
    run_result r;
    char *csv = run_ok(f, ARGS("a1", "a2", "b", "--names", "a", "a", "b"), "gpu_timeline", &r);
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,a::time ms_std,a::runs,b::time ms\n"
                             "busy_time,4.0,36.36363636363637,11.0,1.4142135623730951,2,15\n"
                             "total_time,4.0,19.047619047619047,21.0,1.4142135623730951,2,25\n");
    free(csv);
    run_free(&r);
}

static void test_usage_unknown_sheets_group(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 2,
                   "--sheets: unknown group 'kernels' (choose from gpu_timeline, ops_summary, "
                   "kernel_summary, ops_all, roofline, perf, all) (see 'tlcompare --help')",
                   "a", "b", "--sheets", "gpu_timeline", "kernels");
}

static void test_usage_output_is_an_input(void **state)
{
    fixture *f = *state;
    two_reports(f);
    workbook(f, "base.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, NULL);
    size_t n0, n1;
    char *before = read_rel(f, "base.xlsx", &n0);

    /* the workbook named as the output */
    expect_failure_env(f, NULL, 2, "the output 'base.xlsx' would overwrite the input report 'base.xlsx'; refusing",
                       ARGS("base.xlsx", "b", "-o", "base.xlsx"), 0);
    /* a <sheet>.csv of a CSV report, existing or new */
    /* -o is the workbook: a <sheet>.csv of a CSV report, existing or new, is never written */
    expect_failure_env(f, NULL, 2, "-o names the workbook (.xlsx), not a CSV file: for CSVs give --output_csvs_dir DIR "
                                   "(one <sheet>.csv per result; 'a/gpu_timeline.csv' is not written) (see 'tlcompare "
                                   "--help')", ARGS("a", "b", "-o", "a/gpu_timeline.csv"), 0);
    expect_failure_env(f, NULL, 2, "-o names the workbook (.xlsx), not a CSV file: for CSVs give --output_csvs_dir DIR "
                                   "(one <sheet>.csv per result; 'b/new.csv' is not written) (see 'tlcompare --help')",
                       ARGS("a", "b", "-o", "b/new.csv"), 0);
    /* a summary file inside a CSV report would be read as a sheet next time */
    expect_failure_env(f, NULL, 2, "the output 'b/s.csv' would overwrite the input report 'b'; refusing",
                       ARGS("a", "b", "-o", "out.xlsx", "--summary-md", "b/s.csv"), 0);
    /* the CSV directory is a report */
    expect_failure_env(f, NULL, 2, "the output 'b' would overwrite the input report 'b/'; refusing",
                       ARGS("a", "b/", "-o", "out.xlsx", "--output_csvs_dir", "b"), 0);

    char *after = read_rel(f, "base.xlsx", &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    assert_file_is(f, "a/gpu_timeline.csv", GPU_A);
    assert_file_is(f, "b/gpu_timeline.csv", GPU_B);
    assert_false(exists(f, "b/new.csv"));
    assert_false(exists(f, "out.xlsx"));
}

/* ==== the command line's good paths ==================================================== */

static void test_help(void **state)
{
    fixture *f = *state;
    run_result r = RUN(f, "--help");
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "usage: tlcompare REPORT REPORT", 30) == 0);
    assert_non_null(strstr(r.out, "--output_csvs_dir"));
    assert_non_null(strstr(r.out, "exit status"));
    assert_int_equal(r.nerr, 0);
    run_free(&r);
    r = RUN(f, "a", "b", "-h");
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "usage: ", 7) == 0);
    run_free(&r);
}

static void test_version(void **state)
{
    fixture *f = *state;
    run_result r = RUN(f, "--version");
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "tlcompare ", 10) == 0);
    assert_true(r.nout > 11);
    assert_ptr_equal(strchr(r.out, '\n'), r.out + r.nout - 1); /* one line */
    assert_int_equal(r.nerr, 0);
    run_free(&r);
}

static void test_default_tags_are_file_stems(void **state)
{
    fixture *f = *state;
    workbook(f, "runs/base.xlsx", "gpu_timeline",
             "<row><c t=\"inlineStr\"><is><t>type</t></is></c><c t=\"inlineStr\"><is><t>time ms</t></is></c></row>"
             "<row><c t=\"inlineStr\"><is><t>busy</t></is></c><c><v>10</v></c></row>"
             "<row><c t=\"inlineStr\"><is><t>idle</t></is></c><c><v>5</v></c></row>",
             NULL, NULL);
    put(f, "out/cand_csvs/gpu_timeline.csv", GPU_B);
    run_result r;
    char *csv = run_ok(f, ARGS("runs/base.xlsx", "out/cand_csvs/", "-v"), "gpu_timeline", &r);
    assert_string_equal(csv, "type,time ms__cand_csvs_diff,time ms__cand_csvs_pct,base::time ms,"
                             "cand_csvs::time ms\n"
                             "busy,2,20.0,10,12\n"
                             "idle,-1,-20.0,5,4\n");
    assert_non_null(strstr(r.out, "Wrote sheet 'gpu_timeline' with 2 rows \xC3\x97 5 columns\n"));
    free(csv);
    run_free(&r);
}

static void test_sheets_all_takes_what_the_baseline_has(void **state)
{
    fixture *f = *state;
    two_reports(f); /* gpu_timeline only: no ops_summary, kernel_summary, ops_all, roofline */
    run_result r;
    char *csv = run_ok(f, ARGS("a", "b", "--sheets", "all", "-v"), "gpu_timeline", &r);
    assert_string_equal(csv, GPU_AB_CSV);
    assert_non_null(strstr(r.out, "Wrote sheet 'gpu_timeline' with 2 rows \xC3\x97 5 columns\n"));
    assert_null(strstr(r.out, "Wrote sheet 'ops_summary'"));
    assert_false(exists(f, "csvs/ops_summary.csv"));
    assert_false(exists(f, "csvs/kernel_summary.csv"));
    free(csv);
    run_free(&r);
}

static void test_named_group_missing_in_baseline(void **state)
{
    fixture *f = *state;
    two_reports(f);
    EXPECT_FAILURE(f, 1, "ops_summary sheet not found in a", "a", "b", "--sheets", "ops_summary");
}

/* ==== CSV reports ===================================================================== */

static void test_csv_unterminated_quote(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms\nbusy,12\n\"idle,4\nwait,3\n");
    EXPECT_FAILURE(f, 1, "b/gpu_timeline.csv line 3: a quoted field is never closed (missing '\"')",
                   "a", "b");
}

static void test_csv_too_many_fields(void **state)
{
    fixture *f = *state;
    /* line 17 of a 6-column ops_summary has 7 fields: pandas' C reader rejects it too */
    char *text = fmt("name,total_direct_kernel_time_ms,Count,total_direct_kernel_time_sum,"
                     "Cumulative Percentage (%%),note\n");
    for (int i = 2; i < 17; i++) {
        char *t = fmt("%sop%d,%d,1,%d,50,x\n", text, i, i, i);
        free(text);
        text = t;
    }
    char *bad = fmt("%sop17,1,1,1,50,x,surplus\nop18,1,1,1,50,x\n", text);
    two_reports(f);
    put(f, "a/ops_summary.csv", text);
    put(f, "b/ops_summary.csv", bad);
    EXPECT_FAILURE(f, 1, "b/ops_summary.csv line 17: 7 fields, the header has 6", "a", "b");
    free(text);
    free(bad);
}

static void test_csv_too_many_fields_counts_physical_lines(void **state)
{
    fixture *f = *state;
    /* a quoted line break makes record 2 span lines 2-3: the error is on line 4 */
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms\r\n\"bu\r\nsy\",12\r\nidle,4,5,6\r\n");
    EXPECT_FAILURE(f, 1, "b/gpu_timeline.csv line 4: 4 fields, the header has 2", "a", "b");
}

static void test_csv_fewer_fields_are_missing_cells(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms,note\nbusy,12\nidle,4,x\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms,b::note\n"
                             "busy,2,20.0,10,12,\n"
                             "idle,-1,-20.0,5,4,x\n");
    free(csv);
}

static void test_csv_crlf_line_ends(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms\r\nbusy,12\r\nidle,4\r\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, GPU_AB_CSV);
    free(csv);
}

static void test_csv_cr_line_ends(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms\rbusy,12\ridle,4");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, GPU_AB_CSV);
    free(csv);
}

static void test_csv_utf8_bom(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    /* without skipping the BOM the key column would be "\uFEFFtype", not "type" */
    put(f, "b/gpu_timeline.csv", "\xEF\xBB\xBFtype,time ms\nbusy,12\nidle,4\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, GPU_AB_CSV);
    free(csv);
}

static void test_csv_invalid_utf8_is_carried_through(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms,note\nbusy,12,\xC3\x28\nid\xFFle,4,\xED\xA0\x80\xC0\xAF\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    /* "idle" < "id\xFFle": strings compare by bytes, so the invalid one sorts last */
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms,b::note\n"
                             "busy,2.0,20.0,10.0,12.0,\xC3\x28\n"
                             "idle,,,5.0,,\n"
                             "id\xFFle,,,,4.0,\xED\xA0\x80\xC0\xAF\n");
    free(csv);
}

static void test_csv_nul_byte(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    putn(f, "b/gpu_timeline.csv", "type,time ms\nbusy,12\nid\0le,4\n", 27);
    EXPECT_FAILURE(f, 1, "b/gpu_timeline.csv line 3: NUL byte inside a field", "a", "b");
    putn(f, "b/gpu_timeline.csv", "type,time ms\n\"bu\0sy\",12\n", 24);
    EXPECT_FAILURE(f, 1, "b/gpu_timeline.csv line 2: NUL byte inside a field", "a", "b");
}

static void test_csv_empty_file(void **state)
{
    fixture *f = *state;
    /* An empty sheet is an empty table: the group has no 'time ms' to compare and is
     * skipped with a warning; with nothing else to compare, the run fails (an empty
     * comparison is no answer) and writes nothing. */
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "");
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--output_csvs_dir", "csvs");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "tlcompare: warning: sheet 'gpu_timeline' of report 'b' has no column "
                               "'time ms'; skipping gpu_timeline\n"
                               "tlcompare: nothing to compare: no sheet of the groups asked for is in every "
                               "report (see the warnings above)\n");
    assert_int_equal(r.nout, 0);
    assert_false(exists(f, "csvs"));
    assert_false(exists(f, "out.xlsx"));
    assert_no_temp_files(f->dir);
    run_free(&r);
}

static void test_csv_header_only(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", "type,time ms\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms\n"
                             "busy,,,10,\n"
                             "idle,,,5,\n");
    free(csv);
}

static void test_csv_multi_megabyte_field(void **state)
{
    fixture *f = *state;
    /* a 3 MiB quoted field holding commas, quotes and line breaks, and a 3 MiB bare one */
    size_t big = (size_t)3 << 20;
    tl_buf quoted = {0}, bare = {0}, text = {0}, want = {0};
    tl_buf_addc(&quoted, '"');
    for (size_t i = 0; i < big; i++) {
        char c = "ab,\"\n"[i % 5];
        if (c == '"')
            tl_buf_addc(&quoted, '"');
        tl_buf_addc(&quoted, c);
        tl_buf_addc(&bare, (char)('a' + i % 26));
    }
    tl_buf_addc(&quoted, '"');
    tl_buf_printf(&text, "type,time ms,note\nbusy,12,%s\nidle,4,%s\n", quoted.data, bare.data);
    put(f, "a/gpu_timeline.csv", GPU_A);
    putn(f, "b/gpu_timeline.csv", text.data, text.len);

    /* written back exactly as read: the writer quotes that field the same way */
    tl_buf_printf(&want, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms,b::note\n"
                         "busy,2,20.0,10,12,%s\nidle,-1,-20.0,5,4,%s\n",
                  quoted.data, bare.data);
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_int_equal(strlen(csv), want.len);
    assert_true(memcmp(csv, want.data, want.len) == 0);
    free(csv);
    tl_buf_free(&quoted);
    tl_buf_free(&bare);
    tl_buf_free(&text);
    tl_buf_free(&want);
}

static void test_csv_wide_header(void **state)
{
    fixture *f = *state;
    /* more columns than a table may have: refused before a million columns are made */
    size_t cols = ((size_t)1 << 20) + 1;
    char *text = malloc(cols + 16);
    memset(text, ',', cols - 1);
    memcpy(text + cols - 1, "\nx\n", 4);
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b/gpu_timeline.csv", text);
    EXPECT_FAILURE(f, 1, "b/gpu_timeline.csv line 1: 1048577 columns, more than the 1048576 a table may have; refusing",
                   "a", "b");
    free(text);
}

static void test_csv_directory_without_csvs(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "empty/notes.txt", "no sheets here\n");
    put(f, "empty/.hidden.csv", GPU_B);
    EXPECT_FAILURE(f, 1, "empty: no <sheet>.csv files in this directory; is it a TraceLens report?",
                   "a", "empty");
}

static void test_report_does_not_exist(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    EXPECT_FAILURE(f, 1, "missing_report: No such file or directory", "a", "missing_report");
}

/* ==== workbooks ======================================================================= */

static void test_xlsx_good_workbook_as_variant(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, NULL);
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b.xlsx");
    assert_string_equal(csv, GPU_AB_CSV);
    free(csv);
}

/* A text cell in a numeric CSV column makes the column a string column (SPEC §1), as a
 * workbook's would be; the cells that read as numbers keep their diffs either way, and
 * only the one that is no number has none. */
static void test_text_cell_in_a_numeric_csv_column_keeps_the_other_diffs(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", "type,time ms\nbusy,10\nidle,5\nodd,n/a?\n");
    put(f, "b/gpu_timeline.csv", "type,time ms\nbusy,12\nidle,4\nodd,3\n");
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms\n"
                             "busy,2,20.0,10,12\n"
                             "idle,-1,-20.0,5,4\n"
                             "odd,,,n/a?,3\n");
    free(csv);
}

/* pandas pads the header with "Unnamed: N" for cells past it and makes every name unique:
 * a header cell that is itself called "Unnamed: 3" turns the padded one into "Unnamed: 3.1". */
static void test_xlsx_cells_past_the_header_get_unique_names(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline",
             "<row><c t=\"inlineStr\"><is><t>type</t></is></c><c t=\"inlineStr\"><is><t>time ms</t></is></c>"
             "<c t=\"inlineStr\"><is><t>Unnamed: 3</t></is></c></row>"
             "<row><c t=\"inlineStr\"><is><t>busy</t></is></c><c><v>12</v></c>"
             "<c t=\"inlineStr\"><is><t>x</t></is></c><c t=\"inlineStr\"><is><t>y</t></is></c></row>"
             "<row><c t=\"inlineStr\"><is><t>idle</t></is></c><c><v>4</v></c></row>",
             NULL, NULL);
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b.xlsx");
    assert_string_equal(csv, "type,time ms__b_diff,time ms__b_pct,a::time ms,b::time ms,b::Unnamed: 3,"
                             "b::Unnamed: 3.1\n"
                             "busy,2,20.0,10,12,x,y\n"
                             "idle,-1,-20.0,5,4,,\n");
    free(csv);
}

static void test_xlsx_not_a_zip(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    put(f, "b.xlsx", GPU_B);
    EXPECT_FAILURE(f, 1, "b.xlsx: a text file, not a report; a report is a TraceLens workbook (.xlsx), a directory "
                         "of <sheet>.csv files, or a PyTorch profiler trace (.json, .json.gz)", "a", "b.xlsx");
    put(f, "empty.xlsx", "");
    EXPECT_FAILURE(f, 1, "empty.xlsx: an empty file; a report is a TraceLens workbook (.xlsx), a directory of "
                         "<sheet>.csv files, or a PyTorch profiler trace (.json, .json.gz)", "a", "empty.xlsx");
    /* bytes that tell nothing: the workbook reader's word */
    put(f, "bin.xlsx", "\x01\x02\x03\x04 binary");
    EXPECT_FAILURE(f, 1, "bin.xlsx: not a zip archive (or a damaged one)", "a", "bin.xlsx");
}

static void test_xlsx_truncated_zip(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, NULL);
    size_t n;
    char *z = read_rel(f, "b.xlsx", &n);
    /* the end (the central directory) cut off, as by an interrupted copy */
    putn(f, "b.xlsx", z, n * 2 / 3);
    EXPECT_FAILURE(f, 1, "b.xlsx: not a zip archive (or a damaged one)", "a", "b.xlsx");
    free(z);
}

static void test_xlsx_damaged_data(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, NULL);
    size_t n;
    char *z = read_rel(f, "b.xlsx", &n);
    /* garble the compressed bytes of the worksheet, keeping the archive's structure */
    char *sheet = NULL;
    for (size_t i = 0; i + 24 <= n && !sheet; i++)
        if (memcmp(z + i, "xl/worksheets/sheet1.xml", 24) == 0)
            sheet = z + i; /* the name in the local header, just before the data */
    assert_non_null(sheet);
    for (size_t i = 30; i < 60; i++)
        sheet[24 + i] ^= 0x5A;
    putn(f, "b.xlsx", z, n);
    run_result r = RUN(f, "a", "b.xlsx", "-o", "out.xlsx", "--output_csvs_dir", "csvs");
    assert_int_equal(r.status, 1);
    assert_true(strncmp(r.err, "tlcompare: b.xlsx, sheet 'gpu_timeline': ", 41) == 0);
    assert_non_null(strchr(r.err, '\n'));
    assert_true(strchr(r.err, '\n') == r.err + r.nerr - 1);
    assert_int_equal(r.nout, 0);
    assert_false(exists(f, "out.xlsx"));
    assert_false(exists(f, "csvs"));
    assert_no_temp_files(f->dir);
    run_free(&r);
    free(z);
}

static void test_xlsx_missing_parts(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "nowb.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, "xl/workbook.xml");
    EXPECT_FAILURE(f, 1, "nowb.xlsx: not an xlsx workbook (xl/workbook.xml is missing)", "a", "nowb.xlsx");
    workbook(f, "norels.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, "xl/_rels/workbook.xml.rels");
    EXPECT_FAILURE(f, 1, "norels.xlsx: not an xlsx workbook (xl/_rels/workbook.xml.rels is missing)",
                   "a", "norels.xlsx");
    workbook(f, "nosheet.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, "xl/worksheets/sheet1.xml");
    EXPECT_FAILURE(f, 1, "nosheet.xlsx, sheet 'gpu_timeline': part xl/worksheets/sheet1.xml is missing",
                   "a", "nosheet.xlsx");
    /* a shared-string cell, but no shared-string part */
    workbook(f, "nosst.xlsx", "gpu_timeline",
             "<row><c t=\"s\"><v>0</v></c></row>", NULL, NULL);
    EXPECT_FAILURE(f, 1, "nosst.xlsx, sheet 'gpu_timeline', cell A1: shared string 0 out of range "
                         "(the workbook has 0)",
                   "a", "nosst.xlsx");
}

static void test_xlsx_malformed_xml(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline", GPU_B_ROWS "<row><c><v>1</c></row>", NULL, NULL);
    EXPECT_FAILURE(f, 1, "b.xlsx, sheet 'gpu_timeline': malformed XML at line 2: mismatched tag",
                   "a", "b.xlsx");
    /* DTDs (and so entity bombs) are refused outright */
    part parts[] = {
        {"_rels/.rels", ROOT_RELS, 0},
        {"xl/workbook.xml",
         XML_DECL "<!DOCTYPE lol [<!ENTITY a \"aaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;\">]>"
                  "<workbook xmlns=\"" NS_MAIN "\"><sheets><sheet name=\"&b;\"/></sheets></workbook>", 0},
    };
    write_zip(at(f, "dtd.xlsx"), parts, 2);
    EXPECT_FAILURE(f, 1, "dtd.xlsx, part xl/workbook.xml: has a DOCTYPE declaration, which xlsx parts "
                         "never have; refusing",
                   "a", "dtd.xlsx");
}

static void test_xlsx_shared_string_out_of_range(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    workbook(f, "b.xlsx", "gpu_timeline",
             "<row><c t=\"s\"><v>0</v></c><c t=\"s\"><v>1</v></c></row>"
             "<row><c t=\"s\"><v>2</v></c><c><v>12</v></c></row>"
             "<row r=\"7\"><c r=\"A7\" t=\"s\"><v>3</v></c><c r=\"B7\"><v>4</v></c></row>",
             "<si><t>type</t></si><si><t>time ms</t></si><si><t>busy</t></si>", NULL);
    EXPECT_FAILURE(f, 1, "b.xlsx, sheet 'gpu_timeline', cell A7: shared string 3 out of range "
                         "(the workbook has 3)",
                   "a", "b.xlsx");
    workbook(f, "huge.xlsx", "gpu_timeline",
             "<row><c t=\"s\"><v>99999999999999999999999999</v></c></row>", "<si><t>x</t></si>", NULL);
    EXPECT_FAILURE(f, 1, "huge.xlsx, sheet 'gpu_timeline', cell A1: shared string "
                         "99999999999999999999999999 out of range (the workbook has 1)",
                   "a", "huge.xlsx");
}

static void test_xlsx_duplicate_sheet_names(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    char *wb = workbook_xml("gpu_timeline", "gpu_timeline"), *sh = sheet_xml(GPU_B_ROWS);
    part parts[] = {
        {"_rels/.rels", ROOT_RELS, 0},           {"xl/workbook.xml", wb, 0},
        {"xl/_rels/workbook.xml.rels", WB_RELS, 0}, {"xl/worksheets/sheet1.xml", sh, 0},
        {"xl/worksheets/sheet2.xml", sh, 0},
    };
    write_zip(at(f, "b.xlsx"), parts, 5);
    EXPECT_FAILURE(f, 1, "b.xlsx, part xl/workbook.xml: two sheets are named 'gpu_timeline'", "a", "b.xlsx");
    free(wb);
    free(sh);
}

/* Text from the input quoted in an error (here a key) may hold a line break: the error
 * stays one line, the break escaped. */
static void test_error_quoting_a_line_break_is_one_line(void **state)
{
    fixture *f = *state;
    tl_buf a = {0}, b = {0};
    tl_buf_adds(&a, "type,time ms\n");
    tl_buf_adds(&b, "type,time ms\n");
    for (int i = 0; i < 1500; i++) {
        tl_buf_printf(&a, "\"two\nlines\",%d\n", i);
        tl_buf_printf(&b, "\"two\r\nlines\",%d\n", i);
    }
    put(f, "a/gpu_timeline.csv", a.data);
    put(f, "b/gpu_timeline.csv", a.data);
    EXPECT_FAILURE(f, 1, "sheet 'gpu_timeline': the key (type='two\\nlines') is repeated (rows: 1500 in 'a', "
                         "1500 in 'b') and the merge would make 2250000 rows, more than a worksheet holds "
                         "(1048575); refusing",
                   "a", "b", "--tracelens-keys");
    /* a carriage return too */
    put(f, "a/gpu_timeline.csv", b.data);
    put(f, "b/gpu_timeline.csv", b.data);
    EXPECT_FAILURE(f, 1, "sheet 'gpu_timeline': the key (type='two\\r\\nlines') is repeated (rows: 1500 in 'a', "
                         "1500 in 'b') and the merge would make 2250000 rows, more than a worksheet holds "
                         "(1048575); refusing",
                   "a", "b", "--tracelens-keys");
    tl_buf_free(&a);
    tl_buf_free(&b);
}

static void test_xlsx_absurd_cell_references(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    static const struct {
        const char *ref, *row;
    } bad[] = {
        {"ZZZZ2", "2"},         /* past XFD */
        {"XFE2", "2"},          /* one past XFD */
        {"A0", "2"},            /* rows start at 1 */
        {"A1048577", "2"},      /* one past the last row */
        {"B99999999999", "2"},  /* absurd row */
        {"2B", "2"},            /* not a reference */
        {"", "2"},              /* empty */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *rows = fmt(GPU_B_ROWS "<row r=\"%s\"><c r=\"%s\"><v>1</v></c></row>", bad[i].row, bad[i].ref);
        char *name = fmt("bad%zu.xlsx", i);
        workbook(f, name, "gpu_timeline", rows, NULL, NULL);
        char *msg = fmt("%s, sheet 'gpu_timeline': invalid cell reference '%s' in row %s", name,
                        bad[i].ref, bad[i].row);
        expect_failure_env(f, NULL, 1, msg, ARGS("a", name, "-o", "out.xlsx", "--output_csvs_dir", "csvs"), 0);
        free(rows);
        free(name);
        free(msg);
    }
}

static void test_xlsx_declared_size_bomb(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    /* The zip directory says the worksheet inflates to 3 GiB: refused at once, before
     * inflating a byte (so this test takes no time, unlike a real bomb). */
    workbook(f, "bomb.xlsx", "gpu_timeline", GPU_B_ROWS, NULL, NULL);
    patch_declared_size(at(f, "bomb.xlsx"), "xl/worksheets/sheet1.xml", 3u << 30);
    EXPECT_FAILURE(f, 1, "bomb.xlsx: part xl/worksheets/sheet1.xml inflates beyond 2 GiB; refusing "
                         "(decompression bomb?)",
                   "a", "bomb.xlsx");
}

/* A worksheet of about 1 MiB of XML that deflates to a few KiB. */
static char *big_sheet_rows(void)
{
    tl_buf rows = {0};
    tl_buf_adds(&rows, GPU_B_ROWS);
    for (int r = 4; r < 20000; r++)
        tl_buf_printf(&rows, "<row r=\"%d\"><c r=\"A%d\" t=\"inlineStr\"><is><t>w</t></is></c></row>", r, r);
    return rows.data;
}

static void test_xlsx_inflated_size_bomb(void **state)
{
    fixture *f = *state;
    put(f, "a/gpu_timeline.csv", GPU_A);
    char *rows = big_sheet_rows();
    workbook(f, "big.xlsx", "gpu_timeline", rows, NULL, NULL);
    /* TLCOMPARE_MAX_PART (a test hook) lowers the 2 GiB bound to 64 KiB */
    const char *const env[] = {"TLCOMPARE_MAX_PART=65536", NULL};
    expect_failure_env(f, env, 1, "big.xlsx: part xl/worksheets/sheet1.xml inflates beyond 64 KiB; refusing "
                                  "(decompression bomb?)",
                       ARGS("a", "big.xlsx"), 1);
    /* Declaring a small size does not help: the bytes actually inflated are counted. */
    patch_declared_size(at(f, "big.xlsx"), "xl/worksheets/sheet1.xml", 1000);
    expect_failure_env(f, env, 1, "big.xlsx: part xl/worksheets/sheet1.xml inflates beyond 64 KiB; refusing "
                                  "(decompression bomb?)",
                       ARGS("a", "big.xlsx"), 1);
    free(rows);
}

/* ==== resource bombs ====================================================================== */

static void test_duplicate_keys_bound_the_merge(void **state)
{
    fixture *f = *state;
    /* 1500 rows of key 'x' on each side would merge into 2.25 million rows */
    tl_buf a = {0}, b = {0};
    tl_buf_adds(&a, "type,time ms\nbusy,1\n");
    tl_buf_adds(&b, "type,time ms\n");
    for (int i = 0; i < 1500; i++) {
        tl_buf_printf(&a, "x,%d\n", i);
        tl_buf_printf(&b, "x,%d\n", i + 1);
    }
    put(f, "a/gpu_timeline.csv", a.data);
    put(f, "b/gpu_timeline.csv", b.data);
    EXPECT_FAILURE(f, 1, "sheet 'gpu_timeline': the key (type='x') is repeated (rows: 1500 in 'a', 1500 in 'b') "
                         "and the merge would make 2250001 rows, more than a worksheet holds (1048575); "
                         "refusing",
                   "a", "b", "--tracelens-keys");
    /* paired in order (the default), the 1500 rows make 1501 */
    run_result r0 = RUN(f, "a", "b", "-o", "out.xlsx", "-v");
    assert_int_equal(r0.status, 0);
    assert_non_null(strstr(r0.out, "Wrote sheet 'gpu_timeline' with 1501 rows"));
    run_free(&r0);
    /* 300 x 300 is under the bound, and works */
    tl_buf_clear(&a);
    tl_buf_clear(&b);
    tl_buf_adds(&a, "type,time ms\n");
    tl_buf_adds(&b, "type,time ms\n");
    for (int i = 0; i < 300; i++) {
        tl_buf_printf(&a, "x,%d\n", i);
        tl_buf_printf(&b, "x,%d\n", i);
    }
    put(f, "a/gpu_timeline.csv", a.data);
    put(f, "b/gpu_timeline.csv", b.data);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "-v", "--tracelens-keys");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Wrote sheet 'gpu_timeline' with 90000 rows"));
    run_free(&r);
    tl_buf_free(&a);
    tl_buf_free(&b);
}

/* Wide tables bound the merge tighter: the cells (rows x columns) must fit as well.
 * 10000 columns a side, key 'x' 120 times a side: only 14400 rows, but 288 million cells. */
static void test_duplicate_keys_bound_the_merge_of_wide_tables(void **state)
{
    fixture *f = *state;
    tl_buf t = {0};
    tl_buf_adds(&t, "type,time ms");
    for (int c = 2; c < 10000; c++)
        tl_buf_printf(&t, ",c%d", c);
    tl_buf_addc(&t, '\n');
    for (int r = 0; r < 120; r++)
        tl_buf_printf(&t, "x,%d\n", r); /* short rows: the other columns are missing */
    put(f, "a/gpu_timeline.csv", t.data);
    put(f, "b/gpu_timeline.csv", t.data);
    /* 10000 + 10000 columns less the one key; 2^28 cells in all */
    char *msg = fmt("sheet 'gpu_timeline': the key (type='x') is repeated (rows: 120 in 'a', 120 in 'b') and "
                    "the merge would make 14400 rows of 19999 columns, more than 268435456 cells; refusing");
    EXPECT_FAILURE(f, 1, msg, "a", "b", "--tracelens-keys");
    free(msg);
    tl_buf_free(&t);
}

/* A roofline sheet with thousands of param: columns (every one a merge key) must take time
 * linear in the columns: quadratic work makes 16000 of them take seconds, 200000 hours. */
static void test_roofline_many_param_columns(void **state)
{
    fixture *f = *state;
    tl_buf h = {0}, a = {0}, b = {0};
    tl_buf_adds(&h, "name,Kernel Time (\xC2\xB5s)_sum");
    for (int i = 0; i < 16000; i++)
        tl_buf_printf(&h, ",param:%05d", i);
    tl_buf_addc(&h, '\n');
    tl_buf_adds(&a, h.data);
    tl_buf_adds(&b, h.data);
    for (int r = 0; r < 2; r++) {
        tl_buf_printf(&a, "aten::mm,%d", 10 + r);
        tl_buf_printf(&b, "aten::mm,%d", 20 + r);
        for (int i = 0; i < 16000; i++) {
            tl_buf_printf(&a, ",%d", r);
            tl_buf_printf(&b, ",%d", r);
        }
        tl_buf_addc(&a, '\n');
        tl_buf_addc(&b, '\n');
    }
    putn(f, "a/GEMM.csv", a.data, a.len);
    putn(f, "b/GEMM.csv", b.data, b.len);
    /* the baseline, on this machine, now: the same two reports with 1000 columns */
    tl_buf sh = {0}, sa = {0};
    tl_buf_adds(&sh, "name,Kernel Time (\xC2\xB5s)_sum");
    for (int i = 0; i < 1000; i++)
        tl_buf_printf(&sh, ",param:%05d", i);
    tl_buf_addc(&sh, '\n');
    tl_buf_adds(&sa, sh.data);
    for (int r = 0; r < 2; r++) {
        tl_buf_printf(&sa, "aten::mm,%d", 10 + r);
        for (int i = 0; i < 1000; i++)
            tl_buf_printf(&sa, ",%d", r);
        tl_buf_addc(&sa, '\n');
    }
    putn(f, "sa/GEMM.csv", sa.data, sa.len);
    putn(f, "sb/GEMM.csv", sa.data, sa.len);
    double t0 = now_ms();
    run_result r = RUN(f, "sa", "sb", "--sheets", "roofline", "-o", "small.xlsx");
    double base = now_ms() - t0;
    assert_int_equal(r.status, 0);
    run_free(&r);
    tl_buf_free(&sh);
    tl_buf_free(&sa);
    t0 = now_ms();
    r = RUN(f, "a", "b", "--sheets", "roofline", "-o", "out.xlsx", "-v");
    double took = now_ms() - t0;
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    /* name + 16000 keys, the sum of each report, its diff and pct */
    assert_non_null(strstr(r.out, "Wrote sheet 'GEMM_intersect_b' with 2 rows \xC3\x97 16005 columns\n"));
    /* 16 times the columns: linear work takes at most 16 times the baseline (less: the
     * start-up is shared), quadratic work 256 times; a ratio, so a loaded machine or a
     * sanitizer slows both alike */
    if (took > 40 * base + 1000)
        fail_msg("16000 columns took %.0f ms, 1000 columns %.0f ms", took, base);
    run_free(&r);
    tl_buf_free(&h);
    tl_buf_free(&a);
    tl_buf_free(&b);
}

/* ==== outputs ============================================================================== */

static void test_output_directory_missing_is_made(void **state)
{
    fixture *f = *state;
    two_reports(f);
    /* made, as TraceLens makes it */
    run_result r = RUN(f, "a", "b", "-o", "no_such_dir/deeper/out.xlsx");
    assert_int_equal(r.status, 0);
    run_free(&r);
    assert_true(exists(f, "no_such_dir/deeper/out.xlsx"));
    /* unless a file is in the way */
    put(f, "plain", "a file");
    expect_failure_env(f, NULL, 1, "plain/out.xlsx: cannot create a file in its directory: Not a directory",
                       ARGS("a", "b", "-o", "plain/out.xlsx"), 0);
}

static void test_output_directory_unwritable(void **state)
{
    fixture *f = *state;
    if (geteuid() == 0)
        skip(); /* permissions do not stop root; the missing-directory test covers the path */
    two_reports(f);
    assert_int_equal(mkdir(at(f, "ro"), 0555), 0);
    expect_failure_env(f, NULL, 1, "ro/out.xlsx: cannot create a file in its directory: Permission denied",
                       ARGS("a", "b", "-o", "ro/out.xlsx"), 0);
}

static void test_output_csv_dir_is_a_file(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "out.xlsx", OLD_WORKBOOK);
    put(f, "csvs", "a file where the CSV directory should go\n");
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--output_csvs_dir", "csvs");
    assert_failed(&r, 1, "csvs: exists and is not a directory");
    run_free(&r);
    /* refused before anything moved: the workbook is the old one */
    assert_file_is(f, "out.xlsx", OLD_WORKBOOK);
    assert_file_is(f, "csvs", "a file where the CSV directory should go\n");
    assert_no_temp_files(f->dir);
}

static void test_output_workbook_is_a_directory(void **state)
{
    fixture *f = *state;
    two_reports(f);
    assert_int_equal(mkdir(at(f, "out.xlsx"), 0755), 0);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--output_csvs_dir", "csvs");
    assert_failed(&r, 1, "out.xlsx: is a directory");
    run_free(&r);
    assert_false(exists(f, "csvs"));
    assert_no_temp_files(f->dir);
}

static void test_output_replaced_whole_on_success(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put_old_outputs(f);
    char *csv = RUN_OK(f, "gpu_timeline", "a", "b");
    assert_string_equal(csv, GPU_AB_CSV);
    free(csv);
    /* the user's other files in the CSV directory stay */
    assert_file_is(f, "csvs/keep.csv", KEEP_CSV);
    size_t n;
    char *wb = read_rel(f, "out.xlsx", &n);
    assert_true(n > 4 && memcmp(wb, "PK\x03\x04", 4) == 0);
    free(wb);
    assert_no_temp_files(at(f, "csvs"));
}

/* ==== signals =============================================================================== */

/* Reports big enough that writing their comparison takes a while. */
static void slow_reports(const fixture *f)
{
    tl_buf a = {0}, b = {0};
    const char *header = "name,Input type,Input Dims,Input Strides,Concrete Inputs,"
                         "total_direct_kernel_time_sum,total_direct_kernel_time_mean,operation_count,"
                         "note\n";
    tl_buf_adds(&a, header);
    tl_buf_adds(&b, header);
    for (int i = 0; i < 150000; i++) {
        tl_buf_printf(&a, "aten::op_%d,float,\"(%d, 64)\",\"(64, 1)\",,%d.25,%d.5,%d,some text %d\n", i, i,
                      i, i % 97, i % 13 + 1, i);
        tl_buf_printf(&b, "aten::op_%d,float,\"(%d, 64)\",\"(64, 1)\",,%d.75,%d.5,%d,other text %d\n", i + 7,
                      i + 7, i, i % 89, i % 11 + 1, i);
    }
    putn(f, "a/ops_all.csv", a.data, a.len);
    putn(f, "b/ops_all.csv", b.data, b.len);
    tl_buf_free(&a);
    tl_buf_free(&b);
}

/* 1 when `dir` holds an entry whose name starts with `prefix`. */
static int has_entry(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL)
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return found;
}

/*
 * Interrupt a run with `sig`: as soon as the temporary output `temp` (".out.xlsx.tmp-",
 * ".csvs.tmp-") appears, so that the signal lands while that output is being written;
 * or, when `temp` is NULL, after `delay_ms`.
 * The old outputs must survive and every temporary file must go.  When the run is over
 * before the signal could be sent, there is nothing to check: the test is skipped.
 */
static void interrupt_run(fixture *f, int sig, const char *temp, int delay_ms)
{
    slow_reports(f);
    put_old_outputs(f);
    child c = spawn(f->dir, ARGS("a", "b", "-o", "out.xlsx", "--output_csvs_dir", "csvs"), NULL);
    double start = now_ms();
    int sent = 0;
    while (!sent) {
        int ws;
        pid_t done = waitpid(c.pid, &ws, WNOHANG);
        if (done == c.pid) {
            /* finished (or died) before we could interrupt it: reap it below */
            close(c.out);
            close(c.err);
            assert_true(WIFEXITED(ws));
            skip();
        }
        /* the CSV directory exists, so its temporary is made inside it */
        if (temp ? has_entry(f->dir, temp) || has_entry(at(f, "csvs"), temp) : now_ms() - start >= delay_ms) {
            assert_int_equal(kill(c.pid, sig), 0);
            sent = 1;
        } else if (now_ms() - start > RUN_TIMEOUT_MS) {
            kill(c.pid, SIGKILL);
            fail_msg("no temporary output appeared");
        } else {
            usleep(200);
        }
    }
    run_result r = finish(c);
    if (r.status == 0) {
        /* the signal came after the outputs were in place: a complete run */
        run_free(&r);
        skip();
    }
    /* killed by the signal, or exited 128 + signal from the cleanup handler */
    assert_int_equal(r.status, 128 + sig);
    assert_old_outputs_intact(f);
    assert_no_temp_files(f->dir);
    assert_no_temp_files(at(f, "csvs"));
    run_free(&r);
}

static void test_sigint_while_writing_the_workbook(void **state)
{
    interrupt_run(*state, SIGINT, ".out.xlsx.tmp-", 0);
}

static void test_sigterm_while_writing_the_csvs(void **state)
{
    interrupt_run(*state, SIGTERM, ".csvs.tmp-", 0);
}

static void test_sigterm_after_100ms(void **state) { interrupt_run(*state, SIGTERM, NULL, 100); }

/* ============================================================================================ */

/* ==== answers that make sense on real reports ============================================ */

/* How many lines of `text` start with `prefix`. */
static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, len) == 0;
    return n;
}

/* The sheet `rel` (a CSV the run wrote) as a table; fails the test when unreadable. */
static tl_table *read_csv_rel(const fixture *f, const char *rel, tl_arena *arena)
{
    tl_error err = {0};
    tl_table *t = tl_csv_read_file(at(f, rel), arena, &err);
    if (!t)
        fail_msg("%s", err.msg);
    return t;
}

/* How many cells of the diff/pct columns of `t` are numbers other than 0. */
static size_t nonzero_diffs(const tl_table *t)
{
    size_t n = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        size_t len = strlen(t->cols[c].name);
        int diff = (len > 5 && strcmp(t->cols[c].name + len - 5, "_diff") == 0) ||
                   (len > 4 && strcmp(t->cols[c].name + len - 4, "_pct") == 0);
        for (size_t r = 0; diff && r < t->nrows; r++)
            n += tl_cell_is_number(&t->cols[c].cells[r]) && tl_cell_number(&t->cols[c].cells[r]) != 0;
    }
    return n;
}

/* The generator beside the binary under test (make unit-test builds it). */
static void genreport(const fixture *f, const char *args)
{
    char *bin = fmt("%s", tlcompare);
    char *slash = strrchr(bin, '/');
    *slash = '\0';
    char *cmd = fmt("cd '%s' && '%s/tools/genreport' %s >/dev/null", f->dir, bin, args);
    if (system(cmd) != 0)
        fail_msg("failed: %s", cmd);
    free(cmd);
    free(bin);
}

/* A recompute-style report (several rows per key in every summary sheet) against itself:
 * the row-key step pairs every row with itself, so every diff is 0, but in the one sheet
 * whose repeated rows nothing tells apart, which the one warning names.  The TraceLens
 * pairing (--tracelens-keys) pairs rows every way: -92% / +1235%-style diffs. */
static void test_row_keys_report_against_itself(void **state)
{
    fixture *f = *state;
    genreport(f, "--recompute baseline --csv runs/a/perf_csvs");
    genreport(f, "--recompute baseline --csv runs/b/perf_csvs");
    run_result r;
    char *csv = run_ok(f, ARGS("runs/a/perf_csvs", "runs/b/perf_csvs"), "gpu_timeline", &r);
    free(csv);
    tl_arena arena;
    tl_arena_init(&arena);
    static const struct { const char *sheet, *keys; } sheets[] = {
        {"gpu_timeline", "type,is_recompute,"},
        {"ops_summary", "name,parent_module,"},
        {"kernel_summary", "Kernel name,Parent cpu_op,Kernel stream,"},
    };
    for (size_t i = 0; i < sizeof sheets / sizeof *sheets; i++) {
        char *rel = fmt("csvs/%s.csv", sheets[i].sheet);
        char *text = read_rel(f, rel, NULL);
        if (strncmp(text, sheets[i].keys, strlen(sheets[i].keys)) != 0)
            fail_msg("%s: keys are not %s: %.200s", rel, sheets[i].keys, text);
        tl_table *t = read_csv_rel(f, rel, &arena);
        assert_true(t->nrows > 0);
        if (nonzero_diffs(t))
            fail_msg("%s: %zu diffs are not 0", rel, nonzero_diffs(t));
        tl_table_free(t);
        free(text);
        free(rel);
    }
    /* the repeated rows of ops_unique_args cannot be told apart: paired in order, said once */
    tl_table *t = read_csv_rel(f, "csvs/ops_unique_args_intersect_b.csv", &arena);
    assert_int_equal(t->nrows, 4); /* 2 singles + 2 in order */
    assert_int_equal(nonzero_diffs(t), 0);
    tl_table_free(t);
    assert_non_null(strstr(r.err, "tlcompare: warning: sheet 'ops_unique_args': key values found in several rows "
                                  "(keys name, Input type, Input Dims, Input Strides, Concrete Inputs; report 'a' 1, "
                                  "'b' 1); their rows are paired in order (the k-th of a value with the k-th), "
                                  "the sheet has no column that tells them apart\n"));
    assert_int_equal(count_lines(r.err, "tlcompare: warning: "), 1);
    /* the summary adds a type's rows up: busy_time is 21.7 ms + 6.6 ms recomputed */
    assert_non_null(strstr(r.out, "  busy_time                      28.300         28.300         +0.000     +0.0%\n"));
    /* no regressions or improvements: nothing changed */
    assert_null(strstr(r.out, "top regressions"));
    assert_null(strstr(r.out, "top improvements"));
    run_free(&r);

    /* --tracelens-keys: the reference's pairing, and a warning for each sheet */
    csv = run_ok(f, ARGS("runs/a/perf_csvs", "runs/b/perf_csvs", "--tracelens-keys"), "gpu_timeline", &r);
    assert_true(strncmp(csv, "type,time ms__b_diff,", 21) == 0); /* is_recompute is no key */
    free(csv);
    t = read_csv_rel(f, "csvs/gpu_timeline.csv", &arena);
    assert_int_equal(t->nrows, 18); /* 2 types in one row, 4 in two: 2 + 4 x 4 */
    assert_true(nonzero_diffs(t) > 0);
    tl_table_free(t);
    t = read_csv_rel(f, "csvs/kernel_summary.csv", &arena);
    assert_int_equal(t->nrows, 3 * 3 + 1 + 2 * 2);
    tl_table_free(t);
    assert_non_null(strstr(r.err, "warning: sheet 'kernel_summary': key values found in several rows (keys Kernel "
                                  "name; report 'a' 2, 'b' 2); their rows are paired every way (--tracelens-keys)\n"));
    run_free(&r);
    tl_arena_free(&arena);
}

/* A directory's name is its tag whole; colliding default tags become the differing path parts. */
static void test_default_tags_from_directories_and_traces(void **state)
{
    fixture *f = *state;
    put(f, "out/Qwen1.5-0.5B_h100_csvs/gpu_timeline.csv", GPU_A);
    put(f, "out/Qwen1.5-0.5B_mi300_csvs/gpu_timeline.csv", GPU_B);
    char *csv = RUN_OK(f, "gpu_timeline", "out/Qwen1.5-0.5B_h100_csvs", "out/Qwen1.5-0.5B_mi300_csvs/");
    assert_non_null(strstr(csv, ",Qwen1.5-0.5B_h100_csvs::time ms,Qwen1.5-0.5B_mi300_csvs::time ms\n"));
    free(csv);

    put(f, "runs/h100/perf_csvs/gpu_timeline.csv", GPU_A);
    put(f, "runs/mi300/perf_csvs/gpu_timeline.csv", GPU_B);
    put(f, "runs/mi300/tuned/perf_csvs/gpu_timeline.csv", GPU_B);
    csv = RUN_OK(f, "gpu_timeline", "runs/h100/perf_csvs", "./runs/mi300//perf_csvs/");
    assert_string_equal(csv, "type,time ms__mi300_diff,time ms__mi300_pct,h100::time ms,mi300::time ms\n"
                             "busy,2,20.0,10,12\nidle,-1,-20.0,5,4\n");
    free(csv);
    csv = RUN_OK(f, "gpu_timeline", "runs/h100/perf_csvs", "runs/mi300/perf_csvs", "runs/mi300/tuned/perf_csvs");
    assert_non_null(strstr(csv, ",h100::time ms,mi300::time ms,mi300_tuned::time ms\n"));
    free(csv);

    unlink(at(f, "out.xlsx"));
    tt_rmrf(at(f, "csvs"));
    /* a trace is tagged by its file name without .json(.gz) and .pt.trace; the workbook
     * beside it by its stem: all three are 'host_1', and no part of the paths differs
     * but that name */
    put(f, "t/host_1.pt.trace.json.gz", "not read: the tags are checked first");
    put(f, "t/host_1.pt.trace.json", "not read");
    put(f, "t/host_1.xlsx", "not read");
    EXPECT_FAILURE(f, 2,
                   "reports 1 and 2 both have the tag 'host_1'; tags must be unique: use --names to "
                   "disambiguate",
                   "t/host_1.pt.trace.json.gz", "t/host_1.pt.trace.json");
    EXPECT_FAILURE(f, 2,
                   "reports 1 and 2 both have the tag 'host_1'; tags must be unique: use --names to "
                   "disambiguate",
                   "t/host_1.xlsx", "t/host_1.pt.trace.json.gz");
}

/* A report with no TraceLens sheet is an error, not an empty comparison a gate passes. */
static void test_report_without_tracelens_sheets(void **state)
{
    fixture *f = *state;
    two_reports(f);
    put(f, "notes/readme.csv", "a,b\n1,2\n");
    EXPECT_FAILURE(f, 1,
                   "notes: no TraceLens sheet in this report (a TraceLens report holds gpu_timeline, "
                   "ops_summary, kernel_summary, ops_all, ops_unique_args, GEMM, ... sheets)",
                   "a", "notes", "--fail-on-regression", "5");
    EXPECT_FAILURE(f, 1,
                   "notes: no TraceLens sheet in this report (a TraceLens report holds gpu_timeline, "
                   "ops_summary, kernel_summary, ops_all, ops_unique_args, GEMM, ... sheets)",
                   "notes", "a");
    /* a gate with nothing to judge (only a roofline sheet compared) has not passed */
    static const char gemm[] = "name,param: M,Kernel Time (\xc2\xb5s)_sum,Kernel Time (\xc2\xb5s)_mean,"
                               "name_count,TFLOPS/s_mean,TB/s_mean\n";
    char *g = fmt("%smm,4,10,10,1,1,1\n", gemm);
    put(f, "g1/GEMM.csv", g);
    put(f, "g2/GEMM.csv", g);
    free(g);
    EXPECT_FAILURE(f, 1,
                   "--fail-on-regression: nothing to judge: no gpu_timeline, ops_summary or kernel_summary was "
                   "compared",
                   "g1", "g2", "--fail-on-regression", "5");
}

static const char OPS_HEAD[] = "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms\n";

static void ops_report(const fixture *f, const char *dir, const char *timeline, const char *ops_rows)
{
    char *rel = fmt("%s/gpu_timeline.csv", dir);
    put(f, rel, timeline);
    free(rel);
    rel = fmt("%s/ops_summary.csv", dir);
    char *text = fmt("%s%s", OPS_HEAD, ops_rows);
    put(f, rel, text);
    free(text);
    free(rel);
}

static const char TIMELINE_100[] = "type,time ms\nbusy_time,90\nidle_time,10\ntotal_time,100\n";

/* A change within floating-point noise is no regression, for the lists and the gate;
 * --min-delta-ms / --min-delta-pct set a floor; --top the length of the lists. */
static void test_noise_floors_and_top(void **state)
{
    fixture *f = *state;
    /* 0.1 + 0.2 and 0.3: what one report read from .xlsx and from CSV can differ by */
    ops_report(f, "a", TIMELINE_100, "aten::mm,300,10,0.30000000000000004\naten::add,2000,10,2\n"
                                     "aten::mul,1000,10,1\naten::cat,1000,10,1\n");
    ops_report(f, "b", TIMELINE_100, "aten::mm,300,10,0.3\naten::add,2050,10,2.05\n"
                                     "aten::mul,1100,10,1.1\naten::cat,1300,10,1.3\n");
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx", "--fail-on-regression", "0", "--min-time-ms", "0");
    assert_int_equal(r.status, 3);
    assert_null(strstr(r.out, "aten::mm"));   /* -5.6e-17 ms: noise */
    assert_non_null(strstr(r.out, "aten::add"));
    assert_null(strstr(r.err, "aten::mm"));
    assert_non_null(strstr(r.err, "tlcompare: regression: b op aten::add: 2.000 ms -> 2.050 ms (+2.5%, limit 0%)\n"));
    run_free(&r);

    /* floors: +0.05 ms (add) is under 0.1 ms; +10% (mul) under 20% */
    r = RUN(f, "a", "b", "-o", "out.xlsx", "--fail-on-regression", "0", "--min-time-ms", "0", "--min-delta-ms",
            "0.1", "--min-delta-pct", "20");
    assert_int_equal(r.status, 3);
    assert_null(strstr(r.out, "aten::add"));
    assert_null(strstr(r.out, "aten::mul"));
    assert_non_null(strstr(r.out, "aten::cat"));
    assert_int_equal(count_lines(r.err, "tlcompare: regression: "), 1);
    run_free(&r);
    r = RUN(f, "a", "b", "-o", "out.xlsx", "--fail-on-regression", "0", "--min-delta-ms", "0.5");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "gate: passed"));
    run_free(&r);

    /* --top 1: the largest regression only */
    r = RUN(f, "a", "b", "-o", "out.xlsx", "--top", "1");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "aten::cat"));
    assert_null(strstr(r.out, "aten::mul"));
    run_free(&r);
    unlink(at(f, "out.xlsx"));
    EXPECT_FAILURE(f, 2, "--top needs a whole number from 1 to 100000 (see 'tlcompare --help')", "a", "b", "--top",
                   "0");
    EXPECT_FAILURE(f, 2, "--min-delta-ms needs a number of at least 0 (see 'tlcompare --help')", "a", "b",
                   "--min-delta-ms", "-1");
}

/* Two runs of different lengths: every op has about half the calls.  The summary says so,
 * judges ops by their time per call, and the JSON has integer counts. */
static void test_different_numbers_of_iterations(void **state)
{
    fixture *f = *state;
    ops_report(f, "long", TIMELINE_100, "aten::mm,40000,3758,40\naten::add,20000,3758,20\n"
                                        "aten::mul,10000,3758,10\naten::cat,5000,1880,5\n");
    /* half the calls; mm 8% slower per call, add the same, mul 10% faster, cat the same */
    ops_report(f, "short", "type,time ms\nbusy_time,45\nidle_time,5\ntotal_time,50\n",
               "aten::mm,21600,1879,21.6\naten::add,10000,1879,10\naten::mul,4500,1879,4.5\n"
               "aten::cat,2500,940,2.5\n");
    run_result r = RUN(f, "long", "short", "-o", "out.xlsx", "--summary-json", "s.json", "--fail-on-regression", "5");
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.out, "note: the call counts differ across the board (short has 0.50x the calls of "
                                  "long): the variant ran about half as many iterations; ops are judged and "
                                  "ordered by their time per call, the gate's busy time per iteration\n"));
    /* mm is the one regression, per call; add and cat did not change per call */
    const char *reg = strstr(r.out, "top regressions");
    const char *imp = strstr(r.out, "top improvements");
    assert_non_null(reg);
    assert_non_null(imp);
    assert_non_null(strstr(reg, "aten::mm"));
    assert_true(strstr(reg, "aten::mm") < imp);
    assert_non_null(strstr(r.out, "10.6 \xc2\xb5s -> 11.5 \xc2\xb5s per call (+0.85 \xc2\xb5s)"));
    assert_true(strstr(r.out, "aten::mul") > imp);
    assert_null(strstr(r.out, "aten::add"));
    assert_null(strstr(r.out, "aten::cat"));
    assert_int_equal(count_lines(r.err, "tlcompare: regression: "), 1);
    /* one delta per row, the one it is ordered and gated by: per iteration (mm's time per
     * call times long's 3758 calls: 40 -> 43.2 ms), labelled; the gate line quotes it */
    assert_non_null(strstr(reg, "delta per iteration: time per call x the baseline's calls"));
    const char *mm = strstr(reg, "+3.200 ms");
    assert_true(mm && mm < strstr(reg, "aten::mm") && strstr(mm, "+8.0%") < strstr(reg, "aten::mm"));
    assert_null(strstr(r.out, "-18.400 ms"));
    assert_non_null(strstr(r.err, "tlcompare: regression: short op aten::mm: 40.000 ms -> 43.200 ms per iteration "
                                  "(+8.0%, limit 5%)\n"));
    char *js = read_rel(f, "s.json", NULL);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"call_ratio\": 0.5,"));
    assert_non_null(strstr(js, "\"count\": {\"baseline\": 3758, \"variant\": 1879, \"delta\": -1879, \"pct\": -50.0}"));
    free(js);
    run_free(&r);
    /* the other way round, the variant runs twice as long: its busy time doubles, which is
     * no regression per iteration; mul is 11% slower per call */
    r = RUN(f, "short", "long", "-o", "out.xlsx", "--fail-on-regression", "5");
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.out, "the variant ran about twice as many iterations"));
    assert_int_equal(count_lines(r.err, "tlcompare: regression: "), 1);
    assert_non_null(strstr(r.err, "tlcompare: regression: long op aten::mul: "));
    run_free(&r);
}

/* The answer first: the summary, then one line for the outputs; -v adds a line per sheet
 * ("1 row", not "1 rows"). */
static void test_summary_first_and_verbose_lines(void **state)
{
    fixture *f = *state;
    ops_report(f, "a", TIMELINE_100, "aten::mm,1000,10,1\n");
    ops_report(f, "b", TIMELINE_100, "aten::mm,2000,10,2\n");
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx");
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "Wrote sheet"));
    const char *wrote = strstr(r.out, "\nWrote out.xlsx: 2 result sheets; -v lists them\n");
    assert_non_null(wrote);
    assert_non_null(strstr(r.out, "\na -> b ("));
    assert_true(strstr(r.out, "\na -> b (") < wrote);
    assert_string_equal(wrote + strlen("\nWrote out.xlsx: 2 result sheets; -v lists them\n"), "");
    run_free(&r);
    r = RUN(f, "a", "b", "-o", "out.xlsx", "-v", "--output_csvs_dir", "csvs");
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "Wrote sheet 'gpu_timeline' with 3 rows \xC3\x97 5 columns\n"
                               "Wrote sheet 'ops_summary' with 1 row \xC3\x97 9 columns\n", 100) == 0);
    assert_non_null(strstr(r.out, "\nWrote out.xlsx: 2 result sheets, and the same as CSVs in csvs\n"));
    run_free(&r);
}

/* Inputs that cannot be right get a warning: an op longer than the whole run (µs taken
 * for ms), a timeline whose parts do not add up. */
static void test_inconsistent_inputs_warn(void **state)
{
    fixture *f = *state;
    ops_report(f, "a", TIMELINE_100, "aten::mm,50000,10,50\n");
    ops_report(f, "b", "type,time ms\nbusy_time,90\nidle_time,10\ntotal_time,120\n", "aten::mm,50000,10,50000\n");
    static const char kernels[] = "Kernel name,Parent cpu_op,Kernel duration (\xc2\xb5s)_sum,"
                                  "Kernel duration (\xc2\xb5s)_count,Kernel duration (\xc2\xb5s)_mean\n";
    char *k = fmt("%sgemm,aten::mm,50000,10,5000\n", kernels);
    put(f, "a/kernel_summary.csv", k);
    free(k);
    k = fmt("%sgemm,aten::mm,150000,10,15000\n", kernels);
    put(f, "b/kernel_summary.csv", k);
    free(k);
    run_result r = RUN(f, "a", "b", "-o", "out.xlsx");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err,
                        "tlcompare: warning: report 'b': gpu_timeline's busy_time + idle_time (90.000 + 10.000 ms) "
                        "is not its total_time (120.000 ms); are its rows from different runs?\n"
                        "tlcompare: warning: report 'b': kernel 'gemm' takes 150.000 ms in kernel_summary, more "
                        "than the report's total GPU time (120.000 ms, gpu_timeline); is a column mislabelled or "
                        "a sheet from another run?\n"
                        "tlcompare: warning: report 'b': op 'aten::mm' takes 50000.000 ms in ops_summary, more "
                        "than the report's total GPU time (120.000 ms, gpu_timeline); is a column mislabelled "
                        "(\xc2\xb5s as ms) or a sheet from another run?\n");
    run_free(&r);
    /* consistent reports: no warning */
    r = RUN(f, "a", "a", "--names", "x", "y", "-o", "out.xlsx");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    run_free(&r);
}

/* 13 reports of 3 rows sharing one key would merge into 3^13 = 1,594,323 rows: refused
 * before anything is built, in milliseconds, naming the sheet and the key (it used to take
 * 4.6 GB and 22 s, and blame the workbook). */
static void test_merge_explosion_refused_early(void **state)
{
    fixture *f = *state;
    const char *args[16];
    char *paths[13];
    /* every way (the reference's pairing): 3^13 rows */
    for (int i = 0; i < 13; i++) {
        paths[i] = fmt("r%02d", i + 1);
        char *rel = fmt("r%02d/gpu_timeline.csv", i + 1);
        put(f, rel, "type,time ms\nbusy_time,1\nbusy_time,2\nbusy_time,3\n");
        free(rel);
        args[i] = paths[i];
    }
    args[13] = "--tracelens-keys";
    args[14] = NULL;
    /* the baseline, on this machine, now: the same thirteen reports with one row each,
     * compared twice as the refusal is made twice below */
    char *one[13];
    const char *base_args[16];
    for (int i = 0; i < 13; i++) {
        one[i] = fmt("one%02d", i + 1);
        char *rel = fmt("one%02d/gpu_timeline.csv", i + 1);
        put(f, rel, "type,time ms\nbusy_time,1\n");
        free(rel);
        base_args[i] = one[i];
    }
    base_args[13] = "--tracelens-keys";
    base_args[14] = NULL;
    double t0 = now_ms();
    for (int k = 0; k < 2; k++) {
        run_result r = run_env(f->dir, NULL, base_args);
        assert_int_equal(r.status, 0);
        run_free(&r);
    }
    double base = now_ms() - t0;
    t0 = now_ms();
    expect_failure_env(f, NULL, 1,
                       "sheet 'gpu_timeline': the key (type='busy_time') is repeated (rows: 3 in 'r01', 3 in "
                       "'r02', 3 in 'r03', 3 in 'r04', ... (13 reports)) and the merge would make 1594323 rows, "
                       "more than a worksheet holds (1048575); refusing",
                       args, 1);
    /* refused before the merge: about the baseline's time (building the rows took 22 s
     * where the baseline takes a few ms); a ratio, so a loaded machine or a sanitizer
     * slows both alike */
    double took = now_ms() - t0;
    if (took > 10 * base + 500)
        fail_msg("refusing took %.0f ms, the baseline %.0f ms", took, base);
    for (int i = 0; i < 13; i++)
        free(one[i]);
    for (int i = 0; i < 13; i++)
        free(paths[i]);
}

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    if (!tlcompare || access(tlcompare, X_OK) != 0) {
        fprintf(stderr, "test_cli: set TLCOMPARE to the tlcompare binary (make unit-test does)\n");
        return 1;
    }
    /* a pipe whose reader is gone must not kill the test runner */
    signal(SIGPIPE, SIG_IGN);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        /* usage errors */
        T(test_usage_no_reports),
        T(test_usage_one_report),
        T(test_usage_unknown_option),
        T(test_usage_names_count_mismatch),
        T(test_usage_trace_options_with_reports),
        T(test_usage_trace_options_with_capture_folders),
        T(test_usage_duplicate_tags),
        T(test_repeated_tags_are_runs),
        T(test_usage_unknown_sheets_group),
        T(test_usage_output_is_an_input),
        /* good paths */
        T(test_help),
        T(test_version),
        T(test_default_tags_are_file_stems),
        T(test_sheets_all_takes_what_the_baseline_has),
        T(test_named_group_missing_in_baseline),
        /* CSV */
        T(test_csv_unterminated_quote),
        T(test_csv_too_many_fields),
        T(test_csv_too_many_fields_counts_physical_lines),
        T(test_csv_fewer_fields_are_missing_cells),
        T(test_csv_crlf_line_ends),
        T(test_csv_cr_line_ends),
        T(test_csv_utf8_bom),
        T(test_csv_invalid_utf8_is_carried_through),
        T(test_csv_nul_byte),
        T(test_csv_empty_file),
        T(test_csv_header_only),
        T(test_csv_multi_megabyte_field),
        T(test_csv_wide_header),
        T(test_csv_directory_without_csvs),
        T(test_report_does_not_exist),
        /* xlsx */
        T(test_xlsx_good_workbook_as_variant),
        T(test_text_cell_in_a_numeric_csv_column_keeps_the_other_diffs),
        T(test_xlsx_cells_past_the_header_get_unique_names),
        T(test_xlsx_not_a_zip),
        T(test_xlsx_truncated_zip),
        T(test_xlsx_damaged_data),
        T(test_xlsx_missing_parts),
        T(test_xlsx_malformed_xml),
        T(test_xlsx_shared_string_out_of_range),
        T(test_xlsx_duplicate_sheet_names),
        T(test_xlsx_absurd_cell_references),
        T(test_xlsx_declared_size_bomb),
        T(test_xlsx_inflated_size_bomb),
        /* resource bombs */
        T(test_duplicate_keys_bound_the_merge),
        T(test_error_quoting_a_line_break_is_one_line),
        T(test_duplicate_keys_bound_the_merge_of_wide_tables),
        T(test_roofline_many_param_columns),
        /* outputs */
        T(test_output_directory_missing_is_made),
        T(test_output_directory_unwritable),
        T(test_output_csv_dir_is_a_file),
        T(test_output_workbook_is_a_directory),
        T(test_output_replaced_whole_on_success),
        /* signals */
        T(test_sigint_while_writing_the_workbook),
        T(test_sigterm_while_writing_the_csvs),
        T(test_sigterm_after_100ms),
        /* answers that make sense on real reports */
        T(test_row_keys_report_against_itself),
        T(test_default_tags_from_directories_and_traces),
        T(test_report_without_tracelens_sheets),
        T(test_noise_floors_and_top),
        T(test_different_numbers_of_iterations),
        T(test_summary_first_and_verbose_lines),
        T(test_inconsistent_inputs_warn),
        T(test_merge_explosion_refused_early),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
