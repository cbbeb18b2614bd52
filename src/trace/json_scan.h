/*
 * json_scan.h - where a JSON text's structure is, 64 bytes at a time as bit masks, and a
 * skip over a value built on it (private to src/trace/).
 *
 * The trace reader passes over most of a trace (python_function frames, args objects
 * the sheets never read).  Walking such text a token at a time costs a call and a branch
 * per byte class; instead, a block's quotes, backslashes, structural bytes, spaces and
 * control bytes are found at once, strings are told from the rest by a prefix XOR of the
 * quote mask, and a small grammar machine visits only the tokens (structural bytes,
 * string starts, number and literal starts).
 *
 * A block's masks are made by one of several equivalent functions: AVX2 or SSE4.2 where
 * the CPU has them (chosen at run time), or a portable byte loop, which a TL_NO_SIMD
 * build always takes and which tests and the fuzz target set against the others on the
 * same input (they must find the same bytes).
 *
 * The skip decides only what it can decide for certain: it accepts a value only when the
 * value is JSON by the same rules as the token scanner (jscan.h), ending at the same
 * byte.  Anything else - an error, NaN or Infinity, nesting past 64, the end of the data
 * - it hands back undecided, and the caller skips the value the slow way from its start,
 * which finds the same end, or the same error with the same message.
 */
#ifndef TL_TRACE_JSON_SCAN_H
#define TL_TRACE_JSON_SCAN_H

#include <stdint.h>

#define TL_JSON_BLOCK 64

/* The bytes of one block, bit k for byte k. */
typedef struct tl_json_masks {
    uint64_t quote;      /* '"' */
    uint64_t bslash;     /* '\\' */
    uint64_t structural; /* '{' '}' '[' ']' ',' ':' */
    uint64_t ws;         /* ' ' '\t' '\n' '\r' */
    uint64_t ctl;        /* every byte below 0x20 (the spaces among them too) */
    uint64_t digit;      /* '0' to '9' */
} tl_json_masks;

typedef void (*tl_json_mask_fn)(const unsigned char *block, tl_json_masks *m);

/* How a block is scanned.  BEST is the fastest the CPU has. */
typedef enum tl_json_simd {
    TL_JSON_SIMD_BEST = 0,
    TL_JSON_SIMD_PORTABLE,
    TL_JSON_SIMD_SSE42,
    TL_JSON_SIMD_AVX2,
} tl_json_simd;

/* The scan of `level`, or the best one below it when this CPU or build lacks it;
 * *used (may be NULL) is told which one that is. */
tl_json_mask_fn tl_json_mask_fn_for(tl_json_simd level, tl_json_simd *used);

/* "portable", "sse4.2", "avx2" ("best" never: it names the one it stands for). */
const char *tl_json_simd_name(tl_json_simd level);

/* Where tl_json_skip starts. */
typedef enum tl_json_from {
    TL_JSON_AT_VALUE,       /* p at a value's first byte ('{' or '['; spaces before it allowed) */
    TL_JSON_IN_OBJECT_REST, /* p after a value inside an object: the rest of it, to its '}' */
} tl_json_from;

/*
 * The byte after the value (or object rest) that starts at p, when all of it lies in
 * [p, end) and is JSON; NULL when undecided (see above).  The TL_JSON_BLOCK bytes after
 * end must be readable and zero (the scanner's window keeps that slack), so that the end
 * of the data reads as a control byte.
 */
const unsigned char *tl_json_skip(const unsigned char *p, const unsigned char *end, tl_json_from from,
                                  tl_json_mask_fn fn);

/*
 * JSON's number grammar from p (an optional '-', an integer part, maybe a fraction and an
 * exponent): where it stops, with *ok 1 when the bytes crossed are a whole number, 0 when
 * it stopped at the byte that breaks the grammar.  Whether the number ends there (the
 * byte after it) is the caller's to check.
 */
static inline const unsigned char *tl_json_number_scan(const unsigned char *p, int *ok)
{
    *ok = 0;
    p += *p == '-';
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return p;
    if (*p == '.') {
        const unsigned char *f = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return p;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        const unsigned char *e = p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == e)
            return p;
    }
    *ok = 1;
    return p;
}

#endif
