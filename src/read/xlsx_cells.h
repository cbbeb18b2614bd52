/*
 * xlsx_cells.h - what both worksheet parsers (expat's callbacks in xlsx_sheet.c and the
 * fast scanner of xlsx_scan.c) do for each row and cell: references, cell types and
 * values, OOXML's _xHHHH_ text escapes.  Inline, so that neither pays a function call per
 * cell: as calls between files these cost ~2.5% of the CPU of a run on xlsx inputs.
 */
#ifndef TL_XLSX_CELLS_H
#define TL_XLSX_CELLS_H

#include "read/xlsx_internal.h"

#include "base/textblock.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The first row with a value names the columns (xlsx_cells.c). */
void tl_xlsx_commit_header(xlsx_sheet_state *st);

/* ---- text ------------------------------------------------------------------------------ */

static inline int xlsx_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The positions k of the block at q (TL_BLK + 1 bytes readable) where q[k] is '_' and
 * q[k + 1] is 'x'. */
#if TL_BLK_SSE2
static inline tl_blk_mask blk_escape_starts(const unsigned char *q)
{
    return tl_blk_eq(tl_blk_load(q), '_') & tl_blk_eq(tl_blk_load(q + 1), 'x');
}
#else
static inline tl_blk_mask blk_escape_starts(const unsigned char *q)
{
    return tl_sw_eq(tl_sw_order(tl_blk_load(q)), '_') & tl_sw_eq(tl_sw_order(tl_blk_load(q + 1)), 'x');
}
#endif

/* The first "_x" at or after q that leaves room for an escape before e, or NULL.  Text
 * has many underscores ("total_duration_us") and few escapes: both bytes are tested a
 * block at a time (textblock.h); a flagged position is checked again, because the
 * portable block's flags are exact only up to the first. */
static inline char *xlsx_find_escape(char *q, char *e)
{
    while (e - q >= TL_BLK + 1) {
        tl_blk_mask m = blk_escape_starts((const unsigned char *)q);
        if (m) {
            q += TL_BLK_INDEX(m);
            if (q[0] == '_' && q[1] == 'x')
                return e - q >= 7 ? q : NULL;
            q++;
            continue;
        }
        q += TL_BLK;
    }
    for (; e - q >= 7; q++)
        if (q[0] == '_' && q[1] == 'x')
            return q;
    return NULL;
}

/*
 * Decode, in place, the _xHHHH_ escapes with which OOXML stores characters that XML 1.0
 * cannot carry (_x000D_ is a carriage return).  A literal "_x0041_" is written with its
 * underscore escaped, "_x005F_x0041_"; one left-to-right pass that resumes after each
 * escape undoes that correctly.  _x0000_ and lone surrogates stay as written: they have
 * no place in a C string or in UTF-8.  Returns the new length (and NUL-terminates).
 */
static inline size_t xlsx_unescape(char *s, size_t n)
{
    char *e = s + n, *r = s, *w = s, *q = s, *u;

    /* Bytes between escapes move only once one was found. */
    while ((u = xlsx_find_escape(q, e)) != NULL) {
        int h0, h1, h2, h3;
        unsigned cp;

        q = u + 1;
        if (u[6] != '_')
            continue;
        h0 = xlsx_hex(u[2]), h1 = xlsx_hex(u[3]), h2 = xlsx_hex(u[4]), h3 = xlsx_hex(u[5]);
        if (h0 < 0 || h1 < 0 || h2 < 0 || h3 < 0)
            continue;
        cp = (unsigned)(h0 << 12 | h1 << 8 | h2 << 4 | h3);
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            continue;
        if (w != r)
            memmove(w, r, (size_t)(u - r));
        w += u - r;
        /* At most 3 bytes replace 7: the write never overtakes the read. */
        if (cp < 0x80) {
            *w++ = (char)cp;
        } else if (cp < 0x800) {
            *w++ = (char)(0xC0 | cp >> 6);
            *w++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *w++ = (char)(0xE0 | cp >> 12);
            *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *w++ = (char)(0x80 | (cp & 0x3F));
        }
        r = q = u + 7;
    }
    if (r == s)
        return n; /* no escape: nothing moved */
    memmove(w, r, (size_t)(e - r));
    w += e - r;
    *w = '\0';
    return (size_t)(w - s);
}

