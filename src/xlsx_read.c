/*
 * xlsx_read.c - read the sheets of an .xlsx workbook into tables (see xlsx_read.h).
 *
 * An .xlsx file is a zip archive of XML "parts" (ECMA-376, Office Open XML).  A reader
 * needs five of them:
 *
 *   _rels/.rels                  where the workbook part is (nearly always xl/workbook.xml)
 *   xl/workbook.xml              the sheet names, in order, each with a relationship id
 *   xl/_rels/workbook.xml.rels   relationship id -> the part holding that sheet, and
 *                                the part holding the shared-string table
 *   xl/sharedStrings.xml         the strings that `t="s"` cells refer to by index
 *   xl/worksheets/sheetN.xml     the cells of one sheet
 *
 * Every part is streamed: inflated from the zip in fixed chunks straight into expat's
 * own buffer, so memory follows the size of the result, never the size of the XML.  The
 * inflated size of each part is bounded (TL_XLSX_MAX_PART), both as the zip directory
 * declares it and as actually read, because a few KiB of deflate can expand to many GiB.
 *
 * Elements are matched on their local names (expat splits "uri|name" for us), so the
 * Transitional and Strict flavours of the format, and any choice of prefixes, read the
 * same.  What an element means depends on where it is: a <t> is cell text inside <si> or
 * <is> (or inside a rich-text run <r> there) but not inside a phonetic run <rPh>.  So
 * the parser keeps a small stack of element codes, one per open element, and classifies
 * each new element by its parent; everything unknown is EL_OTHER, and so is everything
 * below it, which makes stray or deeply nested elements harmless.
 */
#include "xlsx_read.h"

#include <expat.h>
#include <zip.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XLSX_CHUNK (256u * 1024u) /* bytes inflated per zip_fread / XML_ParseBuffer */
#define XLSX_NS_SEP '|'           /* expat's "uri|local" separator; no NCName holds it */
#define XLSX_MAX_COL 16383u       /* XFD, the last column Excel has */
#define XLSX_MAX_ROW 1048576ul    /* the last row Excel has */
#define XLSX_STACK 32             /* element depth tracked; nothing we read is deeper */

/*
 * The bound in force.  It is TL_XLSX_MAX_PART; tests lower it to exercise the check
 * with small fixtures: the unit tests through a setter they declare themselves (so that
 * it stays out of the public interface), the command-line tests through the environment
 * variable TLCOMPARE_MAX_PART (a byte count), a test hook that can only lower the bound.
 */
static size_t xlsx_part_limit_set; /* 0: not set */

void tl_xlsx_set_part_limit(size_t limit);
void tl_xlsx_set_part_limit(size_t limit) { xlsx_part_limit_set = limit; }

static size_t xlsx_part_limit(void)
{
    const char *env;
    char *end;
    unsigned long long v;

    if (xlsx_part_limit_set)
        return xlsx_part_limit_set;
    env = getenv("TLCOMPARE_MAX_PART");
    if (env && *env >= '0' && *env <= '9') {
        v = strtoull(env, &end, 10);
        if (*end == '\0' && v > 0 && v < TL_XLSX_MAX_PART)
            return (size_t)v;
    }
    return TL_XLSX_MAX_PART;
}

/* ---- the workbook --------------------------------------------------------------- */

typedef struct xlsx_sheet {
    const char *name; /* as workbook.xml spells it */
    const char *rid;  /* its relationship id, NULL when it has none */
    const char *part; /* the zip entry holding it, NULL when the relationship is missing */
} xlsx_sheet;

typedef struct xlsx_str {
    const char *s;
    size_t n;
} xlsx_str;

struct tl_xlsx {
    zip_t *zip;
    char *path;    /* as given by the user: every message starts with it */
    tl_arena meta; /* sheet names, part names and the shared strings */

    xlsx_sheet *sheets;
    size_t nsheets, capsheets;

    const char *sst_part; /* the shared-string part (which may not exist) */
    int sst_loaded;
    xlsx_str *sst;
    size_t nsst, capsst;

    /* Character data of the element being read, reused for every cell and string. */
    tl_buf vbuf; /* <v> */
    tl_buf tbuf; /* <t> of <si> or <is> */
};

/* A relationship of a .rels part, collected while opening. */
typedef struct xlsx_rel {
    const char *id;
    const char *type;
    const char *target; /* resolved to a zip entry name */
    size_t order;       /* position in the part: the first of duplicate ids wins */
} xlsx_rel;

typedef struct xlsx_rels {
    xlsx_rel *v;
    size_t n, cap;
    const char *base; /* directory of the source part, "" or "xl/" */
} xlsx_rels;

