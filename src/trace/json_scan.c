/*
 * json_scan.c - a JSON block's structure as bit masks, and the skip built on it (see
 * json_scan.h).
 */
#include "trace/json_scan.h"

#include <stddef.h>

/* What each byte is, for the portable scan and for the checks made a byte at a time. */
enum { C_QUOTE = 1, C_BSLASH = 2, C_STRUCT = 4, C_WS = 8, C_CTL = 16, C_ESCAPABLE = 32, C_DIGIT = 64 };

static const unsigned char byte_class[256] = {
    /* control bytes: not allowed in a string, nor outside one but for the three spaces */
    [0] = C_CTL, [1] = C_CTL, [2] = C_CTL, [3] = C_CTL, [4] = C_CTL, [5] = C_CTL, [6] = C_CTL, [7] = C_CTL,
    [8] = C_CTL, [11] = C_CTL, [12] = C_CTL, [14] = C_CTL, [15] = C_CTL, [16] = C_CTL, [17] = C_CTL,
    [18] = C_CTL, [19] = C_CTL, [20] = C_CTL, [21] = C_CTL, [22] = C_CTL, [23] = C_CTL, [24] = C_CTL,
    [25] = C_CTL, [26] = C_CTL, [27] = C_CTL, [28] = C_CTL, [29] = C_CTL, [30] = C_CTL, [31] = C_CTL,
    ['\t'] = C_CTL | C_WS, ['\n'] = C_CTL | C_WS, ['\r'] = C_CTL | C_WS, [' '] = C_WS,
    ['"'] = C_QUOTE | C_ESCAPABLE, ['\\'] = C_BSLASH | C_ESCAPABLE,
    ['{'] = C_STRUCT, ['}'] = C_STRUCT, ['['] = C_STRUCT, [']'] = C_STRUCT, [','] = C_STRUCT, [':'] = C_STRUCT,
    /* what may follow a backslash in a string (a \u's digits are ordinary string bytes) */
    ['/'] = C_ESCAPABLE, ['b'] = C_ESCAPABLE, ['f'] = C_ESCAPABLE, ['n'] = C_ESCAPABLE,
    ['r'] = C_ESCAPABLE, ['t'] = C_ESCAPABLE, ['u'] = C_ESCAPABLE,
    ['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
    ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
};

/* A byte that goes on a number or a literal: none of the above. */
static inline int is_scalar_byte(unsigned char c) { return !(byte_class[c] & (C_QUOTE | C_BSLASH | C_STRUCT | C_WS | C_CTL)); }

static void mask_portable(const unsigned char *s, tl_json_masks *m)
{
    uint64_t q = 0, b = 0, st = 0, ws = 0, ctl = 0, dg = 0;
    for (unsigned i = 0; i < TL_JSON_BLOCK; i++) {
        unsigned c = byte_class[s[i]];
        q |= (uint64_t)(c & C_QUOTE) << i;
        b |= (uint64_t)((c & C_BSLASH) >> 1) << i;
        st |= (uint64_t)((c & C_STRUCT) >> 2) << i;
        ws |= (uint64_t)((c & C_WS) >> 3) << i;
        ctl |= (uint64_t)((c & C_CTL) >> 4) << i;
        dg |= (uint64_t)((c & C_DIGIT) >> 6) << i;
    }
    m->quote = q;
    m->bslash = b;
    m->structural = st;
    m->ws = ws;
    m->ctl = ctl;
    m->digit = dg;
}

#if defined(__x86_64__) && !defined(TL_NO_SIMD)
#include <immintrin.h>
#define HAVE_X86 1

/*
 * The SIMD scans classify a byte by two table lookups (pshufb), one by its low nibble
 * and one by its high nibble, whose AND has a bit set only for the bytes of that bit's
 * kind: ',' (2,C), ':' (3,A), brackets (5|7, B|D), '\\' (5,C), '"' (2,2), ' ' (2,0),
 * '\t' '\n' '\r' (0, 9|A|D), digits (3, 0-9).  No other (high, low) pair shares a bit.
 * The digits' bit is the top one, which movemask takes as it is.
 */
enum { N_COMMA = 1, N_COLON = 2, N_BRACKET = 4, N_BSLASH = 8, N_QUOTE = 16, N_SPACE = 32, N_CTLWS = 64, N_DIGIT = 128 };
#define D(x) (char)((x) | N_DIGIT)
#define LO_TABLE D(N_SPACE), D(0), D(N_QUOTE), D(0), D(0), D(0), D(0), D(0), D(0), D(N_CTLWS), N_COLON | N_CTLWS, \
                 N_BRACKET, N_COMMA | N_BSLASH, N_BRACKET | N_CTLWS, 0, 0
#define HI_TABLE N_CTLWS, 0, N_COMMA | N_QUOTE | N_SPACE, D(N_COLON), 0, N_BRACKET | N_BSLASH, 0, N_BRACKET, 0, 0, 0, 0, \
                 0, 0, 0, 0

__attribute__((target("sse4.2"))) static inline uint64_t sse_kind(__m128i cls, int bits)
{
    __m128i hit = _mm_cmpgt_epi8(_mm_and_si128(cls, _mm_set1_epi8((char)bits)), _mm_setzero_si128());
    return (uint64_t)(unsigned)_mm_movemask_epi8(hit);
}

__attribute__((target("sse4.2"))) static void mask_sse42(const unsigned char *s, tl_json_masks *m)
{
    const __m128i lo_t = _mm_setr_epi8(LO_TABLE), hi_t = _mm_setr_epi8(HI_TABLE);
    const __m128i nib = _mm_set1_epi8(0x0f), lim = _mm_set1_epi8(0x1f);
    uint64_t q = 0, b = 0, st = 0, ws = 0, ctl = 0, dg = 0;
    for (unsigned i = 0; i < TL_JSON_BLOCK; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i lo = _mm_shuffle_epi8(lo_t, _mm_and_si128(v, nib));
        __m128i hi = _mm_shuffle_epi8(hi_t, _mm_and_si128(_mm_srli_epi16(v, 4), nib));
        __m128i cls = _mm_and_si128(lo, hi);
        q |= sse_kind(cls, N_QUOTE) << i;
        b |= sse_kind(cls, N_BSLASH) << i;
        st |= sse_kind(cls, N_COMMA | N_COLON | N_BRACKET) << i;
        ws |= sse_kind(cls, N_SPACE | N_CTLWS) << i;
        /* a byte <= 0x1f: min(v, 0x1f) == v on unsigned bytes */
        ctl |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, lim), v)) << i;
        dg |= (uint64_t)(unsigned)_mm_movemask_epi8(cls) << i;
    }
    m->quote = q;
    m->bslash = b;
    m->structural = st;
    m->ws = ws;
    m->ctl = ctl;
    m->digit = dg;
}

