/*
 * dist_facts.c - the helpers that read a comparison of runs' facts (dist_facts.h): a
 * run's per-rank times, their median and largest, its collective sheets, its straggler.
 */
#include "run/dist_facts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tl_dist_types[TL_DIST_NTYPES] = {"total_time",        "busy_time",
                                                   "computation_time",  "exposed_comm_time",
                                                   "exposed_memcpy_time", "idle_time"};

void tl_dist_put_num(tl_column *c, size_t r, double v)
{
    if (!isnan(v))
        c->cells[r] = tl_cell_float(v);
}

double *tl_dist_rank_values(const dist_run *run, const char *type)
{
    double *v = tl_xcalloc(run->set.n ? run->set.n : 1, sizeof *v);
    for (int ty = 0; ty < TL_DIST_NTYPES; ty++)
        if (strcmp(tl_dist_types[ty], type) == 0 && run->times[ty])
            memcpy(v, run->times[ty], run->set.n * sizeof *v);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tl_dist_median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double *s = tl_xmalloc(n * sizeof *s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

/* The rank with the largest value (the lowest such rank). */
size_t tl_dist_argmax(const double *v, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

/* A sheet of a run's collective report, or NULL. */
const tl_table *tl_dist_coll_sheet(const dist_run *run, const char *name)
{
    for (size_t i = 0; i < run->coll.n; i++)
        if (strcmp(run->coll.items[i].name, name) == 0)
            return run->coll.items[i].table;
    return NULL;
}

/* A run's straggler: the rank arriving last most often, when it is last in at least half of
 * the collectives and the others wait on it longer than the collective itself takes (its
 * start minus the median rank's start, on average, at least the mean comm latency): ranks
 * drifting apart by a fraction of a collective are no straggler.  -1: none. */
long tl_dist_straggler(const dist_run *run)
{
    const tl_table *st = tl_dist_coll_sheet(run, "straggler_summary"), *is = tl_dist_coll_sheet(run, "nccl_implicit_sync");
    if (!st || !is || st->nrows == 0 || is->nrows == 0)
        return -1;
    long rc = tl_table_find(st, "rank"), pc = tl_table_find(st, "pct_arrived_last");
    long lc = tl_table_find(is, "comm_latency");
    if (rc < 0 || pc < 0 || lc < 0)
        return -1;
    size_t n = run->set.n;
    long *tsc = tl_xcalloc(n, sizeof *tsc);
    for (size_t i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "rank_%zu_ts", i);
        tsc[i] = tl_table_find(is, name);
    }
    double late = 0, lat = 0, *ts = tl_xcalloc(n, sizeof *ts);
    for (size_t r = 0; r < is->nrows; r++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (tsc[i] >= 0 && !isnan(tl_column_number_at(&is->cols[tsc[i]], r)))
                ts[k++] = tl_column_number_at(&is->cols[tsc[i]], r);
        if (k < 2)
            continue;
        double last = ts[tl_dist_argmax(ts, k)];
        late += last - tl_dist_median(ts, k);
        lat += tl_column_number_at(&is->cols[lc], r);
    }
    free(ts);
    free(tsc);
    size_t best = 0;
    for (size_t r = 1; r < st->nrows; r++)
        if (tl_column_number_at(&st->cols[pc], r) > tl_column_number_at(&st->cols[pc], best))
            best = r;
    if (!(tl_column_number_at(&st->cols[pc], best) >= 50) || !(late > 0) || !(late >= lat))
        return -1;
    return (long)tl_column_number_at(&st->cols[rc], best);
}
