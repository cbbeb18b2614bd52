/*
 * test_json_scan.c - the JSON block scans and the structural skip of the trace reader.
 *
 * Every scan (portable, SSE4.2, AVX2: those this CPU and build have) must flag the same
 * bytes as a plain loop written here, for every byte value at every offset of a block.
 * The structural skip must pass over a value exactly as the token-by-token scanner does
 * (the same end byte), or hand it back undecided; through the scanner, every level gives
 * the token scanner's end or its error message, on generated JSON with escapes, nesting
 * and spaces at every block offset, and on the same texts damaged a byte at a time.
 */
#include "testutil.h"

#include "io/gzip_stream.h"
#include "trace/jscan.h"
#include "trace/json_scan.h"

#include <string.h>

static const tl_json_simd levels[] = {TL_JSON_SIMD_PORTABLE, TL_JSON_SIMD_SSE42, TL_JSON_SIMD_AVX2, TL_JSON_SIMD_BEST};
#define NLEVELS (sizeof levels / sizeof *levels)

static uint64_t rng_state;
static uint64_t rng(void) { return tt_rng(&rng_state); }

/* ---- the masks ---------------------------------------------------------------------- */

static void reference_masks(const unsigned char *s, tl_json_masks *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < TL_JSON_BLOCK; i++) {
        unsigned char c = s[i];
        uint64_t bit = (uint64_t)1 << i;
        if (c == '"')
            m->quote |= bit;
        if (c == '\\')
            m->bslash |= bit;
        if (strchr("{}[],:", c) && c)
            m->structural |= bit;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            m->ws |= bit;
        if (c < 0x20)
            m->ctl |= bit;
        if (c >= '0' && c <= '9')
            m->digit |= bit;
    }
}

static void check_block(const unsigned char *s)
{
    tl_json_masks want, got;
    reference_masks(s, &want);
    for (size_t l = 0; l < NLEVELS; l++) {
        tl_json_mask_fn_for(levels[l], NULL)(s, &got);
        assert_true(got.quote == want.quote);
        assert_true(got.bslash == want.bslash);
        assert_true(got.structural == want.structural);
        assert_true(got.ws == want.ws);
        assert_true(got.ctl == want.ctl);
        assert_true(got.digit == want.digit);
    }
}

static void test_every_byte_at_every_offset(void **state)
{
    (void)state;
    unsigned char block[TL_JSON_BLOCK];
    for (int c = 0; c < 256; c++) {
        for (int at = 0; at < TL_JSON_BLOCK; at++) {
            memset(block, 'a', sizeof block);
            block[at] = (unsigned char)c;
            check_block(block);
        }
        memset(block, c, sizeof block);
        check_block(block);
    }
}

static void test_random_blocks(void **state)
{
    (void)state;
    static const unsigned char pick[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\t', '\n', '\r', 0, 0x1f, '0', '9', '/',
                                         'a', '1', 0x7f, 0x80, 0xff, 0xdc, 0xbb, 0x0c, 0x2a, 0x3b, 0x5e, 0x7c};
    unsigned char buf[TL_JSON_BLOCK + 7];
    rng_state = 7;
    for (int iter = 0; iter < 20000; iter++) {
        unsigned char *s = buf + iter % 8; /* odd alignments too */
        for (int i = 0; i < TL_JSON_BLOCK; i++)
            s[i] = iter % 2 ? (unsigned char)rng() : pick[rng() % sizeof pick];
        check_block(s);
    }
}

static void test_levels_fall_back(void **state)
{
    (void)state;
    tl_json_simd used;
    assert_non_null(tl_json_mask_fn_for(TL_JSON_SIMD_PORTABLE, &used));
    assert_int_equal(used, TL_JSON_SIMD_PORTABLE);
    tl_json_mask_fn_for(TL_JSON_SIMD_BEST, &used);
    assert_int_not_equal(used, TL_JSON_SIMD_BEST); /* it names the one it stands for */
#ifdef TL_NO_SIMD
    assert_int_equal(used, TL_JSON_SIMD_PORTABLE);
#endif
    assert_string_equal(tl_json_simd_name(TL_JSON_SIMD_AVX2), "avx2");
    assert_string_equal(tl_json_simd_name(TL_JSON_SIMD_SSE42), "sse4.2");
}

