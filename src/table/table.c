/*
 * table.c - the table model, the builder readers use, and the typing rules of SPEC §1.
 */
#include "table/table.h"

#include "base/hash.h"

#include "base/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cells ---------------------------------------------------------------------- */

int tl_cell_is_number(const tl_cell *c)
{
    return c->kind == TL_INT || c->kind == TL_FLOAT || c->kind == TL_BOOL;
}

double tl_cell_number(const tl_cell *c)
{
    switch (c->kind) {
    case TL_INT: return (double)c->v.i;
    case TL_FLOAT: return c->v.f;
    case TL_BOOL: return c->v.b ? 1.0 : 0.0;
    default: return NAN;
    }
}

/* Rank of a kind in the key order: numbers, strings, missing. */
static int key_rank(const tl_cell *c)
{
    if (c->kind == TL_MISSING)
        return 2;
    return c->kind == TL_STR ? 1 : 0;
}

int tl_cell_key_cmp(const tl_cell *a, const tl_cell *b)
{
    int ra = key_rank(a), rb = key_rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra == 2)
        return 0;
    if (ra == 1)
        return strcmp(a->v.s, b->v.s);
    if (a->kind == TL_INT && b->kind == TL_INT)
        return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
    double x = tl_cell_number(a), y = tl_cell_number(b);
    return x < y ? -1 : x > y;
}

uint64_t tl_cell_key_hash(const tl_cell *c)
{
    if (c->kind == TL_STR)
        return tl_hash_bytes(c->v.s, tl_cell_len(c));
    if (c->kind == TL_MISSING)
        return 0x9e3779b97f4a7c15ULL;
    double x = tl_cell_number(c);
    if (x == 0 || isnan(x))
        x = 0; /* -0.0 == 0.0; a NaN (no reader makes one) equals every number */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return tl_hash_mix(bits);
}

/* ---- tables --------------------------------------------------------------------- */

tl_table *tl_table_new(void) { return tl_xcalloc(1, sizeof(tl_table)); }

static void drop_float_texts(tl_table *t)
{
    if (!t->float_texts)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->float_texts[i]);
    free(t->float_texts);
    t->float_texts = NULL;
}

void tl_table_free(tl_table *t)
{
    if (!t)
        return;
    drop_float_texts(t);
    for (size_t i = 0; i < t->ncols; i++)
        free(t->cols[i].cells);
    free(t->cols);
    free(t);
}

static size_t add_column(tl_table *t, const char *name, void *(*alloc)(size_t, size_t))
{
    drop_float_texts(t);
    t->cols = tl_xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
    tl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->tag = -1;
    c->cells = alloc(t->nrows ? t->nrows : 1, sizeof(tl_cell));
    return t->ncols++;
}

size_t tl_table_add_column(tl_table *t, const char *name) { return add_column(t, name, tl_xcalloc); }

size_t tl_table_add_full_column(tl_table *t, const char *name) { return add_column(t, name, tl_xcalloc_dense); }

long tl_table_find(const tl_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return (long)i;
    return -1;
}

const tl_column *tl_table_tagged(const tl_table *t, const char *tag, const char *name)
{
    size_t lt = strlen(tag);
    for (size_t c = 0; c < t->ncols; c++) {
        const char *n = t->cols[c].name;
        if (strncmp(n, tag, lt) == 0 && n[lt] == ':' && n[lt + 1] == ':' && strcmp(n + lt + 2, name) == 0)
            return &t->cols[c];
    }
    return NULL;
}

double tl_column_number_at(const tl_column *c, size_t row)
{
    if (!c || !tl_cell_is_number(&c->cells[row]))
        return NAN;
    return tl_cell_number(&c->cells[row]);
}

void tl_table_remove_column(tl_table *t, size_t i)
{
    drop_float_texts(t);
    free(t->cols[i].cells);
    memmove(&t->cols[i], &t->cols[i + 1], (t->ncols - i - 1) * sizeof *t->cols);
    t->ncols--;
}