/* ---- the XML machinery shared by all parts --------------------------------------- */

/* Element codes: what an element is, given where it stands. */
enum {
    EL_OTHER = 0, /* anything we do not read, and everything below it */
    EL_DOC,       /* the root element of any part */
    EL_SHEETS,    /* workbook/sheets */
    EL_SHEET,     /* workbook/sheets/sheet */
    EL_REL,       /* Relationships/Relationship */
    EL_SHEETDATA, /* worksheet/sheetData */
    EL_ROW,       /* sheetData/row */
    EL_CELL,      /* row/c */
    EL_V,         /* c/v: the value */
    EL_IS,        /* c/is: an inline string, a text container like <si> */
    EL_SI,        /* sst/si: one shared string */
    EL_RUN,       /* <r>: a rich-text run of a text container */
    EL_T,         /* <t> of a text container or of one of its runs */
};

typedef enum xlsx_kind { PART_RELS, PART_WORKBOOK, PART_SST, PART_SHEET } xlsx_kind;

typedef struct xlsx_parse xlsx_parse;
struct xlsx_parse {
    tl_xlsx *x;
    XML_Parser xp;
    xlsx_kind kind;
    const char *part;  /* zip entry being read, for messages */
    const char *sheet; /* sheet being read (NULL for the other parts), for messages */
    tl_error *err;
    int failed;

    size_t depth; /* open elements */
    uint8_t stack[XLSX_STACK];

    tl_buf *text_v; /* where the character data of EL_V goes (NULL: dropped) */
    tl_buf *text_t; /* where the character data of EL_T goes */

    /* The part's own handlers, called for every element that is not EL_OTHER. */
    void (*on_start)(xlsx_parse *p, int el, const XML_Char **attrs);
    void (*on_end)(xlsx_parse *p, int el);
    void *state;
};

/*
 * Record the failure of a part, prefixed with the file and the sheet (or part) and cell
 * at fault, and stop the parser: nothing read after the first error is worth having.
 */
static void xlsx_vfail(xlsx_parse *p, const char *cell, const char *fmt, va_list ap)
{
    char msg[768];

    vsnprintf(msg, sizeof msg, fmt, ap);
    if (p->sheet && cell)
        tl_error_set(p->err, "%s, sheet '%s', cell %s: %s", p->x->path, p->sheet, cell, msg);
    else if (p->sheet)
        tl_error_set(p->err, "%s, sheet '%s': %s", p->x->path, p->sheet, msg);
    else
        tl_error_set(p->err, "%s, part %s: %s", p->x->path, p->part, msg);
    p->failed = 1;
    if (p->xp)
        XML_StopParser(p->xp, XML_FALSE);
}

