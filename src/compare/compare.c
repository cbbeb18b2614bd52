/*
 * compare.c - one sheet compared across reports (see compare.h and SPEC §2).
 *
 * The merge is a sort-merge join: each side's rows are stably sorted by key, then the
 * two sorted lists are walked together.  That yields the rows already in the order the
 * SPEC asks for (by key, missing keys last, repeated keys in order, or as all pairs in row order for --tracelens-keys), so no
 * separate ordering pass is needed.  The keys are first reduced to one integer rank per
 * row (see "key ranks" below), so the sorts are counting sorts and the walk compares
 * integers; the row orders by a metric (step 5, the split) are radix sorts of the metric
 * as a 64-bit key.
 */
#include "compare/compare.h"

#include "base/sort.h"
#include "compare/rowkeys.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- step 1: keys first, everything else prefixed ----------------------------------- */

/* Move the key columns (in key order) to the front and prefix the rest "<tag>::". */
static void prepare(tl_table *t, int tag_index, const char *tag, const char *const *keys,
                    size_t nkeys, tl_arena *arena)
{
    tl_column *cols = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *cols);
    unsigned char *is_key = tl_xcalloc(t->ncols ? t->ncols : 1, 1);
    size_t n = 0;
    /* by index, not by name against every key: a roofline sheet may have thousands of
     * param: keys, and as many columns */
    tl_name_index ix;
    tl_name_index_init(&ix, t);
    for (size_t k = 0; k < nkeys; k++) {
        long i = tl_name_index_find(&ix, keys[k]);
        cols[n] = t->cols[i];
        cols[n].role = TL_ROLE_KEY;
        cols[n].tag = -1;
        is_key[i] = 1;
        n++;
    }
    tl_name_index_free(&ix);
    for (size_t i = 0; i < t->ncols; i++) {
        if (is_key[i])
            continue;
        cols[n] = t->cols[i];
        cols[n].name = tl_arena_printf(arena, "%s::%s", tag, t->cols[i].name);
        cols[n].role = TL_ROLE_DATA;
        cols[n].tag = tag_index;
        n++;
    }
    free(is_key);
    free(t->cols);
    t->cols = cols;
}

/* ---- step 2: the outer merge ---------------------------------------------------------- */

/*
 * Key ranks.  The key order is tl_cell_key_cmp over the key columns, first key first.
 * Calling it in every comparison of a sort costs a string comparison per key per step (the
 * keys of a roofline sheet share long prefixes, and most rows share the first keys), so
 * the keys are first reduced to integers:
 *
 *  - each key column, both tables' cells together, is given dense ranks (equal ranks for
 *    equal keys, in key order) by interning its values in a hash table and sorting only
 *    the distinct ones (numbers as 64-bit keys, texts by a radix sort on 8 bytes at a time);
 *  - the ranks are folded, first key first, into one rank per row: the classes of rows
 *    equal so far are split by the next column's ranks (two counting sorts);
 *  - once the classes are small (a row and its match, mostly: a key such as the input
 *    dims tells the rows apart), the remaining keys are compared within each class
 *    instead, which reads two cells per pair rather than hashing whole columns.
 *
 * Sorting a table by key is then a counting sort by rank, and the walk compares integers.
 *
 * Ranks need an order that is a true (transitive) one.  tl_cell_key_cmp's is, but for two
 * cases no reader makes: a NaN number (equal to every number), and an integer beyond 2^53
 * in a column that also holds floats (two such integers differ, yet both may equal the
 * same float; reports can do that: one report's column integral, the other's not).  With
 * either in a key column, the merge sorts and walks with tl_cell_key_cmp itself, exactly
 * as before the ranks: the same pairs, in the same order.
 *
 * Rows and ranks are 32-bit: a table has at most TL_TABLE_MAX_CELLS rows, and the merged
 * table of earlier merges at most TL_MERGE_MAX_ROWS, so two together stay well below.
 */

#define NO_ROW UINT32_MAX
#define EXACT_INT ((int64_t)1 << 53) /* integers up to this are exact as doubles */

/* One distinct key value of a column. */
typedef struct key_value {
    uint64_t hash;
    uint64_t num;  /* a number's key (see column_ranks) */
    const char *s; /* a string's text, NULL for a number */
    size_t len;
} key_value;

typedef struct str_item {
    const char *s;
    size_t len;
    uint32_t id;
} str_item;

/* strcmp's order (bytes as unsigned char, a prefix first), from the known lengths: a
 * cell's text has no NUL byte (neither reader lets one in), so len is its strlen. */
