/*
 * infer.c - attribution of graph replays to capture-time launches (INFERENCE.md §2).
 *
 * Everything is decided before the execution tree is touched: the roots and their
 * launches, the capture chosen for each, the alignment of each pair.  Only when no
 * error of §5 applies are the capture subtrees grafted, so a refusal leaves the trace
 * as it was loaded.
 */
#include "trace/infer.h"
#include "trace/kmap.h"
#include "trace/trace_impl.h"

#include "base/sort.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- iteration annotations (§2.2, §2.3) -------------------------------------------------- */

/* The frameworks' iteration annotations, matched at the start of the name: the detailed
 * ones carry the roofline aggregates and win when any is present. */
static const struct {
    const char *re;
    int detailed;
} root_patterns[] = {
    {"^execute_[0-9]+_context_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)_generation_[0-9]+"
     "\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)", 1},
    {"^(prefill|decode)\\[.*sqsq=[0-9]+.*\\]", 1},
    {"^step\\[(EXTEND|DECODE|MIXED)\\b[^]]*sqsq=[0-9]+[^]]*\\]", 1},
    {"^execute_context_[0-9]+\\([0-9]+\\)_generation_[0-9]+\\([0-9]+\\)", 0},
    {"^step\\[(EXTEND|DECODE|MIXED)\\b.*\\]", 0},
    {"^(prefill|decode)\\[.*\\]", 0},
    {"^execute_diffusion_[0-9]+_[0-9]+x[0-9]+", 0},
};
#define NPAT (sizeof root_patterns / sizeof *root_patterns)
enum { P_VLLM_D, P_ATOM_D, P_SGL_D, P_VLLM_N, P_SGL_N, P_ATOM_N, P_DIFF };

static regex_t pat_re[NPAT];
static int pat_ready;

static void patterns_init(void)
{
    if (pat_ready)
        return;
    for (size_t i = 0; i < NPAT; i++)
        if (regcomp(&pat_re[i], root_patterns[i].re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0)
            abort(); /* the table is ours: a pattern that does not compile is a bug */
    pat_ready = 1;
}

static int pat_match(int p, const char *s) { return regexec(&pat_re[p], s, 0, NULL, 0) == 0; }

int tl_infer_root_kind(const char *name)
{
    patterns_init();
    int kind = 0;
    for (size_t i = 0; i < NPAT; i++)
        if (pat_match((int)i, name))
            kind = root_patterns[i].detailed ? 2 : kind > 1 ? kind : 1;
    return kind;
}

/* Python's int() of a decimal field, 0 when it is not one. */
static int64_t safe_int(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    int64_t v = 0;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i++;
    }
    if (i == n)
        return 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        if (v < INT64_MAX / 10)
            v = v * 10 + (s[i] - '0');
    }
    return neg ? -v : v;
}

/* vLLM's token list: ( and ) become _, every run of s, q, k letters becomes _, split on _. */
static size_t vllm_tokens(const char *name, char *buf, size_t bufn, const char **tok, size_t *len, size_t max)
{
    size_t o = 0;
    for (const char *p = name; *p && o + 1 < bufn; p++) {
        char c = *p == '(' || *p == ')' ? '_' : *p;
        if (c == 's' || c == 'q' || c == 'k') {
            while (p[1] == 's' || p[1] == 'q' || p[1] == 'k')
                p++;
            c = '_';
        }
        buf[o++] = c;
    }
    buf[o] = 0;
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= o && n < max; i++) {
        if (i == o || buf[i] == '_') {
            tok[n] = buf + start;
            len[n++] = i - start;
            start = i + 1;
        }
    }
    return n;
}

/* The `key=digits` pairs of `body` (the last one of a key wins). */
static int64_t kv_digits(const char *body, size_t n, const char *key, int *found)
{
    size_t kl = strlen(key);
    int64_t v = 0;
    *found = 0;
    for (size_t i = 0; i + kl < n; i++) {
        int word_start = i == 0 || !(body[i - 1] == '_' || (body[i - 1] >= '0' && body[i - 1] <= '9') ||
                                     ((body[i - 1] | 32) >= 'a' && (body[i - 1] | 32) <= 'z'));
        if (!word_start || strncmp(body + i, key, kl) != 0 || body[i + kl] != '=')
            continue;
        size_t j = i + kl + 1, s = j;
        while (j < n && body[j] >= '0' && body[j] <= '9')
            j++;
        if (j > s) {
            v = safe_int(body + s, j - s);
            *found = 1;
        }
    }
    return v;
}

/* SGLang's native step[WORD bs=B] or step[WORD bs=B toks=T], exactly: 1 and *batch
 * (DECODE: B; else T, or B when T is 0 or absent), 0 for any other text. */
