/*
 * csv_read.c - the CSV reader (see csv_read.h).
 *
 * One pass over the bytes.  The bytes a field's scan must stop at (delimiters, quotes,
 * line ends, NUL) are found 64 at a time as bit masks (csv_scan.h), so that a field is
 * crossed in a jump rather than a byte at a time.  Each cell is typed where it is read,
 * while its bytes are in the cache: a number becomes its value at once (no copy of its
 * text), other text is copied into the arena.  Typing column by column afterwards would
 * come back to every cell's bytes once per column, long after they left the cache.
 *
 * A column turns out not to be numeric at its first text that is no number; from then
 * on its numbers are kept as text.  The numbers it had before that row must become text
 * again (pandas keeps an object column's cells as written): one more pass over those
 * rows re-reads them, for all such columns at once, so no input costs more than two
 * passes however its columns are laid out.
 */
#include "read/csv_read.h"

#include "read/csv_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct csv_parser {
    const char *data, *p, *end;
    const char *label;
    size_t line;       /* physical line of the current position, 1-based */
    tl_buf field;      /* unquoted text of the current field */
    tl_error *err;
    tl_csv_mask_fn scan;
    size_t wpos;       /* the offset of the scanned block, SIZE_MAX before the first */
    tl_csv_masks w;    /* its masks */
} csv_parser;

/* Scan the block at offset pos (a short last block as if padded with plain bytes). */
static void scan_block(csv_parser *ps, size_t pos)
{
    size_t left = (size_t)(ps->end - ps->data) - pos;
    if (left >= TL_CSV_BLOCK) {
        ps->scan((const unsigned char *)ps->data + pos, &ps->w);
    } else {
        unsigned char tail[TL_CSV_BLOCK];
        memset(tail, 'x', sizeof tail);
        memcpy(tail, ps->data + pos, left);
        ps->scan(tail, &ps->w);
        uint64_t keep = ((uint64_t)1 << left) - 1;
        ps->w.plain &= keep;
        ps->w.quoted &= keep;
    }
    ps->wpos = pos;
}

/* The first byte at or after p that the `quoted` (else the `plain`) mask flags, or the
 * end of the input. */
static inline const char *find(csv_parser *ps, const char *p, int quoted)
{
    size_t pos = (size_t)(p - ps->data), len = (size_t)(ps->end - ps->data);
    for (;;) {
        if (pos >= ps->wpos && pos - ps->wpos < TL_CSV_BLOCK) {
            uint64_t m = (quoted ? ps->w.quoted : ps->w.plain) >> (pos - ps->wpos);
            if (m)
                return ps->data + pos + __builtin_ctzll(m);
            pos = ps->wpos + TL_CSV_BLOCK;
        }
        if (pos >= len)
            return ps->end;
        scan_block(ps, pos);
    }
}

/* The end of unquoted text starting at p (a delimiter, a line end or the end of the
 * input), or NULL with the error set at a NUL byte. */
static const char *plain_run(csv_parser *ps, const char *p)
{
    const char *q = find(ps, p, 0);
    if (q < ps->end && *q == '\0') {
        tl_error_set(ps->err, "%s line %zu: NUL byte inside a field", ps->label, ps->line);
        return NULL;
    }
    return q;
}

/*
 * The rest of a quoted field from p (after its opening quote); returns the byte after its
 * closing quote, or NULL with the error set.  Its text is left in the input, from p to
 * that quote, when it holds no doubled quote (*copied 0: most quoted fields, and no copy
 * of their bytes is made here); otherwise it is built unquoted in ps->field (*copied 1).
 */
static const char *quoted_run(csv_parser *ps, const char *p, int *copied)
{
    size_t start_line = ps->line;
    const char *start = p;
    *copied = 0;
    for (;;) {
        const char *q = find(ps, p, 1);
        if (*copied)
            tl_buf_add(&ps->field, p, (size_t)(q - p));
        p = q;
        if (p >= ps->end) {
            tl_error_set(ps->err, "%s line %zu: a quoted field is never closed (missing '\"')",
                         ps->label, start_line);
            return NULL;
        }
        if (*p == '\0') {
            tl_error_set(ps->err, "%s line %zu: NUL byte inside a field", ps->label, ps->line);
            return NULL;
        }
        if (*p == '\n') {
            ps->line++;
            if (*copied)
                tl_buf_addc(&ps->field, '\n');
            p++;
            continue;
        }
        /* a quote: doubled means a literal quote, otherwise the quoted part ends */
        if (p + 1 < ps->end && p[1] == '"') {
            if (!*copied) { /* the text so far, then unquoted from here on */
                tl_buf_clear(&ps->field);
                tl_buf_add(&ps->field, start, (size_t)(p - start));
                *copied = 1;
            }
            tl_buf_addc(&ps->field, '"');
            p += 2;
            continue;
        }
        return p + 1;
    }
}

/*
 * Read one field starting at ps->p.  Sets *text and *n (pointing into the input or into
 * ps->field) and *last to 1 when the field ended its record.  Returns 0 on error.
 */
