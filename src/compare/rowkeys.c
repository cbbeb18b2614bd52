/*
 * rowkeys.c - SPEC §2 step 0: the keys a sheet's rows are paired on, and the merged size
 * (see rowkeys.h).
 *
 * Every report's key tuples are interned together (one id per distinct tuple), so that
 * how often a tuple repeats, and how many rows the merge would make, are counts over ids:
 * linear in the rows, whatever the keys hold.
 */
#include "compare/rowkeys.h"

#include "compare/compare.h"

#include "base/hash.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name no real header holds (it starts with a control character): the column is added
 * last, used as the last key, and removed from the merged table (tl_compare). */
const char tl_rowkeys_ordinal[] = "\x01row order";

const char *const tl_row_keys[TL_ROW_KEYS_N] = {"is_recompute", "gpu_pid", "parent_module",
                                                "Parent cpu_op", "Parent op category", "Kernel stream"};

/*
 * The key tuples of several tables, interned together: every row of table i gets an id
 * (ids[i][row]), equal for rows whose keys are equal (tl_cell_key_cmp on every key).
 * cols[i][0..nk) are the key columns' indexes in table i.
 */
typedef struct tuples {
    size_t nids;
    uint32_t **ids;
    uint32_t *first_table, *first_row; /* per id: where it was first seen */
} tuples;

static int tuple_eq(tl_table *const *t, const size_t *const *cols, size_t nk, size_t ta, size_t ra, size_t tb,
                    size_t rb)
{
    for (size_t k = 0; k < nk; k++)
        if (tl_cell_key_cmp(&t[ta]->cols[cols[ta][k]].cells[ra], &t[tb]->cols[cols[tb][k]].cells[rb]) != 0)
            return 0;
    return 1;
}

static void tuples_build(tuples *tp, tl_table *const *t, size_t n, const size_t *const *cols, size_t nk)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += t[i]->nrows;
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    uint32_t *slot = tl_xcalloc_dense(cap, sizeof *slot); /* id + 1; 0 = empty */
    tp->nids = 0;
    tp->ids = tl_xcalloc(n, sizeof *tp->ids);
    tp->first_table = tl_xmalloc((total ? total : 1) * sizeof *tp->first_table);
    tp->first_row = tl_xmalloc((total ? total : 1) * sizeof *tp->first_row);
    for (size_t i = 0; i < n; i++) {
        tp->ids[i] = tl_xmalloc((t[i]->nrows ? t[i]->nrows : 1) * sizeof **tp->ids);
        for (size_t r = 0; r < t[i]->nrows; r++) {
            uint64_t h = 0x2545f4914f6cdd1dULL;
            for (size_t k = 0; k < nk; k++)
                h = tl_hash_mix(h ^ tl_cell_key_hash(&t[i]->cols[cols[i][k]].cells[r]));
            size_t s = (size_t)h & (cap - 1);
            while (slot[s] && !tuple_eq(t, cols, nk, tp->first_table[slot[s] - 1], tp->first_row[slot[s] - 1], i, r))
                s = (s + 1) & (cap - 1);
            if (!slot[s]) {
                tp->first_table[tp->nids] = (uint32_t)i;
                tp->first_row[tp->nids] = (uint32_t)r;
                slot[s] = (uint32_t)++tp->nids;
            }
            tp->ids[i][r] = slot[s] - 1;
        }
    }
    free(slot);
}

static void tuples_free(tuples *tp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(tp->ids[i]);
    free(tp->ids);
    free(tp->first_table);
    free(tp->first_row);
}

/* The key columns' indexes of every table, for keys[0..nk). */
static size_t **key_columns(tl_table *const *t, size_t n, const char *const *keys, size_t nk)
{
    size_t **cols = tl_xcalloc(n, sizeof *cols);
    for (size_t i = 0; i < n; i++) {
        cols[i] = tl_xmalloc((nk ? nk : 1) * sizeof **cols);
        tl_name_index ix;
        tl_name_index_init(&ix, t[i]);
        for (size_t k = 0; k < nk; k++)
            cols[i][k] = (size_t)tl_name_index_find(&ix, keys[k]);
        tl_name_index_free(&ix);
    }
    return cols;
}

static void key_columns_free(size_t **cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(cols[i]);
    free(cols);
}

