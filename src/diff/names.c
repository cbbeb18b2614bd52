/*
 * names.c - the names the diff compares (TRACES.md §5, "Name normalisation"), interned
 * so that every comparison of the alignment is one of two integers.
 */
#include "diff/diff_int.h"

#include "base/hash.h"

#include <stdio.h>

/* ---- interning ------------------------------------------------------------------- */


static void dst_rehash(dstrtab *t, size_t nslots)
{
    free(t->slots);
    t->slots = tl_xcalloc(nslots, sizeof *t->slots);
    t->mask = nslots - 1;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->e[id].hash & t->mask;
        while (t->slots[i])
            i = (i + 1) & t->mask;
        t->slots[i] = (uint32_t)id + 1;
    }
}

uint32_t tl_dst_intern(dstrtab *t, const char *s, size_t len, tl_arena *arena)
{
    if (!t->slots)
        dst_rehash(t, 64);
    uint64_t h = tl_hash_bytes(s, len);
    size_t i = h & t->mask;
    for (uint32_t v; (v = t->slots[i]) != 0; i = (i + 1) & t->mask) {
        const dstr *x = &t->e[v - 1];
        if (x->hash == h && x->len == len && memcmp(x->s, s, len) == 0)
            return v - 1;
    }
    TL_GROW(t->e, t->cap, t->n + 1);
    uint32_t id = (uint32_t)t->n++;
    t->e[id].s = arena ? tl_arena_strndup(arena, s, len) : s;
    t->e[id].len = len;
    t->e[id].hash = h;
    t->slots[i] = id + 1;
    if (t->n * 2 > t->mask)
        dst_rehash(t, (t->mask + 1) * 2);
    return id;
}

uint32_t tl_dst_find(const dstrtab *t, const char *s, size_t len)
{
    if (!t->slots)
        return UINT32_MAX;
    uint64_t h = tl_hash_bytes(s, len);
    for (size_t i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask) {
        const dstr *x = &t->e[t->slots[i] - 1];
        if (x->hash == h && x->len == len && memcmp(x->s, s, len) == 0)
            return t->slots[i] - 1;
    }
    return UINT32_MAX;
}

void tl_dst_free(dstrtab *t)
{
    free(t->slots);
    free(t->e);
    memset(t, 0, sizeof *t);
}

/* ---- normalisation --------------------------------------------------------------- */

static int is_hex(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Length of the character at s[i] (UTF-8; a stray byte counts as one) and whether it
 * is whitespace as Python's re \s sees it in a str pattern. */
static size_t char_at(const char *s, size_t i, size_t n, int *space)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *space = c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
        return 1;
    }
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    if (i + len > n)
        len = 1;
    uint32_t cp = 0;
    if (len == 2)
        cp = ((c & 0x1fu) << 6) | (s[i + 1] & 0x3fu);
    else if (len == 3)
        cp = ((c & 0x0fu) << 12) | ((s[i + 1] & 0x3fu) << 6) | (s[i + 2] & 0x3fu);
    *space = cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
             cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
    return len;
}

