/*
 * summary.c - the at-a-glance comparison and the CI gate (see summary.h).
 *
 * Everything here reads the finished result tables by column name, the way a user's
 * script would, so the summary can never disagree with the workbook.
 */
#include "summary/summary.h"

#include "base/numfmt.h"
#include "base/sort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const tl_timeline_rows[TL_TL_N] = {
    "total_time", "busy_time", "computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time",
};

/* ---- reading the results ------------------------------------------------------------ */

static const tl_result *find_result(const tl_results *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].name, name) == 0)
            return &r->items[i];
    return NULL;
}

/* The column "<tag>::<name>", or NULL. */
static const tl_column *tagged(const tl_table *t, const char *tag, const char *name)
{
    size_t lt = strlen(tag);
    for (size_t c = 0; c < t->ncols; c++) {
        const char *n = t->cols[c].name;
        if (strncmp(n, tag, lt) == 0 && n[lt] == ':' && n[lt + 1] == ':' && strcmp(n + lt + 2, name) == 0)
            return &t->cols[c];
    }
    return NULL;
}

static double num_at(const tl_column *c, size_t row)
{
    if (!c || !tl_cell_is_number(&c->cells[row]))
        return NAN;
    return tl_cell_number(&c->cells[row]);
}

/* A key cell as text (op names are strings; anything else is formatted). */
static const char *cell_text(const tl_cell *c, tl_arena *arena)
{
    char buf[TL_NUMFMT_MAX];
    switch (c->kind) {
    case TL_STR: return c->v.s;
    case TL_INT: tl_fmt_int(c->v.i, buf); break;
    case TL_FLOAT: tl_fmt_double(c->v.f, buf); break;
    case TL_BOOL: return c->v.b ? "True" : "False";
    default: return "(missing)";
    }
    return tl_arena_strdup(arena, buf);
}

static double pct_of(tl_delta d)
{
    if (isnan(d.base) || isnan(d.var) || d.base == 0)
        return NAN;
    return 100 * ((d.var - d.base) / d.base);
}

/*
 * The gate's test: did the time grow by more than `limit` percent?  A time that grows
 * from 0 grew by more than any percentage.  The percentage is computed in binary floating
 * point, so a change that is exactly at the limit in decimal (2 ms -> 2.2 ms at 10%: the
 * division gives 10.000000000000009) is allowed a rounding error: "more than PCT" must
 * not fail on the limit itself.
 */
static int over_limit(tl_delta d, double limit)
{
    if (isnan(d.base) || isnan(d.var) || !(d.var > d.base))
        return 0;
    if (d.base == 0)
        return 1;
    double pct = pct_of(d);
    return pct > limit + 1e-9 * (1 + fabs(limit));
}

/* The pct a violation reports: +inf for a time that grew from 0 (null in JSON). */
static double violation_pct(tl_delta d)
{
    return d.base == 0 && d.var > 0 ? INFINITY : pct_of(d);
}

/* Which summary sheet the op lists come from, and its columns. */
typedef struct item_source {
    const tl_table *t;
    const char *key, *time, *count;
    double divisor; /* the time column's unit per ms: 1000 for µs */
} item_source;

static int find_source(const tl_results *results, item_source *src, const char **source, const char **item)
{
    const tl_result *r = find_result(results, "ops_summary");
    if (r && tl_table_find(r->table, "name") >= 0) {
        *src = (item_source){r->table, "name", "total_direct_kernel_time_ms", "Count", 1};
        *source = "ops_summary";
        *item = "op";
        return 1;
    }
    r = find_result(results, "kernel_summary");
    if (r && tl_table_find(r->table, "Kernel name") >= 0) {
        *src = (item_source){r->table, "Kernel name", "Kernel duration (\xc2\xb5s)_sum",
                             "Kernel duration (\xc2\xb5s)_count", 1000};
    } else if (r && tl_table_find(r->table, "name") >= 0) {
        *src = (item_source){r->table, "name", "Total Kernel Time (ms)", "Count", 1};
    } else {
        return 0;
    }
    *source = "kernel_summary";
    *item = "kernel";
    return 1;
}

/* ---- one item per name ------------------------------------------------------------------ */

/*
 * The compared sheet can hold a name in several rows: the current kernel_summary layout
 * has a row per (parent op, kernel), so one kernel name is often found under several
 * parent ops, and the outer merge then pairs every row of one report with every row of
 * the other (SPEC §2).  Those pairs are not changes (a kernel under aten::mm "compared"
 * with the same kernel under aten::addmm), so the summary is made per name: each
 * report's time and count of a name are the sums over that report's own rows of the name.
 * A report's row appears in several merged rows (once per pairing) with the same values
 * in all of that report's columns, so its rows are told apart by those columns (two rows
 * of one report that are the same in every column count once).
 */
typedef struct agg {
    size_t nitems, nrep;
    const char **names; /* first appearance in the sheet's order */
    double *ms;         /* nitems x nrep, item-major; NaN when absent */
    double *count;
} agg;

/* A hash of a key cell, equal for cells that are equal keys (1 == 1.0, True == 1). */
static uint64_t key_hash(const tl_cell *c)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    if (c->kind == TL_STR) {
        for (const unsigned char *p = (const unsigned char *)c->v.s; *p; p++)
            h = (h ^ *p) * 1099511628211u;
        return h;
    }
    if (c->kind == TL_MISSING)
        return 0x9e3779b97f4a7c15u;
    double x = tl_cell_number(c);
    if (x == 0)
        x = 0; /* -0.0 == 0.0 */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits ^ (bits >> 29)) * 0xbf58476d1ce4e5b9u;
}

typedef struct tuple_ctx {
    const tl_column *const *cols; /* one report's columns */
    size_t ncols;
} tuple_ctx;

static int cmp_tuple(size_t a, size_t b, void *ctx)
{
    const tuple_ctx *t = ctx;
    for (size_t c = 0; c < t->ncols; c++) {
        int r = tl_cell_key_cmp(&t->cols[c]->cells[a], &t->cols[c]->cells[b]);
        if (r)
            return r;
    }
    return 0;
}