static int cmp_str_item(const void *a, const void *b)
{
    const str_item *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The same for texts known to share their first `depth` bytes. */
static int cmp_str_from(const str_item *x, const str_item *y, size_t depth)
{
    size_t n = x->len < y->len ? x->len : y->len;
    size_t d = depth < n ? depth : n;
    int c = memcmp(x->s + d, y->s + d, n - d);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Bytes depth..depth+8 of a text, big-endian, zeros past its end: these compare as the
 * texts do (no NUL byte in a text). */
static uint64_t text_chunk(const str_item *t, size_t depth)
{
    const unsigned char *p = (const unsigned char *)t->s + depth;
    if (depth + 8 <= t->len)
        return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
               (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7];
    uint64_t k = 0;
    for (size_t i = 0; depth + i < t->len; i++)
        k |= (uint64_t)p[i] << (56 - 8 * i);
    return k;
}

/* Common prefixes longer than this are compared with memcmp (a bound on the recursion). */
#define TEXT_RADIX_DEPTH 256

/*
 * Sort distinct texts s[0..n), which share their first `depth` bytes: a radix sort on the
 * next 8 bytes, then the same on each run that shares them.  Texts with long common
 * prefixes (kernel names, tensor shapes) cost each comparison a memcmp over the prefix;
 * this reads each byte about once.  items, tmp, stmp: n entries of scratch.
 */
static void sort_texts(str_item *s, size_t n, size_t depth, tl_sort_item *items, tl_sort_item *tmp,
                       str_item *stmp)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            str_item v = s[i];
            size_t j = i;
            while (j > 0 && cmp_str_from(&s[j - 1], &v, depth) > 0) {
                s[j] = s[j - 1];
                j--;
            }
            s[j] = v;
        }
        return;
    }
    if (depth >= TEXT_RADIX_DEPTH) {
        qsort(s, n, sizeof *s, cmp_str_item);
        return;
    }
    for (size_t i = 0; i < n; i++)
        items[i] = (tl_sort_item){text_chunk(&s[i], depth), (uint32_t)i};
    tl_sort_items(items, n, tmp);
    for (size_t i = 0; i < n; i++)
        stmp[i] = s[items[i].row];
    memcpy(s, stmp, n * sizeof *s);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && items[b].key == items[a].key;)
            b++;
        /* a run goes on past this chunk unless its texts end in it (they would be equal) */
        if (b - a > 1 && (items[a].key & 0xff) != 0)
            sort_texts(s + a, b - a, depth + 8, items + a, tmp + a, stmp + a);
    }
}

/* Scratch for ranking the key columns of one merge (ncells = rows of both tables). */
typedef struct ranker {
    size_t ncells;
    size_t cap;       /* hash slots, a power of two above 1.5 x ncells */
    uint32_t *slots;  /* distinct value id + 1, 0 when empty */
    key_value *vals;  /* the distinct values */
    uint32_t *ids;    /* per cell: its value's id, NO_ROW when missing */
    uint32_t *rank;   /* per value id: its rank */
    tl_sort_item *nums, *tmp;
    str_item *strs, *stmp;
    uint32_t *col;    /* per cell: the rank of its value in the current key column */
    uint32_t *p1, *p2, *count; /* for the counting sorts */
} ranker;

static void ranker_init(ranker *rk, size_t ncells)
{
    rk->ncells = ncells;
    rk->cap = 16;
    while (rk->cap < ncells + ncells / 2)
        rk->cap *= 2;
    size_t n = ncells ? ncells : 1;
    rk->slots = tl_xmalloc(rk->cap * sizeof *rk->slots);
    rk->vals = tl_xmalloc(n * sizeof *rk->vals);
    rk->ids = tl_xmalloc(n * sizeof *rk->ids);
    rk->rank = tl_xmalloc(n * sizeof *rk->rank);
    rk->nums = tl_xmalloc(n * sizeof *rk->nums);
    rk->tmp = tl_xmalloc(n * sizeof *rk->tmp);
    rk->strs = tl_xmalloc(n * sizeof *rk->strs);
    rk->stmp = tl_xmalloc(n * sizeof *rk->stmp);
    rk->col = tl_xmalloc(n * sizeof *rk->col);
    rk->p1 = tl_xmalloc(n * sizeof *rk->p1);
    rk->p2 = tl_xmalloc(n * sizeof *rk->p2);
    rk->count = tl_xmalloc((ncells + 2) * sizeof *rk->count);
}

static void ranker_free(ranker *rk)
{
    free(rk->slots);
    free(rk->vals);
    free(rk->ids);
    free(rk->rank);
    free(rk->nums);
    free(rk->tmp);
    free(rk->strs);
    free(rk->stmp);
    free(rk->col);
    free(rk->p1);
    free(rk->p2);
    free(rk->count);
}

/* Note what a segment of a key column holds: 0 when a NaN. */
static int scan_numbers(const tl_cell *c, size_t n, int *floats, int *big)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i].kind == TL_FLOAT) {
            if (isnan(c[i].v.f))
                return 0;
            *floats = 1;
        } else if (c[i].kind == TL_INT) {
            *big |= c[i].v.i > EXACT_INT || c[i].v.i < -EXACT_INT;
        }
    }
    return 1;
}

/* 1 when key column k of L and R can be ranked (see above), with *by_int set when its
 * numbers are to be compared as integers: without floats, they compare as integers
 * (booleans as 0 and 1), exactly as tl_cell_key_cmp does; with floats, as doubles, which
 * then hold every integer of the column exactly. */
static int rankable(const tl_table *L, const tl_table *R, size_t k, int *by_int)
{
    int floats = 0, big = 0;
    if (!scan_numbers(L->cols[k].cells, L->nrows, &floats, &big) ||
        !scan_numbers(R->cols[k].cells, R->nrows, &floats, &big) || (floats && big))
        return 0;
    *by_int = !floats;
    return 1;
}

