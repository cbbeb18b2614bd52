/*
 * xlsx_xml.c - the workbook's XML writer: text escaped for XML and OOXML (cut at Excel's
 * limit, told once), cell references, cells and rows rendered straight into a buffer,
 * conditional formats, a worksheet's opening.  xlsx_write.c says why the workbook is
 * written this way (inline strings, every reference, Python's number text).
 */
#include "write/xlsx_internal.h"

#include "base/numfmt.h"
#include "base/textblock.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Cells whose text was cut to Excel's limit: counted, the first one remembered, and told
 * in one line after the answer (tl_xlsx_warn_cut_text), not a line per cell before it. */
static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t ncut;
static char *first_cut;

void tl_xlsx_after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&warn_mu, &fresh, sizeof fresh); /* a parent's thread may have held it */
    ncut = 0;
    first_cut = NULL; /* the parent's, maybe mid-update: left, not freed */
}

void tl_xlsx_warn_cut_text(void)
{
    pthread_mutex_t *outer = tl_oom_lock(&warn_mu); /* the warning's text is allocated */
    if (ncut)
        tl_warn("%zu cell%s held text longer than Excel's %u characters, cut in the workbook (the CSV keeps it "
                "whole); the first: %s", ncut, ncut == 1 ? "" : "s", TL_EXCEL_MAX_TEXT, first_cut);
    ncut = 0;
    free(first_cut);
    first_cut = NULL;
    tl_oom_unlock(&warn_mu, outer);
}

/* ---- text ------------------------------------------------------------------------------ */

/* Bytes that need a look before they go into XML: controls, " & < >, non-ASCII, and 'x'
 * (the second byte of an `_xHHHH_` look-alike: it is rarer than '_' in kernel names). */
static const unsigned char xml_special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 " & */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, /* 0x30 < > */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x50 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, /* 0x70 x */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x80 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x90 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xA0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xB0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xC0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xD0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xE0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xF0 */
};

static const char HEX[] = "0123456789ABCDEF";

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

/*
 * The UTF-8 sequence at s[0..n) (s[0] >= 0x80): returns its length when it is a valid
 * scalar value, else 0 with *bad = the length of its maximal ill-formed prefix (at least
 * 1), which becomes one U+FFFD, as Python's "replace" and the Unicode standard do it.
 */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t k = 1; k < len; k++) {
        unsigned lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
        if (k >= n || s[k] < lo_k || s[k] > hi_k) {
            *bad = k;
            return 0;
        }
    }
    return len;
}

/*
 * Runs of plain text are found and copied a block at a time (textblock.h).  A block is
 * stored whole before it is looked at
 * and the output moves on only to its first flagged byte; the store never passes the
 * room put_text() needs, as a block is stored only where at least a block of text is
 * left, and each byte of text has 7 bytes of room.  blk_flags() flags every byte that
 * xml_special[] marks, except that an 'x' is flagged only after '_' (`under`: the byte
 * before the block is '_'), the one place an 'x' matters.  A flagged byte is looked at
 * again with the table.
 */
#if TL_BLK_SSE2
static inline tl_blk_mask blk_flags(tl_blk v, unsigned under)
{
    /* a signed comparison: the controls and every byte >= 0x80; then " & and < > in pairs */
    __m128i m = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x04)), _mm_set1_epi8(0x26)));
    m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x02)), _mm_set1_epi8(0x3E)));
    return (unsigned)_mm_movemask_epi8(m) | (tl_blk_eq(v, 'x') & (tl_blk_eq(v, '_') << 1 | under));
}
#else
static inline tl_blk_mask blk_flags(tl_blk w, unsigned under)
{
    w = tl_sw_order(w);
    uint64_t m = ((w - TL_SW_ONES * 0x20) | w) & TL_SW_HIGH;       /* controls, bytes >= 0x80 */
    m |= tl_sw_zero((w | TL_SW_ONES * 0x04) ^ TL_SW_ONES * 0x26);  /* " & */
    m |= tl_sw_zero((w | TL_SW_ONES * 0x02) ^ TL_SW_ONES * 0x3E);  /* < > */
    return m | (tl_sw_eq(w, 'x') & (tl_sw_eq(w, '_') << 8 | (uint64_t)under << 7));
}
#endif

