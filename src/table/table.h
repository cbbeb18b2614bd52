/*
 * table.h - the table model: one sheet of a report, or one result of the comparison.
 *
 * A table is a list of columns of equal length (column-major, because every step of
 * the comparison - prefixing, merging, diffing, dropping - works on whole columns).
 * Each cell carries its own kind, exactly like a value in a pandas object column;
 * the column type only says how the column was inferred (SPEC §1, "Reading a sheet")
 * and how it behaves when a merge introduces missing cells.
 */
#ifndef TL_TABLE_H
#define TL_TABLE_H

#include "base/arena.h"
#include "base/hash.h"
#include "base/util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum tl_kind {
    TL_MISSING = 0, /* empty cell, NA text, #N/A, empty inline string */
    TL_INT,         /* integral number read as integer text */
    TL_FLOAT,       /* floating-point number */
    TL_BOOL,        /* True / False */
    TL_STR,         /* text, kept exactly as written */
} tl_kind;

typedef struct tl_cell {
    uint8_t kind; /* tl_kind */
    uint32_t len; /* TL_STR: the text's length (UINT32_MAX: longer, ask strlen); it
                     fits in the padding, and saves a strlen at every later step */
    union {
        int64_t i;
        double f;
        int b;
        const char *s; /* NUL-terminated, owned by an arena */
    } v;
} tl_cell;

typedef enum tl_coltype {
    TL_COL_NUM = 0, /* all present cells numeric (an all-missing column is numeric too) */
    TL_COL_BOOL,    /* all present cells True/False */
    TL_COL_STR,     /* anything else: pandas' "object" column */
} tl_coltype;

/* What a column is in a comparison result: used to split and to order columns. */
typedef enum tl_role {
    TL_ROLE_DATA = 0, /* a report's own column (prefixed "<tag>::" after step 1) */
    TL_ROLE_KEY,      /* a merge key */
    TL_ROLE_DIFF,     /* "<m>__<t>_diff" or "<m>__<t>_pct" */
} tl_role;

typedef struct tl_column {
    const char *name; /* arena-owned */
    uint8_t type;     /* tl_coltype */
    uint8_t role;     /* tl_role */
    int tag;          /* report index for DATA and DIFF columns, -1 for keys */
    tl_cell *cells;   /* nrows cells, malloc'd */
} tl_column;

typedef struct tl_table {
    size_t nrows;
    size_t ncols;
    tl_column *cols;    /* malloc'd */
    char **float_texts; /* NULL, or what tl_table_format_floats() made (one per column) */
} tl_table;

/* ---- cells ---------------------------------------------------------------------- */

static inline tl_cell tl_cell_missing(void) { tl_cell c = {0}; return c; }
static inline tl_cell tl_cell_int(int64_t i) { tl_cell c = {.kind = TL_INT}; c.v.i = i; return c; }
static inline tl_cell tl_cell_float(double f) { tl_cell c = {.kind = TL_FLOAT}; c.v.f = f; return c; }
static inline tl_cell tl_cell_bool(int b) { tl_cell c = {.kind = TL_BOOL}; c.v.b = !!b; return c; }
static inline tl_cell tl_cell_strn(const char *s, size_t n)
{
    tl_cell c = {.kind = TL_STR, .len = n < UINT32_MAX ? (uint32_t)n : UINT32_MAX};
    c.v.s = s;
    return c;
}
static inline tl_cell tl_cell_str(const char *s) { return tl_cell_strn(s, strlen(s)); }

/* The length of a TL_STR cell's text. */
static inline size_t tl_cell_len(const tl_cell *c) { return c->len < UINT32_MAX ? c->len : strlen(c->v.s); }

/* 1 for INT, FLOAT and BOOL cells (a bool is 0 or 1 when compared, as in Python). */
int tl_cell_is_number(const tl_cell *c);
/* The numeric value of an INT, FLOAT or BOOL cell. */
double tl_cell_number(const tl_cell *c);

/*
 * Order of merge keys (SPEC §2 step 2): numbers and booleans by value, then strings by
 * code point (byte order of UTF-8), then missing.  Returns <0, 0, >0.  Two cells compare
 * equal exactly when they are equal merge keys (1 == 1.0, missing == missing).
 */
int tl_cell_key_cmp(const tl_cell *a, const tl_cell *b);

