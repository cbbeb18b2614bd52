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
 *    is an empty cell, +-inf the strings "inf"/"-inf" (Excel has no infinities).
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
#include "write/xlsx_write.h"

#include "base/numfmt.h"
#include "base/pool.h"
#include "base/textblock.h"
#include "io/zip_write.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>


#define XL_MAX_ROWS 1048576u
#define XL_MAX_COLS 16384u
#define XL_MAX_TEXT 32767u    /* Excel's limit on a cell's text, in characters */
#define XL_WIDTH_ROWS 200     /* rows looked at to fit a column's width */
#define XL_WIDTH_MIN 8
#define XL_WIDTH_MAX 60
#define XL_CELL_MAX 128       /* XML bytes of one number or boolean cell, at most */
#define XL_MAX_THREADS 64
#define XL_CHUNK ((size_t)1 << 20) /* worksheet XML handed to the compressor in pieces of ~1 MiB */

/* cellXfs indexes in styles.xml */
enum { XF_GENERAL, XF_BOLD, XF_PCT, XF_MS, XF_US, XF_COUNT };
/* conditional colouring of a column */
enum { CF_NONE, CF_LOWER_BETTER, CF_HIGHER_BETTER };
/* text contexts */
enum { TX_CELL, TX_PLAIN, TX_ATTR };

static const char XML_DECL[] = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";
static const char NS_MAIN[] = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
static const char NS_REL[] = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
static const char NS_PKGREL[] = "http://schemas.openxmlformats.org/package/2006/relationships";

static pthread_mutex_t warn_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the output buffer -------------------------------------------------------------------- */

/* Room for n more bytes (and the NUL); returns where they go. */
static inline char *xb_room(tl_buf *b, size_t n)
{
    if (b->cap - b->len < n + 1)
        tl_buf_reserve(b, n);
    return b->data + b->len;
}

/* The bytes up to p were written. */
static inline void xb_done(tl_buf *b, char *p)
{
    b->len = (size_t)(p - b->data);
    b->data[b->len] = '\0';
}

/* Room for n more bytes (and the NUL) at p, the end of what is written so far (b->len
 * may lag behind it): p itself when the room is there, else where p's bytes moved. */