/*
 * Write text s[0..n) as XML character data (TX_CELL: cell text, with OOXML's _xHHHH_
 * escapes; TX_PLAIN: other element text; TX_ATTR: an attribute value).  Needs 7n bytes
 * of room at p.  Returns the new end.
 */
static char *put_text(char *p, const char *src, size_t n, int mode)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0;
    size_t run = 0; /* s[run..i) is what the output holds just before p, byte for byte */
    for (;;) {
        /* copy plain bytes; s[i] is then the next byte that may need a look */
        if (n - i >= TL_BLK) {
            tl_blk v = tl_blk_load(s + i);
            tl_blk_store(p, v);
            tl_blk_mask m = blk_flags(v, i && s[i - 1] == '_');
            if (!m) {
                i += TL_BLK;
                p += TL_BLK;
                continue;
            }
            size_t k = TL_BLK_INDEX(m);
            i += k;
            p += k;
        } else if (i == n) {
            return p;
        } else if (n - run >= TL_BLK) {
            /* the last block, over bytes already copied as they are: d >= 1 of them (so the
             * flag of its first byte, which would need `under`, is dropped) */
            size_t d = TL_BLK - (n - i);
            tl_blk v = tl_blk_load(s + n - TL_BLK);
            tl_blk_store(p - d, v);
            tl_blk_mask m = TL_BLK_DROP(blk_flags(v, 0), d);
            if (!m)
                return p + (n - i);
            size_t k = TL_BLK_INDEX(m);
            i += k;
            p += k;
        } else {
            while (i < n && !xml_special[s[i]])
                *p++ = (char)s[i++];
            if (i == n)
                return p;
        }
        unsigned c = s[i];
        size_t j = i++;
        if (!xml_special[c]) { /* a SWAR false alarm */
            *p++ = (char)c;
            continue;
        }
        if (c >= 0x80) {
            size_t bad = 0, len = utf8_seq(s + j, n - j, &bad);
            if (len == 3 && c == 0xEF && s[j + 1] == 0xBF && s[j + 2] >= 0xBE) {
                /* U+FFFE and U+FFFF are no XML characters */
                if (mode == TX_CELL) {
                    PUT(p, "_xFFF");
                    *p++ = s[j + 2] == 0xBE ? 'E' : 'F';
                    *p++ = '_';
                } else {
                    PUT(p, "\xEF\xBF\xBD");
                }
                i = run = j + 3;
            } else if (len) {
                memcpy(p, s + j, len); /* as it is: the run goes on */
                p += len;
                i = j + len;
            } else {
                PUT(p, "\xEF\xBF\xBD");
                i = run = j + bad;
            }
            continue;
        }
        switch (c) {
        case '&': PUT(p, "&amp;"); break;
        case '<': PUT(p, "&lt;"); break;
        case '>': PUT(p, "&gt;"); break;
        case '"': PUT(p, "&quot;"); break;
        case 'x':
            /* Text a reader would take for an escape: its underscore, already copied, becomes
             * the escape "_x005F_" (so "_x0041_" is written "_x005F_x0041_"). */
            if (mode == TX_CELL && j >= 1 && s[j - 1] == '_' && n - j >= 6 && is_hex(s[j + 1]) &&
                is_hex(s[j + 2]) && is_hex(s[j + 3]) && is_hex(s[j + 4]) && s[j + 5] == '_') {
                PUT(p, "x005F_x");
                break;
            }
            *p++ = 'x';
            continue; /* as it is */
        case '\t':
        case '\n':
            if (mode == TX_ATTR) {
                if (c == '\t')
                    PUT(p, "&#9;");
                else
                    PUT(p, "&#10;");
                break;
            }
            *p++ = (char)c;
            continue; /* as it is */
        default: /* the other control characters */
            if (mode == TX_CELL) {
                PUT(p, "_x00");
                *p++ = HEX[c >> 4];
                *p++ = HEX[c & 15];
                *p++ = '_';
            } else if (c == '\r') {
                PUT(p, "&#13;");
            } else {
                PUT(p, "\xEF\xBF\xBD");
            }
            break;
        }
        run = i; /* an escape: the output no longer holds the text as it is */
    }
}