void tl_table_take_rows(tl_table *t, const size_t *rows, size_t n)
{
    for (size_t c = 0; c < t->ncols; c++) {
        tl_cell *old = t->cols[c].cells;
        tl_cell *cells = tl_xmalloc_filled((n ? n : 1) * sizeof *cells);
        for (size_t r = 0; r < n; r++)
            cells[r] = old[rows[r]];
        free(old);
        t->cols[c].cells = cells;
    }
    t->nrows = n;
}

void tl_table_format_floats(tl_table *t)
{
    if (t->float_texts)
        return;
    /* Offsets live in a cell's 32-bit len: a column of texts must stay below 4 GiB. */
    if (t->nrows > (UINT32_MAX - TL_FLOAT_TEXT_SLACK) / TL_NUMFMT_MAX)
        return;
    t->float_texts = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *t->float_texts);
    for (size_t c = 0; c < t->ncols; c++) {
        tl_cell *cells = t->cols[c].cells;
        char *buf = NULL;
        size_t used = 0, cap = t->nrows * TL_NUMFMT_MAX + TL_FLOAT_TEXT_SLACK, mapped = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            if (cells[r].kind != TL_FLOAT)
                continue;
            if (!buf) /* room for every row, as if all were floats; untouched pages cost nothing */
                buf = tl_xmalloc(cap);
            tl_populate_ahead(buf, cap, used + TL_NUMFMT_MAX, &mapped);
            size_t n = tl_fmt_double(cells[r].v.f, buf + used + 1);
            buf[used] = (char)n;
            cells[r].len = (uint32_t)used;
            used += n + 1;
        }
        /* give back the room the non-float cells and short texts left unused */
        t->float_texts[c] = buf ? tl_xrealloc(buf, used + TL_FLOAT_TEXT_SLACK) : NULL;
    }
}

/* ---- text classification -------------------------------------------------------- */

/* pandas' default NA spellings (SPEC §1). */
static const char *const missing_texts[] = {
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
};

static const unsigned char missing_lens[] = {4, 8, 3, 7, 8, 4, 4, 6, 7, 4, 3, 2, 4, 3, 4, 3, 3, 4};

int tl_text_is_missing(const char *s, size_t n)
{
    if (n == 0)
        return 1;
    if (n > 8)
        return 0; /* longer than the longest spelling: the common case, decided at once */
    switch (s[0]) { /* every spelling starts with one of these: most numbers are out at once */
    case '#': case '<': case 'N': case 'n': break;
    case '1': /* 1.#IND 1.#QNAN */
        if (n < 6 || s[2] != '#')
            return 0;
        break;
    case '-': /* -1.#IND -1.#QNAN -NaN -nan */
        if (n < 4 || (s[3] != '#' && s[1] != 'N' && s[1] != 'n'))
            return 0;
        break;
    default: return 0;
    }
    for (size_t i = 0; i < sizeof missing_texts / sizeof *missing_texts; i++)
        if (missing_lens[i] == n && memcmp(missing_texts[i], s, n) == 0)
            return 1;
    return 0;
}

