/*
 * pyval.c - parse and print the Python values of shape arguments (pyval.h).
 *
 * The texts come from trace/jscan's repr of JSON values: tuples, dicts, strings in
 * Python's quoting, integers, floats in repr form, True/False/None, nan/inf.  The parser
 * is a recursive descent bounded by TL_PV_MAX_DEPTH, so a hostile trace cannot make it
 * recurse deeply or allocate beyond the text's own size.
 */
#include "perf/pyval.h"

#include "base/numfmt.h"
#include "trace/jscan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pvchunk {
    struct pvchunk *next;
    size_t cap;
    size_t used;
    max_align_t data[];
};

#define CHUNK_MIN (64u << 10)

void *tl_pv_alloc(tl_pv_pool *p, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    struct pvchunk *c = p->cur;
    /* the chunks kept by a reset are used again, in order */
    while (c && c->cap - c->used < n && c->next)
        c = c->next;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        struct pvchunk *nc = tl_xmalloc(sizeof *nc + cap);
        nc->cap = cap;
        nc->used = 0;
        nc->next = NULL;
        if (c)
            c->next = nc;
        else
            p->first = nc;
        c = nc;
    }
    p->cur = c;
    void *r = (char *)c->data + c->used;
    c->used += n;
    memset(r, 0, n);
    return r;
}

void tl_pv_pool_reset(tl_pv_pool *p)
{
    for (struct pvchunk *c = p->first; c; c = c->next)
        c->used = 0;
    p->cur = p->first;
}

void tl_pv_pool_free(tl_pv_pool *p)
{
    for (struct pvchunk *c = p->first, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    p->first = p->cur = NULL;
}

tl_pv *tl_pv_new(tl_pv_pool *p, int kind)
{
    tl_pv *v = tl_pv_alloc(p, sizeof *v);
    v->kind = (uint8_t)kind;
    return v;
}
tl_pv *tl_pv_int(tl_pv_pool *p, int64_t i)
{
    tl_pv *v = tl_pv_new(p, TL_PV_INT);
    v->u.i = i;
    return v;
}
tl_pv *tl_pv_float(tl_pv_pool *p, double f)
{
    tl_pv *v = tl_pv_new(p, TL_PV_FLOAT);
    v->u.f = f;
    return v;
}
tl_pv *tl_pv_bool(tl_pv_pool *p, int b)
{
    tl_pv *v = tl_pv_new(p, TL_PV_BOOL);
    v->u.i = !!b;
    return v;
}
tl_pv *tl_pv_none(tl_pv_pool *p) { return tl_pv_new(p, TL_PV_NONE); }
tl_pv *tl_pv_seq(tl_pv_pool *p, int kind, size_t n)
{
    tl_pv *v = tl_pv_new(p, kind);
    v->n = (uint32_t)n;
    v->u.items = n ? tl_pv_alloc(p, n * sizeof *v->u.items) : NULL;
    return v;
}
tl_pv *tl_pv_str(tl_pv_pool *p, const char *s, size_t n)
{
    tl_pv *v = tl_pv_new(p, TL_PV_STR);
    char *d = tl_pv_alloc(p, n + 1);
    memcpy(d, s, n);
    v->u.s = d;
    v->n = (uint32_t)n;
    tl_buf b = {0};
    tl_py_str_repr(&b, s, n);
    char *r = tl_pv_alloc(p, b.len + 1);
    memcpy(r, b.data, b.len);
    v->repr = r;
    v->rlen = (uint32_t)b.len;
    tl_buf_free(&b);
    return v;
}

const tl_pv *tl_pv_as(tl_pv_pool *p, const tl_pv *v, int kind)
{
    if (!v || !tl_pv_is_seq(v) || v->kind == kind)
        return v;
    tl_pv *c = tl_pv_new(p, kind);
    *c = *v;
    c->kind = (uint8_t)kind;
    c->repr = NULL; /* the text was the other kind's */
    c->rlen = 0;
    return c;
}

/* ---- parsing ----------------------------------------------------------------------- */

typedef struct P {
    const char *s;
    tl_pv_pool *pool;
} P;

static void ws(P *p)
{
    while (*p->s == ' ')
        p->s++;
}

static int parse(P *p, tl_pv *out, int depth);

static int parse_seq(P *p, tl_pv *out, char close, int depth)
{
    /* items straight into the pool, the array doubled there when full (the pool is
     * reset per event, so the abandoned copies cost nothing after it) */
    tl_pv *items = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    const char *start = p->s;
    p->s++;
    ws(p);
    while (*p->s && *p->s != close) {
        tl_pv item = {0};
        if (parse(p, &item, depth + 1) < 0)
            return -1;
        if (n < TL_PV_MAX_ITEMS) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                tl_pv *ni = tl_pv_alloc(p->pool, ncap * sizeof *ni);
                if (n)
                    memcpy(ni, items, n * sizeof *ni);
                items = ni;
                cap = ncap;
            }
            items[n++] = item;
        } else {
            bad = 1;
        }
        ws(p);
        if (*p->s == ',') {
            p->s++;
            ws(p);
        } else if (*p->s != close) {
            return -1;
        }
    }
    if (*p->s != close)
        return -1;
    p->s++;
    if (bad) {
        out->kind = TL_PV_BAD;
    } else {
        out->kind = close == ')' ? TL_PV_TUPLE : TL_PV_LIST;
        out->n = (uint32_t)n;
        out->u.items = items;
        /* the text is already this tuple's repr (jscan writes Python's): kept to print it
         * again for free */
        if (close == ')') {
            out->repr = start;
            out->rlen = (uint32_t)(p->s - start);
        }
    }
    return 0;
}

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

