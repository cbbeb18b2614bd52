/*
 * runs.c - the runs of one side made one table (see runs.h).
 *
 * The runs are merged exactly as sides are (tl_compare, with no diff columns), so a row of
 * one run meets the same row of the others, repeated keys in order; then each report's
 * copy of a column is folded into one.
 */
#include "compare/runs.h"

#include "base/hash.h"
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
