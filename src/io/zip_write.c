/*
 * zip_write.c - a minimal ZIP writer (see zip_write.h).
 *
 * Layout written (APPNOTE.TXT, little-endian throughout):
 *
 *   for each entry:  local file header, name, [ZIP64 extra], data
 *   central directory: one header per entry, name, [ZIP64 extra]
 *   [ZIP64 end of central directory record + locator]
 *   end of central directory record
 *
 * The ZIP64 extra field (id 0x0001) carries, in this order, only the 64-bit values whose
 * classic field holds 0xFFFFFFFF: uncompressed size, compressed size, local header
 * offset.  In a local header both sizes go there when either overflows, as the format
 * requires.  The ZIP64 end records are written when the entry count, the directory size
 * or its offset do not fit the classic end record.
 *
 * Why ISA-L's igzip at level 1 (TL_ZIP_LEVEL): compression is most of the cost of a
 * workbook.  On a 14.6 MB worksheet of the benchmark (bench/bench_xlsx.c: long kernel
 * names, shape tuples, full-precision numbers), CPU-time throughput and ratio were
 *     ISA-L      level 0: 561 MB/s, x3.67   level 1: 567 MB/s, x4.61   level 3: 321 MB/s, x4.74
 *     libdeflate level 1: 277 MB/s, x4.71   level 2: 188 MB/s, x4.74   level 3: 169 MB/s, x4.93
 *                level 6:  89 MB/s, x5.71
 * ISA-L level 1 is twice as fast as libdeflate's fastest level for a file ~2% larger, and
 * with it a 10 M-cell workbook takes ~2.2 s of CPU instead of ~3.4 s.  A workbook is
 * written once and read a few times, so the fastest level that still compresses well
 * wins; level 0 is no faster here and compresses markedly less.
 */
#include "io/zip_write.h"

#include "io/direct_out.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG 0x06054b50u
#define ZIP64_END_SIG 0x06064b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u
#define ZIP_MAX32 0xFFFFFFFFu
#define ZIP_MAX16 0xFFFFu
#define ZIP_CHUNK ((size_t)1 << 30) /* ISA-L counts in 32 bits: feed it at most 1 GiB at a time */

struct tl_zip_compressor {
    struct isal_zstream stream; /* its state is large (~300 KiB): one per thread, reused */
    int level;
    unsigned char *level_buf;
    uint32_t level_buf_size;
    tl_zip_blob *out;           /* the part being compressed by the tl_zip_stream_* calls */
    size_t cap;                 /* bytes allocated at out->data */
};

/* What the central directory needs to know about one entry. */
typedef struct zip_entry {
    char *name;
    uint64_t raw_size, size, offset;
    uint32_t crc;
    uint16_t method;
} zip_entry;

struct tl_zip {
    FILE *f;
    char *path;
    uint64_t offset;     /* bytes written so far */
    zip_entry *entries;
    size_t nentries, cap;
    uint16_t dos_time, dos_date;
    tl_zip_compressor *comp; /* for tl_zip_add, made on first use */
    int failed;
};

/* ---- compression ------------------------------------------------------------------------ */

tl_zip_compressor *tl_zip_compressor_new(int level)
{
    tl_zip_compressor *c = tl_xcalloc(1, sizeof *c);
    c->level = level < 0 ? 0 : level > 3 ? 3 : level == 2 ? 1 : level; /* ISA-L has 0, 1 and 3 */
    c->level_buf_size = c->level == 0 ? 0 : c->level == 1 ? ISAL_DEF_LVL1_DEFAULT : ISAL_DEF_LVL3_DEFAULT;
    c->level_buf = c->level_buf_size ? tl_xmalloc(c->level_buf_size) : NULL;
    return c;
}

void tl_zip_compressor_free(tl_zip_compressor *c)
{
    if (!c)
        return;
    free(c->level_buf);
    free(c);
}

void tl_zip_stream_begin(tl_zip_compressor *c, tl_zip_blob *out)
{
    struct isal_zstream *s = &c->stream;
    memset(out, 0, sizeof *out);
    out->method = 8;
    c->out = out;
    c->cap = 0;
    isal_deflate_init(s);
    s->level = (uint32_t)c->level;
    s->level_buf = c->level_buf;
    s->level_buf_size = c->level_buf_size;
    s->gzip_flag = IGZIP_DEFLATE;
    s->flush = NO_FLUSH;
    s->end_of_stream = 0;
    s->avail_in = 0;
    s->avail_out = 0;
}