int tl_text_ieq(const char *s, size_t n, const char *word)
{
    size_t m = strlen(word);
    if (n != m)
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

/* 1 when the 8 bytes at p are all digits, and their value in *v (the digits combined in
 * pairs, then fours, then the eight, in three multiplications). */
static inline int eight_digits(const char *p, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    /* a digit is 0x30..0x39: its high nibble 3, and adding 6 leaves it below 0x40 */
    if ((x & 0xF0F0F0F0F0F0F0F0u) != 0x3030303030303030u ||
        ((x + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) != 0x3030303030303030u)
        return 0;
    x -= 0x3030303030303030u;                      /* byte k: digit k (first digit lowest) */
    x = x * 10 + (x >> 8);                         /* even bytes: pairs d0d1, d2d3, ... */
    x = ((x & 0x000000FF000000FFu) * (100 + (1000000ull << 32)) +
         ((x >> 16) & 0x000000FF000000FFu) * (1 + (10000ull << 32))) >> 32;
    *v = x;
    return 1;
#else
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9)
            return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
#endif
}

/* The digits from p: their value added to *mant, their count returned (p + count is the
 * first byte that is no digit, or e).  Eight at a time while eight remain. */
static inline size_t digit_run(const char *p, const char *e, uint64_t *mant)
{
    const char *q = p;
    uint64_t m = *mant, v;
    while (e - q >= 8 && eight_digits(q, &v)) {
        m = m * 100000000u + v;
        q += 8;
    }
    for (; q < e && (unsigned)(*q - '0') <= 9; q++)
        m = m * 10 + (unsigned)(*q - '0');
    *mant = m;
    return (size_t)(q - p);
}

/*
 * The common forms of a number, [-]digits[.digits] with at most 19 digits in all, so
 * that their value fits in 64 bits with leading zeros counted: 1 and *out set, 0 when the
 * text is not of that form or needs what tl_text_to_number does for the rest.  The same
 * results as that function's own path, which it stands in front of (a number with fewer
 * significant digits than digits has the same value, and its mantissa below 10^15 means
 * at most 15 of them).
 */
static inline int simple_number(const char *s, size_t n, tl_cell *out)
{
    const char *p = s, *e = s + n;
    int neg = *p == '-';
    p += neg;
    uint64_t mant = 0;
    size_t whole = digit_run(p, e, &mant), frac = 0;
    p += whole;
    if (p < e && *p == '.') {
        p++;
        frac = digit_run(p, e, &mant);
        p += frac;
        if (frac == 0)
            return 0;
    }
    if (p != e || whole + frac == 0 || whole + frac > 19)
        return 0;
    if (frac == 0) { /* no point: an integer */
        if (whole > 18)
            return 0;
        *out = tl_cell_int(neg ? -(int64_t)mant : (int64_t)mant);
        return 1;
    }
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    double d;
    if (mant < 1000000000000000u) /* exact in a double, and so is 10^frac: one rounding */
        d = (double)mant / pow10[frac];
    else if (!tl_decimal_to_double(mant, -(int)frac, &d))
        return 0;
    *out = tl_cell_float(neg ? -d : d);
    return 1;
}

int tl_text_to_number(const char *s, size_t n, tl_cell *out)
{
    if (n > 0 && simple_number(s, n, out))
        return 1;
    /*
     * One pass validates the text (pandas' grammar: [+-] digits [. digits] [e [+-]
     * digits], or inf/infinity) and gathers its significant digits, so that most numbers
     * are converted without strtod: an integer of up to 18 digits exactly, and a decimal
     * whose digits fit in 15 (so the integer they make is exact in a double) scaled by an
     * exact power of ten up to 1e22, which one correctly rounded multiplication or
     * division turns into the nearest double (the classic fast path of Clinger).  Other
     * decimals whose significant digits all fit in 19 go to tl_decimal_to_double
     * (Eisel-Lemire), the repr() of most doubles among them, and so do integers of 19
     * digits beyond int64.  Everything else (more than 19 significant digits, and what
     * tl_decimal_to_double declines, such as subnormals) goes to strtod.
     */
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0;
    if (n == 0)
        return 0;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i < n && (s[i] == 'i' || s[i] == 'I')) {
        if (tl_text_ieq(s + i, n - i, "inf") || tl_text_ieq(s + i, n - i, "infinity")) {
            *out = tl_cell_float(neg ? -INFINITY : INFINITY);
            return 1;
        }
        return 0;
    }
    uint64_t mant = 0;       /* the first 19 significant digits */
    int sig = 0, many = 0;   /* how many of them; more were dropped */
    int scale = 0;           /* value = mant * 10^scale (before the exponent) */
    size_t digits = 0;
    int integral = 1;
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9)
            break;
        digits++;
        if (sig < 19 && (sig || d))
            mant = mant * 10 + d, sig++;
        else if (sig)
            many = 1, scale++;
    }
    if (i < n && s[i] == '.') {
        integral = 0;
        for (i++; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9)
                break;
            digits++;
            if (sig < 19 && (sig || d))
                mant = mant * 10 + d, sig++, scale--;
            else if (sig)
                many = 1;
            else
                scale--; /* a zero before the first significant digit */
        }
    }
    if (digits == 0)
        return 0;
    int exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        integral = 0;
        int exp_neg = 0;
        if (++i < n && (s[i] == '+' || s[i] == '-'))
            exp_neg = s[i++] == '-';
        size_t exp_digits = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, exp_digits++)
            if (exp < 100000)
                exp = exp * 10 + (s[i] - '0');
        if (exp_digits == 0)
            return 0;
        if (exp_neg)
            exp = -exp;
    }
    if (i != n)
        return 0;

    if (integral && !many && sig <= 18) {
        *out = tl_cell_int(neg ? -(int64_t)mant : (int64_t)mant);
        return 1;
    }
    int e10 = scale + exp;
    if (!integral && !many && sig <= 15 && e10 >= -22 && e10 <= 22) {
        double d = (double)mant;
        d = e10 < 0 ? d / pow10[-e10] : d * pow10[e10];
        *out = tl_cell_float(neg ? -d : d);
        return 1;
    }
    double d;
    if (!integral && !many && tl_decimal_to_double(mant, e10, &d)) {
        *out = tl_cell_float(neg ? -d : d);
        return 1;
    }
    char small[64];
    char *tmp = n < sizeof small ? small : tl_xmalloc(n + 1);
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (integral) {
        errno = 0;
        long long v = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            *out = tl_cell_int(v);
            if (tmp != small)
                free(tmp);
            return 1;
        }
        /* Too large for int64: pandas falls back to floating point too. */
    }
    if (integral && !many && tl_decimal_to_double(mant, e10, &d))
        d = neg ? -d : d; /* 19 digits, beyond int64 */
    else
        d = strtod(tmp, NULL);
    *out = tl_cell_float(d);
    if (tmp != small)
        free(tmp);
    return 1;
}

