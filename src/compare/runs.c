/*
 * runs.c - the runs of one side made one table (see runs.h).
 *
 * The runs are merged exactly as sides are (tl_compare, with no diff columns), so a row of
 * one run meets the same row of the others, repeated keys in order; then each report's
 * copy of a column is folded into one.
 */
#include "compare/runs.h"

#include "base/hash.h"
#include "base/sort.h"
#include "base/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The number a metric cell stands for (a text that reads as one counts, as in the diffs). */
static int metric_value(const tl_cell *c, double *out)
{
    tl_cell n;
    if (tl_cell_is_number(c)) {
        *out = tl_cell_number(c);
        return !isnan(*out);
    }
    if (c->kind == TL_STR && tl_text_to_number(c->v.s, tl_cell_len(c), &n) && tl_cell_is_number(&n)) {
        *out = tl_cell_number(&n);
        return !isnan(*out);
    }
    return 0;
}

static tl_column new_column(const char *name, size_t nrows, uint8_t type)
{
    tl_column c = {name, type, TL_ROLE_DATA, -1, tl_xmalloc((nrows ? nrows : 1) * sizeof(tl_cell))};
    for (size_t r = 0; r < nrows; r++)
        c.cells[r] = tl_cell_missing();
    return c;
}

tl_table *tl_runs_collapse(tl_table **runs, size_t k, const char *side, const tl_compare_spec *spec,
                           tl_arena *arena, tl_error *err)
{
    const char **tags = tl_xmalloc(k * sizeof *tags);
    for (size_t r = 0; r < k; r++)
        tags[r] = tl_arena_printf(arena, "%s run %zu", side, r + 1);
    tl_compare_spec s = *spec;
    s.ndiffs = 0;
    tl_table *m = tl_compare(runs, tags, k, &s, arena, err);
    if (!m) {
        free(tags);
        return NULL;
    }
    /* every column's own name, once, in merge order (the first run's columns first), with
     * its copy in every run (or SIZE_MAX) */
    tl_strmap names = {0};
    const char **name = tl_xmalloc((m->ncols ? m->ncols : 1) * sizeof *name);
    size_t *copy = tl_xmalloc((m->ncols ? m->ncols : 1) * k * sizeof *copy), nnames = 0, nkeys = 0;
    for (size_t c = 0; c < m->ncols; c++) {
        const tl_column *col = &m->cols[c];
        if (col->role == TL_ROLE_KEY) {
            nkeys++;
            continue;
        }
        const char *own = col->name + strlen(tags[col->tag]) + 2; /* past "<r>::" */
        tl_strmap_slot *slot = tl_strmap_get(&names, own);
        if (!slot->value) {
            name[nnames] = own;
            for (size_t r = 0; r < k; r++)
                copy[nnames * k + r] = SIZE_MAX;
            slot->value = ++nnames;
        }
        copy[(slot->value - 1) * k + (size_t)col->tag] = c;
    }
    tl_strmap_clear(&names);

    tl_table *out = tl_table_new();
    out->nrows = m->nrows;
    out->cols = tl_xcalloc(nkeys + 2 * nnames + 1, sizeof *out->cols);
    for (size_t c = 0; c < m->ncols; c++) {
        if (m->cols[c].role != TL_ROLE_KEY)
            continue;
        out->cols[out->ncols++] = m->cols[c]; /* the cells move */
        m->cols[c].cells = NULL;
    }
    size_t nrows = m->nrows;
    unsigned char *present = tl_xcalloc((nrows ? nrows : 1) * k, 1); /* row r in run j */
    for (size_t j = 0; j < nnames; j++) {
        int metric = 0;
        for (size_t d = 0; d < spec->ndiffs && !metric; d++)
            metric = strcmp(spec->diffs[d], name[j]) == 0;
        for (size_t r = 0; r < k; r++) {
            size_t c = copy[j * k + r];
            for (size_t row = 0; c != SIZE_MAX && row < nrows; row++)
                present[row * k + r] |= m->cols[c].cells[row].kind != TL_MISSING;
        }
        if (metric) {
            tl_column mean = new_column(name[j], nrows, TL_COL_NUM);
            tl_column sd = new_column(tl_arena_printf(arena, "%s" TL_RUNS_STD_SUFFIX, name[j]), nrows, TL_COL_NUM);
            for (size_t row = 0; row < nrows; row++) {
                tl_moments mo = {0};
                for (size_t r = 0; r < k; r++) {
                    size_t c = copy[j * k + r];
                    double x;
                    if (c != SIZE_MAX && metric_value(&m->cols[c].cells[row], &x))
                        tl_moments_add(&mo, x);
                }
                if (mo.n > 0)
                    mean.cells[row] = tl_cell_float(mo.mean);
                if (mo.n > 1)
                    sd.cells[row] = tl_cell_float(sqrt(tl_moments_var(&mo)));
            }
            out->cols[out->ncols++] = mean;
            out->cols[out->ncols++] = sd;
        } else {
            /* the first run's value that is there; the column's type the first run's that has it
             * (text when the runs disagree) */
            int type = -1;
            for (size_t r = 0; r < k; r++) {
                size_t c = copy[j * k + r];
                if (c == SIZE_MAX)
                    continue;
                if (type < 0)
                    type = m->cols[c].type;
                else if (type != m->cols[c].type)
                    type = TL_COL_STR;
            }
            tl_column col = new_column(name[j], nrows, (uint8_t)type);
            for (size_t row = 0; row < nrows; row++) {
                for (size_t r = 0; r < k; r++) {
                    size_t c = copy[j * k + r];
                    if (c != SIZE_MAX && m->cols[c].cells[row].kind != TL_MISSING) {
                        col.cells[row] = m->cols[c].cells[row];
                        break;
                    }
                }
            }
            out->cols[out->ncols++] = col;
        }
    }
    tl_column rc = new_column(TL_RUNS_COLUMN, nrows, TL_COL_NUM);
    for (size_t row = 0; row < nrows; row++) {
        int64_t nr = 0;
        for (size_t r = 0; r < k; r++)
            nr += present[row * k + r];
        rc.cells[row] = tl_cell_int(nr);
    }
    out->cols[out->ncols++] = rc;
    free(present);
    free(name);
    free(copy);
    free(tags);
    tl_table_free(m);
    return out;
}

