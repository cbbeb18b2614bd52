/*
 * fuzz_xlsx.c - the xlsx reader on arbitrary workbooks.
 *
 * An input is one of two things:
 *   - a zip archive (it starts with "PK"): used as it is, so that the zip layer (libzip
 *     and our use of it: directory sizes, truncation, bad deflate data) is fuzzed too;
 *   - otherwise a list of parts, each "--- <entry name>\n" followed by its content up to
 *     the next "\n--- " line, which this harness packs into a stored (uncompressed) zip.
 *     A mutation of the XML then reaches the XML parsing instead of failing a checksum.
 * The workbook is opened from an in-memory file (memfd), every sheet it lists is read,
 * and every table that reads is checked and written as CSV.  Failures must carry a
 * message that names the file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "fuzz.h"

#include "write/csv_write.h"
#include "read/xlsx_read.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* A few KiB of deflate can claim GiBs: keep each run quick and small. */
static const tl_xlsx_opts xlfz_opts = {.part_limit = (size_t)16 << 20};

/* ---- a minimal zip writer: stored entries, no extras, no zip64 ---------------------- */

static void xlfz_u16(tl_buf *b, unsigned v)
{
    unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    tl_buf_add(b, c, 2);
}

static void xlfz_u32(tl_buf *b, unsigned long v)
{
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    tl_buf_add(b, c, 4);
}

typedef struct xlfz_part {
    const char *name, *data;
    size_t nname, ndata;
} xlfz_part;

/* Zip the parts, stored, into `out`. */
static void xlfz_zip(const xlfz_part *parts, size_t n, tl_buf *out)
{
    tl_buf dir = {0};
    unsigned long *offsets = calloc(n ? n : 1, sizeof *offsets);

    TL_FUZZ_CHECK(offsets != NULL);
    for (size_t i = 0; i < n; i++) {
        const xlfz_part *p = &parts[i];
        unsigned long crc = crc32(0L, (const Bytef *)p->data, (uInt)p->ndata);
        offsets[i] = (unsigned long)out->len;
        xlfz_u32(out, 0x04034b50); /* local file header */
        xlfz_u16(out, 10);         /* version needed */
        xlfz_u16(out, 0);          /* flags */
        xlfz_u16(out, 0);          /* stored */
        xlfz_u16(out, 0);          /* time */
        xlfz_u16(out, 0x21);       /* date: 1980-01-01 */
        xlfz_u32(out, crc);
        xlfz_u32(out, (unsigned long)p->ndata);
        xlfz_u32(out, (unsigned long)p->ndata);
        xlfz_u16(out, (unsigned)p->nname);
        xlfz_u16(out, 0);
        tl_buf_add(out, p->name, p->nname);
        tl_buf_add(out, p->data, p->ndata);

        xlfz_u32(&dir, 0x02014b50); /* central directory header */
        xlfz_u16(&dir, 20);
        xlfz_u16(&dir, 10);
        xlfz_u16(&dir, 0);
        xlfz_u16(&dir, 0);
        xlfz_u16(&dir, 0);
        xlfz_u16(&dir, 0x21);
        xlfz_u32(&dir, crc);
        xlfz_u32(&dir, (unsigned long)p->ndata);
        xlfz_u32(&dir, (unsigned long)p->ndata);
        xlfz_u16(&dir, (unsigned)p->nname);
        xlfz_u16(&dir, 0); /* extra */
        xlfz_u16(&dir, 0); /* comment */
        xlfz_u16(&dir, 0); /* disk */
        xlfz_u16(&dir, 0); /* internal attributes */
        xlfz_u32(&dir, 0); /* external attributes */
        xlfz_u32(&dir, offsets[i]);
        tl_buf_add(&dir, p->name, p->nname);
    }
    unsigned long dir_offset = (unsigned long)out->len;
    tl_buf_add(out, dir.data ? dir.data : "", dir.len);
    xlfz_u32(out, 0x06054b50); /* end of central directory */
    xlfz_u16(out, 0);
    xlfz_u16(out, 0);
    xlfz_u16(out, (unsigned)n);
    xlfz_u16(out, (unsigned)n);
    xlfz_u32(out, (unsigned long)dir.len);
    xlfz_u32(out, dir_offset);
    xlfz_u16(out, 0);
    tl_buf_free(&dir);
    free(offsets);
}