/* The text collected in `b`, escapes decoded; "" when nothing was collected. */
static inline const char *xlsx_text(tl_buf *b, size_t *n)
{
    if (!b->data || b->len == 0) {
        *n = 0;
        return "";
    }
    b->len = xlsx_unescape(b->data, b->len);
    *n = b->len;
    return b->data;
}

/* The text of `b` without the XML whitespace around it (NUL-terminated in place). */
static inline const char *xlsx_trimmed(tl_buf *b, size_t *n)
{
    char *s, *e;

    if (!b->data || b->len == 0) {
        *n = 0;
        return "";
    }
    s = b->data;
    e = s + b->len;
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        e--;
    *e = '\0';
    *n = (size_t)(e - s);
    return s;
}

/* ---- references, cells and rows ---------------------------------------------------------- */

/* A cell's A1 name: 0-based column, 1-based row. */
static inline void xlsx_cell_name(char *buf, size_t n, size_t col, unsigned long row)
{
    char letters[4];

    tl_excel_col_letters(col, letters);
    snprintf(buf, n, "%s%lu", letters, row);
}

/*
 * Parse a cell reference: letters then a row number ("B7"; "$B$7" too).  Returns its
 * length (1 to 12) and the 0-based column, or 0 when it is not one or lies outside the
 * sheet (past XFD or row 1048576).
 */
static inline int xlsx_parse_ref(const char *r, size_t *col)
{
    const char *s = r;
    size_t c = 0, letters = 0, digits = 0;
    unsigned long row = 0;

    if (*s == '$')
        s++;
    for (; (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'); s++) {
        if (++letters > 3)
            return 0;
        c = c * 26 + (size_t)((*s | 0x20) - 'a' + 1);
    }
    if (letters == 0 || c > TL_EXCEL_MAX_COLS)
        return 0;
    if (*s == '$')
        s++;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (++digits > 7)
            return 0;
        row = row * 10 + (unsigned long)(*s - '0');
    }
    if (*s || digits == 0 || row == 0 || row > TL_EXCEL_MAX_ROWS)
        return 0;
    *col = c - 1;
    return (int)(s - r);
}

/* The number of a <row r="..">, or `dflt` when it has none (or a nonsensical one). */
static inline unsigned long xlsx_row_number(const char *r, unsigned long dflt)
{
    unsigned long row = 0;
    size_t digits = 0;

    if (!r)
        return dflt;
    for (; *r >= '0' && *r <= '9'; r++) {
        if (++digits > 7)
            return dflt;
        row = row * 10 + (unsigned long)(*r - '0');
    }
    return *r || row == 0 || row > TL_EXCEL_MAX_ROWS ? dflt : row;
}

/* The reference of the current cell, for a message: as written, or made from its place. */
static inline const char *xlsx_ref(xlsx_sheet_state *st)
{
    if (!st->ref[0])
        xlsx_cell_name(st->ref, sizeof st->ref, st->col, st->row);
    return st->ref;
}

static inline const char *xlsx_keep(xlsx_sheet_state *st, const char *s, size_t n)
{
    return tl_arena_strndup(st->arena, s, n);
}

/*
 * A text cell.  Empty text is missing.  In data rows the missing-value spellings
 * ("NA", "nan", ...) are decided here, before copying, rather than by the builder after;
 * header names keep their text.
 */
static inline tl_cell xlsx_text_cell(xlsx_sheet_state *st, const char *s, size_t n)
{
    if (n == 0 || (st->have_header && tl_text_is_missing(s, n)))
        return tl_cell_missing();
    return tl_cell_strn(xlsx_keep(st, s, n), n);
}

/*
 * A number cell, as pandas' openpyxl reader gives it: the value is a float, made an
 * int when it is integral (48.0 -> 48, 1e3 -> 1000) and fits int64.  Integer text is
 * taken exactly, not through a double.  NaN is missing.  Returns 0 for text that is no
 * number at all.
 */