static void aggregate(agg *g, const item_source *src, const char *const *tags, size_t n, tl_arena *arena)
{
    const tl_table *t = src->t;
    const tl_column *key = &t->cols[tl_table_find(t, src->key)];
    size_t nrows = t->nrows;
    memset(g, 0, sizeof *g);
    g->nrep = n;

    /* The group of every row, groups numbered in the order of their first row (the
     * sheet's order), by an open-addressing hash table of each group's first row. */
    size_t cap = 16;
    while (cap < 2 * nrows)
        cap *= 2;
    size_t *slot = tl_xmalloc(cap * sizeof *slot); /* first row + 1; 0 = empty */
    memset(slot, 0, cap * sizeof *slot);
    size_t *group = tl_xmalloc((nrows ? nrows : 1) * sizeof *group);
    size_t *first = tl_xmalloc((nrows ? nrows : 1) * sizeof *first), ngroups = 0;
    for (size_t r = 0; r < nrows; r++) {
        size_t i = (size_t)key_hash(&key->cells[r]) & (cap - 1);
        while (slot[i] && tl_cell_key_cmp(&key->cells[slot[i] - 1], &key->cells[r]) != 0)
            i = (i + 1) & (cap - 1);
        if (slot[i]) {
            group[r] = group[slot[i] - 1];
        } else {
            slot[i] = r + 1;
            group[r] = ngroups;
            first[ngroups++] = r;
        }
    }
    free(slot);
    /* each group's rows, in sheet order: start[k] .. start[k + 1] in rows[] */
    size_t *start = tl_xcalloc(ngroups + 1, sizeof *start);
    size_t *rows = tl_xmalloc((nrows ? nrows : 1) * sizeof *rows);
    for (size_t r = 0; r < nrows; r++)
        start[group[r] + 1]++;
    for (size_t k = 0; k < ngroups; k++)
        start[k + 1] += start[k];
    size_t *fill = tl_xmalloc((ngroups ? ngroups : 1) * sizeof *fill);
    memcpy(fill, start, ngroups * sizeof *fill);
    for (size_t r = 0; r < nrows; r++)
        rows[fill[group[r]]++] = r;
    free(fill);
    free(group);

    g->nitems = ngroups;
    g->names = tl_xcalloc(ngroups ? ngroups : 1, sizeof *g->names);
    size_t ncells = ngroups * n;
    g->ms = tl_xcalloc(ncells ? ncells : 1, sizeof *g->ms);
    g->count = tl_xcalloc(ncells ? ncells : 1, sizeof *g->count);
    const tl_column **cols = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *cols);
    size_t *present = tl_xmalloc((nrows ? nrows : 1) * sizeof *present);
    for (size_t rep = 0; rep < n; rep++) {
        const tl_column *tc = tagged(t, tags[rep], src->time);
        const tl_column *cc = src->count ? tagged(t, tags[rep], src->count) : NULL;
        /* a report's row: its keys (the row-key step may have made a column a key) and
         * its own columns */
        size_t ncols = 0;
        for (size_t c = 0; c < t->ncols; c++)
            if (t->cols[c].role == TL_ROLE_KEY || (t->cols[c].role == TL_ROLE_DATA && t->cols[c].tag == (int)rep))
                cols[ncols++] = &t->cols[c];
        tuple_ctx tc_ctx = {cols, ncols};
        for (size_t k = 0; k < ngroups; k++) {
            size_t np = 0;
            for (size_t j = start[k]; j < start[k + 1]; j++)
                if (!isnan(num_at(tc, rows[j])))
                    present[np++] = rows[j];
            if (np > 1)
                tl_sort_rows(present, np, cmp_tuple, &tc_ctx);
            double ms = 0, cnt = 0;
            int ncnt = 0;
            for (size_t j = 0; j < np; j++) {
                if (j > 0 && cmp_tuple(present[j - 1], present[j], &tc_ctx) == 0)
                    continue; /* the same row of this report, paired with another */
                ms += num_at(tc, present[j]);
                double c = num_at(cc, present[j]);
                if (!isnan(c)) {
                    cnt += c;
                    ncnt++;
                }
            }
            /* sum in the sheet's unit, then convert: 2300 µs is 2.3 ms, not 2.3000000000000003 */
            g->ms[k * n + rep] = np ? ms / src->divisor : NAN;
            g->count[k * n + rep] = ncnt ? cnt : NAN;
        }
    }
    for (size_t k = 0; k < ngroups; k++)
        g->names[k] = cell_text(&key->cells[first[k]], arena);
    free(present);
    free(cols);
    free(first);
    free(start);
    free(rows);
}

static void agg_free(agg *g)
{
    free(g->names);
    free(g->ms);
    free(g->count);
}

/* ---- ordering items ------------------------------------------------------------------- */

typedef enum { BY_DELTA_DESC, BY_DELTA_ASC, BY_BASE_DESC, BY_VAR_DESC } item_order;
typedef struct order_ctx {
    const tl_summary_item *items;
    item_order order;
    int per_call;
} order_ctx;

/* The change an item is judged and ordered by: its time, or, when the runs did different
 * numbers of iterations, its time per call scaled to the baseline's calls. */
static double judged_delta(const tl_summary_item *it, int per_call)
{
    if (per_call && !isnan(it->per_call_ms.base) && !isnan(it->per_call_ms.var))
        return (it->per_call_ms.var - it->per_call_ms.base) * it->count.base;
    return it->time_ms.var - it->time_ms.base;
}

static double order_value(const tl_summary_item *it, item_order o, int per_call)
{
    switch (o) {
    case BY_DELTA_DESC: return -judged_delta(it, per_call);
    case BY_DELTA_ASC: return judged_delta(it, per_call);
    case BY_BASE_DESC: return -it->time_ms.base;
    case BY_VAR_DESC: return -it->time_ms.var;
    }
    return 0;
}

static int cmp_items(size_t a, size_t b, void *ctx)
{
    const order_ctx *c = ctx;
    double x = order_value(&c->items[a], c->order, c->per_call), y = order_value(&c->items[b], c->order, c->per_call);
    return x < y ? -1 : x > y;
}

/* The first `max` of items[0..n) in the given order that pass `keep` (ties keep the
 * sheet's order: the baseline's time, largest first); returns how many. */
static size_t top_items(const tl_summary_item *items, size_t n, item_order order, int per_call,
                        int (*keep)(const tl_summary_item *), size_t max, tl_summary_item **out)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx), m = 0;
    for (size_t i = 0; i < n; i++)
        if (keep(&items[i]))
            idx[m++] = i;
    order_ctx ctx = {items, order, per_call};
    tl_sort_rows(idx, m, cmp_items, &ctx);
    size_t k = m < max ? m : max;
    *out = tl_xcalloc(k ? k : 1, sizeof **out);
    for (size_t i = 0; i < k; i++)
        (*out)[i] = items[idx[i]];
    free(idx);
    return k;
}

static int both(const tl_summary_item *it) { return !isnan(it->time_ms.base) && !isnan(it->time_ms.var); }
static int slower(const tl_summary_item *it) { return both(it) && it->dir > 0; }
static int faster(const tl_summary_item *it) { return both(it) && it->dir < 0; }
static int base_only(const tl_summary_item *it) { return !isnan(it->time_ms.base) && isnan(it->time_ms.var); }
static int var_only(const tl_summary_item *it) { return isnan(it->time_ms.base) && !isnan(it->time_ms.var); }
static int has_base(const tl_summary_item *it) { return !isnan(it->time_ms.base); }