static inline char *xb_ensure(tl_buf *b, char *p, size_t n)
{
    if ((size_t)(b->data + b->cap - p) > n)
        return p;
    xb_done(b, p);
    return xb_room(b, n);
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

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
static void xb_text(tl_buf *b, const char *s, size_t n, int mode)
{
    char *p = xb_room(b, 7 * n + 1);
    xb_done(b, put_text(p, s, n, mode));
}

static void xb_texts(tl_buf *b, const char *s, int mode) { xb_text(b, s, strlen(s), mode); }

/* Characters (code points) in s[0..n), counting at most `cap`. */
static size_t text_chars(const char *s, size_t n, size_t cap)
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

/* Column letters of 0-based column c ("A", "AB", "XFD"); returns their count. */
static size_t col_letters(size_t c, char *out)
{
    char tmp[8];
    size_t n = 0;
    c++;
    while (c) {
        c--;
        tmp[n++] = (char)('A' + c % 26);
        c /= 26;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Decimal digits of v; returns their count. */
static size_t dec(size_t v, char *out)
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
static void xb_ref(tl_buf *b, size_t col, size_t row, int absolute)
{
    char l[8], d[24];
    col_letters(col, l);
    dec(row, d);
    if (absolute)
        tl_buf_printf(b, "$%s$%s", l, d);
    else
        tl_buf_printf(b, "%s%s", l, d);
}

/* A sheet name in a formula: 'name' with quotes doubled, escaped for XML. */
static void xb_sheet_ref(tl_buf *b, const char *tab)
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

/* ---- columns: number format, colour, width ---------------------------------------------- */

typedef struct colinfo {
    char ref[4];     /* column letters */
    uint8_t reflen;
    uint8_t xf;      /* style of the column's number cells */
    uint8_t cf;      /* CF_* */
    uint8_t hidden;
    size_t width;    /* in characters */
} colinfo;

static int has_ci(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (strncasecmp(s + i, w, wl) == 0)
            return 1;
    return 0;
}

static int has(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (memcmp(s + i, w, wl) == 0)
            return 1;
    return 0;
}

static int ends(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    return n >= wl && memcmp(s + n - wl, w, wl) == 0;
}

/* A unit token such as " ms" or "_us": present, and not the start of a longer word. */
static int has_unit(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++) {
        if (memcmp(s + i, w, wl) != 0)
            continue;
        unsigned char next = i + wl < n ? (unsigned char)s[i + wl] : 0;
        if (!((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9')))
            return 1;
    }
    return 0;
}

/* 1 when every number in the column is integral. */
static int integral_column(const tl_column *col, size_t nrows)
{
    for (size_t r = 0; r < nrows; r++) {
        const tl_cell *c = &col->cells[r];
        if (c->kind == TL_FLOAT && isfinite(c->v.f) && c->v.f != floor(c->v.f))
            return 0;
    }
    return 1;
}

/*
 * The metric a column measures and how it looks: the name after "<tag>::", or for a diff
 * column "<metric>__<tag>_diff|_pct" the metric.  Sets the number style and colouring.
 */
static void classify_column(const tl_column *col, size_t nrows, colinfo *ci)
{
    const char *m = col->name ? col->name : "";
    size_t n = strlen(m);
    int pct = 0;
    if (col->role == TL_ROLE_DIFF) {
        pct = ends(m, n, "_pct");
        for (size_t i = n; i >= 2; i--)
            if (m[i - 1] == '_' && m[i - 2] == '_') {
                n = i - 2;
                break;
            }
    } else {
        const char *sep = strstr(m, "::");
        if (sep) {
            n -= (size_t)(sep + 2 - m);
            m = sep + 2;
        }
    }
    if (pct || memchr(m, '%', n) || has_ci(m, n, "percent"))
        ci->xf = XF_PCT;
    else if ((n == 5 && strncasecmp(m, "count", 5) == 0) || ends(m, n, "_count") || ends(m, n, " calls"))
        ci->xf = integral_column(col, nrows) ? XF_COUNT : XF_GENERAL;
    else if (has(m, n, "(ms)") || has_unit(m, n, " ms") || has_unit(m, n, "_ms"))
        ci->xf = XF_MS;
    else if (has(m, n, "(\xC2\xB5s)") || has(m, n, "(us)") || has_unit(m, n, "_us"))
        ci->xf = XF_US;
    else
        ci->xf = XF_GENERAL;
    ci->cf = CF_NONE;
    if (col->role == TL_ROLE_DIFF)
        ci->cf = has(m, n, "TFLOPS/s") || has(m, n, "TB/s") ? CF_HIGHER_BETTER : CF_LOWER_BETTER;
}

/* Characters a number takes when shown in style xf; `text`: its repr() length when
 * already formatted (tl_float_text), else 0. */
static size_t number_chars(double v, int xf, size_t text)
{
    char tmp[TL_NUMFMT_MAX];
    if (!isfinite(v))
        return 4;
    size_t neg = v < 0;
    double a = fabs(v);
    size_t digits = a < 10 ? 1 : (size_t)floor(log10(a)) + 1;
    if (digits > 15)
        xf = XF_GENERAL; /* Excel shows these in scientific notation */
    switch (xf) {
    case XF_PCT: return neg + digits + 3;
    case XF_MS: return neg + digits + (digits - 1) / 3 + 4;
    case XF_US: return neg + digits + (digits - 1) / 3 + 3;
    case XF_COUNT: return neg + digits + (digits - 1) / 3;
    default: {
        size_t n = text ? text : tl_fmt_double(v, tmp);
        return n > 11 ? 11 : n; /* General shows about 11 characters */
    }
    }
}

/* The widest of rows [0, min(nrows, XL_WIDTH_ROWS)) of column `col` of t, in characters. */
static size_t column_chars(const tl_table *t, size_t col, int xf)
{
    size_t w = 0, k, nrows = t->nrows < XL_WIDTH_ROWS ? t->nrows : XL_WIDTH_ROWS, text;
    for (size_t r = 0; r < nrows && w < XL_WIDTH_MAX; r++) {
        const tl_cell *c = &t->cols[col].cells[r];
        switch (c->kind) {
        case TL_INT: k = number_chars((double)c->v.i, xf, 0); break;
        case TL_FLOAT: k = number_chars(c->v.f, xf, tl_float_text(t, col, c, &text) ? text : 0); break;
        case TL_BOOL: k = 5; break;
        case TL_STR: k = text_chars(c->v.s, tl_cell_len(c), XL_WIDTH_MAX); break;
        default: k = 0; break;
        }
        if (k > w)
            w = k;
    }
    return w;
}

static size_t fit_width(size_t chars)
{
    chars += 2;
    return chars < XL_WIDTH_MIN ? XL_WIDTH_MIN : chars > XL_WIDTH_MAX ? XL_WIDTH_MAX : chars;
}

static void xb_cols(tl_buf *b, const colinfo *ci, size_t n)
{
    if (!n)
        return;
    tl_buf_adds(b, "<cols>");
    for (size_t c = 0; c < n; c++)
        tl_buf_printf(b, "<col min=\"%zu\" max=\"%zu\" width=\"%zu.7109375\" customWidth=\"1\"%s/>", c + 1,
                      c + 1, ci[c].width, ci[c].hidden ? " hidden=\"1\"" : "");
    tl_buf_adds(b, "</cols>");
}

/* ---- cells and rows ------------------------------------------------------------------- */

/* What a row of cells needs to know about the sheet, for warnings. */
typedef struct sheet_ctx {
    const char *name; /* the result (or tab) name */
} sheet_ctx;

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
static char *put_str_cell(tl_buf *b, char *p, const colinfo *ci, const char *row, size_t rowlen, int xf,
                          const char *s, size_t n, const sheet_ctx *sc, const char *colname, size_t rownum)
{
    if (n > XL_MAX_TEXT && text_chars(s, n, (size_t)-1) > XL_MAX_TEXT) {
        n = text_prefix(s, n, XL_MAX_TEXT);
        pthread_mutex_lock(&warn_mu);
        tl_warn("sheet '%s', column '%s', row %zu: text longer than Excel's %u characters; cut in the "
                "workbook (the CSV keeps it whole)",
                sc->name, colname, rownum, XL_MAX_TEXT);
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
static void xb_header_row(tl_buf *b, const tl_table *t, const colinfo *ci, size_t rownum, const sheet_ctx *sc)
{
    char row[24] = {0};
    size_t rowlen = dec(rownum, row);
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
static void xb_flush(tl_buf *b, tl_zip_compressor *comp)
{
    if (comp && b->len) {
        tl_zip_stream_write(comp, b->data, b->len);
        tl_buf_clear(b);
    }
}


/* Records r0 .. r1-1 of table t as worksheet rows first_row + r; every ~XL_CHUNK bytes
 * go to the compressor, so a sheet's XML is never whole in memory. */
static void xb_rows(tl_buf *b, const tl_table *t, const colinfo *ci, size_t r0, size_t r1, size_t first_row,
                    const sheet_ctx *sc, tl_zip_compressor *comp)
{
    size_t ncols = t->ncols;
    size_t need = ncols * XL_CELL_MAX + 64;
    for (size_t r = r0; r < r1; r++) {
        char row[24] = {0};
        size_t rownum = first_row + r;
        size_t rowlen = dec(rownum, row);
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
                } else if (isinf(cell->v.f)) {
                    /* Excel has no infinities: text, as the CSV has it */
                    const char *s = cell->v.f < 0 ? "-inf" : "inf";
                    p = put_str_cell(b, p, &ci[c], row, rowlen, XF_GENERAL, s, strlen(s), sc,
                                     t->cols[c].name, rownum);
                    p = xb_ensure(b, p, need);
                }
                break; /* NaN: an empty cell */
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
static void xb_range(tl_buf *sq, size_t col, size_t r1, size_t r2)
{
    if (sq->len)
        tl_buf_addc(sq, ' ');
    xb_ref(sq, col, r1, 0);
    tl_buf_addc(sq, ':');
    xb_ref(sq, col, r2, 0);
}

/* Red when a value grew and green when it shrank (lower is better), or the other way. */
static void xb_cf(tl_buf *b, const tl_buf *lower, const tl_buf *higher)
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

static void xb_sheet_open(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b, "<worksheet xmlns=\"%s\" xmlns:r=\"%s\">", NS_MAIN, NS_REL);
}

static const char SHEET_TAIL[] =
    "<pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" footer=\"0.3\"/>";

static void render_empty(tl_buf *b, int selected)
{
    xb_sheet_open(b);
    tl_buf_printf(b,
                  "<dimension ref=\"A1\"/><sheetViews><sheetView%s workbookViewId=\"0\"/></sheetViews>"
                  "<sheetFormatPr defaultRowHeight=\"15\"/><sheetData/>%s</worksheet>",
                  selected ? " tabSelected=\"1\"" : "", SHEET_TAIL);
}

/* A result sheet's columns: letters, number styles, colourings, hidden, widths (from
 * the names and the first rows).  Computed once per sheet, whatever its pieces. */
static colinfo *sheet_columns(const tl_result *res)
{
    const tl_table *t = res->table;
    colinfo *ci = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *ci);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        ci[c].reflen = (uint8_t)col_letters(c, ci[c].ref);
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
static void render_result_rows(const tl_result *res, const colinfo *ci, int selected, size_t r0, size_t r1,
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

static int result_is_empty(const tl_result *res) { return !res->table || res->table->ncols == 0; }

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

/* ---- the summary worksheet ------------------------------------------------------------- */

/* The summary's blocks, the chart's data as the last one ("chart data"). */
typedef struct summary_plan {
    const tl_summary_sheet *s;
    tl_sheet_block *blocks;
    size_t nblocks;
    tl_table chart_table;     /* the chart's categories and series, when there is a chart */
    size_t *title_row;        /* per block: 1-based row of its title (0: none) */
    size_t *head_row;         /* per block: 1-based row of its header (0: no table) */
    size_t ncols;             /* the widest block */
    size_t nrows;             /* the last row used */
    size_t chart_block;       /* index of the chart data block */
} summary_plan;

static void summary_plan_init(summary_plan *pl, const tl_summary_sheet *s)
{
    memset(pl, 0, sizeof *pl);
    pl->s = s;
    const tl_sheet_chart *ch = s->chart;
    pl->blocks = tl_xcalloc(s->nblocks + 1, sizeof *pl->blocks);
    for (size_t i = 0; i < s->nblocks; i++)
        pl->blocks[i] = s->blocks[i];
    pl->nblocks = s->nblocks;
    if (ch) {
        /* A chart plots cells: its data goes on the sheet, as one more block. */
        tl_table *t = &pl->chart_table;
        t->ncols = 1 + ch->nseries;
        t->nrows = ch->ncategories;
        t->cols = tl_xcalloc(t->ncols, sizeof *t->cols);
        for (size_t c = 0; c < t->ncols; c++) {
            tl_column *col = &t->cols[c];
            col->name = c == 0 ? "category" : ch->series[c - 1].name ? ch->series[c - 1].name : "";
            col->type = c == 0 ? TL_COL_STR : TL_COL_NUM;
            col->cells = tl_xcalloc(t->nrows ? t->nrows : 1, sizeof *col->cells);
            for (size_t r = 0; r < t->nrows; r++) {
                if (c == 0) {
                    const char *cat = ch->categories[r];
                    col->cells[r] = cat && *cat ? tl_cell_str(cat) : tl_cell_missing();
                } else {
                    double v = ch->series[c - 1].values[r];
                    col->cells[r] = isnan(v) ? tl_cell_missing() : tl_cell_float(v);
                }
            }
        }
        pl->chart_block = pl->nblocks;
        pl->blocks[pl->nblocks++] = (tl_sheet_block){"chart data", t};
    }
    pl->title_row = tl_xcalloc(pl->nblocks + 1, sizeof *pl->title_row);
    pl->head_row = tl_xcalloc(pl->nblocks + 1, sizeof *pl->head_row);
    size_t r = 1;
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_sheet_block *bl = &pl->blocks[i];
        if (i > 0)
            r++; /* a blank row between blocks */
        if (bl->title)
            pl->title_row[i] = r++;
        if (bl->table && bl->table->ncols) {
            pl->head_row[i] = r;
            r += 1 + bl->table->nrows;
            if (bl->table->ncols > pl->ncols)
                pl->ncols = bl->table->ncols;
        }
    }
    pl->nrows = r - 1;
}

static void summary_plan_free(summary_plan *pl)
{
    for (size_t c = 0; c < pl->chart_table.ncols; c++)
        free(pl->chart_table.cols[c].cells);
    free(pl->chart_table.cols);
    free(pl->blocks);
    free(pl->title_row);
    free(pl->head_row);
}

static void render_summary(const summary_plan *pl, const char *tab, int selected, tl_buf *b,
                           tl_zip_compressor *comp)
{
    sheet_ctx sc = {tab};
    if (pl->nrows == 0) {
        render_empty(b, selected);
        return;
    }
    size_t ncols = pl->ncols ? pl->ncols : 1;
    colinfo *width = tl_xcalloc(ncols, sizeof *width);
    colinfo **ci = tl_xcalloc(pl->nblocks, sizeof *ci);
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_table *t = pl->blocks[i].table;
        if (!t || !t->ncols)
            continue;
        ci[i] = tl_xcalloc(t->ncols, sizeof **ci);
        for (size_t c = 0; c < t->ncols; c++) {
            const tl_column *col = &t->cols[c];
            ci[i][c].reflen = (uint8_t)col_letters(c, ci[i][c].ref);
            classify_column(col, t->nrows, &ci[i][c]);
            /* a summary is read, not computed with: no column of long raw digits */
            if (ci[i][c].xf == XF_GENERAL)
                ci[i][c].xf = XF_MS;
            size_t head = col->name ? text_chars(col->name, strlen(col->name), XL_WIDTH_MAX) + 1 : 0;
            size_t body = column_chars(t, c, ci[i][c].xf);
            size_t w = fit_width(head > body ? head : body);
            if (w > width[c].width)
                width[c].width = w;
        }
    }
    for (size_t c = 0; c < ncols; c++)
        if (!width[c].width)
            width[c].width = fit_width(0);

    xb_sheet_open(b);
    /* printed landscape, one page wide: the blocks and the chart side by side */
    tl_buf_adds(b, "<sheetPr><pageSetUpPr fitToPage=\"1\"/></sheetPr>");
    char last[8];
    col_letters(ncols - 1, last);
    tl_buf_printf(b, "<dimension ref=\"A1:%s%zu\"/>", last, pl->nrows);
    tl_buf_printf(b,
                  "<sheetViews><sheetView%s workbookViewId=\"0\"/></sheetViews>"
                  "<sheetFormatPr defaultRowHeight=\"15\"/>",
                  selected ? " tabSelected=\"1\"" : "");
    xb_cols(b, width, pl->ncols);
    tl_buf_adds(b, "<sheetData>");
    tl_buf lower = {0}, higher = {0};
    for (size_t i = 0; i < pl->nblocks; i++) {
        const tl_sheet_block *bl = &pl->blocks[i];
        if (pl->title_row[i]) {
            char row[24] = {0};
            size_t rowlen = dec(pl->title_row[i], row);
            colinfo a = {.ref = "A", .reflen = 1};
            char *p = xb_room(b, 32);
            PUT(p, "<row r=\"");
            memcpy(p, row, rowlen);
            p += rowlen;
            PUT(p, "\">");
            if (*bl->title)
                p = put_str_cell(b, p, &a, row, rowlen, XF_BOLD, bl->title, strlen(bl->title), &sc, "A",
                                 pl->title_row[i]);
            xb_done(b, p);
            tl_buf_adds(b, "</row>");
        }
        if (pl->head_row[i]) {
            const tl_table *t = bl->table;
            xb_header_row(b, t, ci[i], pl->head_row[i], &sc);
            xb_rows(b, t, ci[i], 0, t->nrows, pl->head_row[i] + 1, &sc, comp);
            if (t->nrows)
                for (size_t c = 0; c < t->ncols; c++)
                    if (ci[i][c].cf != CF_NONE)
                        xb_range(ci[i][c].cf == CF_LOWER_BETTER ? &lower : &higher, c, pl->head_row[i] + 1,
                                 pl->head_row[i] + t->nrows);
        }
    }
    tl_buf_adds(b, "</sheetData>");
    xb_cf(b, &lower, &higher);
    tl_buf_free(&lower);
    tl_buf_free(&higher);
    tl_buf_adds(b, SHEET_TAIL);
    tl_buf_adds(b, "<pageSetup orientation=\"landscape\" fitToWidth=\"1\" fitToHeight=\"0\"/>");
    if (pl->s->chart)
        tl_buf_adds(b, "<drawing r:id=\"rId1\"/>");
    tl_buf_adds(b, "</worksheet>");
    for (size_t i = 0; i < pl->nblocks; i++)
        free(ci[i]);
    free(ci);
    free(width);
}

/* ---- the chart ----------------------------------------------------------------------- */

static const char *const SERIES_COLOURS[] = {"4472C4", "ED7D31", "A5A5A5", "FFC000", "5B9BD5", "70AD47"};

static void xb_rich(tl_buf *b, const char *text, int size)
{
    tl_buf_printf(b,
                  "<c:tx><c:rich><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz=\"%d\" b=\"1\"/></a:pPr>"
                  "<a:r><a:rPr lang=\"en-US\" sz=\"%d\" b=\"1\"/><a:t>",
                  size, size);
    xb_texts(b, text, TX_PLAIN);
    tl_buf_adds(b, "</a:t></a:r></a:p></c:rich></c:tx><c:overlay val=\"0\"/>");
}

static void render_chart(const summary_plan *pl, const char *tab, tl_buf *b)
{
    const tl_sheet_chart *ch = pl->s->chart;
    size_t head = pl->head_row[pl->chart_block], first = head + 1, lastr = head + ch->ncategories;
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<c:chartSpace xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\" "
                  "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:r=\"%s\">"
                  "<c:roundedCorners val=\"0\"/><c:chart>",
                  NS_REL);
    if (ch->title && *ch->title) {
        tl_buf_adds(b, "<c:title>");
        xb_rich(b, ch->title, 1400);
        tl_buf_adds(b, "</c:title><c:autoTitleDeleted val=\"0\"/>");
    } else {
        tl_buf_adds(b, "<c:autoTitleDeleted val=\"1\"/>");
    }
    tl_buf_adds(b, "<c:plotArea><c:layout/><c:barChart><c:barDir val=\"bar\"/><c:grouping val=\"clustered\"/>"
                   "<c:varyColors val=\"0\"/>");
    for (size_t s = 0; s < ch->nseries; s++) {
        const tl_chart_series *se = &ch->series[s];
        tl_buf_printf(b, "<c:ser><c:idx val=\"%zu\"/><c:order val=\"%zu\"/><c:tx><c:strRef><c:f>", s, s);
        xb_sheet_ref(b, tab);
        xb_ref(b, 1 + s, head, 1);
        tl_buf_adds(b, "</c:f><c:strCache><c:ptCount val=\"1\"/><c:pt idx=\"0\"><c:v>");
        xb_texts(b, se->name ? se->name : "", TX_PLAIN);
        tl_buf_printf(b,
                      "</c:v></c:pt></c:strCache></c:strRef></c:tx>"
                      "<c:spPr><a:solidFill><a:srgbClr val=\"%s\"/></a:solidFill></c:spPr>"
                      "<c:invertIfNegative val=\"0\"/>",
                      SERIES_COLOURS[s % (sizeof SERIES_COLOURS / sizeof *SERIES_COLOURS)]);
        if (ch->ncategories) {
            tl_buf_adds(b, "<c:cat><c:strRef><c:f>");
            xb_sheet_ref(b, tab);
            xb_ref(b, 0, first, 1);
            tl_buf_addc(b, ':');
            xb_ref(b, 0, lastr, 1);
            tl_buf_printf(b, "</c:f><c:strCache><c:ptCount val=\"%zu\"/>", ch->ncategories);
            for (size_t k = 0; k < ch->ncategories; k++) {
                const char *cat = ch->categories[k];
                if (!cat || !*cat)
                    continue;
                tl_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>", k);
                xb_texts(b, cat, TX_PLAIN);
                tl_buf_adds(b, "</c:v></c:pt>");
            }
            tl_buf_adds(b, "</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:f>");
            xb_sheet_ref(b, tab);
            xb_ref(b, 1 + s, first, 1);
            tl_buf_addc(b, ':');
            xb_ref(b, 1 + s, lastr, 1);
            tl_buf_printf(b, "</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val=\"%zu\"/>",
                          ch->ncategories);
            for (size_t k = 0; k < ch->ncategories; k++) {
                double v = se->values[k];
                if (!isfinite(v))
                    continue;
                char num[TL_NUMFMT_MAX];
                tl_fmt_double(v, num);
                tl_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>%s</c:v></c:pt>", k, num);
            }
            tl_buf_adds(b, "</c:numCache></c:numRef></c:val>");
        }
        tl_buf_adds(b, "</c:ser>");
    }
    /* Categories top to bottom in sheet order: the category axis reversed, and the value
     * axis crossing it at its (now bottom) maximum. */
    tl_buf_adds(b, "<c:gapWidth val=\"60\"/><c:axId val=\"50010001\"/><c:axId val=\"50010002\"/></c:barChart>"
                   "<c:catAx><c:axId val=\"50010001\"/><c:scaling><c:orientation val=\"maxMin\"/></c:scaling>"
                   "<c:delete val=\"0\"/><c:axPos val=\"l\"/><c:numFmt formatCode=\"General\" sourceLinked=\"0\"/>"
                   "<c:majorTickMark val=\"none\"/><c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/>"
                   "<c:crossAx val=\"50010002\"/><c:crosses val=\"autoZero\"/><c:auto val=\"1\"/>"
                   "<c:lblAlgn val=\"ctr\"/><c:lblOffset val=\"100\"/><c:noMultiLvlLbl val=\"0\"/></c:catAx>"
                   "<c:valAx><c:axId val=\"50010002\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                   "<c:delete val=\"0\"/><c:axPos val=\"b\"/><c:majorGridlines/>");
    if (ch->value_axis_title && *ch->value_axis_title) {
        tl_buf_adds(b, "<c:title>");
        xb_rich(b, ch->value_axis_title, 1000);
        tl_buf_adds(b, "</c:title>");
    }
    tl_buf_adds(b, "<c:numFmt formatCode=\"General\" sourceLinked=\"0\"/><c:majorTickMark val=\"out\"/>"
                   "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"50010001\"/>"
                   "<c:crosses val=\"max\"/><c:crossBetween val=\"between\"/></c:valAx></c:plotArea>"
                   "<c:legend><c:legendPos val=\"b\"/><c:overlay val=\"0\"/></c:legend>"
                   "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"gap\"/></c:chart></c:chartSpace>");
}

/* The chart sits to the right of the blocks, one column apart, from the second row. */
static void render_drawing(const summary_plan *pl, tl_buf *b)
{
    const tl_sheet_chart *ch = pl->s->chart;
    size_t col = pl->ncols + 1, row = 1;
    size_t bars = ch->ncategories * (ch->nseries ? ch->nseries : 1);
    size_t height = bars + 8 < 20 ? 20 : bars + 8 > 60 ? 60 : bars + 8;
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<xdr:wsDr xmlns:xdr=\"http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing\" "
                  "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\">"
                  "<xdr:twoCellAnchor editAs=\"oneCell\">"
                  "<xdr:from><xdr:col>%zu</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%zu</xdr:row>"
                  "<xdr:rowOff>0</xdr:rowOff></xdr:from>"
                  "<xdr:to><xdr:col>%zu</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>%zu</xdr:row>"
                  "<xdr:rowOff>0</xdr:rowOff></xdr:to>"
                  "<xdr:graphicFrame macro=\"\"><xdr:nvGraphicFramePr><xdr:cNvPr id=\"2\" name=\"Chart 1\"/>"
                  "<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>"
                  "<xdr:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"0\" cy=\"0\"/></xdr:xfrm>"
                  "<a:graphic><a:graphicData uri=\"http://schemas.openxmlformats.org/drawingml/2006/chart\">"
                  "<c:chart xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\" "
                  "xmlns:r=\"%s\" r:id=\"rId1\"/></a:graphicData></a:graphic></xdr:graphicFrame>"
                  "<xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>",
                  col, row, col + 12, row + height, NS_REL);
}

/* ---- the package parts ----------------------------------------------------------------- */

/* One worksheet of the workbook. */
enum { SHEET_EMPTY, SHEET_SUMMARY, SHEET_RESULT };

typedef struct sheet_job {
    int kind;
    const tl_result *res; /* SHEET_RESULT; valid only until the sheet is rendered */
    const char *tab;
    size_t file;          /* its part: xl/worksheets/sheet<file>.xml */
    size_t nrows, ncols;  /* SHEET_RESULT: its size, for the workbook's filter names */
    tl_zip_blob blob;     /* the compressed XML, once done */
} sheet_job;

typedef struct book {
    sheet_job *jobs;
    size_t nsheets;
    char **tabs;          /* the results' tabs */
    char *summary_tab;
    summary_plan plan;    /* when there is a summary */
    int has_summary, has_chart;
} book;

static void part_content_types(const book *bk, tl_buf *b)
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

static void part_root_rels(tl_buf *b)
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

static void part_app(tl_buf *b)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_adds(b, "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\" "
                   "xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">"
                   "<Application>tlcompare</Application><DocSecurity>0</DocSecurity>"
                   "<ScaleCrop>false</ScaleCrop></Properties>");
}

static void part_core(tl_buf *b)
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

static void part_workbook(const book *bk, tl_buf *b)
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

static void part_workbook_rels(const book *bk, tl_buf *b)
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
static void part_styles(tl_buf *b)
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

static void part_rels_one(tl_buf *b, const char *type, const char *target)
{
    tl_buf_adds(b, XML_DECL);
    tl_buf_printf(b,
                  "<Relationships xmlns=\"%s\"><Relationship Id=\"rId1\" Type=\"%s/%s\" Target=\"%s\"/>"
                  "</Relationships>",
                  NS_PKGREL, NS_REL, type, target);
}

/* ---- rendering the sheets ------------------------------------------------------------- */

/* Render sheet i and compress it, as it is made, into *blob (b: a buffer to reuse). */
static void render_job(const book *bk, size_t i, tl_buf *b, tl_zip_compressor *comp, tl_zip_blob *blob)
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

static int write_sheet(tl_zip *z, sheet_job *j, tl_error *err)
{
    char name[48];
    snprintf(name, sizeof name, "xl/worksheets/sheet%zu.xml", j->file);
    int rc = tl_zip_add_blob(z, name, &j->blob, err);
    tl_zip_blob_free(&j->blob);
    return rc;
}

/* Each thread's compressor and XML buffer, reused from sheet to sheet. */
typedef struct render_state {
    tl_zip_compressor *comp; /* made on the first sheet a thread renders */
    tl_buf xml;
} render_state;

static render_state *render_states_new(int n) { return tl_xcalloc((size_t)n, sizeof(render_state)); }

static void render_states_free(render_state *st, int n)
{
    for (int i = 0; i < n; i++) {
        tl_zip_compressor_free(st[i].comp);
        tl_buf_free(&st[i].xml);
    }
    free(st);
}

/* ---- the workbook ------------------------------------------------------------------------- */

static int add_part(tl_zip *z, const char *name, tl_buf *b, tl_error *err)
{
    int rc = tl_zip_add(z, name, b->data, b->len, err);
    tl_buf_clear(b);
    return rc;
}

/* A tab for the summary: its name made legal, and unlike every result's tab. */
static char *summary_tab(const char *name, char **tabs, size_t n)
{
    return tl_tab_unique(name && *name ? name : "summary", tabs, n);
}

/* Whether result r fits a worksheet (else *err says so, naming `path`). */
static int result_fits(const tl_result *r, const char *path, tl_error *err)
{
    const tl_table *t = r->table;
    if (t->ncols <= XL_MAX_COLS && t->nrows + 1 <= XL_MAX_ROWS)
        return 1;
    tl_error_set(err, "%s: result '%s' has %zu rows x %zu columns, more than a worksheet holds "
                      "(1,048,575 x 16,384)", path, r->name, t->nrows, t->ncols);
    return 0;
}

/* Whether summary plan pl fits a worksheet (else *err says so, naming `path`). */
static int summary_fits(const summary_plan *pl, const char *path, tl_error *err)
{
    if (pl->nrows <= XL_MAX_ROWS && pl->ncols <= XL_MAX_COLS - 14)
        return 1;
    tl_error_set(err, "%s: the summary sheet is larger than a worksheet", path);
    return 0;
}

/* The whole workbook at once: the streaming writer below, given every result. */
int tl_xlsx_write(const tl_results *results, const tl_xlsx_write_opts *opts, const char *path,
                  tl_error *err)
{
    /* what cannot be written is refused before the file is made */
    const tl_summary_sheet *sum = opts ? opts->summary : NULL;
    for (size_t i = 0; i < results->n; i++)
        if (!result_fits(&results->items[i], path, err))
            return -1;
    if (sum) {
        summary_plan plan;
        summary_plan_init(&plan, sum);
        int fits = summary_fits(&plan, path, err);
        summary_plan_free(&plan);
        if (!fits)
            return -1;
    }

    int threads = opts && opts->threads > 0 ? opts->threads : 2;
    if (threads > XL_MAX_THREADS)
        threads = XL_MAX_THREADS;
    tl_pool *pool = tl_pool_new(threads - 1); /* the caller renders too, in close() */
    tl_xlsx_writer *w = tl_xlsx_writer_open(path, sum != NULL, pool, err);
    int rc = w ? 0 : -1;
    for (size_t i = 0; i < results->n && rc == 0; i++)
        rc = tl_xlsx_writer_add(w, &results->items[i], err);
    if (rc == 0)
        rc = tl_xlsx_writer_close(w, sum, err);
    else if (w)
        tl_xlsx_writer_abort(w);
    tl_pool_free(pool, rc != 0);
    return rc;
}

/* ---- the streaming writer -------------------------------------------------------------- */

/*
 * Each added result becomes jobs of the caller's pool (pool.h), one per piece of its
 * records: render the piece and compress it into a blob of its own; the last piece to end
 * joins the blobs and stores the sheet in the zip.  The pool's threads take jobs
 * oldest first while the caller goes on (reading and comparing the next sheets), and the
 * caller takes the newest when it waits in sync(), so sheets are stored in any order:
 * readers find parts through the central directory, and a sheet's file name, not its
 * place in the zip, says where it goes.  Results are numbered sheet1.xml, sheet2.xml,
 * ... as they come, from sheet2.xml when a summary will lead the book: the summary, made
 * last, is sheet1.xml then.  The zip and the failure are shared under `mu`; the rest is
 * the caller's.
 */
typedef struct stream_sheet stream_sheet;

/* A run of a sheet's records: one job. */
typedef struct sheet_piece {
    stream_sheet *sh;
    size_t k;             /* its place among the sheet's pieces */
} sheet_piece;

struct stream_sheet {
    tl_xlsx_writer *w;
    tl_result res;        /* a copy: the caller's may move */
    size_t index;         /* 0, 1, ... in the order added */
    size_t file;          /* its part: xl/worksheets/sheet<file>.xml */
    size_t job;           /* the pool's job count once its last piece was queued */
    colinfo *ci;          /* its columns (NULL for an empty result) */
    size_t npieces, left; /* left: pieces not done yet, under the writer's `mu` */
    sheet_piece *pieces;
    tl_zip_blob *blobs;   /* each piece, compressed */
};

/*
 * Cells per piece.  A big sheet is rendered and compressed in pieces, each a job, so
 * that the caller helping at the end of the run (and the pool's threads) can share even
 * the last sheet; ~10 MB of XML each, large enough that a piece's fresh DEFLATE history
 * costs nothing measurable.
 */
#define XL_PIECE_CELLS 250000

/* The unit tests write a sheet in one piece too, to compare, through a setter they
 * declare themselves (it stays out of the public interface); 0: XL_PIECE_CELLS. */
static size_t piece_cells_set;
void tl_xlsx_set_piece_cells(size_t cells);
void tl_xlsx_set_piece_cells(size_t cells) { piece_cells_set = cells; }

struct tl_xlsx_writer {
    char *path;
    tl_zip *z;
    tl_pool *pool;
    render_state *states; /* one per pool slot: each thread's compressor and buffer */
    int nstates;
    int summary_first;
    stream_sheet **sheets;
    sheet_job *jobs;      /* what close() needs of each sheet */
    const char **names;
    size_t n, cap;
    pthread_mutex_t mu;   /* the zip, the pieces' countdown, `failed` and `werr` */
    int failed;
    tl_error werr;        /* the first failure */
};

static void render_piece_job(void *arg, int worker)
{
    sheet_piece *pc = arg;
    stream_sheet *sh = pc->sh;
    tl_xlsx_writer *w = sh->w;
    render_state *st = &w->states[worker];
    pthread_mutex_lock(&w->mu);
    int failed = w->failed;
    pthread_mutex_unlock(&w->mu);

    tl_zip_blob blob = {0};
    if (!failed) { /* after a failure the workbook is lost anyway: only count down */
        if (!st->comp)
            st->comp = tl_zip_compressor_new(TL_ZIP_LEVEL);
        int selected = !w->summary_first && sh->index == 0, last = pc->k + 1 == sh->npieces;
        tl_buf_clear(&st->xml);
        tl_zip_stream_begin(st->comp, &blob);
        if (!sh->ci) {
            render_empty(&st->xml, selected);
        } else {
            size_t nrows = sh->res.table->nrows;
            size_t r0 = nrows * pc->k / sh->npieces, r1 = nrows * (pc->k + 1) / sh->npieces;
            render_result_rows(&sh->res, sh->ci, selected, r0, r1, &st->xml, st->comp);
        }
        xb_flush(&st->xml, st->comp);
        if (last)
            tl_zip_stream_finish(st->comp);
        else
            tl_zip_stream_finish_piece(st->comp);
    }

    pthread_mutex_lock(&w->mu);
    sh->blobs[pc->k] = blob;
    if (--sh->left == 0) {
        /* the sheet's last piece to end joins them and stores the sheet */
        sheet_job j = {.file = sh->file};
        tl_zip_blob_join(sh->blobs, sh->npieces, &j.blob);
        tl_error err = {0};
        if (!w->failed && write_sheet(w->z, &j, &err) != 0) {
            w->failed = 1;
            w->werr = err;
        }
        tl_zip_blob_free(&j.blob); /* when not written */
    }
    pthread_mutex_unlock(&w->mu);
}

tl_xlsx_writer *tl_xlsx_writer_open(const char *path, int summary_first, tl_pool *pool, tl_error *err)
{
    tl_xlsx_writer *w = tl_xcalloc(1, sizeof *w);
    w->path = tl_xstrdup(path);
    w->summary_first = summary_first;
    w->z = tl_zip_create(path, err);
    if (!w->z) {
        free(w->path);
        free(w);
        return NULL;
    }
    w->pool = pool;
    w->nstates = tl_pool_slots(pool);
    w->states = render_states_new(w->nstates);
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

int tl_xlsx_writer_add(tl_xlsx_writer *w, const tl_result *r, tl_error *err)
{
    const tl_table *t = r->table;
    if (!result_fits(r, w->path, err))
        return -1;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->sheets = tl_xrealloc(w->sheets, w->cap * sizeof *w->sheets);
        w->jobs = tl_xrealloc(w->jobs, w->cap * sizeof *w->jobs);
        w->names = tl_xrealloc(w->names, w->cap * sizeof *w->names);
    }
    stream_sheet *sh = tl_xcalloc(1, sizeof *sh);
    sh->w = w;
    sh->res = *r;
    sh->index = w->n;
    sh->file = w->n + (w->summary_first ? 2 : 1); /* sheet1.xml: the summary, when it leads */
    sh->ci = result_is_empty(r) ? NULL : sheet_columns(r);
    size_t cells = sh->ci ? t->nrows * t->ncols : 0;
    sh->npieces = cells / (piece_cells_set ? piece_cells_set : XL_PIECE_CELLS) + 1;
    if (sh->npieces > t->nrows)
        sh->npieces = t->nrows ? t->nrows : 1;
    sh->left = sh->npieces;
    sh->pieces = tl_xcalloc(sh->npieces, sizeof *sh->pieces);
    sh->blobs = tl_xcalloc(sh->npieces, sizeof *sh->blobs);
    w->sheets[w->n] = sh;
    w->names[w->n] = r->name;
    w->jobs[w->n] = (sheet_job){.kind = SHEET_RESULT, .file = sh->file, .nrows = t->nrows, .ncols = t->ncols};
    w->n++;
    for (size_t k = 0; k < sh->npieces; k++) {
        sh->pieces[k] = (sheet_piece){sh, k};
        sh->job = tl_pool_add(w->pool, render_piece_job, &sh->pieces[k]);
    }
    return 0;
}

int tl_xlsx_writer_sync(tl_xlsx_writer *w, size_t upto, tl_error *err)
{
    if (upto > w->n)
        upto = w->n;
    if (upto > 0)
        tl_pool_wait(w->pool, w->sheets[upto - 1]->job);
    pthread_mutex_lock(&w->mu);
    int failed = w->failed;
    if (failed)
        tl_error_set(err, "%s", w->werr.msg);
    pthread_mutex_unlock(&w->mu);
    return failed ? -1 : 0;
}

/* Let every queued sheet's job end (quickly: a failed writer renders nothing). */
static void writer_stop(tl_xlsx_writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->failed = 1;
    pthread_mutex_unlock(&w->mu);
    if (w->n > 0)
        tl_pool_wait(w->pool, w->sheets[w->n - 1]->job);
}

static void writer_free(tl_xlsx_writer *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->sheets[i]->ci);
        free(w->sheets[i]->pieces);
        free(w->sheets[i]->blobs);
        free(w->sheets[i]);
    }
    free(w->sheets);
    free(w->jobs);
    free(w->names);
    render_states_free(w->states, w->nstates);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
}

void tl_xlsx_writer_abort(tl_xlsx_writer *w)
{
    if (!w)
        return;
    writer_stop(w);
    tl_zip_abort(w->z);
    writer_free(w);
}

int tl_xlsx_writer_close(tl_xlsx_writer *w, const tl_summary_sheet *sum, tl_error *err)
{
    if (tl_xlsx_writer_sync(w, (size_t)-1, err) != 0) {
        tl_xlsx_writer_abort(w);
        return -1;
    }

    /* The book in tab order: the summary (if any), then the results. */
    book bk = {0};
    bk.tabs = tl_tab_names(w->names, w->n);
    if (sum) {
        summary_plan_init(&bk.plan, sum);
        bk.has_summary = 1;
        bk.has_chart = sum->chart != NULL;
        if (!summary_fits(&bk.plan, w->path, err)) {
            summary_plan_free(&bk.plan);
            tl_tab_names_free(bk.tabs, w->n);
            tl_xlsx_writer_abort(w);
            return -1;
        }
        bk.summary_tab = summary_tab(sum->name, bk.tabs, w->n);
    }
    bk.nsheets = w->n + (size_t)bk.has_summary;
    if (bk.nsheets == 0)
        bk.nsheets = 1;
    bk.jobs = tl_xcalloc(bk.nsheets, sizeof *bk.jobs);
    size_t k = 0, summary_file = w->summary_first ? 1 : w->n + 1;
    if (bk.has_summary)
        bk.jobs[k] = (sheet_job){.kind = SHEET_SUMMARY, .tab = bk.summary_tab, .file = summary_file}, k++;
    for (size_t i = 0; i < w->n; i++) {
        bk.jobs[k] = w->jobs[i];
        bk.jobs[k].tab = bk.tabs[i];
        k++;
    }
    if (k == 0)
        bk.jobs[k] = (sheet_job){.kind = SHEET_EMPTY, .tab = "Sheet1", .file = 1}, k++;

    int rc = 0;
    tl_buf b = {0};
    char name[64];
    if (bk.has_summary || w->n == 0) {
        /* the summary (or the one empty sheet) is rendered here, the threads being done */
        tl_zip_compressor *comp = tl_zip_compressor_new(TL_ZIP_LEVEL);
        render_job(&bk, 0, &b, comp, &bk.jobs[0].blob);
        tl_zip_compressor_free(comp);
        rc = write_sheet(w->z, &bk.jobs[0], err);
        tl_buf_clear(&b);
    }
    part_content_types(&bk, &b);
    rc = rc ? rc : add_part(w->z, "[Content_Types].xml", &b, err);
    part_root_rels(&b);
    rc = rc ? rc : add_part(w->z, "_rels/.rels", &b, err);
    part_app(&b);
    rc = rc ? rc : add_part(w->z, "docProps/app.xml", &b, err);
    part_core(&b);
    rc = rc ? rc : add_part(w->z, "docProps/core.xml", &b, err);
    part_workbook(&bk, &b);
    rc = rc ? rc : add_part(w->z, "xl/workbook.xml", &b, err);
    part_workbook_rels(&bk, &b);
    rc = rc ? rc : add_part(w->z, "xl/_rels/workbook.xml.rels", &b, err);
    part_styles(&b);
    rc = rc ? rc : add_part(w->z, "xl/styles.xml", &b, err);
    if (bk.has_chart && rc == 0) {
        part_rels_one(&b, "drawing", "../drawings/drawing1.xml");
        snprintf(name, sizeof name, "xl/worksheets/_rels/sheet%zu.xml.rels", summary_file);
        rc = rc ? rc : add_part(w->z, name, &b, err);
        render_drawing(&bk.plan, &b);
        rc = rc ? rc : add_part(w->z, "xl/drawings/drawing1.xml", &b, err);
        part_rels_one(&b, "chart", "../charts/chart1.xml");
        rc = rc ? rc : add_part(w->z, "xl/drawings/_rels/drawing1.xml.rels", &b, err);
        render_chart(&bk.plan, bk.summary_tab, &b);
        rc = rc ? rc : add_part(w->z, "xl/charts/chart1.xml", &b, err);
    }
    tl_buf_free(&b);
    if (rc == 0)
        rc = tl_zip_close(w->z, err);
    else
        tl_zip_abort(w->z);

    if (bk.has_summary)
        summary_plan_free(&bk.plan);
    free(bk.summary_tab);
    free(bk.jobs);
    tl_tab_names_free(bk.tabs, w->n);
    writer_free(w);
    return rc ? -1 : 0;
}
