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
 *
 * A file is read through a window (TL_CSV_WINDOW) rather than whole: its bytes are
 * parsed while they are in the cache, and no buffer the size of the file is ever
 * written.  A step (the header, a record) that reaches the window's end before the
 * text's is MORE: the window is refilled from that step's start and the step taken
 * again.  Only whole fields are ever put into the table, so a record taken twice puts
 * the same cells twice.  The second pass reads the file again from the records' start.
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

/* What a step of the parse came to.  MORE: the bytes at hand end before the step could
 * (a field, a record) and the text goes on: the window is refilled and the step taken
 * again from its start. */
enum { STEP_ERROR, STEP_OK, STEP_MORE, STEP_END };

typedef struct csv_parser {
    const char *data, *p, *end; /* the bytes at hand: the whole text, or the window's */
    const char *label;
    size_t line;       /* physical line of the current position, 1-based */
    tl_buf field;      /* unquoted text of the current field */
    tl_error *err;
    tl_csv_mask_fn scan;
    size_t wpos;       /* the offset in data of the scanned block, SIZE_MAX before the first */
    tl_csv_masks w;    /* its masks */
    /* Reading through a window (win != NULL): win's storage holds the text's bytes from
     * offset `base`, and is refilled from the file `fd` (or from `mem`, for tests). */
    tl_buf *win;
    size_t base, size; /* size: the whole text's bytes */
    int eof;           /* 1 when end is the text's end */
    int fd;
    const char *mem;
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
 * end of the bytes at hand. */
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

/* 1 when q, where a scan stopped, is the end of the bytes at hand but not of the text:
 * what lies there is not known yet. */
static inline int short_of(const csv_parser *ps, const char *q) { return q >= ps->end && !ps->eof; }

/* ---- the window ---------------------------------------------------------------------- */

/* n bytes of the text from offset off into dst; 0 when the file gave fewer (it shrank,
 * or a read failed). */
static int source_read(csv_parser *ps, char *dst, size_t n, size_t off)
{
    if (ps->mem) {
        memcpy(dst, ps->mem + off, n);
        return 1;
    }
    while (n) {
        ssize_t k = pread(ps->fd, dst, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        dst += k;
        off += (size_t)k;
        n -= (size_t)k;
    }
    return 1;
}

/*
 * Refill the window: the bytes from `from` on (an unfinished step's) move to its start,
 * and the rest of it is read from the text; a step longer than the window doubles it.
 * The position is set back to `from`, on line `line`.  Returns 0 with the error set when
 * the file gives less than it held.
 */
static int refill(csv_parser *ps, const char *from, size_t line)
{
    tl_buf *w = ps->win;
    size_t keep = (size_t)(ps->end - from);
    ps->base += (size_t)(from - ps->data);
    if (keep && from != w->data)
        memmove(w->data, from, keep);
    w->len = keep;
    if (keep + 1 >= w->cap)
        tl_buf_reserve(w, w->cap);
    size_t n = w->cap - 1 - keep, left = ps->size - ps->base - keep;
    if (n > left)
        n = left;
    if (n && !source_read(ps, w->data + keep, n, ps->base + keep)) {
        tl_error_set(ps->err, "%s: read error", ps->label);
        return 0;
    }
    ps->data = ps->p = w->data;
    ps->end = w->data + keep + n;
    ps->eof = ps->base + keep + n == ps->size;
    ps->wpos = SIZE_MAX;
    ps->line = line;
    return 1;
}

/* The text's offset of p. */
static size_t offset_of(const csv_parser *ps, const char *p) { return ps->base + (size_t)(p - ps->data); }

/* Go back to the text's offset off (line `line`): in the bytes at hand, or a window read
 * from there. */
static int seek_to(csv_parser *ps, size_t off, size_t line)
{
    if (off >= ps->base) {
        ps->p = ps->data + (off - ps->base);
        ps->line = line;
        return 1;
    }
    ps->base = off;
    ps->end = ps->data;
    return refill(ps, ps->data, line);
}

/* ---- fields ---------------------------------------------------------------------------- */

/* The end of unquoted text starting at p (a delimiter, a line end or the end of the
 * bytes at hand), or NULL with the error set at a NUL byte. */
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
 * The rest of a quoted field from p (after its opening quote): *after is set to the byte
 * after its closing quote.  Its text is left in the input, from p to that quote, when it
 * holds no doubled quote (*copied 0: most quoted fields, and no copy of their bytes is
 * made here); otherwise it is built unquoted in ps->field (*copied 1).
 */
static int quoted_run(csv_parser *ps, const char *p, const char **after, int *copied)
{
    size_t start_line = ps->line;
    const char *start = p;
    *copied = 0;
    for (;;) {
        const char *q = find(ps, p, 1);
        if (*copied)
            tl_buf_add(&ps->field, p, (size_t)(q - p));
        p = q;
        if (short_of(ps, p))
            return STEP_MORE;
        if (p >= ps->end) {
            tl_error_set(ps->err, "%s line %zu: a quoted field is never closed (missing '\"')",
                         ps->label, start_line);
            return STEP_ERROR;
        }
        if (*p == '\0') {
            tl_error_set(ps->err, "%s line %zu: NUL byte inside a field", ps->label, ps->line);
            return STEP_ERROR;
        }
        if (*p == '\n') {
            ps->line++;
            if (*copied)
                tl_buf_addc(&ps->field, '\n');
            p++;
            continue;
        }
        /* A quote: doubled means a literal quote, otherwise the quoted part ends (a
         * quote at the end of the bytes at hand ends it, and the field is MORE there). */
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
        *after = p + 1;
        return STEP_OK;
    }
}

/*
 * Read one field starting at ps->p.  Sets *text and *n (pointing into the input or into
 * ps->field) and *last to 1 when the field ended its record.  A field that reaches the
 * end of the bytes at hand before the text's end is MORE: it is never given out cut.
 */
static int next_field(csv_parser *ps, const char **text, size_t *n, int *last)
{
    const char *p = ps->p, *end = ps->end, *q;
    if (p < end && *p == '"') {
        const char *open = p + 1;
        int copied, r = quoted_run(ps, open, &p, &copied);
        if (r != STEP_OK)
            return r;
        /* Text after the closing quote belongs to the field too (pandas keeps it). */
        if (!(q = plain_run(ps, p)))
            return STEP_ERROR;
        if (short_of(ps, q))
            return STEP_MORE;
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
    } else {
        if (!(q = plain_run(ps, p)))
            return STEP_ERROR;
        if (short_of(ps, q))
            return STEP_MORE;
        *text = p;
        *n = (size_t)(q - p);
    }
    /* q is at a delimiter, a line end, or the end of the text */
    p = q;
    if (p < end && *p == ',') {
        *last = 0;
        p++;
    } else {
        *last = 1;
        if (p < end && *p == '\r' && short_of(ps, ++p))
            return STEP_MORE; /* a '\n' may follow */
        if (p < end && *p == '\n')
            p++;
        ps->line++;
    }
    ps->p = p;
    return STEP_OK;
}

/* Physically empty lines: skipped, as pandas does with skip_blank_lines.  OK at the start
 * of a record, END at the end of the text.  A "\r" at the end of the bytes at hand is
 * taken for a line of its own; the MORE that follows takes the lines again from their
 * start, "\r\n" whole. */
static int skip_blank_lines(csv_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r')) {
        if (*ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')
            ps->p++;
        ps->p++;
        ps->line++;
    }
    if (ps->p < ps->end)
        return STEP_OK;
    return ps->eof ? STEP_END : STEP_MORE;
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
 * rows 0 .. the last such column's text_from are read again from the records' start
 * (offset `records`, line `line`), and only those cells are touched.
 */
static int restore_row(csv_parser *ps, tl_builder *b, const col_state *st, size_t row)
{
    int r = skip_blank_lines(ps), last = 0;
    size_t ncols = b->t->ncols;
    for (size_t col = 0; r == STEP_OK && !last; col++) {
        const char *text;
        size_t n;
        if ((r = next_field(ps, &text, &n, &last)) != STEP_OK)
            break;
        if (col >= ncols || !st[col].numbers || row >= st[col].text_from)
            continue;
        /* a cell already turned back (before a refill) is text and stays as it is */
        tl_cell *c = &b->t->cols[col].cells[row];
        if (c->kind == TL_INT || c->kind == TL_FLOAT)
            *c = text_cell(text, n, b->arena);
    }
    return r;
}

static int restore_texts(csv_parser *ps, tl_builder *b, const col_state *st, size_t records, size_t line)
{
    size_t upto = 0, ncols = b->t->ncols;
    for (size_t c = 0; c < ncols; c++)
        if (st[c].numbers && st[c].text_from != NO_ROW && st[c].text_from > upto)
            upto = st[c].text_from;
    if (!upto)
        return 1;
    if (!seek_to(ps, records, line))
        return 0;
    for (size_t row = 0; row < upto;) {
        const char *at = ps->p;
        size_t at_line = ps->line;
        int r = restore_row(ps, b, st, row);
        if (r == STEP_MORE) {
            if (!refill(ps, at, at_line))
                return 0;
            continue;
        }
        if (r != STEP_OK)
            return r == STEP_END;
        row++;
    }
    return 1;
}

/* ---- the parse ------------------------------------------------------------------------ */

/* The header's fields as column names (*nnames of them). */
static int header_once(csv_parser *ps, tl_builder *b, size_t *nnames)
{
    const char **names = NULL;
    size_t count = 0, cap = 0;
    int r = skip_blank_lines(ps), last = 0;
    if (r == STEP_END)
        r = STEP_OK; /* no header at all: a table without columns */
    else if (r == STEP_OK)
        while (!last) {
            const char *text;
            size_t n;
            if ((r = next_field(ps, &text, &n, &last)) != STEP_OK)
                break;
            TL_GROW(names, cap, count + 1);
            names[count++] = tl_arena_strndup(b->arena, text, n);
        }
    if (r == STEP_OK)
        tl_builder_header(b, names, count);
    free(names);
    *nnames = count;
    return r;
}

/* The header; returns the number of its columns, or -1 on error. */
static long read_header(csv_parser *ps, tl_builder *b)
{
    size_t nnames;
    for (;;) {
        const char *at = ps->p;
        size_t line = ps->line;
        int r = header_once(ps, b, &nnames);
        if (r == STEP_ERROR || (r == STEP_MORE && !refill(ps, at, line)))
            return -1;
        if (r == STEP_OK)
            break;
    }
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

/* One record (after blank lines), its cells put into the builder's next row.  A record
 * taken again after MORE puts the same cells again: only whole fields were put. */
static int read_record(csv_parser *ps, tl_builder *b, col_state *st, size_t nnames, size_t first)
{
    int r = skip_blank_lines(ps);
    if (r != STEP_OK)
        return r;
    size_t record_line = ps->line, col = 0, row = b->t->nrows;
    if (row == 32)
        tl_builder_reserve(b, rows_guess(ps->size - first, offset_of(ps, ps->p) - first, row, nnames));
    int room = tl_builder_row_room(b), last = 0;
    while (!last) {
        const char *text;
        size_t n;
        if ((r = next_field(ps, &text, &n, &last)) != STEP_OK)
            return r;
        if (col >= nnames) {
            /* count the rest of the record for a helpful message */
            size_t fields = col + 1;
            while (!last && (r = next_field(ps, &text, &n, &last)) == STEP_OK)
                fields++;
            if (r == STEP_MORE)
                return r;
            tl_error_set(ps->err, "%s line %zu: %zu fields, the header has %zu", ps->label,
                         record_line, fields, nnames);
            return STEP_ERROR;
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
        return STEP_ERROR;
    }
    return STEP_OK;
}

/* The records after the header; returns 0 on error. */
static int read_records(csv_parser *ps, tl_builder *b, col_state *st, size_t nnames)
{
    size_t first = offset_of(ps, ps->p);
    for (;;) {
        const char *at = ps->p;
        size_t line = ps->line;
        int r = read_record(ps, b, st, nnames, first);
        if (r == STEP_MORE) {
            if (!refill(ps, at, line))
                return 0;
        } else if (r != STEP_OK) {
            return r == STEP_END;
        }
    }
}

/* 1 when the text is UTF-16 (a byte-order mark, or ASCII with a NUL beside every
 * character): told as such, not as a NUL inside a field. */
static int is_utf16(const unsigned char *d, size_t len)
{
    if (len >= 2 && ((d[0] == 0xFF && d[1] == 0xFE) || (d[0] == 0xFE && d[1] == 0xFF)))
        return 1;
    return len >= 4 && ((d[0] && !d[1] && d[2] && !d[3]) || (!d[0] && d[1] && !d[2] && d[3]));
}

/* The parse of the text ps is set up for (its first bytes at hand). */
static tl_table *parse(csv_parser *ps, tl_arena *arena)
{
    if (is_utf16((const unsigned char *)ps->data, (size_t)(ps->end - ps->data))) {
        tl_error_set(ps->err, "%s: UTF-16 text; tlcompare reads CSV as UTF-8: save it as \"CSV UTF-8\", or "
                              "convert it (iconv -f UTF-16 -t UTF-8)", ps->label);
        return NULL;
    }
    tl_builder b;
    tl_builder_init(&b, arena);
    col_state *st = NULL;

    if (ps->end - ps->data >= 3 && memcmp(ps->data, "\xEF\xBB\xBF", 3) == 0)
        ps->p += 3;
    long nnames = read_header(ps, &b);
    if (nnames < 0)
        goto fail;
    st = tl_xmalloc((nnames ? (size_t)nnames : 1) * sizeof *st);
    for (long c = 0; c < nnames; c++)
        st[c] = (col_state){NO_ROW, 0};
    size_t records = offset_of(ps, ps->p), records_line = ps->line;
    if (!read_records(ps, &b, st, (size_t)nnames))
        goto fail;
    if (!restore_texts(ps, &b, st, records, records_line))
        goto fail;
    free(st);
    tl_buf_free(&ps->field);
    return tl_builder_finish(&b);

fail:
    free(st);
    tl_buf_free(&ps->field);
    tl_builder_abort(&b);
    return NULL;
}

tl_table *tl_csv_parse_simd(const char *data, size_t len, const char *label, tl_arena *arena,
                            tl_error *err, tl_csv_simd level)
{
    csv_parser ps = {.data = data, .p = data, .end = data + len, .label = label, .line = 1,
                     .err = err, .scan = tl_csv_mask_fn_for(level, NULL), .wpos = SIZE_MAX,
                     .size = len, .eof = 1, .fd = -1};
    return parse(&ps, arena);
}

tl_table *tl_csv_parse(const char *data, size_t len, const char *label, tl_arena *arena,
                       tl_error *err)
{
    return tl_csv_parse_simd(data, len, label, arena, err, TL_CSV_SIMD_BEST);
}

/* A parse through a window of `window` bytes (at least 4: the UTF-16 and byte-order mark
 * checks look at the first ones) in `win`, from the file fd or the text mem. */
static tl_table *parse_windowed(int fd, const char *mem, size_t size, size_t window, tl_buf *win,
                                const char *label, tl_arena *arena, tl_error *err, tl_csv_simd level)
{
    if (window < 4)
        window = 4;
    if (win->cap < window + 1) {
        tl_buf_free(win);
        tl_buf_reserve(win, window);
    }
    csv_parser ps = {.label = label, .line = 1, .err = err, .scan = tl_csv_mask_fn_for(level, NULL),
                     .wpos = SIZE_MAX, .win = win, .size = size, .fd = fd, .mem = mem};
    ps.data = ps.p = ps.end = win->data;
    if (!refill(&ps, ps.data, 1))
        return NULL;
    return parse(&ps, arena);
}

tl_table *tl_csv_parse_window(const char *data, size_t len, size_t window, const char *label,
                              tl_arena *arena, tl_error *err, tl_csv_simd level)
{
    tl_buf win = {0};
    tl_table *t = parse_windowed(-1, data ? data : "", len, window, &win, label, arena, err, level);
    tl_buf_free(&win);
    return t;
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
    tl_table *t = parse_windowed(fd, NULL, (size_t)st.st_size, TL_CSV_WINDOW, buf, path, arena, err,
                                 TL_CSV_SIMD_BEST);
    close(fd);
    return t;
}

tl_table *tl_csv_read_file(const char *path, tl_arena *arena, tl_error *err)
{
    tl_buf buf = {0};
    tl_table *t = tl_csv_read_file_into(path, &buf, arena, err);
    tl_buf_free(&buf);
    return t;
}