static int sglang_native_batch(const char *name, int64_t *batch)
{
    const char *p = name + 5, *w = p;
    while (*p == '_' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z'))
        p++;
    int ok = p > w && (*p == ' ' || *p == '\t');
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
        p++;
    ok = ok && strncmp(p, "bs=", 3) == 0;
    int64_t bs = 0, toks = 0;
    if (ok) {
        p += 3;
        const char *d = p;
        while (*p >= '0' && *p <= '9')
            p++;
        ok = p > d;
        bs = safe_int(d, (size_t)(p - d));
    }
    if (ok && *p != ']') {
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f' || *q == '\v')
            q++;
        if (q > p && strncmp(q, "toks=", 5) == 0) {
            q += 5;
            const char *d = q;
            while (*q >= '0' && *q <= '9')
                q++;
            if (q > d && *q == ']') {
                toks = safe_int(d, (size_t)(q - d));
                p = q;
            }
        }
    }
    if (ok && *p == ']') {
        int decode = (size_t)(w - name) == 5 && strncmp(w, "DECODE", 6) == 0 && (w[6] == ' ' || w[6] == '\t');
        int64_t b = decode ? bs : toks;
        *batch = b ? b : bs;
        return 1;
    }
    return 0;
}

int tl_infer_step_batch(const char *name, int64_t *batch)
{
    patterns_init();
    char buf[1024];
    const char *tok[32];
    size_t len[32];
    if (pat_match(P_VLLM_D, name)) {
        size_t n = vllm_tokens(name, buf, sizeof buf, tok, len, 32);
        if (n > 13) {
            *batch = safe_int(tok[5], len[5]) + safe_int(tok[13], len[13]);
            return 0;
        }
    }
    if (pat_match(P_VLLM_N, name)) {
        size_t n = vllm_tokens(name, buf, sizeof buf, tok, len, 32);
        if (n > 7) {
            *batch = safe_int(tok[3], len[3]) + safe_int(tok[7], len[7]);
            return 0;
        }
    }
    if (pat_match(P_SGL_D, name)) {
        const char *lb = strchr(name, '['), *rb = strrchr(name, ']');
        if (lb && rb && rb > lb) {
            size_t n = (size_t)(rb - lb - 1);
            int f;
            int64_t b = kv_digits(lb + 1, n, "c_sq", &f) + kv_digits(lb + 1, n, "g_sq", &f);
            if (b == 0)
                b = kv_digits(lb + 1, n, "toks", &f);
            if (b == 0)
                b = kv_digits(lb + 1, n, "bs", &f);
            *batch = b;
            return 0;
        }
    }
    if (pat_match(P_SGL_N, name) && sglang_native_batch(name, batch))
        return 0;
    if (pat_match(P_ATOM_D, name) || pat_match(P_ATOM_N, name)) {
        const char *lb = strchr(name, '['), *rb = strrchr(name, ']');
        int64_t tokv = 0;
        if (lb && rb && rb > lb) {
            /* the value of tok= : a [..] list or the next run of non-space bytes */
            const char *body = lb + 1;
            size_t n = (size_t)(rb - body);
            for (size_t i = 0; i + 4 <= n; i++) {
                int word_start = i == 0 || body[i - 1] == ' ' || body[i - 1] == '\t';
                if (!word_start || strncmp(body + i, "tok=", 4) != 0)
                    continue;
                size_t j = i + 4, s = j;
                while (j < n && body[j] != ' ' && body[j] != '\t')
                    j++;
                tokv = safe_int(body + s, j - s);
            }
        }
        *batch = tokv;
        return 0;
    }
    if (pat_match(P_DIFF, name)) {
        *batch = safe_int(name + 18, strspn(name + 18, "0123456789"));
        return 0;
    }
    /* otherwise the second `_` field, when it is an integer */
    const char *u = strchr(name, '_');
    if (u) {
        const char *f = u + 1, *e = strchr(f, '_');
        size_t n = e ? (size_t)(e - f) : strlen(f);
        size_t lead = 0;
        while (lead < n && f[lead] == '-')
            lead++;
        if (n > lead && strspn(f + lead, "0123456789") == n - lead) {
            *batch = (lead ? -1 : 1) * safe_int(f + lead, n - lead);
            return 0;
        }
    }
    return -1;
}

static int is_word(char c) { return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

/* ATOM's `key=value` pairs (a value is a [..] list, maybe with a "...+N" tail, or a run of
 * non-space bytes; the last of a key wins): tok, sk, sqsq, sqsk; found[i] when present. */
static void atom_values(const char *body, size_t n, int64_t v[4], int found[4])
{
    static const char *const keys[4] = {"tok", "sk", "sqsq", "sqsk"};
    for (int k = 0; k < 4; k++)
        v[k] = 0, found[k] = 0;
    size_t i = 0;
    while (i < n) {
        if (!is_word(body[i])) {
            i++;
            continue;
        }
        size_t ks = i;
        while (i < n && is_word(body[i]))
            i++;
        size_t kl = i - ks;
        if (i >= n || body[i] != '=' || i + 1 >= n)
            continue;
        size_t vs = i + 1, ve;
        const char *rb = body[vs] == '[' ? memchr(body + vs, ']', n - vs) : NULL;
        if (rb) {
            ve = (size_t)(rb - body) + 1;
            if (ve + 4 < n && strncmp(body + ve, "...+", 4) == 0 && body[ve + 4] >= '0' && body[ve + 4] <= '9') {
                ve += 4;
                while (ve < n && body[ve] >= '0' && body[ve] <= '9')
                    ve++;
            }
        } else {
            ve = vs;
            while (ve < n && !isspace((unsigned char)body[ve]))
                ve++;
            if (ve == vs)
                continue;
        }
        for (int k = 0; k < 4; k++)
            if (kl == strlen(keys[k]) && strncmp(body + ks, keys[k], kl) == 0) {
                v[k] = body[vs] == '[' ? 0 : safe_int(body + vs, ve - vs);
                found[k] = 1;
            }
        i = ve;
    }
}

int tl_infer_chunk_stats(const char *name, int64_t st[8])
{
    patterns_init();
    for (int i = 0; i < 8; i++)
        st[i] = 0;
    if (pat_match(P_VLLM_D, name)) {
        char buf[1024];
        const char *tok[32];
        size_t len[32];
        size_t n = vllm_tokens(name, buf, sizeof buf, tok, len, 32);
        if (n <= 16)
            return 0;
        static const int at[8] = {5, 6, 7, 8, 13, 14, 15, 16};
        for (int i = 0; i < 8; i++)
            st[i] = safe_int(tok[at[i]], len[at[i]]);
        return 1;
    }
    if (pat_match(P_VLLM_N, name))
        return 0;
    if (pat_match(P_SGL_D, name)) {
        const char *lb = strchr(name, '['), *rb = strrchr(name, ']');
        if (!lb || !rb || rb < lb)
            return 0;
        static const char *const keys[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
        int f;
        for (int i = 0; i < 8; i++)
            st[i] = kv_digits(lb + 1, (size_t)(rb - lb - 1), keys[i], &f);
        return 1;
    }
    int64_t b;
    if (pat_match(P_SGL_N, name) && sglang_native_batch(name, &b))
        return 0;
    if (pat_match(P_ATOM_N, name)) {
        const char *lb = strchr(name, '['), *rb = strrchr(name, ']');
        if (!lb || !rb || rb < lb)
            return 0;
        int64_t v[4];
        int found[4];
        atom_values(lb + 1, (size_t)(rb - lb - 1), v, found);
        if (!found[2] || !found[3])
            return 0;
        int prefill = strncmp(name, "prefill[", 8) == 0;
        int o = prefill ? 0 : 4;
        st[o] = v[0], st[o + 1] = v[1], st[o + 2] = v[2], st[o + 3] = v[3];
        return 1;
    }
    return 0;
}

/* ---- alignment (§2.7) -------------------------------------------------------------------- */

static int agree(const tl_infer_side *c, size_t ci, const char *kname)
{
    const char *cn = c->name[ci];
    if (strstr(cn, "Memcpy") && strstr(kname, "Memcpy"))
        return 1;
    if (strstr(cn, "Memset") && (strstr(kname, "Memset") || strstr(kname, "fillBuffer")))
        return 1;
    return strcmp(c->kernel[ci] ? c->kernel[ci] : cn, kname) == 0;
}

static const char *kname_of(const tl_infer_side *c, size_t ci) { return c->kernel[ci] ? c->kernel[ci] : c->name[ci]; }

static void disagreement(const tl_infer_side *r, const tl_infer_side *c, char *why, size_t whylen)
{
    size_t m = r->n < c->n ? r->n : c->n, p = 0;
    while (p < m && agree(c, p, r->name[p]))
        p++;
    if (p < m)
        snprintf(why, whylen, "alignment: %zu capture launches for %zu replay kernels, first disagreement at position %zu: %s vs %s",
                 c->n, r->n, p, kname_of(c, p), r->name[p]);
    else
        snprintf(why, whylen, "alignment: %zu capture launches for %zu replay kernels", c->n, r->n);
}

typedef struct nameidx {
    const char *name;
    size_t i;
} nameidx;

static int nameidx_cmp(const void *a, const void *b)
{
    const nameidx *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

int tl_infer_align(const tl_infer_side *r, const tl_infer_side *c, tl_infer_pair *pairs, size_t *npairs,
                   char *why, size_t whylen)
{
    *npairs = 0;
    /* several streams? */
    int multi = 0;
    for (size_t i = 1; i < r->n && !multi; i++)
        multi = r->stream[i] != r->stream[0];
    if (multi) {
        for (size_t i = 0; i < c->n; i++)
            if (!strstr(c->name[i], "Memcpy") && !strstr(c->name[i], "Memset") && !c->kernel[i])
                return 2;
        /* one FIFO per stream, streams in order of first appearance */
        int64_t *sid = tl_xmalloc(r->n * sizeof *sid);
        size_t ns = 0;
        size_t *q = tl_xmalloc(r->n * sizeof *q), *qstart = tl_xcalloc(r->n + 1, sizeof *qstart);
        size_t *head = tl_xcalloc(r->n, sizeof *head), *qlen = tl_xcalloc(r->n, sizeof *qlen);
        size_t *sof = tl_xmalloc(r->n * sizeof *sof);
        for (size_t i = 0; i < r->n; i++) {
            size_t s = 0;
            while (s < ns && sid[s] != r->stream[i])
                s++;
            if (s == ns)
                sid[ns++] = r->stream[i];
            sof[i] = s;
            qlen[s]++;
        }
        for (size_t s = 0; s < ns; s++)
            qstart[s + 1] = qstart[s] + qlen[s];
        memset(qlen, 0, ns * sizeof *qlen);
        for (size_t i = 0; i < r->n; i++)
            q[qstart[sof[i]] + qlen[sof[i]]++] = i;
        uint32_t *match = tl_xmalloc(r->n * sizeof *match);
        for (size_t i = 0; i < r->n; i++)
            match[i] = UINT32_MAX;
        for (size_t ci = 0; ci < c->n; ci++) {
            size_t best = SIZE_MAX, best_run = 0;
            int ncand = 0;
            for (size_t s = 0; s < ns; s++) {
                if (head[s] >= qlen[s] || !agree(c, ci, r->name[q[qstart[s] + head[s]]]))
                    continue;
                size_t run = 0;
                while (head[s] + run < qlen[s] && ci + run < c->n && agree(c, ci + run, r->name[q[qstart[s] + head[s] + run]]))
                    run++;
                if (best == SIZE_MAX || run > best_run) {
                    best = s;
                    best_run = run;
                }
                ncand++;
            }
            if (!ncand)
                continue;
            match[q[qstart[best] + head[best]++]] = (uint32_t)ci;
        }
        int ok = 1;
        size_t first_bad = 0;
        for (size_t i = 0; i < r->n && ok; i++)
            if (match[i] == UINT32_MAX)
                ok = 0, first_bad = i;
        if (ok)
            for (size_t i = 0; i < r->n; i++)
                pairs[(*npairs)++] = (tl_infer_pair){(uint32_t)i, match[i]};
        else
            snprintf(why, whylen, "alignment: %zu capture launches for %zu replay kernels on %zu streams, replay kernel %zu (%s) unmatched",
                     c->n, r->n, ns, first_bad, r->name[first_bad]);
        free(sid);
        free(q);
        free(qstart);
        free(head);
        free(qlen);
        free(sof);
        free(match);
        return ok ? 0 : 1;
    }
    if (r->n != c->n) {
        /* greedy: each replay kernel takes the next capture launch that agrees */
        size_t ci = 0;
        for (size_t k = 0; k < r->n; k++) {
            while (ci < c->n && !agree(c, ci, r->name[k]))
                ci++;
            if (ci == c->n) {
                disagreement(r, c, why, whylen);
                *npairs = 0;
                return 1;
            }
            pairs[(*npairs)++] = (tl_infer_pair){(uint32_t)k, (uint32_t)ci++};
        }
        return 0;
    }
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < r->n && bad == SIZE_MAX; i++)
        if (c->kernel[i] && strcmp(r->name[i], c->kernel[i]) != 0)
            bad = i;
    if (bad == SIZE_MAX) {
        for (size_t i = 0; i < r->n; i++)
            pairs[(*npairs)++] = (tl_infer_pair){(uint32_t)i, (uint32_t)i};
        return 0;
    }
    /* the order differs: pair the j-th of each name on both sides */
    size_t n = r->n;
    nameidx *cs = tl_xmalloc(n * sizeof *cs), *rs = tl_xmalloc(n * sizeof *rs);
    for (size_t i = 0; i < n; i++) {
        cs[i] = (nameidx){kname_of(c, i), i};
        rs[i] = (nameidx){r->name[i], i};
    }
    qsort(cs, n, sizeof *cs, nameidx_cmp);
    qsort(rs, n, sizeof *rs, nameidx_cmp);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = strcmp(cs[i].name, rs[i].name) == 0;
    if (ok) {
        uint32_t *of = tl_xmalloc(n * sizeof *of);
        for (size_t i = 0; i < n; i++)
            of[cs[i].i] = (uint32_t)rs[i].i;
        for (size_t i = 0; i < n; i++)
            pairs[(*npairs)++] = (tl_infer_pair){of[i], (uint32_t)i};
        free(of);
    } else {
        snprintf(why, whylen, "alignment: %zu capture launches for %zu replay kernels, first disagreement at position %zu: %s vs %s (and the names' counts differ)",
                 c->n, r->n, bad, kname_of(c, bad), r->name[bad]);
    }
    free(cs);
    free(rs);
    return ok ? 0 : 1;
}

/* ---- capture roots (§2.5) ------------------------------------------------------------------ */

typedef struct croot {
    double ts, dur;
    uint32_t *sub;    /* the subtree, capture-trace indexes; sub[0] = UINT32_MAX, the capture root */
    size_t nsub;
    uint32_t *top;    /* the capture root's children */
    size_t ntop;
    uint32_t *launch; /* positions in sub of the capture launches */
    size_t nlaunch;
} croot;

typedef struct ctrace {
    tl_trace *t;
    croot *r;
    size_t nr;
    int built;
    int used;
} ctrace;

/* `lit` (lower case) occurs in s, ignoring ASCII case.  Every event's name is tested
 * (Python frames' run long): the places of the first letter, either case, are found by
 * strpbrk (the C library's block scan) before the rest is compared. */
static int name_has_ci(const char *s, const char *lit)
{
    size_t n = strlen(lit);
    char first[3] = {lit[0], (char)toupper((unsigned char)lit[0]), 0};
    for (const char *p = strpbrk(s, first); p; p = strpbrk(p + 1, first))
        if (strncasecmp(p, lit, n) == 0)
            return 1;
    return 0;
}

static void build_croots(ctrace *c)
{
    const tl_trace *t = c->t;
    uint32_t *beg = NULL, *end = NULL;
    size_t nb = 0, ne = 0, cb = 0, ce = 0;
    for (size_t i = 0; i < t->nev; i++) {
        if (t->ev[i].kind != TL_TEV_RUNTIME)
            continue;
        if (strstr(t->ev[i].name, "StreamBeginCapture")) {
            TL_GROW(beg, cb, nb + 1);
            beg[nb++] = (uint32_t)i;
        } else if (strstr(t->ev[i].name, "StreamEndCapture")) {
            TL_GROW(end, ce, ne + 1);
            end[ne++] = (uint32_t)i;
        }
    }
    size_t n = nb < ne ? nb : ne;
    c->r = tl_xcalloc(n ? n : 1, sizeof *c->r);
    c->nr = n;
    uint8_t *inwin = tl_xmalloc(t->nev ? t->nev : 1);
    for (size_t w = 0; w < n; w++) {
        croot *r = &c->r[w];
        double ws = t->ev[beg[w]].ts + t->ev[beg[w]].dur, we = t->ev[end[w]].ts;
        r->ts = ws;
        r->dur = we - ws;
        for (size_t i = 0; i < t->nev; i++)
            inwin[i] = t->ev[i].ts >= ws && t->ev[i].ts + t->ev[i].dur <= we;
        size_t cap = 0;
        for (size_t i = 0; i < t->nev; i++) {
            const tl_tev *e = &t->ev[i];
            if (inwin[i] && (e->kind == TL_TEV_CPU_OP || e->kind == TL_TEV_PYTHON) && e->parent != TL_TEV_NONE &&
                !inwin[e->parent]) {
                TL_GROW(r->top, cap, r->ntop + 1);
                r->top[r->ntop++] = (uint32_t)i;
            }
        }
        /* breadth first, then stably by ts.  Each event is read once, when the walk
         * reaches it (the walk jumps about the events): its ts as the sort key of its
         * position, and whether it is a runtime event (a launch to look for) */
        size_t scap = t->nev + 1; /* room for each event once (pages are touched only as used) */
        r->sub = tl_xmalloc(scap * sizeof *r->sub);
        double *key = tl_xmalloc(scap * sizeof *key);
        uint8_t *runtime = tl_xmalloc(scap);
        r->sub[r->nsub++] = UINT32_MAX;
        for (size_t i = 0; i < r->ntop; i++)
            r->sub[r->nsub++] = r->top[i];
        key[0] = ws;
        runtime[0] = 0;
        for (size_t h = 1; h < r->nsub; h++) {
            const tl_tev *x = &t->ev[r->sub[h]];
            key[h] = x->ts;
            runtime[h] = x->kind == TL_TEV_RUNTIME;
            const uint32_t *ch = t->idx + x->child0;
            size_t nch = x->nchild;
            if (r->nsub + nch > scap) {
                TL_GROW(r->sub, scap, r->nsub + nch);
                key = tl_xrealloc(key, scap * sizeof *key);
                runtime = tl_xrealloc(runtime, scap);
            }
            for (size_t k = 0; k < nch; k++)
                r->sub[r->nsub++] = ch[k];
        }
        /* positions sorted by their ts (the subtree is mostly Python frames: 4-byte
         * positions and 8-byte keys, merged from the runs of the breadth-first order) */
        uint32_t *sorted = tl_xmalloc(r->nsub * sizeof *sorted);
        for (size_t i = 0; i < r->nsub; i++)
            sorted[i] = (uint32_t)i;
        tl_trace_sort_by_key(sorted, r->nsub, key);
        free(key);
        size_t lcap = 0;
        for (size_t i = 0; i < r->nsub; i++) {
            uint32_t pos = sorted[i];
            sorted[i] = r->sub[pos];
            if (!runtime[pos])
                continue;
            const char *nm = t->ev[sorted[i]].name;
            if (name_has_ci(nm, "launch") || name_has_ci(nm, "memcpy") || name_has_ci(nm, "memset")) {
                TL_GROW(r->launch, lcap, r->nlaunch + 1);
                r->launch[r->nlaunch++] = (uint32_t)i;
            }
        }
        free(runtime);
        free(r->sub);
        r->sub = sorted;
    }
    free(inwin);
    free(beg);
    free(end);
    c->built = 1;
}

static void ctrace_free(ctrace *c)
{
    for (size_t i = 0; i < c->nr; i++) {
        free(c->r[i].sub);
        free(c->r[i].top);
        free(c->r[i].launch);
    }
    free(c->r);
}

/* ---- the plan, then the graft (§2.6, §2.8) -------------------------------------------------- */

typedef struct job {
    uint32_t g;       /* the graph launch */
    ctrace *ct;
    croot *cr;
    tl_infer_pair *p; /* (replay kernel: exec event index, capture launch: position in cr->sub) */
    size_t np;
} job;

static void reason(tl_infer_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(tl_infer_stats *st, const char *fmt, ...)
{
    if (st->reason[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->reason, sizeof st->reason, fmt, ap);
    va_end(ap);
}

static int ts_cmp_ctx(size_t a, size_t b, void *ctx)
{
    const tl_trace *t = ctx;
    double x = t->ev[a].ts, y = t->ev[b].ts;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* A graft's plan, by position p in the capture subtree (cr->sub): whether p is copied and
 * where, under which copy it hangs, and the room its copy takes in t->idx. */
typedef struct gplan {
    size_t n;               /* positions */
    uint32_t *posmap;       /* position -> copy, or TL_TEV_NONE */
    uint32_t *pparent;      /* position -> parent position (UINT32_MAX: the root's) */
    uint32_t *kparent;      /* position -> nearest copied ancestor position */
    uint8_t *paired;        /* a capture launch paired with a replay kernel */
    uint8_t *on_path;       /* a paired launch or one of its ancestors */
    uint32_t base;          /* the first copy's index in t->ev */
    size_t ncopy;
    uint32_t *nch, *gcount; /* by copy - base: its children, its kernels below */
    size_t nchild, ngpu;    /* their sums */
} gplan;

/* Each position's parent position (pos_of: capture event -> position, filled here), and
 * which positions lie on the path from a paired launch up to the root. */
static void plan_parents(gplan *pl, const tl_trace *ct, const croot *cr, const job *jb, uint32_t *pos_of)
{
    size_t n = pl->n;
    for (size_t p = 0; p < n; p++)
        if (cr->sub[p] != UINT32_MAX)
            pos_of[cr->sub[p]] = (uint32_t)p;
    uint8_t *is_top = tl_xcalloc(ct->nev ? ct->nev : 1, 1);
    for (size_t k = 0; k < cr->ntop; k++)
        is_top[cr->top[k]] = 1;
    pl->pparent = tl_xmalloc(n * sizeof *pl->pparent);
    for (size_t p = 0; p < n; p++) {
        uint32_t s = cr->sub[p];
        pl->pparent[p] = s == UINT32_MAX ? UINT32_MAX : is_top[s] ? 0 : pos_of[ct->ev[s].parent];
    }
    free(is_top);
    pl->paired = tl_xcalloc(n, 1);
    pl->on_path = tl_xcalloc(n, 1);
    for (size_t i = 0; i < jb->np; i++) {
        pl->paired[jb->p[i].c] = 1;
        for (uint32_t p = jb->p[i].c; p != UINT32_MAX && !pl->on_path[p]; p = pl->pparent[p])
            pl->on_path[p] = 1;
    }
}

/* Capture frames that nothing of the sheets reads: a Python frame with no paired launch
 * below it (no kernel ever runs under it, so no launcher walk, call stack, module or perf
 * row passes through it; --include_call_stack's columns too only follow kernels).  Such
 * frames are most of a capture subtree; unless all frames are asked for they take their
 * UIDs but are not copied, and their children hang under the nearest copied ancestor.
 * GPU events of the capture window are capture-time work: never copied. */
static void plan_copies(gplan *pl, const tl_trace *t, const tl_trace *ct, const croot *cr, int all_frames, int *warned_gpu)
{
    size_t n = pl->n;
    pl->posmap = tl_xmalloc(n * sizeof *pl->posmap);
    pl->base = (uint32_t)t->nev;
    pl->ncopy = 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t s = cr->sub[p];
        pl->posmap[p] = TL_TEV_NONE;
        if (s != UINT32_MAX && tl_tev_is_gpu(&ct->ev[s])) {
            if (!*warned_gpu) {
                tl_warn("%s: GPU events inside a capture window (capture-time work, not captured): not grafted", ct->path);
                *warned_gpu = 1;
            }
            continue;
        }
        if (s != UINT32_MAX && !all_frames && ct->ev[s].kind == TL_TEV_PYTHON && !pl->on_path[p])
            continue;
        pl->posmap[p] = (uint32_t)(t->nev + pl->ncopy++);
    }
    /* a parent comes before its children in the subtree order (ts, ties breadth first) */
    pl->kparent = tl_xmalloc(n * sizeof *pl->kparent);
    for (size_t p = 0; p < n; p++) {
        uint32_t q = pl->pparent[p];
        pl->kparent[p] = q == UINT32_MAX || pl->posmap[q] != TL_TEV_NONE ? q : pl->kparent[q];
    }
}

/* Children: each copy under its nearest copied ancestor, in subtree order; a paired
 * launch's children are its kernel only.  Kernels: each under every copied ancestor. */
static void plan_counts(gplan *pl, const job *jb)
{
    size_t nc = pl->ncopy ? pl->ncopy : 1;
    pl->nch = tl_xcalloc(nc, sizeof *pl->nch);
    pl->gcount = tl_xcalloc(nc, sizeof *pl->gcount);
    pl->nchild = pl->ngpu = 0;
    for (size_t p = 1; p < pl->n; p++) {
        if (pl->posmap[p] == TL_TEV_NONE || pl->paired[pl->kparent[p]])
            continue;
        pl->nch[pl->posmap[pl->kparent[p]] - pl->base]++;
        pl->nchild++;
    }
    for (size_t i = 0; i < jb->np; i++) {
        pl->nch[pl->posmap[jb->p[i].c] - pl->base] = 1;
        for (uint32_t p = jb->p[i].c; p != UINT32_MAX; p = pl->pparent[p])
            if (pl->posmap[p] != TL_TEV_NONE) {
                pl->gcount[pl->posmap[p] - pl->base]++;
                pl->ngpu++;
            }
    }
    pl->nchild += jb->np;
}

static void gplan_free(gplan *pl)
{
    free(pl->posmap);
    free(pl->pparent);
    free(pl->kparent);
    free(pl->paired);
    free(pl->on_path);
    free(pl->nch);
    free(pl->gcount);
}

/* The copies keep their capture threads: each in t's thread table.  Returns the capture
 * thread -> t's thread map (malloc'd). */
static uint32_t *graft_threads(tl_trace *t, const tl_trace *ct)
{
    uint32_t *thread_of = tl_xmalloc((ct->nthreads ? ct->nthreads : 1) * sizeof *thread_of);
    tl_kmap have;
    tl_kmap_init(&have);
    for (size_t i = 0; i < t->nthreads; i++)
        tl_kmap_put(&have, t->threads[i].pid, t->threads[i].tid, 0, NULL)->val = (uint32_t)i;
    t->threads = tl_xrealloc(t->threads, (t->nthreads + ct->nthreads + 1) * sizeof *t->threads);
    for (size_t i = 0; i < ct->nthreads; i++) {
        int created;
        tl_kmap_slot *sl = tl_kmap_put(&have, ct->threads[i].pid, ct->threads[i].tid, 0, &created);
        if (created) {
            t->threads[t->nthreads] = ct->threads[i];
            sl->val = (uint32_t)t->nthreads++;
        }
        thread_of[i] = sl->val;
    }
    tl_kmap_free(&have);
    return thread_of;
}

/* Room in t for the copies: their events and aux records, the threads (returned as in
 * graft_threads), the capture's roots among them, and their children and kernels in t->idx.
 *
 * The copies' aux records are the capture events' (the perf models read the copies'
 * shapes, Output type, that they have args); the capture root has none. */
static uint32_t *graft_room(tl_trace *t, const gplan *pl, const tl_trace *ct, const croot *cr, const uint32_t *pos_of)
{
    t->ev = tl_xrealloc(t->ev, (t->nev + pl->ncopy) * sizeof *t->ev);
    size_t nxcopy = 0;
    for (size_t p = 0; p < pl->n; p++)
        nxcopy += pl->posmap[p] != TL_TEV_NONE && cr->sub[p] != UINT32_MAX && tl_tev_has_aux(&ct->ev[cr->sub[p]]);
    if (nxcopy)
        t->aux = tl_xrealloc(t->aux, (t->naux + nxcopy) * sizeof *t->aux);
    uint32_t *thread_of = graft_threads(t, ct);
    /* the capture's cpu root nodes in the subtree are roots of the merged tree too, after
     * the execution trace's own (unified_perf_summary starts from them) */
    size_t nnew_roots = 0;
    for (size_t r = 0; r < ct->nroots; r++)
        nnew_roots += pos_of[ct->roots[r]] != UINT32_MAX && pl->posmap[pos_of[ct->roots[r]]] != TL_TEV_NONE;
    if (nnew_roots) {
        t->roots = tl_xrealloc(t->roots, (t->nroots + nnew_roots) * sizeof *t->roots);
        for (size_t r = 0; r < ct->nroots; r++)
            if (pos_of[ct->roots[r]] != UINT32_MAX && pl->posmap[pos_of[ct->roots[r]]] != TL_TEV_NONE)
                t->roots[t->nroots++] = pl->posmap[pos_of[ct->roots[r]]];
    }
    t->idx = tl_xrealloc(t->idx, (t->nidx + pl->nchild + pl->ngpu + 1) * sizeof *t->idx);
    return thread_of;
}

/* What a copy takes from the graph launch it is grafted under (read before t->ev grows). */
typedef struct glaunch {
    uint32_t g;       /* its index */
    double ts, dur;
    uint8_t tsint;    /* its ts and dur flags: Python ints when the launch's were (TRACES.md §4.6) */
    uint32_t thread;
} glaunch;

/* Write the copies (a copy takes no part in forward/backward links: the reference links
 * the trees before the merge, so its sequence number is dropped) and place their child
 * and kernel ranges in t->idx from t->nidx on.  Returns the end of those ranges. */
static size_t fill_copies(tl_trace *t, const gplan *pl, const tl_trace *ct, const croot *cr, const glaunch *gl,
                          const uint32_t *thread_of, uint32_t uid0)
{
    size_t off = t->nidx;
    for (size_t p = 0; p < pl->n; p++) {
        uint32_t ni = pl->posmap[p];
        if (ni == TL_TEV_NONE)
            continue;
        uint32_t s = cr->sub[p];
        tl_tev *e = &t->ev[ni];
        if (s == UINT32_MAX) {
            memset(e, 0, sizeof *e);
            e->name = tl_arena_strdup(&t->arena, "CaptureRoot");
            e->kind = TL_TEV_RUNTIME;
            e->ref = gl->thread;
        } else {
            *e = ct->ev[s];
            uint32_t th = thread_of[tl_tev_thread(ct, e)];
            if (tl_tev_has_aux(e)) {
                t->aux[t->naux] = *tl_tev_x(ct, e);
                t->aux[t->naux].seq = TL_SEQ_NONE;
                t->aux[t->naux].thread = th;
                e->ref = TL_TEV_REF_AUX | (uint32_t)t->naux++;
            } else {
                e->ref = th;
            }
        }
        e->ts = gl->ts;
        e->dur = gl->dur;
        e->uid = uid0 + (uint32_t)p;
        e->flags = (uint8_t)(TL_TEV_IN_TREE | gl->tsint | (e->flags & TL_TEV_COMM));
        e->parent = s == UINT32_MAX ? gl->g : pl->posmap[pl->kparent[p]];
        e->child0 = (uint32_t)off;
        off += pl->nch[ni - pl->base];
        e->nchild = 0;
        e->gpu0 = 0;
        e->ngpu = 0;
        if (e->kind == TL_TEV_CPU_OP)
            t->ncpu_ops++;
    }
    for (size_t c = 0; c < pl->ncopy; c++) {
        t->ev[pl->base + c].gpu0 = (uint32_t)off;
        off += pl->gcount[c];
    }
    return off;
}

/* Hang each copy under its nearest copied ancestor and each paired replay kernel under
 * its launch's copy (as its only child) and in the kernels of every copied ancestor. */
static void link_copies(tl_trace *t, const gplan *pl, const job *jb)
{
    for (size_t p = 1; p < pl->n; p++) {
        if (pl->posmap[p] == TL_TEV_NONE || pl->paired[pl->kparent[p]])
            continue;
        tl_tev *par = &t->ev[pl->posmap[pl->kparent[p]]];
        t->idx[par->child0 + par->nchild++] = pl->posmap[p];
    }
    for (size_t i = 0; i < jb->np; i++) {
        uint32_t k = jb->p[i].k, cp = pl->posmap[jb->p[i].c];
        tl_tev *c = &t->ev[cp];
        c->nchild = 1;
        t->idx[c->child0] = k;
        t->ev[k].parent = cp;
        for (uint32_t p = jb->p[i].c; p != UINT32_MAX; p = pl->pparent[p]) {
            if (pl->posmap[p] == TL_TEV_NONE)
                continue;
            tl_tev *a = &t->ev[pl->posmap[p]];
            t->idx[a->gpu0 + a->ngpu++] = k;
        }
    }
    for (size_t c = 0; c < pl->ncopy; c++)
        if (t->ev[pl->base + c].ngpu == 0)
            t->ev[pl->base + c].flags |= TL_TEV_NON_GPU_PATH;
}

/* Graft one job into t (room in t->ev and t->idx is made here): plan which capture
 * events are copied and where they hang, make room, copy, link, and give the graph
 * launch the capture root as its only child.  pos_of (capture event -> position) comes
 * all UINT32_MAX and is left so. */
static void graft(tl_trace *t, const job *jb, int all_frames, uint32_t *uid_next, uint32_t *pos_of, int *warned_gpu)
{
    const tl_trace *ct = jb->ct->t;
    const croot *cr = jb->cr;
    const tl_tev *g0 = &t->ev[jb->g];
    glaunch gl = {jb->g, g0->ts, g0->dur, (uint8_t)(g0->flags & (TL_TEV_TS_INT | TL_TEV_DUR_INT)), tl_tev_thread(t, g0)};
    gplan pl = {.n = cr->nsub};
    plan_parents(&pl, ct, cr, jb, pos_of);
    plan_copies(&pl, t, ct, cr, all_frames, warned_gpu);
    plan_counts(&pl, jb);
    uint32_t *thread_of = graft_room(t, &pl, ct, cr, pos_of);
    size_t off = fill_copies(t, &pl, ct, cr, &gl, thread_of, *uid_next);
    t->nev += pl.ncopy;
    link_copies(t, &pl, jb);
    /* the graph launch now holds the capture root only */
    tl_tev *g = &t->ev[jb->g];
    g->child0 = (uint32_t)off;
    g->nchild = 1;
    t->idx[off++] = pl.base;
    t->nidx = off;
    *uid_next += (uint32_t)pl.n;
    for (size_t p = 0; p < pl.n; p++)
        if (cr->sub[p] != UINT32_MAX)
            pos_of[cr->sub[p]] = UINT32_MAX;
    free(thread_of);
    gplan_free(&pl);
}

static int uint_cmp_ts(size_t a, size_t b, void *ctx) { return ts_cmp_ctx(a, b, ctx); }

/* One attribution under way: what its steps share, and the jobs it plans. */
typedef struct attrib {
    tl_trace *t;
    tl_capture *cap;
    tl_infer_stats *st;
    tl_error *err;
    ctrace *cts;    /* by capture entry: its trace, read when first chosen */
    job *jobs;
    size_t njobs, cap_j;
    int skipped_batch, skipped_size, skipped_file, skipped_count; /* each warned once */
} attrib;

/* The graph launches of t, in ts order (malloc'd). */
static size_t *graph_launches(const tl_trace *t, size_t *n)
{
    size_t *gl = NULL, ngl = 0, cap_gl = 0;
    for (size_t i = 0; i < t->nev; i++) {
        if (t->ev[i].kind != TL_TEV_ANNOT && name_has_ci(t->ev[i].name, "graphlaunch")) {
            TL_GROW(gl, cap_gl, ngl + 1);
            gl[ngl++] = i;
        }
    }
    tl_sort_rows(gl, ngl, uint_cmp_ts, (void *)t);
    *n = ngl;
    return gl;
}

/* The execution roots: the detailed iteration annotations, or else the native ones, in
 * ts order (malloc'd). */
static size_t *exec_roots(const tl_trace *t, size_t *n)
{
    size_t *roots = NULL, nroots = 0, cap_r = 0;
    for (int tier = 2; tier >= 1 && nroots == 0; tier--) {
        for (size_t i = 0; i < t->nev; i++) {
            if (t->ev[i].kind != TL_TEV_ANNOT)
                continue;
            int hit = 0;
            for (size_t p = 0; p < NPAT && !hit; p++)
                hit = (root_patterns[p].detailed ? 2 : 1) == tier && pat_match((int)p, t->ev[i].name);
            if (hit) {
                TL_GROW(roots, cap_r, nroots + 1);
                roots[nroots++] = i;
            }
        }
    }
    tl_sort_rows(roots, nroots, uint_cmp_ts, (void *)t);
    *n = nroots;
    return roots;
}

/* The capture entry for an iteration annotation whose step holds nmine graph launches:
 * its trace read and its capture roots built.  -1 when the step is not attributed (a
 * warning and a reason), -2 on an error (*a->err). */
static long choose_capture(attrib *a, const tl_tev *re, size_t nmine)
{
    const tl_trace *t = a->t;
    tl_capture *cap = a->cap;
    int64_t batch, size = 0;
    long ent;
    if (tl_infer_step_batch(re->name, &batch) != 0) {
        if (!a->skipped_batch++)
            tl_warn("%s: iteration annotation '%s' has no batch size: its graph launches are not attributed", t->path, re->name);
        reason(a->st, "no batch size in the iteration annotation '%s'", re->name);
        return -1;
    }
    if ((ent = tl_capture_choose(cap, batch, nmine, &size)) == -1) {
        if (!a->skipped_size++)
            tl_warn("%s: no capture batch size >= %lld in %s: the step '%s' is not attributed", t->path, (long long)batch,
                    cap->dir, re->name);
        reason(a->st, "no capture batch size >= %lld", (long long)batch);
        return -1;
    }
    if (ent == -2) {
        if (!a->skipped_file++)
            tl_warn("%s: no capture trace for batch size %lld in %s (its file is missing)", t->path, (long long)size, cap->dir);
        reason(a->st, "no capture trace for batch size %lld", (long long)size);
        return -1;
    }
    ctrace *ct = &a->cts[ent];
    if (!ct->t && !(ct->t = tl_capture_trace(cap, (size_t)ent, a->err)))
        return -2;
    if (!ct->built)
        build_croots(ct);
    if (ct->nr != 1 && ct->nr != nmine) {
        if (!a->skipped_count++)
            tl_warn("%s: %zu capture roots in %s for %zu graph launches of '%s': not attributed", t->path, ct->nr,
                    cap->e[ent].path, nmine, re->name);
        reason(a->st, "%zu capture roots for %zu graph launches", ct->nr, nmine);
        return -1;
    }
    return ent;
}

/* The replay kernels of graph launch g: its GPU children by ts (stable; malloc'd). */
static size_t *replay_kernels(const tl_trace *t, uint32_t g, size_t *n)
{
    size_t nk = 0;
    size_t *kk = tl_xmalloc((t->ev[g].nchild + 1) * sizeof *kk);
    for (uint32_t q = 0; q < t->ev[g].nchild; q++) {
        uint32_t k = tl_tev_children(t, g)[q];
        if (tl_tev_is_gpu(&t->ev[k]))
            kk[nk++] = k;
    }
    tl_sort_rows(kk, nk, uint_cmp_ts, (void *)t);
    *n = nk;
    return kk;
}

/* Align the replay kernels kk of graph launch g with the launches of capture root cr
 * (tl_infer_align); the pairs (malloc'd, as replay kernel index in kk and position in
 * cr->launch) in *pairs.  0 aligned, 1 not (reason in why), 2 not alignable. */
static int align_replay(const tl_trace *t, const size_t *kk, size_t nk, const tl_trace *ctt, const croot *cr,
                        tl_infer_pair **pairs, size_t *np, char *why, size_t whylen)
{
    tl_infer_side rs = {0}, cs = {0};
    rs.n = nk;
    rs.name = tl_xmalloc(nk * sizeof *rs.name);
    int64_t *stream = tl_xmalloc(nk * sizeof *stream);
    for (size_t q = 0; q < nk; q++) {
        rs.name[q] = t->ev[kk[q]].name;
        stream[q] = tl_tev_x(t, &t->ev[kk[q]])->stream;
    }
    rs.stream = stream;
    cs.n = cr->nlaunch;
    cs.name = tl_xmalloc((cs.n + 1) * sizeof *cs.name);
    cs.kernel = tl_xmalloc((cs.n + 1) * sizeof *cs.kernel);
    for (size_t q = 0; q < cs.n; q++) {
        const tl_tev *ce = &ctt->ev[cr->sub[cr->launch[q]]];
        cs.name[q] = ce->name;
        cs.kernel[q] = tl_tev_x(ctt, ce)->kernel_arg;
    }
    *pairs = tl_xmalloc(nk * sizeof **pairs);
    *np = 0;
    int ar = tl_infer_align(&rs, &cs, *pairs, np, why, whylen);
    free(rs.name);
    free(stream);
    free(cs.name);
    free(cs.kernel);
    return ar;
}

/* Plan the graft of graph launch g from capture root cr of entry ent: a job when its
 * replay aligns, else a reason.  -1 on an error (*a->err). */
static int plan_launch(attrib *a, uint32_t g, long ent, croot *cr)
{
    const tl_trace *t = a->t;
    ctrace *ct = &a->cts[ent];
    size_t nk;
    size_t *kk = replay_kernels(t, g, &nk);
    if (nk == 0) {
        reason(a->st, "the graph launch at ts %.3f has no replay kernels", t->ev[g].ts);
        free(kk);
        return 0;
    }
    tl_infer_pair *pairs;
    size_t np;
    char why[400] = "";
    int ar = align_replay(t, kk, nk, ct->t, cr, &pairs, &np, why, sizeof why);
    if (ar != 0) {
        if (ar == 2)
            tl_error_set(a->err, "%s: replay of graph launch at ts %.3f runs on several streams but the capture launches "
                                 "carry no kernel names (args.kernel): the replay cannot be aligned",
                         a->cap->dir, t->ev[g].ts);
        else
            reason(a->st, "%s", why);
        free(kk);
        free(pairs);
        return ar == 2 ? -1 : 0;
    }
    for (size_t q = 0; q < np; q++) {
        pairs[q].k = (uint32_t)kk[pairs[q].k];
        pairs[q].c = cr->launch[pairs[q].c];
    }
    free(kk);
    TL_GROW(a->jobs, a->cap_j, a->njobs + 1);
    a->jobs[a->njobs++] = (job){g, ct, cr, pairs, np};
    ct->used = 1;
    a->st->nunmatched += cr->nlaunch - np;
    if (a->st->capture_batch < 0) {
        a->st->capture_batch = a->cap->e[ent].batch;
        a->st->piecewise = a->cap->e[ent].piecewise;
    }
    return 0;
}

/* Plan the steps: each execution root takes the graph launches inside it (owner marks
 * those taken: one inside two roots is an error), chooses a capture by its batch size
 * and plans a graft for each launch.  The number of launches inside a root in *in_roots;
 * -1 on an error (*a->err). */
static int plan_steps(attrib *a, const size_t *roots, size_t nroots, const size_t *gl, size_t ngl, size_t *in_roots)
{
    const tl_trace *t = a->t;
    uint8_t *owner = tl_xcalloc(ngl, 1);
    size_t *mine = tl_xmalloc(ngl * sizeof *mine);
    int rc = 0;
    *in_roots = 0;
    for (size_t r = 0; r < nroots && rc == 0; r++) {
        const tl_tev *re = &t->ev[roots[r]];
        size_t nmine = 0;
        for (size_t i = 0; i < ngl && rc == 0; i++) {
            const tl_tev *g = &t->ev[gl[i]];
            if (!(re->ts <= g->ts && g->ts + g->dur <= re->ts + re->dur))
                continue;
            if (owner[i]) {
                tl_error_set(a->err, "%s: overlapping iteration annotations: the graph launch at ts %.3f is inside two of them (%s)",
                             t->path, g->ts, re->name);
                rc = -1;
            }
            owner[i] = 1;
            mine[nmine++] = gl[i];
        }
        *in_roots += nmine;
        if (rc != 0 || !nmine)
            continue;
        long ent = choose_capture(a, re, nmine);
        if (ent == -2)
            rc = -1;
        for (size_t i = 0; ent >= 0 && i < nmine && rc == 0; i++) {
            ctrace *ct = &a->cts[ent];
            rc = plan_launch(a, (uint32_t)mine[i], ent, &ct->r[ct->nr == 1 ? 0 : i]);
        }
    }
    free(mine);
    free(owner);
    return rc;
}

/* Plan every graft; -1 with *a->err set when there is nothing to attribute by or nothing
 * of what there is could be attributed. */
static int plan(attrib *a, const size_t *roots, size_t nroots, const size_t *gl, size_t ngl)
{
    if (nroots == 0) {
        tl_error_set(a->err, "%s: %zu graph launch%s but no iteration annotation (execute_\xe2\x80\xa6, step[\xe2\x80\xa6], "
                             "prefill[\xe2\x80\xa6], decode[\xe2\x80\xa6], execute_diffusion_\xe2\x80\xa6): nothing to attribute them by",
                     a->t->path, ngl, ngl == 1 ? "" : "es");
        return -1;
    }
    size_t in_roots = 0;
    if (plan_steps(a, roots, nroots, gl, ngl, &in_roots) != 0)
        return -1;
    if (a->njobs == 0 && in_roots > 0) {
        tl_error_set(a->err, "capture folder %s does not match %s: 0 of %zu graph launches attributed (%s)", a->cap->dir,
                     a->t->path, ngl, a->st->reason[0] ? a->st->reason : "no pair aligned");
        return -1;
    }
    return 0;
}

/* Graft the planned jobs, count them and warn of what was left out. */
static void graft_jobs(attrib *a, int all_frames, size_t ngl)
{
    tl_trace *t = a->t;
    tl_infer_stats *st = a->st;
    uint32_t uid_next = t->nuid;
    int warned_gpu = 0;
    for (size_t j = 0; j < a->njobs; j++) {
        const tl_trace *ctt = a->jobs[j].ct->t;
        uint32_t *pos_of = tl_xmalloc((ctt->nev ? ctt->nev : 1) * sizeof *pos_of);
        for (size_t i = 0; i < ctt->nev; i++)
            pos_of[i] = UINT32_MAX;
        size_t before = t->nev;
        graft(t, &a->jobs[j], all_frames, &uid_next, pos_of, &warned_gpu);
        st->ncopies += t->nev - before;
        st->nattributed++;
        st->nreplay_attributed += a->jobs[j].np;
        free(pos_of);
    }
    t->nuids = uid_next; /* the UIDs taken, copies included (a synthetic op's is the next) */
    if (st->nattributed < ngl)
        tl_warn("%s: %zu of %zu graph launches attributed through %s%s%s%s", t->path, st->nattributed, ngl, a->cap->dir,
                st->reason[0] ? " (" : "", st->reason, st->reason[0] ? ")" : "");
    if (st->nunmatched)
        tl_warn("%s: %zu capture launch%s left unmatched (no replay kernel for them)", t->path, st->nunmatched,
                st->nunmatched == 1 ? "" : "es");
}

/* The capture traces grafted from now belong to t (the copies' names are theirs); their
 * events are read no more. */
static void adopt_captures(attrib *a)
{
    tl_trace *t = a->t;
    for (size_t i = 0; i < a->cap->n; i++) {
        if (!a->cts[i].used)
            continue;
        tl_trace_keep_strings(a->cap->e[i].trace);
        t->owned = tl_xrealloc(t->owned, (t->nowned + 1) * sizeof *t->owned);
        t->owned[t->nowned++] = a->cap->e[i].trace;
        a->cap->e[i].trace = NULL;
    }
}

/* Find the graph launches and the execution roots, plan every graft (nothing of t
 * changes until all are planned, so an error leaves t as it was), then graft. */
int tl_infer_attribute(tl_trace *t, tl_capture *cap, int all_frames, tl_infer_stats *st, tl_error *err)
{
    memset(st, 0, sizeof *st);
    st->capture_batch = -1;
    patterns_init();
    size_t ngl;
    size_t *gl = graph_launches(t, &ngl);
    st->nlaunch = ngl;
    for (size_t i = 0; i < ngl; i++)
        for (uint32_t k = 0; k < t->ev[gl[i]].nchild; k++)
            st->nreplay += tl_tev_is_gpu(&t->ev[tl_tev_children(t, (uint32_t)gl[i])[k]]);
    if (ngl == 0) {
        tl_warn("%s has no graph launch: capture folder %s not used", t->path, cap->dir);
        free(gl);
        return 0;
    }
    size_t nroots;
    size_t *roots = exec_roots(t, &nroots);
    st->nroots = nroots;
    attrib a = {.t = t, .cap = cap, .st = st, .err = err, .cts = tl_xcalloc(cap->n ? cap->n : 1, sizeof *a.cts)};
    int rc = plan(&a, roots, nroots, gl, ngl);
    if (rc == 0) {
        graft_jobs(&a, all_frames, ngl);
        adopt_captures(&a);
    }
    for (size_t i = 0; i < cap->n; i++)
        ctrace_free(&a.cts[i]);
    free(a.cts);
    for (size_t j = 0; j < a.njobs; j++)
        free(a.jobs[j].p);
    free(a.jobs);
    free(roots);
    free(gl);
    return rc;
}

int tl_infer_is_copy(const tl_trace *t, uint32_t i) { return i < t->nev && t->ev[i].uid >= t->nuid; }

void tl_infer_summary(const tl_trace *t, const tl_infer_stats *st, tl_buf *out)
{
    size_t s, e;
    tl_path_base(t->path, &s, &e);
    tl_buf_add(out, t->path + s, e - s);
    if (st->capture_batch >= 0)
        tl_buf_printf(out, ": capture bs %lld %s", (long long)st->capture_batch, st->piecewise ? "PIECEWISE" : "FULL");
    tl_buf_printf(out, ": %zu of %zu graph launches, %zu of %zu replay kernels attributed", st->nattributed, st->nlaunch,
                  st->nreplay_attributed, st->nreplay);
}

/* ---- pseudo ops (§2.10) ---------------------------------------------------------------------- */

static size_t numbered_profiler_name(const char *s)
{
    static const char head[] = "sglang_profiler::";
    if (strncmp(s, head, sizeof head - 1) != 0)
        return 0;
    size_t n = strlen(s), d = n;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d == n || d == 0 || s[d - 1] != '_' || d - 1 <= sizeof head - 1)
        return 0;
    return d - 1;
}

/* The reference's pseudo ops that re-parent events (so would change the op sheets), by
 * what triggers them: an op that must be present (or NULL) and a name pattern that must
 * match some event (or NULL).  Not implemented: each present one is warned about.  `lit`
 * is a text every match of the pattern contains: most names (Python frames) are passed
 * over by a substring search instead of the regex engine. */
static const struct {
    const char *what, *op, *re, *lit;
} reparenting_pseudo_ops[] = {
    {"MLA decode", "aiter::mla_decode_stage1_asm_fwd", "aiter/mla\\.py\\([0-9]+\\): mla_decode_fwd", "mla_decode_fwd"},
    {"MLA prefill", "aiter::mla_prefill_ps_asm_fwd", ":[[:space:]]*mla_fp8_prefill_attn(\\b|$)", "mla_fp8_prefill_attn"},
    {"DeepSeek-V4 paged decode", NULL, "paged_decode\\.py\\([0-9]+\\):[[:space:]]*sparse_attn_v4_paged_decode",
     "sparse_attn_v4_paged_decode"},
    {"flydsl MoE", "aiter::fused_moe_", NULL, NULL},
};

size_t tl_infer_unapplied_pseudo_ops(const tl_trace *t, const char **what, size_t max)
{
    size_t n = 0;
    for (size_t p = 0; p < sizeof reparenting_pseudo_ops / sizeof *reparenting_pseudo_ops; p++) {
        int has_op = !reparenting_pseudo_ops[p].op, has_re = !reparenting_pseudo_ops[p].re;
        for (size_t i = 0; i < t->nev && !has_op; i++)
            has_op = strcmp(t->ev[i].name, reparenting_pseudo_ops[p].op) == 0;
        if (has_op && !has_re) { /* both are needed: the pattern only when the op is there */
            regex_t re;
            if (regcomp(&re, reparenting_pseudo_ops[p].re, REG_EXTENDED | REG_NOSUB) != 0)
                abort(); /* the table is ours */
            for (size_t i = 0; i < t->nev && !has_re; i++)
                has_re = strstr(t->ev[i].name, reparenting_pseudo_ops[p].lit) &&
                         regexec(&re, t->ev[i].name, 0, NULL, 0) == 0;
            regfree(&re);
        }
        if (has_op && has_re && n < max)
            what[n++] = reparenting_pseudo_ops[p].what;
    }
    return n;
}

static void warn_reparenting(const tl_trace *t)
{
    const char *what[8];
    size_t n = tl_infer_unapplied_pseudo_ops(t, what, 8);
    for (size_t i = 0; i < n; i++)
        tl_warn("%s: the %s pseudo op is not applied (not implemented here): its ops' rows differ from the "
                "reference's", t->path, what[i]);
}

static void moe_unfused_triton(tl_trace *t);

void tl_infer_pseudo_ops(tl_trace *t)
{
    warn_reparenting(t);
    /* the earliest event of each such name decides; names of different traces are
     * different pointers, so they are compared as text */
    typedef struct seen {
        const char *name;
        const char *to; /* NULL: not renamed */
    } seen;
    seen *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < t->nev; i++) {
        tl_tev *e = &t->ev[i];
        size_t cut = numbered_profiler_name(e->name);
        if (!cut)
            continue;
        size_t k = 0;
        while (k < n && strcmp(v[k].name, e->name) != 0)
            k++;
        if (k == n) {
            TL_GROW(v, cap, n + 1);
            v[n].name = e->name;
            v[n].to = e->kind == TL_TEV_CPU_OP ? tl_arena_strndup(&t->arena, e->name, cut) : NULL;
            n++;
        }
        if (v[k].to)
            e->name = v[k].to;
    }
    free(v);
    moe_unfused_triton(t);
}

/* ---- the unfused Triton MoE pseudo ops (§2.10) ------------------------------------------ */

static int has_name(const tl_trace *t, const char *name)
{
    for (size_t i = 0; i < t->nev; i++)
        if (strcmp(t->ev[i].name, name) == 0)
            return 1;
    return 0;
}

static int has_ci(const char *s, const char *lit) { return name_has_ci(s, lit); }

/* Python's int() of element 1 of a tuple-of-strings text ("('', '4', ...)"): 1 and *out. */
static int concrete_int1(const char *text, int64_t *out)
{
    if (!text || *text != '(')
        return 0;
    const char *p = text + 1;
    for (int item = 0; item < 2; item++) {
        while (*p == ' ')
            p++;
        char q = *p;
        if (q != '\'' && q != '"')
            return 0;
        const char *b = ++p;
        while (*p && *p != q)
            p += *p == '\\' && p[1] ? 2 : 1;
        if (!*p)
            return 0;
        const char *e = p++;
        if (item == 1) {
            while (b < e && isspace((unsigned char)*b))
                b++;
            while (e > b && isspace((unsigned char)e[-1]))
                e--;
            if (b == e)
                return 0;
            size_t n = (size_t)(e - b);
            if (n > 20 || strspn(b + (*b == '-' || *b == '+'), "0123456789") != n - (*b == '-' || *b == '+') ||
                n == (size_t)(*b == '-' || *b == '+'))
                return 0;
            *out = safe_int(b, n);
            return 1;
        }
        while (*p == ' ')
            p++;
        if (*p != ',')
            return 0;
        p++;
    }
    return 0;
}

/* The experts per token of a vllm::moe_forward: the k of a TopK op below it (through at
 * most ten levels of children), else 4. */
static int64_t moe_topk(const tl_trace *t, uint32_t moe)
{
    uint32_t *st = NULL, *dp = NULL;
    size_t sp = 0, cap = 0, dcap = 0;
    const uint32_t *ch = tl_tev_children(t, moe);
    for (uint32_t k = t->ev[moe].nchild; k-- > 0;) {
        TL_GROW(st, cap, sp + 1);
        TL_GROW(dp, dcap, sp + 1);
        st[sp] = ch[k];
        dp[sp++] = 0;
    }
    int64_t topk = 4;
    while (sp) {
        uint32_t e = st[--sp], d = dp[sp];
        if (d > 10)
            continue;
        int64_t v;
        if (strstr(t->ev[e].name, "TopK") && concrete_int1(tl_tev_x(t, &t->ev[e])->args->concrete_inputs, &v)) {
            topk = v;
            break;
        }
        const uint32_t *c2 = tl_tev_children(t, e);
        for (uint32_t k = t->ev[e].nchild; k-- > 0;) {
            TL_GROW(st, cap, sp + 1);
            TL_GROW(dp, dcap, sp + 1);
            st[sp] = c2[k];
            dp[sp++] = d + 1;
        }
    }
    free(st);
    free(dp);
    return topk;
}

/* A pseudo op `name` between kernel `kern`'s launch and the launch's parent, with the
 * shapes of MoE op `moe` (see moe_unfused_triton). */
static void inject_pseudo_op(tl_trace *t, uint32_t kern, const char *name, uint32_t moe, int64_t topk, int gated)
{
    uint32_t launch = t->ev[kern].parent;
    uint32_t orig = launch == TL_TEV_NONE ? TL_TEV_NONE : t->ev[launch].parent;
    if (orig == TL_TEV_NONE)
        return;
    t->ev = tl_xrealloc(t->ev, (t->nev + 1) * sizeof *t->ev);
    t->aux = tl_xrealloc(t->aux, (t->naux + 1) * sizeof *t->aux);
    t->idx = tl_xrealloc(t->idx, (t->nidx + 2) * sizeof *t->idx);
    uint32_t ps = (uint32_t)t->nev++;
    tl_tev *e = &t->ev[ps];
    const tl_tev_aux *m = tl_tev_x(t, &t->ev[moe]);
    memset(e, 0, sizeof *e);
    e->name = name;
    e->kind = TL_TEV_CPU_OP;
    e->flags = TL_TEV_IN_TREE;
    e->ts = e->dur = NAN; /* no CPU time of its own */
    e->uid = t->nuids++;
    /* the MoE op's shapes; it has args (the perf models read it), no sequence number */
    tl_tev_aux *x = &t->aux[t->naux];
    *x = tl_tev_aux_none;
    tl_op_args *a = tl_arena_alloc(&t->arena, sizeof *a);
    *a = *m->args;
    a->output_type = NULL; /* the shapes alone */
    x->args = a;
    x->has_args = 1;
    x->moe_topk = topk > INT32_MAX ? INT32_MAX : topk < INT32_MIN ? INT32_MIN : (int32_t)topk;
    x->moe_gated = (uint8_t)gated;
    x->thread = tl_tev_thread(t, &t->ev[orig]);
    e->ref = TL_TEV_REF_AUX | (uint32_t)t->naux++;
    e->parent = orig;
    e->child0 = (uint32_t)t->nidx;
    e->nchild = 1;
    t->idx[t->nidx++] = launch;
    e->gpu0 = (uint32_t)t->nidx;
    e->ngpu = 1;
    t->idx[t->nidx++] = kern;
    t->ncpu_ops++;
    /* orig's children: the launch out, the pseudo op in at the end */
    tl_tev *o = &t->ev[orig];
    uint32_t *c = t->idx + o->child0;
    uint32_t w = 0;
    for (uint32_t k = 0; k < o->nchild; k++)
        if (c[k] != launch)
            c[w++] = c[k];
    if (w < o->nchild)
        c[w] = ps;
}

/* vLLM's GPT-OSS MoE runs its expert GEMMs as Triton matmul_ogs kernels under
 * vllm::moe_forward; the reference gives each its own op (the first by ts "up", the
 * others "down"; the one scatter kernel combining them gets one too) between the
 * kernel's launch and the launch's parent, so the GEMMs get MoE rows.  The launch keeps
 * its parent (the op sheets do not change); the pseudo op has the MoE op's shapes, no
 * CPU time, and comes after every other event. */
static void moe_unfused_triton(tl_trace *t)
{
    if (!has_name(t, "vllm::moe_forward") || has_name(t, "vllm::rocm_aiter_fused_moe") ||
        has_name(t, "_rocm_C::paged_attention") || has_name(t, "aiter::paged_attention_v1"))
        return;
    int any = 0;
    for (size_t i = 0; i < t->nev && !any; i++)
        any = t->ev[i].kind == TL_TEV_KERNEL && has_ci(t->ev[i].name, "matmul_ogs");
    if (!any)
        return;
    const char *up = tl_arena_strdup(&t->arena, "pseudo_op::moe_triton_unfused_up");
    const char *down = tl_arena_strdup(&t->arena, "pseudo_op::moe_triton_unfused_down");
    const char *finalize = tl_arena_strdup(&t->arena, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter");
    size_t nev0 = t->nev;
    for (size_t i = 0; i < nev0; i++) {
        if (strcmp(t->ev[i].name, "vllm::moe_forward") != 0 || !t->ev[i].ngpu)
            continue;
        uint32_t moe = (uint32_t)i;
        size_t nm = 0;
        size_t *mk = tl_xmalloc(t->ev[moe].ngpu * sizeof *mk);
        for (uint32_t k = 0; k < t->ev[moe].ngpu; k++) {
            uint32_t g = tl_tev_gpu(t, moe)[k];
            if (t->ev[g].kind == TL_TEV_KERNEL && has_ci(t->ev[g].name, "matmul_ogs"))
                mk[nm++] = g;
        }
        if (!nm) {
            free(mk);
            continue;
        }
        int64_t topk = moe_topk(t, moe);
        tl_sort_rows(mk, nm, ts_cmp_ctx, t);
        for (size_t q = 0; q < nm; q++) {
            const char *kn = t->ev[mk[q]].name;
            inject_pseudo_op(t, (uint32_t)mk[q], q == 0 ? up : down, moe, topk,
                             has_ci(kn, "_swiglu") || has_ci(kn, "_glu"));
        }
        /* the scatter that combines the experts' outputs, when there is exactly one */
        uint32_t scatter = TL_TEV_NONE;
        size_t nscatter = 0;
        for (uint32_t k = 0; k < t->ev[moe].ngpu; k++) {
            uint32_t g = tl_tev_gpu(t, moe)[k];
            if (has_ci(t->ev[g].name, "matmul_scatter")) {
                scatter = g;
                nscatter++;
            }
        }
        if (nscatter == 1)
            inject_pseudo_op(t, scatter, finalize, moe, 0, 0);
        free(mk);
    }
}

tl_trace *tl_infer_load(const char *path, const tl_infer_opts *o, tl_infer_stats *st, tl_error *err)
{
    memset(st, 0, sizeof *st);
    st->capture_batch = -1;
    tl_capture cap = {0};
    if (o->capture_dir && tl_capture_open(&cap, o->capture_dir, err) != 0) {
        tl_capture_close(&cap);
        return NULL;
    }
    /* the annotations always: the iteration roots, the attention models' step, the pseudo-op rule */
    unsigned flags = TL_LOAD_ANNOT | (o->capture_dir || o->python ? TL_LOAD_PYTHON : 0) | o->load_flags;
    tl_trace *t = tl_trace_load_cancel(path, flags, o->cancel, err);
    if (t && o->capture_dir && tl_infer_attribute(t, &cap, 0, st, err) != 0) {
        tl_trace_free(t);
        t = NULL;
    }
    tl_capture_close(&cap);
    if (t && o->pseudo_ops)
        tl_infer_pseudo_ops(t);
    return t;
}

/* §0.1's hint: a plain trace mostly made of graph launches, with capture traces beside it. */
void tl_infer_capture_hint(const tl_trace *t, const char *path)
{
    double graph = 0, all = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (!tl_tev_is_gpu(e) || !(e->flags & TL_TEV_LINKED))
            continue;
        all += e->dur;
        if (e->parent != TL_TEV_NONE && (t->ev[e->parent].flags & TL_TEV_GRAPH_LAUNCH))
            graph += e->dur;
    }
    if (all <= 0 || graph * 2 <= all)
        return;
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path + 1) : 0;
    char *dir = tl_xmalloc(n + 32);
    memcpy(dir, path, n);
    strcpy(dir + n, "capture_traces");
    if (tl_is_dir(dir))
        tl_note("hint: %.0f%% of the kernel time of %s is graph replay and %s exists: give the trace as %s@%s to "
                "attribute it to the captured ops", graph / all * 100, path, dir, path, dir);
    free(dir);
}
