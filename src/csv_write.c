/*
 * csv_write.c - CSV output (see csv_write.h).
 */
#include "csv_write.h"

#include "numfmt.h"

#include <errno.h>
#include <string.h>

static void add_field(tl_buf *b, const char *s, size_t n)
{
    if (strcspn(s, ",\"\r\n") >= n) {
        tl_buf_add(b, s, n);
        return;
    }
    tl_buf_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            tl_buf_addc(b, '"');
        tl_buf_addc(b, s[i]);
    }
    tl_buf_addc(b, '"');
}

static void add_cell(tl_buf *b, const tl_cell *c)
{
    char num[TL_NUMFMT_MAX];
    switch (c->kind) {
    case TL_MISSING: break;
    case TL_INT: tl_buf_add(b, num, tl_fmt_int(c->v.i, num)); break;
    case TL_FLOAT: tl_buf_add(b, num, tl_fmt_double(c->v.f, num)); break;
    case TL_BOOL: tl_buf_adds(b, c->v.b ? "True" : "False"); break;
    case TL_STR: add_field(b, c->v.s, strlen(c->v.s)); break;
    }
}

void tl_csv_format(const tl_table *t, tl_buf *b)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            tl_buf_addc(b, ',');
        add_field(b, t->cols[c].name, strlen(t->cols[c].name));
    }
    tl_buf_addc(b, '\n');
    for (size_t r = 0; r < t->nrows; r++) {
        size_t start = b->len;
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                tl_buf_addc(b, ',');
            add_cell(b, &t->cols[c].cells[r]);
        }
        /* Python's csv module writes a lone empty field as "" so the row is not blank. */
        if (b->len == start)
            tl_buf_adds(b, "\"\"");
        tl_buf_addc(b, '\n');
    }
}

int tl_csv_write_file(const tl_table *t, const char *path, tl_error *err)
{
    tl_buf b = {0};
    tl_csv_format(t, &b);
    FILE *f = fopen(path, "wb");
    if (!f) {
        tl_error_set(err, "%s: cannot create: %s", path, strerror(errno));
        tl_buf_free(&b);
        return -1;
    }
    size_t w = fwrite(b.data, 1, b.len, f);
    int bad = w != b.len || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad)
        tl_error_set(err, "%s: write error: %s", path, strerror(errno));
    tl_buf_free(&b);
    return bad ? -1 : 0;
}