static void xlsx_fail(xlsx_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xlsx_fail(xlsx_parse *p, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xlsx_vfail(p, NULL, fmt, ap);
    va_end(ap);
}

static void xlsx_cell_fail(xlsx_parse *p, const char *cell, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void xlsx_cell_fail(xlsx_parse *p, const char *cell, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    xlsx_vfail(p, cell, fmt, ap);
    va_end(ap);
}

/* "http://...main|sheetData" -> "sheetData"; names without a namespace stay as they are. */
static const char *xlsx_local(const XML_Char *name)
{
    const char *s = strrchr(name, XLSX_NS_SEP);
    return s ? s + 1 : name;
}

/* The value of the attribute with that local name, or NULL. */
static const char *xlsx_attr(const XML_Char **attrs, const char *local)
{
    for (size_t i = 0; attrs[i]; i += 2)
        if (strcmp(xlsx_local(attrs[i]), local) == 0)
            return attrs[i + 1];
    return NULL;
}

/* What an element named `name` is, under a parent of code `parent`, in a part of `kind`. */
static int xlsx_classify(xlsx_kind kind, int parent, const char *name)
{
    switch (parent) {
    case EL_DOC:
        if (kind == PART_WORKBOOK && strcmp(name, "sheets") == 0)
            return EL_SHEETS;
        if (kind == PART_RELS && strcmp(name, "Relationship") == 0)
            return EL_REL;
        if (kind == PART_SST && strcmp(name, "si") == 0)
            return EL_SI;
        if (kind == PART_SHEET && strcmp(name, "sheetData") == 0)
            return EL_SHEETDATA;
        break;
    case EL_SHEETS:
        if (strcmp(name, "sheet") == 0)
            return EL_SHEET;
        break;
    case EL_SHEETDATA:
        if (strcmp(name, "row") == 0)
            return EL_ROW;
        break;
    case EL_ROW:
        if (strcmp(name, "c") == 0)
            return EL_CELL;
        break;
    case EL_CELL:
        if (strcmp(name, "v") == 0)
            return EL_V;
        if (strcmp(name, "is") == 0)
            return EL_IS;
        break;
    case EL_SI:
    case EL_IS:
        /* Plain text, or rich-text runs; <rPh> (phonetic hints) falls to EL_OTHER. */
        if (strcmp(name, "t") == 0)
            return EL_T;
        if (strcmp(name, "r") == 0)
            return EL_RUN;
        break;
    case EL_RUN:
        if (strcmp(name, "t") == 0)
            return EL_T;
        break;
    }
    return EL_OTHER;
}

static void XMLCALL xlsx_on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    xlsx_parse *p = ud;
    int el;

    if (p->failed)
        return;
    if (p->depth == 0)
        el = EL_DOC;
    else if (p->depth <= XLSX_STACK)
        el = xlsx_classify(p->kind, p->stack[p->depth - 1], xlsx_local(name));
    else
        el = EL_OTHER;
    if (p->depth < XLSX_STACK)
        p->stack[p->depth] = (uint8_t)el;
    p->depth++;
    if (el != EL_OTHER && p->on_start)
        p->on_start(p, el, attrs);
}

static void XMLCALL xlsx_on_end(void *ud, const XML_Char *name)
{
    xlsx_parse *p = ud;
    int el;

    (void)name;
    if (p->failed || p->depth == 0)
        return;
    el = p->depth <= XLSX_STACK ? p->stack[p->depth - 1] : EL_OTHER;
    p->depth--;
    if (el != EL_OTHER && p->on_end)
        p->on_end(p, el);
}

static void XMLCALL xlsx_on_text(void *ud, const XML_Char *s, int len)
{
    xlsx_parse *p = ud;
    int el;

    /* Only text directly inside <v> or <t> counts: the top of the stack says whether
     * we are there (a stray element inside <t> pushes EL_OTHER and mutes its text). */
    if (p->failed || p->depth == 0 || p->depth > XLSX_STACK || len <= 0)
        return;
    el = p->stack[p->depth - 1];
    if (el == EL_V && p->text_v)
        tl_buf_add(p->text_v, s, (size_t)len);
    else if (el == EL_T && p->text_t)
        tl_buf_add(p->text_t, s, (size_t)len);
}

/*
 * OPC forbids DTDs in package parts.  Refusing them outright also rules out every
 * entity-expansion attack ("billion laughs") whatever the expat version.
 */
static void XMLCALL xlsx_on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                                    const XML_Char *pubid, int has_internal_subset)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    xlsx_fail(ud, "has a DOCTYPE declaration, which xlsx parts never have; refusing");
}

