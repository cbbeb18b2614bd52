/*
 * zip_read.c - one zip entry's inflated bytes, a chunk at a time (see zip_read.h).
 */
#include "io/zip_read.h"

#include "base/util.h"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZIP_RAW_CHUNK (64u * 1024u) /* compressed bytes read from the zip at a time */

static void zin_damaged(tl_zip_in *in, const char *what)
{
    in->error = TL_ZIP_IN_DAMAGED;
    snprintf(in->why, sizeof in->why, "%s", what);
}

int tl_zip_in_open(tl_zip_in *in, zip_t *zip, zip_int64_t idx, size_t limit, size_t chunk)
{
    zip_stat_t st;
    int raw;

    memset(in, 0, sizeof *in);
    in->limit = limit;
    in->chunk = chunk;
    zip_stat_init(&st);
    if (zip_stat_index(zip, (zip_uint64_t)idx, 0, &st) != 0)
        st.valid = 0; /* zip_fopen_index will say what is wrong */
    /* The bound is checked against the declared size first: cheap, before any work. */
    if ((st.valid & ZIP_STAT_SIZE) && st.size > in->limit) {
        in->error = TL_ZIP_IN_BOMB;
        return 0;
    }
    raw = (st.valid & ZIP_STAT_COMP_METHOD) && (st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
          (st.valid & ZIP_STAT_CRC) && st.encryption_method == ZIP_EM_NONE &&
          st.comp_method == ZIP_CM_DEFLATE;
    in->deflate = raw;
    in->f = zip_fopen_index(zip, (zip_uint64_t)idx, raw ? ZIP_FL_COMPRESSED : 0);
    if (!in->f) {
        in->error = TL_ZIP_IN_OPEN;
        snprintf(in->why, sizeof in->why, "%s", zip_error_strerror(zip_get_error(zip)));
        return 0;
    }
    in->want_crc = st.crc;
    in->check_size = (st.valid & ZIP_STAT_SIZE) != 0;
    in->want_size = st.size;
    if (in->deflate) {
        in->inf = tl_xmalloc(sizeof *in->inf);
        isal_inflate_init(in->inf);
        in->inf->crc_flag = ISAL_DEFLATE; /* a zip entry is raw deflate: no header, no trailer */
        in->raw = tl_xmalloc(ZIP_RAW_CHUNK);
    }
    return 1;
}

void tl_zip_in_close(tl_zip_in *in)
{
    if (in->f)
        zip_fclose(in->f);
    free(in->inf);
    free(in->raw);
    memset(in, 0, sizeof *in);
}

size_t tl_zip_in_want(const tl_zip_in *in)
{
    size_t room = in->limit - in->total;
    return room < in->chunk ? room + 1 : in->chunk;
}

/* zip_fread until `n` bytes or the end.  Returns the count, or -1 with the error set. */
static zip_int64_t zin_fread(tl_zip_in *in, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        zip_int64_t k = zip_fread(in->f, (char *)buf + got, n - got);
        if (k < 0) {
            zin_damaged(in, zip_file_strerror(in->f));
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (zip_int64_t)got;
}

/* Inflate into buf[0..want), until it is full or the stream ends.  Returns the count, or
 * -1 with the error set. */
static zip_int64_t zin_inflate(tl_zip_in *in, unsigned char *buf, size_t want)
{
    struct inflate_state *s = in->inf;

    s->next_out = buf;
    s->avail_out = (uint32_t)want;
    while (s->avail_out > 0 && !in->ended) {
        uint32_t in_before, out_before;
        int r;

        if (s->avail_in == 0 && !in->raw_eof) {
            zip_int64_t k = zin_fread(in, in->raw, ZIP_RAW_CHUNK);
            if (k < 0)
                return -1;
            in->raw_eof = k < (zip_int64_t)ZIP_RAW_CHUNK;
            s->next_in = in->raw;
            s->avail_in = (uint32_t)k;
        }
        in_before = s->avail_in;
        out_before = s->avail_out;
        r = isal_inflate(s);
        if (r < 0 || r == ISAL_NEED_DICT) {
            zin_damaged(in, "the compressed data is invalid");
            return -1;
        }
        if (s->block_state == ISAL_BLOCK_FINISH) {
            in->ended = 1;
        } else if (s->avail_in == in_before && s->avail_out == out_before) {
            /* isal_inflate returns only with its input used up or its output full, so no
             * progress at all means the input has run out with the stream unfinished. */
            zin_damaged(in, "the compressed data ends early");
            return -1;
        }
    }
    return (zip_int64_t)(want - s->avail_out);
}

zip_int64_t tl_zip_in_read(tl_zip_in *in, void *buf, size_t want)
{
    zip_int64_t n;

    if (in->at_end)
        return 0;
    n = in->deflate ? zin_inflate(in, buf, want) : zin_fread(in, buf, want);
    if (n < 0)
        return -1;
    if (in->deflate && n > 0)
        in->crc = crc32_gzip_refl(in->crc, buf, (uint64_t)n);
    in->total += (size_t)n;
    if (in->total > in->limit) {
        in->error = TL_ZIP_IN_BOMB;
        return -1;
    }
    if ((size_t)n < want) {
        in->at_end = 1;
        if (!in->deflate)
            return n; /* libzip has checked the CRC-32 and the size */
        /* A damaged archive must not read as silently wrong data. */
        if (in->crc != in->want_crc) {
            in->error = TL_ZIP_IN_DAMAGED;
            snprintf(in->why, sizeof in->why, "CRC-32 mismatch (the zip says %08" PRIx32
                     ", the data gives %08" PRIx32 ")", in->want_crc, in->crc);
            return -1;
        }
        if (in->check_size && in->total != in->want_size) {
            in->error = TL_ZIP_IN_DAMAGED;
            snprintf(in->why, sizeof in->why, "%zu bytes where the zip directory says %" PRIu64,
                     in->total, (uint64_t)in->want_size);
            return -1;
        }
    }
    return n;
}
