/*
 * xlsx_cells.c - a worksheet read into a table (see xlsx_read.h): cells by type, the
 * header row, and the reading itself - the fast scanner first (xlsx_scan.c), expat
 * (xlsx_xml.c) when it gives up.
 */
#include "read/xlsx_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cell's A1 name: 0-based column, 1-based row. */
static void xlsx_cell_name(char *buf, size_t n, size_t col, unsigned long row)
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
static int xlsx_parse_ref(const char *r, size_t *col)
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
static unsigned long xlsx_row_number(const char *r, unsigned long dflt)
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
static const char *xlsx_ref(xlsx_sheet_state *st)
{
    if (!st->ref[0])
        xlsx_cell_name(st->ref, sizeof st->ref, st->col, st->row);
    return st->ref;
}

static const char *xlsx_keep(xlsx_sheet_state *st, const char *s, size_t n)
{
    return tl_arena_strndup(st->arena, s, n);
}

/*
 * A text cell.  Empty text is missing.  In data rows the missing-value spellings
 * ("NA", "nan", ...) are decided here, before copying, rather than by the builder after;
 * header names keep their text.
 */
static tl_cell xlsx_text_cell(xlsx_sheet_state *st, const char *s, size_t n)
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
static int xlsx_number(const char *s, size_t n, tl_cell *out)
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
static int xlsx_shared_cell(xlsx_parse *p, xlsx_sheet_state *st, tl_cell *out)
{
    tl_xlsx *x = p->x;
    size_t n, idx = 0;
    const char *v = xlsx_trimmed(&x->vbuf, &n);
    const xlsx_str *str;

    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            xlsx_cell_fail(p, xlsx_ref(st), "shared string index '%.40s' is not a number", v);
            return 0;
        }
        /* Saturate: anything this large is out of range anyway. */
        idx = idx > ((size_t)-1 - 9) / 10 ? (size_t)-1 : idx * 10 + (size_t)(v[i] - '0');
    }
    if (idx >= x->nsst) {
        xlsx_cell_fail(p, xlsx_ref(st), "shared string %.40s out of range (the workbook has %zu)",
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
static int xlsx_cell_value(xlsx_parse *p, xlsx_sheet_state *st, tl_cell *out)
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
            xlsx_cell_fail(p, xlsx_ref(st), "number cell holds '%.40s'", s);
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
            xlsx_cell_fail(p, xlsx_ref(st), "boolean cell holds '%.40s'", s);
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

/* A header value as a column name: numbers as Python prints them, as pandas names them. */
static const char *xlsx_header_name(xlsx_sheet_state *st, const tl_cell *c)
{
    char buf[40];

    switch (c->kind) {
    case TL_STR:
        return c->v.s;
    case TL_INT:
        snprintf(buf, sizeof buf, "%" PRId64, c->v.i);
        break;
    case TL_FLOAT:
        /* The shortest text that reads back as the same double, like Python's repr. */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, c->v.f);
            if (strtod(buf, NULL) == c->v.f)
                break;
        }
        break;
    case TL_BOOL:
        return c->v.b ? "True" : "False";
    default:
        return NULL;
    }
    return tl_arena_strdup(st->arena, buf);
}

/* The first row with a value names the columns (pandas skips blank rows before it). */
static void xlsx_commit_header(xlsx_sheet_state *st)
{
    size_t n = 0;
    const char **names;

    for (size_t i = 0; i < st->nhdr; i++)
        if (st->hdr[i].col + 1 > n)
            n = st->hdr[i].col + 1;
    /* Columns without a header cell stay NULL: the builder names them "Unnamed: N". */
    names = tl_xcalloc(n, sizeof *names);
    for (size_t i = 0; i < st->nhdr; i++)
        names[st->hdr[i].col] = xlsx_header_name(st, &st->hdr[i].cell);
    tl_builder_header(&st->b, names, n);
    free(names);
    st->have_header = 1;
    st->nhdr = 0;
}