/* Give the cells c[0..n) their value ids in rk->ids[base..), interning new values. */
static void intern_cells(ranker *rk, const tl_cell *c, size_t n, size_t base, int by_int, size_t *nvals)
{
    size_t mask = rk->cap - 1;
    key_value prev = {0};
    uint32_t prev_id = NO_ROW;
    for (size_t i = 0; i < n; i++) {
        const tl_cell *cell = &c[i];
        if (cell->kind == TL_MISSING) {
            rk->ids[base + i] = NO_ROW;
            continue;
        }
        /* a value equal to the one before needs no look-up (runs are common in key columns) */
        key_value v = {0};
        if (cell->kind == TL_STR) {
            v.s = cell->v.s;
            v.len = tl_cell_len(cell);
            if (prev_id != NO_ROW && prev.s && prev.len == v.len && memcmp(prev.s, v.s, v.len) == 0) {
                rk->ids[base + i] = prev_id;
                continue;
            }
            v.hash = tl_hash_bytes(v.s, v.len);
        } else {
            /* a key in the numbers' order, equal for equal numbers */
            if (by_int)
                v.num = tl_sort_key_int(cell->kind == TL_INT ? cell->v.i : cell->v.b != 0);
            else
                v.num = tl_sort_key_double(tl_cell_number(cell));
            if (prev_id != NO_ROW && !prev.s && prev.num == v.num) {
                rk->ids[base + i] = prev_id;
                continue;
            }
            v.hash = tl_hash_mix(v.num);
        }
        size_t h = (size_t)v.hash & mask;
        uint32_t id;
        for (;;) {
            uint32_t s = rk->slots[h];
            if (s == 0) {
                id = (uint32_t)(*nvals)++;
                rk->vals[id] = v;
                rk->slots[h] = id + 1;
                break;
            }
            const key_value *o = &rk->vals[s - 1];
            if (o->hash == v.hash && (o->s != NULL) == (v.s != NULL) &&
                (v.s ? o->len == v.len && (o->s == v.s || memcmp(o->s, v.s, v.len) == 0)
                     : o->num == v.num)) {
                id = s - 1;
                break;
            }
            h = (h + 1) & mask;
        }
        rk->ids[base + i] = id;
        prev = v;
        prev_id = id;
    }
}

/*
 * Rank the cells of key column k, L's rows then R's, into rk->col: numbers by value, then
 * strings by code point, then missing; equal keys equal.  Returns the number of ranks, or
 * 0 when ranks cannot stand for tl_cell_key_cmp on this column (see above).
 */
static size_t column_ranks(ranker *rk, const tl_table *L, const tl_table *R, size_t k)
{
    int by_int;
    if (!rankable(L, R, k, &by_int))
        return 0;
    memset(rk->slots, 0, rk->cap * sizeof *rk->slots);
    size_t nvals = 0, na = L->nrows, nb = R->nrows;
    intern_cells(rk, L->cols[k].cells, na, 0, by_int, &nvals);
    intern_cells(rk, R->cols[k].cells, nb, na, by_int, &nvals);

    size_t nn = 0, ns = 0;
    for (size_t v = 0; v < nvals; v++) {
        const key_value *kv = &rk->vals[v];
        if (kv->s)
            rk->strs[ns++] = (str_item){kv->s, kv->len, (uint32_t)v};
        else
            rk->nums[nn++] = (tl_sort_item){kv->num, (uint32_t)v};
    }
    tl_sort_items(rk->nums, nn, rk->tmp);
    sort_texts(rk->strs, ns, 0, rk->nums + nn, rk->tmp, rk->stmp);
    for (size_t r = 0; r < nn; r++)
        rk->rank[rk->nums[r].row] = (uint32_t)r;
    for (size_t r = 0; r < ns; r++)
        rk->rank[rk->strs[r].id] = (uint32_t)(nn + r);
    int any_missing = 0;
    for (size_t i = 0; i < na + nb; i++) {
        uint32_t id = rk->ids[i];
        any_missing |= id == NO_ROW;
        rk->col[i] = id == NO_ROW ? (uint32_t)nvals : rk->rank[id];
    }
    return nvals + (size_t)any_missing; /* at least 1: there are cells */
}

/* Stable counting sort of in[0..n) (values < nkeys) by key[in[i]] into out. */
static void counting_sort(const uint32_t *in, uint32_t *out, size_t n, const uint32_t *key, size_t nkeys,
                          uint32_t *count)
{
    memset(count, 0, (nkeys + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[key[in ? in[i] : i] + 1]++;
    for (size_t k = 0; k < nkeys; k++)
        count[k + 1] += count[k];
    for (size_t i = 0; i < n; i++) {
        uint32_t x = in ? in[i] : (uint32_t)i;
        out[count[key[x]]++] = x;
    }
}

/* Rows x and y of L then R (x < L->nrows: row x of L, else row x - L->nrows of R) in the
 * key order of keys kfrom..nkeys (tl_cell_key_cmp, with strings compared by length). */
typedef struct union_ctx {
    const tl_table *L, *R;
    size_t kfrom, nkeys;
} union_ctx;

static int cmp_union(const union_ctx *u, size_t x, size_t y)
{
    size_t nl = u->L->nrows;
    for (size_t k = u->kfrom; k < u->nkeys; k++) {
        const tl_cell *a = x < nl ? &u->L->cols[k].cells[x] : &u->R->cols[k].cells[x - nl];
        const tl_cell *b = y < nl ? &u->L->cols[k].cells[y] : &u->R->cols[k].cells[y - nl];
        int c;
        if (a->kind == TL_STR && b->kind == TL_STR) {
            size_t la = tl_cell_len(a), lb = tl_cell_len(b);
            c = a->v.s == b->v.s ? 0 : memcmp(a->v.s, b->v.s, la < lb ? la : lb);
            if (c == 0)
                c = la < lb ? -1 : la > lb;
        } else {
            c = tl_cell_key_cmp(a, b);
        }
        if (c)
            return c;
    }
    return 0;
}

static int cmp_union_rows(size_t a, size_t b, void *ctx) { return cmp_union(ctx, a, b); }

/* About the comparisons that sorting a class of s rows takes: s log2 s. */
static size_t sort_cost(size_t s)
{
    size_t lg = 0;
    while (lg < 63 && ((size_t)1 << lg) < s)
        lg++;
    return s * lg;
}

/*
 * Refine rank[0..ncells) (nranks classes) by keys kfrom..nkeys with comparisons, class by
 * class: for when the classes are small (mostly a row of L and its match in R), where
 * ranking each remaining column whole would cost more.  Returns the number of ranks.
 */
static size_t finish_classes(ranker *rk, const union_ctx *u, uint32_t *rank, size_t nranks)
{
    size_t n = rk->ncells;
    uint32_t *p = rk->p1, r = 0;
    size_t *big = NULL, bigcap = 0;
    counting_sort(NULL, p, n, rank, nranks, rk->count);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && rank[p[b]] == rank[p[a]];)
            b++;
        if (b - a == 1) {
            rank[p[a]] = r++;
        } else if (b - a == 2) {
            uint32_t x = p[a], y = p[a + 1];
            int c = cmp_union(u, x, y);
            rank[x] = r + (c > 0);
            rank[y] = r + (c < 0);
            r += 1 + (c != 0);
        } else {
            size_t s = b - a;
            TL_GROW(big, bigcap, s);
            for (size_t i = 0; i < s; i++)
                big[i] = p[a + i];
            tl_sort_rows(big, s, cmp_union_rows, (void *)u);
            rank[big[0]] = r;
            for (size_t i = 1; i < s; i++) {
                if (cmp_union(u, big[i - 1], big[i]) != 0)
                    r++;
                rank[big[i]] = r;
            }
            r++;
        }
    }
    free(big);
    return r;
}

