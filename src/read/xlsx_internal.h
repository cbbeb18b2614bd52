/*
 * xlsx_internal.h - what the parts of the xlsx reader share (read/ only; the interface is
 * xlsx_read.h).
 *
 *   xlsx_read.c   the package: opening, relationships, the sheet list, shared strings
 *   xlsx_xml.c    the XML machinery every part goes through: expat, element codes,
 *                 messages, reading a part's bytes (io/zip_read.h)
 *   xlsx_cells.h  what both worksheet parsers do per row and cell, inline; text decoding
 *   xlsx_cells.c  the header row (the cells' one function that is not inline)
 *   xlsx_sheet.c  worksheets: expat's handlers, reading a sheet
 *   xlsx_scan.c   the fast worksheet scanner, tried before expat on every sheet
 */
#ifndef TL_XLSX_INTERNAL_H
#define TL_XLSX_INTERNAL_H

#include "read/xlsx_read.h"

#include "base/excel.h"
#include "io/zip_read.h"

#include <expat.h>
#include <zip.h>

#include <stdint.h>

#define XLSX_CHUNK (256u * 1024u) /* bytes inflated and parsed at a time */
#define XLSX_NS_SEP '|'           /* expat's "uri|local" separator; no NCName holds it */
#define XLSX_STACK 32             /* element depth tracked; nothing we read is deeper */
#define XLSX_MAX_DEPTH 1000       /* element depth refused: as traces' JSON nesting, far past
                                     any spreadsheet writer's and short of a parser's memory */

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
    size_t part_limit; /* the bound on any part's inflated size */
    size_t chunk;      /* inflated bytes per parsing step */
    int scanner;       /* tl_xlsx_opts.scanner */
    size_t max_strings; /* the bound on the shared strings */
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

/* ---- a worksheet being read (xlsx_sheet.c; both parsers call xlsx_cells.h) ----------- */

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

/* ---- xlsx_xml.c ---------------------------------------------------------------------- */

/* Record the failure of a part, prefixed with the file and the sheet (or part) and the
 * cell at fault, and stop the parser: nothing read after the first error is worth having. */
void tl_xlsx_fail(xlsx_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_xlsx_cell_fail(xlsx_parse *p, const char *cell, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of the attribute with that local name, or NULL. */
const char *tl_xlsx_attr(const XML_Char **attrs, const char *local);

/* Find a part: by its exact name, else ignoring case (OPC part names are case-insensitive). */
zip_int64_t tl_xlsx_locate(tl_xlsx *x, const char *name);
/* Open entry `idx` for reading as part p->part.  Returns 1, or 0 with the error set. */
int tl_xlsx_in_open(xlsx_parse *p, zip_int64_t idx, tl_zip_in *in);
/* tl_zip_in_read, with a failure told as the part's (the error set). */
zip_int64_t tl_xlsx_in_read(xlsx_parse *p, tl_zip_in *in, void *buf, size_t want);

/* A parse context for one part, with no handlers yet. */
void tl_xlsx_parse_init(xlsx_parse *p, tl_xlsx *x, xlsx_kind kind, const char *part,
                     const char *sheet, tl_error *err);
/* Stream zip entry `idx` through expat with the handlers of `p`.  Returns 1 on success,
 * 0 with the error set. */
int tl_xlsx_parse_part(xlsx_parse *p, zip_int64_t idx);


/* 1 when name[0..n) is `word`. */
static inline int xlsx_is(const char *name, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(name, word, n) == 0;
}

/*
 * What an element of local name name[0..n) is, under a parent of code `parent`, in a part
 * of `kind`.  Both parsers classify with this one function, so they agree on it.
 */
static inline int xlsx_classify(xlsx_kind kind, int parent, const char *name, size_t n)
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

/* ---- xlsx_read.c ---------------------------------------------------------------------- */

/* The sheet of that name, or NULL. */
const xlsx_sheet *tl_xlsx_find_sheet(const tl_xlsx *x, const char *name);
/* Read the shared-string table (once per workbook).  Returns 1, or 0 with the error set. */
int tl_xlsx_load_sst(tl_xlsx *x, tl_error *err);

/* ---- xlsx_scan.c ---------------------------------------------------------------------- */

enum { XS_READ, XS_FAILED, XS_GAVE_UP }; /* the outcome of scanning a sheet */

/*
 * Read zip entry `idx`, a worksheet, with the scanner into the sheet state of `p`.
 * XS_READ, XS_FAILED (p->failed, the error set: a handler's, or the zip's), or XS_GAVE_UP
 * (the reason in *why and the byte offset in *where, nothing set).
 */
int tl_xs_read_sheet(xlsx_parse *p, zip_int64_t idx, const char **why, size_t *where);

#endif