/* Append escaped text to b. */
void tl_xb_text(tl_buf *b, const char *s, size_t n, int mode)
{
    char *p = xb_room(b, 7 * n + 1);
    xb_done(b, put_text(p, s, n, mode));
}

void tl_xb_texts(tl_buf *b, const char *s, int mode) { tl_xb_text(b, s, strlen(s), mode); }

/* Characters (code points) in s[0..n), counting at most `cap`. */
size_t tl_text_chars(const char *s, size_t n, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* Bytes of the first `chars` characters of s[0..n). */
static size_t text_prefix(const char *s, size_t n, size_t chars)
{
    size_t i = 0;
    while (i < n && chars) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}


/* ---- references ---------------------------------------------------------------------- */

/* Decimal digits of v; returns their count. */
size_t tl_xb_dec(size_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* "B7": 0-based column, 1-based row. */
void tl_xb_ref(tl_buf *b, size_t col, size_t row, int absolute)
{
    char l[8], d[24];
    tl_excel_col_letters(col, l);
    tl_xb_dec(row, d);
    if (absolute)
        tl_buf_printf(b, "$%s$%s", l, d);
    else
        tl_buf_printf(b, "%s%s", l, d);
}

/* A sheet name in a formula: 'name' with quotes doubled, escaped for XML. */
void tl_xb_sheet_ref(tl_buf *b, const char *tab)
{
    tl_buf_addc(b, '\'');
    for (const char *s = tab; *s; s++) {
        const char *q = strchr(s, '\'');
        size_t n = q ? (size_t)(q - s) : strlen(s);
        tl_xb_text(b, s, n, TX_PLAIN);
        s += n;
        if (!q)
            break;
        tl_buf_adds(b, "''");
    }
    tl_buf_adds(b, "'!");
}


/* ---- cells and rows ------------------------------------------------------------------- */


/* The cell reference: column letters and row digits, copied in fixed 4- and 8-byte
 * moves (the room reserved per cell covers the overshoot; `row` holds at least 8 bytes). */
static inline char *put_ref(char *p, const colinfo *ci, const char *row, size_t rowlen)
{
    memcpy(p, ci->ref, 4);
    p += ci->reflen;
    memcpy(p, row, 8);
    return p + rowlen;
}

/* <c r="B7"[ s="N"] t="inlineStr"><is><t>text</t></is></c>, the text cut to Excel's limit. */
char *tl_put_str_cell(tl_buf *b, char *p, const colinfo *ci, const char *row, size_t rowlen, int xf,
                          const char *s, size_t n, const sheet_ctx *sc, const char *colname, size_t rownum)
{
    if (n > TL_EXCEL_MAX_TEXT && tl_text_chars(s, n, (size_t)-1) > TL_EXCEL_MAX_TEXT) {
        n = text_prefix(s, n, TL_EXCEL_MAX_TEXT);
        pthread_mutex_t *outer = tl_oom_lock(&warn_mu);
        if (!ncut++) {
            tl_buf m = {0};
            tl_buf_printf(&m, "sheet '%s', column '%s', row %zu", sc->name, colname, rownum);
            first_cut = tl_xstrdup(tl_buf_cstr(&m));
            tl_buf_free(&m);
        }
        tl_oom_unlock(&warn_mu, outer);
    }
    p = xb_ensure(b, p, 7 * n + XL_CELL_MAX);
    PUT(p, "<c r=\"");
    p = put_ref(p, ci, row, rowlen);
    if (xf == XF_BOLD)
        PUT(p, "\" s=\"1");
    PUT(p, "\" t=\"inlineStr\"><is><t");
    unsigned char first = (unsigned char)s[0], last = (unsigned char)s[n - 1];
    if (first == ' ' || first == '\t' || first == '\n' || first == '\r' || last == ' ' || last == '\t' ||
        last == '\n' || last == '\r')
        PUT(p, " xml:space=\"preserve\"");
    *p++ = '>';
    p = put_text(p, s, n, TX_CELL);
    PUT(p, "</t></is></c>");
    return p;
}

/* The start of a number cell, up to where its value goes: <c r="B7"[ s="N"]><v> */
static inline char *put_num_cell(char *p, const colinfo *ci, const char *row, size_t rowlen)
{
    PUT(p, "<c r=\"");
    p = put_ref(p, ci, row, rowlen);
    if (ci->xf != XF_GENERAL) {
        PUT(p, "\" s=\"");
        *p++ = (char)('0' + ci->xf);
    }
    PUT(p, "\"><v>");
    return p;
}

/* The header row: the column names in bold. */
void tl_xb_header_row(tl_buf *b, const tl_table *t, const colinfo *ci, size_t rownum, const sheet_ctx *sc)
{
    char row[24] = {0};
    size_t rowlen = tl_xb_dec(rownum, row);
    char *p = xb_room(b, 32);
    PUT(p, "<row r=\"");
    memcpy(p, row, rowlen);
    p += rowlen;
    PUT(p, "\">");
    for (size_t c = 0; c < t->ncols; c++) {
        const char *name = t->cols[c].name;
        if (name && *name)
            p = tl_put_str_cell(b, p, &ci[c], row, rowlen, XF_BOLD, name, strlen(name), sc, name, rownum);
    }
    xb_done(b, p);
    tl_buf_adds(b, "</row>");
}

/* Hand what b holds to the compressor (when there is one) and empty b. */
void tl_xb_flush(tl_buf *b, tl_zip_compressor *comp)
{
    if (comp && b->len) {
        tl_zip_stream_write(comp, b->data, b->len);
        tl_buf_clear(b);
    }
}


/* Records r0 .. r1-1 of table t as worksheet rows first_row + r; every ~XL_CHUNK bytes
 * go to the compressor, so a sheet's XML is never whole in memory. */
void tl_xb_rows(tl_buf *b, const tl_table *t, const colinfo *ci, size_t r0, size_t r1, size_t first_row,
                    const sheet_ctx *sc, tl_zip_compressor *comp)
{
    size_t ncols = t->ncols;
    size_t need = ncols * XL_CELL_MAX + 64;
    for (size_t r = r0; r < r1; r++) {
        char row[24] = {0};
        size_t rownum = first_row + r;
        size_t rowlen = tl_xb_dec(rownum, row);
        tl_table_prefetch_row(t, r);
        char *p = xb_room(b, need);
        PUT(p, "<row r=\"");
        memcpy(p, row, rowlen);
        p += rowlen;
        PUT(p, "\">");
        for (size_t c = 0; c < ncols; c++) {
            const tl_cell *cell = &t->cols[c].cells[r];
            switch (cell->kind) {
            case TL_INT:
                p = put_num_cell(p, &ci[c], row, rowlen);
                p += tl_fmt_int(cell->v.i, p);
                PUT(p, "</v></c>");
                break;
            case TL_FLOAT:
                if (isfinite(cell->v.f)) {
                    p = put_num_cell(p, &ci[c], row, rowlen);
                    size_t n;
                    const char *text = tl_float_text(t, c, cell, &n);
                    if (text) { /* made once for this and the CSV (a fixed-size move) */
                        memcpy(p, text, TL_FLOAT_TEXT_SLACK);
                        p += n;
                    } else {
                        p += tl_fmt_double(cell->v.f, p);
                    }
                    PUT(p, "</v></c>");
                } else {
                    /* Excel has no NaN or infinities (a number cell holding one makes Excel
                     * repair the file and openpyxl fail to read it): text, as the CSV has it.
                     * Only the perf sheets' double parameter columns hold a NaN cell (a
                     * missing parameter); a missing value elsewhere is an empty cell. */
                    const char *s = isnan(cell->v.f) ? "nan" : cell->v.f < 0 ? "-inf" : "inf";
                    p = tl_put_str_cell(b, p, &ci[c], row, rowlen, XF_GENERAL, s, strlen(s), sc,
                                     t->cols[c].name, rownum);
                    p = xb_ensure(b, p, need);
                }
                break;
            case TL_BOOL:
                PUT(p, "<c r=\"");
                p = put_ref(p, &ci[c], row, rowlen);
                PUT(p, "\" t=\"b\"><v>");
                *p++ = cell->v.b ? '1' : '0';
                PUT(p, "</v></c>");
                break;
            case TL_STR: {
                size_t n = tl_cell_len(cell);
                if (n == 0)
                    break; /* the empty string is missing */
                p = tl_put_str_cell(b, p, &ci[c], row, rowlen, XF_GENERAL, cell->v.s, n, sc, t->cols[c].name,
                                 rownum);
                p = xb_ensure(b, p, need);
                break;
            }
            default:
                break;
            }
        }
        PUT(p, "</row>");
        xb_done(b, p);
        if (b->len >= XL_CHUNK)
            tl_xb_flush(b, comp);
    }
}


/* ---- conditional formats ----------------------------------------------------------------- */

/* Append "B2:B100" to a space-separated sqref list. */
void tl_xb_range(tl_buf *sq, size_t col, size_t r1, size_t r2)
{
    if (sq->len)
        tl_buf_addc(sq, ' ');
    tl_xb_ref(sq, col, r1, 0);
    tl_buf_addc(sq, ':');
    tl_xb_ref(sq, col, r2, 0);
}

/* Red when a value grew and green when it shrank (lower is better), or the other way. */
void tl_xb_cf(tl_buf *b, const tl_buf *lower, const tl_buf *higher)
{
    const tl_buf *sq[2] = {lower, higher};
    int prio = 1;
    for (int k = 0; k < 2; k++) {
        if (!sq[k]->len)
            continue;
        int up = k == 0 ? 0 : 1, down = k == 0 ? 1 : 0; /* dxf 0 red, 1 green */
        tl_buf_printf(b,
                      "<conditionalFormatting sqref=\"%s\">"
                      "<cfRule type=\"cellIs\" dxfId=\"%d\" priority=\"%d\" operator=\"greaterThan\">"
                      "<formula>0</formula></cfRule>"
                      "<cfRule type=\"cellIs\" dxfId=\"%d\" priority=\"%d\" operator=\"lessThan\">"
                      "<formula>0</formula></cfRule></conditionalFormatting>",
                      sq[k]->data, up, prio, down, prio + 1);
        prio += 2;
    }
}


/* ---- worksheets ------------------------------------------------------------------------ */

void tl_xb_sheet_open(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b, "<worksheet xmlns=\"%s\" xmlns:r=\"%s\">", NS_MAIN, NS_REL);
}

/* An empty worksheet (a result without a table; the summary before its rows). */
void tl_render_empty(tl_buf *b, int selected)
{
    tl_xb_sheet_open(b);
    tl_buf_printf(b,
                  "<dimension ref=\"A1\"/><sheetViews><sheetView%s workbookViewId=\"0\"/></sheetViews>"
                  "<sheetFormatPr defaultRowHeight=\"15\"/><sheetData/>%s</worksheet>",
                  selected ? " tabSelected=\"1\"" : "", SHEET_TAIL);
}