/*
 * One rank per row of L then R for the whole key tuple, in rank[0..ncells); returns the
 * number of ranks, or 0 when some key column cannot be ranked.
 */
static size_t key_ranks(ranker *rk, const tl_table *L, const tl_table *R, size_t nkeys, uint32_t *rank)
{
    size_t n = rk->ncells, nranks = 1;
    memset(rank, 0, n * sizeof *rank);
    /* once every row is alone in its class, later keys change nothing */
    for (size_t k = 0; k < nkeys && nranks < n; k++) {
        size_t ncol = column_ranks(rk, L, R, k);
        if (ncol == 0)
            return 0;
        if (ncol == 1)
            continue; /* one value throughout: no class splits */
        /* the pairs (rank so far, this column's rank) in order, then renumbered */
        const uint32_t *p = rk->p1;
        counting_sort(NULL, rk->p1, n, rk->col, ncol, rk->count);
        if (nranks > 1) {
            counting_sort(rk->p1, rk->p2, n, rank, nranks, rk->count);
            p = rk->p2;
        }
        uint32_t r = 0, prev_rank = 0, prev_col = 0;
        size_t run = 0, cost = 0;
        for (size_t j = 0; j < n; j++) {
            uint32_t x = p[j];
            if (j && (rank[x] != prev_rank || rk->col[x] != prev_col)) {
                r++;
                cost += sort_cost(run);
                run = 0;
            }
            run++;
            prev_rank = rank[x];
            prev_col = rk->col[x];
            rank[x] = r;
        }
        cost += sort_cost(run);
        nranks = (size_t)r + 1;
        if (nranks < n && k + 1 < nkeys && cost <= 2 * n) {
            /* small classes: the remaining keys by comparisons (on the same order) */
            int by_int;
            for (size_t k2 = k + 1; k2 < nkeys; k2++)
                if (!rankable(L, R, k2, &by_int))
                    return 0;
            union_ctx u = {L, R, k + 1, nkeys};
            return finish_classes(rk, &u, rank, nranks);
        }
    }
    return nranks;
}

/* The fallback: tl_cell_key_cmp on the key columns. */
static int cmp_keys(const tl_table *a, size_t ra, const tl_table *b, size_t rb, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        int c = tl_cell_key_cmp(&a->cols[k].cells[ra], &b->cols[k].cells[rb]);
        if (c)
            return c;
    }
    return 0;
}

typedef struct key_ctx {
    const tl_table *t;
    size_t nkeys;
} key_ctx;

static int cmp_rows_by_key(size_t a, size_t b, void *ctx)
{
    const key_ctx *k = ctx;
    return cmp_keys(k->t, a, k->t, b, k->nkeys);
}

/* The rows of t in key order (stable), by the comparator. */
static void sort_by_key_cmp(const tl_table *t, size_t nkeys, uint32_t *out)
{
    size_t *idx = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *idx);
    for (size_t i = 0; i < t->nrows; i++)
        idx[i] = i;
    key_ctx ctx = {t, nkeys};
    tl_sort_rows(idx, t->nrows, cmp_rows_by_key, &ctx);
    for (size_t i = 0; i < t->nrows; i++)
        out[i] = (uint32_t)idx[i];
    free(idx);
}

/* Two tables being merged, and how their keys compare. */
typedef struct merge_ctx {
    const tl_table *L, *R;
    size_t nkeys;
    const uint32_t *rank; /* key ranks of L's rows then R's, or NULL: use tl_cell_key_cmp */
} merge_ctx;

/* Key of row a of L against row b of R. */
static int cmp_lr(const merge_ctx *m, uint32_t a, uint32_t b)
{
    if (m->rank) {
        uint32_t x = m->rank[a], y = m->rank[m->L->nrows + b];
        return x < y ? -1 : x > y;
    }
    return cmp_keys(m->L, a, m->R, b, m->nkeys);
}