/* ---- one run at a time ------------------------------------------------------------------ */

/* A column of the folded table, by its own name: per row its moments (a metric) or the
 * first run's cell that is there and that run's number. */
typedef struct fold_col {
    const char *name;
    int metric;
    int type; /* -1 until a run has it; TL_COL_STR once two runs disagree */
    tl_moments *mo;
    tl_cell *cell;
    uint32_t *src;
} fold_col;

/* What the merge's last step needs of a run's copy of a column: a numeric column holding
 * integers turns floating point when it also holds floats or missing cells. */
enum { FOLD_NUMINT = 1, FOLD_MIXED = 2 };

struct tl_runs_fold {
    const char *side;
    tl_compare_spec spec;
    tl_arena *arena;
    tl_strmap rows;  /* the keys' text -> row + 1 */
    tl_strmap names; /* a column's own name -> its index + 1 */
    fold_col *cols;
    size_t ncols, capcols;
    tl_cell *keys; /* nrows x nkeys */
    int *key_type; /* per key, its merged column's type */
    int64_t *present;
    uint32_t *seen; /* the last run (+ 1) that had the row: a key repeated within a run */
    size_t nrows, caprows;
    size_t nruns;
    size_t *run_rows;        /* per run: its rows */
    unsigned char **run_flags; /* per run: FOLD_* per column it had */
    size_t *run_ncols;
    tl_buf key;
};

tl_runs_fold *tl_runs_fold_new(const char *side, const tl_compare_spec *spec, tl_arena *arena)
{
    tl_runs_fold *f = tl_xcalloc(1, sizeof *f);
    f->key_type = tl_xcalloc(spec->nkeys ? spec->nkeys : 1, sizeof *f->key_type);
    f->side = side;
    f->spec = *spec;
    f->arena = arena;
    return f;
}

void tl_runs_fold_free(tl_runs_fold *f)
{
    if (!f)
        return;
    for (size_t j = 0; j < f->ncols; j++) {
        free(f->cols[j].mo);
        free(f->cols[j].cell);
        free(f->cols[j].src);
    }
    free(f->cols);
    free(f->keys);
    free(f->key_type);
    free(f->present);
    free(f->seen);
    for (size_t r = 0; r < f->nruns; r++)
        free(f->run_flags[r]);
    free(f->run_flags);
    free(f->run_rows);
    free(f->run_ncols);
    tl_strmap_clear(&f->rows);
    tl_strmap_clear(&f->names);
    tl_buf_free(&f->key);
    free(f);
}