int tl_text_to_bool(const char *s, size_t n, int *out)
{
    if ((n == 4 && (!memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4) || !memcmp(s, "true", 4)))) {
        *out = 1;
        return 1;
    }
    if ((n == 5 && (!memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5) || !memcmp(s, "false", 5)))) {
        *out = 0;
        return 1;
    }
    return 0;
}

/* ---- builder -------------------------------------------------------------------- */

void tl_builder_init(tl_builder *b, tl_arena *arena)
{
    memset(b, 0, sizeof *b);
    b->t = tl_table_new();
    b->arena = arena;
}

static const char *unnamed(tl_arena *a, size_t col) { return tl_arena_printf(a, "Unnamed: %zu", col); }

/*
 * Room for `rows` rows in every column.  Returns 0, and marks the builder too_big, when
 * that would pass TL_TABLE_MAX_CELLS: a few KiB of input (a wide header, then many short
 * lines) could otherwise ask for hundreds of GiB of cells.
 */
static int ensure_rows(tl_builder *b, size_t rows)
{
    if (b->too_big)
        return 0;
    if (rows <= b->cap)
        return 1;
    size_t ncols = b->t->ncols ? b->t->ncols : 1;
    if (rows > TL_TABLE_MAX_CELLS / ncols) {
        b->too_big = 1;
        return 0;
    }
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < rows)
        cap *= 2;
    if (cap > TL_TABLE_MAX_CELLS / ncols)
        cap = TL_TABLE_MAX_CELLS / ncols; /* near the bound: up to it, and no further */
    for (size_t c = 0; c < b->t->ncols; c++) {
        tl_column *col = &b->t->cols[c];
        col->cells = tl_xrealloc_mapped(col->cells, b->cap * sizeof(tl_cell), cap * sizeof(tl_cell));
        tl_populate(col->cells + b->cap, (cap - b->cap) * sizeof(tl_cell)); /* zeroed next */
        memset(col->cells + b->cap, 0, (cap - b->cap) * sizeof(tl_cell));
    }
    b->cap = cap;
    return 1;
}