/* "2147483648" -> "2 GiB", for the decompression-bomb message. */
static void xlsx_format_size(char *buf, size_t n, size_t bytes)
{
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(buf, n, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, n, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

static void xlsx_bomb(xlsx_parse *p)
{
    char lim[32];

    xlsx_format_size(lim, sizeof lim, xlsx_part_limit());
    tl_error_set(p->err, "%s: part %s inflates beyond %s; refusing (decompression bomb?)",
                 p->x->path, p->part, lim);
    p->failed = 1;
}

/* Find a part: by its exact name, else ignoring case (OPC part names are case-insensitive). */
static zip_int64_t xlsx_locate(tl_xlsx *x, const char *name)
{
    zip_int64_t i = zip_name_locate(x->zip, name, 0);
    if (i < 0)
        i = zip_name_locate(x->zip, name, ZIP_FL_NOCASE);
    return i;
}

/*
 * Stream zip entry `idx` through expat with the handlers of `p`.  Returns 1 on success,
 * 0 with the error set.  The bound is checked twice: against the size the zip directory
 * declares (cheap, before any work) and against the bytes actually inflated, since a
 * hostile archive can declare anything.
 */
static int xlsx_parse_part(xlsx_parse *p, zip_int64_t idx)
{
    tl_xlsx *x = p->x;
    zip_stat_t st;
    zip_file_t *f;
    size_t total = 0, limit = xlsx_part_limit();

    zip_stat_init(&st);
    if (zip_stat_index(x->zip, (zip_uint64_t)idx, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE) &&
        st.size > limit) {
        xlsx_bomb(p);
        return 0;
    }
    f = zip_fopen_index(x->zip, (zip_uint64_t)idx, 0);
    if (!f) {
        xlsx_fail(p, "cannot read the part: %s", zip_error_strerror(zip_get_error(x->zip)));
        return 0;
    }
    p->xp = XML_ParserCreateNS(NULL, XLSX_NS_SEP);
    if (!p->xp) {
        zip_fclose(f);
        xlsx_fail(p, "out of memory");
        return 0;
    }
    XML_SetUserData(p->xp, p);
    XML_SetElementHandler(p->xp, xlsx_on_start, xlsx_on_end);
    XML_SetCharacterDataHandler(p->xp, xlsx_on_text);
    XML_SetStartDoctypeDeclHandler(p->xp, xlsx_on_doctype);

    for (;;) {
        /* Ask for one byte past the bound, so that reaching it is seen exactly. */
        size_t room = limit - total;
        size_t want = room < XLSX_CHUNK ? room + 1 : XLSX_CHUNK;
        void *buf = XML_GetBuffer(p->xp, (int)want);
        zip_int64_t n;

        if (!buf) {
            xlsx_fail(p, "out of memory");
            break;
        }
        n = zip_fread(f, buf, want);
        if (n < 0) {
            xlsx_fail(p, "damaged zip data: %s", zip_file_strerror(f));
            break;
        }
        total += (size_t)n;
        if (total > limit) {
            xlsx_bomb(p);
            break;
        }
        if (XML_ParseBuffer(p->xp, (int)n, n == 0) != XML_STATUS_OK) {
            /* A handler that failed has said why; otherwise the XML itself is bad. */
            if (!p->failed) {
                unsigned long line = (unsigned long)XML_GetCurrentLineNumber(p->xp);
                const char *why = XML_ErrorString(XML_GetErrorCode(p->xp));
                xlsx_fail(p, "malformed XML at line %lu: %s", line, why ? why : "error");
            }
            break;
        }
        if (n == 0)
            break;
    }
    XML_ParserFree(p->xp);
    p->xp = NULL;
    zip_fclose(f);
    return !p->failed;
}

/* A parse context for one part, with no handlers yet. */
static void xlsx_parse_init(xlsx_parse *p, tl_xlsx *x, xlsx_kind kind, const char *part,
                            const char *sheet, tl_error *err)
{
    memset(p, 0, sizeof *p);
    p->x = x;
    p->kind = kind;
    p->part = part;
    p->sheet = sheet;
    p->err = err;
}

/* ---- text ----------------------------------------------------------------------- */

static int xlsx_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Decode, in place, the _xHHHH_ escapes with which OOXML stores characters that XML 1.0
 * cannot carry (_x000D_ is a carriage return).  A literal "_x0041_" is written with its
 * underscore escaped, "_x005F_x0041_"; one left-to-right pass that resumes after each
 * escape undoes that correctly.  _x0000_ and lone surrogates stay as written: they have
 * no place in a C string or in UTF-8.  Returns the new length (and NUL-terminates).
 */
static size_t xlsx_unescape(char *s, size_t n)
{
    size_t r = 0, w = 0;

    if (n < 7 || !memchr(s, '_', n))
        return n;
    while (r < n) {
        if (s[r] == '_' && r + 7 <= n && s[r + 1] == 'x' && s[r + 6] == '_') {
            int h0 = xlsx_hex(s[r + 2]), h1 = xlsx_hex(s[r + 3]);
            int h2 = xlsx_hex(s[r + 4]), h3 = xlsx_hex(s[r + 5]);
            if (h0 >= 0 && h1 >= 0 && h2 >= 0 && h3 >= 0) {
                unsigned cp = (unsigned)(h0 << 12 | h1 << 8 | h2 << 4 | h3);
                if (cp != 0 && (cp < 0xD800 || cp > 0xDFFF)) {
                    /* At most 3 bytes replace 7: the write never overtakes the read. */
                    if (cp < 0x80) {
                        s[w++] = (char)cp;
                    } else if (cp < 0x800) {
                        s[w++] = (char)(0xC0 | cp >> 6);
                        s[w++] = (char)(0x80 | (cp & 0x3F));
                    } else {
                        s[w++] = (char)(0xE0 | cp >> 12);
                        s[w++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                        s[w++] = (char)(0x80 | (cp & 0x3F));
                    }
                    r += 7;
                    continue;
                }
            }
        }
        s[w++] = s[r++];
    }
    s[w] = '\0';
    return w;
}

/* The text collected in `b`, escapes decoded; "" when nothing was collected. */
static const char *xlsx_text(tl_buf *b, size_t *n)
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
static const char *xlsx_trimmed(tl_buf *b, size_t *n)
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

/* Case-insensitive comparison of s[0..n) with a lower-case word. */
static int xlsx_ieq(const char *s, size_t n, const char *word)
{
    if (strlen(word) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return 0;
    }
    return 1;
}

/* ---- opening: relationships and the sheet list ------------------------------------ */

/* Append the path segments of `s` to out[0..*w), resolving "." and "..". */
static void xlsx_add_segments(char *out, size_t *w, const char *s)
{
    while (*s) {
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);

        if (n == 0 || (n == 1 && s[0] == '.')) {
            /* nothing: "a//b" and "a/./b" are "a/b" */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (*w > 0 && out[*w - 1] != '/')
                (*w)--;
            if (*w > 0)
                (*w)--; /* and the slash before the dropped segment */
        } else {
            if (*w > 0)
                out[(*w)++] = '/';
            memcpy(out + *w, s, n);
            *w += n;
        }
        s += n;
        if (*s == '/')
            s++;
    }
}

/*
 * The zip entry a relationship Target names.  Targets are URIs relative to the directory
 * of the source part ("worksheets/sheet1.xml" from xl/workbook.xml), or absolute from
 * the package root ("/xl/worksheets/sheet1.xml"); zip entry names have no leading slash.
 */
static const char *xlsx_resolve(tl_arena *a, const char *base, const char *target)
{
    char *out = tl_arena_alloc(a, strlen(base) + strlen(target) + 2);
    size_t w = 0;

    if (target[0] != '/')
        xlsx_add_segments(out, &w, base);
    xlsx_add_segments(out, &w, target);
    out[w] = '\0';
    return out;
}

static void xlsx_rels_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    xlsx_rels *rels = p->state;
    const char *id, *target, *type, *mode;
    xlsx_rel *r;

    if (el != EL_REL)
        return;
    id = xlsx_attr(attrs, "Id");
    target = xlsx_attr(attrs, "Target");
    type = xlsx_attr(attrs, "Type");
    mode = xlsx_attr(attrs, "TargetMode");
    /* Links to outside the package (hyperlinks and such) are no parts of ours. */
    if (!id || !target || (mode && strcmp(mode, "External") == 0))
        return;
    TL_GROW(rels->v, rels->cap, rels->n + 1);
    r = &rels->v[rels->n];
    r->id = tl_arena_strdup(&p->x->meta, id);
    r->type = tl_arena_strdup(&p->x->meta, type ? type : "");
    r->target = xlsx_resolve(&p->x->meta, rels->base, target);
    r->order = rels->n++;
}

/* Read a .rels part into `rels`.  Returns 1, or 0 with the error set. */
static int xlsx_read_rels(tl_xlsx *x, zip_int64_t idx, const char *part, xlsx_rels *rels,
                          tl_error *err)
{
    xlsx_parse p;

    xlsx_parse_init(&p, x, PART_RELS, part, NULL, err);
    p.on_start = xlsx_rels_start;
    p.state = rels;
    return xlsx_parse_part(&p, idx);
}

/* 1 when a relationship type URI ends in "/<what>" (Transitional and Strict agree there). */
static int xlsx_rel_is(const xlsx_rel *r, const char *what)
{
    size_t n = strlen(r->type), m = strlen(what);
    return n > m && r->type[n - m - 1] == '/' && strcmp(r->type + n - m, what) == 0;
}

static int xlsx_rel_cmp(const void *a, const void *b)
{
    const xlsx_rel *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The first relationship with that id in `rels` (sorted by xlsx_rel_cmp), or NULL. */
static const xlsx_rel *xlsx_rel_find(const xlsx_rels *rels, const char *id)
{
    size_t lo = 0, hi = rels->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rels->v[mid].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rels->n && strcmp(rels->v[lo].id, id) == 0 ? &rels->v[lo] : NULL;
}

static void xlsx_workbook_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    tl_xlsx *x = p->x;
    const char *name, *rid;
    xlsx_sheet *s;

    if (el != EL_SHEET)
        return;
    name = xlsx_attr(attrs, "name");
    rid = xlsx_attr(attrs, "id"); /* r:id */
    if (!name) {
        xlsx_fail(p, "sheet number %zu has no name", x->nsheets + 1);
        return;
    }
    TL_GROW(x->sheets, x->capsheets, x->nsheets + 1);
    s = &x->sheets[x->nsheets++];
    s->name = tl_arena_strdup(&x->meta, name);
    s->rid = rid ? tl_arena_strdup(&x->meta, rid) : NULL;
    s->part = NULL;
}

static int xlsx_strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* pandas selects sheets by name, so two sheets of one name would make one unreachable. */
static int xlsx_check_duplicates(tl_xlsx *x, const char *part, tl_error *err)
{
    const char **names;
    int ok = 1;

    if (x->nsheets < 2)
        return 1;
    names = tl_xmalloc(x->nsheets * sizeof *names);
    for (size_t i = 0; i < x->nsheets; i++)
        names[i] = x->sheets[i].name;
    qsort(names, x->nsheets, sizeof *names, xlsx_strp_cmp);
    for (size_t i = 1; i < x->nsheets && ok; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            tl_error_set(err, "%s, part %s: two sheets are named '%s'", x->path, part, names[i]);
            ok = 0;
        }
    }
    free(names);
    return ok;
}