/* Room for the cells of rows up to `cap` in column j (new cells missing, moments empty). */
static void fold_col_grow(fold_col *c, size_t from, size_t cap)
{
    if (c->metric) {
        c->mo = tl_xrealloc(c->mo, cap * sizeof *c->mo);
        memset(c->mo + from, 0, (cap - from) * sizeof *c->mo);
    } else {
        c->cell = tl_xrealloc(c->cell, cap * sizeof *c->cell);
        c->src = tl_xrealloc(c->src, cap * sizeof *c->src);
        for (size_t r = from; r < cap; r++)
            c->cell[r] = tl_cell_missing(), c->src[r] = 0;
    }
}

/* Column `name`'s index, added (with room for the rows there are) when new. */
static size_t fold_column(tl_runs_fold *f, const char *name)
{
    tl_strmap_slot *slot = tl_strmap_get(&f->names, name);
    if (slot->value)
        return slot->value - 1;
    if (f->ncols == f->capcols) {
        f->capcols = f->capcols ? 2 * f->capcols : 16;
        f->cols = tl_xrealloc(f->cols, f->capcols * sizeof *f->cols);
    }
    fold_col *c = &f->cols[f->ncols];
    memset(c, 0, sizeof *c);
    c->name = tl_arena_strdup(f->arena, name);
    slot->key = c->name;
    slot->value = ++f->ncols;
    c->type = -1;
    for (size_t d = 0; d < f->spec.ndiffs && !c->metric; d++)
        c->metric = strcmp(f->spec.diffs[d], name) == 0;
    fold_col_grow(c, 0, f->caprows);
    return f->ncols - 1;
}

/* A cell that outlives the run's table: its text copied into the fold's arena. */
static tl_cell own_cell(tl_runs_fold *f, tl_cell c)
{
    if (c.kind == TL_STR) {
        size_t n = tl_cell_len(&c);
        return tl_cell_strn(tl_arena_strndup(f->arena, c.v.s, n), n);
    }
    return c;
}

/* The row of the keys of t's row q (kc: the key columns), added when new; -1 with *err when
 * a key is not a text or repeats within the run. */
static long fold_row(tl_runs_fold *f, const tl_table *t, const long *kc, size_t q, tl_error *err)
{
    size_t nk = f->spec.nkeys;
    tl_buf_clear(&f->key);
    for (size_t k = 0; k < nk; k++) {
        const tl_cell *c = &t->cols[kc[k]].cells[q];
        size_t n = c->kind == TL_STR ? tl_cell_len(c) : 0;
        if (c->kind != TL_STR || memchr(c->v.s, 0, n)) {
            tl_error_set(err, "sheet '%s' of %s run %zu: row %zu's key '%s' is not a text; its runs cannot be folded",
                         f->spec.sheet, f->side, f->nruns + 1, q + 1, f->spec.keys[k]);
            return -1;
        }
        tl_buf_printf(&f->key, "%zu:", n);
        tl_buf_add(&f->key, c->v.s, n);
    }
    tl_strmap_slot *slot = tl_strmap_get(&f->rows, tl_buf_cstr(&f->key));
    if (slot->value) {
        size_t row = slot->value - 1;
        if (f->seen[row] == f->nruns + 1) {
            tl_error_set(err, "sheet '%s' of %s run %zu: the key (%s) repeats; its runs cannot be folded",
                         f->spec.sheet, f->side, f->nruns + 1, f->keys[row * nk].v.s);
            return -1;
        }
        f->seen[row] = (uint32_t)(f->nruns + 1);
        return (long)row;
    }
    slot->key = tl_arena_strndup(f->arena, f->key.data, f->key.len);
    slot->value = f->nrows + 1;
    if (f->nrows == f->caprows) {
        size_t cap = f->caprows ? 2 * f->caprows : 64;
        f->keys = tl_xrealloc(f->keys, cap * nk * sizeof *f->keys);
        f->present = tl_xrealloc(f->present, cap * sizeof *f->present);
        f->seen = tl_xrealloc(f->seen, cap * sizeof *f->seen);
        for (size_t j = 0; j < f->ncols; j++)
            fold_col_grow(&f->cols[j], f->caprows, cap);
        f->caprows = cap;
    }
    size_t row = f->nrows++;
    for (size_t k = 0; k < nk; k++)
        f->keys[row * nk + k] = own_cell(f, t->cols[kc[k]].cells[q]);
    f->present[row] = 0;
    f->seen[row] = (uint32_t)(f->nruns + 1);
    return (long)row;
}

