/*
 * fuzz_csv.c - the CSV reader on arbitrary bytes.
 *
 * Any input either parses into a well-formed table or fails with a message naming the
 * file and line.  A table that parsed is then written back as CSV and read again: what
 * the writer produces must always be readable, into a table of the same shape, the
 * same names and the same cells (the reader and the writer agree on quoting, line ends
 * and the missing-value spellings).  The portable block scan reads every input too, and
 * must give the same table or the same error as the SIMD one (csv_scan.h); so must the
 * parse through a small window, as files are read, cut at a place the input chooses.
 */
#include "fuzz.h"

#include "read/csv_read.h"
#include "write/csv_write.h"

/* The same cell, as far as CSV text can tell (numbers compare by value). */
static int csvfz_same_cell(const tl_cell *a, const tl_cell *b)
{
    if (a->kind == TL_STR || b->kind == TL_STR)
        return a->kind == b->kind && strcmp(a->v.s, b->v.s) == 0;
    if (a->kind == TL_MISSING || b->kind == TL_MISSING)
        return a->kind == b->kind;
    if (a->kind == TL_BOOL || b->kind == TL_BOOL)
        return a->kind == b->kind && a->v.b == b->v.b;
    double x = tl_cell_number(a), y = tl_cell_number(b);
    return x == y || (x != x && y != y);
}

static void csvfz_round_trip(const tl_table *t)
{
    tl_buf text = {0};
    tl_arena arena;
    tl_error err = {0};

    /* One ambiguity of the format itself, not of the code: a first column name that
     * starts with U+FEFF (a BOM after blank lines is text, as in pandas) is written at
     * the start of the file, where every reader takes it for a byte-order mark; and so
     * is one that starts with the bytes of a UTF-16 byte-order mark (FF FE or FE FF: not
     * UTF-8, but carried through), which the reader then refuses as UTF-16 text. */
    const char *first = t->ncols > 0 ? t->cols[0].name : "";
    if (strncmp(first, "\xEF\xBB\xBF", 3) == 0 || strncmp(first, "\xFF\xFE", 2) == 0 ||
        strncmp(first, "\xFE\xFF", 2) == 0)
        return;
    tl_csv_format(t, &text);
    tl_arena_init(&arena);
    tl_table *back = tl_csv_parse(text.data ? text.data : "", text.len, "round-trip.csv", &arena, &err);
    if (!back)
        fprintf(stderr, "re-reading the written CSV failed: %s\n", err.msg);
    TL_FUZZ_CHECK(back != NULL);
    tl_fuzz_check_table(back, 1);
    TL_FUZZ_CHECK(back->ncols == t->ncols);
    /* A table without columns is written as one empty line, which reads as no rows. */
    TL_FUZZ_CHECK(back->nrows == (t->ncols ? t->nrows : 0));
    for (size_t c = 0; c < t->ncols; c++) {
        TL_FUZZ_CHECK(strcmp(back->cols[c].name, t->cols[c].name) == 0);
        TL_FUZZ_CHECK(back->cols[c].type == t->cols[c].type);
        for (size_t r = 0; r < t->nrows; r++)
            TL_FUZZ_CHECK(csvfz_same_cell(&back->cols[c].cells[r], &t->cols[c].cells[r]));
    }
    tl_table_free(back);
    tl_arena_free(&arena);
    tl_buf_free(&text);
}

/* The same table, cell for cell and byte for byte. */
static void csvfz_same_table(const tl_table *a, const tl_table *b)
{
    TL_FUZZ_CHECK(a->ncols == b->ncols && a->nrows == b->nrows);
    for (size_t c = 0; c < a->ncols; c++) {
        TL_FUZZ_CHECK(strcmp(a->cols[c].name, b->cols[c].name) == 0);
        TL_FUZZ_CHECK(a->cols[c].type == b->cols[c].type);
        for (size_t r = 0; r < a->nrows; r++) {
            const tl_cell *x = &a->cols[c].cells[r], *y = &b->cols[c].cells[r];
            TL_FUZZ_CHECK(x->kind == y->kind);
            if (x->kind == TL_STR)
                TL_FUZZ_CHECK(tl_cell_len(x) == tl_cell_len(y) && memcmp(x->v.s, y->v.s, tl_cell_len(x)) == 0);
            else if (x->kind != TL_MISSING)
                TL_FUZZ_CHECK(memcmp(&x->v, &y->v, sizeof x->v) == 0);
        }
    }
}

/* The portable scan, and a window of 4 to 67 bytes (the input's last byte says which),
 * against the SIMD whole-text parse that tl_csv_parse took. */
static void csvfz_others_agree(const uint8_t *data, size_t size, const tl_table *t, const tl_error *err,
                               int windowed)
{
    tl_arena arena;
    tl_error perr = {0};
    tl_arena_init(&arena);
    tl_table *p = windowed ? tl_csv_parse_window((const char *)data, size, 4 + (size ? data[size - 1] % 64u : 0),
                                                 "fuzz.csv", &arena, &perr, TL_CSV_SIMD_BEST)
                           : tl_csv_parse_simd((const char *)data, size, "fuzz.csv", &arena, &perr, TL_CSV_SIMD_PORTABLE);
    TL_FUZZ_CHECK((p != NULL) == (t != NULL));
    if (p)
        csvfz_same_table(t, p);
    else
        TL_FUZZ_CHECK(strcmp(perr.msg, err->msg) == 0);
    tl_table_free(p);
    tl_arena_free(&arena);
}

int tl_fuzz_csv(const uint8_t *data, size_t size)
{
    tl_arena arena;
    tl_error err = {0};

    tl_arena_init(&arena);
    tl_table *t = tl_csv_parse((const char *)data, size, "fuzz.csv", &arena, &err);
    csvfz_others_agree(data, size, t, &err, 0);
    csvfz_others_agree(data, size, t, &err, 1);
    if (t) {
        TL_FUZZ_CHECK(!err.set);
        tl_fuzz_check_table(t, 1);
        csvfz_round_trip(t);
        tl_table_free(t);
    } else {
        /* Every failure says where: "fuzz.csv line N: ...", or that the whole text is
         * UTF-16 (told before any line is read). */
        TL_FUZZ_CHECK(err.set);
        TL_FUZZ_CHECK(strncmp(err.msg, "fuzz.csv line ", 14) == 0 ||
                      strncmp(err.msg, "fuzz.csv: UTF-16 text; ", 23) == 0);
        TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
    }
    tl_arena_free(&arena);
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_csv)
