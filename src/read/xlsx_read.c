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
 * Every part is streamed: inflated from the zip in fixed chunks and parsed chunk by chunk,
 * so memory follows the size of the result, never the size of the XML.  The inflated size
 * of each part is bounded (TL_XLSX_MAX_PART), both as the zip directory declares it and as
 * actually read, because a few KiB of deflate can expand to many GiB.
 *
 * Inflating is ISA-L's (isal_inflate, 2-3 times zlib's speed) on the raw deflate bytes that
 * libzip hands over; since libzip then checks nothing, the CRC-32 and the size of what was
 * inflated are checked here against the zip directory.  Entries in any other form
 * (encrypted, bzip2, ...) are left to libzip.
 *
 * Parsing is expat's for the small parts.  Worksheets are large (a 20,000-row report
 * unpacks to ~0.5 GB of sheet XML) and take a scanner of their own (see "the fast
 * worksheet scanner" below), which reads the subset of XML that spreadsheet writers
 * produce and gives up on anything else; the sheet is then read again by expat from the
 * start.  So expat remains the reference: the scanner only ever gives the result expat
 * would, faster.
 *
 * Elements are matched on their local names (expat splits "uri|name" for us), so the
 * Transitional and Strict flavours of the format, and any choice of prefixes, read the
 * same.  What an element means depends on where it is: a <t> is cell text inside <si> or
 * <is> (or inside a rich-text run <r> there) but not inside a phonetic run <rPh>.  So
 * the parser keeps a small stack of element codes, one per open element, and classifies
 * each new element by its parent; everything unknown is EL_OTHER, and so is everything
 * below it, which makes stray or deeply nested elements harmless.
 */
#include "read/xlsx_read.h"

#include <expat.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zip.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define XLSX_CHUNK (256u * 1024u) /* bytes inflated and parsed at a time */
#define XLSX_RAW_CHUNK (64u * 1024u) /* compressed bytes read from the zip at a time */
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

/*
 * More test hooks, declared by the unit tests alone.  The scanner mode: 0 (the default)
 * reads worksheets with the fast scanner and falls back to expat; 1 reads them with expat
 * only; 2 with the fast scanner only, failing where it would fall back (so that a test can
 * tell that the scanner itself read a sheet, and compare it with expat).  The chunk size
 * (0: XLSX_CHUNK) sets how many inflated bytes each parsing step gets, so that tests can
 * put a chunk boundary at every byte of a part.
 */
static int xlsx_scanner_mode;
static size_t xlsx_chunk_set;

void tl_xlsx_set_scanner(int mode);
void tl_xlsx_set_scanner(int mode) { xlsx_scanner_mode = mode; }
void tl_xlsx_set_chunk(size_t bytes);
void tl_xlsx_set_chunk(size_t bytes) { xlsx_chunk_set = bytes; }

static size_t xlsx_chunk(void) { return xlsx_chunk_set ? xlsx_chunk_set : XLSX_CHUNK; }

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

/* 1 when name[0..n) is `word`. */
static int xlsx_is(const char *name, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(name, word, n) == 0;
}

/*
 * What an element of local name name[0..n) is, under a parent of code `parent`, in a part
 * of `kind`.  Both parsers classify with this one function, so they agree on it.
 */
static int xlsx_classify(xlsx_kind kind, int parent, const char *name, size_t n)
{
    switch (parent) {
    case EL_DOC:
        if (kind == PART_WORKBOOK && xlsx_is(name, n, "sheets"))
            return EL_SHEETS;
        if (kind == PART_RELS && xlsx_is(name, n, "Relationship"))
            return EL_REL;
        if (kind == PART_SST && xlsx_is(name, n, "si"))
            return EL_SI;
        if (kind == PART_SHEET && xlsx_is(name, n, "sheetData"))
            return EL_SHEETDATA;
        break;
    case EL_SHEETS:
        if (xlsx_is(name, n, "sheet"))
            return EL_SHEET;
        break;
    case EL_SHEETDATA:
        if (xlsx_is(name, n, "row"))
            return EL_ROW;
        break;
    case EL_ROW:
        if (n == 1 && name[0] == 'c')
            return EL_CELL;
        break;
    case EL_CELL:
        if (n == 1 && name[0] == 'v')
            return EL_V;
        if (xlsx_is(name, n, "is"))
            return EL_IS;
        break;
    case EL_SI:
    case EL_IS:
        /* Plain text, or rich-text runs; <rPh> (phonetic hints) falls to EL_OTHER. */
        if (n == 1 && name[0] == 't')
            return EL_T;
        if (n == 1 && name[0] == 'r')
            return EL_RUN;
        break;
    case EL_RUN:
        if (n == 1 && name[0] == 't')
            return EL_T;
        break;
    }
    return EL_OTHER;
}

static void XMLCALL xlsx_on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    xlsx_parse *p = ud;
    const char *local;
    int el;

    if (p->failed)
        return;
    if (p->depth == 0) {
        el = EL_DOC;
    } else if (p->depth <= XLSX_STACK) {
        local = xlsx_local(name);
        el = xlsx_classify(p->kind, p->stack[p->depth - 1], local, strlen(local));
    } else {
        el = EL_OTHER;
    }
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

/* ---- reading a part's bytes ------------------------------------------------------ */

/*
 * The inflated bytes of one zip entry, read in chunks.  Deflated entries are opened raw
 * (ZIP_FL_COMPRESSED) and inflated here with ISA-L; libzip then checks no checksum, so the
 * CRC-32 and the size are checked here, at the end of the entry.  Other entries are left
 * to libzip, which checks them: stored ones (read as they are), encrypted ones, other
 * methods.
 */
typedef enum xlsx_how { IN_LIBZIP, IN_DEFLATE } xlsx_how;

typedef struct xlsx_in {
    xlsx_parse *p; /* for messages */
    zip_file_t *f;
    xlsx_how how;
    struct inflate_state *inf; /* IN_DEFLATE: ~85 KiB, so on the heap */
    unsigned char *raw;        /* IN_DEFLATE: compressed bytes read, not yet inflated */
    int raw_eof;               /* the entry's compressed bytes are all read */
    int ended;                 /* the deflate stream's final block is done */
    int at_end;                /* the end has been reached and checked */
    uint32_t crc, want_crc;    /* IN_DEFLATE: of the bytes so far; the zip's */
    int check_size;
    zip_uint64_t want_size;
    size_t total, limit; /* bytes inflated so far; the bound on them */
} xlsx_in;

/* "damaged zip data" with what is wrong, naming the part (a sheet's message names only
 * the sheet otherwise). */
static void xlsx_damaged(xlsx_parse *p, const char *what)
{
    if (p->sheet)
        xlsx_fail(p, "damaged zip data in part %s: %s", p->part, what);
    else
        xlsx_fail(p, "damaged zip data: %s", what);
}

/* Open entry `idx` for reading.  Returns 1, or 0 with the error set. */
static int xlsx_in_open(xlsx_parse *p, zip_int64_t idx, xlsx_in *in)
{
    tl_xlsx *x = p->x;
    zip_stat_t st;
    int raw;

    memset(in, 0, sizeof *in);
    in->p = p;
    in->limit = xlsx_part_limit();
    zip_stat_init(&st);
    if (zip_stat_index(x->zip, (zip_uint64_t)idx, 0, &st) != 0)
        st.valid = 0; /* zip_fopen_index will say what is wrong */
    /* The bound is checked against the declared size first: cheap, before any work. */
    if ((st.valid & ZIP_STAT_SIZE) && st.size > in->limit) {
        xlsx_bomb(p);
        return 0;
    }
    raw = (st.valid & ZIP_STAT_COMP_METHOD) && (st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
          (st.valid & ZIP_STAT_CRC) && st.encryption_method == ZIP_EM_NONE &&
          st.comp_method == ZIP_CM_DEFLATE;
    in->how = raw ? IN_DEFLATE : IN_LIBZIP;
    in->f = zip_fopen_index(x->zip, (zip_uint64_t)idx, raw ? ZIP_FL_COMPRESSED : 0);
    if (!in->f) {
        xlsx_fail(p, "cannot read the part: %s", zip_error_strerror(zip_get_error(x->zip)));
        return 0;
    }
    in->want_crc = st.crc;
    in->check_size = (st.valid & ZIP_STAT_SIZE) != 0;
    in->want_size = st.size;
    if (in->how == IN_DEFLATE) {
        in->inf = tl_xmalloc(sizeof *in->inf);
        isal_inflate_init(in->inf);
        in->inf->crc_flag = ISAL_DEFLATE; /* a zip entry is raw deflate: no header, no trailer */
        in->raw = tl_xmalloc(XLSX_RAW_CHUNK);
    }
    return 1;
}

static void xlsx_in_close(xlsx_in *in)
{
    if (in->f)
        zip_fclose(in->f);
    free(in->inf);
    free(in->raw);
    memset(in, 0, sizeof *in);
}

/* How many bytes to ask for next: a chunk, or one byte past the bound so that passing it
 * is seen exactly. */
static size_t xlsx_in_want(const xlsx_in *in)
{
    size_t room = in->limit - in->total, chunk = xlsx_chunk();
    return room < chunk ? room + 1 : chunk;
}

/* zip_fread until `n` bytes or the end.  Returns the count, or -1 with the error set. */
static zip_int64_t xlsx_in_fread(xlsx_in *in, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        zip_int64_t k = zip_fread(in->f, (char *)buf + got, n - got);
        if (k < 0) {
            xlsx_damaged(in->p, zip_file_strerror(in->f));
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (zip_int64_t)got;
}

/* Inflate into buf[0..want), until it is full or the stream ends.  Returns the count, or
 * -1 with the error set. */
static zip_int64_t xlsx_in_inflate(xlsx_in *in, unsigned char *buf, size_t want)
{
    struct inflate_state *s = in->inf;

    s->next_out = buf;
    s->avail_out = (uint32_t)want;
    while (s->avail_out > 0 && !in->ended) {
        uint32_t in_before, out_before;
        int r;

        if (s->avail_in == 0 && !in->raw_eof) {
            zip_int64_t k = xlsx_in_fread(in, in->raw, XLSX_RAW_CHUNK);
            if (k < 0)
                return -1;
            in->raw_eof = k < (zip_int64_t)XLSX_RAW_CHUNK;
            s->next_in = in->raw;
            s->avail_in = (uint32_t)k;
        }
        in_before = s->avail_in;
        out_before = s->avail_out;
        r = isal_inflate(s);
        if (r < 0 || r == ISAL_NEED_DICT) {
            xlsx_damaged(in->p, "the compressed data is invalid");
            return -1;
        }
        if (s->block_state == ISAL_BLOCK_FINISH) {
            in->ended = 1;
        } else if (s->avail_in == in_before && s->avail_out == out_before) {
            /* isal_inflate returns only with its input used up or its output full, so no
             * progress at all means the input has run out with the stream unfinished. */
            xlsx_damaged(in->p, "the compressed data ends early");
            return -1;
        }
    }
    return (zip_int64_t)(want - s->avail_out);
}

/*
 * Read the next bytes of the part into buf[0..want), want from xlsx_in_want(): fewer
 * only at the end, where the checks are made.  Returns the count (0 at the end), or -1 with
 * the error set: damaged data, a checksum or size that does not match, the bound passed.
 */
static zip_int64_t xlsx_in_read(xlsx_in *in, void *buf, size_t want)
{
    zip_int64_t n;
    char what[160];

    if (in->at_end)
        return 0;
    n = in->how == IN_DEFLATE ? xlsx_in_inflate(in, buf, want) : xlsx_in_fread(in, buf, want);
    if (n < 0)
        return -1;
    if (in->how == IN_DEFLATE && n > 0)
        in->crc = crc32_gzip_refl(in->crc, buf, (uint64_t)n);
    in->total += (size_t)n;
    if (in->total > in->limit) {
        xlsx_bomb(in->p);
        return -1;
    }
    if ((size_t)n < want) {
        in->at_end = 1;
        if (in->how == IN_LIBZIP)
            return n; /* libzip has checked the CRC-32 and the size */
        /* A damaged archive must not read as silently wrong data. */
        if (in->crc != in->want_crc) {
            snprintf(what, sizeof what, "CRC-32 mismatch (the zip says %08" PRIx32
                     ", the data gives %08" PRIx32 ")", in->want_crc, in->crc);
            xlsx_damaged(in->p, what);
            return -1;
        }
        if (in->check_size && in->total != in->want_size) {
            snprintf(what, sizeof what, "%zu bytes where the zip directory says %" PRIu64,
                     in->total, (uint64_t)in->want_size);
            xlsx_damaged(in->p, what);
            return -1;
        }
    }
    return n;
}

/*
 * Stream zip entry `idx` through expat with the handlers of `p`.  Returns 1 on success,
 * 0 with the error set.
 */
static int xlsx_parse_part(xlsx_parse *p, zip_int64_t idx)
{
    xlsx_in in;

    if (!xlsx_in_open(p, idx, &in))
        return 0;
    p->xp = XML_ParserCreateNS(NULL, XLSX_NS_SEP);
    if (!p->xp) {
        xlsx_in_close(&in);
        xlsx_fail(p, "out of memory");
        return 0;
    }
    XML_SetUserData(p->xp, p);
    XML_SetElementHandler(p->xp, xlsx_on_start, xlsx_on_end);
    XML_SetCharacterDataHandler(p->xp, xlsx_on_text);
    XML_SetStartDoctypeDeclHandler(p->xp, xlsx_on_doctype);

    for (;;) {
        size_t want = xlsx_in_want(&in);
        void *buf = XML_GetBuffer(p->xp, (int)want);
        zip_int64_t n;

        if (!buf) {
            xlsx_fail(p, "out of memory");
            break;
        }
        n = xlsx_in_read(&in, buf, want);
        if (n < 0)
            break;
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
    xlsx_in_close(&in);
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
/* The first "_x" at or after q that leaves room for an escape before e, or NULL.  Text
 * has many underscores ("total_duration_us") and few escapes: with SSE2 both bytes are
 * tested 16 positions at a time. */
static char *xlsx_find_escape(char *q, char *e)
{
#ifdef __SSE2__
    const __m128i us = _mm_set1_epi8('_'), ex = _mm_set1_epi8('x');

    while (e - q >= 17) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(q + 1));
        unsigned bits = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(a, us), _mm_cmpeq_epi8(b, ex)));
        if (bits) {
            q += __builtin_ctz(bits);
            return e - q >= 7 ? q : NULL;
        }
        q += 16;
    }
#endif
    for (; e - q >= 7; q++)
        if (q[0] == '_' && q[1] == 'x')
            return q;
    return NULL;
}

static size_t xlsx_unescape(char *s, size_t n)
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
static void xlsx_row_start(xlsx_parse *p, const char *r)
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
static void xlsx_cell_start(xlsx_parse *p, const char *r, const char *t)
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
        if (st->next_col > XLSX_MAX_COL) {
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

/* ---- the fast worksheet scanner --------------------------------------------------- */

/*
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

enum { XS_OK, XS_MORE, XS_BAIL, XS_SLOW }; /* what a scanning step did (XS_SLOW: a quick
                                              path left the token to the general one) */
enum { XS_START, XS_PROLOG, XS_BODY, XS_EPILOG }; /* where in the document */
enum { XS_READ, XS_FAILED, XS_GAVE_UP };   /* the outcome of scanning a sheet */

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

#ifdef __SSE2__
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(void *)(d + i),
                         _mm_loadu_si128((const __m128i *)(const void *)(src + i)));
#endif
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
 * those missing), as xlsx_attr finds them; the names are unique (xs_open has checked).
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
 * The first byte at or after q that may stop a run of text (XS_TSTOP), or e.  With SSE2
 * (every x86-64) 16 bytes are tested at a time, for < & ] and for anything below 0x20
 * or above 0x7F (one signed comparison); that also stops at TAB and LF, which the caller
 * steps over.
 */