static void put_utf8(tl_buf *b, unsigned long cp)
{
    char u[4];
    if (cp < 0x80) {
        tl_buf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[2] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f));
        tl_buf_add(b, u, 4);
    }
}

static int parse_str(P *p, tl_pv *out)
{
    char q = *p->s;
    const char *start = p->s++;
    int esc = 0;
    while (*p->s && *p->s != q) {
        if (*p->s == '\\') {
            esc = 1;
            if (!p->s[1])
                return -1;
            p->s++;
        }
        p->s++;
    }
    if (*p->s != q)
        return -1;
    p->s++;
    out->kind = TL_PV_STR;
    out->repr = start;
    out->rlen = (uint32_t)(p->s - start);
    if (!esc) {
        out->u.s = start + 1;
        out->n = out->rlen - 2;
        return 0;
    }
    tl_buf b = {0};
    for (const char *c = start + 1; c < p->s - 1; c++) {
        if (*c != '\\') {
            tl_buf_addc(&b, *c);
            continue;
        }
        c++;
        int nd = *c == 'x' ? 2 : *c == 'u' ? 4 : *c == 'U' ? 8 : 0;
        if (nd) {
            unsigned long cp = 0;
            for (int k = 1; k <= nd; k++) {
                int h = hexval((unsigned char)c[k]);
                if (h < 0)
                    break;
                cp = cp * 16 + (unsigned long)h;
            }
            c += nd;
            put_utf8(&b, cp > 0x10ffff ? 0xfffd : cp);
            continue;
        }
        char d = *c == 'n' ? '\n' : *c == 'r' ? '\r' : *c == 't' ? '\t' : *c;
        tl_buf_addc(&b, d);
    }
    char *d = tl_pv_alloc(p->pool, b.len + 1);
    if (b.len)
        memcpy(d, b.data, b.len);
    out->u.s = d;
    out->n = (uint32_t)b.len;
    tl_buf_free(&b);
    return 0;
}