/*
 * Find the workbook part through the package relationships, read its sheet list and
 * resolve each sheet to its part.  Returns 1, or 0 with the error set.
 */
static int xlsx_read_structure(tl_xlsx *x, tl_error *err)
{
    const char *wb = "xl/workbook.xml";
    const char *slash, *base, *rels_part;
    xlsx_rels rels = {0};
    zip_int64_t idx;
    xlsx_parse p;
    int ok = 0;

    if (zip_get_num_entries(x->zip, 0) <= 0) {
        tl_error_set(err, "%s: an empty zip archive, not an xlsx workbook", x->path);
        return 0;
    }

    /* The package relationships say where the workbook is; writers all put it in
     * xl/workbook.xml, which is also the answer when _rels/.rels is missing. */
    idx = xlsx_locate(x, "_rels/.rels");
    if (idx >= 0) {
        rels.base = "";
        if (!xlsx_read_rels(x, idx, "_rels/.rels", &rels, err))
            goto out;
        for (size_t i = 0; i < rels.n; i++) {
            if (xlsx_rel_is(&rels.v[i], "officeDocument")) {
                wb = rels.v[i].target;
                break;
            }
        }
        rels.n = 0;
    }
    idx = xlsx_locate(x, wb);
    if (idx < 0) {
        tl_error_set(err, "%s: not an xlsx workbook (%s is missing)", x->path, wb);
        goto out;
    }
    xlsx_parse_init(&p, x, PART_WORKBOOK, wb, NULL, err);
    p.on_start = xlsx_workbook_start;
    if (!xlsx_parse_part(&p, idx) || !xlsx_check_duplicates(x, wb, err))
        goto out;

    /* xl/workbook.xml -> base "xl/", relationships in xl/_rels/workbook.xml.rels. */
    slash = strrchr(wb, '/');
    base = tl_arena_strndup(&x->meta, wb, slash ? (size_t)(slash - wb + 1) : 0);
    rels_part = tl_arena_printf(&x->meta, "%s_rels/%s.rels", base, slash ? slash + 1 : wb);
    idx = xlsx_locate(x, rels_part);
    if (idx < 0) {
        tl_error_set(err, "%s: not an xlsx workbook (%s is missing)", x->path, rels_part);
        goto out;
    }
    rels.base = base;
    if (!xlsx_read_rels(x, idx, rels_part, &rels, err))
        goto out;

    x->sst_part = tl_arena_printf(&x->meta, "%ssharedStrings.xml", base);
    for (size_t i = 0; i < rels.n; i++) {
        if (xlsx_rel_is(&rels.v[i], "sharedStrings")) {
            x->sst_part = rels.v[i].target;
            break;
        }
    }
    /* Sorted ids make the lookups O(log n) even for a hostile number of sheets. */
    if (rels.n)
        qsort(rels.v, rels.n, sizeof *rels.v, xlsx_rel_cmp);
    for (size_t i = 0; i < x->nsheets; i++) {
        const xlsx_rel *r = x->sheets[i].rid ? xlsx_rel_find(&rels, x->sheets[i].rid) : NULL;
        /* A missing relationship only matters if the sheet is read: say so then. */
        x->sheets[i].part = r ? r->target : NULL;
    }
    ok = 1;
out:
    free(rels.v);
    return ok;
}