/* ---- building ------------------------------------------------------------------------- */

static void add_violation(tl_variant_summary *v, const char *what, int is_op, tl_delta d)
{
    v->violations = tl_xrealloc(v->violations, (v->nviolations + 1) * sizeof *v->violations);
    v->violations[v->nviolations++] = (tl_violation){what, is_op, d.base, d.var, violation_pct(d)};
}

/*
 * Floating-point noise: the same data read from a workbook and from CSVs can differ in
 * the last bits of a sum (a 3e-18 ms "regression").  A change this small relative to the
 * values is no change.
 */
static int is_noise(tl_delta d)
{
    double m = fabs(d.base) > fabs(d.var) ? fabs(d.base) : fabs(d.var);
    return fabs(d.var - d.base) <= 1e-9 * m + 1e-12;
}

/* Is the change of `d` worth reporting: neither noise nor under a floor? */
static int counts_as_change(const tl_summary *s, tl_delta d)
{
    if (isnan(d.base) || isnan(d.var) || is_noise(d))
        return 0;
    if (fabs(d.var - d.base) < s->min_delta_ms)
        return 0;
    double pct = pct_of(d);
    return isnan(pct) || fabs(pct) >= s->min_delta_pct;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/*
 * Did the two runs do different numbers of iterations?  When nearly every item found in
 * both (90%, and at least 3) has its call count changed by the same factor (within 5% of
 * the median factor), and that factor is not 1: the factor.  NaN otherwise.
 */
static double common_call_ratio(const tl_summary_item *items, size_t n)
{
    double *r = tl_xmalloc((n ? n : 1) * sizeof *r);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (both(&items[i]) && items[i].count.base > 0 && items[i].count.var > 0)
            r[m++] = items[i].count.var / items[i].count.base;
    double ratio = NAN;
    if (m >= 3) {
        qsort(r, m, sizeof *r, cmp_double);
        double med = r[m / 2];
        size_t near = 0;
        for (size_t i = 0; i < m; i++)
            near += fabs(r[i] / med - 1) <= 0.05;
        if (near * 10 >= m * 9 && fabs(med - 1) > 0.05)
            ratio = med;
    }
    free(r);
    return ratio;
}

/* The gpu_timeline row `k` of every report: the sum of the report's rows of that type
 * (a recompute report splits a type in two), NaN where a report has none. */
static void timeline_values(const tl_result *timeline, const char *const *tags, size_t n, tl_arena *arena,
                            double *val /* TL_TL_N x n */, int *has)
{
    for (size_t i = 0; i < (size_t)TL_TL_N * n; i++)
        val[i] = NAN;
    for (size_t i = 0; i < n; i++)
        has[i] = 0;
    if (!timeline || tl_table_find(timeline->table, "type") < 0)
        return;
    for (size_t i = 0; i < n; i++)
        has[i] = tagged(timeline->table, tags[i], "time ms") != NULL;
    item_source src = {timeline->table, "type", "time ms", NULL, 1};
    agg g;
    aggregate(&g, &src, tags, n, arena);
    for (size_t it = 0; it < g.nitems; it++)
        for (int k = 0; k < TL_TL_N; k++)
            if (strcmp(g.names[it], tl_timeline_rows[k]) == 0)
                for (size_t i = 0; i < n; i++)
                    val[(size_t)k * n + i] = g.ms[it * n + i];
    agg_free(&g);
}

/* Does a + b (+ c) make `total`, within rounding (the sheets hold rounded values)? */
static int adds_up(double total, double a, double b, double c)
{
    double sum = a + b + (isnan(c) ? 0 : c);
    return fabs(sum - total) <= 1e-3 * fabs(total) + 1e-3;
}

/* The longest kernel of report `tag` in kernel_summary (ms, its name in *name), or NaN. */
static double longest_kernel(const tl_results *results, const char *tag, const char **name, tl_arena *arena)
{
    const tl_result *r = find_result(results, "kernel_summary");
    if (!r)
        return NAN;
    const tl_table *t = r->table;
    long key = tl_table_find(t, "Kernel name");
    const tl_column *c = tagged(t, tag, "Kernel duration (\xc2\xb5s)_sum");
    double per_ms = 1000;
    if (key < 0) {
        key = tl_table_find(t, "name");
        c = tagged(t, tag, "Total Kernel Time (ms)");
        per_ms = 1;
    }
    if (key < 0 || !c)
        return NAN;
    double best = NAN;
    for (size_t row = 0; row < t->nrows; row++) {
        double v = num_at(c, row) / per_ms;
        if (!isnan(v) && !(v <= best)) {
            best = v;
            *name = cell_text(&t->cols[key].cells[row], arena);
        }
    }
    return best;
}

/* Warnings for inputs that cannot be right: they point at a mislabelled or mixed-up sheet. */
static void check_inputs(const tl_summary *s, const tl_results *results, const char *const *tags, size_t n,
                         const double *tv, const agg *g, tl_arena *arena)
{
    for (size_t i = 0; i < n; i++) {
        double total = tv[TL_TL_TOTAL * n + i], busy = tv[TL_TL_BUSY * n + i], idle = tv[TL_TL_IDLE * n + i];
        double comp = tv[TL_TL_COMPUTE * n + i], comm = tv[TL_TL_EXPOSED_COMM * n + i];
        double mem = tv[TL_TL_EXPOSED_MEMCPY * n + i];
        if (!isnan(total) && !isnan(busy) && !isnan(idle) && !adds_up(total, busy, idle, NAN))
            tl_warn("report '%s': gpu_timeline's busy_time + idle_time (%.3f + %.3f ms) is not its total_time "
                    "(%.3f ms); are its rows from different runs?", tags[i], busy, idle, total);
        if (!isnan(busy) && !isnan(comp) && !isnan(comm) && !adds_up(busy, comp, comm, mem))
            tl_warn("report '%s': gpu_timeline's computation_time + exposed_comm_time + exposed_memcpy_time "
                    "(%.3f ms) is not its busy_time (%.3f ms)", tags[i], comp + comm + (isnan(mem) ? 0 : mem), busy);
        if (isnan(total))
            continue;
        const char *kname = NULL;
        double kms = longest_kernel(results, tags[i], &kname, arena);
        if (!isnan(kms) && kms > total * (1 + 1e-6) + 1e-9)
            tl_warn("report '%s': kernel '%s' takes %.3f ms in kernel_summary, more than the report's total GPU "
                    "time (%.3f ms, gpu_timeline); is a column mislabelled or a sheet from another run?",
                    tags[i], kname, kms, total);
        if (!g || (s->source && strcmp(s->source, "kernel_summary") == 0 && !isnan(kms)))
            continue; /* the items are the kernels just checked */
        size_t worst = SIZE_MAX;
        for (size_t it = 0; it < g->nitems; it++) {
            double ms = g->ms[it * n + i];
            if (!isnan(ms) && ms > total * (1 + 1e-6) + 1e-9 && (worst == SIZE_MAX || ms > g->ms[worst * n + i]))
                worst = it;
        }
        if (worst != SIZE_MAX)
            tl_warn("report '%s': %s '%s' takes %.3f ms in %s, more than the report's total GPU time (%.3f ms, "
                    "gpu_timeline); is a column mislabelled (µs as ms) or a sheet from another run?",
                    tags[i], s->item, g->names[worst], g->ms[worst * n + i], s->source, total);
    }
}

/* The gate on the busy time: per iteration when the runs did different numbers of them
 * (the variant's busy time over the call ratio), since a run twice as long is no regression. */
static void check_busy(const tl_summary *s, tl_variant_summary *v)
{
    if (!s->gate_on || !v->has_timeline)
        return;
    tl_delta busy = v->timeline[TL_TL_BUSY];
    if (!isnan(v->call_ratio))
        busy.var /= v->call_ratio;
    if (counts_as_change(s, busy) && over_limit(busy, s->gate_pct))
        add_violation(v, "busy_time", 0, busy);
}

void tl_summary_build(tl_summary *s, const tl_results *results, const char *const *tags, size_t n,
                      const tl_gate *gate, tl_arena *arena)
{
    memset(s, 0, sizeof *s);
    s->baseline = tags[0];
    s->nvariants = n > 1 ? n - 1 : 0;
    s->variants = tl_xcalloc(s->nvariants ? s->nvariants : 1, sizeof *s->variants);
    s->gate_on = gate && gate->pct >= 0;
    if (s->gate_on) {
        s->gate_pct = gate->pct;
        s->gate_min_ms = gate->min_ms;
    }
    s->min_delta_ms = gate ? gate->min_delta_ms : 0;
    s->min_delta_pct = gate ? gate->min_delta_pct : 0;
    s->top = gate && gate->top ? gate->top : TL_SUMMARY_TOP;
    const tl_result *timeline = find_result(results, "gpu_timeline");
    item_source src = {0};
    int have_items = find_source(results, &src, &s->source, &s->item);
    if (!have_items)
        s->item = "op";
    agg g = {0};
    if (have_items)
        aggregate(&g, &src, tags, n, arena);
    double *tv = tl_xmalloc((size_t)TL_TL_N * n * sizeof *tv);
    int *has_tl = tl_xmalloc(n * sizeof *has_tl);
    timeline_values(timeline, tags, n, arena, tv, has_tl);
    check_inputs(s, results, tags, n, tv, have_items ? &g : NULL, arena);

    for (size_t vi = 0; vi < s->nvariants; vi++) {
        tl_variant_summary *v = &s->variants[vi];
        const char *tag = tags[vi + 1];
        v->tag = tag;
        v->call_ratio = NAN;
        v->has_timeline = has_tl[0] && has_tl[vi + 1];
        for (int k = 0; k < TL_TL_N; k++)
            v->timeline[k] = v->has_timeline ? (tl_delta){tv[(size_t)k * n], tv[(size_t)k * n + vi + 1]}
                                             : (tl_delta){NAN, NAN};
        if (!have_items) {
            check_busy(s, v);
            continue;
        }
        tl_summary_item *items = tl_xcalloc(g.nitems ? g.nitems : 1, sizeof *items);
        for (size_t i = 0; i < g.nitems; i++) {
            tl_summary_item *it = &items[i];
            it->name = g.names[i];
            it->time_ms = (tl_delta){g.ms[i * n], g.ms[i * n + vi + 1]};
            it->count = (tl_delta){g.count[i * n], g.count[i * n + vi + 1]};
            it->per_call_ms = (tl_delta){it->count.base > 0 ? it->time_ms.base / it->count.base : NAN,
                                         it->count.var > 0 ? it->time_ms.var / it->count.var : NAN};
        }
        v->call_ratio = common_call_ratio(items, g.nitems);
        int per_call = !isnan(v->call_ratio);
        check_busy(s, v);
        for (size_t i = 0; i < g.nitems; i++) {
            tl_summary_item *it = &items[i];
            if (base_only(it))
                v->only_base_count++;
            if (var_only(it))
                v->only_var_count++;
            if (!both(it))
                continue;
            /* judged on the time per call when the runs did different numbers of iterations */
            tl_delta judged = it->time_ms;
            if (per_call && !isnan(it->per_call_ms.base) && !isnan(it->per_call_ms.var))
                judged = it->per_call_ms;
            if (counts_as_change(s, judged))
                it->dir = judged.var > judged.base ? 1 : -1;
            else if (judged.var != judged.base)
                v->noise_skipped += is_noise(judged);
            if (s->gate_on && it->dir > 0 && it->time_ms.base >= s->gate_min_ms && over_limit(judged, s->gate_pct))
                add_violation(v, it->name, 1, judged.base == it->time_ms.base ? it->time_ms : judged);
        }
        v->nregressions = top_items(items, g.nitems, BY_DELTA_DESC, per_call, slower, s->top, &v->regressions);
        v->nimprovements = top_items(items, g.nitems, BY_DELTA_ASC, per_call, faster, s->top, &v->improvements);
        v->nonly_base = top_items(items, g.nitems, BY_BASE_DESC, 0, base_only, TL_SUMMARY_TOP, &v->only_base);
        v->nonly_var = top_items(items, g.nitems, BY_VAR_DESC, 0, var_only, TL_SUMMARY_TOP, &v->only_var);
        free(items);
    }
    free(tv);
    free(has_tl);
    for (size_t vi = 0; vi < s->nvariants; vi++)
        if (s->variants[vi].nviolations)
            s->gate_failed = 1;

    /* The chart: the baseline's largest items, in every report. */
    if (have_items) {
        tl_summary_item *items = tl_xcalloc(g.nitems ? g.nitems : 1, sizeof *items);
        for (size_t i = 0; i < g.nitems; i++) {
            items[i].name = g.names[i];
            items[i].time_ms = (tl_delta){g.ms[i * n], (double)i};
        }
        tl_summary_item *top;
        size_t ntop = top_items(items, g.nitems, BY_BASE_DESC, 0, has_base, TL_SUMMARY_CHART_TOP, &top);
        s->chart_names = tl_xcalloc(TL_SUMMARY_CHART_TOP, sizeof *s->chart_names);
        s->chart_ms = tl_xcalloc(TL_SUMMARY_CHART_TOP * n, sizeof *s->chart_ms);
        for (size_t i = 0; i < ntop; i++) {
            size_t item = (size_t)top[i].time_ms.var, k = s->nchart++;
            s->chart_names[k] = top[i].name;
            for (size_t rep = 0; rep < n; rep++)
                s->chart_ms[rep * TL_SUMMARY_CHART_TOP + k] = g.ms[item * n + rep];
        }
        free(top);
        free(items);
    }
    agg_free(&g);
}

void tl_summary_free(tl_summary *s)
{
    for (size_t i = 0; i < s->nvariants; i++) {
        tl_variant_summary *v = &s->variants[i];
        free(v->regressions);
        free(v->improvements);
        free(v->only_base);
        free(v->only_var);
        free(v->violations);
    }
    free(s->variants);
    free(s->chart_names);
    free(s->chart_ms);
    memset(s, 0, sizeof *s);
}

/* ---- the terminal --------------------------------------------------------------------- */

typedef struct paint {
    const char *bold, *red, *green, *dim, *off;
} paint;

static paint colours(int on)
{
    if (on)
        return (paint){"\033[1m", "\033[31m", "\033[32m", "\033[2m", "\033[0m"};
    return (paint){"", "", "", "", ""};
}

/* Red when the time grew, green when it shrank. */
static const char *tint(const paint *p, double delta)
{
    return delta > 0 ? p->red : delta < 0 ? p->green : "";
}

static void fmt_ms(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.3f", v);
}

static void fmt_pct(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f%%", v);
}

static void fmt_count(char *buf, size_t n, tl_delta c)
{
    double last = isnan(c.var) ? c.base : c.var;
    const char *unit = last == 1 ? "call" : "calls";
    if (isnan(c.base) && isnan(c.var))
        snprintf(buf, n, "-");
    else if (isnan(c.var) || isnan(c.base) || c.base == c.var)
        snprintf(buf, n, "%.0f %s", last, unit);
    else
        snprintf(buf, n, "%.0f -> %.0f %s", c.base, c.var, unit);
}

/* Long kernel names are cut for the terminal (the workbook has them whole). */
static void short_name(char *buf, size_t n, const char *name)
{
    size_t len = strlen(name);
    if (len < n) {
        memcpy(buf, name, len + 1);
    } else {
        size_t keep = n - 4;
        while (keep > 0 && (name[keep] & 0xC0) == 0x80)
            keep--; /* do not cut a UTF-8 character in two */
        memcpy(buf, name, keep);
        memcpy(buf + keep, "...", 4);
    }
    /* a name is data: its control characters (ESC, line breaks) must not reach the terminal */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* A time per call, in µs below 1 ms ("12.3 µs", "1.234 ms"); `sign`: with its sign. */
static void fmt_per_call(char *buf, size_t n, double ms, int sign)
{
    double a = fabs(ms);
    if (isnan(ms))
        snprintf(buf, n, "-");
    else if (ms == 0)
        snprintf(buf, n, "0");
    else if (a < 0.01)
        snprintf(buf, n, sign ? "%+.2f \xc2\xb5s" : "%.2f \xc2\xb5s", ms * 1000);
    else if (a < 1)
        snprintf(buf, n, sign ? "%+.1f \xc2\xb5s" : "%.1f \xc2\xb5s", ms * 1000);
    else
        snprintf(buf, n, sign ? "%+.3f ms" : "%.3f ms", ms);
}

/* "12.3 µs -> 13.1 µs per call (+0.8 µs)", or "" without counts on both sides. */
static void fmt_per_call_change(char *buf, size_t n, tl_delta pc)
{
    if (isnan(pc.base) || isnan(pc.var)) {
        buf[0] = '\0';
        return;
    }
    char b[32], v[32], d[32];
    fmt_per_call(b, sizeof b, pc.base, 0);
    fmt_per_call(v, sizeof v, pc.var, 0);
    fmt_per_call(d, sizeof d, is_noise(pc) ? 0 : pc.var - pc.base, 1);
    snprintf(buf, n, "%s -> %s per call (%s)", b, v, d);
}

static void print_items(FILE *out, const paint *p, const char *title, const tl_summary_item *items, size_t n)
{
    if (!n)
        return;
    fprintf(out, "  %s%s%s\n", p->bold, title, p->off);
    for (size_t i = 0; i < n; i++) {
        char d[32], pc[32], cnt[64], name[64], per[128];
        double delta = items[i].time_ms.var - items[i].time_ms.base;
        snprintf(d, sizeof d, "%+.3f ms", delta);
        fmt_pct(pc, sizeof pc, pct_of(items[i].time_ms));
        fmt_count(cnt, sizeof cnt, items[i].count);
        short_name(name, sizeof name, items[i].name);
        fmt_per_call_change(per, sizeof per, items[i].per_call_ms);
        fprintf(out, "    %s%14s %9s%s  %-60s %s%-18s%s %s\n", tint(p, delta), d, pc, p->off, name, p->dim, cnt,
                p->off, per);
    }
}

/* "about half as many", "about 2.0x as many": the iterations of the variant. */
static void fmt_ratio(char *buf, size_t n, double r)
{
    if (fabs(r - 0.5) <= 0.05)
        snprintf(buf, n, "about half as many");
    else if (fabs(r - 2) <= 0.1)
        snprintf(buf, n, "about twice as many");
    else
        snprintf(buf, n, "about %.2fx as many", r);
}

/* The iterations note, or "" when the call counts agree. */
static void iterations_note(char *buf, size_t n, const tl_summary *s, const tl_variant_summary *v)
{
    if (isnan(v->call_ratio)) {
        buf[0] = '\0';
        return;
    }
    char r[64];
    fmt_ratio(r, sizeof r, v->call_ratio);
    snprintf(buf, n, "the call counts differ across the board (%s has %.2fx the calls of %s): the variant ran %s "
                     "iterations; %ss are judged and ordered by their time per call%s",
             v->tag, v->call_ratio, s->baseline, r, s->item, s->gate_on ? ", the gate's busy time per iteration" : "");
}

static void print_one_sided(FILE *out, const char *item, const char *tag, size_t count,
                            const tl_summary_item *items, size_t n, int base_side)
{
    if (!count)
        return;
    fprintf(out, "  only in %s: %zu %s%s", tag, count, item, count == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 3; i++) {
        char name[64];
        short_name(name, sizeof name, items[i].name);
        fprintf(out, "%s %s (%.3f ms)", i ? "," : "; largest:", name,
                base_side ? items[i].time_ms.base : items[i].time_ms.var);
    }
    fputc('\n', out);
}

void tl_summary_print(const tl_summary *s, FILE *out, int color)
{
    paint p = colours(color);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        fprintf(out, "\n%s%s vs %s%s", p.bold, v->tag, s->baseline, p.off);
        if (s->source)
            fprintf(out, " %s(%ss from %s)%s", p.dim, s->item, s->source, p.off);
        fputc('\n', out);
        if (v->has_timeline) {
            fprintf(out, "  %-22s %14s %14s %14s %9s\n", "GPU time (ms)", s->baseline, v->tag, "delta", "%");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                char b[32], x[32], dl[32], pc[32];
                fmt_ms(b, sizeof b, d.base);
                fmt_ms(x, sizeof x, d.var);
                snprintf(dl, sizeof dl, "%+.3f", d.var - d.base);
                if (isnan(d.var - d.base))
                    strcpy(dl, "-");
                fmt_pct(pc, sizeof pc, pct_of(d));
                fprintf(out, "  %-22s %14s %14s %s%14s %9s%s\n", tl_timeline_rows[k], b, x,
                        tint(&p, d.var - d.base), dl, pc, p.off);
            }
        }
        char note[512];
        iterations_note(note, sizeof note, s, v);
        if (note[0])
            fprintf(out, "  %snote: %s%s\n", p.bold, note, p.off);
        char title[128];
        snprintf(title, sizeof title, "top regressions (%s slower)", v->tag);
        print_items(out, &p, title, v->regressions, v->nregressions);
        snprintf(title, sizeof title, "top improvements (%s faster)", v->tag);
        print_items(out, &p, title, v->improvements, v->nimprovements);
        print_one_sided(out, s->item, s->baseline, v->only_base_count, v->only_base, v->nonly_base, 1);
        print_one_sided(out, s->item, v->tag, v->only_var_count, v->only_var, v->nonly_var, 0);
    }
    if (s->gate_on)
        fprintf(out, "\ngate: %s%s%s (more than %g%% slower: busy time, or any %s of at least %g ms)\n",
                s->gate_failed ? p.red : p.green, s->gate_failed ? "FAILED" : "passed", p.off, s->gate_pct,
                s->item, s->gate_min_ms);
}

