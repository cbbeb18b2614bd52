/*
 * test_csv_write.c - the CSV writer: quoting and quote doubling with the special bytes
 * at every offset (the writer looks at fields a block of bytes at a time), fields longer
 * than its buffer, output through a file, numbers and booleans, the lone empty field.
 */
#include "testutil.h"

#include "write/csv_write.h"
#include "base/numfmt.h"

#include <math.h>

/* What the CSV field of s[0..n) is: quoted iff it holds , " CR or LF, quotes doubled. */
static void model_field(tl_buf *b, const char *s, size_t n)
{
    int quote = 0;
    for (size_t i = 0; i < n; i++)
        quote |= s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        tl_buf_add(b, s, n);
        return;
    }
    tl_buf_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        tl_buf_addc(b, s[i]);
        if (s[i] == '"')
            tl_buf_addc(b, '"');
    }
    tl_buf_addc(b, '"');
}

/* Rows of texts, each malloc'd to its exact size (the sanitizer build catches a read past
 * one); column c of row r is texts[r * ncols + c]. */
typedef struct texts {
    size_t nrows, ncols;
    char **s;
    size_t *n;
} texts;

static void texts_add(texts *t, const char *const *cols, const size_t *lens)
{
    t->s = realloc(t->s, (t->nrows + 1) * t->ncols * sizeof *t->s);
    t->n = realloc(t->n, (t->nrows + 1) * t->ncols * sizeof *t->n);
    for (size_t c = 0; c < t->ncols; c++) {
        char *p = malloc(lens[c] + 1);
        memcpy(p, cols[c], lens[c]);
        p[lens[c]] = '\0';
        t->s[t->nrows * t->ncols + c] = p;
        t->n[t->nrows * t->ncols + c] = lens[c];
    }
    t->nrows++;
}

static void texts_free(texts *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->s[i]);
    free(t->s);
    free(t->n);
}

/* The table of the texts (column names `names`), with an integer column after them
 * when `with_int`. */
static tl_table *texts_table(const texts *t, const char *const *names, int with_int)
{
    tl_table *tab = tl_table_new();
    tab->nrows = t->nrows;
    for (size_t c = 0; c < t->ncols; c++) {
        size_t k = tl_table_add_column(tab, names[c]);
        for (size_t r = 0; r < t->nrows; r++)
            tab->cols[k].cells[r] = tl_cell_strn(t->s[r * t->ncols + c], t->n[r * t->ncols + c]);
    }
    if (with_int) {
        size_t k = tl_table_add_column(tab, "n");
        for (size_t r = 0; r < t->nrows; r++)
            tab->cols[k].cells[r] = tl_cell_int((int64_t)r - 3);
    }
    return tab;
}

/* The CSV the model makes of that table. */
static void texts_model(tl_buf *b, const texts *t, const char *const *names, int with_int)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            tl_buf_addc(b, ',');
        model_field(b, names[c], strlen(names[c]));
    }
    tl_buf_adds(b, with_int ? ",n\n" : "\n");
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                tl_buf_addc(b, ',');
            model_field(b, t->s[r * t->ncols + c], t->n[r * t->ncols + c]);
        }
        if (with_int)
            tl_buf_printf(b, ",%lld", (long long)r - 3);
        else if (t->ncols == 1 && t->n[r] == 0)
            tl_buf_adds(b, "\"\"");
        tl_buf_addc(b, '\n');
    }
}