static int parse(P *p, tl_pv *out, int depth)
{
    ws(p);
    char c = *p->s;
    if (depth > TL_PV_MAX_DEPTH) {
        /* too deep to be a shape: skip the value by its brackets, keep it as BAD */
        int lvl = 0;
        char q = 0;
        for (; *p->s; p->s++) {
            char x = *p->s;
            if (q) {
                if (x == '\\' && p->s[1])
                    p->s++;
                else if (x == q)
                    q = 0;
                continue;
            }
            if (x == '\'' || x == '"')
                q = x;
            else if (x == '(' || x == '[' || x == '{')
                lvl++;
            else if (x == ')' || x == ']' || x == '}') {
                if (lvl == 0)
                    break;
                if (--lvl == 0) {
                    p->s++;
                    break;
                }
            } else if (x == ',' && lvl == 0)
                break;
        }
        out->kind = TL_PV_BAD;
        return 0;
    }
    /* an integer of up to 18 digits (the common case: a dimension, a stride) */
    if ((c >= '0' && c <= '9') || c == '-') {
        const char *st = p->s, *q0 = st + (*st == '-'), *r = q0;
        uint64_t acc = 0;
        while (*r >= '0' && *r <= '9' && r - q0 < 18)
            acc = acc * 10 + (uint64_t)(*r++ - '0');
        if (r > q0 && (*r == ',' || *r == ')' || *r == ']' || *r == ' ' || *r == 0 || *r == ':' || *r == '}')) {
            out->kind = TL_PV_INT;
            out->u.i = *st == '-' ? -(int64_t)acc : (int64_t)acc;
            p->s = r;
            return 0;
        }
    }
    if (c == '(')
        return parse_seq(p, out, ')', depth);
    if (c == '[')
        return parse_seq(p, out, ']', depth);
    if (c == '{') {
        /* a dict: not a shape; parse its items only to find its end */
        tl_pv tmp;
        p->s++;
        ws(p);
        while (*p->s && *p->s != '}') {
            if (parse(p, &tmp, depth + 1) < 0)
                return -1;
            ws(p);
            if (*p->s++ != ':')
                return -1;
            if (parse(p, &tmp, depth + 1) < 0)
                return -1;
            ws(p);
            if (*p->s == ',')
                p->s++, ws(p);
            else if (*p->s != '}')
                return -1;
        }
        if (*p->s != '}')
            return -1;
        p->s++;
        out->kind = TL_PV_BAD;
        return 0;
    }
    if (c == '\'' || c == '"')
        return parse_str(p, out);
    if (c == 'N' && strncmp(p->s, "None", 4) == 0) {
        p->s += 4;
        out->kind = TL_PV_NONE;
        return 0;
    }
    if ((c == 'T' && strncmp(p->s, "True", 4) == 0) || (c == 'F' && strncmp(p->s, "False", 5) == 0)) {
        out->kind = TL_PV_BOOL;
        out->u.i = c == 'T';
        p->s += c == 'T' ? 4 : 5;
        return 0;
    }
    /* a number: a float repr (with '.', 'e', inf, nan) or an integer too long for the
     * fast path above */
    const char *st = p->s;
    const char *q = st + (*st == '-');
    if (strncmp(q, "inf", 3) == 0 || strncmp(q, "nan", 3) == 0) {
        out->kind = TL_PV_FLOAT;
        out->u.f = q[0] == 'n' ? NAN : *st == '-' ? -INFINITY : INFINITY;
        p->s = q + 3;
        return 0;
    }
    const char *e = q;
    int isf = 0;
    while ((*e >= '0' && *e <= '9') || *e == '.' || *e == 'e' || *e == 'E' || ((*e == '+' || *e == '-') && (e[-1] == 'e' || e[-1] == 'E'))) {
        isf |= *e == '.' || *e == 'e' || *e == 'E';
        e++;
    }
    if (e == q)
        return -1;
    char tmp[64];
    size_t n = (size_t)(e - st);
    p->s = e;
    if (n >= sizeof tmp) {
        out->kind = isf ? TL_PV_FLOAT : TL_PV_BAD; /* an integer beyond int64 */
        out->u.f = isf ? strtod(st, NULL) : 0;
        return 0;
    }
    memcpy(tmp, st, n);
    tmp[n] = 0;
    if (isf) {
        out->kind = TL_PV_FLOAT;
        out->u.f = strtod(tmp, NULL);
        return 0;
    }
    errno = 0;
    long long v = strtoll(tmp, NULL, 10);
    if (errno) {
        out->kind = TL_PV_BAD;
        return 0;
    }
    out->kind = TL_PV_INT;
    out->u.i = v;
    return 0;
}

