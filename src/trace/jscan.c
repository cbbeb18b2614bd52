/*
 * jscan.c - the streaming JSON scanner of jscan.h.
 */
#include "trace/jscan.h"

#include "base/numfmt.h"
#include "base/textblock.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int scan_level = TL_JSON_SIMD_BEST;

void tl_j_scan_tune(int level) { atomic_store(&scan_level, level); }

void tl_j_open(J *j, tl_instream *in, const char *path, tl_error *err)
{
    memset(j, 0, sizeof *j);
    int level = atomic_load(&scan_level);
    tl_json_simd used = TL_JSON_SIMD_PORTABLE;
    j->scan = level < 0 ? NULL : tl_json_mask_fn_for((tl_json_simd)level, &used);
    /* the portable block scan is slower than reading token by token: by default (BEST)
     * the structural skip is taken only with a SIMD scan under it */
    if (level == TL_JSON_SIMD_BEST && used == TL_JSON_SIMD_PORTABLE)
        j->scan = NULL;
    j->in = in;
    j->path = path;
    j->err = err;
    j->cap = J_WINDOW;
    j->buf = tl_xmalloc(j->cap);
    /* a text that fills the window: its pages mapped in one call, not a fault each */
    uint64_t hint = in ? tl_instream_size_hint(in) : 0;
    tl_populate(j->buf, hint < j->cap ? (size_t)hint : j->cap);
    j->p = j->end = j->buf;
    memset(j->buf, 0, J_SLACK);
    j->event = -1;
}

int tl_j_seek(J *j, uint64_t off)
{
    if (tl_instream_seek(j->in, off, j->err) < 0) {
        j->failed = 1;
        return -1;
    }
    j->base = off;
    j->p = j->end = j->buf;
    j->mark = NULL;
    j->eof = 0;
    memset(j->buf, 0, J_SLACK);
    return 0;
}

void tl_j_go_on_in(J *j, const void *text, size_t n, uint64_t off)
{
    if (n + 2 * J_SLACK > j->cap) {
        free(j->buf);
        j->cap = n + 2 * J_SLACK;
        j->buf = tl_xmalloc(j->cap);
    }
    if (n)
        memcpy(j->buf, text, n);
    j->base = off;
    j->p = j->buf;
    j->end = j->buf + n;
    j->mark = NULL;
    j->eof = 1;
    memset(j->end, 0, J_SLACK);
}

void tl_j_close(J *j)
{
    free(j->buf);
    tl_buf_free(&j->sb);
    j->buf = NULL;
}




void tl_j_fail(J *j, const unsigned char *at, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    if (j->failed)
        return;
    j->failed = 1;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (j->event >= 0)
        tl_error_set(j->err, "%s: not a valid trace: %s at byte %llu of the JSON text (event %ld)", j->path, what,
                     (unsigned long long)j_offset(j, at), j->event);
    else
        tl_error_set(j->err, "%s: not a valid trace: %s at byte %llu of the JSON text", j->path, what,
                     (unsigned long long)j_offset(j, at));
}

/* Read more text.  Keeps [mark, end) (or nothing before p when mark is NULL), moving it
 * to the front.  Returns 1 when bytes were added, 0 at the end, -1 on an error. */
int tl_j_refill(J *j)
{
    if (j->failed)
        return -1;
    if (j->eof)
        return 0;
    unsigned char *keep = j->mark ? j->mark : j->p;
    size_t nkeep = (size_t)(j->end - keep), pofs = (size_t)(j->p - keep);
    if (nkeep + J_SLACK * 2 >= j->cap) {
        if (j->cap >= J_MAX_WINDOW) {
            tl_j_fail(j, keep, "a string or number longer than %u MiB", J_MAX_WINDOW >> 20);
            return -1;
        }
        size_t ncap = j->cap * 2;
        unsigned char *nb = tl_xmalloc(ncap);
        memcpy(nb, keep, nkeep);
        j->base += (uint64_t)(keep - j->buf);
        free(j->buf);
        j->buf = nb;
        j->cap = ncap;
    } else {
        j->base += (uint64_t)(keep - j->buf);
        memmove(j->buf, keep, nkeep);
    }
    if (j->mark)
        j->mark = j->buf;
    j->p = j->buf + pofs;
    j->end = j->buf + nkeep;
    long k = tl_instream_read(j->in, j->end, j->cap - nkeep - J_SLACK, j->err);
    if (k < 0) {
        j->failed = 1;
        return -1;
    }
    j->end += k;
    memset(j->end, 0, J_SLACK);
    if (k == 0) {
        j->eof = 1;
        return 0;
    }
    return 1;
}



