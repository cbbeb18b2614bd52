/*
 * xlsx_write.c - the comparison workbook, written by a built-in streaming OOXML writer
 * (see xlsx_write.h).
 *
 * Why a writer of our own: libxlsxwriter manages ~0.76 M cells/s here, half of it in
 * zlib at its default level and a third in printf("%.16G"); a comparison of two large
 * reports makes ~10 M cells.  This writer renders each worksheet's XML straight into a
 * memory buffer (no per-cell objects, no printf in the cell loop: column letters are
 * made once per sheet, row numbers once per row, numbers by numfmt.h), compresses it
 * whole with ISA-L's igzip at level 1 (zip_write.c says why), and renders and
 * compresses sheets on several threads.  On the benchmark (bench/bench_xlsx.c, 10.8 M
 * cells) that is ~2.2 s of CPU against libxlsxwriter's ~19.6 s.
 *
 * Format choices:
 *  - Strings are inline (`t="inlineStr"`), not shared.  A shared-string table needs one
 *    global string -> index map filled in sheet order, which would serialise the
 *    rendering threads (or need a merge pass and a second rendering), and it holds every
 *    distinct string of the workbook in memory until the end.  The texts that repeat in
 *    these workbooks (kernel names, shapes) repeat mostly within a sheet, where DEFLATE's
 *    32 KiB window already folds them (TraceLens' own writer uses inline strings too).
 *  - Every cell carries its `r` reference (some readers, the conformance checker among
 *    them, need it) and every record row is written, even an empty one, so row positions
 *    never depend on how a reader counts.
 *  - Numbers are written as Python's repr (shortest round-trip text: "0.1", "1e-05"),
 *    which is valid xsd:double and reads back to the same double; integers exactly.  NaN
 *    and +-inf are the strings "nan", "inf", "-inf" (Excel has none of them; the sheets
 *    write a missing value as an empty cell, not as NaN).
 *  - Text is escaped for XML (& < > "), characters XML 1.0 cannot carry become OOXML's
 *    `_xHHHH_` escapes (a literal `_xHHHH_` gets its underscore escaped as `_x005F_`),
 *    invalid UTF-8 becomes U+FFFD (in the workbook only: the CSVs keep the bytes), and
 *    text longer than Excel's 32,767 characters is cut, with a warning.
 *  - Presentation never changes a value: styles.xml holds bold (header), four number
 *    formats chosen from the column name, and two dxf colourings for the conditional
 *    formats of diff/pct columns.
 *
 * Memory: a sheet's XML is made in pieces of ~1 MiB, each handed to a streaming DEFLATE
 * compressor as soon as it is full (and still in cache), so only compressed sheets are
 * ever whole in memory.
 *
 * Threads: rendering and compressing are nearly all the work, and a sheet's compressed
 * blob goes into the zip whole, in any order (readers find parts through the central
 * directory), so sheets are jobs of a pool (pool.h) - pieces of ~10 MB of a sheet's XML
 * are, each compressed on its own, ended with a sync flush and joined into the part, so
 * that even the last big sheet is shared between the pool's thread and the caller
 * helping at the end.  Writing a whole book at once (tl_xlsx_write) is the streaming
 * writer given every result.  Each thread has its own compressor and XML
 * buffer; the zip is written under a lock.
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
#include <time.h>

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
    pthread_mutex_lock(&warn_mu);
    if (ncut)
        tl_warn("%zu cell%s held text longer than Excel's %u characters, cut in the workbook (the CSV keeps it "
                "whole); the first: %s", ncut, ncut == 1 ? "" : "s", TL_EXCEL_MAX_TEXT, first_cut);
    ncut = 0;
    free(first_cut);
    first_cut = NULL;
    pthread_mutex_unlock(&warn_mu);
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
void xb_text(tl_buf *b, const char *s, size_t n, int mode)
{
    char *p = xb_room(b, 7 * n + 1);
    xb_done(b, put_text(p, s, n, mode));
}

void xb_texts(tl_buf *b, const char *s, int mode) { xb_text(b, s, strlen(s), mode); }

/* Characters (code points) in s[0..n), counting at most `cap`. */
size_t text_chars(const char *s, size_t n, size_t cap)
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
size_t xb_dec(size_t v, char *out)
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
void xb_ref(tl_buf *b, size_t col, size_t row, int absolute)
{
    char l[8], d[24];
    tl_excel_col_letters(col, l);
    xb_dec(row, d);
    if (absolute)
        tl_buf_printf(b, "$%s$%s", l, d);
    else
        tl_buf_printf(b, "%s%s", l, d);
}