void tl_builder_reserve(tl_builder *b, size_t rows)
{
    size_t ncols = b->t->ncols ? b->t->ncols : 1;
    if (rows > TL_TABLE_MAX_CELLS / ncols)
        rows = TL_TABLE_MAX_CELLS / ncols; /* a guess is no reason to refuse */
    if (rows > b->cap && !b->too_big) {
        size_t cap = b->cap; /* exactly the guess: no doubling past it */
        b->cap = rows;
        /* fresh zeroed blocks and the few rows so far copied over: a large block comes
         * zeroed from the system, where growing it in place would clear it once more */
        for (size_t c = 0; c < b->t->ncols; c++) {
            tl_column *col = &b->t->cols[c];
            tl_cell *cells = tl_xcalloc(rows, sizeof(tl_cell));
            if (cap)
                memcpy(cells, col->cells, cap * sizeof(tl_cell));
            free(col->cells);
            col->cells = cells;
        }
    }
}

int tl_builder_row_room(tl_builder *b) { return ensure_rows(b, b->t->nrows + 1); }

/* Returns 0, and marks the builder too_big, past the bounds on columns and cells. */
static int builder_add_column(tl_builder *b, const char *name)
{
    tl_table *t = b->t;
    size_t rows = b->cap > t->nrows ? b->cap : t->nrows + 1;
    if (b->too_big || t->ncols >= TL_TABLE_MAX_COLS || t->ncols + 1 > TL_TABLE_MAX_CELLS / rows) {
        b->too_big = 1;
        return 0;
    }
    /* doubling: a header of many thousand columns must not cost a copy per column */
    TL_GROW(t->cols, b->colcap, t->ncols + 1);
    tl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->tag = -1;
    c->cells = tl_xcalloc(b->cap ? b->cap : 1, sizeof(tl_cell));
    t->ncols++;
    return 1;
}

/*
 * Column names to numbers (a use count while a header is made unique, or a column
 * index) in a tl_strmap, because a header may hold tens of thousands of names, and a
 * linear search per name (or per candidate name) makes a hostile header take hours.
 */
static void map_free(tl_name_map *m)
{
    if (m) {
        tl_strmap_clear(m);
        free(m);
    }
}

void tl_name_index_init(tl_name_index *ix, const tl_table *t)
{
    ix->map = tl_xcalloc(1, sizeof *ix->map);
    for (size_t c = 0; c < t->ncols; c++) {
        tl_strmap_slot *s = tl_strmap_get(ix->map, t->cols[c].name);
        if (s->value == 0)
            s->value = c + 1; /* the first of equal names, as tl_table_find */
    }
}

long tl_name_index_find(const tl_name_index *ix, const char *name)
{
    const tl_strmap_slot *s = tl_strmap_find(ix->map, name);
    return s ? (long)s->value - 1 : -1;
}

void tl_name_index_free(tl_name_index *ix)
{
    map_free(ix->map);
    ix->map = NULL;
}

/*
 * A new column named `name` ("" or NULL: "Unnamed: <its index>"), made unique as pandas'
 * dedup_names does, step for step: a name seen k times before becomes "name.k", and that
 * candidate is itself checked the same way, so "a,a.1,a" reads as a, a.1, a.1.1.  The
 * counts live as long as the builder, so that the "Unnamed: N" columns made for cells
 * past the header are made unique against the header too.
 */
static int builder_add_unique(tl_builder *b, const char *name)
{
    if (!b->names)
        b->names = tl_xcalloc(1, sizeof *b->names);
    const char *col = name && *name ? tl_arena_strdup(b->arena, name) : unnamed(b->arena, b->t->ncols);
    tl_strmap_slot *slot = tl_strmap_get(b->names, col);
    size_t cur = slot->value;
    while (cur > 0) {
        slot->value = cur + 1;
        col = tl_arena_printf(b->arena, "%s.%zu", col, cur);
        slot = tl_strmap_get(b->names, col);
        cur = slot->value;
    }
    slot->value = cur + 1;
    return builder_add_column(b, col);
}

void tl_builder_header(tl_builder *b, const char *const *names, size_t n)
{
    if (n > TL_TABLE_MAX_COLS) {
        b->too_big = 1; /* decided before a million columns are made */
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!builder_add_unique(b, names[i]))
            break;
    b->nhead = b->t->ncols;
}