int tl_j_peek_slow(J *j)
{
    for (;;) {
        unsigned char *p = j->p, *e = j->end;
#ifdef J_SSE2
        while (p + 16 <= e) {
            unsigned ws = j_ws_mask16(p);
            if (ws != 0xffff) {
                unsigned first = (unsigned)__builtin_ctz(~ws & 0xffff);
                p += first;
                if (!j_ws(*p)) {
                    j->p = p;
                    return *p;
                }
                p++;
                continue;
            }
            p += 16;
        }
#endif
        while (p < e) {
            if (!j_ws(*p)) {
                j->p = p;
                return *p;
            }
            p++;
        }
        j->p = p;
        j->mark = NULL;
        if (tl_j_refill(j) <= 0)
            return -1;
    }
}

/* Expect byte c next (after spaces) and consume it. */
int tl_j_expect(J *j, int c, const char *what)
{
    int got = j_peek(j);
    if (got != c) {
        if (!j->failed)
            tl_j_fail(j, j->p, got < 0 ? "the text ends where %s was expected" : "expected %s", what);
        return -1;
    }
    j->p++;
    return 0;
}


static void utf8_put(tl_buf *b, uint32_t cp)
{
    char u[4];
    if (cp < 0x80) {
        u[0] = (char)cp;
        tl_buf_add(b, u, 1);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 4);
    }
}