const tl_pv *tl_pv_parse(tl_pv_pool *pool, const char *text)
{
    if (!text)
        return NULL;
    P p = {text, pool};
    tl_pv *v = tl_pv_new(pool, TL_PV_NONE);
    if (parse(&p, v, 0) < 0) {
        v->kind = TL_PV_BAD;
        return v;
    }
    ws(&p);
    if (*p.s)
        v->kind = TL_PV_BAD;
    return v;
}

/* ---- printing ---------------------------------------------------------------------- */

void tl_pv_repr(tl_buf *b, const tl_pv *v)
{
    char t[TL_NUMFMT_MAX];
    if (!v) {
        tl_buf_adds(b, "None");
        return;
    }
    switch (v->kind) {
    case TL_PV_NONE:
        tl_buf_adds(b, "None");
        break;
    case TL_PV_BOOL:
        tl_buf_adds(b, v->u.i ? "True" : "False");
        break;
    case TL_PV_INT:
        tl_buf_add(b, t, tl_fmt_int(v->u.i, t));
        break;
    case TL_PV_FLOAT:
        if (isnan(v->u.f))
            tl_buf_adds(b, "nan");
        else if (isinf(v->u.f))
            tl_buf_adds(b, v->u.f < 0 ? "-inf" : "inf");
        else
            tl_buf_add(b, t, tl_fmt_double(v->u.f, t));
        break;
    case TL_PV_STR:
        tl_buf_add(b, v->repr, v->rlen);
        break;
    case TL_PV_TUPLE:
    case TL_PV_LIST:
        if (v->kind == TL_PV_TUPLE && v->repr) {
            tl_buf_add(b, v->repr, v->rlen);
            break;
        }
        tl_buf_addc(b, v->kind == TL_PV_TUPLE ? '(' : '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                tl_buf_add(b, ", ", 2);
            tl_pv_repr(b, &v->u.items[i]);
        }
        if (v->kind == TL_PV_TUPLE && v->n == 1)
            tl_buf_addc(b, ',');
        tl_buf_addc(b, v->kind == TL_PV_TUPLE ? ')' : ']');
        break;
    default:
        tl_buf_adds(b, "None");
    }
}

void tl_pv_tuple_text_as_list(tl_buf *b, const char *text)
{
    char q = 0;
    for (const char *c = text; *c; c++) {
        char x = *c;
        if (q) {
            tl_buf_addc(b, x);
            if (x == '\\' && c[1])
                tl_buf_addc(b, *++c);
            else if (x == q)
                q = 0;
            continue;
        }
        if (x == '\'' || x == '"') {
            q = x;
            tl_buf_addc(b, x);
        } else if (x == '(') {
            tl_buf_addc(b, '[');
        } else if (x == ')') {
            /* "(x,)": a one-item tuple's comma is no list's */
            if (b->len && b->data[b->len - 1] == ',')
                b->len--;
            tl_buf_addc(b, ']');
        } else {
            tl_buf_addc(b, x);
        }
    }
}

/* ---- accessors --------------------------------------------------------------------- */

int tl_pv_is_seq(const tl_pv *v) { return v && (v->kind == TL_PV_TUPLE || v->kind == TL_PV_LIST); }
int tl_pv_is_int(const tl_pv *v) { return v && v->kind == TL_PV_INT; }

const tl_pv *tl_pv_at(const tl_pv *v, size_t i)
{
    if (!tl_pv_is_seq(v) || i >= v->n)
        return NULL;
    return &v->u.items[i];
}

int tl_pv_prod(const tl_pv *v, int64_t *out)
{
    if (!tl_pv_is_seq(v))
        return 0;
    int64_t r = 1;
    for (uint32_t i = 0; i < v->n; i++) {
        const tl_pv *x = &v->u.items[i];
        if (x->kind != TL_PV_INT || x->u.i < 0 || __builtin_mul_overflow(r, x->u.i, &r))
            return 0;
    }
    *out = r;
    return 1;
}

int tl_pv_str_is(const tl_pv *v, const char *lit)
{
    return v && v->kind == TL_PV_STR && v->n == strlen(lit) && memcmp(v->u.s, lit, v->n) == 0;
}
