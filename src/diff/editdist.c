/*
 * editdist.c - the two orders the alignment borrows from elsewhere (see diff.h): Wagner-
 * Fischer's edit script between two name lists, as the reference backtracks it and with
 * its size bound, and the iteration order of a CPython set of (i, j) pairs, which decides
 * in which order the reference visits ambiguous names.
 */
#include "diff/diff_int.h"

#include <stdlib.h>
#include <string.h>

typedef tl_diff_op op_t;

/* ---- Wagner-Fischer ---------------------------------------------------------------- */

/* Exact Wagner-Fischer on a[0..m) x b[0..n) with the reference's backtracking; ops in
 * forward order, indexes offset by (oi, oj).  Only one bit per cell is kept: whether
 * dp[i][j] == dp[i-1][j] + 1, which is all the backtracking asks. */
static size_t wf_exact(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t oi, size_t oj, op_t *ops)
{
    size_t nops = 0;
    if (m == 0 || n == 0) {
        for (size_t i = 0; i < m; i++)
            ops[nops++] = (op_t){TL_DIFF_DELETE, (uint32_t)(oi + i), 0};
        for (size_t j = 0; j < n; j++)
            ops[nops++] = (op_t){TL_DIFF_INSERT, 0, (uint32_t)(oj + j)};
        return nops;
    }
    uint64_t small[64];
    size_t words = (m * n + 63) / 64;
    uint64_t *bits = words <= 64 ? small : tl_xmalloc(words * sizeof *bits);
    memset(bits, 0, words * sizeof *bits);
    uint32_t *prev = tl_xmalloc(2 * (n + 1) * sizeof *prev), *cur = prev + n + 1;
    for (size_t j = 0; j <= n; j++)
        prev[j] = (uint32_t)j;
    for (size_t i = 1; i <= m; i++) {
        cur[0] = (uint32_t)i;
        uint32_t ai = a[i - 1];
        size_t row = (i - 1) * n;
        for (size_t j = 1; j <= n; j++) {
            uint32_t del = prev[j] + 1, ins = cur[j - 1] + 1, sub = prev[j - 1] + (ai != b[j - 1]);
            uint32_t v = del < ins ? del : ins;
            v = v < sub ? v : sub;
            cur[j] = v;
            if (v == del) {
                size_t bit = row + j - 1;
                bits[bit >> 6] |= (uint64_t)1 << (bit & 63);
            }
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
    }
    free(prev < cur ? prev : cur);
    /* backtrack from the end, ops come out reversed */
    size_t i = m, j = n;
    while (i > 0 || j > 0) {
        if (i > 0 && j > 0 && a[i - 1] == b[j - 1]) {
            ops[nops++] = (op_t){TL_DIFF_MATCH, (uint32_t)(oi + i - 1), (uint32_t)(oj + j - 1)};
            i--, j--;
        } else if (i > 0 && (j == 0 || ((bits[((i - 1) * n + j - 1) >> 6] >> (((i - 1) * n + j - 1) & 63)) & 1))) {
            ops[nops++] = (op_t){TL_DIFF_DELETE, (uint32_t)(oi + i - 1), 0};
            i--;
        } else {
            ops[nops++] = (op_t){TL_DIFF_INSERT, 0, (uint32_t)(oj + j - 1)};
            j--;
        }
    }
    for (size_t x = 0; x < nops / 2; x++) {
        op_t t = ops[x];
        ops[x] = ops[nops - 1 - x];
        ops[nops - 1 - x] = t;
    }
    if (bits != small)
        free(bits);
    return nops;
}

size_t tl_diff_wf(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t max_cells, tl_diff_op *ops,
                  int *chunked)
{
    /* The backtracking matches equal names at the end first, so a common tail is always
     * matched: leaving it out of the table changes nothing. */
    size_t k = 0;
    while (k < m && k < n && a[m - 1 - k] == b[n - 1 - k])
        k++;
    size_t mm = m - k, nn = n - k, nops = 0;
    if (!max_cells)
        max_cells = TL_DIFF_WF_MAX_CELLS;
    if ((uint64_t)mm * nn <= max_cells) {
        nops = wf_exact(a, mm, b, nn, 0, 0, ops);
    } else {
        /* Beyond the bound: consecutive proportional chunks, each aligned exactly. */
        if (chunked)
            *chunked = 1;
        /* as few chunks as keep each within the bound, but enough that all of them
         * together stay within four times the bound */
        uint64_t cells = (uint64_t)mm * nn, kc = 1;
        while (kc * kc < (cells + max_cells - 1) / max_cells)
            kc++;
        if (kc < cells / (4 * max_cells))
            kc = cells / (4 * max_cells);
        size_t big = mm > nn ? mm : nn;
        if (kc > big)
            kc = big;
        for (uint64_t c = 0; c < kc; c++) {
            size_t a0 = (size_t)((uint64_t)mm * c / kc), a1 = (size_t)((uint64_t)mm * (c + 1) / kc);
            size_t b0 = (size_t)((uint64_t)nn * c / kc), b1 = (size_t)((uint64_t)nn * (c + 1) / kc);
            nops += wf_exact(a + a0, a1 - a0, b + b0, b1 - b0, a0, b0, ops + nops);
        }
    }
    for (size_t t = 0; t < k; t++)
        ops[nops++] = (op_t){TL_DIFF_MATCH, (uint32_t)(mm + t), (uint32_t)(nn + t)};
    return nops;
}

/* ---- CPython's set order ------------------------------------------------------------ */

static uint64_t py_tuple2_hash(uint64_t x, uint64_t y)
{
    const uint64_t p1 = 11400714785074694791ULL, p2 = 14029467366897019727ULL, p5 = 2870177450012600261ULL;
    uint64_t acc = p5, lanes[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        acc += lanes[i] * p2;
        acc = (acc << 31) | (acc >> 33);
        acc *= p1;
    }
    acc += 2 ^ (p5 ^ 3527539ULL);
    if (acc == (uint64_t)-1)
        return 1546275796;
    return acc;
}

/* Put key `key` (hash h) in the first free slot of its probe sequence (setobject.c). */
static void pyset_place(uint32_t *table, uint64_t *hashes, size_t mask, uint64_t h, uint32_t key)
{
    uint64_t perturb = h;
    size_t i = (size_t)h & mask;
    for (;;) {
        size_t probes = i + 9 <= mask ? 9 : 0, idx = i;
        for (;;) {
            if (table[idx] == UINT32_MAX) {
                table[idx] = key;
                hashes[idx] = h;
                return;
            }
            if (probes-- == 0)
                break;
            idx++;
        }
        perturb >>= 5;
        i = (i * 5 + 1 + (size_t)perturb) & mask;
    }
}

void tl_diff_pyset_order(uint32_t (*p)[2], size_t n)
{
    size_t size = 8, used = 0;
    uint32_t *table = tl_xmalloc(size * sizeof *table);
    uint64_t *hashes = tl_xmalloc(size * sizeof *hashes);
    memset(table, 0xff, size * sizeof *table);
    for (size_t k = 0; k < n; k++) {
        uint64_t h = py_tuple2_hash(p[k][0], p[k][1]);
        pyset_place(table, hashes, size - 1, h, (uint32_t)k);
        used++;
        if (used * 5 >= (size - 1) * 3) {
            size_t minused = used > 50000 ? used * 2 : used * 4, ns = 8;
            while (ns <= minused)
                ns <<= 1;
            uint32_t *nt = tl_xmalloc(ns * sizeof *nt);
            uint64_t *nh = tl_xmalloc(ns * sizeof *nh);
            memset(nt, 0xff, ns * sizeof *nt);
            for (size_t s = 0; s < size; s++)
                if (table[s] != UINT32_MAX)
                    pyset_place(nt, nh, ns - 1, hashes[s], table[s]);
            free(table);
            free(hashes);
            table = nt;
            hashes = nh;
            size = ns;
        }
    }
    uint32_t(*out)[2] = tl_xmalloc((n ? n : 1) * sizeof *out);
    size_t o = 0;
    for (size_t s = 0; s < size; s++)
        if (table[s] != UINT32_MAX) {
            out[o][0] = p[table[s]][0];
            out[o][1] = p[table[s]][1];
            o++;
        }
    memcpy(p, out, n * sizeof *out);
    free(out);
    free(table);
    free(hashes);
}