/* Run t's FOLD_* for column c. */
static unsigned char fold_flags(const tl_column *c, size_t nrows)
{
    if (c->type != TL_COL_NUM)
        return 0;
    int has_int = 0, mixed = 0;
    for (size_t r = 0; r < nrows; r++) {
        has_int |= c->cells[r].kind == TL_INT;
        mixed |= c->cells[r].kind == TL_MISSING || c->cells[r].kind == TL_FLOAT;
    }
    return has_int ? (unsigned char)(FOLD_NUMINT | (mixed ? FOLD_MIXED : 0)) : 0;
}

/* Its rows folded into the fold: the moments, the first cells that are there, the counts. */
static int fold_rows(tl_runs_fold *f, const tl_table *t, const long *kc, const size_t *copy, tl_error *err)
{
    for (size_t q = 0; q < t->nrows; q++) {
        long row = fold_row(f, t, kc, q, err);
        if (row < 0)
            return -1;
        int present = 0;
        for (size_t j = 0; j < f->ncols; j++) {
            if (copy[j] == SIZE_MAX)
                continue;
            const tl_cell *c = &t->cols[copy[j]].cells[q];
            fold_col *fc = &f->cols[j];
            double x;
            present |= c->kind != TL_MISSING;
            if (fc->metric && metric_value(c, &x)) {
                tl_moments_add(&fc->mo[row], x);
            } else if (!fc->metric && fc->cell[row].kind == TL_MISSING && c->kind != TL_MISSING) {
                fc->cell[row] = own_cell(f, *c);
                fc->src[row] = (uint32_t)f->nruns;
            }
        }
        f->present[row] += present;
    }
    return 0;
}

int tl_runs_fold_add(tl_runs_fold *f, const tl_table *t, tl_error *err)
{
    size_t nk = f->spec.nkeys;
    long *kc = tl_xmalloc((nk ? nk : 1) * sizeof *kc);
    unsigned char *is_key = tl_xcalloc(t->ncols ? t->ncols : 1, 1);
    for (size_t k = 0; k < nk; k++) {
        kc[k] = tl_table_find(t, f->spec.keys[k]);
        if (kc[k] < 0) {
            tl_error_set(err, "sheet '%s' of %s run %zu: no key column '%s'; its runs cannot be folded",
                         f->spec.sheet, f->side, f->nruns + 1, f->spec.keys[k]);
            free(kc);
            free(is_key);
            return -1;
        }
        is_key[kc[k]] = 1;
        /* the merge's key column: the first run's type, text once two runs differ */
        int type = t->cols[kc[k]].type;
        f->key_type[k] = f->nruns == 0 ? type : f->key_type[k] != type ? TL_COL_STR : f->key_type[k];
    }
    /* each column's copy in this run (the last of a name, as the merge's map keeps it) */
    size_t *colj = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *colj);
    for (size_t c = 0; c < t->ncols; c++)
        colj[c] = is_key[c] ? SIZE_MAX : fold_column(f, t->cols[c].name);
    size_t *copy = tl_xmalloc((f->ncols ? f->ncols : 1) * sizeof *copy);
    for (size_t j = 0; j < f->ncols; j++)
        copy[j] = SIZE_MAX;
    for (size_t c = 0; c < t->ncols; c++)
        if (colj[c] != SIZE_MAX)
            copy[colj[c]] = c;
    unsigned char *flags = tl_xcalloc(f->ncols ? f->ncols : 1, 1);
    for (size_t j = 0; j < f->ncols; j++) {
        if (copy[j] == SIZE_MAX)
            continue;
        int type = t->cols[copy[j]].type;
        fold_col *fc = &f->cols[j];
        fc->type = fc->type < 0 ? type : fc->type != type ? TL_COL_STR : fc->type;
        flags[j] = fold_flags(&t->cols[copy[j]], t->nrows);
    }
    int rc = fold_rows(f, t, kc, copy, err);
    f->run_rows = tl_xrealloc(f->run_rows, (f->nruns + 1) * sizeof *f->run_rows);
    f->run_flags = tl_xrealloc(f->run_flags, (f->nruns + 1) * sizeof *f->run_flags);
    f->run_ncols = tl_xrealloc(f->run_ncols, (f->nruns + 1) * sizeof *f->run_ncols);
    f->run_rows[f->nruns] = t->nrows;
    f->run_flags[f->nruns] = flags;
    f->run_ncols[f->nruns] = f->ncols;
    f->nruns++;
    free(kc);
    free(is_key);
    free(colj);
    free(copy);
    return rc;
}