/* One call of the compressor into the output, grown as needed. */
static void deflate_step(tl_zip_compressor *c)
{
    struct isal_zstream *s = &c->stream;
    tl_zip_blob *out = c->out;
    if (c->cap - out->size < 4096) {
        size_t want = c->cap < 65536 ? 65536 : c->cap * 2;
        out->data = tl_xrealloc(out->data, want);
        /* the compressor fills the new room as it goes: its pages mapped in one call */
        tl_populate(out->data + c->cap, want - c->cap);
        c->cap = want;
    }
    size_t room = c->cap - out->size;
    s->next_out = out->data + out->size;
    s->avail_out = (uint32_t)(room < ZIP_CHUNK ? room : ZIP_CHUNK);
    uint32_t before = s->avail_out;
    if (isal_deflate(s) != COMP_OK) {
        /* Only bad parameters fail, and ours are fixed: a programming error. */
        fprintf(stderr, "tlcompare: internal error: deflate failed\n");
        abort();
    }
    out->size += before - s->avail_out;
}

/* Run the compressor over what it was given (and, when `last`, to the end of the
 * stream). */
static void zip_stream_run(tl_zip_compressor *c, int last)
{
    struct isal_zstream *s = &c->stream;
    while (last ? s->internal_state.state != ZSTATE_END : s->avail_in != 0)
        deflate_step(c);
}

void tl_zip_stream_write(tl_zip_compressor *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->out->crc = crc32_gzip_refl(c->out->crc, p, len);
    c->out->raw_size += len;
    while (len) {
        size_t n = len < ZIP_CHUNK ? len : ZIP_CHUNK;
        c->stream.next_in = (uint8_t *)(uintptr_t)p;
        c->stream.avail_in = (uint32_t)n;
        zip_stream_run(c, 0); /* ISA-L takes all of it (keeping what it needs): p is free again */
        p += n;
        len -= n;
    }
}

void tl_zip_stream_finish_piece(tl_zip_compressor *c)
{
    struct isal_zstream *s = &c->stream;
    tl_zip_blob *out = c->out;
    s->avail_in = 0;
    s->flush = SYNC_FLUSH; /* all input out, then an empty stored block: byte-aligned */
    do
        deflate_step(c);
    while (s->internal_state.state != ZSTATE_NEW_HDR);
    out->data = tl_xrealloc(out->data, out->size ? out->size : 1);
    c->out = NULL;
}

void tl_zip_stream_finish(tl_zip_compressor *c)
{
    tl_zip_blob *out = c->out;
    c->stream.avail_in = 0;
    c->stream.end_of_stream = 1;
    zip_stream_run(c, 1);
    if (out->raw_size == 0) {
        free(out->data);
        out->data = NULL;
        out->size = 0;
        out->method = 0;
    } else {
        out->data = tl_xrealloc(out->data, out->size); /* shrinks in place (or by mremap) */
    }
    c->out = NULL;
}

void tl_zip_compress(tl_zip_compressor *c, const void *data, size_t len, tl_zip_blob *out)
{
    tl_zip_stream_begin(c, out);
    tl_zip_stream_write(c, data, len);
    tl_zip_stream_finish(c);
    if (out->size >= len && len) {
        /* Not smaller (tiny parts): store the bytes as they are. */
        out->data = tl_xrealloc(out->data, len);
        memcpy(out->data, data, len);
        out->size = len;
        out->method = 0;
    }
}

void tl_zip_blob_free(tl_zip_blob *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

/* ---- little-endian fields ------------------------------------------------------------------ */

static unsigned char *put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v & 0xFF);
    p[1] = (unsigned char)((v >> 8) & 0xFF);
    return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 4;
}

static unsigned char *put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 8;
}

static uint32_t clamp32(uint64_t v) { return v >= ZIP_MAX32 ? ZIP_MAX32 : (uint32_t)v; }

/* ---- the archive ------------------------------------------------------------------------- */

static int zip_write(tl_zip *z, const void *p, size_t n, tl_error *err)
{
    if (z->failed) {
        tl_error_set(err, "%s: cannot write the workbook", z->path);
        return -1;
    }
    /* the file writes whole blocks of its own (io/direct_out), whatever the size given */
    if (n && fwrite(p, 1, n, z->f) != n) {
        tl_error_set(err, "%s: cannot write: %s", z->path, strerror(errno ? errno : EIO));
        z->failed = 1;
        return -1;
    }
    z->offset += n;
    return 0;
}

tl_zip *tl_zip_create(const char *path, tl_error *err)
{
    FILE *f = tl_direct_fopen(path); /* buffers its own writes */
    if (!f) {
        tl_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        return NULL;
    }
    tl_zip *z = tl_xcalloc(1, sizeof *z);
    z->f = f;
    z->path = tl_xstrdup(path);

    /* MS-DOS date and time of the entries: now, local time (as zip tools do). */
    time_t now = tl_output_time();
    struct tm tm;
    if (now != (time_t)-1 && localtime_r(&now, &tm) && tm.tm_year >= 80) {
        z->dos_time = (uint16_t)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
        z->dos_date = (uint16_t)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
    } else {
        z->dos_date = (uint16_t)(1 << 5 | 1); /* 1980-01-01 */
    }
    return z;
}