void tl_summary_print_violations(const tl_summary *s, FILE *out)
{
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        /* A big report can fail on thousands of ops: the first ones tell the story. */
        enum { MAX_LINES = 20 };
        for (size_t i = 0; i < v->nviolations; i++) {
            const tl_violation *x = &v->violations[i];
            if (i == MAX_LINES) {
                fprintf(out, "tlcompare: regression: %s: and %zu more (--summary-json lists them all)\n", v->tag,
                        v->nviolations - MAX_LINES);
                break;
            }
            fprintf(out, "tlcompare: regression: %s %s%s", v->tag, x->is_op ? s->item : "", x->is_op ? " " : "");
            for (const char *c = x->what; *c; c++) /* no control characters of a name on the terminal */
                fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
            fprintf(out, ": %.3f ms -> %.3f ms (%+.1f%%, limit %g%%)\n", x->base_ms, x->var_ms, x->pct, s->gate_pct);
        }
    }
}

/* ---- Markdown ------------------------------------------------------------------------- */

/* Text in a Markdown table cell: only '|' and line breaks would break the table. */
static void md_text(tl_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            tl_buf_addc(b, '\\');
        tl_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

/* An op or kernel name, as code so that underscores and stars stay literal. */
static void md_code(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '`');
    for (; *s; s++) {
        if (*s == '|')
            tl_buf_addc(b, '\\');
        tl_buf_addc(b, *s == '`' ? '\'' : *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    tl_buf_addc(b, '`');
}

static void md_num(tl_buf *b, double v, const char *fmt)
{
    if (isnan(v))
        tl_buf_adds(b, "-");
    else
        tl_buf_printf(b, fmt, v);
}

static void md_items(tl_buf *b, const char *title, const char *item, const char *base, const char *tag,
                     const tl_summary_item *items, size_t n)
{
    if (!n)
        return;
    tl_buf_printf(b, "\n**%s**\n\n| %s | %s (ms) | %s (ms) | delta (ms) | delta %% | calls | per call |\n"
                     "|---|---:|---:|---:|---:|---|---|\n", title, item, base, tag);
    for (size_t i = 0; i < n; i++) {
        char cnt[64];
        fmt_count(cnt, sizeof cnt, items[i].count);
        tl_buf_adds(b, "| ");
        md_code(b, items[i].name);
        tl_buf_adds(b, " | ");
        md_num(b, items[i].time_ms.base, "%.3f");
        tl_buf_adds(b, " | ");
        md_num(b, items[i].time_ms.var, "%.3f");
        tl_buf_adds(b, " | ");
        md_num(b, items[i].time_ms.var - items[i].time_ms.base, "%+.3f");
        tl_buf_adds(b, " | ");
        md_num(b, pct_of(items[i].time_ms), "%+.1f%%");
        char per[128];
        fmt_per_call_change(per, sizeof per, items[i].per_call_ms);
        tl_buf_printf(b, " | %s | %s |\n", cnt, per[0] ? per : "-");
    }
}

/* "- only in TAG: N ops; largest: `a` (1.000 ms), ..." (as on the terminal). */
static void md_one_sided(tl_buf *b, const char *item, const char *tag, size_t count, const tl_summary_item *items,
                         size_t n, int base_side)
{
    if (!count)
        return;
    tl_buf_adds(b, "- only in ");
    md_text(b, tag);
    tl_buf_printf(b, ": %zu %s%s", count, item, count == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 3; i++) {
        tl_buf_adds(b, i ? ", " : "; largest: ");
        md_code(b, items[i].name);
        tl_buf_printf(b, " (%.3f ms)", base_side ? items[i].time_ms.base : items[i].time_ms.var);
    }
    tl_buf_adds(b, "\n");
}

void tl_summary_markdown(const tl_summary *s, tl_buf *b)
{
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        tl_buf_adds(b, vi ? "\n## " : "## ");
        md_text(b, v->tag);
        tl_buf_adds(b, " vs ");
        md_text(b, s->baseline);
        tl_buf_adds(b, "\n");
        if (v->has_timeline) {
            tl_buf_adds(b, "\n| GPU time (ms) | ");
            md_text(b, s->baseline);
            tl_buf_adds(b, " | ");
            md_text(b, v->tag);
            tl_buf_adds(b, " | delta | delta % |\n|---|---:|---:|---:|---:|\n");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                tl_buf_adds(b, "| ");
                md_text(b, tl_timeline_rows[k]);
                tl_buf_adds(b, " | ");
                md_num(b, d.base, "%.3f");
                tl_buf_adds(b, " | ");
                md_num(b, d.var, "%.3f");
                tl_buf_adds(b, " | ");
                md_num(b, d.var - d.base, "%+.3f");
                tl_buf_adds(b, " | ");
                md_num(b, pct_of(d), "%+.1f%%");
                tl_buf_adds(b, " |\n");
            }
        }
        char note[512];
        iterations_note(note, sizeof note, s, v);
        if (note[0])
            tl_buf_printf(b, "\n**Note:** %s.\n", note);
        md_items(b, "Top regressions", s->item, s->baseline, v->tag, v->regressions, v->nregressions);
        md_items(b, "Top improvements", s->item, s->baseline, v->tag, v->improvements, v->nimprovements);
        if (v->only_base_count || v->only_var_count)
            tl_buf_adds(b, "\n");
        md_one_sided(b, s->item, s->baseline, v->only_base_count, v->only_base, v->nonly_base, 1);
        md_one_sided(b, s->item, v->tag, v->only_var_count, v->only_var, v->nonly_var, 0);
        /* the first ones (the largest in the baseline): a pull request comment has a size
           limit, and a big report can have thousands; the JSON lists them all */
        for (size_t i = 0; i < v->nviolations && i < TL_SUMMARY_TOP; i++) {
            const tl_violation *x = &v->violations[i];
            tl_buf_printf(b, "%s- gate: %s%s", i ? "" : "\n", x->is_op ? s->item : "", x->is_op ? " " : "");
            md_code(b, x->what);
            tl_buf_printf(b, " is %+.1f%% slower (limit %g%%)\n", x->pct, s->gate_pct);
        }
        if (v->nviolations > TL_SUMMARY_TOP)
            tl_buf_printf(b, "- gate: and %zu more\n", v->nviolations - TL_SUMMARY_TOP);
    }
    if (s->gate_on)
        tl_buf_printf(b, "\nGate: **%s** (limit %g%%, %ss of at least %g ms).\n", s->gate_failed ? "failed" : "passed",
                      s->gate_pct, s->item, s->gate_min_ms);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void js_str(tl_buf *b, const char *s)
{
    tl_buf_addc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            tl_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            tl_buf_printf(b, "\\u%04x", *p);
        else
            tl_buf_addc(b, (char)*p);
    }
    tl_buf_addc(b, '"');
}