/* A sheet name in a formula: 'name' with quotes doubled, escaped for XML. */
void xb_sheet_ref(tl_buf *b, const char *tab)
{
    tl_buf_addc(b, '\'');
    for (const char *s = tab; *s; s++) {
        const char *q = strchr(s, '\'');
        size_t n = q ? (size_t)(q - s) : strlen(s);
        xb_text(b, s, n, TX_PLAIN);
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
char *put_str_cell(tl_buf *b, char *p, const colinfo *ci, const char *row, size_t rowlen, int xf,
                          const char *s, size_t n, const sheet_ctx *sc, const char *colname, size_t rownum)
{
    if (n > TL_EXCEL_MAX_TEXT && text_chars(s, n, (size_t)-1) > TL_EXCEL_MAX_TEXT) {
        n = text_prefix(s, n, TL_EXCEL_MAX_TEXT);
        pthread_mutex_lock(&warn_mu);
        if (!ncut++) {
            tl_buf m = {0};
            tl_buf_printf(&m, "sheet '%s', column '%s', row %zu", sc->name, colname, rownum);
            first_cut = tl_xstrdup(tl_buf_cstr(&m));
            tl_buf_free(&m);
        }
        pthread_mutex_unlock(&warn_mu);
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
void xb_header_row(tl_buf *b, const tl_table *t, const colinfo *ci, size_t rownum, const sheet_ctx *sc)
{
    char row[24] = {0};
    size_t rowlen = xb_dec(rownum, row);
    char *p = xb_room(b, 32);
    PUT(p, "<row r=\"");
    memcpy(p, row, rowlen);
    p += rowlen;
    PUT(p, "\">");
    for (size_t c = 0; c < t->ncols; c++) {
        const char *name = t->cols[c].name;
        if (name && *name)
            p = put_str_cell(b, p, &ci[c], row, rowlen, XF_BOLD, name, strlen(name), sc, name, rownum);
    }
    xb_done(b, p);
    tl_buf_adds(b, "</row>");
}

/* Hand what b holds to the compressor (when there is one) and empty b. */
void xb_flush(tl_buf *b, tl_zip_compressor *comp)
{
    if (comp && b->len) {
        tl_zip_stream_write(comp, b->data, b->len);
        tl_buf_clear(b);
    }
}


/* Records r0 .. r1-1 of table t as worksheet rows first_row + r; every ~XL_CHUNK bytes
 * go to the compressor, so a sheet's XML is never whole in memory. */
void xb_rows(tl_buf *b, const tl_table *t, const colinfo *ci, size_t r0, size_t r1, size_t first_row,
                    const sheet_ctx *sc, tl_zip_compressor *comp)
{
    size_t ncols = t->ncols;
    size_t need = ncols * XL_CELL_MAX + 64;
    for (size_t r = r0; r < r1; r++) {
        char row[24] = {0};
        size_t rownum = first_row + r;
        size_t rowlen = xb_dec(rownum, row);
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
                    p = put_str_cell(b, p, &ci[c], row, rowlen, XF_GENERAL, s, strlen(s), sc,
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
                p = put_str_cell(b, p, &ci[c], row, rowlen, XF_GENERAL, cell->v.s, n, sc, t->cols[c].name,
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
            xb_flush(b, comp);
    }
}


/* ---- conditional formats ----------------------------------------------------------------- */

/* Append "B2:B100" to a space-separated sqref list. */
void xb_range(tl_buf *sq, size_t col, size_t r1, size_t r2)
{
    if (sq->len)
        tl_buf_addc(sq, ' ');
    xb_ref(sq, col, r1, 0);
    tl_buf_addc(sq, ':');
    xb_ref(sq, col, r2, 0);
}

/* Red when a value grew and green when it shrank (lower is better), or the other way. */
void xb_cf(tl_buf *b, const tl_buf *lower, const tl_buf *higher)
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

void xb_sheet_open(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b, "<worksheet xmlns=\"%s\" xmlns:r=\"%s\">", NS_MAIN, NS_REL);
}


void render_empty(tl_buf *b, int selected)
{
    xb_sheet_open(b);
    tl_buf_printf(b,
                  "<dimension ref=\"A1\"/><sheetViews><sheetView%s workbookViewId=\"0\"/></sheetViews>"
                  "<sheetFormatPr defaultRowHeight=\"15\"/><sheetData/>%s</worksheet>",
                  selected ? " tabSelected=\"1\"" : "", SHEET_TAIL);
}

/* A result sheet's columns: letters, number styles, colourings, hidden, widths (from
 * the names and the first rows).  Computed once per sheet, whatever its pieces. */
colinfo *sheet_columns(const tl_result *res)
{
    const tl_table *t = res->table;
    colinfo *ci = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *ci);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        ci[c].reflen = (uint8_t)tl_excel_col_letters(c, ci[c].ref);
        classify_column(col, t->nrows, &ci[c]);
        ci[c].hidden = (uint8_t)tl_result_hides(res, col->name);
        size_t head = text_chars(col->name, strlen(col->name), XL_WIDTH_MAX) + 3; /* bold, filter button */
        size_t body = column_chars(t, c, ci[c].xf);
        ci[c].width = fit_width(head > body ? head : body);
    }
    return ci;
}

/*
 * Records r0 .. r1-1 of result res (a table with columns) as worksheet XML: the piece
 * that starts at record 0 opens the worksheet (and writes the header row), the one that
 * ends at the last record closes it.  Pieces rendered separately and put together in
 * order make the same XML as the whole.
 */
void render_result_rows(const tl_result *res, const colinfo *ci, int selected, size_t r0, size_t r1,
                               tl_buf *b, tl_zip_compressor *comp)
{
    const tl_table *t = res->table;
    sheet_ctx sc = {res->name};
    size_t last_row = t->nrows + 1;
    if (r0 == 0) {
        xb_sheet_open(b);
        tl_buf_printf(b, "<dimension ref=\"A1:%s%zu\"/>", ci[t->ncols - 1].ref, last_row);
        tl_buf_printf(b,
                      "<sheetViews><sheetView%s workbookViewId=\"0\">"
                      "<pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/>"
                      "<selection pane=\"bottomLeft\" activeCell=\"A2\" sqref=\"A2\"/></sheetView></sheetViews>"
                      "<sheetFormatPr defaultRowHeight=\"15\"/>",
                      selected ? " tabSelected=\"1\"" : "");
        xb_cols(b, ci, t->ncols);
        tl_buf_adds(b, "<sheetData>");
        xb_header_row(b, t, ci, 1, &sc);
    }
    xb_rows(b, t, ci, r0, r1, 2, &sc, comp);
    if (r1 < t->nrows)
        return;
    tl_buf_adds(b, "</sheetData>");
    tl_buf_printf(b, "<autoFilter ref=\"A1:%s%zu\"/>", ci[t->ncols - 1].ref, last_row);
    if (t->nrows) {
        tl_buf lower = {0}, higher = {0};
        for (size_t c = 0; c < t->ncols; c++)
            if (ci[c].cf != CF_NONE)
                xb_range(ci[c].cf == CF_LOWER_BETTER ? &lower : &higher, c, 2, last_row);
        xb_cf(b, &lower, &higher);
        tl_buf_free(&lower);
        tl_buf_free(&higher);
    }
    tl_buf_adds(b, SHEET_TAIL);
    tl_buf_adds(b, "</worksheet>");
}

int result_is_empty(const tl_result *res) { return !res->table || res->table->ncols == 0; }

static void render_result(const tl_result *res, int selected, tl_buf *b, tl_zip_compressor *comp)
{
    if (result_is_empty(res)) {
        render_empty(b, selected);
        return;
    }
    colinfo *ci = sheet_columns(res);
    render_result_rows(res, ci, selected, 0, res->table->nrows, b, comp);
    free(ci);
}


/* ---- the package parts ----------------------------------------------------------------- */


void part_content_types(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_adds(b,
                "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
                "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
                "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
                "<Override PartName=\"/xl/workbook.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
                "<Override PartName=\"/xl/styles.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>"
                "<Override PartName=\"/docProps/core.xml\" "
                "ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
                "<Override PartName=\"/docProps/app.xml\" "
                "ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/>");
    for (size_t i = 0; i < bk->nsheets; i++)
        tl_buf_printf(b,
                      "<Override PartName=\"/xl/worksheets/sheet%zu.xml\" "
                      "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>",
                      bk->jobs[i].file);
    if (bk->has_chart)
        tl_buf_adds(b, "<Override PartName=\"/xl/drawings/drawing1.xml\" "
                       "ContentType=\"application/vnd.openxmlformats-officedocument.drawing+xml\"/>"
                       "<Override PartName=\"/xl/charts/chart1.xml\" "
                       "ContentType=\"application/vnd.openxmlformats-officedocument.drawingml.chart+xml\"/>");
    tl_buf_adds(b, "</Types>");
}

void part_root_rels(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<Relationships xmlns=\"%s\">"
                  "<Relationship Id=\"rId1\" Type=\"%s/officeDocument\" Target=\"xl/workbook.xml\"/>"
                  "<Relationship Id=\"rId2\" "
                  "Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" "
                  "Target=\"docProps/core.xml\"/>"
                  "<Relationship Id=\"rId3\" Type=\"%s/extended-properties\" Target=\"docProps/app.xml\"/>"
                  "</Relationships>",
                  NS_PKGREL, NS_REL, NS_REL);
}

void part_app(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_adds(b, "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\" "
                   "xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">"
                   "<Application>tlcompare</Application><DocSecurity>0</DocSecurity>"
                   "<ScaleCrop>false</ScaleCrop></Properties>");
}

void part_core(tl_buf *b)
{
    char when[32] = "1980-01-01T00:00:00Z";
    time_t now = time(NULL);
    struct tm tm;
    if (now != (time_t)-1 && gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<cp:coreProperties "
                  "xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" "
                  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" "
                  "xmlns:dcmitype=\"http://purl.org/dc/dcmitype/\" "
                  "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"
                  "<dc:title>TraceLens performance comparison</dc:title><dc:creator>tlcompare</dc:creator>"
                  "<dcterms:created xsi:type=\"dcterms:W3CDTF\">%s</dcterms:created>"
                  "<dcterms:modified xsi:type=\"dcterms:W3CDTF\">%s</dcterms:modified>"
                  "</cp:coreProperties>",
                  when, when);
}

void part_workbook(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<workbook xmlns=\"%s\" xmlns:r=\"%s\"><workbookPr/>"
                  "<bookViews><workbookView xWindow=\"0\" yWindow=\"0\" windowWidth=\"28800\" "
                  "windowHeight=\"15000\" activeTab=\"0\"/></bookViews><sheets>",
                  NS_MAIN, NS_REL);
    for (size_t i = 0; i < bk->nsheets; i++) {
        tl_buf_adds(b, "<sheet name=\"");
        xb_texts(b, bk->jobs[i].tab, TX_ATTR);
        tl_buf_printf(b, "\" sheetId=\"%zu\" r:id=\"rId%zu\"/>", bk->jobs[i].file, bk->jobs[i].file);
    }
    tl_buf_adds(b, "</sheets>");
    /* Excel keeps an autofilter's range in a hidden name per sheet. */
    int any = 0;
    for (size_t i = 0; i < bk->nsheets; i++) {
        const sheet_job *j = &bk->jobs[i];
        if (j->kind != SHEET_RESULT || !j->ncols)
            continue;
        if (!any)
            tl_buf_adds(b, "<definedNames>");
        any = 1;
        tl_buf_printf(b, "<definedName name=\"_xlnm._FilterDatabase\" localSheetId=\"%zu\" hidden=\"1\">", i);
        xb_sheet_ref(b, j->tab);
        xb_ref(b, 0, 1, 1);
        tl_buf_addc(b, ':');
        xb_ref(b, j->ncols - 1, j->nrows + 1, 1);
        tl_buf_adds(b, "</definedName>");
    }
    if (any)
        tl_buf_adds(b, "</definedNames>");
    tl_buf_adds(b, "<calcPr calcId=\"124519\" fullCalcOnLoad=\"1\"/></workbook>");
}

void part_workbook_rels(const book *bk, tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b, "<Relationships xmlns=\"%s\">", NS_PKGREL);
    for (size_t i = 0; i < bk->nsheets; i++)
        tl_buf_printf(b, "<Relationship Id=\"rId%zu\" Type=\"%s/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
                      bk->jobs[i].file, NS_REL, bk->jobs[i].file);
    tl_buf_printf(b, "<Relationship Id=\"rId%zu\" Type=\"%s/styles\" Target=\"styles.xml\"/></Relationships>",
                  bk->nsheets + 1, NS_REL);
}

