/*
 * xlsx_scan.c - the fast worksheet scanner (see xlsx_internal.h).
 *
 * (This file is ~1,000 lines because it is one tokenizer: its quick paths, its checks and
 * its streaming share one state and one set of character classes.)
 *
 * Through expat, a 20,000-row report (~0.5 GB of sheet XML) took ~3 s of CPU to parse,
 * over half of all its reading: expat is a general parser (encodings, DTDs, namespace URIs
 * joined to every name) and calls back for every element and every piece of text.  This
 * scanner reads the XML that spreadsheet writers produce in one pass over the bytes
 * (~0.5 s for the same report), and hands the same elements and text to the same handlers
 * (xlsx_classify, xlsx_row_start, xlsx_cell_start, xlsx_sheet_end).  Its commonest tokens,
 * <c r=".." s=".." t="..">, tags without attributes and end tags matching the open
 * element, take short paths (xs_cell_tag, xs_plain_tag, xs_markup).
 *
 * It must never read a part differently from expat, so it checks well-formedness as it
 * goes, and gives up (XS_BAIL) on whatever it does not check: comments, CDATA sections,
 * processing instructions, DTDs, encodings other than UTF-8, non-ASCII names, entities
 * other than the five predefined ones, namespace declarations it cannot vouch for,
 * duplicate-looking attributes, tags over XS_MAX_TOKEN, nesting past XS_MAX_DEPTH.
 * What it does accept is well-formed XML, whose elements, attributes and text it delivers
 * as expat would (references decoded, line ends and attribute white space normalized).
 * Giving up costs a second reading by expat, which then gives the result or the error.
 *
 * Streaming: each inflated chunk is appended to a window whose tokens are consumed in
 * turn.  A token cut by the end of the window (a tag, a reference, a CR that may start a
 * CRLF, a UTF-8 sequence, a "]" that may start "]]>") is left at the start of the window
 * for the next chunk to complete.  Text is not a token: it is consumed as it comes.
 */
#include "read/xlsx_cells.h"

#include "base/textblock.h"

#include <stdlib.h>
#include <string.h>

enum { XS_OK, XS_MORE, XS_BAIL, XS_SLOW }; /* what a scanning step did (XS_SLOW: a quick
                                              path left the token to the general one) */
enum { XS_START, XS_PROLOG, XS_BODY, XS_EPILOG }; /* where in the document */

#define XS_MAX_DEPTH 256                   /* worksheets nest ~6 deep */
#define XS_MAX_ATTRS 32                    /* per tag */
#define XS_MAX_TOKEN ((size_t)1 << 20)     /* longest tag (a cell tag is ~40 bytes) */
#define XS_MAX_REF 16                      /* longest reference taken, "&#x0001F600;" */

/* Character classes, one byte of flags per byte value. */
#define XS_WS 0x01    /* XML white space */
#define XS_NAME 0x02  /* continues a name: ASCII letters and digits, . - _ : */
#define XS_FIRST 0x04 /* starts a name (and a local name): ASCII letters, _ */
#define XS_TSTOP 0x08 /* stops a run of text: < & CR ] non-ASCII, controls XML forbids */
#define XS_ASTOP 0x10 /* stops a run of attribute value: quotes < & TAB LF CR non-ASCII, controls */