static void js_num(tl_buf *b, double v)
{
    char buf[TL_NUMFMT_MAX];
    if (!isfinite(v)) {
        tl_buf_adds(b, "null");
        return;
    }
    tl_buf_add(b, buf, tl_fmt_double(v, buf));
}

static void js_delta(tl_buf *b, tl_delta d)
{
    tl_buf_adds(b, "{\"baseline\": ");
    js_num(b, d.base);
    tl_buf_adds(b, ", \"variant\": ");
    js_num(b, d.var);
    tl_buf_adds(b, ", \"delta\": ");
    js_num(b, d.var - d.base);
    tl_buf_adds(b, ", \"pct\": ");
    js_num(b, pct_of(d));
    tl_buf_adds(b, "}");
}

/* A count: an integer when it is one. */
static void js_count(tl_buf *b, double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        tl_buf_printf(b, "%.0f", v);
    else
        js_num(b, v);
}

static void js_count_delta(tl_buf *b, tl_delta d)
{
    tl_buf_adds(b, "{\"baseline\": ");
    js_count(b, d.base);
    tl_buf_adds(b, ", \"variant\": ");
    js_count(b, d.var);
    tl_buf_adds(b, ", \"delta\": ");
    js_count(b, d.var - d.base);
    tl_buf_adds(b, ", \"pct\": ");
    js_num(b, pct_of(d));
    tl_buf_adds(b, "}");
}