/* Both ways of writing the table give the model's text, byte for byte. */
static void check_texts(const texts *t, const char *const *names, int with_int)
{
    tl_table *tab = texts_table(t, names, with_int);
    tl_buf want = {0}, got = {0};
    texts_model(&want, t, names, with_int);
    tl_csv_format(tab, &got);
    assert_int_equal(got.len, want.len);
    for (size_t i = 0; i < want.len; i++)
        if (got.data[i] != want.data[i])
            fail_msg("byte %zu differs: got %.60s\nwant %.60s", i, got.data + i, want.data + i);

    char *dir = tt_tmpdir();
    char path[256];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    tl_error err = {0};
    assert_int_equal(tl_csv_write_file(tab, path, &err), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *file = malloc(want.len + 1);
    assert_int_equal(fread(file, 1, want.len + 1, f), want.len);
    fclose(f);
    assert_memory_equal(file, want.data, want.len);
    free(file);
    tt_rmrf(dir);
    free(dir);
    free(want.data);
    free(got.data);
    tl_table_free(tab);
}

static const char FILL[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/* Pieces put into plain text at every offset 0..17 of texts 0..40 bytes long. */
static const char *const PIECES[] = {",", "\"", "\r", "\n", "\r\n", "\"\"", ",\"", "\"x\"", "\t", " ", "'",
                                     "\xc2\xb5", "\xff", "\x01", "-", "#", "+", "\x0b\x0c", "\x7f"};

static void test_quoting_at_every_offset(void **state)
{
    (void)state;
    texts t = {.ncols = 1};
    char buf[64];
    for (size_t p = 0; p < sizeof PIECES / sizeof *PIECES; p++) {
        size_t pl = strlen(PIECES[p]);
        for (size_t len = 0; len <= 40; len++) {
            if (len < pl) {
                if (p == 0) { /* plain texts of every length, the empty one too */
                    memcpy(buf, FILL, len);
                    const char *cols[] = {buf};
                    texts_add(&t, cols, &len);
                }
                continue;
            }
            for (size_t off = 0; off <= 17 && off + pl <= len; off++) {
                memcpy(buf, FILL, len);
                memcpy(buf + off, PIECES[p], pl);
                const char *cols[] = {buf};
                texts_add(&t, cols, &len);
            }
        }
    }
    /* a quote at one offset and a comma (or another quote) at another */
    for (size_t len = 2; len <= 40; len++)
        for (size_t o1 = 0; o1 < len && o1 <= 17; o1++)
            for (size_t o2 = 0; o2 < len; o2++) {
                if (o2 == o1)
                    continue;
                memcpy(buf, FILL, len);
                buf[o1] = '"';
                buf[o2] = o2 % 2 ? '"' : ',';
                const char *cols[] = {buf};
                texts_add(&t, cols, &len);
            }
    const char *names[] = {"text"};
    check_texts(&t, names, 1); /* a number after each field */
    check_texts(&t, names, 0); /* one column: the empty field is "" */
    texts_free(&t);
}

/* Random fields dense in the special bytes, three to a row, over several buffers' worth. */
static void test_quoting_random(void **state)
{
    (void)state;
    static const char alphabet[] = "aaaaaaaaaaaaaaab,,\"\"\r\n\t '-#+\x01\x0b\x0c\x7f\xc2\xb5\xff";
    uint64_t seed = 0x2545F4914F6CDD1Du;
    texts t = {.ncols = 3};
    char buf[3][3000];
    for (size_t r = 0; r < 3000; r++) {
        const char *cols[3];
        size_t lens[3];
        for (size_t c = 0; c < 3; c++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t len = (size_t)(seed >> 33) % (c == 2 ? 3000 : 60);
            int mode = (int)((seed >> 20) % 4); /* 0: plain, 1: one comma, 2: quotes, 3: dense */
            for (size_t i = 0; i < len; i++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                unsigned k = (unsigned)(seed >> 40);
                buf[c][i] = mode == 3 ? alphabet[k % (sizeof alphabet - 1)] : (char)('a' + k % 26);
                if (mode == 2 && k % 97 == 0)
                    buf[c][i] = '"';
            }
            if (mode == 1 && len)
                buf[c][(seed >> 8) % len] = ',';
            cols[c] = buf[c];
            lens[c] = len;
        }
        texts_add(&t, cols, lens);
    }
    const char *names[] = {"a", "b,c", "say \"d\""};
    check_texts(&t, names, 1);
    texts_free(&t);
}

/* Fields longer than the writer's 1 MiB buffer, and fields about half of it (they take
 * up to twice their length quoted), plain and quoted. */
static void test_long_fields(void **state)
{
    (void)state;
    size_t sizes[] = {(1u << 19) - 2, (1u << 19) - 1, (1u << 19), (1u << 20) + 5, 3u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        texts t = {.ncols = 2};
        char *a = malloc(n), *b = malloc(n);
        for (size_t i = 0; i < n; i++) {
            a[i] = FILL[i % 62];
            b[i] = i % 1000 == 999 ? '"' : i % 777 == 5 ? ',' : FILL[i % 61];
        }
        const char *cols[] = {a, b};
        size_t lens[] = {n, n};
        texts_add(&t, cols, lens);
        memset(b, '"', n); /* quoted, every byte doubled */
        texts_add(&t, cols, lens);
        lens[0] = 3; /* short fields after a long one */
        lens[1] = 17;
        texts_add(&t, cols, lens);
        const char *names[] = {"x", "y"};
        check_texts(&t, names, 1);
        texts_free(&t);
        free(a);
        free(b);
    }
}

/* Numbers and booleans next to quoted fields; the header quoted like a field. */
static void test_numbers_and_booleans(void **state)
{
    (void)state;
    tl_table *t = tl_table_new();
    t->nrows = 4;
    size_t s = tl_table_add_column(t, "s, t");
    size_t i = tl_table_add_column(t, "i");
    size_t f = tl_table_add_column(t, "f");
    size_t b = tl_table_add_column(t, "b");
    const char *strs[] = {"a,b", "", "\"q\"", "plain"};
    int64_t ints[] = {0, -1, INT64_MAX, INT64_MIN};
    double floats[] = {0.1, 1e-05, -0.0, 1e22};
    for (size_t r = 0; r < 4; r++) {
        t->cols[s].cells[r] = tl_cell_str(strs[r]);
        t->cols[i].cells[r] = tl_cell_int(ints[r]);
        t->cols[f].cells[r] = r == 2 ? tl_cell_missing() : tl_cell_float(floats[r]);
        t->cols[b].cells[r] = tl_cell_bool(r % 2);
    }
    const char *want = "\"s, t\",i,f,b\n"
                       "\"a,b\",0,0.1,False\n"
                       ",-1,1e-05,True\n"
                       "\"\"\"q\"\"\",9223372036854775807,,False\n"
                       "plain,-9223372036854775808,1e+22,True\n";
    for (int formatted = 0; formatted < 2; formatted++) {
        if (formatted)
            tl_table_format_floats(t); /* the texts made once for both writers */
        tl_buf got = {0};
        tl_csv_format(t, &got);
        assert_string_equal(got.data, want);
        free(got.data);
    }
    tl_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting_at_every_offset),
        cmocka_unit_test(test_quoting_random),
        cmocka_unit_test(test_long_fields),
        cmocka_unit_test(test_numbers_and_booleans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
