/*
 * jscan.h - the streaming JSON scanner under the trace reader (private to src/trace/).
 *
 * A pull scanner over a window of text read through io/gzip_stream.h: the reader asks
 * for the next byte, a string, a number, or to skip a value, and decides as it goes what
 * to keep.  Strings come back as pointers into the window (valid until the next call),
 * decoded only when they hold escapes.  Every value, kept or skipped, is checked to be
 * JSON; the first error is one line naming the file, the byte offset in the JSON text and,
 * while in traceEvents, the event index.  The hot byte loops (spaces, string bodies) are
 * inline here so that the event reader's loops get them without a call.
 */
#ifndef TL_TRACE_JSCAN_H
#define TL_TRACE_JSCAN_H

#include "base/util.h"
#include "io/gzip_stream.h"
#include "trace/json_scan.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__) && !defined(TL_NO_SIMD)
#include <emmintrin.h>
#define J_SSE2 1
#endif

#define J_WINDOW (1u << 20)
#define J_MAX_WINDOW (256u << 20) /* the longest single string or number we hold */
#define J_MAX_DEPTH 1000          /* Python's json gives up about here too */
#define J_SLACK 64                /* zero bytes after the data, for the block scans */

typedef struct J {
    tl_instream *in;
    const char *path;
    tl_error *err;
    unsigned char *buf;
    size_t cap;
    unsigned char *p, *end; /* unread text; *end == 0 */
    unsigned char *mark;    /* start of a token being read: kept across refills */
    int eof;
    int failed;
    uint64_t base;          /* text offset of buf[0] */
    long event;             /* index of the event being read, or -1 */
    tl_buf sb;              /* decoded strings with escapes */
    size_t repr_max;        /* tl_j_repr: the most bytes one value may make (0: no cap) */
    const char *repr_what;  /* ... and what messages call that value */
    tl_json_mask_fn scan;   /* the structural skip's block scan, or NULL: token by token only */
} J;

/* A number as read. */
typedef struct jnum {
    double d;
    int64_t i;
    int is_int;   /* integer literal that fits int64 */
    int integral; /* the value is an integer (an integer literal, or a float like 5.0) */
    int big;      /* an integer literal beyond int64 */
} jnum;

/* How the scanners opened from now on pass over values: -1 token by token only, else a
 * tl_json_simd level for the structural skip (json_scan.h).  The default, BEST, takes the
 * skip only where a SIMD scan is there to make it pay (the portable byte loop is slower
 * than the token scanner; asked for by name, it is used).  For the tests and the fuzz
 * target, which set the paths against each other. */
void tl_j_scan_tune(int level);

/* Set up a scanner over `in` (messages name `path`, errors go to *err); j_close frees. */
void tl_j_open(J *j, tl_instream *in, const char *path, tl_error *err);
void tl_j_close(J *j);

/* Go on reading at byte `off` of the text (a seekable stream: tl_instream_seek), with
 * nothing of the window kept.  0, or -1 with the error set. */
int tl_j_seek(J *j, uint64_t off);

/* Go on reading in the n bytes at `text` (copied), byte `off` of the text on, which end
 * it: the rest of a text that another stream read.  What the window held is dropped. */
void tl_j_go_on_in(J *j, const void *text, size_t n, uint64_t off);

static inline uint64_t j_offset(const J *j, const unsigned char *at) { return j->base + (uint64_t)(at - j->buf); }

/* Record the first error: "<path>: not a valid trace: <what> at byte N of the JSON text". */
void tl_j_fail(J *j, const unsigned char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Read more text, keeping [mark, end) (or from p when mark is NULL).  1 when bytes were
 * added, 0 at the end, -1 on an error. */
int tl_j_refill(J *j);

static inline int j_ws(unsigned c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#ifdef J_SSE2
/* Bit k set when p[k] is a space or a newline, for the 16 bytes at p (a tab or a CR, rare
 * between tokens, is told apart by the byte loop after). */
static inline unsigned j_ws_mask16(const unsigned char *p)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))));
}
#endif

/* j_peek's long way: a run of spaces longer than its first look, or the end of the window. */
int tl_j_peek_slow(J *j);