static inline int xlsx_number(const char *s, size_t n, tl_cell *out)
{
    size_t i = s[0] == '+' || s[0] == '-';

    if (tl_text_ieq(s + i, n - i, "nan")) {
        *out = tl_cell_missing();
        return 1;
    }
    if (!tl_text_to_number(s, n, out))
        return 0;
    if (out->kind == TL_FLOAT) {
        double d = out->v.f;
        /* -2^63 <= d < 2^63, tested before the conversion that would be undefined. */
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (double)(int64_t)d == d)
            *out = tl_cell_int((int64_t)d);
    }
    return 1;
}

/* The shared string `idx` (text of a `t="s"` cell) as a cell of the table. */
static inline int xlsx_shared_cell(xlsx_parse *p, xlsx_sheet_state *st, tl_cell *out)
{
    tl_xlsx *x = p->x;
    size_t n, idx = 0;
    const char *v = xlsx_trimmed(&x->vbuf, &n);
    const xlsx_str *str;

    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            tl_xlsx_cell_fail(p, xlsx_ref(st), "shared string index '%.40s' is not a number", v);
            return 0;
        }
        /* Saturate: anything this large is out of range anyway. */
        idx = idx > ((size_t)-1 - 9) / 10 ? (size_t)-1 : idx * 10 + (size_t)(v[i] - '0');
    }
    if (idx >= x->nsst) {
        tl_xlsx_cell_fail(p, xlsx_ref(st), "shared string %.40s out of range (the workbook has %zu)",
                       v, x->nsst);
        return 0;
    }
    str = &x->sst[idx];
    if (str->n == 0 || (st->have_header && tl_text_is_missing(str->s, str->n)))
        return 1;
    if (!st->sst_copy)
        st->sst_copy = tl_xcalloc(x->nsst, sizeof *st->sst_copy);
    if (!st->sst_copy[idx])
        st->sst_copy[idx] = xlsx_keep(st, str->s, str->n);
    *out = tl_cell_strn(st->sst_copy[idx], str->n);
    return 1;
}

/* Turn the cell just read into a table cell.  Returns 1, or 0 with the error set. */
static inline int xlsx_cell_value(xlsx_parse *p, xlsx_sheet_state *st, tl_cell *out)
{
    tl_xlsx *x = p->x;
    const char *s;
    size_t n;

    *out = tl_cell_missing();
    /* An inline string is in <is>; every other kind is in <v>, and without one the cell
     * is empty (a styled blank, or a formula never calculated). */
    if (st->type == CT_INLINE) {
        /* openpyxl prefers a <v> when a writer puts one there. */
        s = xlsx_text(st->has_v ? &x->vbuf : &x->tbuf, &n);
        *out = xlsx_text_cell(st, s, n);
        return 1;
    }
    if (!st->has_v)
        return 1;
    switch (st->type) {
    case CT_N:
        s = xlsx_trimmed(&x->vbuf, &n);
        if (n == 0)
            return 1;
        if (!xlsx_number(s, n, out)) {
            tl_xlsx_cell_fail(p, xlsx_ref(st), "number cell holds '%.40s'", s);
            return 0;
        }
        return 1;
    case CT_S:
        return xlsx_shared_cell(p, st, out);
    case CT_STR:
        s = xlsx_text(&x->vbuf, &n);
        *out = xlsx_text_cell(st, s, n);
        return 1;
    case CT_B:
        s = xlsx_trimmed(&x->vbuf, &n);
        if ((n == 1 && s[0] == '1') || tl_text_ieq(s, n, "true")) {
            *out = tl_cell_bool(1);
        } else if ((n == 1 && s[0] == '0') || tl_text_ieq(s, n, "false")) {
            *out = tl_cell_bool(0);
        } else {
            tl_xlsx_cell_fail(p, xlsx_ref(st), "boolean cell holds '%.40s'", s);
            return 0;
        }
        return 1;
    case CT_E:
        /* #N/A is how Excel says "no value"; other codes (#DIV/0!, ...) stay as text. */
        s = xlsx_trimmed(&x->vbuf, &n);
        if (n == 4 && memcmp(s, "#N/A", 4) == 0)
            return 1;
        *out = xlsx_text_cell(st, s, n);
        return 1;
    case CT_D:
        /* An ISO 8601 date: kept as its text, which is what comparing it needs. */
        s = xlsx_trimmed(&x->vbuf, &n);
        *out = xlsx_text_cell(st, s, n);
        return 1;
    case CT_INLINE:
        break;
    }
    return 1;
}