static int hex4(const unsigned char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Make sure n bytes from p are in the window (keeping mark).  0, or -1 at the end. */
int tl_j_have(J *j, size_t n)
{
    while ((size_t)(j->end - j->p) < n) {
        if (tl_j_refill(j) <= 0)
            return -1;
    }
    return 0;
}

/*
 * Read a string (p at its opening quote).  *s, *n: its decoded bytes, valid until the
 * next scanner call.  Returns 0 or -1 (error set).
 */
int tl_j_string(J *j, const char **s, size_t *n)
{
    j->p++; /* the quote */
    j->mark = j->p;
    int escaped = 0;
    uint64_t start = 0; /* text offset of the string's first byte */
    for (;;) {
        size_t i = j_strscan(j->p, j->end);
        unsigned char *q = j->p + i;
        if (q >= j->end) {
            j->p = j->end;
            int r = tl_j_refill(j);
            if (r <= 0) {
                if (r == 0)
                    tl_j_fail(j, j->end, "the text ends inside a string");
                j->mark = NULL;
                return -1;
            }
            continue;
        }
        if (*q == '"') {
            if (!escaped) {
                *s = (const char *)j->mark;
                *n = (size_t)(q - j->mark);
            } else {
                tl_buf_add(&j->sb, j->mark, (size_t)(q - j->mark));
                *s = j->sb.data ? j->sb.data : "";
                *n = j->sb.len;
            }
            j->p = q + 1;
            j->mark = NULL;
            return 0;
        }
        if (*q < 0x20) {
            j->p = q;
            tl_j_fail(j, q, "a control character inside a string");
            j->mark = NULL;
            return -1;
        }
        /* a backslash: decode from here on into sb */
        if (!escaped) {
            tl_buf_clear(&j->sb);
            escaped = 1;
            start = j_offset(j, j->mark);
        }
        /* The window holds at most J_MAX_WINDOW of text without escapes; with them, the
         * decoded text grows in sb instead, so the string's length in the JSON text (never
         * less than the decoded length) is held to the same cap. */
        if (j_offset(j, q) - start > J_MAX_WINDOW) {
            tl_j_fail(j, q, "a string longer than %u MiB", J_MAX_WINDOW >> 20);
            j->mark = NULL;
            return -1;
        }
        tl_buf_add(&j->sb, j->mark, (size_t)(q - j->mark));
        j->p = q;
        j->mark = q;
        if (tl_j_have(j, 2) < 0) {
            tl_j_fail(j, j->end, "the text ends inside a string");
            j->mark = NULL;
            return -1;
        }
        q = j->p;
        unsigned c = q[1];
        size_t used = 2;
        switch (c) {
        case '"': tl_buf_addc(&j->sb, '"'); break;
        case '\\': tl_buf_addc(&j->sb, '\\'); break;
        case '/': tl_buf_addc(&j->sb, '/'); break;
        case 'b': tl_buf_addc(&j->sb, '\b'); break;
        case 'f': tl_buf_addc(&j->sb, '\f'); break;
        case 'n': tl_buf_addc(&j->sb, '\n'); break;
        case 'r': tl_buf_addc(&j->sb, '\r'); break;
        case 't': tl_buf_addc(&j->sb, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            if (tl_j_have(j, 6) < 0 || hex4(j->p + 2, &cp) < 0) {
                tl_j_fail(j, j->p, "a bad \\u escape");
                j->mark = NULL;
                return -1;
            }
            q = j->p;
            used = 6;
            if (cp >= 0xd800 && cp < 0xdc00 && tl_j_have(j, 12) == 0 && (q = j->p, q[6] == '\\' && q[7] == 'u') &&
                hex4(q + 8, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                used = 12;
            }
            q = j->p;
            /* A lone surrogate becomes its 3-byte form, as Python keeps it.  \u0000 cannot
             * be held in the C strings names become (it would cut the name, and merge
             * names that differ after it): it is read as U+FFFD. */
            utf8_put(&j->sb, cp ? cp : 0xfffd);
            break;
        }
        default:
            tl_j_fail(j, q, "a bad escape in a string");
            j->mark = NULL;
            return -1;
        }
        j->p = q + used;
        j->mark = j->p;
    }
}

/* Skip a string (p at its opening quote) without keeping it. */
int tl_j_skip_string(J *j)
{
    j->p++;
    j->mark = NULL;
    for (;;) {
        size_t i = j_strscan(j->p, j->end);
        unsigned char *q = j->p + i;
        if (q >= j->end) {
            j->p = j->end;
            int r = tl_j_refill(j);
            if (r <= 0) {
                if (r == 0)
                    tl_j_fail(j, j->end, "the text ends inside a string");
                return -1;
            }
            continue;
        }
        if (*q == '"') {
            j->p = q + 1;
            return 0;
        }
        if (*q < 0x20) {
            j->p = q;
            tl_j_fail(j, q, "a control character inside a string");
            return -1;
        }
        /* backslash: the escaped byte is skipped with it (a \u's hex digits are checked
         * only as ordinary string bytes, enough to find the string's end) */
        j->p = q;
        if (tl_j_have(j, 2) < 0) {
            tl_j_fail(j, j->end, "the text ends inside a string");
            return -1;
        }
        if (!strchr("\"\\/bfnrtu", j->p[1]) || j->p[1] == 0) {
            tl_j_fail(j, j->p, "a bad escape in a string");
            return -1;
        }
        j->p += 2;
    }
}


static inline int j_numchar(unsigned c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Read a number (p at '-' or a digit), or NaN / Infinity / -Infinity. */
int tl_j_number(J *j, jnum *out)
{
    j->mark = j->p;
    for (;;) {
        unsigned char *q = j->p;
        while (j_numchar(*q))
            q++;
        if (q < j->end || j->eof) {
            unsigned char *s = j->p;
            size_t n = (size_t)(q - s);
            memset(out, 0, sizeof *out);
            /* Python's json: NaN, Infinity, -Infinity */
            if (q < j->end && (*q == 'N' || *q == 'I') && (n == 0 || (n == 1 && *s == '-' && *q == 'I'))) {
                int nan = *q == 'N';
                const char *lit = nan ? "NaN" : "Infinity";
                size_t ln = strlen(lit);
                if (tl_j_have(j, n + ln) < 0 || memcmp(j->p + n, lit, ln) != 0) {
                    tl_j_fail(j, j->p, "a bad number");
                    j->mark = NULL;
                    return -1;
                }
                out->d = nan ? NAN : (n ? -INFINITY : INFINITY);
                j->p += n + ln;
                j->mark = NULL;
                return 0;
            }
            /* grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
            size_t k = 0;
            int neg = 0;
            if (k < n && s[k] == '-') {
                neg = 1;
                k++;
            }
            size_t int0 = k;
            uint64_t w = 0;
            int nd = 0, dropped = 0; /* significant digits taken; digits dropped past 19 */
            int q10 = 0;
            while (k < n && s[k] >= '0' && s[k] <= '9') {
                if (nd < 19) {
                    if (w || s[k] != '0') {
                        w = w * 10 + (uint64_t)(s[k] - '0');
                        nd += w != 0;
                    }
                } else {
                    q10++;
                    dropped |= s[k] != '0';
                }
                k++;
            }
            size_t nint = k - int0;
            int bad = nint == 0 || (nint > 1 && s[int0] == '0');
            int isint = 1;
            if (!bad && k < n && s[k] == '.') {
                isint = 0;
                k++;
                size_t f0 = k;
                while (k < n && s[k] >= '0' && s[k] <= '9') {
                    if (nd < 19) {
                        if (w || s[k] != '0') {
                            w = w * 10 + (uint64_t)(s[k] - '0');
                            nd++;
                        }
                        q10--;
                    } else {
                        dropped |= s[k] != '0';
                    }
                    k++;
                }
                bad = k == f0;
            }
            if (!bad && k < n && (s[k] == 'e' || s[k] == 'E')) {
                isint = 0;
                k++;
                int eneg = 0;
                if (k < n && (s[k] == '+' || s[k] == '-'))
                    eneg = s[k++] == '-';
                size_t e0 = k;
                long ev = 0;
                while (k < n && s[k] >= '0' && s[k] <= '9') {
                    if (ev < 100000)
                        ev = ev * 10 + (s[k] - '0');
                    k++;
                }
                bad = k == e0;
                q10 += (int)(eneg ? -ev : ev);
            }
            if (bad || k != n) {
                tl_j_fail(j, s, "a bad number");
                j->mark = NULL;
                return -1;
            }
            double d;
            if (dropped || !tl_decimal_to_double(w, q10, &d)) {
                char tmp[64];
                if (n < sizeof tmp) {
                    memcpy(tmp, s, n);
                    tmp[n] = 0;
                    d = strtod(tmp, NULL);
                } else {
                    char *big = tl_xmalloc(n + 1);
                    memcpy(big, s, n);
                    big[n] = 0;
                    d = strtod(big, NULL);
                    free(big);
                }
                if (neg)
                    d = -fabs(d);
                else
                    d = fabs(d);
            } else if (neg) {
                d = -d;
            }
            out->d = d;
            if (isint) {
                if (q10 == 0 && !dropped && (w <= (uint64_t)INT64_MAX || (neg && w == (uint64_t)INT64_MAX + 1))) {
                    out->is_int = out->integral = 1;
                    out->i = neg ? (int64_t)(0 - w) : (int64_t)w;
                } else {
                    out->big = 1;
                }
            } else if (isfinite(d) && d == floor(d) && fabs(d) < 9.2e18) {
                out->integral = 1;
                out->i = (int64_t)d;
            }
            j->p = q;
            j->mark = NULL;
            return 0;
        }
        int r = tl_j_refill(j);
        if (r < 0) {
            j->mark = NULL;
            return -1;
        }
    }
}

/* Skip a number, checking its grammar but not converting it (the bulk of a trace's
 * numbers are in events that are passed over).  NaN and Infinity go the long way. */
int tl_j_skip_number(J *j)
{
    for (;;) {
        const unsigned char *p = j->p;
        if (*p == '-')
            p++;
        if (*p == 'N' || *p == 'I') {
            jnum num;
            return tl_j_number(j, &num);
        }
        int ok;
        p = tl_json_number_scan(j->p, &ok);
        if (p < j->end || j->eof) {
            if (!ok || j_numchar(*p)) {
                jnum num; /* the full reader says what is wrong */
                return tl_j_number(j, &num);
            }
            j->p = (unsigned char *)p;
            return 0;
        }
        /* the number runs to the end of the window: read on, keeping it */
        j->mark = j->p;
        int r = tl_j_refill(j);
        j->mark = NULL;
        if (r < 0)
            return -1;
    }
}

/* true, false, null (p at its first letter). Returns 1, 0 (false), 2 (null), or -1. */
int tl_j_literal(J *j)
{
    int c = *j->p;
    const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
    size_t n = strlen(lit);
    j->mark = j->p;
    if (tl_j_have(j, n) < 0 || memcmp(j->p, lit, n) != 0) {
        j->mark = NULL;
        tl_j_fail(j, j->p, "expected a value");
        return -1;
    }
    j->mark = NULL;
    j->p += n;
    return c == 't' ? 1 : c == 'f' ? 0 : 2;
}

/* Skip any value (after spaces), checking that it is JSON. */
int tl_j_skip(J *j)
{
    /* an explicit stack of open containers: 1 = object, 0 = array */
    unsigned char stack[J_MAX_DEPTH];
    int depth = 0;
    int c = j_peek(j);
    if ((c == '{' || c == '[') && j->scan) {
        /* a container that lies in the window and is plainly JSON is passed over by its
         * structure; anything else (an error among it) is read token by token below */
        const unsigned char *e = tl_json_skip(j->p, j->end, TL_JSON_AT_VALUE, j->scan);
        if (e) {
            j->p = (unsigned char *)e;
            return 0;
        }
    }
    for (;;) {
        /* a value starts here */
        if (c < 0) {
            if (!j->failed)
                tl_j_fail(j, j->p, "the text ends where a value was expected");
            return -1;
        }
        if (c == '{' || c == '[') {
            if (depth >= J_MAX_DEPTH) {
                tl_j_fail(j, j->p, "values nested more than %d deep", J_MAX_DEPTH);
                return -1;
            }
            stack[depth++] = c == '{';
            j->p++;
            c = j_peek(j);
            if (c == (stack[depth - 1] ? '}' : ']')) {
                j->p++;
                depth--;
                goto after_value;
            }
            if (stack[depth - 1]) {
                if (c != '"') {
                    tl_j_fail(j, j->p, c < 0 ? "the text ends inside an object" : "expected a key string");
                    return -1;
                }
                if (tl_j_skip_string_fast(j) < 0 || tl_j_expect_here(j, ':', "':'") < 0)
                    return -1;
                c = j_peek(j);
            }
            continue;
        }
        if (c == '"') {
            if (tl_j_skip_string_fast(j) < 0)
                return -1;
        } else if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
            if (tl_j_skip_number(j) < 0)
                return -1;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if (tl_j_literal(j) < 0)
                return -1;
        } else {
            tl_j_fail(j, j->p, "expected a value");
            return -1;
        }
    after_value:
        if (depth == 0)
            return 0;
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            c = j_peek(j);
            if (stack[depth - 1]) {
                if (c != '"') {
                    tl_j_fail(j, j->p, c < 0 ? "the text ends inside an object" : "expected a key string");
                    return -1;
                }
                if (tl_j_skip_string_fast(j) < 0 || tl_j_expect_here(j, ':', "':'") < 0)
                    return -1;
                c = j_peek(j);
            }
            continue;
        }
        if (c == (stack[depth - 1] ? '}' : ']')) {
            j->p++;
            depth--;
            goto after_value;
        }
        if (!j->failed)
            tl_j_fail(j, j->p, c < 0 ? "the text ends inside %s" : "expected ',' or the end of %s",
                   stack[depth - 1] ? "an object" : "an array");
        return -1;
    }
}

/* Skip the rest of an object whose key/value pairs are of no interest (p after a value,
 * inside the object). */
int tl_j_skip_object_rest(J *j)
{
    if (j->scan) {
        const unsigned char *e = tl_json_skip(j->p, j->end, TL_JSON_IN_OBJECT_REST, j->scan);
        if (e) {
            j->p = (unsigned char *)e;
            return 0;
        }
    }
    for (;;) {
        int c = j_peek(j);
        if (c == '}') {
            j->p++;
            return 0;
        }
        if (c != ',') {
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside an object" : "expected ',' or '}'");
            return -1;
        }
        j->p++;
        if (j_peek(j) != '"') {
            if (!j->failed)
                tl_j_fail(j, j->p, "expected a key string");
            return -1;
        }
        if (tl_j_skip_string_fast(j) < 0 || tl_j_expect_here(j, ':', "':'") < 0)
            return -1;
        /* the values of a passed-over event are mostly strings and numbers */
        int v = j_peek(j);
        int r = v == '"' ? tl_j_skip_string_fast(j) : (v >= '0' && v <= '9') || v == '-' ? tl_j_skip_number(j) : tl_j_skip(j);
        if (r < 0)
            return -1;
    }
}

/* ---- Python reprs of argument values (TRACES.md §4.2) ----------------------------- */

/* repr() of a str: single quotes unless the text has a ' and no ", escapes as Python's. */
/* The bytes of a block that tl_py_str_repr must look at one by one: the backslash, the
 * quote, DEL, control characters (and, with them, non-ASCII bytes, which it writes as
 * they are). */
static inline tl_blk_mask repr_flags(tl_blk v, char quote)
{
#if TL_BLK_SSE2
    return tl_blk_eq(v, '\\') | tl_blk_eq(v, quote) | tl_blk_eq(v, 0x7f) | tl_blk_ctl_or_high(v);
#else
    uint64_t w = tl_sw_order(v);
    return tl_sw_eq(w, '\\') | tl_sw_eq(w, (unsigned char)quote) | tl_sw_eq(w, 0x7f) | tl_sw_ctl_or_high(w);
#endif
}

static int str_ptr_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

void tl_py_sorted_set_repr(tl_buf *b, const char **v, size_t n)
{
    qsort(v, n, sizeof *v, str_ptr_cmp);
    tl_buf_addc(b, '[');
    for (size_t q = 0, w = 0; q < n; q++) {
        if (q && strcmp(v[q - 1], v[q]) == 0)
            continue;
        if (w++)
            tl_buf_add(b, ", ", 2);
        tl_py_str_repr(b, v[q], strlen(v[q]));
    }
    tl_buf_addc(b, ']');
}

void tl_py_str_repr(tl_buf *b, const char *s, size_t n)
{
    int sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char quote = sq && !dq ? '"' : '\'';
    const unsigned char *u = (const unsigned char *)s;
    tl_buf_addc(b, quote);
    size_t run = 0; /* the bytes s[i - run, i): plain, not written yet */
    size_t i = 0;
    while (i < n) {
        /* Kernel and op names are long and plain: pass over them a block at a time up to
         * the first byte to look at. */
        while (i + TL_BLK <= n) {
            tl_blk_mask m = repr_flags(tl_blk_load(u + i), quote);
            if (m) {
                size_t d = TL_BLK_INDEX(m);
                i += d;
                run += d;
                break;
            }
            i += TL_BLK;
            run += TL_BLK;
        }
        if (i >= n)
            break;
        unsigned char c = u[i++];
        if (c >= 0x20 && c != 0x7f && c != '\\' && c != (unsigned char)quote) {
            run++; /* non-ASCII, or the tail after the last whole block */
            continue;
        }
        /* the backslash, the quote or a control character: written escaped */
        const char *esc;
        char hex[8];
        if (c == '\\')
            esc = "\\\\";
        else if (c == (unsigned char)quote)
            esc = quote == '\'' ? "\\'" : "\\\"";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            esc = hex;
        }
        tl_buf_add(b, s + i - 1 - run, run);
        run = 0;
        tl_buf_adds(b, esc);
    }
    tl_buf_add(b, s + n - run, run);
    tl_buf_addc(b, quote);
}

