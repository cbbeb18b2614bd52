/*
 * test_csv_scan.c - the CSV reader's block scans and its typing as it reads.
 *
 * Every scan (portable, SSE2, AVX2: those this CPU and build have) must flag the same
 * bytes as a plain loop written here, and the reader must give the same table or the same
 * error through each of them, on texts whose quotes, delimiters and line ends fall at every
 * offset of a 64-byte block.  Numbers read on the fast path must be strtod's and strtoll's.
 * A column that holds numbers before its first text gets the numbers' texts back as written.
 */
#include "testutil.h"

#include "read/csv_read.h"

#include <errno.h>
#include <math.h>

static const tl_csv_simd levels[] = {TL_CSV_SIMD_PORTABLE, TL_CSV_SIMD_SSE2, TL_CSV_SIMD_AVX2, TL_CSV_SIMD_BEST};
#define NLEVELS (sizeof levels / sizeof *levels)

static uint64_t rng_state;
static uint64_t rng(void) { return tt_rng(&rng_state); }

/* ---- the masks ---------------------------------------------------------------------- */

static void reference_masks(const unsigned char *s, tl_csv_masks *m)
{
    m->plain = m->quoted = 0;
    for (int i = 0; i < TL_CSV_BLOCK; i++) {
        unsigned char c = s[i];
        if (c == ',' || c == '\n' || c == '\r' || c == 0)
            m->plain |= (uint64_t)1 << i;
        if (c == '"' || c == '\n' || c == 0)
            m->quoted |= (uint64_t)1 << i;
    }
}

static void test_masks_agree(void **state)
{
    (void)state;
    static const unsigned char pick[] = {',', '"', '\n', '\r', 0, 'a', '1', 0x80, 0xff, ' ', 0x2c ^ 0x80, '"' + 1};
    unsigned char block[TL_CSV_BLOCK + 7];
    rng_state = 42;
    for (int iter = 0; iter < 20000; iter++) {
        /* any byte, or mostly special ones, at an odd alignment too */
        unsigned char *s = block + iter % 8;
        for (int i = 0; i < TL_CSV_BLOCK; i++)
            s[i] = iter % 2 ? (unsigned char)rng() : pick[rng() % sizeof pick];
        tl_csv_masks want, got;
        reference_masks(s, &want);
        for (size_t l = 0; l < NLEVELS; l++) {
            tl_csv_mask_fn fn = tl_csv_mask_fn_for(levels[l], NULL);
            fn(s, &got);
            assert_true(got.plain == want.plain);
            assert_true(got.quoted == want.quoted);
        }
    }
}

/* Asking for a level gets it, or the best below it (never a better one). */
static void test_levels_fall_back(void **state)
{
    (void)state;
    tl_csv_simd used;
    tl_csv_mask_fn_for(TL_CSV_SIMD_PORTABLE, &used);
    assert_int_equal(used, TL_CSV_SIMD_PORTABLE);
    tl_csv_mask_fn_for(TL_CSV_SIMD_SSE2, &used);
    assert_true(used == TL_CSV_SIMD_SSE2 || used == TL_CSV_SIMD_PORTABLE);
    tl_csv_mask_fn_for(TL_CSV_SIMD_BEST, &used);
    assert_true(used != TL_CSV_SIMD_BEST);
#ifdef TL_NO_SIMD
    assert_int_equal(used, TL_CSV_SIMD_PORTABLE);
#endif
    assert_string_equal(tl_csv_simd_name(used), used == TL_CSV_SIMD_AVX2 ? "avx2" : used == TL_CSV_SIMD_SSE2 ? "sse2" : "portable");
}

/* ---- whole texts through every level -------------------------------------------------- */