static int cmp_fold_rows(size_t x, size_t y, void *ctx)
{
    const tl_runs_fold *f = ctx;
    size_t nk = f->spec.nkeys;
    for (size_t k = 0; k < nk; k++) {
        int c = tl_cell_key_cmp(&f->keys[x * nk + k], &f->keys[y * nk + k]);
        if (c)
            return c;
    }
    return 0;
}

/* Column j's cells in row order `order`: a run's integer turned floating point where the
 * merge's last step would have (its copy holding floats or missing cells, or lacking a row). */
static tl_column fold_plain(const tl_runs_fold *f, size_t j, const size_t *order)
{
    const fold_col *fc = &f->cols[j];
    tl_column col = new_column(fc->name, f->nrows, (uint8_t)fc->type);
    for (size_t i = 0; i < f->nrows; i++) {
        tl_cell c = fc->cell[order[i]];
        size_t r = fc->src[order[i]];
        unsigned fl = j < f->run_ncols[r] ? f->run_flags[r][j] : 0;
        if (c.kind == TL_INT && (fl & FOLD_NUMINT) && ((fl & FOLD_MIXED) || f->run_rows[r] < f->nrows))
            c = tl_cell_float((double)c.v.i);
        col.cells[i] = c;
    }
    return col;
}

tl_table *tl_runs_fold_finish(tl_runs_fold *f)
{
    if (!f || f->nruns == 0) {
        tl_runs_fold_free(f);
        return NULL;
    }
    size_t nk = f->spec.nkeys, n = f->nrows;
    size_t *order = tl_xmalloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    tl_sort_rows(order, n, cmp_fold_rows, f);
    tl_table *out = tl_table_new();
    out->nrows = n;
    out->cols = tl_xcalloc(nk + 2 * f->ncols + 1, sizeof *out->cols);
    for (size_t k = 0; k < nk; k++) {
        tl_column c = new_column(f->spec.keys[k], n, (uint8_t)f->key_type[k]);
        c.role = TL_ROLE_KEY;
        for (size_t i = 0; i < n; i++)
            c.cells[i] = f->keys[order[i] * nk + k];
        out->cols[out->ncols++] = c;
    }
    for (size_t j = 0; j < f->ncols; j++) {
        const fold_col *fc = &f->cols[j];
        if (!fc->metric) {
            out->cols[out->ncols++] = fold_plain(f, j, order);
            continue;
        }
        tl_column mean = new_column(fc->name, n, TL_COL_NUM);
        tl_column sd = new_column(tl_arena_printf(f->arena, "%s" TL_RUNS_STD_SUFFIX, fc->name), n, TL_COL_NUM);
        for (size_t i = 0; i < n; i++) {
            const tl_moments *mo = &fc->mo[order[i]];
            if (mo->n > 0)
                mean.cells[i] = tl_cell_float(mo->mean);
            if (mo->n > 1)
                sd.cells[i] = tl_cell_float(sqrt(tl_moments_var(mo)));
        }
        out->cols[out->ncols++] = mean;
        out->cols[out->ncols++] = sd;
    }
    tl_column rc = new_column(TL_RUNS_COLUMN, n, TL_COL_NUM);
    for (size_t i = 0; i < n; i++)
        rc.cells[i] = tl_cell_int(f->present[order[i]]);
    out->cols[out->ncols++] = rc;
    free(order);
    tl_runs_fold_free(f);
    return out;
}
