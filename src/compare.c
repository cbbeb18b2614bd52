/*
 * compare.c - one sheet compared across reports (see compare.h and SPEC §2).
 *
 * The merge is a sort-merge join: each side's rows are stably sorted by key, then the
 * two sorted lists are walked together.  That yields the rows already in the order the
 * SPEC asks for (by key, missing keys last, duplicates as all pairs in row order), so no
 * separate ordering pass is needed, and every step stays O(n log n).
 */
#include "compare.h"

#include "sort.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_ROW SIZE_MAX

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

typedef struct key_ctx {
    const tl_table *t;
    size_t nkeys;
} key_ctx;

static int cmp_keys(const tl_table *a, size_t ra, const tl_table *b, size_t rb, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        int c = tl_cell_key_cmp(&a->cols[k].cells[ra], &b->cols[k].cells[rb]);
        if (c)
            return c;
    }
    return 0;
}

static int cmp_rows_by_key(size_t a, size_t b, void *ctx)
{
    const key_ctx *k = ctx;
    return cmp_keys(k->t, a, k->t, b, k->nkeys);
}

static size_t *sorted_by_key(const tl_table *t, size_t nkeys)
{
    size_t *idx = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *idx);
    for (size_t i = 0; i < t->nrows; i++)
        idx[i] = i;
    key_ctx ctx = {t, nkeys};
    tl_sort_rows(idx, t->nrows, cmp_rows_by_key, &ctx);
    return idx;
}

/* End of the run of rows equal in key to idx[i]. */
static size_t run_end(const tl_table *t, const size_t *idx, size_t i, size_t nkeys)
{
    size_t j = i + 1;
    while (j < t->nrows && cmp_keys(t, idx[i], t, idx[j], nkeys) == 0)
        j++;
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

/* Merge two prepared tables on their first nkeys columns; both are freed. */
static tl_table *merge_pair(tl_table *L, tl_table *R, size_t nkeys, const char *sheet,
                            tl_error *err)
{
    size_t *li = sorted_by_key(L, nkeys), *ri = sorted_by_key(R, nkeys);
    size_t *pl = NULL, *pr = NULL, npairs = 0, cap = 0;
    size_t i = 0, j = 0;
    tl_table *out = NULL;

    /* The bound on rows, tighter for wide tables: the cells must fit as well. */
    size_t out_cols = L->ncols + R->ncols - nkeys, max_rows = TL_MERGE_MAX_ROWS;
    if (out_cols && TL_MERGE_MAX_CELLS / out_cols < max_rows)
        max_rows = TL_MERGE_MAX_CELLS / out_cols;

    while (i < L->nrows || j < R->nrows) {
        int c = i == L->nrows ? 1 : j == R->nrows ? -1 : cmp_keys(L, li[i], R, ri[j], nkeys);
        size_t i2 = c <= 0 ? run_end(L, li, i, nkeys) : i;
        size_t j2 = c >= 0 ? run_end(R, ri, j, nkeys) : j;
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

    out = tl_table_new();
    out->nrows = npairs;
    out->ncols = L->ncols + R->ncols - nkeys;
    out->cols = tl_xcalloc(out->ncols ? out->ncols : 1, sizeof *out->cols);
    for (size_t c = 0; c < out->ncols; c++) {
        const tl_column *lc = c < L->ncols ? &L->cols[c] : NULL;
        const tl_column *rc = c < nkeys ? &R->cols[c] : c >= L->ncols ? &R->cols[c - L->ncols + nkeys] : NULL;
        tl_column *oc = &out->cols[c];
        *oc = lc ? *lc : *rc;
        if (c < nkeys && lc->type != rc->type)
            oc->type = TL_COL_STR; /* mixed key types become an object column, as in pandas */
        oc->cells = tl_xmalloc((npairs ? npairs : 1) * sizeof(tl_cell));
        for (size_t r = 0; r < npairs; r++) {
            tl_cell cell = tl_cell_missing();
            if (lc && pl[r] != NO_ROW)
                cell = lc->cells[pl[r]];
            else if (rc && pr[r] != NO_ROW)
                cell = rc->cells[pr[r]];
            oc->cells[r] = cell;
        }
    }
done:
    free(li);
    free(ri);
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
        const tl_cell *b = &base->cells[r], *v = &var->cells[r];
        if (!is_numeric(b) || !is_numeric(v))
            continue; /* missing stays missing */
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

/* ---- the whole of steps 1-4 ----------------------------------------------------------- */

tl_table *tl_compare(tl_table **tables, const char *const *tags, size_t n,
                     const tl_compare_spec *spec, tl_arena *arena, tl_error *err)
{
    /* Keys every report has; a key some report lacks is left out (and so is prefixed). */
    const char **keys = tl_xmalloc((spec->nkeys ? spec->nkeys : 1) * sizeof *keys);
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
        merged = merge_pair(merged, tables[i], nkeys, spec->sheet, err);
        if (!merged) {
            /* merge_pair freed both of its inputs; the tables not yet merged remain */
            for (size_t j = i + 1; j < n; j++)
                tl_table_free(tables[j]);
            goto out;
        }
    }
    promote_integers(merged);

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

typedef struct desc_ctx {
    const tl_cell *cells;
} desc_ctx;

static int cmp_desc(size_t a, size_t b, void *ctx)
{
    const tl_cell *ca = &((desc_ctx *)ctx)->cells[a], *cb = &((desc_ctx *)ctx)->cells[b];
    int na = is_numeric(ca) && !isnan(tl_cell_number(ca));
    int nb = is_numeric(cb) && !isnan(tl_cell_number(cb));
    if (!na || !nb)
        return nb - na; /* values before missing ones */
    double x = tl_cell_number(ca), y = tl_cell_number(cb);
    return x > y ? -1 : x < y;
}

static void sort_desc_rows(const tl_table *t, size_t col, size_t *idx, size_t n)
{
    desc_ctx ctx = {t->cols[col].cells};
    tl_sort_rows(idx, n, cmp_desc, &ctx);
}

void tl_sort_desc(tl_table *t, size_t col)
{
    size_t *idx = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *idx);
    for (size_t i = 0; i < t->nrows; i++)
        idx[i] = i;
    sort_desc_rows(t, col, idx, t->nrows);
    tl_table_take_rows(t, idx, t->nrows);
    free(idx);
}

/* ---- the split ------------------------------------------------------------------------ */

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
    size_t *rows = tl_xmalloc((merged->nrows ? merged->nrows : 1) * sizeof *rows), n = 0;
    for (size_t r = 0; r < merged->nrows; r++) {
        int b = bm[r].kind != TL_MISSING, v = vm[r].kind != TL_MISSING;
        if ((kind == TL_SPLIT_INTERSECT && b && v) || (kind == TL_SPLIT_ONLY_BASELINE && b && !v) ||
            (kind == TL_SPLIT_ONLY_VARIANT && !b && v))
            rows[n++] = r;
    }
    sort_desc_rows(merged, kind == TL_SPLIT_ONLY_VARIANT ? var_sort : base_sort, rows, n);

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
        dst->cells = tl_xmalloc((n ? n : 1) * sizeof(tl_cell));
        for (size_t r = 0; r < n; r++)
            dst->cells[r] = src->cells[rows[r]];
    }
    free(rows);
    return out;
}
