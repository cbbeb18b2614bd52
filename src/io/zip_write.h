/*
 * zip_write.h - a minimal ZIP archive writer, enough for an OOXML package.
 *
 * Every entry is compressed in memory before it is written (whole, or streamed in
 * pieces into a growing buffer), so its size and CRC are known before its local header
 * is written: no data descriptors, no seeking, the archive is written front to back
 * through one buffered FILE*.  Entries are raw
 * DEFLATE (method 8) made with ISA-L's igzip, or stored (method 0) when deflating does
 * not make them smaller.  ZIP64 fields are written exactly where the classic 16/32-bit
 * fields overflow (an entry or offset past 4 GiB, more than 65,534 entries).
 *
 * Compression is separate from writing so that parts can be compressed on several
 * threads (one tl_zip_compressor each) and written in order by one.
 */
#ifndef TL_ZIP_WRITE_H
#define TL_ZIP_WRITE_H

#include "base/util.h"

#include <stddef.h>
#include <stdint.h>

/* The DEFLATE level of the parts (ISA-L's 0, 1 or 3; zip_write.c says why 1). */
#define TL_ZIP_LEVEL 1

/* One entry's data, ready to be written: compressed (or stored) bytes and what the
 * headers say about them. */
typedef struct tl_zip_blob {
    unsigned char *data; /* malloc'd (NULL when size is 0) */
    size_t size;         /* bytes in data */
    uint64_t raw_size;   /* the entry's uncompressed size */
    uint32_t crc;        /* CRC-32 of the uncompressed bytes */
    uint16_t method;     /* 0 stored, 8 deflated */
} tl_zip_blob;

/* A DEFLATE compressor: one per thread. Out of memory ends the process (util.h). */
typedef struct tl_zip_compressor tl_zip_compressor;

tl_zip_compressor *tl_zip_compressor_new(int level);
void tl_zip_compressor_free(tl_zip_compressor *c);

/* Compress data[0..len) into *out (deflated, or stored when that is not larger). */
void tl_zip_compress(tl_zip_compressor *c, const void *data, size_t len, tl_zip_blob *out);

/* The same for a part made piece by piece: begin, write the pieces in order (each may be
 * reused as soon as the call returns), finish.  The part is always deflated. */
void tl_zip_stream_begin(tl_zip_compressor *c, tl_zip_blob *out);
void tl_zip_stream_write(tl_zip_compressor *c, const void *data, size_t len);
void tl_zip_stream_finish(tl_zip_compressor *c);
void tl_zip_blob_free(tl_zip_blob *b);

/*
 * A part compressed in pieces, each on its own (on any thread), then written as one
 * entry: every piece but the last ends with tl_zip_stream_finish_piece() (a sync flush,
 * so that the next piece's DEFLATE blocks may follow it), the last with
 * tl_zip_stream_finish(); tl_zip_add_pieces() writes the n pieces in order.
 */
void tl_zip_stream_finish_piece(tl_zip_compressor *c);

/* ---- the archive ---------------------------------------------------------------------- */

typedef struct tl_zip tl_zip;

/* Create (truncate) the archive at `path`.  NULL and *err set when it cannot be opened. */
tl_zip *tl_zip_create(const char *path, tl_error *err);

/* Append an entry named `name` (ASCII or UTF-8, at most 65,535 bytes) from a blob.
 * Returns 0, or -1 with *err set (naming the archive): the archive is then unusable
 * except for tl_zip_abort(). */
int tl_zip_add_blob(tl_zip *z, const char *name, const tl_zip_blob *b, tl_error *err);

/* Append an entry named `name` whose DEFLATE stream is the n pieces' bytes in order (see
 * tl_zip_stream_finish_piece), without joining them first; frees the pieces.  Returns as
 * tl_zip_add_blob. */
int tl_zip_add_pieces(tl_zip *z, const char *name, tl_zip_blob *pieces, size_t n, tl_error *err);

/* Compress data[0..len) with the archive's own compressor and append it. */
int tl_zip_add(tl_zip *z, const char *name, const void *data, size_t len, tl_error *err);

/* Write the central directory and close the file.  Frees z whatever happens.
 * Returns 0, or -1 with *err set. */
int tl_zip_close(tl_zip *z, tl_error *err);

/* Close the file without finishing the archive and free z (after a failure). */
void tl_zip_abort(tl_zip *z);

#endif