__attribute__((target("avx2"))) static inline uint64_t avx2_kind(__m256i cls, int bits)
{
    __m256i hit = _mm256_cmpgt_epi8(_mm256_and_si256(cls, _mm256_set1_epi8((char)bits)), _mm256_setzero_si256());
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(hit);
}

__attribute__((target("avx2"))) static void mask_avx2(const unsigned char *s, tl_json_masks *m)
{
    const __m256i lo_t = _mm256_setr_epi8(LO_TABLE, LO_TABLE), hi_t = _mm256_setr_epi8(HI_TABLE, HI_TABLE);
    const __m256i nib = _mm256_set1_epi8(0x0f), lim = _mm256_set1_epi8(0x1f);
    uint64_t q = 0, b = 0, st = 0, ws = 0, ctl = 0, dg = 0;
    for (unsigned i = 0; i < TL_JSON_BLOCK; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        __m256i lo = _mm256_shuffle_epi8(lo_t, _mm256_and_si256(v, nib));
        __m256i hi = _mm256_shuffle_epi8(hi_t, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        __m256i cls = _mm256_and_si256(lo, hi);
        q |= avx2_kind(cls, N_QUOTE) << i;
        b |= avx2_kind(cls, N_BSLASH) << i;
        st |= avx2_kind(cls, N_COMMA | N_COLON | N_BRACKET) << i;
        ws |= avx2_kind(cls, N_SPACE | N_CTLWS) << i;
        ctl |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(v, lim), v)) << i;
        dg |= (uint64_t)(uint32_t)_mm256_movemask_epi8(cls) << i;
    }
    m->quote = q;
    m->bslash = b;
    m->structural = st;
    m->ws = ws;
    m->ctl = ctl;
    m->digit = dg;
}
#undef D
#else
#define HAVE_X86 0
#endif