static void js_items(tl_buf *b, const char *key, const tl_summary_item *items, size_t n)
{
    tl_buf_printf(b, ",\n      \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        tl_buf_adds(b, i ? ",\n        {\"name\": " : "\n        {\"name\": ");
        js_str(b, items[i].name);
        tl_buf_adds(b, ", \"time_ms\": ");
        js_delta(b, items[i].time_ms);
        tl_buf_adds(b, ", \"count\": ");
        js_count_delta(b, items[i].count);
        tl_buf_adds(b, ", \"per_call_ms\": ");
        js_delta(b, items[i].per_call_ms);
        tl_buf_adds(b, "}");
    }
    tl_buf_adds(b, n ? "\n      ]" : "]");
}

void tl_summary_json(const tl_summary *s, tl_buf *b)
{
    tl_buf_adds(b, "{\n  \"tool\": \"tlcompare\",\n  \"schema\": 1,\n  \"baseline\": ");
    js_str(b, s->baseline);
    tl_buf_adds(b, ",\n  \"source\": ");
    if (s->source)
        js_str(b, s->source);
    else
        tl_buf_adds(b, "null");
    tl_buf_adds(b, ",\n  \"item\": ");
    js_str(b, s->item);
    tl_buf_adds(b, ",\n  \"variants\": [");
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        tl_buf_adds(b, vi ? ",\n    {\n      \"tag\": " : "\n    {\n      \"tag\": ");
        js_str(b, v->tag);
        tl_buf_adds(b, ",\n      \"gpu_time_ms\": ");
        if (!v->has_timeline) {
            tl_buf_adds(b, "null");
        } else {
            tl_buf_adds(b, "{");
            for (int k = 0; k < TL_TL_N; k++) {
                tl_buf_printf(b, "%s\n        \"%s\": ", k ? "," : "", tl_timeline_rows[k]);
                js_delta(b, v->timeline[k]);
            }
            tl_buf_adds(b, "\n      }");
        }
        tl_buf_adds(b, ",\n      \"call_ratio\": ");
        js_num(b, v->call_ratio);
        js_items(b, "regressions", v->regressions, v->nregressions);
        js_items(b, "improvements", v->improvements, v->nimprovements);
        tl_buf_printf(b, ",\n      \"only_baseline_count\": %zu", v->only_base_count);
        js_items(b, "only_baseline", v->only_base, v->nonly_base);
        tl_buf_printf(b, ",\n      \"only_variant_count\": %zu", v->only_var_count);
        js_items(b, "only_variant", v->only_var, v->nonly_var);
        tl_buf_adds(b, ",\n      \"violations\": [");
        for (size_t i = 0; i < v->nviolations; i++) {
            const tl_violation *x = &v->violations[i];
            tl_buf_adds(b, i ? ", {\"what\": " : "{\"what\": ");
            js_str(b, x->is_op ? "item" : "busy_time");
            tl_buf_adds(b, ", \"name\": ");
            js_str(b, x->what);
            tl_buf_adds(b, ", \"baseline_ms\": ");
            js_num(b, x->base_ms);
            tl_buf_adds(b, ", \"variant_ms\": ");
            js_num(b, x->var_ms);
            tl_buf_adds(b, ", \"pct\": ");
            js_num(b, x->pct);
            tl_buf_adds(b, "}");
        }
        tl_buf_adds(b, "]\n    }");
    }
    tl_buf_adds(b, s->nvariants ? "\n  ],\n  \"gate\": " : "],\n  \"gate\": ");
    if (!s->gate_on) {
        tl_buf_adds(b, "null");
    } else {
        tl_buf_adds(b, "{\"threshold_pct\": ");
        js_num(b, s->gate_pct);
        tl_buf_adds(b, ", \"min_time_ms\": ");
        js_num(b, s->gate_min_ms);
        tl_buf_printf(b, ", \"failed\": %s}", s->gate_failed ? "true" : "false");
    }
    tl_buf_adds(b, "\n}\n");
}