/* The next non-space byte (not consumed), or -1 at the end or on an error.  Inline for
 * the common cases: no space, one space (a trace's ", " and ": "), or a short run (a
 * pretty-printed trace's newline and indent), found in one 16-byte look; the window's
 * zero slack makes the look safe up to its end. */
static inline __attribute__((always_inline)) int j_peek(J *j)
{
    const unsigned char *q = j->p;
    if (q < j->end) {
        if (!j_ws(q[0]))
            return q[0];
        if (q[0] == ' ' && q + 1 < j->end && !j_ws(q[1])) {
            j->p++;
            return q[1];
        }
#ifdef J_SSE2
        unsigned ws = j_ws_mask16(q);
        if (ws != 0xffff) {
            const unsigned char *r = q + __builtin_ctz(~ws & 0xffff);
            if (r < j->end && !j_ws(*r)) {
                j->p = (unsigned char *)r;
                return *r;
            }
        }
#endif
    }
    return tl_j_peek_slow(j);
}

/* Index of the first '"', '\\' or control byte in p[0..), scanning up to the zero slack;
 * a zero byte found may be the end of the data (p + i == end). */
static inline size_t j_strscan(const unsigned char *p, const unsigned char *e)
{
    const unsigned char *q = p;
#ifdef J_SSE2
    const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), lim = _mm_set1_epi8(0x1f);
    while (q < e) {
        __m128i v = _mm_loadu_si128((const __m128i *)q);
        /* a byte <= 0x1f: min(v, 0x1f) == v on unsigned bytes */
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, lim), v);
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bs)), ctl));
        if (m)
            return (size_t)(q - p) + (unsigned)__builtin_ctz(m);
        q += 16;
    }
    return (size_t)(e - p);
#else
    while (q < e && *q != '"' && *q != '\\' && *q >= 0x20)
        q++;
    return (size_t)(q - p);
#endif
}

/* Consume byte c (after spaces), or fail naming `what`.  0 or -1. */
int tl_j_expect(J *j, int c, const char *what);
/* tl_j_expect, for the common case of the byte right there (a key's colon). */
static inline int tl_j_expect_here(J *j, int c, const char *what)
{
    if (*j->p == c) {
        j->p++;
        return 0;
    }
    return tl_j_expect(j, c, what);
}
/* n bytes from p in the window (keeping mark).  0, or -1 at the end. */
int tl_j_have(J *j, size_t n);
/* A string (p at its quote): *s, *n valid until the next call.  0 or -1. */
int tl_j_string(J *j, const char **s, size_t *n);
/* Skip a string (p at its quote).  0 or -1. */
int tl_j_skip_string(J *j);
/* The same, the common case inline: a string that ends in the window without escapes. */
static inline int tl_j_skip_string_fast(J *j)
{
    const unsigned char *q = j->p + 1;
    size_t i = j_strscan(q, j->end);
    if (q + i < j->end && q[i] == '"') {
        j->p = (unsigned char *)q + i + 1;
        return 0;
    }
    return tl_j_skip_string(j);
}
/* Skip a number (p at '-' or a digit), checking its grammar only.  0 or -1. */
int tl_j_skip_number(J *j);
/* A number (p at '-', a digit, or NaN / Infinity).  0 or -1. */
int tl_j_number(J *j, jnum *out);
/* true (1), false (0), null (2), or -1. */
int tl_j_literal(J *j);
/* Skip any value after spaces, checking it.  0 or -1. */
int tl_j_skip(J *j);
/* Skip the rest of an object (p after a value inside it) through its '}'.  0 or -1. */
int tl_j_skip_object_rest(J *j);
/* Python's repr() of a str, appended to b. */
void tl_py_str_repr(tl_buf *b, const char *s, size_t n);
/* Python's repr() of the sorted list of the distinct strings among v[0..n), appended to
 * b (the set of a group's categories, say); v is sorted in place. */
void tl_py_sorted_set_repr(tl_buf *b, const char **v, size_t n);
/* Read a value and append Python's str() of it with every list made a tuple. */
int tl_j_repr(J *j, tl_buf *b, int depth);

#endif
