/*
 * gzip_stream.h - read a file's bytes, inflating them on the way when the file is gzip.
 *
 * Profiler traces come plain or gzip-compressed, and only their content says which (the
 * name may lie), so a reader opens every trace through this one stream: the gzip magic
 * 1f 8b at the start switches it to ISA-L's inflate (2-3x zlib's speed); anything else is
 * read as it is.  Concatenated gzip members are read one after the other, as gzip(1) does.
 * A gzip regular file is inflated ahead on a helper thread (2 MiB of text at most); a pipe,
 * a stream over memory, or plain bytes, is read as it is asked for.  One thread reads a
 * stream.
 */
#ifndef TL_GZIP_STREAM_H
#define TL_GZIP_STREAM_H

#include "base/util.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tl_instream tl_instream;

/* Open `path` for reading (NULL with *err set: "<path>: cannot open: ..."). */
tl_instream *tl_instream_open(const char *path, tl_error *err);

/* The same over n bytes in memory (not copied: they must outlive the stream); `name`
 * is what messages call it. */
tl_instream *tl_instream_open_mem(const void *data, size_t n, const char *name);

/* 1 when the stream inflates gzip data. */
int tl_instream_is_gzip(const tl_instream *s);

/*
 * Read up to n bytes into buf.  Returns how many (fewer than n only when the data ends;
 * 0 at the end), or -1 with *err set: a read error, damaged or truncated gzip data, a CRC
 * or length that does not match.  The message names the file and the compressed byte
 * offset where the problem was found.
 */
long tl_instream_read(tl_instream *s, void *buf, size_t n, tl_error *err);

/* The size in bytes of the text under `s` when it can be read from any offset (a plain
 * regular file, or plain bytes in memory: what tl_instream_seek accepts), else 0. */
uint64_t tl_instream_seekable_size(const tl_instream *s);

/* About how many bytes of text the stream holds, to size what is read from it by, or 0
 * when nothing is known: a plain file's or memory's size; for gzip data, its last
 * member's length from the trailer (modulo 4 GiB, and never more than deflate could
 * make of the file's size), which may be wrong in either direction.  Only a hint. */
uint64_t tl_instream_size_hint(const tl_instream *s);

/* Go to byte `off` of the text: the next read starts there.  A seekable stream
 * (tl_instream_seekable_size) goes anywhere; a gzip stream only forward, inflating the
 * bytes it passes over.  Returns 0, or -1 with *err set (not seekable, backward in gzip
 * data, past the end, a failed lseek or inflate). */
int tl_instream_seek(tl_instream *s, uint64_t off, tl_error *err);

/* A second stream over the same bytes as `s`, read independently of it (a file is read
 * at explicit offsets, never moving the first stream's), for a second thread: a seekable
 * stream, or gzip data in memory or in a regular file (from its start, inflated by the
 * thread that reads it).  NULL with *err set when `s` is neither or the file cannot be
 * shared. */
tl_instream *tl_instream_reopen(const tl_instream *s, tl_error *err);

/* Whether a gzip file is inflated ahead on a helper thread (by default it is, from the
 * first read on) or by the thread that reads it; it can be turned on again later, not
 * off once the helper runs. */
void tl_instream_set_ahead(tl_instream *s, int on);

/* The text offset from which the helper inflated ahead, or UINT64_MAX when there was no
 * helper (a plain file, a stream in memory, the helper turned off throughout). */
uint64_t tl_instream_ahead_from(const tl_instream *s);

/* Put back the last n bytes read (buf holds them): the next reads hand them out again,
 * before anything else, and the stream's offset moves back by n. */
void tl_instream_unread(tl_instream *s, const void *buf, size_t n);

/* Bytes of the file consumed so far (compressed bytes for gzip; with the helper, as far
 * as it has inflated). */
uint64_t tl_instream_raw_offset(const tl_instream *s);

void tl_instream_close(tl_instream *s);

#endif
