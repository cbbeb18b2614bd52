/*
 * xlsx_read.h - read the sheets of an .xlsx workbook into tables (SPEC §1, "XLSX").
 *
 * The workbook is a zip (libzip; deflate inflated with ISA-L, CRC-checked) of XML parts,
 * streamed: worksheets through a bounded hand-written scanner that falls back to expat
 * on anything it does not check, everything else through expat.  Opening reads the
 * sheet list (xl/workbook.xml + xl/_rels/workbook.xml.rels); shared strings are read
 * once, on the first sheet read; each sheet is parsed only when asked for.
 *
 * Cells become raw builder cells (see table.h): kind `n` -> TL_INT when the value is
 * integral (as pandas' openpyxl reader turns 48.0 into 48) and fits int64, TL_FLOAT
 * otherwise; `s` (rich-text runs concatenated), `inlineStr` and `str` -> TL_STR (an
 * inlineStr with no text -> missing); `b` -> TL_BOOL; `e` -> missing for #N/A, TL_STR
 * with the code otherwise.  `_xHHHH_` escapes are decoded; cells without an `r`
 * reference take the next column.  The first row is the header.
 */
#ifndef TL_XLSX_READ_H
#define TL_XLSX_READ_H

#include "table/table.h"

typedef struct tl_xlsx tl_xlsx;

/* Open a workbook.  NULL and *err set (naming the file) when it cannot be read. */
tl_xlsx *tl_xlsx_open(const char *path, tl_error *err);

/*
 * How a workbook is read, for tests: each handle carries its own, so that readers on
 * several threads never share a setting.  Zero in every field is the default.
 */
typedef struct tl_xlsx_opts {
    size_t part_limit; /* a bound on any part's inflated size below TL_XLSX_MAX_PART */
    size_t chunk;      /* inflated bytes each parsing step gets (tests put a chunk
                          boundary at every byte of a part) */
    int scanner;       /* 0: worksheets by the fast scanner, falling back to expat;
                          1: by expat only; 2: by the scanner only, failing where it would
                          fall back (so a test can tell the scanner read a sheet) */
    size_t max_strings; /* a bound on the shared strings below TL_XLSX_MAX_STRINGS */
} tl_xlsx_opts;

/* tl_xlsx_open with options (NULL: the defaults). */
tl_xlsx *tl_xlsx_open_opts(const char *path, const tl_xlsx_opts *opts, tl_error *err);

/* The sheets in workbook order. */
size_t tl_xlsx_sheet_count(const tl_xlsx *x);
const char *tl_xlsx_sheet_name(const tl_xlsx *x, size_t i);

/* 1 when the workbook has a sheet of that name. */
int tl_xlsx_has_sheet(const tl_xlsx *x, const char *sheet);

/* Read one sheet into a typed table whose strings live in `arena`.  NULL and *err set
 * (naming the file, sheet and cell) on failure, or when the sheet does not exist. */
tl_table *tl_xlsx_read_sheet(tl_xlsx *x, const char *sheet, tl_arena *arena, tl_error *err);

void tl_xlsx_close(tl_xlsx *x);

/* Bound on the inflated size of any one part, against decompression bombs.  Test hook:
 * the environment variable TLCOMPARE_MAX_PART (bytes) lowers it, never raises it. */
#define TL_XLSX_MAX_PART ((size_t)2 << 30)

/* Bound on the shared strings of a workbook, so that memory follows the real content: an
 * entry costs 16 bytes however short its string, and a few MiB of deflate can hold
 * hundreds of millions of empty ones.  Real reports have far fewer (one entry per
 * distinct text); past the bound, reading fails with an error. */
#define TL_XLSX_MAX_STRINGS ((size_t)1 << 24)

#endif