/* A <row>, with the value of its `r` attribute (or NULL). */
static inline void xlsx_row_start(xlsx_parse *p, const char *r)
{
    xlsx_sheet_state *st = p->state;

    /* The row number only serves messages: blank rows are dropped either way. */
    st->row = xlsx_row_number(r, st->row + 1);
    st->next_col = 0;
    st->nhdr = 0;
}

/* strcmp(s, word) == 0, as a loop: a call to strcmp costs more here (see xs_copy). */
static inline int xlsx_streq(const char *s, const char *word)
{
    for (; *word; s++, word++)
        if (*s != *word)
            return 0;
    return *s == '\0';
}

/* A <c>, with the values of its `r` and `t` attributes (or NULL). */
static inline void xlsx_cell_start(xlsx_parse *p, const char *r, const char *t)
{
    xlsx_sheet_state *st = p->state;
    tl_xlsx *x = p->x;
    int n;

    if (r) {
        n = xlsx_parse_ref(r, &st->col);
        if (!n) {
            tl_xlsx_fail(p, "invalid cell reference '%.40s' in row %lu", r, st->row);
            return;
        }
        /* A valid reference is at most "$XFD$1048576": it fits.  (A loop: a call to
         * memcpy costs more, once per cell.) */
        for (int i = 0; i <= n; i++)
            st->ref[i] = r[i];
    } else {
        /* No reference: the cell after the previous one of the row.  Its name is only
         * made if a message needs it (see xlsx_ref). */
        if (st->next_col >= TL_EXCEL_MAX_COLS) {
            tl_xlsx_fail(p, "row %lu has cells past column XFD", st->row);
            return;
        }
        st->col = st->next_col;
        st->ref[0] = '\0';
    }
    st->next_col = st->col + 1;

    /* The one-letter types by their letter, the others in full. */
    if (!t || (t[0] == 'n' && !t[1]))
        st->type = CT_N;
    else if (t[0] && !t[1] && (t[0] == 's' || t[0] == 'b' || t[0] == 'e' || t[0] == 'd'))
        st->type = t[0] == 's' ? CT_S : t[0] == 'b' ? CT_B : t[0] == 'e' ? CT_E : CT_D;
    else if (xlsx_streq(t, "inlineStr"))
        st->type = CT_INLINE;
    else if (xlsx_streq(t, "str"))
        st->type = CT_STR;
    else {
        tl_xlsx_cell_fail(p, xlsx_ref(st), "unknown cell type '%.20s'", t);
        return;
    }
    st->has_v = 0;
    /* tl_buf_clear, inlined: this runs for every cell. */
    x->vbuf.len = x->tbuf.len = 0;
    if (x->vbuf.data)
        x->vbuf.data[0] = '\0';
    if (x->tbuf.data)
        x->tbuf.data[0] = '\0';
}

static inline void xlsx_sheet_end(xlsx_parse *p, int el)
{
    xlsx_sheet_state *st = p->state;
    tl_cell c;

    if (el == EL_CELL) {
        if (!xlsx_cell_value(p, st, &c) || c.kind == TL_MISSING)
            return;
        /* Empty cells are not handed on: a styled blank past the last column must not
         * make an "Unnamed" column, and missing is what the builder assumes anyway. */
        if (st->have_header) {
            tl_builder_cell(&st->b, st->col, c);
        } else {
            TL_GROW(st->hdr, st->caphdr, st->nhdr + 1);
            st->hdr[st->nhdr].col = st->col;
            st->hdr[st->nhdr].cell = c;
            st->nhdr++;
        }
    } else if (el == EL_ROW) {
        if (st->have_header)
            tl_builder_end_row(&st->b, 0);
        else if (st->nhdr > 0)
            tl_xlsx_commit_header(st);
    }
    /* A few KiB of XML can describe a huge sparse table (a cell at XFD in every row). */
    if (st->b.too_big)
        tl_xlsx_fail(p, "row %lu: more than %zu cells (%zu columns x %zu rows); refusing", st->row,
                  TL_TABLE_MAX_CELLS, st->b.t->ncols, st->b.t->nrows + 1);
}

#endif