static void xlsx_open_error(const char *path, int code, tl_error *err)
{
    zip_error_t ze;

    /* Capture errno first: the system error behind ZIP_ER_OPEN / READ / SEEK. */
    zip_error_init_with_code(&ze, code);
    switch (code) {
    case ZIP_ER_NOZIP:
        tl_error_set(err, "%s: not a zip archive (or a damaged one)", path);
        break;
    case ZIP_ER_INCONS:
        tl_error_set(err, "%s: damaged zip archive (truncated, or its directory is inconsistent)",
                     path);
        break;
    case ZIP_ER_NOENT:
        tl_error_set(err, "%s: no such file", path);
        break;
    case ZIP_ER_MEMORY:
        tl_error_set(err, "%s: out of memory", path);
        break;
    case ZIP_ER_OPEN:
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
        if (zip_error_code_system(&ze) != 0) {
            tl_error_set(err, "%s: cannot read: %s", path, strerror(zip_error_code_system(&ze)));
            break;
        }
        /* fall through */
    default:
        tl_error_set(err, "%s: cannot read as a zip archive: %s", path, zip_error_strerror(&ze));
        break;
    }
    zip_error_fini(&ze);
}

tl_xlsx *tl_xlsx_open(const char *path, tl_error *err)
{
    int code = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &code);
    tl_xlsx *x;

    if (!z) {
        xlsx_open_error(path, code, err);
        return NULL;
    }
    x = tl_xcalloc(1, sizeof *x);
    x->zip = z;
    x->path = tl_xstrdup(path);
    tl_arena_init(&x->meta);
    if (!xlsx_read_structure(x, err)) {
        tl_xlsx_close(x);
        return NULL;
    }
    return x;
}