static void assert_same_cell(const tl_cell *a, const tl_cell *b)
{
    assert_int_equal(a->kind, b->kind);
    switch (a->kind) {
    case TL_INT: assert_true(a->v.i == b->v.i); break;
    case TL_FLOAT: assert_memory_equal(&a->v.f, &b->v.f, sizeof a->v.f); break;
    case TL_BOOL: assert_int_equal(a->v.b, b->v.b); break;
    case TL_STR:
        assert_int_equal(tl_cell_len(a), tl_cell_len(b));
        assert_memory_equal(a->v.s, b->v.s, tl_cell_len(a));
        assert_int_equal(a->v.s[tl_cell_len(a)], '\0');
        break;
    default: break;
    }
}

static void assert_same_table(const tl_table *a, const tl_table *b)
{
    assert_int_equal(b->ncols, a->ncols);
    assert_int_equal(b->nrows, a->nrows);
    for (size_t c = 0; c < a->ncols; c++) {
        assert_string_equal(b->cols[c].name, a->cols[c].name);
        assert_int_equal(b->cols[c].type, a->cols[c].type);
        for (size_t r = 0; r < a->nrows; r++)
            assert_same_cell(&b->cols[c].cells[r], &a->cols[c].cells[r]);
    }
}

/* The same table (or the same error) from t as the reference ref. */
static void assert_same_outcome(const tl_table *ref, const tl_error *ref_err, const tl_table *t, const tl_error *err)
{
    assert_int_equal(t != NULL, ref != NULL);
    if (ref)
        assert_same_table(ref, t);
    else
        assert_string_equal(err->msg, ref_err->msg);
}

/* Windows that cut a text's records, fields, quotes and line ends at every place. */
static const size_t windows[] = {4, 5, 9, 17, 64, 200};
#define NWINDOWS (sizeof windows / sizeof *windows)

/* Parse `text` at every level, and through every window; all must agree with the
 * portable whole-text parse.  Returns the number of rows (or -1 for an error) for the
 * caller's own checks. */
static long parse_all_levels(const char *text, size_t n)
{
    tl_arena arena;
    tl_arena_init(&arena);
    tl_table *t[NLEVELS + NWINDOWS];
    tl_error err[NLEVELS + NWINDOWS];
    memset(err, 0, sizeof err);
    for (size_t l = 0; l < NLEVELS; l++)
        t[l] = tl_csv_parse_simd(text, n, "g.csv", &arena, &err[l], levels[l]);
    for (size_t w = 0; w < NWINDOWS; w++)
        t[NLEVELS + w] = tl_csv_parse_window(text, n, windows[w], "g.csv", &arena, &err[NLEVELS + w],
                                             levels[w % NLEVELS]);
    long rows = t[0] ? (long)t[0]->nrows : -1;
    for (size_t l = 1; l < NLEVELS + NWINDOWS; l++)
        assert_same_outcome(t[0], &err[0], t[l], &err[l]);
    for (size_t l = 0; l < NLEVELS + NWINDOWS; l++)
        tl_table_free(t[l]);
    tl_arena_free(&arena);
    return rows;
}