/* General-purpose flag: bit 11 says the name is UTF-8 (set only when it is not ASCII). */
static unsigned name_flags(const char *name)
{
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        if (*s >= 0x80)
            return 1u << 11;
    return 0;
}

/* Append entry `name`: its headers say what b says (sizes, CRC, method), its data is the
 * n pieces' bytes in order (b itself, or the pieces of one DEFLATE stream). */
static int add_entry(tl_zip *z, const char *name, const tl_zip_blob *b, const tl_zip_blob *pieces, size_t n,
                     tl_error *err)
{
    size_t nlen = strlen(name);
    if (nlen > ZIP_MAX16) {
        tl_error_set(err, "%s: entry name too long for a zip archive", z->path);
        z->failed = 1;
        return -1;
    }
    int zip64 = b->raw_size >= ZIP_MAX32 || b->size >= ZIP_MAX32;
    unsigned char hdr[30 + 20], *p = hdr;
    p = put32(p, ZIP_LOCAL_SIG);
    p = put16(p, zip64 ? 45 : 20);        /* version needed to extract */
    p = put16(p, name_flags(name));
    p = put16(p, b->method);
    p = put16(p, z->dos_time);
    p = put16(p, z->dos_date);
    p = put32(p, b->crc);
    p = put32(p, zip64 ? ZIP_MAX32 : (uint32_t)b->size);
    p = put32(p, zip64 ? ZIP_MAX32 : (uint32_t)b->raw_size);
    p = put16(p, (unsigned)nlen);
    p = put16(p, zip64 ? 20 : 0);         /* extra field length */
    unsigned char extra[20], *e = extra;
    if (zip64) {
        e = put16(e, 0x0001);
        e = put16(e, 16);
        e = put64(e, b->raw_size);
        e = put64(e, (uint64_t)b->size);
    }

    TL_GROW(z->entries, z->cap, z->nentries + 1);
    zip_entry *ent = &z->entries[z->nentries];
    ent->offset = z->offset;
    if (zip_write(z, hdr, (size_t)(p - hdr), err) != 0 || zip_write(z, name, nlen, err) != 0 ||
        zip_write(z, extra, (size_t)(e - extra), err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (zip_write(z, pieces[i].data, pieces[i].size, err) != 0)
            return -1;
    ent->name = tl_xstrdup(name);
    ent->raw_size = b->raw_size;
    ent->size = b->size;
    ent->crc = b->crc;
    ent->method = b->method;
    z->nentries++;
    return 0;
}

int tl_zip_add_blob(tl_zip *z, const char *name, const tl_zip_blob *b, tl_error *err)
{
    return add_entry(z, name, b, b, 1, err);
}

int tl_zip_add_pieces(tl_zip *z, const char *name, tl_zip_blob *pieces, size_t n, tl_error *err)
{
    tl_zip_blob whole = {.method = 8};
    for (size_t i = 0; i < n; i++) {
        whole.size += pieces[i].size;
        /* the CRC of the whole from the pieces' (zlib's combination: the same CRC-32) */
        whole.crc = i == 0 ? pieces[i].crc
                           : (uint32_t)crc32_combine(whole.crc, pieces[i].crc, (z_off_t)pieces[i].raw_size);
        whole.raw_size += pieces[i].raw_size;
    }
    int rc = add_entry(z, name, &whole, pieces, n, err);
    for (size_t i = 0; i < n; i++)
        tl_zip_blob_free(&pieces[i]);
    return rc;
}

int tl_zip_add(tl_zip *z, const char *name, const void *data, size_t len, tl_error *err)
{
    if (!z->comp)
        z->comp = tl_zip_compressor_new(TL_ZIP_LEVEL);
    tl_zip_blob b;
    tl_zip_compress(z->comp, data, len, &b);
    int rc = tl_zip_add_blob(z, name, &b, err);
    tl_zip_blob_free(&b);
    return rc;
}

static int zip_write_central(tl_zip *z, const zip_entry *ent, tl_error *err)
{
    size_t nlen = strlen(ent->name);
    unsigned char hdr[46], *p = hdr;
    unsigned char extra[4 + 24], *e = extra + 4;
    /* Only the overflowing values go into the ZIP64 extra field, in this order. */
    if (ent->raw_size >= ZIP_MAX32)
        e = put64(e, ent->raw_size);
    if (ent->size >= ZIP_MAX32)
        e = put64(e, ent->size);
    if (ent->offset >= ZIP_MAX32)
        e = put64(e, ent->offset);
    size_t elen = (size_t)(e - extra) - 4;
    if (elen) {
        put16(extra, 0x0001);
        put16(extra + 2, (unsigned)elen);
        elen += 4;
    }
    int zip64 = elen != 0 || ent->raw_size >= ZIP_MAX32 || ent->size >= ZIP_MAX32;
    p = put32(p, ZIP_CENTRAL_SIG);
    p = put16(p, zip64 ? 45 : 20);        /* version made by: MS-DOS attributes */
    p = put16(p, zip64 ? 45 : 20);        /* version needed */
    p = put16(p, name_flags(ent->name));
    p = put16(p, ent->method);
    p = put16(p, z->dos_time);
    p = put16(p, z->dos_date);
    p = put32(p, ent->crc);
    p = put32(p, clamp32(ent->size));
    p = put32(p, clamp32(ent->raw_size));
    p = put16(p, (unsigned)nlen);
    p = put16(p, (unsigned)elen);
    p = put16(p, 0);                      /* comment length */
    p = put16(p, 0);                      /* disk number start */
    p = put16(p, 0);                      /* internal attributes */
    p = put32(p, 0);                      /* external attributes */
    p = put32(p, clamp32(ent->offset));
    if (zip_write(z, hdr, (size_t)(p - hdr), err) != 0 || zip_write(z, ent->name, nlen, err) != 0 ||
        zip_write(z, extra, elen, err) != 0)
        return -1;
    return 0;
}

static int zip_write_end(tl_zip *z, uint64_t cd_offset, uint64_t cd_size, tl_error *err)
{
    uint64_t n = z->nentries;
    int zip64 = n >= ZIP_MAX16 || cd_offset >= ZIP_MAX32 || cd_size >= ZIP_MAX32;
    if (zip64) {
        unsigned char rec[56 + 20], *p = rec;
        uint64_t rec_offset = z->offset;
        p = put32(p, ZIP64_END_SIG);
        p = put64(p, 44);                 /* size of the rest of this record */
        p = put16(p, 45);                 /* version made by */
        p = put16(p, 45);                 /* version needed */
        p = put32(p, 0);                  /* this disk */
        p = put32(p, 0);                  /* disk of the central directory */
        p = put64(p, n);                  /* entries on this disk */
        p = put64(p, n);                  /* entries in all */
        p = put64(p, cd_size);
        p = put64(p, cd_offset);
        p = put32(p, ZIP64_LOCATOR_SIG);
        p = put32(p, 0);                  /* disk of the ZIP64 end record */
        p = put64(p, rec_offset);
        p = put32(p, 1);                  /* disks in all */
        if (zip_write(z, rec, (size_t)(p - rec), err) != 0)
            return -1;
    }
    unsigned char end[22], *p = end;
    p = put32(p, ZIP_END_SIG);
    p = put16(p, 0);
    p = put16(p, 0);
    p = put16(p, n >= ZIP_MAX16 ? ZIP_MAX16 : (unsigned)n);
    p = put16(p, n >= ZIP_MAX16 ? ZIP_MAX16 : (unsigned)n);
    p = put32(p, clamp32(cd_size));
    p = put32(p, clamp32(cd_offset));
    p = put16(p, 0);                      /* comment length */
    return zip_write(z, end, (size_t)(p - end), err);
}

static void zip_free(tl_zip *z)
{
    for (size_t i = 0; i < z->nentries; i++)
        free(z->entries[i].name);
    free(z->entries);
    tl_zip_compressor_free(z->comp);
    free(z->path);
    free(z);
}

int tl_zip_close(tl_zip *z, tl_error *err)
{
    if (!z)
        return -1;
    int rc = 0;
    uint64_t cd_offset = z->offset;
    for (size_t i = 0; i < z->nentries && rc == 0; i++)
        rc = zip_write_central(z, &z->entries[i], err);
    if (rc == 0)
        rc = zip_write_end(z, cd_offset, z->offset - cd_offset, err);
    if (rc == 0 && fflush(z->f) != 0) {
        tl_error_set(err, "%s: cannot write: %s", z->path, strerror(errno));
        rc = -1;
    }
    if (fclose(z->f) != 0 && rc == 0) {
        tl_error_set(err, "%s: cannot write: %s", z->path, strerror(errno));
        rc = -1;
    }
    zip_free(z);
    return rc;
}

void tl_zip_abort(tl_zip *z)
{
    if (!z)
        return;
    fclose(z->f);
    zip_free(z);
}