/* A hash of a key cell, equal for cells that tl_cell_key_cmp finds equal (1 == 1.0,
 * True == 1, -0.0 == 0.0, missing == missing). */
uint64_t tl_cell_key_hash(const tl_cell *c);

/* ---- tables --------------------------------------------------------------------- */

/* A new empty table (no rows, no columns). */
tl_table *tl_table_new(void);

/* Free the table, its columns and cell arrays (strings belong to arenas). */
void tl_table_free(tl_table *t);

/* Append a column with the given arena-owned name and nrows missing cells.
 * Returns its index. */
size_t tl_table_add_column(tl_table *t, const char *name);
/* The same, for a column whose every cell the caller writes next: its cells zeroed by
 * writing, their pages mapped at once (a sparse column is better left to the kernel's
 * zero pages, as tl_table_add_column does). */
size_t tl_table_add_full_column(tl_table *t, const char *name);

/* Index of the column named `name`, or -1. */
long tl_table_find(const tl_table *t, const char *name);

/* The column "<tag>::<name>" of t (a result sheet names each report's columns so), or NULL. */
const tl_column *tl_table_tagged(const tl_table *t, const char *tag, const char *name);

/* The number in row `row` of column c: NaN when c is NULL or the cell holds no number. */
double tl_column_number_at(const tl_column *c, size_t row);

/* A hash index of a table's column names: tl_table_find in constant time, for loops
 * over columns of tables that may have many thousands (a hostile header).  Valid until
 * the table's columns change; the first of equal names wins, as in tl_table_find. */
typedef tl_strmap tl_name_map; /* base/hash.h */
typedef struct tl_name_index {
    tl_name_map *map;
} tl_name_index;
void tl_name_index_init(tl_name_index *ix, const tl_table *t);
long tl_name_index_find(const tl_name_index *ix, const char *name);
void tl_name_index_free(tl_name_index *ix);

/* Remove column i (its cells are freed). */
void tl_table_remove_column(tl_table *t, size_t i);

/* Keep only the rows listed in `rows` (n entries, indexes into the table, may repeat),
 * in that order. */
void tl_table_take_rows(tl_table *t, const size_t *rows, size_t n);

/*
 * Format every TL_FLOAT cell once, as numfmt.h's tl_fmt_double() does, for the writers
 * that would each format it again (the workbook and the CSV file of a result): the
 * largest single cost of writing is formatting doubles.  Afterwards tl_float_text()
 * gives a cell's text.  The texts are kept per column, each cell's at the offset its
 * `len` field holds (a float does not use it otherwise): a length byte, then the text.
 * Adding or removing a column drops them; reordering rows keeps them.
 */
void tl_table_format_floats(tl_table *t);

/* The text of float cell `cell` of column c, and its length in *n; NULL when the table
 * was not formatted.  At least TL_FLOAT_TEXT_SLACK bytes may be read from the text. */
#define TL_FLOAT_TEXT_SLACK 32
static inline const char *tl_float_text(const tl_table *t, size_t c, const tl_cell *cell, size_t *n)
{
    if (!t->float_texts)
        return NULL;
    const char *p = t->float_texts[c] + cell->len;
    *n = (unsigned char)p[0];
    return p + 1;
}

/*
 * Before a writer reads row r of every column: a row's cells are as many streams through
 * memory as the table has columns, more than the hardware prefetcher follows, so the
 * cells of row r + 2 * TL_PREFETCH_AHEAD are fetched, and the texts (up to 4 KiB each)
 * and formatted numbers that the cells of row r + TL_PREFETCH_AHEAD point to.
 */
#define TL_PREFETCH_AHEAD 8
static inline void tl_table_prefetch_row(const tl_table *t, size_t r)
{
    size_t near = r + TL_PREFETCH_AHEAD, far = r + 2 * TL_PREFETCH_AHEAD;
    if (near >= t->nrows)
        return;
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_cell *cells = t->cols[c].cells, *x = &cells[near];
        if (far < t->nrows)
            __builtin_prefetch(&cells[far]);
        if (x->kind == TL_STR) {
            /* the text's cache lines (len: its length, or UINT32_MAX), up to 4 KiB */
            uintptr_t a = (uintptr_t)x->v.s & ~(uintptr_t)63;
            uintptr_t e = (uintptr_t)x->v.s + (x->len < 4096 ? x->len : 4096);
            for (; a < e; a += 64)
                __builtin_prefetch((const void *)a);
        } else if (x->kind == TL_FLOAT && t->float_texts) {
            __builtin_prefetch(t->float_texts[c] + x->len);
        }
    }
}