tl_json_mask_fn tl_json_mask_fn_for(tl_json_simd level, tl_json_simd *used)
{
    tl_json_simd got = TL_JSON_SIMD_PORTABLE;
    tl_json_mask_fn fn = mask_portable;
#if HAVE_X86
    if ((level == TL_JSON_SIMD_BEST || level == TL_JSON_SIMD_AVX2) && __builtin_cpu_supports("avx2")) {
        got = TL_JSON_SIMD_AVX2;
        fn = mask_avx2;
    } else if (level != TL_JSON_SIMD_PORTABLE && __builtin_cpu_supports("sse4.2")) {
        got = TL_JSON_SIMD_SSE42;
        fn = mask_sse42;
    }
#else
    (void)level;
#endif
    if (used)
        *used = got;
    return fn;
}

const char *tl_json_simd_name(tl_json_simd level)
{
    switch (level) {
    case TL_JSON_SIMD_SSE42: return "sse4.2";
    case TL_JSON_SIMD_AVX2: return "avx2";
    case TL_JSON_SIMD_PORTABLE: return "portable";
    default: return "best";
    }
}

/* ---- the skip ------------------------------------------------------------------------ */

/* Bit k set when an odd number of bits at or below k are: inside a string, from its
 * opening quote up to (not including) its closing one. */
static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* The bytes a backslash escapes (a backslash escaped is no escape itself); *carry: in,
 * whether byte 0 is escaped by the last block's last byte; out, the same for the next
 * block.  Backslashes are rare in a trace: one step per backslash. */
static inline uint64_t escaped_bytes(uint64_t bs, uint64_t *carry)
{
    uint64_t esc = *carry;
    *carry = 0;
    uint64_t b = bs & ~esc;
    while (b) {
        unsigned i = (unsigned)__builtin_ctzll(b);
        if (i == 63) {
            *carry = 1;
            break;
        }
        esc |= (uint64_t)1 << (i + 1);
        b &= ~((uint64_t)3 << i); /* this backslash and the byte it escapes */
    }
    return esc;
}

/* The end of a number or literal starting at s, by JSON's grammar (NaN and Infinity,
 * Python's, left to the slow way), or NULL. */
static const unsigned char *scalar_end(const unsigned char *s)
{
    static const char *const lit[] = {"true", "false", "null"};
    const unsigned char *p = s;
    int l = *p == 't' ? 0 : *p == 'f' ? 1 : *p == 'n' ? 2 : -1;
    if (l >= 0) {
        size_t i = 0;
        while (lit[l][i] && p[i] == (unsigned char)lit[l][i])
            i++;
        return lit[l][i] ? NULL : p + i;
    }
    int ok;
    p = tl_json_number_scan(p, &ok);
    return ok ? p : NULL;
}

/* The scalar at bit i of a block (b), the bytes of numbers and literals being `scalar`
 * and the digits `digit`: 1 when it is JSON, ending where the scalar bytes do.  The
 * common numbers (an integer, maybe negative; digits '.' digits) are checked on the masks
 * alone; the rest, and a scalar that reaches the end of the block, byte by byte. */
static inline int scalar_ok(const unsigned char *b, unsigned i, uint64_t scalar, uint64_t digit)
{
    uint64_t after = ~scalar >> i;
    unsigned len = after ? (unsigned)__builtin_ctzll(after) : 64;
    if (i + len < TL_JSON_BLOCK) {
        uint64_t run = (((uint64_t)1 << len) - 1) << i;
        uint64_t other = run & ~digit;
        const unsigned char *s = b + i;
        if (other == 0) /* no leading zero */
            return s[0] != '0' || len == 1;
        if (other == (uint64_t)1 << i && s[0] == '-')
            return len >= 2 && (s[1] != '0' || len == 2);
        if (!(other & (other - 1))) {
            unsigned k = (unsigned)__builtin_ctzll(other) - i;
            if (s[k] == '.' && k > 0 && k < len - 1)
                return s[0] != '0' || k == 1;
        }
    }
    const unsigned char *e = scalar_end(b + i);
    return e && !is_scalar_byte(*e);
}

