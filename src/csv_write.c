/*
 * csv_write.c - CSV output (see csv_write.h).
 *
 * Written through a fixed buffer straight to the file: a result can be hundreds of MB,
 * so it is never built whole in memory, and the per-cell work is a few memcpys.
 */
#include "csv_write.h"

#include "numfmt.h"

#include <errno.h>
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

static void put_field(csv_out *o, const char *s, size_t n)
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

/* Cell r of column col; returns 1 when the cell wrote any text. */
static int put_cell(csv_out *o, const tl_table *t, size_t col, size_t r)
{
    char num[TL_NUMFMT_MAX];
    const tl_cell *c = &t->cols[col].cells[r];
    const char *text;
    size_t n;
    switch (c->kind) {
    case TL_MISSING: return 0;
    case TL_INT: put(o, num, tl_fmt_int(c->v.i, num)); return 1;
    case TL_FLOAT:
        if ((text = tl_float_text(t, col, c, &n)) != NULL)
            put(o, text, n);
        else
            put(o, num, tl_fmt_double(c->v.f, num));
        return 1;
    case TL_BOOL: c->v.b ? put(o, "True", 4) : put(o, "False", 5); return 1;
    case TL_STR: put_field(o, c->v.s, tl_cell_len(c)); return c->v.s[0] != '\0';
    }
    return 0;
}

static void write_table(csv_out *o, const tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            putc_(o, ',');
        put_field(o, t->cols[c].name, strlen(t->cols[c].name));
    }
    putc_(o, '\n');
    for (size_t r = 0; r < t->nrows && !o->failed; r++) {
        int any = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                putc_(o, ',');
            any |= put_cell(o, t, c, r);
        }
        /* Python's csv module writes a lone empty field as "" so the row is not blank. */
        if (!any && t->ncols == 1)
            put(o, "\"\"", 2);
        putc_(o, '\n');
    }
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
    FILE *f = fopen(path, "wb");
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