/* End of the run of rows equal in key to idx[i] (idx: rows of L, or of R when right). */
static size_t run_end(const merge_ctx *m, int right, const uint32_t *idx, size_t i)
{
    const tl_table *t = right ? m->R : m->L;
    size_t j = i + 1;
    if (m->rank) {
        const uint32_t *rank = m->rank + (right ? m->L->nrows : 0);
        while (j < t->nrows && rank[idx[j]] == rank[idx[i]])
            j++;
    } else {
        while (j < t->nrows && cmp_keys(t, idx[i], t, idx[j], m->nkeys) == 0)
            j++;
    }
    return j;
}

/* "name='aten::mm', Input type='...'" for messages, shortened. */
static void describe_key(tl_buf *b, const tl_table *t, size_t row, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        const tl_cell *c = &t->cols[k].cells[row];
        tl_buf_printf(b, "%s%s=", k ? ", " : "", t->cols[k].name);
        if (c->kind == TL_STR)
            tl_buf_printf(b, "'%.60s%s'", c->v.s, strlen(c->v.s) > 60 ? "..." : "");
        else if (c->kind == TL_MISSING)
            tl_buf_adds(b, "(missing)");
        else
            tl_buf_printf(b, "%.17g", tl_cell_number(c));
    }
}

/* The kinds of cells seen, as bits (1 << kind). */
#define KIND_BIT(k) (1u << (k))

/* After the last merge: a numeric column holding integers turns floating point when it
 * has missing cells or floats too (see promote_integers). */
static void promote_column(tl_column *col, size_t n, unsigned kinds)
{
    if (col->type != TL_COL_NUM || !(kinds & KIND_BIT(TL_INT)) ||
        !(kinds & (KIND_BIT(TL_MISSING) | KIND_BIT(TL_FLOAT))))
        return;
    for (size_t r = 0; r < n; r++)
        if (col->cells[r].kind == TL_INT)
            col->cells[r] = tl_cell_float((double)col->cells[r].v.i);
}

/* Column `col` of the merge: src[rows[r]] (missing for NO_ROW) for r < n; promoted when
 * `last`. */
static void gather(tl_column *col, const tl_cell *src, const uint32_t *rows, size_t n, int last)
{
    tl_cell *out = tl_xmalloc_filled((n ? n : 1) * sizeof *out);
    unsigned kinds = 0;
    for (size_t r = 0; r < n; r++) {
        uint32_t i = rows[r];
        tl_cell c = i != NO_ROW ? src[i] : tl_cell_missing();
        kinds |= KIND_BIT(c.kind);
        out[r] = c;
    }
    col->cells = out;
    if (last)
        promote_column(col, n, kinds);
}

/* Free a source column's cells once the merge has what it needs of them (the table is
 * freed whole later; its header stays). */
static void release_cells(tl_column *col)
{
    free(col->cells);
    col->cells = NULL;
}

/* Merge two prepared tables on their first nkeys columns; both are freed.  `last`: this is
 * the last merge, whose columns are promoted as they are made. */