static int next_field(csv_parser *ps, const char **text, size_t *n, int *last)
{
    const char *p = ps->p, *end = ps->end;
    if (p < end && *p == '"') {
        const char *open = p + 1;
        int copied;
        if (!(p = quoted_run(ps, open, &copied)))
            return 0;
        /* Text after the closing quote belongs to the field too (pandas keeps it). */
        const char *q = plain_run(ps, p);
        if (!q)
            return 0;
        if (!copied && q == p) { /* the quoted text alone, as it stands in the input */
            *text = open;
            *n = (size_t)(p - 1 - open);
        } else {
            if (!copied) {
                tl_buf_clear(&ps->field);
                tl_buf_add(&ps->field, open, (size_t)(p - 1 - open));
            }
            tl_buf_add(&ps->field, p, (size_t)(q - p));
            *text = ps->field.data ? ps->field.data : "";
            *n = ps->field.len;
        }
        p = q;
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

/* ---- typing cells as they are read ------------------------------------------------------ */

#define NO_ROW SIZE_MAX

/* What the reader knows of each column while reading it. */
typedef struct col_state {
    size_t text_from; /* the first row with text that is no number, or NO_ROW */
    int numbers;      /* a number was read before text_from */
} col_state;

/* The spellings of True and False: such a cell points at one of these rather than at a
 * copy, since a boolean column never needs its text. */
static const char *const bool_spellings[] = {"True", "TRUE", "true", "False", "FALSE", "false"};

static const char *bool_spelling(const char *s, size_t n)
{
    if (n != 4 && n != 5)
        return NULL;
    for (size_t i = 0; i < sizeof bool_spellings / sizeof *bool_spellings; i++)
        if (strlen(bool_spellings[i]) == n && memcmp(bool_spellings[i], s, n) == 0)
            return bool_spellings[i];
    return NULL;
}

/* A text cell: a boolean spelling, or the text copied into the arena. */
static tl_cell text_cell(const char *text, size_t n, tl_arena *arena)
{
    const char *s = bool_spelling(text, n);
    return tl_cell_strn(s ? s : tl_arena_strndup(arena, text, n), n);
}

/* Put the field read at (row, col) into the builder, typed (SPEC §1): missing, a number
 * while the column may still be numeric, else text. */
static inline void put_field(tl_builder *b, col_state *st, size_t row, size_t col, const char *text,
                             size_t n)
{
    /* A number first: no missing spelling reads as one (they are letters, '#' or empty),
     * so a numeric cell is spared the missing check. */
    col_state *s = &st[col];
    tl_cell c;
    if (s->text_from == NO_ROW && tl_text_to_number(text, n, &c)) {
        s->numbers = 1;
        tl_builder_put(b, col, c);
        return;
    }
    if (tl_text_is_missing(text, n))
        return; /* the builder's cells start missing */
    if (s->text_from == NO_ROW)
        s->text_from = row;
    tl_builder_put(b, col, text_cell(text, n, b->arena));
}

/*
 * The columns that turned to text after holding numbers get their numbers' texts back:
 * rows 0 .. the last such column's text_from are read again from `records` (the first
 * record's line `line`), and only those cells are touched.
 */
static int restore_texts(csv_parser *ps, tl_builder *b, const col_state *st, const char *records,
                         size_t line)
{
    size_t upto = 0, ncols = b->t->ncols;
    for (size_t c = 0; c < ncols; c++)
        if (st[c].numbers && st[c].text_from != NO_ROW && st[c].text_from > upto)
            upto = st[c].text_from;
    ps->p = records;
    ps->line = line;
    for (size_t row = 0; row < upto && skip_blank_lines(ps); row++) {
        int last = 0;
        for (size_t col = 0; !last; col++) {
            const char *text;
            size_t n;
            if (!next_field(ps, &text, &n, &last))
                return 0;
            if (col >= ncols || !st[col].numbers || row >= st[col].text_from)
                continue;
            tl_cell *c = &b->t->cols[col].cells[row];
            if (c->kind == TL_INT || c->kind == TL_FLOAT)
                *c = text_cell(text, n, b->arena);
        }
    }
    return 1;
}

/* ---- the parse ------------------------------------------------------------------------ */

/* The header's fields as column names; returns their number, or -1 on error. */
static long read_header(csv_parser *ps, tl_builder *b)
{
    const char **names = NULL;
    size_t nnames = 0, cap = 0;
    if (skip_blank_lines(ps)) {
        int last = 0;
        while (!last) {
            const char *text;
            size_t n;
            if (!next_field(ps, &text, &n, &last)) {
                free(names);
                return -1;
            }
            TL_GROW(names, cap, nnames + 1);
            names[nnames++] = tl_arena_strndup(b->arena, text, n);
        }
    }
    tl_builder_header(b, names, nnames);
    free(names);
    if (b->too_big) {
        tl_error_set(ps->err, "%s line 1: %zu columns, more than the %zu a table may have; refusing",
                     ps->label, nnames, TL_TABLE_MAX_COLS);
        return -1;
    }
    return (long)nnames;
}

/* The rows a text of `len` bytes may hold, from the bytes its first `rows` records took:
 * room for them at once spares the copies of growing every column step by step.  A guess,
 * held to cells of no more bytes than twice the text's, whatever its first records are. */
static size_t rows_guess(size_t len, size_t used, size_t rows, size_t ncols)
{
    size_t guess = len / (used ? used : 1) * rows + rows / 8 + 64;
    size_t most = 2 * len / (sizeof(tl_cell) * (ncols ? ncols : 1)) + 64;
    return guess < most ? guess : most;
}

/* The records after the header; returns 0 on error. */
static int read_records(csv_parser *ps, tl_builder *b, col_state *st, size_t nnames)
{
    const char *first = ps->p;
    while (skip_blank_lines(ps)) {
        size_t record_line = ps->line, col = 0, row = b->t->nrows;
        if (row == 32)
            tl_builder_reserve(b, rows_guess((size_t)(ps->end - first), (size_t)(ps->p - first), row, nnames));
        int room = tl_builder_row_room(b), last = 0;
        while (!last) {
            const char *text;
            size_t n;
            if (!next_field(ps, &text, &n, &last))
                return 0;
            if (col >= nnames) {
                /* count the rest of the record for a helpful message */
                size_t fields = col + 1;
                while (!last && next_field(ps, &text, &n, &last))
                    fields++;
                tl_error_set(ps->err, "%s line %zu: %zu fields, the header has %zu", ps->label,
                             record_line, fields, nnames);
                return 0;
            }
            if (room)
                put_field(b, st, row, col, text, n);
            col++;
        }
        /* Short records keep their missing tail; a record is never blank here. */
        tl_builder_end_row(b, 1);
        if (b->too_big) {
            tl_error_set(ps->err, "%s line %zu: more than %zu cells (%zu columns x %zu rows); refusing",
                         ps->label, record_line, TL_TABLE_MAX_CELLS, nnames, b->t->nrows + 1);
            return 0;
        }
    }
    return 1;
}

/* 1 when the text is UTF-16 (a byte-order mark, or ASCII with a NUL beside every
 * character): told as such, not as a NUL inside a field. */
static int is_utf16(const unsigned char *d, size_t len)
{
    if (len >= 2 && ((d[0] == 0xFF && d[1] == 0xFE) || (d[0] == 0xFE && d[1] == 0xFF)))
        return 1;
    return len >= 4 && ((d[0] && !d[1] && d[2] && !d[3]) || (!d[0] && d[1] && !d[2] && d[3]));
}

tl_table *tl_csv_parse_simd(const char *data, size_t len, const char *label, tl_arena *arena,
                            tl_error *err, tl_csv_simd level)
{
    if (is_utf16((const unsigned char *)data, len)) {
        tl_error_set(err, "%s: UTF-16 text; tlcompare reads CSV as UTF-8: save it as \"CSV UTF-8\", or convert "
                          "it (iconv -f UTF-16 -t UTF-8)", label);
        return NULL;
    }
    csv_parser ps = {.data = data, .p = data, .end = data + len, .label = label, .line = 1,
                     .err = err, .scan = tl_csv_mask_fn_for(level, NULL), .wpos = SIZE_MAX};
    tl_builder b;
    tl_builder_init(&b, arena);
    col_state *st = NULL;

    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3;
    long nnames = read_header(&ps, &b);
    if (nnames < 0)
        goto fail;
    st = tl_xmalloc((nnames ? (size_t)nnames : 1) * sizeof *st);
    for (long c = 0; c < nnames; c++)
        st[c] = (col_state){NO_ROW, 0};
    const char *records = ps.p;
    size_t records_line = ps.line;
    if (!read_records(&ps, &b, st, (size_t)nnames))
        goto fail;
    if (!restore_texts(&ps, &b, st, records, records_line))
        goto fail;
    free(st);
    tl_buf_free(&ps.field);
    return tl_builder_finish(&b);

fail:
    free(st);
    tl_buf_free(&ps.field);
    tl_builder_abort(&b);
    return NULL;
}

tl_table *tl_csv_parse(const char *data, size_t len, const char *label, tl_arena *arena,
                       tl_error *err)
{
    return tl_csv_parse_simd(data, len, label, arena, err, TL_CSV_SIMD_BEST);
}
tl_table *tl_csv_read_file_into(const char *path, tl_buf *buf, tl_arena *arena, tl_error *err)
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
    size_t size = (size_t)st.st_size, got = 0;
    if (buf->cap < size + 1)
        tl_buf_free(buf); /* a new block: growing would copy the old file's bytes */
    tl_buf_clear(buf);
    tl_buf_reserve(buf, size + 1);
    tl_populate(buf->data, size);
    while (got < size) {
        ssize_t k = read(fd, buf->data + got, size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* an error, or the file shrank while it was read */
        got += (size_t)k;
    }
    close(fd);
    if (got != size) {
        tl_error_set(err, "%s: read error", path);
        return NULL;
    }
    return tl_csv_parse(buf->data, size, path, arena, err);
}

tl_table *tl_csv_read_file(const char *path, tl_arena *arena, tl_error *err)
{
    tl_buf buf = {0};
    tl_table *t = tl_csv_read_file_into(path, &buf, arena, err);
    tl_buf_free(&buf);
    return t;
}