/* The cellXfs follow the XF_* order; dxf 0 is red (worse), dxf 1 green (better). */
void part_styles(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<styleSheet xmlns=\"%s\">"
                  "<numFmts count=\"1\"><numFmt numFmtId=\"164\" formatCode=\"#,##0.000\"/></numFmts>"
                  "<fonts count=\"2\">"
                  "<font><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
                  "<font><b/><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
                  "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill>"
                  "<fill><patternFill patternType=\"gray125\"/></fill></fills>"
                  "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
                  "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/>"
                  "</cellStyleXfs>"
                  "<cellXfs count=\"6\">"
                  "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
                  "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyFont=\"1\"/>"
                  "<xf numFmtId=\"2\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"4\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "<xf numFmtId=\"3\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
                  "</cellXfs>"
                  "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
                  "<dxfs count=\"2\">"
                  "<dxf><font><color rgb=\"FF9C0006\"/></font><fill><patternFill><bgColor rgb=\"FFFFC7CE\"/>"
                  "</patternFill></fill></dxf>"
                  "<dxf><font><color rgb=\"FF006100\"/></font><fill><patternFill><bgColor rgb=\"FFC6EFCE\"/>"
                  "</patternFill></fill></dxf></dxfs>"
                  "<tableStyles count=\"0\" defaultTableStyle=\"TableStyleMedium9\" "
                  "defaultPivotStyle=\"PivotStyleLight16\"/></styleSheet>",
                  NS_MAIN);
}

