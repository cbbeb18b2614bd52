/*
 * summary.c - the at-a-glance comparison and the CI gate (see summary.h).
 *
 * Everything here reads the finished result tables by column name, the way a user's
 * script would, so the summary can never disagree with the workbook.
 */
#include "summary/summary.h"

#include "base/numfmt.h"
#include "base/sort.h"
#include "summary/verdict.h"

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
    double pct = tl_delta_pct(d);
    return pct > limit + 1e-9 * (1 + fabs(limit));
}

/* The pct a violation reports: +inf for a time that grew from 0 (null in JSON). */
static double violation_pct(tl_delta d)
{
    return d.base == 0 && d.var > 0 ? INFINITY : tl_delta_pct(d);
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
        size_t i = (size_t)tl_cell_key_hash(&key->cells[r]) & (cap - 1);
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
        const tl_column *tc = tl_table_tagged(t, tags[rep], src->time);
        const tl_column *cc = src->count ? tl_table_tagged(t, tags[rep], src->count) : NULL;
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
                if (!isnan(tl_column_number_at(tc, rows[j])))
                    present[np++] = rows[j];
            if (np > 1)
                tl_sort_rows(present, np, cmp_tuple, &tc_ctx);
            double ms = 0, cnt = 0;
            int ncnt = 0;
            for (size_t j = 0; j < np; j++) {
                if (j > 0 && cmp_tuple(present[j - 1], present[j], &tc_ctx) == 0)
                    continue; /* the same row of this report, paired with another */
                ms += tl_column_number_at(tc, present[j]);
                double c = tl_column_number_at(cc, present[j]);
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
    tl_delta d = tl_item_shown(it, per_call);
    return d.var - d.base;
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
    v->violations[v->nviolations++] = (tl_violation){what, is_op, d.base, d.var, violation_pct(d), 0};
}

/* Is the change of `d` worth reporting: neither noise nor under a floor? */
static int counts_as_change(const tl_summary *s, tl_delta d)
{
    if (isnan(d.base) || isnan(d.var) || tl_delta_is_noise(d))
        return 0;
    if (fabs(d.var - d.base) < s->min_delta_ms)
        return 0;
    double pct = tl_delta_pct(d);
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
        has[i] = tl_table_tagged(timeline->table, tags[i], "time ms") != NULL;
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
    const tl_column *c = tl_table_tagged(t, tag, "Kernel duration (\xc2\xb5s)_sum");
    double per_ms = 1000;
    if (key < 0) {
        key = tl_table_find(t, "name");
        c = tl_table_tagged(t, tag, "Total Kernel Time (ms)");
        per_ms = 1;
    }
    if (key < 0 || !c)
        return NAN;
    double best = NAN;
    for (size_t row = 0; row < t->nrows; row++) {
        double v = tl_column_number_at(c, row) / per_ms;
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

/* The busy time as it is judged: per iteration when the runs did different numbers of
 * them (the variant's busy time over the call ratio), since a run twice as long is no
 * regression; and its verdict, from the same noise as the items' (items[0..n) judged). */
static void judge_busy(const tl_summary *s, tl_variant_summary *v, const tl_noise *noise, size_t var,
                       const tl_summary_item *items, size_t n)
{
    tl_summary_item *b = &v->busy;
    memset(b, 0, sizeof *b);
    b->name = tl_timeline_rows[TL_TL_BUSY];
    b->time_ms = v->has_timeline ? v->timeline[TL_TL_BUSY] : (tl_delta){NAN, NAN};
    b->count = b->per_call_ms = (tl_delta){NAN, NAN};
    if (!isnan(v->call_ratio))
        b->time_ms.var /= v->call_ratio;
    tl_verdict_busy(noise, var, items, n, isnan(v->call_ratio) ? 1 : v->call_ratio, s->confidence, b);
    if (b->verdict != TL_VERDICT_NONE && !counts_as_change(s, b->time_ms))
        b->verdict = TL_VERDICT_WITHIN_NOISE;
}

/* The gate on the busy time (as judge_busy left it): a regression over the limit, and,
 * when its noise is known, larger than the noise. */
static void check_busy(const tl_summary *s, tl_variant_summary *v)
{
    if (!s->gate_on || !v->has_timeline)
        return;
    tl_delta busy = v->busy.time_ms;
    if (v->busy.verdict != TL_VERDICT_NONE && v->busy.verdict != TL_VERDICT_SLOWER)
        return;
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
    s->confidence = gate && gate->confidence > 0 ? gate->confidence : TL_CONFIDENCE_DEFAULT;
    s->fdr = gate ? gate->fdr : 0;
    const tl_noise *noise = gate ? gate->noise : NULL;
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
            judge_busy(s, v, noise, vi + 1, NULL, 0);
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
        v->tested = tl_verdicts_judge(noise, vi + 1, items, g.nitems, per_call, s->confidence, s->fdr);
        if (v->tested)
            tl_verdict_basis(noise, vi + 1, items, g.nitems, v->basis, sizeof v->basis);
        judge_busy(s, v, noise, vi + 1, items, g.nitems);
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
            int change = counts_as_change(s, judged);
            if (it->verdict != TL_VERDICT_NONE) {
                /* tested: listed only when larger than the noise (and the floors) */
                if (!change)
                    it->verdict = TL_VERDICT_WITHIN_NOISE;
                if (it->verdict != TL_VERDICT_WITHIN_NOISE)
                    it->dir = it->verdict == TL_VERDICT_SLOWER ? 1 : -1;
                else if (judged.var != judged.base && !tl_delta_is_noise(judged))
                    v->within_noise++;
                else if (judged.var != judged.base)
                    v->noise_skipped++;
            } else if (change) {
                it->dir = judged.var > judged.base ? 1 : -1;
            } else if (judged.var != judged.base) {
                v->noise_skipped += tl_delta_is_noise(judged);
            }
            if (s->gate_on && it->dir > 0 && it->time_ms.base >= s->gate_min_ms && over_limit(judged, s->gate_pct)) {
                /* the figure the list shows, so that the gate line and the list agree */
                add_violation(v, it->name, 1, tl_item_shown(it, per_call));
                v->violations[v->nviolations - 1].per_iteration = per_call && judged.base != it->time_ms.base;
            }
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