/* What the grammar machine expects next. */
enum { S_VAL_OBJ, S_VAL_ARR, S_OBJ_START, S_ARR_START, S_KEY, S_COLON, S_AFTER_OBJ, S_AFTER_ARR };

/*
 * What a token does in each state, one 64-bit word per token with a byte per state: the
 * machine's next state is (word >> state) & 0xff, the state held as 8 x its number, so
 * that the chain from one token to the next is a shift and a mask, not a table load (a
 * token's word is loaded by its byte, which does not wait on the state).  A byte below
 * A_SLOW is the next state alone: strings, colons, commas and scalars (whose text is
 * checked apart, in bulk), nearly every token.  The others open a container (A_OPEN, with the state in
 * it), close one (A_POP: the next state depends on the container it was in), or are an
 * error (A_ERR).  A value in an object is followed by S_AFTER_OBJ, in an array
 * S_AFTER_ARR, so that a '}' or ']' is only taken where it closes a container of its kind.
 */
#define ST(s) ((s) << 3)
enum { A_SLOW = 0x40, A_OPEN = 0x40, A_POP = 0x80, A_ERR = 0xc0, A_STATE = 0x38 };
#define PACK(vobj, varr, ostart, astart, key, colon, aobj, aarr)                                              \
    ((uint64_t)(vobj) | (uint64_t)(varr) << 8 | (uint64_t)(ostart) << 16 | (uint64_t)(astart) << 24 |      \
     (uint64_t)(key) << 32 | (uint64_t)(colon) << 40 | (uint64_t)(aobj) << 48 | (uint64_t)(aarr) << 56)
#define E A_ERR
#define OP(s) (A_OPEN | ST(s))
/* The bytes of each word, in PACK's order: S_VAL_OBJ, S_VAL_ARR, S_OBJ_START, S_ARR_START,
 * S_KEY, S_COLON, S_AFTER_OBJ, S_AFTER_ARR. */
#define W_SCALAR PACK(ST(S_AFTER_OBJ), ST(S_AFTER_ARR), E, ST(S_AFTER_ARR), E, E, E, E)
#define W_OPEN_OBJ PACK(OP(S_OBJ_START), OP(S_OBJ_START), E, OP(S_OBJ_START), E, E, E, E)
#define W_OPEN_ARR PACK(OP(S_ARR_START), OP(S_ARR_START), E, OP(S_ARR_START), E, E, E, E)
#define W_CLOSE_OBJ PACK(E, E, A_POP, E, E, E, A_POP, E)
#define W_CLOSE_ARR PACK(E, E, E, A_POP, E, E, E, A_POP)
#define W_COMMA PACK(E, E, E, E, E, E, ST(S_KEY), ST(S_VAL_ARR))
#define W_COLON PACK(E, E, E, E, E, ST(S_VAL_OBJ), E, E)
#define W_STRING PACK(ST(S_AFTER_OBJ), ST(S_AFTER_ARR), ST(S_COLON), ST(S_AFTER_ARR), ST(S_COLON), E, E, E)

/* The word of the token each byte starts, less the scalar's (which every byte but the
 * seven below starts, and which the zeros of the table so stand for): a token's word is
 * one load away from its byte. */
static const uint64_t byte_step[256] = {
    ['{'] = W_OPEN_OBJ ^ W_SCALAR, ['['] = W_OPEN_ARR ^ W_SCALAR, ['}'] = W_CLOSE_OBJ ^ W_SCALAR,
    [']'] = W_CLOSE_ARR ^ W_SCALAR, [','] = W_COMMA ^ W_SCALAR, [':'] = W_COLON ^ W_SCALAR,
    ['"'] = W_STRING ^ W_SCALAR,
};

/* The machine's state across blocks. */
typedef struct skipper {
    unsigned state;     /* ST(one of S_*) */
    unsigned depth;
    uint64_t is_obj;    /* bit d: open container d (from 0) is an object */
    uint64_t in_carry;  /* all ones when the last block ended inside a string */
    uint64_t esc_carry; /* byte 0 of the next block is escaped */
    uint64_t sc_carry;  /* the last block's last byte went on a number or literal */
} skipper;

#define MAX_DEPTH 64