void part_rels_one(tl_buf *b, const char *type, const char *target)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<Relationships xmlns=\"%s\"><Relationship Id=\"rId1\" Type=\"%s/%s\" Target=\"%s\"/>"
                  "</Relationships>",
                  NS_PKGREL, NS_REL, type, target);
}


/* ---- rendering the sheets ------------------------------------------------------------- */

/* Render sheet i and compress it, as it is made, into *blob (b: a buffer to reuse). */
void render_job(const book *bk, size_t i, tl_buf *b, tl_zip_compressor *comp, tl_zip_blob *blob)
{
    const sheet_job *j = &bk->jobs[i];
    tl_buf_clear(b);
    tl_zip_stream_begin(comp, blob);
    switch (j->kind) {
    case SHEET_SUMMARY: render_summary(&bk->plan, j->tab, i == 0, b, comp); break;
    case SHEET_RESULT: render_result(j->res, i == 0, b, comp); break;
    default: render_empty(b, i == 0); break;
    }
    xb_flush(b, comp);
    tl_zip_stream_finish(comp);
}

int write_sheet(tl_zip *z, sheet_job *j, tl_error *err)
{
    char name[48];
    snprintf(name, sizeof name, "xl/worksheets/sheet%zu.xml", j->file);
    int rc = tl_zip_add_blob(z, name, &j->blob, err);
    tl_zip_blob_free(&j->blob);
    return rc;
}