static tl_table *merge_pair(tl_table *L, tl_table *R, size_t nkeys, int last, const char *sheet,
                            tl_error *err)
{
    size_t ncells = L->nrows + R->nrows;
    uint32_t *li = tl_xmalloc((L->nrows ? L->nrows : 1) * sizeof *li);
    uint32_t *ri = tl_xmalloc((R->nrows ? R->nrows : 1) * sizeof *ri);
    uint32_t *rank = tl_xmalloc((ncells ? ncells : 1) * sizeof *rank);
    uint32_t *pl = NULL, *pr = NULL;
    size_t npairs = 0, cap = 0, i = 0, j = 0;
    tl_table *out = NULL;
    merge_ctx m = {L, R, nkeys, NULL};

    ranker rk;
    ranker_init(&rk, ncells);
    size_t nranks = key_ranks(&rk, L, R, nkeys, rank);
    if (nranks) {
        counting_sort(NULL, li, L->nrows, rank, nranks, rk.count);
        counting_sort(NULL, ri, R->nrows, rank + L->nrows, nranks, rk.count);
        m.rank = rank;
    } else {
        sort_by_key_cmp(L, nkeys, li);
        sort_by_key_cmp(R, nkeys, ri);
    }
    ranker_free(&rk);

    /* The bound on rows, tighter for wide tables: the cells must fit as well. */
    size_t out_cols = L->ncols + R->ncols - nkeys, max_rows = TL_MERGE_MAX_ROWS;
    if (out_cols && TL_MERGE_MAX_CELLS / out_cols < max_rows)
        max_rows = TL_MERGE_MAX_CELLS / out_cols;

    while (i < L->nrows || j < R->nrows) {
        int c = i == L->nrows ? 1 : j == R->nrows ? -1 : cmp_lr(&m, li[i], ri[j]);
        size_t i2 = c <= 0 ? run_end(&m, 0, li, i) : i;
        size_t j2 = c >= 0 ? run_end(&m, 1, ri, j) : j;
        size_t nl = i2 - i, nr = j2 - j;
        int product = c == 0 && nl && nr && nl > max_rows / nr; /* nl * nr alone is too many */
        size_t add = product ? 0 : c == 0 ? nl * nr : nl + nr;
        if (product || npairs + add > max_rows) {
            char limit[96];
            if (max_rows == TL_MERGE_MAX_ROWS)
                snprintf(limit, sizeof limit, "more than %zu rows", max_rows);
            else
                snprintf(limit, sizeof limit, "more than %zu rows of %zu columns (%zu cells)", max_rows,
                         out_cols, TL_MERGE_MAX_CELLS);
            if (c == 0 && (nl > 1 || nr > 1)) {
                /* the usual cause: a key repeated on both sides multiplies */
                tl_buf key = {0};
                describe_key(&key, L, li[i], nkeys);
                tl_error_set(err,
                             "sheet '%s': the key (%s) is repeated (%zu x %zu rows) and the merge "
                             "would make %s; refusing",
                             sheet, tl_buf_cstr(&key), nl, nr, limit);
                tl_buf_free(&key);
            } else {
                tl_error_set(err, "sheet '%s': the merge would make %s; refusing", sheet, limit);
            }
            goto done;
        }
        /* pr follows pl's capacity; resized only when pl grew (a realloc per key would
         * copy the whole array each time under ASan, whose realloc never grows in place) */
        size_t old_cap = cap;
        TL_GROW(pl, cap, npairs + add);
        if (cap != old_cap || !pr)
            pr = tl_xrealloc(pr, cap * sizeof *pr);
        if (c == 0) {
            for (size_t a = i; a < i2; a++)
                for (size_t b = j; b < j2; b++, npairs++)
                    pl[npairs] = li[a], pr[npairs] = ri[b];
        } else if (c < 0) {
            for (size_t a = i; a < i2; a++, npairs++)
                pl[npairs] = li[a], pr[npairs] = NO_ROW;
        } else {
            for (size_t b = j; b < j2; b++, npairs++)
                pl[npairs] = NO_ROW, pr[npairs] = ri[b];
        }
        i = i2;
        j = j2;
    }

    /* The pairing is all the merge needs of the key order now; each source column is
     * freed as soon as its cells are gathered, so that a sheet's cells are never held
     * twice over (the inputs and the merge) in full. */
    free(li);
    free(ri);
    free(rank);
    li = ri = rank = NULL;
    out = tl_table_new();
    out->nrows = npairs;
    out->ncols = out_cols;
    out->cols = tl_xcalloc(out->ncols ? out->ncols : 1, sizeof *out->cols);
    for (size_t c = 0; c < nkeys; c++) {
        /* a key comes from the left row, or the right one where there is none */
        const tl_column *lc = &L->cols[c], *rc = &R->cols[c];
        tl_column *oc = &out->cols[c];
        *oc = *lc;
        if (lc->type != rc->type)
            oc->type = TL_COL_STR; /* mixed key types become an object column, as in pandas */
        oc->cells = tl_xmalloc((npairs ? npairs : 1) * sizeof(tl_cell));
        unsigned kinds = 0;
        for (size_t r = 0; r < npairs; r++) {
            tl_cell cell = pl[r] != NO_ROW ? lc->cells[pl[r]] : rc->cells[pr[r]];
            kinds |= KIND_BIT(cell.kind);
            oc->cells[r] = cell;
        }
        if (last)
            promote_column(oc, npairs, kinds);
        release_cells(&L->cols[c]);
        release_cells(&R->cols[c]);
    }
    for (size_t c = nkeys; c < L->ncols; c++) {
        out->cols[c] = L->cols[c];
        gather(&out->cols[c], L->cols[c].cells, pl, npairs, last);
        release_cells(&L->cols[c]);
    }
    for (size_t c = nkeys; c < R->ncols; c++) {
        out->cols[L->ncols + c - nkeys] = R->cols[c];
        gather(&out->cols[L->ncols + c - nkeys], R->cols[c].cells, pr, npairs, last);
        release_cells(&R->cols[c]);
    }
done:
    free(li);
    free(ri);
    free(rank);
    free(pl);
    free(pr);
    tl_table_free(L);
    tl_table_free(R);
    return out;
}

/*
 * A numeric column holding integers turns floating point once the merge gives it a
 * missing cell (pandas has no missing integers), or once integers and floats meet in a
 * merged key column.
 */
static void promote_integers(tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        tl_column *col = &t->cols[c];
        if (col->type != TL_COL_NUM)
            continue;
        int has_int = 0, needs_float = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            uint8_t k = col->cells[r].kind;
            has_int |= k == TL_INT;
            needs_float |= k == TL_MISSING || k == TL_FLOAT;
        }
        if (!has_int || !needs_float)
            continue;
        for (size_t r = 0; r < t->nrows; r++)
            if (col->cells[r].kind == TL_INT)
                col->cells[r] = tl_cell_float((double)col->cells[r].v.i);
    }
}

/* ---- step 3: diff and pct ------------------------------------------------------------- */

static int is_numeric(const tl_cell *c) { return c->kind == TL_INT || c->kind == TL_FLOAT || c->kind == TL_BOOL; }

/*
 * The number a metric cell stands for in a diff, in *out; 0 when it stands for none.
 * A column with one text cell is a string column (SPEC §1), and a CSV reader then keeps
 * every cell of it as text, while a workbook keeps its number cells as numbers: so a text
 * cell that reads as a number counts as that number here, and both kinds of report give
 * the same per-row diffs (only the cell that is no number has none).
 */
static int diff_operand(const tl_cell *c, tl_cell *out)
{
    if (is_numeric(c)) {
        *out = *c;
        return 1;
    }
    return c->kind == TL_STR && tl_text_to_number(c->v.s, tl_cell_len(c), out);
}