/* ---- the summary worksheet ------------------------------------------------------------ */

typedef struct sheet_store {
    tl_summary_sheet sheet;
    tl_sheet_block *blocks;
    size_t nblocks, cap;
    tl_sheet_chart chart;
    tl_chart_series *series;
    double *values;
} sheet_store;

static tl_table *new_table(tl_arena *a, const char *const *cols, size_t ncols, size_t nrows)
{
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    for (size_t c = 0; c < ncols; c++)
        tl_table_add_column(t, tl_arena_strdup(a, cols[c]));
    return t;
}

static tl_cell num_cell(double v) { return isnan(v) ? tl_cell_missing() : tl_cell_float(v); }

/* A call count: an integer cell when it is one. */
static tl_cell count_cell(double v)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        return tl_cell_int((int64_t)v);
    return num_cell(v);
}

static void add_block(sheet_store *st, const char *title, tl_table *t)
{
    TL_GROW(st->blocks, st->cap, st->nblocks + 1);
    st->blocks[st->nblocks++] = (tl_sheet_block){title, t};
}

static void item_block(sheet_store *st, tl_arena *a, const char *title, const char *item, const char *base,
                       const char *tag, const tl_summary_item *items, size_t n)
{
    if (!n)
        return;
    const char *cols[] = {item, tl_arena_printf(a, "%s (ms)", base), tl_arena_printf(a, "%s (ms)", tag),
                          "delta (ms)", "delta %", tl_arena_printf(a, "%s calls", base),
                          tl_arena_printf(a, "%s calls", tag), tl_arena_printf(a, "%s ms per call", base),
                          tl_arena_printf(a, "%s ms per call", tag), "per call delta (ms)"};
    tl_table *t = new_table(a, cols, 10, n);
    for (size_t i = 0; i < n; i++) {
        tl_delta d = items[i].time_ms;
        t->cols[0].cells[i] = tl_cell_str(items[i].name);
        t->cols[1].cells[i] = num_cell(d.base);
        t->cols[2].cells[i] = num_cell(d.var);
        t->cols[3].cells[i] = num_cell(d.var - d.base);
        t->cols[4].cells[i] = num_cell(pct_of(d));
        t->cols[5].cells[i] = count_cell(items[i].count.base);
        t->cols[6].cells[i] = count_cell(items[i].count.var);
        t->cols[7].cells[i] = num_cell(items[i].per_call_ms.base);
        t->cols[8].cells[i] = num_cell(items[i].per_call_ms.var);
        t->cols[9].cells[i] = num_cell(items[i].per_call_ms.var - items[i].per_call_ms.base);
    }
    /* coloured like the diff columns */
    t->cols[3].role = t->cols[4].role = t->cols[9].role = TL_ROLE_DIFF;
    add_block(st, title, t);
}