/* How many key values of table i are found in more than one of its rows (count: nids
 * entries of scratch). */
static size_t repeated_values(const tuples *tp, const tl_table *t, size_t i, uint32_t *count)
{
    memset(count, 0, (tp->nids ? tp->nids : 1) * sizeof *count);
    size_t rep = 0;
    for (size_t r = 0; r < t->nrows; r++)
        if (++count[tp->ids[i][r]] == 2)
            rep++;
    return rep;
}

/* The rows of all tables that repeat a key value of their own table (beyond its first row). */
static size_t excess_rows(const tuples *tp, tl_table *const *t, size_t n, uint32_t *count)
{
    size_t excess = 0;
    for (size_t i = 0; i < n; i++) {
        memset(count, 0, (tp->nids ? tp->nids : 1) * sizeof *count);
        for (size_t r = 0; r < t[i]->nrows; r++)
            excess += count[tp->ids[i][r]]++ > 0;
    }
    return excess;
}

/* "name='aten::mm', Input type='...'" for messages, shortened. */
static void describe_tuple(tl_buf *b, const tl_table *t, const size_t *cols, const char *const *keys, size_t nk,
                           size_t row)
{
    for (size_t k = 0; k < nk; k++) {
        const tl_cell *c = &t->cols[cols[k]].cells[row];
        tl_buf_printf(b, "%s%s=", k ? ", " : "", keys[k]);
        if (c->kind == TL_STR)
            tl_buf_printf(b, "'%.60s%s'", c->v.s, strlen(c->v.s) > 60 ? "..." : "");
        else if (c->kind == TL_MISSING)
            tl_buf_adds(b, "(missing)");
        else
            tl_buf_printf(b, "%.17g", tl_cell_number(c));
    }
}