#define XS_CLS(c)                                                                           \
    ((((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r') ? XS_WS : 0) |              \
     ((((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || (c) == '_')             \
          ? XS_FIRST | XS_NAME                                                              \
          : 0) |                                                                            \
     ((((c) >= '0' && (c) <= '9') || (c) == '.' || (c) == '-' || (c) == ':') ? XS_NAME : 0) | \
     (((c) == '<' || (c) == '&' || (c) == '\r' || (c) == ']' || (c) >= 0x80 ||              \
       ((c) < 0x20 && (c) != '\t' && (c) != '\n'))                                          \
          ? XS_TSTOP                                                                        \
          : 0) |                                                                            \
     (((c) == '"' || (c) == '\'' || (c) == '<' || (c) == '&' || (c) < 0x20 || (c) >= 0x80)  \
          ? XS_ASTOP                                                                        \
          : 0))
#define XS_CLS4(c) XS_CLS(c), XS_CLS((c) + 1), XS_CLS((c) + 2), XS_CLS((c) + 3)
#define XS_CLS16(c) XS_CLS4(c), XS_CLS4((c) + 4), XS_CLS4((c) + 8), XS_CLS4((c) + 12)
static const uint8_t xs_cls[256] = {
    XS_CLS16(0x00), XS_CLS16(0x10), XS_CLS16(0x20), XS_CLS16(0x30),
    XS_CLS16(0x40), XS_CLS16(0x50), XS_CLS16(0x60), XS_CLS16(0x70),
    XS_CLS16(0x80), XS_CLS16(0x90), XS_CLS16(0xA0), XS_CLS16(0xB0),
    XS_CLS16(0xC0), XS_CLS16(0xD0), XS_CLS16(0xE0), XS_CLS16(0xF0),
};
#define XS_IS(c, flag) (xs_cls[(unsigned char)(c)] & (flag))

/* An open element: its code, as xlsx_on_start would give it, and its qualified name, for
 * the end tag to match (longer names are given up on; the longest in worksheets, e.g.
 * "x14:conditionalFormattings", are half as long). */
#define XS_MAX_NAME 59
typedef struct xs_elem {
    uint8_t el, len;
    char name[XS_MAX_NAME + 1];
} xs_elem;

typedef struct xs_ns {
    size_t off, len; /* a prefix declared, in `prefixes` */
    size_t depth;    /* by the element at this depth */
} xs_ns;

typedef struct xs_attr {
    char *name;
    size_t nlen;
    size_t local; /* where the local part of the name starts: 0, or past the colon */
    char *val;
    size_t vlen;
    int raw;  /* the value holds references or white space to normalize */
    int decl; /* the attribute declares a namespace ("xmlns" or "xmlns:p") */
} xs_attr;

typedef struct xs {
    xlsx_parse *p;
    int stage;
    xs_elem *stk; /* the open elements, XS_MAX_DEPTH of them */
    size_t depth;
    xs_ns *ns; /* the namespace prefixes in scope (xml aside) */
    size_t nns, capns;
    tl_buf prefixes;
    xs_attr at[XS_MAX_ATTRS]; /* of the tag at hand */
    const char *why;          /* why it gave up */
} xs;

static int xs_bail(xs *s, const char *why)
{
    s->why = why;
    return XS_BAIL;
}

/*
 * The UTF-8 sequence at q: its length when it encodes a character XML allows (U+0080 and
 * up: no surrogates, no U+FFFE or U+FFFF, nothing overlong), 0 when it does not, -1 when
 * the window ends inside it.
 */
static int xs_utf8(const char *q, const char *e)
{
    const unsigned char *u = (const unsigned char *)q;
    unsigned cp;
    int n;

    if (u[0] < 0xC2 || u[0] > 0xF4)
        return 0; /* a continuation byte, an overlong lead, or past U+10FFFF */
    n = u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4;
    cp = u[0] & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if (q + i >= e)
            return -1;
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (u[i] & 0x3Fu);
    }
    if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) || cp >= 0xFFFE))
        return 0;
    if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))
        return 0;
    return n;
}

/*
 * The reference at q ("&..."): one of the five predefined entities or a character
 * reference to a character XML allows.  XS_OK with its code point and length, XS_MORE
 * when the window ends inside it, XS_BAIL for anything else (expat says what is wrong).
 */
static int xs_ref(xs *s, const char *q, const char *e, unsigned *cp, size_t *len)
{
    size_t avail = (size_t)(e - q), n;
    const char *semi = q + 1, *lim = q + (avail < XS_MAX_REF ? avail : XS_MAX_REF), *b;
    uint64_t v = 0;

    while (semi < lim && *semi != ';') /* a loop, not memchr: see xs_copy */
        semi++;
    if (semi == lim)
        return avail < XS_MAX_REF ? XS_MORE : xs_bail(s, "a long or unterminated reference");
    b = q + 1;
    n = (size_t)(semi - b);
    *len = n + 2;
    if (n >= 2 && b[0] == '#') {
        int hex = b[1] == 'x';
        size_t i = hex ? 2 : 1;
        if (i == n)
            return xs_bail(s, "an empty character reference");
        for (; i < n; i++) {
            int d = xlsx_hex(b[i]);
            if (d < 0 || (!hex && d > 9))
                return xs_bail(s, "a malformed character reference");
            v = v * (hex ? 16u : 10u) + (unsigned)d; /* < 14 digits: no overflow */
        }
        if (!(v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v <= 0xD7FF) ||
              (v >= 0xE000 && v <= 0xFFFD) || (v >= 0x10000 && v <= 0x10FFFF)))
            return xs_bail(s, "a reference to a character XML forbids");
        *cp = (unsigned)v;
        return XS_OK;
    }
    if (n == 3 && memcmp(b, "amp", 3) == 0)
        *cp = '&';
    else if (n == 2 && memcmp(b, "lt", 2) == 0)
        *cp = '<';
    else if (n == 2 && memcmp(b, "gt", 2) == 0)
        *cp = '>';
    else if (n == 4 && memcmp(b, "quot", 4) == 0)
        *cp = '"';
    else if (n == 4 && memcmp(b, "apos", 4) == 0)
        *cp = '\'';
    else
        return xs_bail(s, "an entity other than the predefined ones");
    return XS_OK;
}