/* ---- the skip, directly ------------------------------------------------------------- */

/* tl_json_skip over a copy of s with the zero slack it needs: the end offset, or -1. */
static long skip_of(const char *s, tl_json_from from, tl_json_simd level)
{
    size_t n = strlen(s);
    unsigned char *b = calloc(1, n + TL_JSON_BLOCK);
    memcpy(b, s, n);
    const unsigned char *e = tl_json_skip(b, b + n, from, tl_json_mask_fn_for(level, NULL));
    long r = e ? (long)(e - b) : -1;
    free(b);
    return r;
}

static void test_skip_cases(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        tl_json_from from;
        long end; /* -1: undecided */
    } cases[] = {
        {"{}", TL_JSON_AT_VALUE, 2},
        {"  []x", TL_JSON_AT_VALUE, 4},
        {"{\"a\": [1, -2.5e+3, true, false, null, \"s\"], \"b\": {}} , 1", TL_JSON_AT_VALUE, 52},
        {"[\"a\\\"b\", \"c\\\\\", \"\\/\\b\\f\\n\\r\\t\\u00e9\"]", TL_JSON_AT_VALUE, 37},
        {", \"k\": 1, \"l\": [2]}, next", TL_JSON_IN_OBJECT_REST, 19},
        {"}", TL_JSON_IN_OBJECT_REST, 1},
        /* not JSON, or not for the skip to decide: the slow way says */
        {"1", TL_JSON_AT_VALUE, -1},
        {"{\"a\" 1}", TL_JSON_AT_VALUE, -1},
        {"{\"a\": 01}", TL_JSON_AT_VALUE, -1},
        {"[-01]", TL_JSON_AT_VALUE, -1},
        {"[00.5]", TL_JSON_AT_VALUE, -1},
        {"[-]", TL_JSON_AT_VALUE, -1},
        {"[.5]", TL_JSON_AT_VALUE, -1},
        {"[5.]", TL_JSON_AT_VALUE, -1},
        {"[1.2.3]", TL_JSON_AT_VALUE, -1},
        {"[1-2]", TL_JSON_AT_VALUE, -1},
        {"[0, -0, 0.5, -0.5, 10.25, -7, 1e5, -1.5E-7]", TL_JSON_AT_VALUE, 43},
        {"{\"a\": 1.}", TL_JSON_AT_VALUE, -1},
        {"{\"a\": 1e}", TL_JSON_AT_VALUE, -1},
        {"{\"a\": tru}", TL_JSON_AT_VALUE, -1},
        {"{\"a\": truex}", TL_JSON_AT_VALUE, -1},
        {"{\"a\": NaN}", TL_JSON_AT_VALUE, -1},
        {"[1,]", TL_JSON_AT_VALUE, -1},
        {"[1 2]", TL_JSON_AT_VALUE, -1},
        {"[1}", TL_JSON_AT_VALUE, -1},
        {"{\"a\":1]", TL_JSON_AT_VALUE, -1},
        {"{1:2}", TL_JSON_AT_VALUE, -1},
        {"[\"a\\x\"]", TL_JSON_AT_VALUE, -1},
        {"[\"a\tb\"]", TL_JSON_AT_VALUE, -1},
        {"[\"a\x01\"]", TL_JSON_AT_VALUE, -1},
        {"[\\\"a\"]", TL_JSON_AT_VALUE, -1},
        {"[1,\f2]", TL_JSON_AT_VALUE, -1},
        {"{\"a\": [1, 2", TL_JSON_AT_VALUE, -1}, /* the end of the data */
        {"[\"abc", TL_JSON_AT_VALUE, -1},
        {", \"k\" 1}", TL_JSON_IN_OBJECT_REST, -1},
        {", }", TL_JSON_IN_OBJECT_REST, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t l = 0; l < NLEVELS; l++)
            if (skip_of(cases[i].text, cases[i].from, levels[l]) != cases[i].end)
                fail_msg("case %zu (%s), level %s: %ld, want %ld", i, cases[i].text, tl_json_simd_name(levels[l]),
                         skip_of(cases[i].text, cases[i].from, levels[l]), cases[i].end);
}