void tl_diff_normalize(const char *s, size_t n, int strip, tl_buf *out)
{
    tl_buf a = {0};
    /* 0x[0-9a-fA-F]+ -> 0xXXXX */
    for (size_t i = 0; i < n;) {
        if (s[i] == '0' && i + 2 < n + 0 && s[i + 1] == 'x' && is_hex((unsigned char)s[i + 2])) {
            tl_buf_add(&a, "0xXXXX", 6);
            for (i += 2; i < n && is_hex((unsigned char)s[i]); i++)
                ;
        } else {
            tl_buf_addc(&a, s[i++]);
        }
    }
    /* \.py\(\d+\): -> .py: */
    tl_buf_clear(out);
    for (size_t i = 0; i < a.len;) {
        if (a.len - i >= 7 && memcmp(a.data + i, ".py(", 4) == 0 && is_digit((unsigned char)a.data[i + 4])) {
            size_t j = i + 4;
            while (j < a.len && is_digit((unsigned char)a.data[j]))
                j++;
            if (j + 1 < a.len && a.data[j] == ')' && a.data[j + 1] == ':') {
                tl_buf_add(out, ".py:", 4);
                i = j + 2;
                continue;
            }
        }
        tl_buf_addc(out, a.data[i++]);
    }
    if (strip) {
        /* :\s+\S+$ -> "" ("$" also matches before a final newline).  Only the colon just
         * before the last run of whitespace can start a match. */
        size_t len = out->len, e = len && out->data[len - 1] == '\n' ? len - 1 : len;
        size_t ws_start = SIZE_MAX, ws_end = 0;
        int prev_space = 0;
        for (size_t i = 0; i < e;) {
            int sp;
            size_t cl = char_at(out->data, i, e, &sp);
            if (sp && !prev_space)
                ws_start = i;
            if (sp)
                ws_end = i + cl;
            prev_space = sp;
            i += cl;
        }
        if (ws_start != SIZE_MAX && ws_start > 0 && out->data[ws_start - 1] == ':' && ws_end < e && !prev_space) {
            memmove(out->data + ws_start - 1, out->data + e, len - e);
            out->len = ws_start - 1 + (len - e);
        }
        /* ^.*\/([^/]+\.py)$ -> \1 (".*" does not cross a newline) */
        len = out->len;
        const char *p = out->data;
        size_t slash = SIZE_MAX;
        for (size_t i = 0; i < len; i++)
            if (p[i] == '/')
                slash = i;
        if (slash != SIZE_MAX && !memchr(p, '\n', slash)) {
            size_t ends[2] = {len, len && p[len - 1] == '\n' ? len - 1 : SIZE_MAX};
            for (int k = 0; k < 2; k++) {
                size_t end = ends[k];
                if (end == SIZE_MAX || end < slash + 5 || memcmp(p + end - 3, ".py", 3) != 0)
                    continue;
                size_t keep = end - (slash + 1);
                memmove(out->data, p + slash + 1, len - (slash + 1));
                out->len = keep + (len - end);
                break;
            }
        }
    }
    if ((out->len == 21 && memcmp(out->data, "hipModuleLaunchKernel", 21) == 0) ||
        (out->len == 14 && memcmp(out->data, "cuLaunchKernel", 14) == 0)) {
        tl_buf_clear(out);
        tl_buf_adds(out, "__kernel_launch__");
    }
    tl_buf_cstr(out);
    tl_buf_free(&a);
}

void tl_diff_strip_digits(const char *s, tl_buf *out)
{
    tl_buf_clear(out);
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (s[i] == '(' && i + 1 < n && is_digit((unsigned char)s[i + 1])) {
            size_t j = i + 1;
            while (j < n && is_digit((unsigned char)s[j]))
                j++;
            if (j < n && s[j] == ')') {
                i = j + 1;
                continue;
            }
        }
        tl_buf_addc(out, s[i++]);
    }
    tl_buf_cstr(out);
}

void tl_diff_py_repr(const char *s, tl_buf *out)
{
    int sq = strchr(s, '\'') != NULL, dq = strchr(s, '"') != NULL;
    char q = sq && !dq ? '"' : '\'';
    tl_buf_addc(out, q);
    const unsigned char *p = (const unsigned char *)s, *run = p;
    for (; *p; p++) {
        unsigned char c = *p;
        if (c >= 0x20 && c != 0x7f && c != (unsigned char)q && c != '\\')
            continue; /* plain: copied with its run */
        tl_buf_add(out, run, (size_t)(p - run));
        run = p + 1;
        if (c == (unsigned char)q || c == '\\') {
            tl_buf_addc(out, '\\');
            tl_buf_addc(out, (char)c);
        } else if (c == '\n') {
            tl_buf_adds(out, "\\n");
        } else if (c == '\r') {
            tl_buf_adds(out, "\\r");
        } else if (c == '\t') {
            tl_buf_adds(out, "\\t");
        } else {
            tl_buf_printf(out, "\\x%02x", c);
        }
    }
    tl_buf_add(out, run, (size_t)(p - run));
    tl_buf_addc(out, q);
}

/* ---- per-event names --------------------------------------------------------------- */