render_state *render_states_new(int n) { return tl_xcalloc((size_t)n, sizeof(render_state)); }

void render_states_free(render_state *st, int n)
{
    for (int i = 0; i < n; i++) {
        tl_zip_compressor_free(st[i].comp);
        tl_buf_free(&st[i].xml);
    }
    free(st);
}


/* ---- the workbook ------------------------------------------------------------------------- */

int add_part(tl_zip *z, const char *name, tl_buf *b, tl_error *err)
{
    int rc = tl_zip_add(z, name, b->data, b->len, err);
    tl_buf_clear(b);
    return rc;
}

/* A tab for the summary: its name made legal, and unlike every result's tab. */
char *summary_tab(const char *name, char **tabs, size_t n)
{
    return tl_tab_unique(name && *name ? name : "summary", tabs, n);
}

/* Whether result r fits a worksheet (else *err says so, naming `path`). */
int result_fits(const tl_result *r, const char *path, tl_error *err)
{
    const tl_table *t = r->table;
    if (t->ncols <= TL_EXCEL_MAX_COLS && t->nrows + 1 <= TL_EXCEL_MAX_ROWS)
        return 1;
    tl_error_set(err, "%s: result '%s' has %zu rows x %zu columns, more than a worksheet holds "
                      "(1,048,575 x 16,384)", path, r->name, t->nrows, t->ncols);
    return 0;
}

/* Whether summary plan pl fits a worksheet (else *err says so, naming `path`). */
int summary_fits(const summary_plan *pl, const char *path, tl_error *err)
{
    if (pl->nrows <= TL_EXCEL_MAX_ROWS && pl->ncols <= TL_EXCEL_MAX_COLS - 14)
        return 1;
    tl_error_set(err, "%s: the summary sheet is larger than a worksheet", path);
    return 0;
}