/* ---- building a table from a reader --------------------------------------------- */

/*
 * A table builder takes a header and then raw cells row by row, the way a CSV or xlsx
 * reader finds them.  Raw cells are TL_STR (text as written), TL_INT/TL_FLOAT (an xlsx
 * number), TL_BOOL (an xlsx boolean) or TL_MISSING.  tl_builder_finish() applies the
 * missing-value strings and the column typing of SPEC §1.
 */
typedef struct tl_builder {
    tl_table *t;
    tl_arena *arena;
    size_t cap;   /* row capacity of every column's cell array */
    size_t nhead; /* number of header cells given */
    int in_row;   /* 1 between the first cell of a row and tl_builder_end_row() */
    int row_has_value;
    int too_big;  /* 1 once the table would pass the bounds below; it takes no more cells */
    size_t colcap; /* capacity of t->cols */
    tl_name_map *names; /* how often each column name is taken (pandas' dedup_names) */
} tl_builder;

/*
 * Bounds on one table, against inputs that are small but describe a huge table (a wide
 * header followed by many short lines, or one xlsx cell at column XFD in every row):
 * missing cells are stored like any other, at 16 bytes each.  Both are far beyond any
 * real report (Excel itself stops at 16384 columns and 1048576 rows).  A reader checks
 * `too_big` after the header and after each row and fails with its own message.
 */
#define TL_TABLE_MAX_COLS ((size_t)1 << 20)  /* 1048576 columns */
#define TL_TABLE_MAX_CELLS ((size_t)1 << 26) /* 67108864 cells (rows x columns), 1 GiB */

void tl_builder_init(tl_builder *b, tl_arena *arena);

/* Set the header: n names (NULL or "" for a column without a name, which becomes
 * "Unnamed: <index>"; repeated names become "name.1", "name.2", ... as pandas does). */
void tl_builder_header(tl_builder *b, const char *const *names, size_t n);

/* Put a raw cell at column `col` of the current row.  A column beyond the header is
 * created on the fly with the name "Unnamed: <col>" (xlsx cells past the header). */
void tl_builder_cell(tl_builder *b, size_t col, tl_cell raw);

/*
 * The fast way for a reader that has typed its cells itself and knows its columns (the
 * CSV reader: the header's, no more): tl_builder_reserve() once it can guess how many
 * rows come (a guess; rows past it still fit), then per row tl_builder_row_room(), which
 * returns 0 past the bounds (too_big set), tl_builder_put() for each cell that is not
 * missing (col < the header's columns), and tl_builder_end_row(b, 1).
 */
void tl_builder_reserve(tl_builder *b, size_t rows);
int tl_builder_row_room(tl_builder *b);
static inline void tl_builder_put(tl_builder *b, size_t col, tl_cell c)
{
    b->t->cols[col].cells[b->t->nrows] = c;
}

/* Close the current row. Rows in which no cell is present (all missing) are kept when
 * keep_blank is 1 and dropped when 0 (pandas skips fully blank xlsx rows). */
void tl_builder_end_row(tl_builder *b, int keep_blank);

/* Infer the column types and return the table (the builder is then empty). */
tl_table *tl_builder_finish(tl_builder *b);

/* Discard a half-built table. */
void tl_builder_abort(tl_builder *b);

/* ---- text classification (SPEC §1) ---------------------------------------------- */

/* 1 when the whole text is one of the missing-value spellings ("", "NaN", "#N/A", ...). */
int tl_text_is_missing(const char *s, size_t n);

/* Parse a number the way pandas' CSV reader does.  Returns 1 and sets *out (and
 * *integral = 1 when the text is an integer such as "48" or "-3") on success. */
int tl_text_to_number(const char *s, size_t n, tl_cell *out);

/* 1 when s[0..n) is `word` (lower case) but for the case of ASCII letters. */
int tl_text_ieq(const char *s, size_t n, const char *word);

/* 1 and *out set for "True"/"TRUE"/"true" and "False"/"FALSE"/"false". */
int tl_text_to_bool(const char *s, size_t n, int *out);

#endif