/* Strings and backslash runs across the blocks' edges; nesting to the machine's limit. */
static void test_skip_block_edges(void **state)
{
    (void)state;
    char text[512];
    for (int pad = 0; pad < 130; pad++) {
        for (int nbs = 0; nbs < 5; nbs++) {
            /* ["xxx...\\\\\"", 1]: an even run of backslashes ends the string, an odd
             * one escapes its quote (the text then ends inside the string) */
            int n = 0;
            text[n++] = '[';
            text[n++] = '"';
            memset(text + n, 'a', (size_t)pad);
            n += pad;
            for (int k = 0; k < nbs; k++)
                text[n++] = '\\';
            n += sprintf(text + n, "\", {\"k\": [1, 2]}]");
            long want = nbs % 2 ? -1 : n;
            for (size_t l = 0; l < NLEVELS; l++)
                assert_int_equal(skip_of(text, TL_JSON_AT_VALUE, levels[l]), want);
        }
    }
    /* 64 levels are decided, 65 are left to the slow way (which allows far more) */
    for (int depth = 63; depth <= 65; depth++) {
        int n = 0;
        for (int d = 0; d < depth; d++) {
            if (d % 2)
                text[n++] = '[';
            else
                n += sprintf(text + n, "{\"k\":");
        }
        text[n++] = '1';
        for (int d = depth - 1; d >= 0; d--)
            text[n++] = d % 2 ? ']' : '}';
        text[n] = 0;
        for (size_t l = 0; l < NLEVELS; l++)
            assert_int_equal(skip_of(text, TL_JSON_AT_VALUE, levels[l]), depth <= 64 ? n : -1);
    }
}

/* ---- the skip through the scanner, against the token scanner ----------------------- */

static void gen_string(tl_buf *b)
{
    static const char *const parts[] = {"a", "xyz", " ", "\\\"", "\\\\", "\\n", "\\u00e9", "\xc3\xa9", "{", "]", ",", ":", "'"};
    tl_buf_addc(b, '"');
    int n = (int)(rng() % 6);
    for (int i = 0; i < n; i++)
        tl_buf_adds(b, parts[rng() % (sizeof parts / sizeof *parts)]);
    tl_buf_addc(b, '"');
}

static void gen_space(tl_buf *b)
{
    static const char *const sp[] = {"", "", " ", "\n  ", "\t", "\r\n"};
    tl_buf_adds(b, sp[rng() % (sizeof sp / sizeof *sp)]);
}

static void gen_value(tl_buf *b, int depth)
{
    static const char *const scalars[] = {"0", "-1", "17919", "1419247334430.852", "2.5e-3", "1E+10", "true",
                                          "false", "null", "NaN", "-Infinity", "123456789012345678901234"};
    int k = (int)(rng() % 8);
    if (depth > 6)
        k = k % 3 + 3;
    if (k < 2) {
        int obj = k == 0, n = (int)(rng() % 5);
        tl_buf_addc(b, obj ? '{' : '[');
        for (int i = 0; i < n; i++) {
            if (i)
                tl_buf_addc(b, ',');
            gen_space(b);
            if (obj) {
                gen_string(b);
                gen_space(b);
                tl_buf_addc(b, ':');
                gen_space(b);
            }
            gen_value(b, depth + 1);
            gen_space(b);
        }
        tl_buf_addc(b, obj ? '}' : ']');
    } else if (k < 4) {
        gen_string(b);
    } else {
        tl_buf_adds(b, scalars[rng() % (sizeof scalars / sizeof *scalars)]);
    }
}