size_t tl_xlsx_sheet_count(const tl_xlsx *x) { return x->nsheets; }

const char *tl_xlsx_sheet_name(const tl_xlsx *x, size_t i)
{
    return i < x->nsheets ? x->sheets[i].name : NULL;
}

static const xlsx_sheet *xlsx_find_sheet(const tl_xlsx *x, const char *name)
{
    for (size_t i = 0; i < x->nsheets; i++)
        if (strcmp(x->sheets[i].name, name) == 0)
            return &x->sheets[i];
    return NULL;
}

int tl_xlsx_has_sheet(const tl_xlsx *x, const char *sheet)
{
    return xlsx_find_sheet(x, sheet) != NULL;
}

void tl_xlsx_close(tl_xlsx *x)
{
    if (!x)
        return;
    if (x->zip)
        zip_discard(x->zip); /* read-only: nothing to write back */
    free(x->path);
    free(x->sheets);
    free(x->sst);
    tl_buf_free(&x->vbuf);
    tl_buf_free(&x->tbuf);
    tl_arena_free(&x->meta);
    free(x);
}

/* ---- shared strings ----------------------------------------------------------------- */

static void xlsx_sst_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    (void)attrs;
    if (el == EL_SI)
        tl_buf_clear(&p->x->tbuf);
}

static void xlsx_sst_end(xlsx_parse *p, int el)
{
    tl_xlsx *x = p->x;
    const char *s;
    size_t n;

    if (el != EL_SI)
        return;
    s = xlsx_text(&x->tbuf, &n);
    TL_GROW(x->sst, x->capsst, x->nsst + 1);
    x->sst[x->nsst].s = tl_arena_strndup(&x->meta, s, n);
    x->sst[x->nsst].n = n;
    x->nsst++;
}

/*
 * Read the shared-string table, once per workbook: every sheet indexes the same one.
 * A workbook without the part simply has no shared strings.
 */
static int xlsx_load_sst(tl_xlsx *x, tl_error *err)
{
    zip_int64_t idx = xlsx_locate(x, x->sst_part);
    xlsx_parse p;

    if (idx >= 0) {
        xlsx_parse_init(&p, x, PART_SST, x->sst_part, NULL, err);
        p.on_start = xlsx_sst_start;
        p.on_end = xlsx_sst_end;
        p.text_t = &x->tbuf;
        if (!xlsx_parse_part(&p, idx)) {
            x->nsst = 0; /* a later read fails the same way rather than half-working */
            return 0;
        }
    }
    x->sst_loaded = 1;
    return 1;
}

/* ---- worksheets --------------------------------------------------------------------- */

typedef enum xlsx_ctype { CT_N, CT_S, CT_STR, CT_INLINE, CT_B, CT_E, CT_D } xlsx_ctype;

/* A header cell, held until its row ends (the header names are made all at once). */
typedef struct xlsx_hcell {
    size_t col;
    tl_cell cell;
} xlsx_hcell;

typedef struct xlsx_sheet_state {
    tl_builder b;
    tl_arena *arena; /* the caller's: every string of the table goes there */
    int have_header; /* 0 until the first row with a value has been read */
    xlsx_hcell *hdr;
    size_t nhdr, caphdr;
    /* The copy in `arena` of each shared string used so far: a column that repeats a
     * string (op names, categories) holds one copy, not one per cell. */
    const char **sst_copy;

    unsigned long row; /* 1-based number of the current row, for messages */
    size_t next_col;   /* column of the next cell without an `r` */

    /* The cell being read. */
    size_t col;
    xlsx_ctype type;
    int has_v;
    char ref[16]; /* its reference as written, "" when it had none */
} xlsx_sheet_state;

