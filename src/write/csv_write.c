/*
 * csv_write.c - CSV output (see csv_write.h).
 *
 * Written through a fixed buffer straight to the file: a result can be hundreds of MB,
 * so it is never built whole in memory.  The per-cell work is a fixed-size move for a
 * number, and one pass over a text that both looks for the bytes that make it quoted
 * and copies it, a block of bytes at a time.
 */
#include "write/csv_write.h"

#include "base/numfmt.h"
#include "base/textblock.h"
#include "io/direct_out.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#define OUT_BUF (1u << 20)

/* Where the text goes: a FILE through a buffer, or a tl_buf. */
typedef struct csv_out {
    FILE *f;
    tl_buf *b;
    char *buf;
    size_t pos;
    int failed;
    size_t flush_at; /* > 0: written out at a row's end once this many bytes wait (the
                        buffer's pages past it are then never touched) */
} csv_out;

static void flush(csv_out *o)
{
    if (o->f && o->pos) {
        if (fwrite(o->buf, 1, o->pos, o->f) != o->pos)
            o->failed = 1;
    } else if (o->b && o->pos) {
        tl_buf_add(o->b, o->buf, o->pos);
    }
    o->pos = 0;
}

static void put(csv_out *o, const char *s, size_t n)
{
    while (n) {
        if (o->pos == OUT_BUF)
            flush(o);
        size_t k = OUT_BUF - o->pos < n ? OUT_BUF - o->pos : n;
        memcpy(o->buf + o->pos, s, k);
        o->pos += k;
        s += k;
        n -= k;
    }
}

static inline void putc_(csv_out *o, char c)
{
    if (o->pos == OUT_BUF)
        flush(o);
    o->buf[o->pos++] = c;
}

/*
 * Fields are copied a block at a time while they are looked at (textblock.h): a block is
 * stored whole, then the output moves on to its first flagged byte, which is tested
 * again (SWAR flags may include bytes after the first).
 */
#if TL_BLK_SSE2
/* Bytes that make a field quoted: , " \r \n (and NUL, see csv_field). */
static inline tl_blk_mask blk_quoting(tl_blk v)
{
    __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_setzero_si128()));
    return (unsigned)_mm_movemask_epi8(m); /* one movemask for all five */
}

static inline tl_blk_mask blk_quotes(tl_blk v) { return tl_blk_eq(v, '"'); }
#else
static inline tl_blk_mask blk_quoting(tl_blk w)
{
    w = tl_sw_order(w);
    return tl_sw_eq(w, ',') | tl_sw_eq(w, '"') | tl_sw_eq(w, '\r') | tl_sw_eq(w, '\n') | tl_sw_zero(w);
}

static inline tl_blk_mask blk_quotes(tl_blk w) { return tl_sw_eq(tl_sw_order(w), '"'); }
#endif

static inline int quoting_byte(unsigned char c) { return c == ',' || c == '"' || c == '\r' || c == '\n' || !c; }

/*
 * Field s[0..n) as CSV at d, which has room for 2n + 2 bytes; returns its length.  It is
 * quoted when it holds a comma, a quote, CR or LF (quotes doubled), as Python's csv
 * module writes it; and, as the strcspn() test this replaces did, when it holds a NUL
 * (no reader makes one).  A block is stored only where at least a block of the field
 * is left, so within the bytes the field takes.
 */
static size_t csv_field(char *d, const char *src, size_t n)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0;
    /* as it is, up to the first byte that makes it quoted */
    for (;;) {
        if (n - i >= TL_BLK) {
            tl_blk v = tl_blk_load(s + i);
            tl_blk_store(d + i, v);
            tl_blk_mask m = blk_quoting(v);
            if (!m) {
                i += TL_BLK;
                continue;
            }
            i += TL_BLK_INDEX(m);
        } else if (i == n) {
            return n;
        } else if (n >= TL_BLK) {
            /* the last block, over bytes already copied (TL_BLK - (n - i) >= 1 of them) */
            tl_blk v = tl_blk_load(s + n - TL_BLK);
            tl_blk_store(d + n - TL_BLK, v);
            tl_blk_mask m = TL_BLK_DROP(blk_quoting(v), TL_BLK - (n - i));
            if (!m)
                return n;
            i += TL_BLK_INDEX(m);
        } else {
            while (i < n && !quoting_byte(s[i])) {
                d[i] = (char)s[i];
                i++;
            }
            if (i == n)
                return n;
        }
        if (quoting_byte(s[i]))
            break;
        d[i] = (char)s[i]; /* a SWAR false alarm */
        i++;
    }
    /* quoted: the bytes so far move one along; then the rest, with quotes doubled */
    memmove(d + 1, d, i);
    d[0] = '"';
    char *w = d + 1 + i;
    size_t run = 0; /* s[run..i) is what the output holds just before w, byte for byte */
    for (;;) {
        if (n - i >= TL_BLK) {
            tl_blk v = tl_blk_load(s + i);
            tl_blk_store(w, v);
            tl_blk_mask m = blk_quotes(v);
            if (!m) {
                i += TL_BLK;
                w += TL_BLK;
                continue;
            }
            size_t k = TL_BLK_INDEX(m);
            i += k;
            w += k;
        } else if (i == n) {
            break;
        } else if (n - run >= TL_BLK) {
            /* the last block, over bytes already copied as they are */
            size_t back = TL_BLK - (n - i);
            tl_blk v = tl_blk_load(s + n - TL_BLK);
            tl_blk_store(w - back, v);
            tl_blk_mask m = TL_BLK_DROP(blk_quotes(v), back);
            if (!m) {
                w += n - i;
                break;
            }
            size_t k = TL_BLK_INDEX(m);
            i += k;
            w += k;
        } else {
            while (i < n && s[i] != '"')
                *w++ = (char)s[i++];
            if (i == n)
                break;
        }
        *w++ = (char)s[i];
        if (s[i++] == '"') {
            *w++ = '"'; /* a quote is doubled */
            run = i;
        }
    }
    *w++ = '"';
    return (size_t)(w - d);
}

