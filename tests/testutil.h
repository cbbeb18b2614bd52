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
#include <unistd.h>

/* Write `text` to a new file at `path` (aborting the test on failure). */
static inline void tt_write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
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

#endif