/*
 * Copy n bytes, for the short texts of cells: an inline loop rather than memcpy, whose
 * call measured ~70 ns here (the libc routine uses AVX-512 registers, and switching back
 * to the SSE code around it stalls), more than most of these copies are worth.
 */
static inline void xs_copy(char *d, const char *src, size_t n)
{
    size_t i = 0;

    for (; i + TL_BLK <= n; i += TL_BLK)
        tl_blk_store(d + i, tl_blk_load((const unsigned char *)src + i));
    for (; i < n; i++)
        d[i] = src[i];
}

/* tl_buf_add, inlined for the many short texts of cells. */
static inline void xs_add(tl_buf *b, const char *src, size_t n)
{
    if (b->len + n + 1 > b->cap)
        tl_buf_reserve(b, n);
    xs_copy(b->data + b->len, src, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Code point -> UTF-8 in out (4 bytes of room); returns the length. */
static size_t xs_put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * A name at q: the end of its run of name characters (e when the window ends first) and
 * where its colon is (0 for none).  A name must start with XS_FIRST (the caller checks).
 * *bad is set when the name is no namespace-well-formed QName: more than one colon, or
 * one not followed by a name start.
 */
static inline char *xs_name(char *q, char *e, size_t *colon, int *bad)
{
    char *name = q;

    *colon = 0;
    *bad = 0;
    while (q < e && XS_IS(*q, XS_NAME)) {
        if (*q == ':') {
            if (*colon || q + 1 == e || !XS_IS(q[1], XS_FIRST))
                *bad = 1;
            *colon = (size_t)(q - name);
        }
        q++;
    }
    return q;
}

/* 1 when a[0..n) and b[0..n) are equal: for the short names of tags, where calling
 * memcmp costs more than comparing. */
static inline int xs_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* 1 when prefix[0..n) is bound here (xml always is). */
static int xs_bound(const xs *s, const char *prefix, size_t n)
{
    if (n == 3 && memcmp(prefix, "xml", 3) == 0)
        return 1;
    for (size_t i = s->nns; i-- > 0;)
        if (s->ns[i].len == n && memcmp(s->prefixes.data + s->ns[i].off, prefix, n) == 0)
            return 1;
    return 0;
}

/* 1 when the attribute declares a namespace ("xmlns" or "xmlns:p"). */
static int xs_is_decl(const xs_attr *a)
{
    return a->nlen >= 5 && a->name[0] == 'x' && memcmp(a->name, "xmlns", 5) == 0 &&
           (a->nlen == 5 || a->local == 6);
}

/*
 * Decode checked text t[0..n) in place, as expat reports it; returns the new length.
 * References are replaced; line ends are normalized (CRLF or CR -> LF), and in an
 * attribute value (`attr`) each literal tab, LF or CR then becomes a space, while a
 * character reference is taken as it is.
 */
static inline size_t xs_decode(xs *s, char *t, size_t n, int attr)
{
    char *r = t, *w = t, *e = t + n;

    while (r < e) {
        unsigned cp;
        size_t len;
        if (*r == '&' && xs_ref(s, r, e, &cp, &len) == XS_OK) {
            /* A reference is at least as long as its UTF-8: w never overtakes r. */
            w += xs_put_utf8(w, cp);
            r += len;
        } else if (*r == '\r') {
            *w++ = attr ? ' ' : '\n';
            r += r + 1 < e && r[1] == '\n' ? 2 : 1;
        } else if (attr && (*r == '\t' || *r == '\n')) {
            *w++ = ' ';
            r++;
        } else {
            *w++ = *r++;
        }
    }
    return (size_t)(w - t);
}

/* Decode an attribute value in place (the tag scan has checked its references) and
 * NUL-terminate it. */
static char *xs_value(xs *s, xs_attr *a)
{
    if (a->raw) {
        a->vlen = xs_decode(s, a->val, a->vlen, 1);
        a->raw = 0;
    }
    a->val[a->vlen] = '\0';
    return a->val;
}

/*
 * The values of the attributes of local names "r" and "t" among the tag's n (NULL for
 * those missing), as tl_xlsx_attr finds them; the names are unique (xs_open has checked).
 */
static void xs_attrs_rt(xs *s, size_t n, const char **r, const char **t)
{
    *r = *t = NULL;
    for (size_t i = 0; i < n; i++) {
        xs_attr *a = &s->at[i];
        if (a->nlen - a->local != 1 || a->decl)
            continue;
        if (a->name[a->local] == 'r')
            *r = xs_value(s, a);
        else if (a->name[a->local] == 't')
            *t = xs_value(s, a);
    }
}

/* The element on top of the stack ends.  XS_OK, or XS_BAIL when its handler failed. */
static int xs_close(xs *s)
{
    xlsx_parse *p = s->p;
    int el = s->stk[--s->depth].el;

    while (s->nns > 0 && s->ns[s->nns - 1].depth == s->depth)
        s->prefixes.len = s->ns[--s->nns].off;
    if (s->depth == 0)
        s->stage = XS_EPILOG;
    /* xlsx_sheet_end acts on cells and rows; for other elements it only repeats the
     * too_big check, which the end of the cell or row that set it has already made. */
    if (el == EL_CELL || el == EL_ROW) {
        xlsx_sheet_end(p, el);
        if (p->failed)
            return xs_bail(s, "the sheet's handlers failed");
    }
    return XS_OK;
}

/* Push an element of code `el` and name name[0..nlen), nlen <= XS_MAX_NAME, on a stack
 * with room. */
static inline void xs_push(xs *s, int el, const char *name, size_t nlen)
{
    xs_elem *top = &s->stk[s->depth++];

    top->el = (uint8_t)el;
    top->len = (uint8_t)nlen;
    for (size_t i = 0; i < nlen; i++) /* a loop: names are a few bytes */
        top->name[i] = name[i];
    s->stage = XS_BODY;
}

/* An element just pushed: its handler, as xlsx_sheet_start would call it (r and t: the
 * values of its attributes of those local names, or NULL), then its end if it is empty. */
static int xs_started(xs *s, int el, const char *r, const char *t, int empty)
{
    xlsx_parse *p = s->p;

    switch (el) {
    case EL_ROW:
        xlsx_row_start(p, r);
        break;
    case EL_CELL:
        xlsx_cell_start(p, r, t);
        break;
    case EL_V:
        ((xlsx_sheet_state *)p->state)->has_v = 1;
        break;
    }
    if (p->failed)
        return xs_bail(s, "the sheet's handlers failed");
    return empty ? xs_close(s) : XS_OK;
}

/*
 * A complete start tag: name[0..nlen) with its colon at `colon`, the tag's n attributes
 * in s->at, `empty` for "<name/>".  The namespace rules expat enforces are checked (or
 * given up on), the element is classified and pushed, and its handler called.
 */
static int xs_open(xs *s, char *name, size_t nlen, size_t colon, size_t n, int unusual,
                   int empty)
{
    size_t d = s->depth, local = colon ? colon + 1 : 0;
    const char *r, *t;
    int el;

    if (d >= XS_MAX_DEPTH)
        return xs_bail(s, "elements nested too deep");
    if (nlen > XS_MAX_NAME)
        return xs_bail(s, "a long element name");
    for (size_t i = 0; i < n && unusual; i++) {
        xs_attr *a = &s->at[i];
        if (!a->decl)
            continue;
        /* Reserved names and URIs are errors to expat, and so is a URI holding its
         * separator (expat 2.4.5 on): leave them to it. */
        if (a->raw || memchr(a->val, XLSX_NS_SEP, a->vlen) ||
            (a->vlen == 36 && memcmp(a->val, "http://www.w3.org/XML/1998/namespace", 36) == 0) ||
            (a->vlen == 29 && memcmp(a->val, "http://www.w3.org/2000/xmlns/", 29) == 0))
            return xs_bail(s, "an unusual namespace declaration");
        if (a->nlen > 5) {
            const char *pfx = a->name + 6;
            size_t pn = a->nlen - 6;
            if (a->vlen == 0 || (pn == 3 && memcmp(pfx, "xml", 3) == 0) ||
                (pn == 5 && memcmp(pfx, "xmlns", 5) == 0))
                return xs_bail(s, "an unusual namespace declaration");
            TL_GROW(s->ns, s->capns, s->nns + 1);
            s->ns[s->nns].off = s->prefixes.len;
            s->ns[s->nns].len = pn;
            s->ns[s->nns].depth = d;
            s->nns++;
            tl_buf_add(&s->prefixes, pfx, pn);
        }
    }
    /* Attributes of one local name, or two declarations of one prefix, may be duplicates
     * (after namespace processing) that expat refuses; no writer produces them. */
    for (size_t i = 0; i < n; i++) {
        const xs_attr *a = &s->at[i];
        for (size_t j = i + 1; j < n; j++) {
            const xs_attr *b = &s->at[j];
            if (a->nlen - a->local == b->nlen - b->local && a->decl == b->decl &&
                xs_eq(a->name + a->local, b->name + b->local, a->nlen - a->local))
                return xs_bail(s, "attributes of the same name");
        }
        if (unusual && a->local && !a->decl && !xs_bound(s, a->name, a->local - 1))
            return xs_bail(s, "an attribute prefix not declared");
    }
    if (colon && ((colon == 5 && memcmp(name, "xmlns", 5) == 0) || !xs_bound(s, name, colon)))
        return xs_bail(s, "an element prefix not declared");

    if (d == 0)
        el = EL_DOC;
    else if (s->stk[d - 1].el == EL_OTHER)
        el = EL_OTHER; /* what xlsx_classify says too, faster */
    else
        el = xlsx_classify(PART_SHEET, s->stk[d - 1].el, name + local, nlen - local);
    xs_push(s, el, name, nlen);
    r = t = NULL;
    if (el == EL_ROW || el == EL_CELL)
        xs_attrs_rt(s, n, &r, &t);
    return xs_started(s, el, r, t, empty);
}

/*
 * The commonest tag, a cell's <c r="B7" s="1" t="s">, the quick way: in a row, with
 * attributes r, s and t only, each written name="value" after one space, with values that
 * need no decoding.  Anything else is XS_SLOW, for xs_start_tag to read (or refuse).
 */
static int xs_cell_tag(xs *s, char **qp, char *e)
{
    char *q = *qp + 2, *val[3] = {NULL, NULL, NULL}, *end[3];
    int empty;

    if (s->depth >= XS_MAX_DEPTH)
        return XS_SLOW;
    for (;;) {
        int k;
        if (q == e)
            return XS_MORE;
        if (*q == '>') {
            q++;
            empty = 0;
            break;
        }
        if (*q == '/') {
            if (q + 1 == e)
                return XS_MORE;
            if (q[1] != '>')
                return XS_SLOW;
            q += 2;
            empty = 1;
            break;
        }
        if (*q != ' ')
            return XS_SLOW;
        if (e - q < 4)
            return XS_MORE;
        k = q[1] == 'r' ? 0 : q[1] == 's' ? 1 : q[1] == 't' ? 2 : -1;
        if (k < 0 || q[2] != '=' || q[3] != '"' || val[k])
            return XS_SLOW;
        q += 4;
        val[k] = q;
        while (q < e && !XS_IS(*q, XS_ASTOP))
            q++;
        if (q == e)
            return XS_MORE;
        if (*q != '"')
            return XS_SLOW;
        end[k] = q++;
    }
    *qp = q;
    /* The tag is whole and well-formed: its values can be terminated in place. */
    for (int k = 0; k < 3; k++)
        if (val[k])
            *end[k] = '\0';
    xs_push(s, EL_CELL, "c", 1);
    return xs_started(s, EL_CELL, val[0], val[2], empty);
}

/*
 * A tag of no attributes and an unprefixed name inside an element, <v> or <is> or <t>, the
 * quick way.  XS_SLOW for anything else.
 */
static int xs_plain_tag(xs *s, char **qp, char *e)
{
    char *q = *qp + 1, *name = q;
    size_t n, d = s->depth;
    int el;

    while (q < e && XS_IS(*q, XS_FIRST))
        q++;
    if (q == e)
        return XS_MORE;
    n = (size_t)(q - name);
    if (*q != '>' || n > XS_MAX_NAME || d >= XS_MAX_DEPTH)
        return XS_SLOW;
    *qp = q + 1;
    el = s->stk[d - 1].el == EL_OTHER ? EL_OTHER
                                      : xlsx_classify(PART_SHEET, s->stk[d - 1].el, name, n);
    xs_push(s, el, name, n);
    return xs_started(s, el, NULL, NULL, 0);
}

/* A start tag at *qp ("<" and a name start).  XS_OK with *qp past it, XS_MORE, XS_BAIL. */
static int xs_start_tag(xs *s, char **qp, char *e)
{
    char *q = *qp + 1, *name = q;
    size_t ncolon, colon, nlen, n = 0;
    int bad, empty = 0, unusual = 0, r;

    q = xs_name(q, e, &ncolon, &bad);
    if (q == e)
        return XS_MORE;
    if (bad)
        return xs_bail(s, "a name that is no qualified name");
    nlen = (size_t)(q - name);
    for (;;) {
        char *ws = q, quote;
        xs_attr *a;

        while (q < e && XS_IS(*q, XS_WS))
            q++;
        if (q == e)
            return XS_MORE;
        if (*q == '>') {
            q++;
            break;
        }
        if (*q == '/') {
            if (q + 1 == e)
                return XS_MORE;
            if (q[1] != '>')
                return xs_bail(s, "a '/' in a tag");
            empty = 1;
            q += 2;
            break;
        }
        if (q == ws || !XS_IS(*q, XS_FIRST))
            return xs_bail(s, "a malformed attribute");
        if (n == XS_MAX_ATTRS)
            return xs_bail(s, "too many attributes");
        a = &s->at[n];
        a->name = q;
        q = xs_name(q, e, &colon, &bad);
        if (q == e)
            return XS_MORE;
        if (bad)
            return xs_bail(s, "a name that is no qualified name");
        a->nlen = (size_t)(q - a->name);
        a->local = colon ? colon + 1 : 0;
        a->decl = xs_is_decl(a);
        /* Declarations and prefixes take the namespace checks of xs_open. */
        unusual |= a->decl || colon;
        while (q < e && XS_IS(*q, XS_WS))
            q++;
        if (q == e)
            return XS_MORE;
        if (*q != '=')
            return xs_bail(s, "a malformed attribute");
        q++;
        while (q < e && XS_IS(*q, XS_WS))
            q++;
        if (q == e)
            return XS_MORE;
        if (*q != '"' && *q != '\'')
            return xs_bail(s, "a malformed attribute");
        quote = *q++;
        a->val = q;
        a->raw = 0;
        for (;;) {
            unsigned char c;
            while (q < e && !XS_IS(*q, XS_ASTOP))
                q++;
            if (q == e)
                return XS_MORE;
            c = (unsigned char)*q;
            if (c == (unsigned char)quote) {
                break;
            } else if (c == '"' || c == '\'') {
                q++;
            } else if (c == '&') {
                unsigned cp;
                size_t len;
                r = xs_ref(s, q, e, &cp, &len);
                if (r != XS_OK)
                    return r;
                a->raw = 1;
                q += len;
            } else if (c == '\t' || c == '\n' || c == '\r') {
                a->raw = 1;
                q++;
            } else if (c >= 0x80) {
                int k = xs_utf8(q, e);
                if (k < 0)
                    return XS_MORE;
                if (k == 0)
                    return xs_bail(s, "bytes that are no UTF-8 text XML allows");
                q += k;
            } else {
                return xs_bail(s, "a '<' or a control character in an attribute value");
            }
        }
        a->vlen = (size_t)(q - a->val);
        q++;
        n++;
    }
    *qp = q;
    return xs_open(s, name, nlen, ncolon, n, unusual, empty);
}

/* An end tag at *qp ("</").  XS_OK with *qp past it, XS_MORE, XS_BAIL. */
static int xs_end_tag(xs *s, char **qp, char *e)
{
    char *q = *qp + 2, *name = q;
    size_t colon, nlen;
    int bad;
    const xs_elem *top;

    if (q == e)
        return XS_MORE;
    if (!XS_IS(*q, XS_FIRST))
        return xs_bail(s, "a malformed end tag");
    q = xs_name(q, e, &colon, &bad);
    nlen = (size_t)(q - name);
    while (q < e && XS_IS(*q, XS_WS))
        q++;
    if (q == e)
        return XS_MORE;
    if (*q != '>' || s->depth == 0)
        return xs_bail(s, "a malformed end tag");
    top = &s->stk[s->depth - 1];
    if (top->len != nlen || !xs_eq(top->name, name, nlen))
        return xs_bail(s, "an end tag that does not match");
    *qp = q + 1;
    return xs_close(s);
}

/* Markup at *qp ("<"): a start or end tag; anything else is given up on. */
static int xs_markup(xs *s, char **qp, char *e)
{
    char *q = *qp;

    if (e - q < 2)
        return XS_MORE;
    if (q[1] == '/') {
        const xs_elem *top;
        if (s->stage != XS_BODY)
            return xs_bail(s, "an end tag out of place");
        /* Most end tags are "</" and the open element's name and ">": a well-formed end
         * tag, matched without scanning a name. */
        top = &s->stk[s->depth - 1];
        if ((size_t)(e - q) > top->len + 2u && q[2 + top->len] == '>' &&
            xs_eq(q + 2, top->name, top->len)) {
            *qp = q + 3 + top->len;
            return xs_close(s);
        }
        return xs_end_tag(s, qp, e);
    }
    if (q[1] == '!' || q[1] == '?')
        return xs_bail(s, "a comment, CDATA section, DTD or processing instruction");
    if (!XS_IS(q[1], XS_FIRST))
        return xs_bail(s, "a malformed tag");
    if (s->stage == XS_EPILOG)
        return xs_bail(s, "a second root element");
    if (s->depth > 0) {
        int r = s->stk[s->depth - 1].el == EL_ROW && q[1] == 'c' ? xs_cell_tag(s, qp, e)
                                                                  : xs_plain_tag(s, qp, e);
        if (r != XS_SLOW)
            return r;
    }
    return xs_start_tag(s, qp, e);
}

/*
 * The bytes of a block that may stop a run of text: < & ] and anything below 0x20 or above
 * 0x7F.  That also flags TAB and LF, which the caller steps over.
 */
#if TL_BLK_SSE2
static inline tl_blk_mask blk_text_stops(tl_blk v)
{
    return tl_blk_eq(v, '<') | tl_blk_eq(v, '&') | tl_blk_eq(v, ']') | tl_blk_ctl_or_high(v);
}
#else
static inline tl_blk_mask blk_text_stops(tl_blk w)
{
    w = tl_sw_order(w);
    return tl_sw_eq(w, '<') | tl_sw_eq(w, '&') | tl_sw_eq(w, ']') | tl_sw_ctl_or_high(w);
}
#endif

/*
 * The first byte at or after q that may stop a run of text (XS_TSTOP, or TAB or LF), or
 * e; a block at a time (blk_text_stops), the portable block's flags checked again.
 */
static inline char *xs_skip_text(char *q, char *e)
{
    while (e - q >= TL_BLK) {
        tl_blk_mask m = blk_text_stops(tl_blk_load((const unsigned char *)q));
        if (m) {
            q += TL_BLK_INDEX(m);
#if !TL_BLK_SSE2
            if (!XS_IS(*q, XS_TSTOP) && *q != '\t' && *q != '\n') {
                q++;
                continue;
            }
#endif
            return q;
        }
        q += TL_BLK;
    }
    while (q < e && !XS_IS(*q, XS_TSTOP))
        q++;
    return q;
}

/*
 * Character data at *qp, up to the next "<" or the end of the window.  Inside <v> or
 * <t> it goes, decoded, where xlsx_on_text would put it (in one copy, decoded there);
 * elsewhere it is only checked.  XS_OK with *qp past what was consumed (maybe all of
 * the window), XS_MORE when a reference, a CR, a "]" or a UTF-8 sequence is cut by the
 * end, XS_BAIL.
 */
static int xs_text(xs *s, char **qp, char *e)
{
    const xlsx_parse *p = s->p;
    int el = s->stk[s->depth - 1].el, decode = 0, r = XS_OK;
    tl_buf *sink = el == EL_V ? p->text_v : el == EL_T ? p->text_t : NULL;
    char *q = *qp, *start = q;

    for (;;) {
        unsigned char c;
        unsigned cp;
        size_t len;
        int k;

        q = xs_skip_text(q, e);
        if (q == e)
            break;
        c = (unsigned char)*q;
        if (c == '<')
            break;
        if (c == '\t' || c == '\n') {
            q++;
        } else if (c == ']') {
            /* "]]>" may not appear in text. */
            if (q + 1 < e && q[1] != ']') {
                q++;
                continue;
            }
            if (q + 2 >= e) {
                r = XS_MORE;
                break;
            }
            if (q[2] == '>')
                return xs_bail(s, "\"]]>\" in text");
            q++;
        } else if (c >= 0x80) {
            k = xs_utf8(q, e);
            if (k == 0)
                return xs_bail(s, "bytes that are no UTF-8 text XML allows");
            if (k < 0) {
                r = XS_MORE;
                break;
            }
            q += k;
        } else if (c == '&') {
            r = xs_ref(s, q, e, &cp, &len);
            if (r == XS_BAIL)
                return r;
            if (r == XS_MORE)
                break;
            decode = 1;
            q += len;
        } else if (c == '\r') {
            /* CRLF and a lone CR are both a line end, LF, as expat reports them. */
            if (q + 1 == e) {
                r = XS_MORE;
                break;
            }
            decode = 1;
            q += q[1] == '\n' ? 2 : 1;
        } else {
            return xs_bail(s, "a control character XML forbids");
        }
    }
    if (sink && q > start) {
        size_t old = sink->len;
        xs_add(sink, start, (size_t)(q - start));
        if (decode) {
            sink->len = old + xs_decode(s, sink->data + old, (size_t)(q - start), 0);
            sink->data[sink->len] = '\0';
        }
    }
    *qp = q;
    return r;
}

/* White space before or after the root element; anything else there is given up on. */
static int xs_space(xs *s, char **qp, char *e)
{
    char *q = *qp;

    while (q < e && XS_IS(*q, XS_WS))
        q++;
    *qp = q;
    if (q < e && *q != '<')
        return xs_bail(s, "text outside the root element");
    return XS_OK;
}

/*
 * In an XML declaration ending at `end` (its "?>"): white space, `name`, "=" and a quoted
 * value.  1 with the value, 0 when the next item is not `name` (*pp unchanged), -1 when
 * malformed.
 */
static int xs_decl_item(const char **pp, const char *end, const char *name, const char **v,
                        size_t *vn)
{
    const char *q = *pp, *ws = q;
    size_t n = strlen(name);
    char quote;

    while (q < end && XS_IS(*q, XS_WS))
        q++;
    if (q == ws || (size_t)(end - q) < n || memcmp(q, name, n) != 0)
        return 0;
    q += n;
    while (q < end && XS_IS(*q, XS_WS))
        q++;
    if (q == end || *q++ != '=')
        return -1;
    while (q < end && XS_IS(*q, XS_WS))
        q++;
    if (q == end || (*q != '"' && *q != '\''))
        return -1;
    quote = *q++;
    *v = q;
    while (q < end && *q != quote)
        q++;
    if (q == end)
        return -1;
    *vn = (size_t)(q - *v);
    *pp = q + 1;
    return 1;
}

/*
 * The start of the part: a UTF-8 byte-order mark, then the XML declaration if there is
 * one.  Only version 1.0 in UTF-8 is taken (the declaration's three items, in order).
 */
static int xs_begin(xs *s, char **qp, char *e, int final)
{
    const char *q = *qp, *end, *v;
    size_t vn;
    int r;

    if (e - q < 64 && !final)
        return XS_MORE; /* enough to see the mark and most declarations whole */
    if (e - q >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0)
        q += 3;
    if (e - q >= 6 && memcmp(q, "<?xml", 5) == 0 && XS_IS(q[5], XS_WS)) {
        for (end = q + 5; end + 1 < e && !(end[0] == '?' && end[1] == '>'); end++)
            if (end - q > 1024)
                return xs_bail(s, "a long XML declaration");
        if (end + 1 >= e)
            return final ? xs_bail(s, "an unfinished XML declaration") : XS_MORE;
        q += 5;
        if (xs_decl_item(&q, end, "version", &v, &vn) != 1 || vn != 3 || memcmp(v, "1.0", 3) != 0)
            return xs_bail(s, "an XML declaration other than version 1.0");
        r = xs_decl_item(&q, end, "encoding", &v, &vn);
        if (r < 0 || (r == 1 && !tl_text_ieq(v, vn, "utf-8")))
            return xs_bail(s, "an encoding other than UTF-8");
        r = xs_decl_item(&q, end, "standalone", &v, &vn);
        if (r < 0 || (r == 1 && !(xlsx_is(v, vn, "yes") || xlsx_is(v, vn, "no"))))
            return xs_bail(s, "a malformed XML declaration");
        while (q < end && XS_IS(*q, XS_WS))
            q++;
        if (q != end)
            return xs_bail(s, "a malformed XML declaration");
        q = end + 2;
    }
    *qp = (char *)q;
    s->stage = XS_PROLOG;
    return XS_OK;
}

/*
 * Scan buf[0..n).  XS_OK when all of it was consumed, XS_MORE when buf[*used..n) is the
 * start of a token that the next chunk must complete, XS_BAIL.  `final`: there is no next
 * chunk, and the document must be complete.
 */
static int xs_feed(xs *s, char *buf, size_t n, int final, size_t *used)
{
    char *q = buf, *e = buf + n;
    int r = XS_OK;

    if (s->stage == XS_START)
        r = xs_begin(s, &q, e, final);
    while (r == XS_OK && q < e) {
        if (*q == '<')
            r = xs_markup(s, &q, e);
        else if (s->stage == XS_BODY)
            r = xs_text(s, &q, e);
        else
            r = xs_space(s, &q, e);
    }
    *used = (size_t)(q - buf);
    if (r == XS_BAIL)
        return r;
    if (final && (q < e || s->stage != XS_EPILOG))
        return xs_bail(s, "the part ends inside the document");
    return r;
}

static void xs_free(xs *s)
{
    free(s->stk);
    free(s->ns);
    tl_buf_free(&s->prefixes);
}

int tl_xs_read_sheet(xlsx_parse *p, zip_int64_t idx, const char **why, size_t *where)
{
    tl_zip_in in;
    xs s;
    char *win = NULL;
    size_t cap = 0, have = 0, done = 0;
    int res = XS_READ;

    *why = NULL;
    *where = 0;
    if (!tl_xlsx_in_open(p, idx, &in))
        return XS_FAILED;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.stk = tl_xmalloc(XS_MAX_DEPTH * sizeof *s.stk);
    for (;;) {
        size_t want = tl_zip_in_want(&in), used;
        zip_int64_t n;
        int r;

        if (have + want > cap) {
            cap = have + want;
            win = tl_xrealloc(win, cap);
        }
        n = tl_xlsx_in_read(p, &in, win + have, want);
        if (n < 0) {
            res = XS_FAILED;
            break;
        }
        have += (size_t)n;
        r = xs_feed(&s, win, have, n == 0, &used);
        if (r == XS_BAIL) {
            res = p->failed ? XS_FAILED : XS_GAVE_UP;
            *where = done + used;
            break;
        }
        /* Keep the unfinished token for the next chunk to complete. */
        done += used;
        have -= used;
        memmove(win, win + used, have);
        if (have > XS_MAX_TOKEN) {
            res = XS_GAVE_UP;
            s.why = "a tag longer than 1 MiB";
            *where = done;
            break;
        }
        if (n == 0)
            break;
    }
    *why = s.why;
    free(win);
    xs_free(&s);
    tl_zip_in_close(&in);
    return res;
}

/* Ready the sheet state and a parse context for reading a sheet. */
