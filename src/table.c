/*
 * table.c - the table model, the builder readers use, and the typing rules of SPEC §1.
 */
#include "table.h"

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

/* ---- tables --------------------------------------------------------------------- */

tl_table *tl_table_new(void) { return tl_xcalloc(1, sizeof(tl_table)); }

void tl_table_free(tl_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->cols[i].cells);
    free(t->cols);
    free(t);
}

size_t tl_table_add_column(tl_table *t, const char *name)
{
    t->cols = tl_xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
    tl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->tag = -1;
    c->cells = tl_xcalloc(t->nrows ? t->nrows : 1, sizeof(tl_cell));
    return t->ncols++;
}

long tl_table_find(const tl_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return (long)i;
    return -1;
}

void tl_table_remove_column(tl_table *t, size_t i)
{
    free(t->cols[i].cells);
    memmove(&t->cols[i], &t->cols[i + 1], (t->ncols - i - 1) * sizeof *t->cols);
    t->ncols--;
}

void tl_table_take_rows(tl_table *t, const size_t *rows, size_t n)
{
    for (size_t c = 0; c < t->ncols; c++) {
        tl_cell *old = t->cols[c].cells;
        tl_cell *cells = tl_xmalloc((n ? n : 1) * sizeof *cells);
        for (size_t r = 0; r < n; r++)
            cells[r] = old[rows[r]];
        free(old);
        t->cols[c].cells = cells;
    }
    t->nrows = n;
}

/* ---- text classification -------------------------------------------------------- */

/* pandas' default NA spellings (SPEC §1). */
static const char *const missing_texts[] = {
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
};

int tl_text_is_missing(const char *s, size_t n)
{
    if (n == 0)
        return 1;
    if (n > 8)
        return 0; /* longer than the longest spelling: the common case, decided at once */
    for (size_t i = 0; i < sizeof missing_texts / sizeof *missing_texts; i++)
        if (strlen(missing_texts[i]) == n && memcmp(missing_texts[i], s, n) == 0)
            return 1;
    return 0;
}

static int ieq(const char *s, size_t n, const char *word)
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

int tl_text_to_number(const char *s, size_t n, tl_cell *out)
{
    size_t i = 0;
    int neg = 0;
    if (n == 0)
        return 0;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (ieq(s + i, n - i, "inf") || ieq(s + i, n - i, "infinity")) {
        *out = tl_cell_float(neg ? -INFINITY : INFINITY);
        return 1;
    }
    size_t int_digits = 0, frac_digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, int_digits++;
    int integral = 1;
    if (i < n && s[i] == '.') {
        integral = 0;
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, frac_digits++;
    }
    if (int_digits + frac_digits == 0)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        integral = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, exp_digits++;
        if (exp_digits == 0)
            return 0;
    }
    if (i != n)
        return 0;

    /* The text is a valid decimal; strtod needs a NUL-terminated copy. */
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
    *out = tl_cell_float(strtod(tmp, NULL));
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

static void ensure_rows(tl_builder *b, size_t rows)
{
    if (rows <= b->cap)
        return;
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < rows)
        cap *= 2;
    for (size_t c = 0; c < b->t->ncols; c++) {
        tl_column *col = &b->t->cols[c];
        col->cells = tl_xrealloc(col->cells, cap * sizeof(tl_cell));
        memset(col->cells + b->cap, 0, (cap - b->cap) * sizeof(tl_cell));
    }
    b->cap = cap;
}

static size_t builder_add_column(tl_builder *b, const char *name)
{
    tl_table *t = b->t;
    t->cols = tl_xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
    tl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->tag = -1;
    c->cells = tl_xcalloc(b->cap ? b->cap : 1, sizeof(tl_cell));
    return t->ncols++;
}

void tl_builder_header(tl_builder *b, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (!name || !*name) {
            builder_add_column(b, unnamed(b->arena, i));
            continue;
        }
        /* pandas mangles repeated names: a, a.1, a.2 ... (skipping names already taken). */
        const char *use = tl_arena_strdup(b->arena, name);
        for (unsigned k = 1; tl_table_find(b->t, use) >= 0; k++)
            use = tl_arena_printf(b->arena, "%s.%u", name, k);
        builder_add_column(b, use);
    }
    b->nhead = b->t->ncols;
}

void tl_builder_cell(tl_builder *b, size_t col, tl_cell raw)
{
    tl_table *t = b->t;
    ensure_rows(b, t->nrows + 1);
    while (col >= t->ncols)
        builder_add_column(b, unnamed(b->arena, t->ncols));
    b->in_row = 1;
    if (raw.kind == TL_STR && tl_text_is_missing(raw.v.s, strlen(raw.v.s)))
        raw = tl_cell_missing();
    if (raw.kind != TL_MISSING)
        b->row_has_value = 1;
    t->cols[col].cells[t->nrows] = raw;
}

void tl_builder_end_row(tl_builder *b, int keep_blank)
{
    tl_table *t = b->t;
    ensure_rows(b, t->nrows + 1);
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
static void infer_column(tl_column *col, size_t nrows)
{
    int all_num = 1, all_bool = 1, all_integral = 1, any_missing = 0;
    for (size_t r = 0; r < nrows && (all_num || all_bool); r++) {
        tl_cell *c = &col->cells[r];
        switch (c->kind) {
        case TL_MISSING: any_missing = 1; break;
        case TL_INT: all_bool = 0; break;
        case TL_FLOAT: all_bool = 0; all_integral = 0; break;
        case TL_BOOL: all_num = 0; break;
        case TL_STR: {
            size_t n = strlen(c->v.s);
            tl_cell num;
            int bv;
            if (all_num) {
                if (tl_text_to_number(c->v.s, n, &num)) {
                    if (num.kind != TL_INT)
                        all_integral = 0;
                } else {
                    all_num = 0;
                }
            }
            if (all_bool && !tl_text_to_bool(c->v.s, n, &bv))
                all_bool = 0;
            break;
        }
        }
    }
    if (all_num) {
        /* All missing is numeric too: pandas reads an empty column as float NaN. */
        int as_int = all_integral && !any_missing;
        col->type = TL_COL_NUM;
        for (size_t r = 0; r < nrows; r++) {
            tl_cell *c = &col->cells[r];
            if (c->kind == TL_STR)
                tl_text_to_number(c->v.s, strlen(c->v.s), c);
            if (c->kind == TL_INT && !as_int)
                *c = tl_cell_float((double)c->v.i);
        }
    } else if (all_bool) {
        col->type = TL_COL_BOOL;
        for (size_t r = 0; r < nrows; r++) {
            tl_cell *c = &col->cells[r];
            int bv;
            if (c->kind == TL_STR && tl_text_to_bool(c->v.s, strlen(c->v.s), &bv))
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
    for (size_t c = 0; c < t->ncols; c++)
        infer_column(&t->cols[c], t->nrows);
    b->t = NULL;
    return t;
}

void tl_builder_abort(tl_builder *b)
{
    tl_table_free(b->t);
    b->t = NULL;
}