/* One random field: plain text, numbers, or a quoted field with the awkward bytes. */
static void gen_field(tl_buf *b)
{
    static const char *const plain[] = {"", "a", "1", "-2.5", "True", "NaN", "x y", "ab\"c", "12345678901234567",
                                        "0.21668865872320617", "1e5", "inf", "\xc3\xa9", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    static const char *const inner[] = {",", "\"\"", "\n", "\r", "\r\n", "a", "7", " ", "."};
    if (rng() % 3) {
        tl_buf_adds(b, plain[rng() % (sizeof plain / sizeof *plain)]);
        return;
    }
    tl_buf_addc(b, '"');
    for (int k = (int)(rng() % 12); k > 0; k--)
        tl_buf_adds(b, inner[rng() % (sizeof inner / sizeof *inner)]);
    tl_buf_addc(b, '"');
    if (rng() % 8 == 0)
        tl_buf_adds(b, "tail"); /* text after the closing quote */
}

static void test_generated_texts_agree(void **state)
{
    (void)state;
    static const char *const ends[] = {"\n", "\r\n", "\r", "\n\n", "\r\r\n"};
    rng_state = 7;
    tl_buf b = {0};
    size_t ok = 0, failed = 0;
    for (int iter = 0; iter < 3000; iter++) {
        tl_buf_clear(&b);
        size_t cols = 1 + rng() % 5;
        /* a first column of every width shifts everything after it through the block */
        size_t pad = (size_t)iter % 131;
        tl_buf_adds(&b, "h");
        for (size_t c = 1; c < cols; c++)
            tl_buf_printf(&b, ",c%zu", c);
        tl_buf_adds(&b, "\n");
        for (size_t r = 0, rows = 1 + rng() % 12; r < rows; r++) {
            for (size_t i = 0; i < pad; i++)
                tl_buf_addc(&b, (char)('a' + i % 26));
            for (size_t c = 1; c < cols; c++) {
                tl_buf_addc(&b, ',');
                gen_field(&b);
            }
            tl_buf_adds(&b, ends[rng() % (sizeof ends / sizeof *ends)]);
        }
        if (iter % 50 == 0)
            tl_buf_add(&b, "\"open", 5); /* a quoted field never closed */
        if (iter % 77 == 0)
            tl_buf_add(&b, "a,\0b\n", 5); /* a NUL byte */
        if (iter % 61 == 0) /* more fields than the header, counted across windows */
            tl_buf_adds(&b, "1,2,3,4,5,6,7,8,9,10,11,12,\"1\r\n3\"\n");
        long rows = parse_all_levels(b.data, b.len);
        if (rows < 0)
            failed++;
        else
            ok++;
    }
    /* both kinds of outcome were exercised */
    assert_true(ok > 1000);
    assert_true(failed >= 60);
    tl_buf_free(&b);
}

/* Quotes, CR and LF at every offset of a block, and exactly where they are read. */
static void test_specials_at_every_offset(void **state)
{
    (void)state;
    tl_buf b = {0};
    for (size_t pad = 0; pad < 140; pad++) {
        tl_buf_clear(&b);
        tl_buf_adds(&b, "k,v\n");
        for (size_t i = 0; i < pad; i++)
            tl_buf_addc(&b, 'p');
        tl_buf_adds(&b, ",\"q,\"\"\r\n\"\r\n");
        for (size_t i = 0; i < pad % 67; i++)
            tl_buf_addc(&b, 'z');
        tl_buf_adds(&b, ",7\r");
        for (size_t l = 0; l < NLEVELS; l++) {
            tl_arena arena;
            tl_error err = {0};
            tl_arena_init(&arena);
            tl_table *t = tl_csv_parse_simd(b.data, b.len, "o.csv", &arena, &err, levels[l]);
            assert_non_null(t);
            assert_int_equal(t->nrows, 2);
            assert_int_equal(t->cols[1].type, TL_COL_STR);
            const tl_cell *v0 = &t->cols[1].cells[0], *k1 = &t->cols[0].cells[1];
            assert_string_equal(v0->v.s, "q,\"\r\n");
            assert_string_equal(t->cols[1].cells[1].v.s, "7");
            assert_int_equal(t->cols[0].cells[0].len, pad);
            if (pad % 67)
                assert_int_equal(k1->len, pad % 67);
            else
                assert_int_equal(k1->kind, TL_MISSING);
            tl_table_free(t);
            tl_arena_free(&arena);
        }
    }
    tl_buf_free(&b);
}

/* ---- a file through the reader's window ---------------------------------------------- */

/* text written to a file and read by tl_csv_read_file: the same table or error as the
 * text parsed whole.  Returns the file's table's rows, or -1. */
static long file_agrees(const char *text, size_t n)
{
    char *dir = tt_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/w.csv", dir);
    tt_write_file(path, text, n);
    tl_arena arena;
    tl_arena_init(&arena);
    tl_error ref_err = {0}, err = {0};
    tl_table *ref = tl_csv_parse(text, n, path, &arena, &ref_err);
    tl_table *t = tl_csv_read_file(path, &arena, &err);
    assert_same_outcome(ref, &ref_err, t, &err);
    long rows = t ? (long)t->nrows : -1;
    tl_table_free(ref);
    tl_table_free(t);
    tl_arena_free(&arena);
    tt_rmrf(dir);
    free(dir);
    return rows;
}

/* Files of several windows: a header and a quoted field longer than a window, numbers
 * that become text late (their texts read again from the file's start), \r\n line ends
 * cut at window boundaries, and errors far into the file with their line numbers. */
static void test_files_through_the_window(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_buf_adds(&b, "\xEF\xBB\xBFn,");
    for (size_t i = 0; i < TL_CSV_WINDOW + 1000; i++)
        tl_buf_addc(&b, (char)('a' + i % 26)); /* a column name longer than the window */
    tl_buf_adds(&b, ",q\r\n");
    size_t rows = 0;
    for (; b.len < 3 * TL_CSV_WINDOW; rows++)
        tl_buf_printf(&b, "%zu,%zu.25,\"%s\"\r\n", rows, rows * 7, rows % 5 ? "x,y" : "a\r\n\"\"b");
    tl_buf_adds(&b, "\"");
    for (size_t i = 0; i < 2 * TL_CSV_WINDOW + 17; i++) /* a field longer than two windows */
        tl_buf_adds(&b, i % 1000 ? "z" : "\"\"\r\n");
    tl_buf_adds(&b, "\",1,word\r\n");
    rows++;
    for (; b.len < 6 * TL_CSV_WINDOW; rows++)
        tl_buf_printf(&b, "%zu,%s,\r\n\r\n", rows, rows % 3 ? "7" : "8.5");
    tl_buf_adds(&b, "text,1,2\r\n");
    rows++;
    assert_int_equal(file_agrees(b.data, b.len), (long)rows);

    /* the table itself: the first column's numbers came back as written */
    tl_arena arena;
    tl_error err = {0};
    tl_arena_init(&arena);
    tl_table *t = tl_csv_parse_window(b.data, b.len, TL_CSV_WINDOW, "w.csv", &arena, &err, TL_CSV_SIMD_BEST);
    assert_non_null(t);
    assert_int_equal(t->ncols, 3);
    assert_int_equal(strlen(t->cols[1].name), TL_CSV_WINDOW + 1000);
    assert_int_equal(t->cols[0].type, TL_COL_STR);
    assert_string_equal(t->cols[0].cells[1].v.s, "1");
    assert_string_equal(t->cols[0].cells[rows - 1].v.s, "text");
    assert_string_equal(t->cols[2].cells[0].v.s, "a\r\n\"b");
    tl_table_free(t);
    tl_arena_free(&arena);

    /* errors far in: a record of too many fields, a NUL, a quote never closed */
    size_t len = b.len;
    tl_buf_adds(&b, "1,2,3,4\r\n");
    assert_int_equal(file_agrees(b.data, b.len), -1);
    b.len = len;
    tl_buf_add(&b, "1,\0\r\n", 5);
    assert_int_equal(file_agrees(b.data, b.len), -1);
    b.len = len;
    tl_buf_adds(&b, "1,\"open\r\n2,3\r\n");
    assert_int_equal(file_agrees(b.data, b.len), -1);
    tl_buf_free(&b);
}

/* ---- typing as the cells are read ------------------------------------------------------- */

/* Numbers before a column's first text come back as written; the column's later numbers
 * are text from the start; numeric columns beside it keep their values. */
static void test_numbers_before_text_keep_their_text(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_buf_adds(&b, "s,n,t\n");
    for (int r = 0; r < 300; r++)
        tl_buf_printf(&b, "%s,%d.50,%s\n", r == 250 ? "word" : r % 3 ? "007" : "\"1.50\"", r, r == 10 ? "True" : "2");
    tl_arena arena;
    tl_error err = {0};
    tl_arena_init(&arena);
    tl_table *t = tl_csv_parse(b.data, b.len, "n.csv", &arena, &err);
    assert_non_null(t);
    assert_int_equal(t->cols[0].type, TL_COL_STR);
    assert_int_equal(t->cols[1].type, TL_COL_NUM);
    assert_int_equal(t->cols[2].type, TL_COL_STR);
    for (int r = 0; r < 300; r++) {
        const tl_cell *s = &t->cols[0].cells[r], *n = &t->cols[1].cells[r], *x = &t->cols[2].cells[r];
        assert_int_equal(s->kind, TL_STR);
        assert_string_equal(s->v.s, r == 250 ? "word" : r % 3 ? "007" : "1.50");
        assert_int_equal(n->kind, TL_FLOAT);
        assert_true(n->v.f == r + 0.5);
        assert_int_equal(x->kind, TL_STR);
        assert_string_equal(x->v.s, r == 10 ? "True" : "2");
    }
    tl_table_free(t);
    tl_arena_free(&arena);
    tl_buf_free(&b);
}

/* The fast forms of numbers give what strtod and strtoll give. */
static void test_numbers_match_strtod(void **state)
{
    (void)state;
    rng_state = 99;
    char s[64];
    for (int iter = 0; iter < 300000; iter++) {
        size_t n = 0;
        if (rng() % 4 == 0)
            s[n++] = '-';
        size_t whole = rng() % 12, frac = rng() % 2 ? 0 : 1 + rng() % 19;
        if (whole == 0 && frac == 0)
            whole = 1;
        for (size_t i = 0; i < whole; i++)
            s[n++] = (char)('0' + (i == 0 && rng() % 3 == 0 ? 0 : rng() % 10));
        if (frac) {
            s[n++] = '.';
            for (size_t i = 0; i < frac; i++)
                s[n++] = (char)('0' + rng() % 10);
        }
        s[n] = '\0';
        tl_cell c;
        assert_true(tl_text_to_number(s, n, &c));
        if (!frac && whole <= 18) {
            assert_int_equal(c.kind, TL_INT);
            assert_true(c.v.i == strtoll(s, NULL, 10));
        } else {
            assert_int_equal(c.kind, frac ? TL_FLOAT : c.kind);
            double want = strtod(s, NULL);
            double got = tl_cell_number(&c);
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("'%s': %.17g, strtod %.17g", s, got, want);
        }
    }
    /* forms the fast path leaves to the rest */
    tl_cell c;
    assert_true(tl_text_to_number("5.", 2, &c) && c.kind == TL_FLOAT && c.v.f == 5.0);
    assert_true(tl_text_to_number("1234567890123456789", 19, &c) && c.kind == TL_INT);
    assert_true(c.v.i == 1234567890123456789LL);
    assert_true(tl_text_to_number("-0.0", 4, &c) && c.kind == TL_FLOAT && signbit(c.v.f));
    assert_false(tl_text_to_number("-", 1, &c));
    assert_false(tl_text_to_number("1.2.3", 5, &c));
    assert_false(tl_text_to_number("12345678a", 9, &c));
    assert_false(tl_text_to_number("1234567:", 8, &c));
}

/* The missing spellings still read as missing after the quick rejection of numbers. */
static void test_missing_spellings(void **state)
{
    (void)state;
    static const char *const yes[] = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                      "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"};
    static const char *const no[] = {"-1", "1", "-1.5", "10.#IND", "1.5", "-nand", "NaNa", "-N", "Nan", "1.#INDX"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_true(tl_text_is_missing(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_false(tl_text_is_missing(no[i], strlen(no[i])));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks_agree),
        cmocka_unit_test(test_levels_fall_back),
        cmocka_unit_test(test_generated_texts_agree),
        cmocka_unit_test(test_specials_at_every_offset),
        cmocka_unit_test(test_files_through_the_window),
        cmocka_unit_test(test_numbers_before_text_keep_their_text),
        cmocka_unit_test(test_numbers_match_strtod),
        cmocka_unit_test(test_missing_spellings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
