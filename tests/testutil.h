/*
 * testutil.h - shared helpers for the cmocka unit tests.
 */
#ifndef TL_TESTUTIL_H
#define TL_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* `text` as one gzip member into out (cap bytes): its length. */
static inline size_t tt_gzip(const char *text, size_t n, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t got = cap - z.avail_out;
    deflateEnd(&z);
    return got;
}

/* Write `text` to a new file at `path` (aborting the test on failure). */
static inline void tt_write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* 1 in a build with AddressSanitizer (gcc's or clang's), whose memory figures mean
 * nothing for a test's bound; 0 otherwise. */
#if defined(__SANITIZE_ADDRESS__)
#define TT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_UNDER_ASAN 1
#endif
#endif
#ifndef TT_UNDER_ASAN
#define TT_UNDER_ASAN 0
#endif

/* The next number of a fixed-seed generator (xorshift64*: *state is its state, never 0),
 * so that a failure repeats. */
static inline uint64_t tt_rng(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1Du;
}

/* The folder of the programs under test into dir[n]: that of $TLCOMPARE (set by make
 * unit-test), else `fallback` (when not NULL; dir is left as it is otherwise). */
static inline void tt_tool_dir(char *dir, size_t n, const char *fallback)
{
    const char *tl = getenv("TLCOMPARE");
    const char *slash = tl ? strrchr(tl, '/') : NULL;
    if (tl)
        snprintf(dir, n, "%.*s", slash ? (int)(slash - tl) : 1, slash ? tl : ".");
    else if (fallback)
        snprintf(dir, n, "%s", fallback);
}

/* A fresh temporary directory; the caller removes it with tt_rmrf. */
static inline char *tt_tmpdir(void)
{
    char tmpl[] = "/tmp/tltest.XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static inline void tt_rmrf(const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The whole file dir/name, NUL-terminated (malloc'd), or NULL when it cannot be opened. */
static inline char *tt_slurp_in(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, fp), (size_t)n);
    s[n] = '\0';
    fclose(fp);
    return s;
}

/* Run `prog args` in dir, stdout to out.txt and stderr to err.txt there: its exit status,
 * or -1 when it did not exit. */
static inline int tt_run_in(const char *dir, const char *prog, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >out.txt 2>err.txt", dir, prog, args);
    int ws = system(cmd);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* tt_run_in that must exit with `want`: another status shows the command and its stderr
 * (err.txt) before the assertion, so that a run that fails only somewhere else says why. */
static inline void tt_run_want_in(const char *dir, const char *prog, const char *args, int want)
{
    int rc = tt_run_in(dir, prog, args);
    if (rc != want) {
        char *err = tt_slurp_in(dir, "err.txt");
        print_message("'%s' %s exited %d, not %d; its stderr:\n%s\n", prog, args, rc, want, err ? err : "(none)");
        free(err);
    }
    assert_int_equal(rc, want);
}

/* tt_run_in that must succeed. */
static inline void tt_run_ok_in(const char *dir, const char *prog, const char *args)
{
    tt_run_want_in(dir, prog, args, 0);
}

/* Stretch every GPU event of trace `in` (in folder `dir`) by 1.1 into `out`: dur, and with
 * `ts` its start from the first GPU event's too (the whole GPU timeline slower); by
 * python3. */
static inline void tt_stretch_gpu(const char *dir, const char *in, const char *out, int ts)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && python3 -c \"\n"
             "import json\n"
             "t = json.load(open('%s'))\n"
             "g = [e for e in t['traceEvents'] if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')]\n"
             "t0 = min(e['ts'] for e in g)\n"
             "for e in g:\n"
             "    e['dur'] = e['dur'] * 1.1\n"
             "    if %d: e['ts'] = t0 + (e['ts'] - t0) * 1.1\n"
             "json.dump(t, open('%s', 'w'))\n\"",
             dir, in, ts, out);
    assert_int_equal(system(cmd), 0);
}

#endif