/* What the scanner makes of text at level (-1: token by token): "end N" or the error. */
static void scan_outcome(const char *text, size_t n, int rest, int level, char *out, size_t cap)
{
    tl_j_scan_tune(level);
    tl_instream *in = tl_instream_open_mem(text, n, "t.json");
    tl_error err = {0};
    J j;
    tl_j_open(&j, in, "t.json", &err);
    int r;
    if (rest) {
        /* the text is an object: its first value read the slow way, the rest skipped */
        r = tl_j_expect(&j, '{', "'{'");
        if (r == 0 && j_peek(&j) == '"' && tl_j_skip_string(&j) == 0 && tl_j_expect(&j, ':', "':'") == 0 &&
            tl_j_skip(&j) == 0)
            r = tl_j_skip_object_rest(&j);
        else
            r = -1;
    } else {
        r = tl_j_skip(&j);
    }
    if (r == 0)
        snprintf(out, cap, "end %llu", (unsigned long long)j_offset(&j, j.p));
    else
        snprintf(out, cap, "error %s", err.set ? err.msg : "(none)");
    tl_j_close(&j);
    tl_instream_close(in);
    tl_j_scan_tune(TL_JSON_SIMD_BEST);
}

static void check_same(const char *text, size_t n, int rest)
{
    char want[1100], got[1100];
    scan_outcome(text, n, rest, -1, want, sizeof want);
    for (size_t l = 0; l < NLEVELS; l++) {
        scan_outcome(text, n, rest, (int)levels[l], got, sizeof got);
        if (strcmp(want, got) != 0)
            fail_msg("level %s on [%.*s]: %s, the token scanner: %s", tl_json_simd_name(levels[l]), (int)n, text, got, want);
    }
}

static void test_skip_agrees_with_token_scanner(void **state)
{
    (void)state;
    static const char damage[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n', 0, 0x01, 'x', '0', '.', '-', 'e'};
    rng_state = 2026;
    tl_buf b = {0};
    for (int iter = 0; iter < 3000; iter++) {
        tl_buf_clear(&b);
        int rest = iter % 3 == 0;
        if (rest) {
            /* an object of several members, as an event is */
            tl_buf_adds(&b, "{\"ph\": \"X\"");
            for (int m = (int)(rng() % 6); m > 0; m--) {
                tl_buf_adds(&b, ", ");
                gen_string(&b);
                tl_buf_adds(&b, ": ");
                gen_value(&b, 1);
            }
            tl_buf_addc(&b, '}');
        } else {
            gen_space(&b);
            size_t at = b.len;
            do { /* a container: the skip's work (a scalar is the token scanner's) */
                b.len = at;
                gen_value(&b, 0);
            } while (b.data[at] != '{' && b.data[at] != '[');
        }
        tl_buf_adds(&b, iter % 2 ? " , 1" : "");
        check_same(b.data, b.len, rest);
        /* damaged: a byte replaced, or the text cut */
        for (int d = 0; d < 4 && b.len; d++) {
            char *copy = malloc(b.len);
            memcpy(copy, b.data, b.len);
            size_t at = rng() % b.len;
            copy[at] = damage[rng() % sizeof damage];
            check_same(copy, b.len, rest);
            check_same(copy, at, rest);
            free(copy);
        }
    }
    tl_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_at_every_offset),
        cmocka_unit_test(test_random_blocks),
        cmocka_unit_test(test_levels_fall_back),
        cmocka_unit_test(test_skip_cases),
        cmocka_unit_test(test_skip_block_edges),
        cmocka_unit_test(test_skip_agrees_with_token_scanner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