/* 1 (error set) when the repr being made has grown past j->repr_max. */
static int repr_over(J *j, const tl_buf *b)
{
    if (!j->repr_max || b->len <= j->repr_max)
        return 0;
    tl_j_fail(j, j->p, "args \"%s\" longer than %zu MiB as text (the limit for one argument)", j->repr_what ? j->repr_what : "a value",
              j->repr_max >> 20);
    return 1;
}

/* Read a value and append Python's str() of it with every list made a tuple (the
 * reference's list_to_tuple; dicts stay dicts, their lists made tuples too). */
int tl_j_repr(J *j, tl_buf *b, int depth)
{
    int c = j_peek(j);
    if (depth > J_MAX_DEPTH) {
        tl_j_fail(j, j->p, "values nested more than %d deep", J_MAX_DEPTH);
        return -1;
    }
    if (c == '[') {
        j->p++;
        tl_buf_addc(b, '(');
        int n = 0;
        if (j_peek(j) == ']') {
            j->p++;
            tl_buf_addc(b, ')');
            return 0;
        }
        for (;;) {
            if (n)
                tl_buf_add(b, ", ", 2);
            if (tl_j_repr(j, b, depth + 1) < 0 || repr_over(j, b))
                return -1;
            n++;
            c = j_peek(j);
            if (c == ',') {
                j->p++;
                continue;
            }
            if (c == ']') {
                j->p++;
                break;
            }
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside an array" : "expected ',' or ']'");
            return -1;
        }
        if (n == 1)
            tl_buf_addc(b, ',');
        tl_buf_addc(b, ')');
        return 0;
    }
    if (c == '{') {
        j->p++;
        tl_buf_addc(b, '{');
        int n = 0;
        if (j_peek(j) == '}') {
            j->p++;
            tl_buf_addc(b, '}');
            return 0;
        }
        for (;;) {
            const char *s;
            size_t sn;
            if (j_peek(j) != '"') {
                if (!j->failed)
                    tl_j_fail(j, j->p, "expected a key string");
                return -1;
            }
            if (tl_j_string(j, &s, &sn) < 0)
                return -1;
            if (n)
                tl_buf_add(b, ", ", 2);
            tl_py_str_repr(b, s, sn);
            tl_buf_add(b, ": ", 2);
            if (tl_j_expect_here(j, ':', "':'") < 0 || tl_j_repr(j, b, depth + 1) < 0 || repr_over(j, b))
                return -1;
            n++;
            c = j_peek(j);
            if (c == ',') {
                j->p++;
                continue;
            }
            if (c == '}') {
                j->p++;
                break;
            }
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside an object" : "expected ',' or '}'");
            return -1;
        }
        tl_buf_addc(b, '}');
        return 0;
    }
    if (c == '"') {
        const char *s;
        size_t sn;
        if (tl_j_string(j, &s, &sn) < 0)
            return -1;
        tl_py_str_repr(b, s, sn);
        return repr_over(j, b) ? -1 : 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        /* the common case, a plain integer (a dimension, a stride): its repr is its text */
        const unsigned char *p = j->p, *q = p + (*p == '-'), *r = q;
        while (*r >= '0' && *r <= '9')
            r++;
        if (r > q && !j_numchar(*r) && r < j->end && !(*q == '0' && r - q > 1)) {
            if (r - q == 1 && *q == '0')
                tl_buf_addc(b, '0'); /* -0 is 0 */
            else
                tl_buf_add(b, p, (size_t)(r - p));
            j->p = (unsigned char *)r;
            return 0;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
        unsigned char *start = j->p;
        jnum num;
        uint64_t off = j_offset(j, start);
        if (tl_j_number(j, &num) < 0)
            return -1;
        char t[TL_NUMFMT_MAX];
        if (num.is_int) {
            tl_buf_add(b, t, tl_fmt_int(num.i, t));
        } else if (isnan(num.d)) {
            tl_buf_adds(b, "nan");
        } else if (isinf(num.d)) {
            tl_buf_adds(b, num.d < 0 ? "-inf" : "inf");
        } else {
            /* an integer literal too long for int64 prints as its digits (Python's int);
             * the window still holds them: nothing was read since */
            const unsigned char *s = j->buf + (off - j->base);
            size_t n = (size_t)(j->p - s);
            if (memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n)) {
                tl_buf_add(b, t, tl_fmt_double(num.d, t));
            } else {
                if (*s == '-' && n == 2 && s[1] == '0')
                    s++, n--;
                tl_buf_add(b, s, n);
            }
        }
        return 0;
    }
    if (c == 't' || c == 'f' || c == 'n') {
        int v = tl_j_literal(j);
        if (v < 0)
            return -1;
        tl_buf_adds(b, v == 1 ? "True" : v == 0 ? "False" : "None");
        return 0;
    }
    if (!j->failed)
        tl_j_fail(j, j->p, c < 0 ? "the text ends where a value was expected" : "expected a value");
    return -1;
}