static void add_diff(tl_table *t, const tl_column *base, const tl_column *var, const char *metric,
                     const char *tag, int tag_index, tl_arena *arena)
{
    size_t dc = tl_table_add_column(t, tl_arena_printf(arena, "%s__%s_diff", metric, tag));
    size_t pc = tl_table_add_column(t, tl_arena_printf(arena, "%s__%s_pct", metric, tag));
    /* base and var are copies of the source columns' headers (their cells do not move) */
    tl_column *d = &t->cols[dc], *p = &t->cols[pc];
    d->role = p->role = TL_ROLE_DIFF;
    d->tag = p->tag = tag_index;
    d->type = p->type = TL_COL_NUM;
    for (size_t r = 0; r < t->nrows; r++) {
        tl_cell bc, vc;
        if (!diff_operand(&base->cells[r], &bc) || !diff_operand(&var->cells[r], &vc))
            continue; /* missing stays missing */
        const tl_cell *b = &bc, *v = &vc;
        double diff;
        if (b->kind == TL_INT && v->kind == TL_INT) {
            d->cells[r] = tl_cell_int((int64_t)((uint64_t)v->v.i - (uint64_t)b->v.i));
            diff = (double)d->cells[r].v.i;
        } else {
            diff = tl_cell_number(v) - tl_cell_number(b);
            if (!isnan(diff))
                d->cells[r] = tl_cell_float(diff);
        }
        double bv = tl_cell_number(b);
        if (bv != 0) {
            /* the reference computes 100 * (diff / base): keep that rounding */
            double pct = 100 * (diff / bv);
            if (!isnan(pct))
                p->cells[r] = tl_cell_float(pct);
        }
    }
}

/* ---- the whole of steps 0-4 ----------------------------------------------------------- */

tl_table *tl_compare(tl_table **tables, const char *const *tags, size_t n,
                     const tl_compare_spec *spec, tl_arena *arena, tl_error *err)
{
    /* Keys every report has; a key some report lacks is left out (and so is prefixed). */
    const char **keys = tl_xmalloc((spec->nkeys + TL_ROW_KEYS_N + 1) * sizeof *keys); /* + the ordinal */
    size_t nkeys = 0;
    tl_name_index *ix = tl_xcalloc(n, sizeof *ix);
    for (size_t i = 0; i < n; i++)
        tl_name_index_init(&ix[i], tables[i]);
    for (size_t k = 0; k < spec->nkeys; k++) {
        size_t lacking = n;
        for (size_t i = 0; i < n && lacking == n; i++)
            if (tl_name_index_find(&ix[i], spec->keys[k]) < 0)
                lacking = i;
        if (lacking == n)
            keys[nkeys++] = spec->keys[k];
        else
            tl_warn("sheet '%s': report '%s' has no key column '%s'; it is not used as a key",
                    spec->sheet, tags[lacking], spec->keys[k]);
    }
    for (size_t i = 0; i < n; i++)
        tl_name_index_free(&ix[i]);
    free(ix);
    tl_table *merged = NULL;
    if (nkeys == 0) {
        tl_error_set(err, "sheet '%s': none of the key columns (%s%s) is in every report", spec->sheet,
                     spec->keys[0], spec->nkeys > 1 ? ", ..." : "");
        for (size_t i = 0; i < n; i++)
            tl_table_free(tables[i]);
        free(keys);
        return NULL;
    }
    if (tl_rowkeys_settle(tables, tags, n, keys, &nkeys, spec->tracelens_keys, spec->sheet, err) != 0) {
        for (size_t i = 0; i < n; i++)
            tl_table_free(tables[i]);
        free(keys);
        return NULL;
    }

    /* Which (metric, variant) pairs can be diffed, decided before prefixing. */
    unsigned char *can_diff = tl_xcalloc(spec->ndiffs * n + 1, 1);
    for (size_t m = 0; m < spec->ndiffs; m++) {
        if (tl_table_find(tables[0], spec->diffs[m]) < 0) {
            tl_warn("sheet '%s': baseline '%s' has no column '%s'; no diffs for it", spec->sheet,
                    tags[0], spec->diffs[m]);
            continue;
        }
        for (size_t i = 1; i < n; i++) {
            if (tl_table_find(tables[i], spec->diffs[m]) < 0)
                tl_warn("sheet '%s': report '%s' has no column '%s'; no diffs for it", spec->sheet,
                        tags[i], spec->diffs[m]);
            else
                can_diff[m * n + i] = 1;
        }
    }

    for (size_t i = 0; i < n; i++)
        prepare(tables[i], (int)i, tags[i], keys, nkeys, arena);
    merged = tables[0];
    for (size_t i = 1; i < n; i++) {
        merged = merge_pair(merged, tables[i], nkeys, i + 1 == n, spec->sheet, err);
        if (!merged) {
            /* merge_pair freed both of its inputs; the tables not yet merged remain */
            for (size_t j = i + 1; j < n; j++)
                tl_table_free(tables[j]);
            goto out;
        }
    }
    if (n == 1)
        promote_integers(merged); /* no merge has done it */
    if (keys[nkeys - 1] == tl_rowkeys_ordinal) /* it paired the rows; no result shows it */
        tl_table_remove_column(merged, --nkeys);

    size_t first_diff = merged->ncols;
    for (size_t m = 0; m < spec->ndiffs; m++) {
        for (size_t i = 1; i < n; i++) {
            if (!can_diff[m * n + i])
                continue;
            const char *bn = tl_arena_printf(arena, "%s::%s", tags[0], spec->diffs[m]);
            const char *vn = tl_arena_printf(arena, "%s::%s", tags[i], spec->diffs[m]);
            long b = tl_table_find(merged, bn), v = tl_table_find(merged, vn);
            if (merged->cols[b].type != TL_COL_NUM || merged->cols[v].type != TL_COL_NUM)
                tl_warn("sheet '%s': column '%s' is not numeric in every report; its "
                        "diffs are left empty where a value is not a number",
                        spec->sheet, spec->diffs[m]);
            /* copy the two source columns' headers: add_column may reallocate the array */
            tl_column base = merged->cols[b], var = merged->cols[v];
            add_diff(merged, &base, &var, spec->diffs[m], tags[i], (int)i, arena);
        }
    }

    /* Step 4: keys, the diff/pct columns, then the rest in merge order. */
    {
        tl_column *cols = tl_xmalloc((merged->ncols ? merged->ncols : 1) * sizeof *cols);
        size_t k = 0;
        for (size_t c = 0; c < nkeys; c++)
            cols[k++] = merged->cols[c];
        for (size_t c = first_diff; c < merged->ncols; c++)
            cols[k++] = merged->cols[c];
        for (size_t c = nkeys; c < first_diff; c++)
            cols[k++] = merged->cols[c];
        free(merged->cols);
        merged->cols = cols;
    }
out:
    free(can_diff);
    free(keys);
    return merged;
}