int tl_rowkeys_settle(tl_table *const *t, const char *const *tags, size_t n, const char **keys, size_t *nkeys,
                      int exact, const char *sheet, tl_error *err)
{
    size_t nk = *nkeys, next = 0;
    size_t **cols = key_columns(t, n, keys, nk);
    tuples tp;
    tuples_build(&tp, t, n, (const size_t *const *)cols, nk);
    size_t allrows = 0;
    for (size_t i = 0; i < n; i++)
        allrows += t[i]->nrows;
    uint32_t *count = tl_xmalloc((allrows + 1) * sizeof *count); /* ids never outnumber rows */
    /* each candidate in turn, kept when it tells rows apart (the fewest needed) */
    size_t excess = excess_rows(&tp, t, n, count);
    while (excess && !exact && next < TL_ROW_KEYS_N) {
        const char *cand = tl_row_keys[next++];
        int ok = 1;
        for (size_t k = 0; k < nk && ok; k++)
            ok = strcmp(keys[k], cand) != 0;
        for (size_t i = 0; i < n && ok; i++)
            ok = tl_table_find(t[i], cand) >= 0;
        if (!ok)
            continue;
        keys[nk] = cand;
        size_t **cols2 = key_columns(t, n, keys, nk + 1);
        tuples tp2;
        tuples_build(&tp2, t, n, (const size_t *const *)cols2, nk + 1);
        size_t excess2 = excess_rows(&tp2, t, n, count);
        if (excess2 < excess) {
            tuples_free(&tp, n);
            key_columns_free(cols, n);
            tp = tp2;
            cols = cols2;
            excess = excess2;
            nk++;
        } else {
            tuples_free(&tp2, n);
            key_columns_free(cols2, n);
        }
    }
    *nkeys = nk;
    /* keys that still repeat are paired in order: each row's place among its key value's
     * rows (tl_rowkeys_ordinal) decides the pairing, so a key value's rows make as many
     * merged rows as the report with most of them has, never the product */
    int in_order = excess && !exact;

    /* the merged size: per key value, the product of its counts (saturating), or the
     * largest count when paired in order */
    int rc = 0;
    uint32_t *per = tl_xcalloc((tp.nids ? tp.nids : 1) * n, sizeof *per); /* id-major */
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < t[i]->nrows; r++)
            per[(size_t)tp.ids[i][r] * n + i]++;
    size_t total = 0, worst = 0, worst_rows = 0;
    for (size_t id = 0; id < tp.nids; id++) {
        size_t rows = 1;
        for (size_t i = 0; i < n; i++) {
            size_t c = per[id * n + i] ? per[id * n + i] : 1;
            if (in_order)
                rows = c > rows ? c : rows;
            else
                rows = rows > (SIZE_MAX / 2) / c ? SIZE_MAX / 2 : rows * c;
        }
        if (rows > worst_rows)
            worst_rows = rows, worst = id;
        total = total > SIZE_MAX / 2 - rows ? SIZE_MAX / 2 : total + rows;
    }
    /* and the cells: as many rows of every report's columns (the keys once) */
    size_t out_cols = 0;
    for (size_t i = 0; i < n; i++)
        out_cols += t[i]->ncols - nk;
    out_cols += nk;
    int too_many_cells = out_cols && total > TL_MERGE_MAX_CELLS / out_cols;
    if (total > TL_SHEET_MAX_ROWS || too_many_cells) {
        char limit[160];
        if (total > TL_SHEET_MAX_ROWS)
            snprintf(limit, sizeof limit, "%s%zu rows, more than a worksheet holds (%zu)",
                     total >= SIZE_MAX / 2 ? "over " : "", total, TL_SHEET_MAX_ROWS);
        else
            snprintf(limit, sizeof limit, "%zu rows of %zu columns, more than %zu cells", total, out_cols,
                     TL_MERGE_MAX_CELLS);
        size_t ti = tp.first_table[worst];
        tl_buf key = {0}, counts = {0};
        describe_tuple(&key, t[ti], cols[ti], keys, nk, tp.first_row[worst]);
        size_t shown = 0;
        for (size_t i = 0; i < n; i++) {
            if (per[worst * n + i] < 2)
                continue;
            if (shown++ < 4)
                tl_buf_printf(&counts, "%s%u in '%s'", shown > 1 ? ", " : "", per[worst * n + i], tags[i]);
        }
        if (shown > 4)
            tl_buf_printf(&counts, ", ... (%zu reports)", shown);
        if (worst_rows > 1)
            tl_error_set(err, "sheet '%s': the key (%s) is repeated (rows: %s) and the merge would make %s; "
                              "refusing", sheet, tl_buf_cstr(&key), tl_buf_cstr(&counts), limit);
        else
            tl_error_set(err, "sheet '%s': the merge would make %s; refusing", sheet, limit);
        tl_buf_free(&key);
        tl_buf_free(&counts);
        rc = -1;
    }
    /* the warning: which reports still repeat their keys, and how often */
    tl_buf msg = {0};
    size_t nrep_tables = 0;
    for (size_t i = 0; i < n; i++) {
        size_t rep = repeated_values(&tp, t[i], i, count);
        if (rep)
            tl_buf_printf(&msg, "%s'%s' %zu", nrep_tables++ ? ", " : "", tags[i], rep);
    }
    if (nrep_tables && rc == 0) { /* a refused merge says why, in one line */
        tl_buf keyl = {0};
        for (size_t k = 0; k < nk && k < 6; k++) /* a roofline sheet may have thousands */
            tl_buf_printf(&keyl, "%s%s", k ? ", " : "", keys[k]);
        if (nk > 6)
            tl_buf_printf(&keyl, ", ... (%zu keys)", nk);
        tl_warn("sheet '%s': key values found in several rows (keys %s; report %s); their rows are "
                "paired %s",
                sheet, tl_buf_cstr(&keyl), tl_buf_cstr(&msg),
                exact ? "every way (--tracelens-keys)"
                      : "in order (the k-th of a value with the k-th), the sheet has no column that tells them "
                        "apart");
        tl_buf_free(&keyl);
    }
    tl_buf_free(&msg);
    if (in_order && rc == 0) {
        /* each row's place among the rows of its key value in its own table */
        for (size_t i = 0; i < n; i++) {
            memset(count, 0, (tp.nids ? tp.nids : 1) * sizeof *count);
            size_t c = tl_table_add_column(t[i], tl_rowkeys_ordinal);
            t[i]->cols[c].type = TL_COL_NUM;
            for (size_t r = 0; r < t[i]->nrows; r++)
                t[i]->cols[c].cells[r] = tl_cell_int((int64_t)count[tp.ids[i][r]]++);
        }
        keys[(*nkeys)++] = tl_rowkeys_ordinal;
    }

    free(per);
    free(count);
    tuples_free(&tp, n);
    key_columns_free(cols, n);
    return rc;
}