static inline char *xs_skip_text(char *q, char *e)
{
#ifdef __SSE2__
    const __m128i lt = _mm_set1_epi8('<'), amp = _mm_set1_epi8('&'), rb = _mm_set1_epi8(']');
    const __m128i sp = _mm_set1_epi8(0x20);

    while (e - q >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v, amp)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, rb), _mm_cmplt_epi8(v, sp)));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits)
            return q + __builtin_ctz(bits);
        q += 16;
    }
#endif
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

/*
 * Read zip entry `idx`, a worksheet, with the scanner into the sheet state of `p`.
 * XS_READ, XS_FAILED (p->failed, the error set: a handler's, or the zip's), or XS_GAVE_UP
 * (the reason in *why, nothing set).
 */
static int xs_read_sheet(xlsx_parse *p, zip_int64_t idx, const char **why, size_t *where)
{
    xlsx_in in;
    xs s;
    char *win = NULL;
    size_t cap = 0, have = 0, done = 0;
    int res = XS_READ;

    *why = NULL;
    *where = 0;
    if (!xlsx_in_open(p, idx, &in))
        return XS_FAILED;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.stk = tl_xmalloc(XS_MAX_DEPTH * sizeof *s.stk);
    for (;;) {
        size_t want = xlsx_in_want(&in), used;
        zip_int64_t n;
        int r;

        if (have + want > cap) {
            cap = have + want;
            win = tl_xrealloc(win, cap);
        }
        n = xlsx_in_read(&in, win + have, want);
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
    xlsx_in_close(&in);
    return res;
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

    if (xlsx_scanner_mode != 1) {
        /* The scanner first.  Any failure, even one of the sheet's own (a bad cell),
         * sends the sheet to expat: its message then is the one expat's reading gives,
         * whatever the scanner got to.  What the scanner had put in `arena` stays there. */
        tl_error scratch = {0};
        const char *why;
        size_t where;
        int r;

        xlsx_sheet_init(&p, &st, x, sh, arena, xlsx_scanner_mode == 2 ? err : &scratch);
        r = xs_read_sheet(&p, idx, &why, &where);
        xlsx_sheet_done(&st, r == XS_READ);
        if (r == XS_READ)
            return tl_builder_finish(&st.b);
        if (xlsx_scanner_mode == 2) {
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