tl_summary_sheet *tl_summary_sheet_build(const tl_summary *s, tl_arena *a)
{
    sheet_store *st = tl_xcalloc(1, sizeof *st);
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        const tl_variant_summary *v = &s->variants[vi];
        if (v->has_timeline) {
            const char *cols[] = {"GPU time (ms)", s->baseline, v->tag, "delta (ms)", "delta %"};
            tl_table *t = new_table(a, cols, 5, 0);
            for (int k = 0; k < TL_TL_N; k++)
                if (!isnan(v->timeline[k].base) || !isnan(v->timeline[k].var))
                    t->nrows++;
            for (size_t c = 0; c < 5; c++)
                t->cols[c].cells = tl_xrealloc(t->cols[c].cells, (t->nrows ? t->nrows : 1) * sizeof(tl_cell));
            size_t r = 0;
            for (int k = 0; k < TL_TL_N; k++) {
                tl_delta d = v->timeline[k];
                if (isnan(d.base) && isnan(d.var))
                    continue;
                t->cols[0].cells[r] = tl_cell_str(tl_timeline_rows[k]);
                t->cols[1].cells[r] = num_cell(d.base);
                t->cols[2].cells[r] = num_cell(d.var);
                t->cols[3].cells[r] = num_cell(d.var - d.base);
                t->cols[4].cells[r] = num_cell(pct_of(d));
                r++;
            }
            t->cols[3].role = t->cols[4].role = TL_ROLE_DIFF;
            add_block(st, tl_arena_printf(a, "%s vs %s: GPU time", v->tag, s->baseline), t);
        }
        item_block(st, a, tl_arena_printf(a, "%s vs %s: top regressions", v->tag, s->baseline), s->item,
                   s->baseline, v->tag, v->regressions, v->nregressions);
        item_block(st, a, tl_arena_printf(a, "%s vs %s: top improvements", v->tag, s->baseline), s->item,
                   s->baseline, v->tag, v->improvements, v->nimprovements);
        item_block(st, a, tl_arena_printf(a, "only in %s (%zu in all)", s->baseline, v->only_base_count), s->item,
                   s->baseline, v->tag, v->only_base, v->nonly_base);
        item_block(st, a, tl_arena_printf(a, "only in %s (%zu in all)", v->tag, v->only_var_count), s->item,
                   s->baseline, v->tag, v->only_var, v->nonly_var);
    }
    st->sheet.name = "summary";
    st->sheet.blocks = st->blocks;
    st->sheet.nblocks = st->nblocks;
    if (s->nchart) {
        size_t nrep = s->nvariants + 1;
        st->series = tl_xcalloc(nrep, sizeof *st->series);
        for (size_t r = 0; r < nrep; r++) {
            st->series[r].name = r == 0 ? s->baseline : s->variants[r - 1].tag;
            st->series[r].values = s->chart_ms + r * TL_SUMMARY_CHART_TOP;
        }
        st->chart = (tl_sheet_chart){
            tl_arena_printf(a, "Top %zu %ss by %s time", s->nchart, s->item, s->baseline),
            "GPU kernel time (ms)", s->nchart, s->chart_names, nrep, st->series};
        st->sheet.chart = &st->chart;
    }
    return &st->sheet;
}

void tl_summary_sheet_free(tl_summary_sheet *sheet)
{
    if (!sheet)
        return;
    sheet_store *st = (sheet_store *)sheet; /* the sheet is the store's first member */
    for (size_t i = 0; i < st->nblocks; i++)
        tl_table_free((tl_table *)st->blocks[i].table);
    free(st->blocks);
    free(st->series);
    free(st);
}