/* ---- step 5: rows by a metric, descending ------------------------------------------- */

/*
 * Order rows[0..n) by cells[row] descending, numbers (not NaN) first, ties and the rest in
 * their present order.  Each number is turned into a 64-bit key once, and the keys are
 * radix-sorted: no comparison function, and no cell read more than once.
 */
static void order_desc(const tl_cell *cells, uint32_t *rows, size_t n)
{
    tl_sort_item *items = tl_xmalloc((n ? n : 1) * sizeof *items);
    uint32_t *rest = tl_xmalloc((n ? n : 1) * sizeof *rest);
    size_t np = 0, nrest = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_cell *c = &cells[rows[i]];
        double x = is_numeric(c) ? tl_cell_number(c) : NAN;
        if (isnan(x))
            rest[nrest++] = rows[i];
        else
            items[np++] = (tl_sort_item){~tl_sort_key_double(x), rows[i]}; /* ~: descending */
    }
    tl_sort_items(items, np, NULL);
    for (size_t i = 0; i < np; i++)
        rows[i] = items[i].row;
    memcpy(rows + np, rest, nrest * sizeof *rest);
    free(items);
    free(rest);
}

void tl_sort_desc(tl_table *t, size_t col)
{
    uint32_t *rows = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *rows);
    for (size_t i = 0; i < t->nrows; i++)
        rows[i] = (uint32_t)i;
    order_desc(t->cols[col].cells, rows, t->nrows);
    size_t *idx = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *idx);
    for (size_t i = 0; i < t->nrows; i++)
        idx[i] = rows[i];
    tl_table_take_rows(t, idx, t->nrows);
    free(idx);
    free(rows);
}

/* ---- the split ------------------------------------------------------------------------ */

void tl_split_release(tl_table *merged, tl_split_kind kind, int variant, int last_variant, size_t base_m0)
{
    for (size_t c = 0; c < merged->ncols; c++) {
        tl_column *col = &merged->cols[c];
        if (col->role == TL_ROLE_KEY || c == base_m0 || !col->cells)
            continue;
        int done = col->tag == 0 ? kind == TL_SPLIT_ONLY_BASELINE && variant == last_variant
                                 : kind == TL_SPLIT_ONLY_VARIANT && col->tag == variant;
        if (done)
            release_cells(col);
    }
}

static int keep_column(const tl_column *c, tl_split_kind kind, int variant)
{
    if (c->role == TL_ROLE_KEY)
        return 1;
    if (c->role == TL_ROLE_DIFF)
        return kind != TL_SPLIT_ONLY_BASELINE && c->tag == variant;
    switch (kind) {
    case TL_SPLIT_INTERSECT: return c->tag == 0 || c->tag == variant;
    case TL_SPLIT_ONLY_BASELINE: return c->tag == 0;
    case TL_SPLIT_ONLY_VARIANT: return c->tag == variant;
    }
    return 0;
}

tl_table *tl_split(const tl_table *merged, tl_split_kind kind, int variant, size_t base_m0,
                   size_t var_m0, size_t base_sort, size_t var_sort)
{
    const tl_cell *bm = merged->cols[base_m0].cells, *vm = merged->cols[var_m0].cells;
    uint32_t *rows = tl_xmalloc((merged->nrows ? merged->nrows : 1) * sizeof *rows);
    size_t n = 0;
    for (size_t r = 0; r < merged->nrows; r++) {
        int b = bm[r].kind != TL_MISSING, v = vm[r].kind != TL_MISSING;
        if ((kind == TL_SPLIT_INTERSECT && b && v) || (kind == TL_SPLIT_ONLY_BASELINE && b && !v) ||
            (kind == TL_SPLIT_ONLY_VARIANT && !b && v))
            rows[n++] = (uint32_t)r;
    }
    order_desc(merged->cols[kind == TL_SPLIT_ONLY_VARIANT ? var_sort : base_sort].cells, rows, n);

    tl_table *out = tl_table_new();
    out->nrows = n;
    out->cols = tl_xcalloc(merged->ncols ? merged->ncols : 1, sizeof *out->cols);
    for (size_t c = 0; c < merged->ncols; c++) {
        const tl_column *src = &merged->cols[c];
        if (!keep_column(src, kind, variant))
            continue;
        int any = 0;
        for (size_t r = 0; r < n && !any; r++)
            any = src->cells[rows[r]].kind != TL_MISSING;
        if (!any)
            continue; /* all-missing columns are dropped, keys included */
        tl_column *dst = &out->cols[out->ncols++];
        *dst = *src;
        dst->cells = tl_xmalloc_filled((n ? n : 1) * sizeof(tl_cell));
        for (size_t r = 0; r < n; r++)
            dst->cells[r] = src->cells[rows[r]];
    }
    free(rows);
    return out;
}
