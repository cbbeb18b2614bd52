/*
 * fuzz_open.c - opening a file as a report (tl_report_open): the classification of what
 * the user passed by its first bytes and its name (a workbook, a single CSV sheet, a JSON
 * file that is no trace, an image, a text file, an empty file, ...).
 *
 * Input: a selector byte, then the file's bytes.  The selector's low bits pick the file's
 * name ending (the classification reads it: a text file named .csv is a sheet taken out
 * of its report); the file is written to a private temporary directory and opened.
 *
 * Whatever the bytes: either the file opens as a workbook (and closes), or the open fails
 * with one line that starts with the file's path; a file that opens is no text; a zip
 * archive is always left to the workbook reader (no magic number or text rule may claim
 * it); a text file named .csv is
 * told to pass its directory; the classification never reads past what the file holds.
 */
#include "fuzz.h"

#include "read/open.h"

#include <unistd.h>

static const char *const opfz_ext[] = {".xlsx", ".csv", ".json", ".json.gz", ".txt", ""};
#define OPFZ_NEXT (sizeof opfz_ext / sizeof *opfz_ext)

static char opfz_dir[64];

/* The private directory, made once (and removed when the process ends). */
static void opfz_rmdir(void)
{
    if (opfz_dir[0])
        rmdir(opfz_dir);
}

static const char *opfz_tmpdir(void)
{
    if (!opfz_dir[0]) {
        snprintf(opfz_dir, sizeof opfz_dir, "/tmp/fuzz_open.XXXXXX");
        TL_FUZZ_CHECK(mkdtemp(opfz_dir) != NULL);
        atexit(opfz_rmdir);
    }
    return opfz_dir;
}

/* 1 when every byte of data[0..n) is text as the classification counts it. */
static int opfz_is_text(const uint8_t *d, size_t n)
{
    size_t j = n >= 3 && !memcmp(d, "\xef\xbb\xbf", 3) ? 3 : 0;
    for (; j < n; j++)
        if (!(d[j] >= 0x20 || d[j] == '\t' || d[j] == '\r' || d[j] == '\n'))
            return 0;
    return 1;
}

/* 1 when the message names a kind of file told by its magic number (GIF8 and %PDF- are
 * text, and so is a JPEG's marker as the classification counts bytes). */
static int opfz_magic(const char *msg)
{
    return strstr(msg, "image") || strstr(msg, "document") || strstr(msg, "gzip") || strstr(msg, "Excel") ||
           strstr(msg, "a program");
}

int tl_fuzz_open(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *ext = opfz_ext[data[0] % OPFZ_NEXT];
    data++;
    size--;
    char path[128];
    snprintf(path, sizeof path, "%s/in%s", opfz_tmpdir(), ext);
    FILE *f = fopen(path, "wb");
    TL_FUZZ_CHECK(f != NULL);
    TL_FUZZ_CHECK(fwrite(data, 1, size, f) == size);
    TL_FUZZ_CHECK(fclose(f) == 0);

    tl_report r;
    tl_error err = {0};
    int rc = tl_report_open(&r, path, &err);
    /* the classification looks at the first 512 bytes only */
    size_t head = size < 512 ? size : 512;
    int zip = size >= 4 && !memcmp(data, "PK\x03\x04", 4);
    if (rc == 0) {
        TL_FUZZ_CHECK(!err.set);
        TL_FUZZ_CHECK(r.kind && strcmp(r.kind, "xlsx") == 0);
        /* only a zip archive can be a workbook (libzip finds one by its central directory at
         * the end, even behind a damaged first header); a zip is never all text */
        TL_FUZZ_CHECK(size > 0 && !opfz_is_text(data, size));
        (void)tl_report_has_sheet(&r, "gpu_timeline");
    } else {
        TL_FUZZ_CHECK(rc == -1);
        TL_FUZZ_CHECK(err.set);
        /* one line that names the file first */
        TL_FUZZ_CHECK(strncmp(err.msg, path, strlen(path)) == 0);
        TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
        if (size == 0)
            TL_FUZZ_CHECK(strstr(err.msg, "an empty file") != NULL);
        /* a zip is the workbook reader's to judge: no rule of the classification names it */
        if (zip)
            TL_FUZZ_CHECK(strstr(err.msg, "a text file") == NULL && strstr(err.msg, "image") == NULL &&
                          strstr(err.msg, "single CSV") == NULL);
        else if (size > 0 && opfz_is_text(data, head) && strcmp(ext, ".csv") == 0)
            /* a sheet on its own, unless its first bytes are a known file's magic number */
            TL_FUZZ_CHECK(strstr(err.msg, "pass its directory") != NULL || opfz_magic(err.msg));
        else if (size >= 8 && !memcmp(data, "\x89PNG\r\n\x1a\n", 8))
            TL_FUZZ_CHECK(strstr(err.msg, "a PNG image") != NULL);
    }
    tl_report_close(&r);
    unlink(path);
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_open)
