/*
 * csv_read.c - the CSV reader (see csv_read.h).
 *
 * One pass over the bytes with a tiny state machine.  A field's text is collected in a
 * reused buffer only when it needs unquoting; otherwise the cell points into the input
 * until the columns are typed, and only the text of string columns is then copied into
 * the arena.
 */
#include "read/csv_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct csv_parser {
    const char *p, *end;
    const char *label;
    size_t line;       /* physical line of the current position, 1-based */
    tl_buf field;      /* unquoted text of the current field */
    tl_arena *arena;
    tl_error *err;
} csv_parser;

/* The end of unquoted text starting at p (a delimiter, a line end or the end of the
 * input), or NULL with the error set at a NUL byte. */
static const char *plain_run(csv_parser *ps, const char *p)
{
    const char *q = p, *end = ps->end;
    while (q < end && *q != ',' && *q != '\n' && *q != '\r' && *q != '\0')
        q++;
    if (q < end && *q == '\0') {
        tl_error_set(ps->err, "%s line %zu: NUL byte inside a field", ps->label, ps->line);
        return NULL;
    }
    return q;
}

/*
 * Read one field starting at ps->p.  Sets *text and *n (pointing into the input or into
 * ps->field) and *last to 1 when the field ended its record.  Returns 0 on error.
 */
static int next_field(csv_parser *ps, const char **text, size_t *n, int *last)
{
    const char *p = ps->p, *end = ps->end;
    if (p < end && *p == '"') {
        size_t start_line = ps->line;
        tl_buf_clear(&ps->field);
        p++;
        for (;;) {
            const char *q = p;
            while (q < end && *q != '"' && *q != '\0' && *q != '\n')
                q++;
            tl_buf_add(&ps->field, p, (size_t)(q - p));
            p = q;
            if (p >= end) {
                tl_error_set(ps->err, "%s line %zu: a quoted field is never closed (missing '\"')",
                             ps->label, start_line);
                return 0;
            }
            if (*p == '\0') {
                tl_error_set(ps->err, "%s line %zu: NUL byte inside a field", ps->label, ps->line);
                return 0;
            }
            if (*p == '\n') {
                ps->line++;
                tl_buf_addc(&ps->field, '\n');
                p++;
                continue;
            }
            /* a quote: doubled means a literal quote, otherwise the quoted part ends */
            if (p + 1 < end && p[1] == '"') {
                tl_buf_addc(&ps->field, '"');
                p += 2;
                continue;
            }
            p++;
            break;
        }
        /* Text after the closing quote belongs to the field too (pandas keeps it). */
        const char *q = plain_run(ps, p);
        if (!q)
            return 0;
        tl_buf_add(&ps->field, p, (size_t)(q - p));
        p = q;
        *text = ps->field.data ? ps->field.data : "";
        *n = ps->field.len;
    } else {
        const char *q = plain_run(ps, p);
        if (!q)
            return 0;
        *text = p;
        *n = (size_t)(q - p);
        p = q;
    }
    /* p is at a delimiter, a line end, or the end of input */
    if (p < end && *p == ',') {
        *last = 0;
        p++;
    } else {
        *last = 1;
        if (p < end && *p == '\r')
            p++;
        if (p < end && *p == '\n')
            p++;
        if (p <= end)
            ps->line++;
    }
    ps->p = p;
    return 1;
}

/* A physically empty line: skipped, as pandas does with skip_blank_lines. */
static int skip_blank_lines(csv_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r')) {
        if (*ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')
            ps->p++;
        ps->p++;
        ps->line++;
    }
    return ps->p < ps->end;
}

/* 1 when the text is UTF-16 (a byte-order mark, or ASCII with a NUL beside every
 * character): told as such, not as a NUL inside a field. */
static int is_utf16(const unsigned char *d, size_t len)
{
    if (len >= 2 && ((d[0] == 0xFF && d[1] == 0xFE) || (d[0] == 0xFE && d[1] == 0xFF)))
        return 1;
    return len >= 4 && ((d[0] && !d[1] && d[2] && !d[3]) || (!d[0] && d[1] && !d[2] && d[3]));
}