/* Split "--- name\ncontent\n--- name\ncontent" into parts (at most `max`). */
static size_t xlfz_parts(const char *s, size_t n, xlfz_part *parts, size_t max)
{
    size_t np = 0, i = 0;

    /* Text before the first marker is ignored, so a marker may start the input. */
    while (i < n && np < max) {
        const char *m = NULL;
        for (size_t k = i; k + 4 <= n; k++) {
            if ((k == 0 || s[k - 1] == '\n') && memcmp(s + k, "--- ", 4) == 0) {
                m = s + k;
                break;
            }
        }
        if (!m)
            break;
        const char *name = m + 4, *end = s + n;
        const char *nl = memchr(name, '\n', (size_t)(end - name));
        const char *data = nl ? nl + 1 : end;
        /* the content runs to the next "\n--- " (its newline is the separator's) */
        const char *next = end;
        for (const char *q = data; q + 5 <= end; q++) {
            if (q[0] == '\n' && memcmp(q + 1, "--- ", 4) == 0) {
                next = q;
                break;
            }
        }
        size_t nname = (size_t)((nl ? nl : end) - name);
        if (nname > 0 && nname < 0xFFFF) {
            parts[np].name = name;
            parts[np].nname = nname;
            parts[np].data = data;
            parts[np].ndata = (size_t)(next - data);
            np++;
        }
        i = (size_t)(next - s) + (next < end ? 1 : 0);
    }
    return np;
}

/* ---- the target --------------------------------------------------------------------- */

static int xlfz_fd = -1;
static char xlfz_path[64];

static void xlfz_read_all(tl_xlsx *x)
{
    size_t n = tl_xlsx_sheet_count(x);

    for (size_t i = 0; i < n && i < 64; i++) {
        const char *name = tl_xlsx_sheet_name(x, i);
        TL_FUZZ_CHECK(name != NULL);
        TL_FUZZ_CHECK(tl_xlsx_has_sheet(x, name));

        tl_arena arena;
        tl_error err = {0};
        tl_arena_init(&arena);
        tl_table *t = tl_xlsx_read_sheet(x, name, &arena, &err);
        if (t) {
            tl_fuzz_check_table(t, 1);
            tl_buf csv = {0};
            tl_csv_format(t, &csv);
            tl_buf_free(&csv);
            tl_table_free(t);
        } else {
            TL_FUZZ_CHECK(err.set);
            TL_FUZZ_CHECK(strncmp(err.msg, xlfz_path, strlen(xlfz_path)) == 0);
            TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
        }
        tl_arena_free(&arena);
    }
    TL_FUZZ_CHECK(tl_xlsx_sheet_name(x, n) == NULL);
    TL_FUZZ_CHECK(!tl_xlsx_has_sheet(x, "no such sheet \x01"));
}

int tl_fuzz_xlsx(const uint8_t *data, size_t size)
{
    tl_buf zip = {0};
    const char *bytes = (const char *)data;
    size_t nbytes = size;

    if (xlfz_fd < 0) {
        xlfz_fd = memfd_create("fuzz.xlsx", 0);
        TL_FUZZ_CHECK(xlfz_fd >= 0);
        snprintf(xlfz_path, sizeof xlfz_path, "/proc/self/fd/%d", xlfz_fd);
    }
    if (!(size >= 2 && data[0] == 'P' && data[1] == 'K')) {
        xlfz_part parts[32];
        size_t np = xlfz_parts((const char *)data, size, parts, 32);
        xlfz_zip(parts, np, &zip);
        bytes = zip.data;
        nbytes = zip.len;
    }
    TL_FUZZ_CHECK(ftruncate(xlfz_fd, 0) == 0);
    TL_FUZZ_CHECK(pwrite(xlfz_fd, bytes, nbytes, 0) == (ssize_t)nbytes);
    tl_buf_free(&zip);

    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open_opts(xlfz_path, &xlfz_opts, &err);
    if (x) {
        xlfz_read_all(x);
        tl_xlsx_close(x);
    } else {
        TL_FUZZ_CHECK(err.set);
        TL_FUZZ_CHECK(strncmp(err.msg, xlfz_path, strlen(xlfz_path)) == 0);
        TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
    }
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_xlsx)