/* A <row>, with the value of its `r` attribute (or NULL). */
void xlsx_row_start(xlsx_parse *p, const char *r)
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
void xlsx_cell_start(xlsx_parse *p, const char *r, const char *t)
{
    xlsx_sheet_state *st = p->state;
    tl_xlsx *x = p->x;
    int n;

    if (r) {
        n = xlsx_parse_ref(r, &st->col);
        if (!n) {
            xlsx_fail(p, "invalid cell reference '%.40s' in row %lu", r, st->row);
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
            xlsx_fail(p, "row %lu has cells past column XFD", st->row);
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
        xlsx_cell_fail(p, xlsx_ref(st), "unknown cell type '%.20s'", t);
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

static void xlsx_sheet_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    xlsx_sheet_state *st = p->state;

    switch (el) {
    case EL_ROW:
        xlsx_row_start(p, xlsx_attr(attrs, "r"));
        break;
    case EL_CELL:
        xlsx_cell_start(p, xlsx_attr(attrs, "r"), xlsx_attr(attrs, "t"));
        break;
    case EL_V:
        st->has_v = 1;
        break;
    }
}

void xlsx_sheet_end(xlsx_parse *p, int el)
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
            xlsx_commit_header(st);
    }
    /* A few KiB of XML can describe a huge sparse table (a cell at XFD in every row). */
    if (st->b.too_big)
        xlsx_fail(p, "row %lu: more than %zu cells (%zu columns x %zu rows); refusing", st->row,
                  TL_TABLE_MAX_CELLS, st->b.t->ncols, st->b.t->nrows + 1);
}


/* Ready the sheet state and a parse context for reading a sheet. */
static void xlsx_sheet_init(xlsx_parse *p, xlsx_sheet_state *st, tl_xlsx *x, const xlsx_sheet *sh,
                            tl_arena *arena, tl_error *err)
{
    memset(st, 0, sizeof *st);
    tl_builder_init(&st->b, arena);
    st->arena = arena;
    xlsx_parse_init(p, x, PART_SHEET, sh->part, sh->name, err);
    p->on_start = xlsx_sheet_start;
    p->on_end = xlsx_sheet_end;
    p->text_v = &x->vbuf;
    p->text_t = &x->tbuf;
    p->state = st;
}

/* Free what reading a sheet took; the table too when it was not finished. */
static void xlsx_sheet_done(xlsx_sheet_state *st, int ok)
{
    free(st->hdr);
    free(st->sst_copy);
    if (!ok)
        tl_builder_abort(&st->b);
}

tl_table *tl_xlsx_read_sheet(tl_xlsx *x, const char *sheet, tl_arena *arena, tl_error *err)
{
    const xlsx_sheet *sh = xlsx_find_sheet(x, sheet);
    xlsx_sheet_state st;
    zip_int64_t idx;
    xlsx_parse p;
    int ok;

    if (!sh) {
        tl_error_set(err, "%s: no sheet named '%s'", x->path, sheet);
        return NULL;
    }
    if (!sh->part) {
        tl_error_set(err, "%s, sheet '%s': the workbook's relationships have no entry '%s'",
                     x->path, sheet, sh->rid ? sh->rid : "(none: the sheet has no r:id)");
        return NULL;
    }
    idx = xlsx_locate(x, sh->part);
    if (idx < 0) {
        tl_error_set(err, "%s, sheet '%s': part %s is missing", x->path, sheet, sh->part);
        return NULL;
    }
    if (!x->sst_loaded && !xlsx_load_sst(x, err))
        return NULL;

    if (x->scanner != 1) {
        /* The scanner first.  Any failure, even one of the sheet's own (a bad cell),
         * sends the sheet to expat: its message then is the one expat's reading gives,
         * whatever the scanner got to.  What the scanner had put in `arena` stays there. */
        tl_error scratch = {0};
        const char *why;
        size_t where;
        int r;

        xlsx_sheet_init(&p, &st, x, sh, arena, x->scanner == 2 ? err : &scratch);
        r = xs_read_sheet(&p, idx, &why, &where);
        xlsx_sheet_done(&st, r == XS_READ);
        if (r == XS_READ)
            return tl_builder_finish(&st.b);
        if (x->scanner == 2) {
            if (r == XS_GAVE_UP)
                tl_error_set(err, "%s, sheet '%s': the fast scanner gave up at byte %zu: %s",
                             x->path, sheet, where, why ? why : "?");
            return NULL;
        }
    }

    xlsx_sheet_init(&p, &st, x, sh, arena, err);
    ok = xlsx_parse_part(&p, idx);
    xlsx_sheet_done(&st, ok);
    if (!ok)
        return NULL;
    /* No row with a value at all: no header, so a table of no columns and no rows. */
    return tl_builder_finish(&st.b);
}