tl_table *tl_csv_parse(const char *data, size_t len, const char *label, tl_arena *arena,
                       tl_error *err)
{
    if (is_utf16((const unsigned char *)data, len)) {
        tl_error_set(err, "%s: UTF-16 text; tlcompare reads CSV as UTF-8: save it as \"CSV UTF-8\", or convert "
                          "it (iconv -f UTF-16 -t UTF-8)", label);
        return NULL;
    }
    csv_parser ps = {.p = data, .end = data + len, .label = label, .line = 1,
                     .arena = arena, .err = err};
    tl_builder b;
    tl_builder_init(&b, arena);
    tl_arena scratch; /* cell texts until the columns are typed */
    tl_arena_init(&scratch);

    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3;

    /* the header */
    const char **names = NULL;
    size_t nnames = 0, cap = 0;
    if (skip_blank_lines(&ps)) {
        int last = 0;
        while (!last) {
            const char *text;
            size_t n;
            if (!next_field(&ps, &text, &n, &last))
                goto fail;
            TL_GROW(names, cap, nnames + 1);
            names[nnames++] = tl_arena_strndup(arena, text, n);
        }
    }
    tl_builder_header(&b, names, nnames);
    free(names);
    names = NULL;
    if (b.too_big) {
        tl_error_set(err, "%s line 1: %zu columns, more than the %zu a table may have; refusing",
                     label, nnames, TL_TABLE_MAX_COLS);
        goto fail;
    }

    /* the records */
    while (skip_blank_lines(&ps)) {
        size_t record_line = ps.line, col = 0;
        int last = 0;
        while (!last) {
            const char *text;
            size_t n;
            if (!next_field(&ps, &text, &n, &last))
                goto fail;
            if (col >= nnames) {
                /* count the rest of the record for a helpful message */
                size_t fields = col + 1;
                while (!last && next_field(&ps, &text, &n, &last))
                    fields++;
                tl_error_set(err, "%s line %zu: %zu fields, the header has %zu", label,
                             record_line, fields, nnames);
                goto fail;
            }
            /* Unquoted text stays where it is in the input (which outlives the parse) until
             * the columns are typed; unquoted text, in the reused field buffer, is copied.
             * The builder turns the missing-value spellings into missing cells. */
            if (text == ps.field.data || n >= UINT32_MAX)
                text = tl_arena_strndup(&scratch, text, n);
            tl_builder_cell(&b, col++, tl_cell_strn(text, n));
        }
        /* Short records keep their missing tail; a record is never blank here. */
        tl_builder_end_row(&b, 1);
        if (b.too_big) {
            tl_error_set(err, "%s line %zu: more than %zu cells (%zu columns x %zu rows); refusing",
                         label, record_line, TL_TABLE_MAX_CELLS, nnames, b.t->nrows + 1);
            goto fail;
        }
    }
    tl_buf_free(&ps.field);
    tl_table *t = tl_builder_finish(&b);
    /* Only the text of string columns outlives the parse: numbers and booleans are values now. */
    for (size_t col = 0; col < t->ncols; col++) {
        if (t->cols[col].type != TL_COL_STR)
            continue;
        for (size_t r = 0; r < t->nrows; r++) {
            tl_cell *c = &t->cols[col].cells[r];
            if (c->kind == TL_STR)
                c->v.s = tl_arena_strndup(arena, c->v.s, tl_cell_len(c));
        }
    }
    tl_arena_free(&scratch);
    return t;

fail:
    free(names);
    tl_buf_free(&ps.field);
    tl_builder_abort(&b);
    tl_arena_free(&scratch);
    return NULL;
}

tl_table *tl_csv_read_file(const char *path, tl_arena *arena, tl_error *err)
{
    /* O_NONBLOCK: opening a FIFO to read would wait for a writer; the type is checked
     * on the open file (no race with a rename), before any read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tl_error_set(err, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    char *data = tl_xmalloc(size + 1);
    size_t got = fread(data, 1, size, f);
    data[got < size ? got : size] = '\0';
    int bad = ferror(f);
    fclose(f);
    if (bad || got != size) {
        tl_error_set(err, "%s: read error", path);
        free(data);
        return NULL;
    }
    tl_table *t = tl_csv_parse(data, size, path, arena, err);
    free(data);
    return t;
}