/* The tokens of one block (b at its first byte) as a mask; *bad: the bytes among them the
 * skip must give up at; *scalar: the bytes of numbers and literals; *starts: the first of
 * each. */
static inline uint64_t block_tokens(skipper *k, const unsigned char *b, const tl_json_masks *m, uint64_t *bad,
                                    uint64_t *scalar, uint64_t *starts)
{
    uint64_t esc = escaped_bytes(m->bslash, &k->esc_carry);
    uint64_t quote = m->quote & ~esc;
    uint64_t in = prefix_xor(quote) ^ k->in_carry;
    k->in_carry = (uint64_t)((int64_t)in >> 63);
    /* control bytes in a string or outside one (spaces aside), a backslash outside a
     * string, an escape JSON does not have */
    uint64_t stop = (m->ctl & in) | (m->ctl & ~m->ws & ~in) | (m->bslash & ~in);
    for (uint64_t e = esc & in; e; e &= e - 1) {
        unsigned i = (unsigned)__builtin_ctzll(e);
        if (!(byte_class[b[i]] & C_ESCAPABLE))
            stop |= (uint64_t)1 << i;
    }
    uint64_t sc = ~(m->structural | m->ws | m->quote | m->ctl | m->bslash) & ~in;
    uint64_t sc_start = sc & ~((sc << 1) | k->sc_carry);
    k->sc_carry = sc >> 63;
    *bad = stop;
    *scalar = sc;
    *starts = sc_start;
    return (m->structural & ~in) | (quote & in) | sc_start | stop;
}

/* Whether the scalars starting at the bits of `starts` are all JSON.  They are checked
 * apart from the grammar machine, a block's at a time, so that the machine's step stays
 * a shift: the order does not matter, only that a scalar after the value's end is not
 * asked about. */
static inline int scalars_ok(const unsigned char *b, uint64_t starts, uint64_t scalar, uint64_t digit)
{
    for (; starts; starts &= starts - 1)
        if (!scalar_ok(b, (unsigned)__builtin_ctzll(starts), scalar, digit))
            return 0;
    return 1;
}

const unsigned char *tl_json_skip(const unsigned char *p, const unsigned char *end, tl_json_from from,
                                  tl_json_mask_fn fn)
{
    skipper k = {ST(S_VAL_ARR), 0, 0, 0, 0, 0};
    if (from == TL_JSON_IN_OBJECT_REST) {
        k.state = ST(S_AFTER_OBJ);
        k.depth = 1;
        k.is_obj = 1;
    } else {
        while (p < end && (byte_class[*p] & C_WS))
            p++;
        if (p >= end || (*p != '{' && *p != '['))
            return NULL;
    }
    for (const unsigned char *b = p; b < end; b += TL_JSON_BLOCK) {
        tl_json_masks m;
        uint64_t bad, scalar, starts;
        fn(b, &m);
        uint64_t tokens = block_tokens(&k, b, &m, &bad, &scalar, &starts);
        if (bad)
            tokens &= (bad & -bad) - 1; /* the tokens before the first byte to give up at */
        unsigned st = k.state;
        while (tokens) {
            unsigned i = (unsigned)__builtin_ctzll(tokens);
            tokens &= tokens - 1;
            unsigned a = (unsigned)((byte_step[b[i]] ^ W_SCALAR) >> st) & 0xff;
            if (__builtin_expect(a < A_SLOW, 1)) {
                st = a;
                continue;
            }
            if (a == A_POP) {
                if (--k.depth == 0)
                    return scalars_ok(b, starts & (((uint64_t)1 << i) - 1), scalar, m.digit) ? b + i + 1 : NULL;
                a = ST(S_AFTER_ARR) - ST((unsigned)((k.is_obj >> (k.depth - 1)) & 1));
            } else if (a == A_ERR || k.depth >= MAX_DEPTH) {
                return NULL;
            } else { /* A_OPEN */
                k.is_obj = (k.is_obj & ~((uint64_t)1 << k.depth)) | ((uint64_t)(b[i] == '{') << k.depth);
                k.depth++;
            }
            st = a & A_STATE;
        }
        if (bad || !scalars_ok(b, starts, scalar, m.digit))
            return NULL;
        k.state = st;
    }
    return NULL;
}