void tl_builder_cell(tl_builder *b, size_t col, tl_cell raw)
{
    tl_table *t = b->t;
    if (!ensure_rows(b, t->nrows + 1))
        return;
    while (col >= t->ncols)
        if (!builder_add_unique(b, NULL))
            return;
    b->in_row = 1;
    if (raw.kind == TL_STR && tl_text_is_missing(raw.v.s, tl_cell_len(&raw)))
        raw = tl_cell_missing();
    if (raw.kind != TL_MISSING)
        b->row_has_value = 1;
    t->cols[col].cells[t->nrows] = raw;
}

void tl_builder_end_row(tl_builder *b, int keep_blank)
{
    tl_table *t = b->t;
    if (!ensure_rows(b, t->nrows + 1))
        return;
    if (b->row_has_value || keep_blank) {
        t->nrows++;
    } else {
        for (size_t c = 0; c < t->ncols; c++)
            t->cols[c].cells[t->nrows] = tl_cell_missing();
    }
    b->in_row = 0;
    b->row_has_value = 0;
}

/* Decide one column's type and convert its cells (SPEC §1, "Column types"). */
static void infer_column(tl_column *col, size_t nrows, tl_cell *tmp)
{
    /* Numeric?  Each text is parsed once, into tmp, and kept only if all of them parse.
     * A column its reader typed already (numbers and missing cells only) is only looked
     * at, and rewritten only when its integers must become floats. */
    int all_num = 1, all_integral = 1, any_missing = 0, any_int = 0, any_text = 0;
    for (size_t r = 0; r < nrows && all_num; r++) {
        const tl_cell *c = &col->cells[r];
        switch (c->kind) {
        case TL_MISSING: any_missing = 1; break;
        case TL_INT: any_int = 1; break;
        case TL_FLOAT: all_integral = 0; break;
        case TL_BOOL: all_num = 0; break;
        case TL_STR:
            any_text = 1;
            if (!tl_text_to_number(c->v.s, tl_cell_len(c), &tmp[r]))
                all_num = 0;
            else if (tmp[r].kind != TL_INT)
                all_integral = 0;
            break;
        }
    }
    if (all_num) {
        /* All missing is numeric too: pandas reads an empty column as float NaN. */
        int as_int = all_integral && !any_missing;
        col->type = TL_COL_NUM;
        if (!any_text && (as_int || !any_int))
            return;
        for (size_t r = 0; r < nrows; r++) {
            tl_cell v = col->cells[r].kind == TL_STR ? tmp[r] : col->cells[r];
            col->cells[r] = v.kind == TL_INT && !as_int ? tl_cell_float((double)v.v.i) : v;
        }
        return;
    }
    int all_bool = 1, bv;
    for (size_t r = 0; r < nrows && all_bool; r++) {
        const tl_cell *c = &col->cells[r];
        all_bool = c->kind == TL_MISSING || c->kind == TL_BOOL ||
                   (c->kind == TL_STR && tl_text_to_bool(c->v.s, tl_cell_len(c), &bv));
    }
    if (all_bool) {
        col->type = TL_COL_BOOL;
        for (size_t r = 0; r < nrows; r++) {
            tl_cell *c = &col->cells[r];
            if (c->kind == TL_STR && tl_text_to_bool(c->v.s, tl_cell_len(c), &bv))
                *c = tl_cell_bool(bv);
        }
    } else {
        col->type = TL_COL_STR;
    }
}

tl_table *tl_builder_finish(tl_builder *b)
{
    tl_table *t = b->t;
    if (b->in_row)
        tl_builder_end_row(b, 0);
    tl_cell *tmp = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *tmp);
    for (size_t c = 0; c < t->ncols; c++)
        infer_column(&t->cols[c], t->nrows, tmp);
    free(tmp);
    b->t = NULL;
    map_free(b->names);
    b->names = NULL;
    return t;
}

void tl_builder_abort(tl_builder *b)
{
    tl_table_free(b->t);
    b->t = NULL;
    map_free(b->names);
    b->names = NULL;
}