/* A small pointer -> index map: names are interned per trace, so a trace has as many
 * distinct name pointers as distinct names, and one lookup by pointer is far cheaper
 * than hashing a 300-character kernel name for every event. */
typedef struct pmap {
    const char **key;
    uint32_t *val;
    size_t mask, n;
} pmap;

static size_t pmap_slot(const pmap *m, const char *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(h >> 20) & m->mask;
    while (m->key[i] && m->key[i] != p)
        i = (i + 1) & m->mask;
    return i;
}

static void pmap_grow(pmap *m)
{
    pmap old = *m;
    size_t cap = old.key ? (old.mask + 1) * 2 : 256;
    m->key = tl_xcalloc_dense(cap, sizeof *m->key);
    m->val = tl_xcalloc_dense(cap, sizeof *m->val);
    m->mask = cap - 1;
    for (size_t i = 0; old.key && i <= old.mask; i++)
        if (old.key[i]) {
            size_t j = pmap_slot(m, old.key[i]);
            m->key[j] = old.key[i];
            m->val[j] = old.val[i];
        }
    free(old.key);
    free(old.val);
}

static uint32_t name_index(tl_diff *d, const char *s, tl_buf *scratch)
{
    size_t len = strlen(s);
    uint32_t id = tl_dst_intern(&d->raw, s, len, NULL);
    if (id < d->nnames)
        return id;
    TL_GROW(d->names, d->capnames, d->nnames + 1);
    dname *nm = &d->names[d->nnames++];
    memset(nm, 0, sizeof *nm);
    nm->s = s;
    if (len == 0) {
        nm->norm = nm->strip = 0; /* the reference's None */
    } else {
        tl_diff_normalize(s, len, 0, scratch);
        nm->norm = tl_dst_intern(&d->norm, scratch->data, scratch->len, &d->arena);
        tl_diff_normalize(s, len, 1, scratch);
        nm->strip = tl_dst_intern(&d->norm, scratch->data, scratch->len, &d->arena);
    }
    return id;
}

/* Give every event of both traces its name index. */
void tl_diff_names(tl_diff *d)
{
    tl_buf scratch = {0};
    /* id 0 of the normalised table: "none", a text no normalised name can be */
    tl_dst_intern(&d->norm, "\x01<none>", 8, NULL);
    for (int k = 0; k < 2; k++) {
        const tl_trace *t = d->s[k].t;
        d->s[k].nm = tl_xmalloc_filled((t->nev ? t->nev : 1) * sizeof *d->s[k].nm);
        pmap m = {0};
        pmap_grow(&m);
        for (size_t e = 0; e < t->nev; e++) {
            const char *s = t->ev[e].name ? t->ev[e].name : "";
            size_t i = pmap_slot(&m, s);
            uint32_t v;
            if (m.key[i]) {
                v = m.val[i];
            } else {
                m.key[i] = s;
                m.val[i] = v = name_index(d, s, &scratch);
                if (++m.n * 2 > m.mask)
                    pmap_grow(&m);
            }
            d->s[k].nm[e] = v;
        }
        free(m.key);
        free(m.val);
    }
    tl_buf_free(&scratch);
}

const char *tl_diff_op_name(tl_diff *d, int k, uint32_t e)
{
    const char *s = ev_name(d, k, e);
    if (s && *s)
        return s;
    return tl_arena_printf(&d->arena, "%u", (unsigned)d->s[k].t->ev[e].uid);
}

const char *tl_diff_lca_name(tl_diff *d, int k, uint32_t e)
{
    const char *s = ev_name(d, k, e);
    if (!s || !*s)
        return tl_diff_op_name(d, k, e); /* a UID: no "(digits)" to remove */
    dname *nm = &d->names[d->s[k].nm[e]];
    if (!nm->lca) {
        if (!strchr(s, '(')) {
            nm->lca = s;
        } else {
            tl_buf b = {0};
            tl_diff_strip_digits(s, &b);
            nm->lca = tl_arena_strdup(&d->arena, tl_buf_cstr(&b));
            tl_buf_free(&b);
        }
    }
    return nm->lca;
}