/* Column letters of a 0-based column: 0 -> "A", 27 -> "AB" (col <= XFD). */
static void xlsx_cell_name(char *buf, size_t n, size_t col, unsigned long row)
{
    char letters[4];
    size_t c = col + 1, k = 0;

    while (c > 0 && k < 3) {
        letters[k++] = (char)('A' + (c - 1) % 26);
        c = (c - 1) / 26;
    }
    for (size_t i = 0; i < k / 2; i++) {
        char t = letters[i];
        letters[i] = letters[k - 1 - i];
        letters[k - 1 - i] = t;
    }
    snprintf(buf, n, "%.*s%lu", (int)k, letters, row);
}

/*
 * Parse a cell reference: letters then a row number ("B7"; "$B$7" too).  Returns 1 and
 * the 0-based column, or 0 when it is not one or lies outside the sheet (past XFD or
 * row 1048576).
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
    if (letters == 0 || c - 1 > XLSX_MAX_COL)
        return 0;
    if (*s == '$')
        s++;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (++digits > 7)
            return 0;
        row = row * 10 + (unsigned long)(*s - '0');
    }
    if (*s || digits == 0 || row == 0 || row > XLSX_MAX_ROW)
        return 0;
    *col = c - 1;
    return 1;
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
    return *r || row == 0 || row > XLSX_MAX_ROW ? dflt : row;
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
    return tl_cell_str(xlsx_keep(st, s, n));
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

    if (xlsx_ieq(s + i, n - i, "nan")) {
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
    *out = tl_cell_str(st->sst_copy[idx]);
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
        if ((n == 1 && s[0] == '1') || xlsx_ieq(s, n, "true")) {
            *out = tl_cell_bool(1);
        } else if ((n == 1 && s[0] == '0') || xlsx_ieq(s, n, "false")) {
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

static void xlsx_sheet_start(xlsx_parse *p, int el, const XML_Char **attrs)
{
    xlsx_sheet_state *st = p->state;
    const char *r, *t;

    switch (el) {
    case EL_ROW:
        /* The row number only serves messages: blank rows are dropped either way. */
        st->row = xlsx_row_number(xlsx_attr(attrs, "r"), st->row + 1);
        st->next_col = 0;
        st->nhdr = 0;
        break;
    case EL_CELL:
        r = xlsx_attr(attrs, "r");
        if (r) {
            if (!xlsx_parse_ref(r, &st->col)) {
                xlsx_fail(p, "invalid cell reference '%.40s' in row %lu", r, st->row);
                return;
            }
            /* A valid reference is at most "$XFD$1048576": it fits. */
            memcpy(st->ref, r, strlen(r) + 1);
        } else {
            /* No reference: the cell after the previous one of the row.  Its name is only
             * made if a message needs it (see xlsx_ref). */
            if (st->next_col > XLSX_MAX_COL) {
                xlsx_fail(p, "row %lu has cells past column XFD", st->row);
                return;
            }
            st->col = st->next_col;
            st->ref[0] = '\0';
        }
        st->next_col = st->col + 1;

        t = xlsx_attr(attrs, "t");
        if (!t || strcmp(t, "n") == 0)
            st->type = CT_N;
        else if (strcmp(t, "s") == 0)
            st->type = CT_S;
        else if (strcmp(t, "str") == 0)
            st->type = CT_STR;
        else if (strcmp(t, "inlineStr") == 0)
            st->type = CT_INLINE;
        else if (strcmp(t, "b") == 0)
            st->type = CT_B;
        else if (strcmp(t, "e") == 0)
            st->type = CT_E;
        else if (strcmp(t, "d") == 0)
            st->type = CT_D;
        else {
            xlsx_cell_fail(p, xlsx_ref(st), "unknown cell type '%.20s'", t);
            return;
        }
        st->has_v = 0;
        tl_buf_clear(&p->x->vbuf);
        tl_buf_clear(&p->x->tbuf);
        break;
    case EL_V:
        st->has_v = 1;
        break;
    }
}

static void xlsx_sheet_end(xlsx_parse *p, int el)
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

    memset(&st, 0, sizeof st);
    tl_builder_init(&st.b, arena);
    st.arena = arena;
    xlsx_parse_init(&p, x, PART_SHEET, sh->part, sh->name, err);
    p.on_start = xlsx_sheet_start;
    p.on_end = xlsx_sheet_end;
    p.text_v = &x->vbuf;
    p.text_t = &x->tbuf;
    p.state = &st;

    ok = xlsx_parse_part(&p, idx);
    free(st.hdr);
    free(st.sst_copy);
    if (!ok) {
        tl_builder_abort(&st.b);
        return NULL;
    }
    /* No row with a value at all: no header, so a table of no columns and no rows. */
    return tl_builder_finish(&st.b);
}
