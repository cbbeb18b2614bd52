/*
 * zip_read.h - the inflated bytes of one zip entry, read a chunk at a time (for the xlsx
 * reader, whose parts are streamed rather than unpacked whole).
 *
 * Deflated entries are opened raw and inflated with ISA-L (2-3 times zlib's speed); libzip
 * then checks nothing, so the CRC-32 and the size are checked here at the end of the
 * entry.  Other entries (stored, encrypted, other methods) are read through libzip, which
 * checks them itself.  The inflated size is bounded - as the zip directory declares it,
 * before any work, and as actually read - because a few KiB of deflate can expand to many
 * GiB.
 *
 * Errors are not formatted here: a failed call returns -1 (or 0 from open) and leaves the
 * kind in `error` and the detail in `why`, for the caller to name the file and part.
 */
#ifndef TL_ZIP_READ_H
#define TL_ZIP_READ_H

#include <stddef.h>
#include <stdint.h>
#include <zip.h>

/* What went wrong. */
typedef enum tl_zip_in_error {
    TL_ZIP_IN_OK,
    TL_ZIP_IN_OPEN,    /* the entry cannot be opened (why: libzip's message) */
    TL_ZIP_IN_DAMAGED, /* damaged data, a CRC-32 or size mismatch (why: what) */
    TL_ZIP_IN_BOMB,    /* it inflates beyond the bound */
} tl_zip_in_error;

typedef struct tl_zip_in {
    zip_file_t *f;
    int deflate;                  /* inflated here (else read through libzip) */
    struct inflate_state *inf;    /* ~85 KiB, so on the heap */
    unsigned char *raw;           /* compressed bytes read, not yet inflated */
    int raw_eof;                  /* the entry's compressed bytes are all read */
    int ended;                    /* the deflate stream's final block is done */
    int at_end;                   /* the end has been reached and checked */
    uint32_t crc, want_crc;       /* of the bytes so far; the zip's */
    int check_size;
    zip_uint64_t want_size;
    size_t total, limit, chunk;   /* bytes inflated so far; the bound; bytes per read */
    tl_zip_in_error error;
    char why[160];
} tl_zip_in;

/* Open entry `idx` of `zip` for reading, at most `limit` inflated bytes in all, `chunk`
 * bytes per read.  Returns 1, or 0 with in->error set (TL_ZIP_IN_OPEN or TL_ZIP_IN_BOMB,
 * the latter when the directory declares more than `limit`); close it either way. */
int tl_zip_in_open(tl_zip_in *in, zip_t *zip, zip_int64_t idx, size_t limit, size_t chunk);

/* How many bytes to ask for next: a chunk, or one byte past the bound so that passing it
 * is seen exactly. */
size_t tl_zip_in_want(const tl_zip_in *in);

/* Read the next bytes into buf[0..want), want from tl_zip_in_want(): fewer only at the
 * end, where the checks are made.  Returns the count (0 at the end), or -1 with in->error
 * set: damaged data, a checksum or size that does not match, the bound passed. */
zip_int64_t tl_zip_in_read(tl_zip_in *in, void *buf, size_t want);

void tl_zip_in_close(tl_zip_in *in);

#endif