/* A field too long for the buffer, written in pieces. */
static void put_long_field(csv_out *o, const char *s, size_t n)
{
    if (strcspn(s, ",\"\r\n") >= n) {
        put(o, s, n);
        return;
    }
    putc_(o, '"');
    for (;;) {
        const char *q = memchr(s, '"', n);
        size_t k = q ? (size_t)(q - s) + 1 : n;
        put(o, s, k);
        if (!q)
            break;
        putc_(o, '"'); /* a quote is doubled */
        s += k;
        n -= k;
    }
    putc_(o, '"');
}

static void put_field(csv_out *o, const char *s, size_t n)
{
    if (n > (OUT_BUF - 2) / 2) {
        put_long_field(o, s, n);
        return;
    }
    if (OUT_BUF - o->pos < 2 * n + 2)
        flush(o);
    o->pos += csv_field(o->buf + o->pos, s, n);
}

/* Room for a comma and a number (its text copied in a fixed-size move). */
#define CELL_ROOM (1 + TL_NUMFMT_MAX + TL_FLOAT_TEXT_SLACK)

/* Cell r of column col, after a comma when `sep`; returns 1 when the cell wrote any text. */
static int put_cell(csv_out *o, const tl_table *t, size_t col, size_t r, int sep)
{
    const tl_cell *c = &t->cols[col].cells[r];
    if (OUT_BUF - o->pos < CELL_ROOM)
        flush(o);
    char *d = o->buf + o->pos;
    if (sep) {
        *d++ = ',';
        o->pos++;
    }
    const char *text;
    size_t n;
    switch (c->kind) {
    case TL_MISSING: return 0;
    case TL_INT: o->pos += tl_fmt_int(c->v.i, d); return 1;
    case TL_FLOAT:
        if ((text = tl_float_text(t, col, c, &n)) != NULL) {
            memcpy(d, text, TL_FLOAT_TEXT_SLACK); /* made once for this and the workbook */
            o->pos += n;
        } else {
            o->pos += tl_fmt_double(c->v.f, d);
        }
        return 1;
    case TL_BOOL:
        memcpy(d, c->v.b ? "True" : "False", 5);
        o->pos += c->v.b ? 4 : 5;
        return 1;
    case TL_STR: put_field(o, c->v.s, tl_cell_len(c)); return c->v.s[0] != '\0';
    }
    return 0;
}


static void write_header(csv_out *o, const tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            putc_(o, ',');
        put_field(o, t->cols[c].name, strlen(t->cols[c].name));
    }
    putc_(o, '\n');
}

static void write_rows(csv_out *o, const tl_table *t)
{
    for (size_t r = 0; r < t->nrows && !o->failed; r++) {
        int any = 0;
        tl_table_prefetch_row(t, r);
        for (size_t c = 0; c < t->ncols; c++)
            any |= put_cell(o, t, c, r, c > 0);
        /* Python's csv module writes a lone empty field as "" so the row is not blank. */
        if (!any && t->ncols == 1)
            put(o, "\"\"", 2);
        putc_(o, '\n');
        if (o->flush_at && o->pos >= o->flush_at)
            flush(o);
    }
}

static void write_table(csv_out *o, const tl_table *t)
{
    write_header(o, t);
    write_rows(o, t);
    flush(o);
}

void tl_csv_format(const tl_table *t, tl_buf *b)
{
    csv_out o = {.b = b, .buf = tl_xmalloc(OUT_BUF)};
    write_table(&o, t);
    free(o.buf);
}

int tl_csv_write_file(const tl_table *t, const char *path, tl_error *err)
{
    FILE *f = tl_direct_fopen(path);
    if (!f) {
        tl_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    csv_out o = {.f = f, .buf = tl_xmalloc(OUT_BUF)};
    write_table(&o, t);
    free(o.buf);
    int bad = o.failed || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        tl_error_set(err, "%s: write error: %s", path, strerror(errno));
    return bad ? -1 : 0;
}

/* ---- a file written a table at a time ------------------------------------------------ */

struct tl_csv_file {
    csv_out o;
    char *path;
};

tl_csv_file *tl_csv_open(const char *path, tl_error *err)
{
    FILE *f = tl_direct_fopen(path);
    if (!f) {
        tl_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        return NULL;
    }
    tl_csv_file *w = tl_xcalloc(1, sizeof *w);
    /* a file written in pieces is one of many outputs of a run that keeps its memory
     * small: a 64 KB write at a time is as fast, and leaves the buffer's tail untouched */
    w->o = (csv_out){.f = f, .buf = tl_xmalloc(OUT_BUF), .flush_at = 64u << 10};
    w->path = tl_xstrdup(path);
    return w;
}

void tl_csv_append(tl_csv_file *w, const tl_table *t, int header)
{
    if (header)
        write_header(&w->o, t);
    write_rows(&w->o, t);
}

int tl_csv_close(tl_csv_file *w, tl_error *err)
{
    if (!w)
        return 0;
    flush(&w->o);
    int bad = w->o.failed || ferror(w->o.f);
    if (fclose(w->o.f) != 0)
        bad = 1;
    if (bad && err)
        tl_error_set(err, "%s: write error: %s", w->path, strerror(errno));
    free(w->o.buf);
    free(w->path);
    free(w);
    return bad ? -1 : 0;
}
