/*
 * page.c - the page's parts of runs and steps (see page.h).
 */
#include "run/page.h"

#include "run/dist_facts.h"
#include "table/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The gpu_timeline rows a rank's bar and heatmap take, as ranks_gpu_timeline names them
 * ("<type>_ms::<tag>", "<type>_ms__<tag>_diff"). */
static const char *const kRankTypes[] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time",
                                         "total_time", "busy_time"};
enum { RT_N = sizeof kRankTypes / sizeof *kRankTypes, RT_TOTAL = 4, RT_BUSY = 5, RT_COMM = 1 };

/* The heatmap's metrics: busy time, exposed communication (ranks_gpu_timeline), the mean
 * wait per collective (stragglers' mean_wait_time_us). */
static const char *const kHeatCols[] = {"busy (ms)", "exp. comm (ms)", "wait/coll. (\xc2\xb5s)"};
static const int kHeatDec[] = {3, 3, 1};
enum { HEAT_MAX = 3 };

struct tl_run_page_runs {
    size_t nsides, nranks;
    const char **tag;  /* [nsides] */
    const char **row;  /* [nranks]: "rank 3" */
    double **v;        /* [nsides][nranks * RT_N] */
    double **diff;     /* [nsides][nranks * RT_N]: variant minus baseline ([0] unused) */
    double **wait;     /* [nsides][nranks], NULL until stragglers is seen */
    double **wait_diff;
};

void tl_run_page_init(tl_run_page *p)
{
    memset(p, 0, sizeof *p);
    tl_arena_init(&p->arena);
}

static double *nan_array(tl_arena *a, size_t n)
{
    double *v = tl_arena_alloc(a, (n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    return v;
}

/* Column `name` of t as numbers into out[i * stride] (rows mapped by rows[], NULL: row r is
 * index r); absent column: left NaN. */
static void take_column(const tl_table *t, const char *name, const long *rows, size_t nmax, double *out, size_t stride)
{
    long c = tl_table_find(t, name);
    if (c < 0)
        return;
    for (size_t r = 0; r < t->nrows; r++) {
        long at = rows ? rows[r] : (long)r;
        if (at >= 0 && (size_t)at < nmax)
            out[(size_t)at * stride] = tl_column_number_at(&t->cols[c], r);
    }
}

/* ranks_gpu_timeline: the sides are its "busy_time_ms::<tag>" columns, in order. */
static tl_run_page_runs *take_ranks(tl_arena *a, const tl_table *t)
{
    static const char prefix[] = "busy_time_ms::";
    tl_run_page_runs *R = tl_arena_alloc(a, sizeof *R);
    memset(R, 0, sizeof *R);
    R->tag = tl_arena_alloc(a, (t->ncols + 1) * sizeof *R->tag);
    for (size_t c = 0; c < t->ncols; c++)
        if (!strncmp(t->cols[c].name, prefix, sizeof prefix - 1))
            R->tag[R->nsides++] = tl_arena_strdup(a, t->cols[c].name + sizeof prefix - 1);
    if (R->nsides < 2 || !t->nrows)
        return NULL;
    R->nranks = t->nrows;
    R->row = tl_arena_alloc(a, R->nranks * sizeof *R->row);
    long rc = tl_table_find(t, "rank");
    for (size_t r = 0; r < R->nranks; r++) {
        double rank = rc >= 0 ? tl_column_number_at(&t->cols[rc], r) : NAN;
        R->row[r] = isnan(rank) ? tl_arena_printf(a, "row %zu", r) : tl_arena_printf(a, "rank %.0f", rank);
    }
    R->v = tl_arena_alloc(a, R->nsides * sizeof *R->v);
    R->diff = tl_arena_alloc(a, R->nsides * sizeof *R->diff);
    for (size_t s = 0; s < R->nsides; s++) {
        R->v[s] = nan_array(a, R->nranks * RT_N);
        R->diff[s] = nan_array(a, R->nranks * RT_N);
        for (int k = 0; k < RT_N; k++) {
            take_column(t, tl_arena_printf(a, "%s_ms::%s", kRankTypes[k], R->tag[s]), NULL, R->nranks, R->v[s] + k, RT_N);
            if (s)
                take_column(t, tl_arena_printf(a, "%s_ms__%s_diff", kRankTypes[k], R->tag[s]), NULL, R->nranks,
                            R->diff[s] + k, RT_N);
        }
    }
    return R;
}

/* stragglers: its rows keyed by rank ("<tag>::mean_wait_time_us", "mean_wait_time_us__<tag>_diff"). */
static void take_waits(tl_arena *a, tl_run_page_runs *R, const tl_table *t)
{
    long rc = tl_table_find(t, "rank");
    if (rc < 0)
        return;
    long *rows = tl_arena_alloc(a, (t->nrows + 1) * sizeof *rows);
    for (size_t r = 0; r < t->nrows; r++) {
        double rank = tl_column_number_at(&t->cols[rc], r);
        rows[r] = rank >= 0 && rank < (double)R->nranks ? (long)rank : -1;
    }
    R->wait = tl_arena_alloc(a, R->nsides * sizeof *R->wait);
    R->wait_diff = tl_arena_alloc(a, R->nsides * sizeof *R->wait_diff);
    for (size_t s = 0; s < R->nsides; s++) {
        R->wait[s] = nan_array(a, R->nranks);
        R->wait_diff[s] = nan_array(a, R->nranks);
        take_column(t, tl_arena_printf(a, "%s::mean_wait_time_us", R->tag[s]), rows, R->nranks, R->wait[s], 1);
        if (s)
            take_column(t, tl_arena_printf(a, "mean_wait_time_us__%s_diff", R->tag[s]), rows, R->nranks,
                        R->wait_diff[s], 1);
    }
}

void tl_run_page_observe(tl_run_page *p, const tl_result *r)
{
    if (!r->table)
        return;
    if (!strcmp(r->name, TL_DIST_SHEET_RANKS))
        p->runs = take_ranks(&p->arena, r->table);
    else if (!strcmp(r->name, TL_DIST_SHEET_STRAGGLERS) && p->runs) /* the runs' sheets come in that order */
        take_waits(&p->arena, p->runs, r->table);
}

/* ---- the parts, as the page model --------------------------------------------------- */

static void fill_bar(tl_page_bar *b, const char *label, const double *parts_ms, double total_ms)
{
    b->label = label;
    for (int k = 0; k < TL_PAGE_NPARTS; k++)
        b->part_ms[k] = parts_ms[k];
    b->total_ms = total_ms;
}

/* Trace steps s's bars, each its step's own gpu_timeline rows (µs), into bars[*at...];
 * those outside positions [first, last) marked "*". */
static void add_step_bars(tl_run_page *p, const tl_steps *s, const char *tag, size_t first, size_t last,
                          tl_page_bar *bars, size_t *at)
{
    /* gpu_timeline's rows in a step (trace/trace_report.h): compute, exposed comm, exposed
     * memcpy, busy, idle, total */
    static const int parts[TL_PAGE_NPARTS] = {0, 1, 2, 4};
    for (size_t i = 0; i < s->n; i++) {
        const double *tl = s->tl + i * TL_TIMELINE_N;
        double ms[TL_PAGE_NPARTS];
        for (int j = 0; j < TL_PAGE_NPARTS; j++)
            ms[j] = tl[parts[j]] / 1e3;
        int kept = i >= first && i < last;
        fill_bar(&bars[(*at)++], tl_arena_printf(&p->arena, "%s step %lld%s", tag, (long long)s->span[i].number,
                                                 kept ? "" : " *"), ms, tl[5] / 1e3);
    }
}

/* Per step of each trace, a bar. */
static void step_bars(tl_run_page *p, const tl_run_steps *rs, const char *const *tags, tl_page_bar_set *set)
{
    size_t n = rs->s[0].n + rs->s[1].n, at = 0;
    tl_page_bar *bars = tl_arena_alloc(&p->arena, n * sizeof *bars);
    for (int k = 0; k < 2; k++)
        add_step_bars(p, &rs->s[k], tags[k], rs->first[k], rs->last[k], bars, &at);
    *set = (tl_page_bar_set){"Where the time went, per step", bars, n,
                             "each ProfilerStep's own gpu_timeline; * marks the steps the verdicts leave out "
                             "(warm-up, or outside --steps)"};
}

const tl_page_bar_set *tl_run_page_report_steps(tl_run_page *p, const tl_steps *s, const char *tag)
{
    if (!s->n)
        return NULL;
    size_t at = 0;
    tl_page_bar *bars = tl_arena_alloc(&p->arena, s->n * sizeof *bars);
    add_step_bars(p, s, tag, 0, s->n, bars, &at);
    tl_page_bar_set *set = tl_arena_alloc(&p->arena, sizeof *set);
    *set = (tl_page_bar_set){"Where the time went, per step", bars, at, "each ProfilerStep's own gpu_timeline"};
    return set;
}

/* Per rank, each side's bar, the sides of a rank together. */
static void rank_bars(tl_run_page *p, tl_page_bar_set *set)
{
    const tl_run_page_runs *R = p->runs;
    tl_page_bar *bars = tl_arena_alloc(&p->arena, R->nranks * R->nsides * sizeof *bars);
    size_t at = 0;
    for (size_t r = 0; r < R->nranks; r++)
        for (size_t s = 0; s < R->nsides; s++) {
            const double *v = R->v[s] + r * RT_N;
            fill_bar(&bars[at++], tl_arena_printf(&p->arena, "%s %s", R->tag[s], R->row[r]), v, v[RT_TOTAL]);
        }
    *set = (tl_page_bar_set){"Where the time went, per rank", bars, at,
                             "each rank's gpu_timeline, as the ranks_gpu_timeline sheet has it"};
}

static void heat_write(void *ctx, tl_buf *out)
{
    tl_run_page *p = ctx;
    for (size_t i = 0; i < p->nheat; i++) {
        char id[32];
        snprintf(id, sizeof id, "heat-%zu", i);
        tl_html_heatmap(out, &p->heat[i], id);
    }
}

/* Variant k's heatmap against the baseline. */
static void heatmap(tl_run_page *p, size_t k, tl_page_heatmap *h)
{
    const tl_run_page_runs *R = p->runs;
    size_t nc = R->wait ? HEAT_MAX : HEAT_MAX - 1, n = R->nranks * nc;
    double *v0 = tl_arena_alloc(&p->arena, n * sizeof *v0), *v1 = tl_arena_alloc(&p->arena, n * sizeof *v1);
    double *d = tl_arena_alloc(&p->arena, n * sizeof *d);
    static const int from[2] = {RT_BUSY, RT_COMM};
    for (size_t r = 0; r < R->nranks; r++) {
        for (int c = 0; c < 2; c++) {
            v0[r * nc + c] = R->v[0][r * RT_N + from[c]];
            v1[r * nc + c] = R->v[k][r * RT_N + from[c]];
            d[r * nc + c] = R->diff[k][r * RT_N + from[c]];
        }
        if (R->wait) {
            v0[r * nc + 2] = R->wait[0][r];
            v1[r * nc + 2] = R->wait[k][r];
            d[r * nc + 2] = R->wait_diff[k][r];
        }
    }
    *h = (tl_page_heatmap){tl_arena_printf(&p->arena, "%s -> %s: busy time, exposed communication and wait per "
                                                      "collective, per rank", R->tag[0], R->tag[k]),
                           {R->tag[0], R->tag[k]}, R->nranks, nc, R->row, kHeatCols, kHeatDec, {v0, v1}, d};
}

void tl_run_page_opts(tl_run_page *p, const tl_run_steps *rs, const char *const *tags, tl_page_opts *opt)
{
    p->sets = tl_arena_alloc(&p->arena, 2 * sizeof *p->sets);
    p->nsets = 0;
    if (rs && rs->measured && tags && rs->s[0].n + rs->s[1].n > 0)
        step_bars(p, rs, tags, &p->sets[p->nsets++]);
    if (p->runs) {
        rank_bars(p, &p->sets[p->nsets++]);
        p->nheat = p->runs->nsides - 1;
        p->heat = tl_arena_alloc(&p->arena, p->nheat * sizeof *p->heat);
        for (size_t k = 1; k < p->runs->nsides; k++)
            heatmap(p, k, &p->heat[k - 1]);
        p->extras = tl_arena_alloc(&p->arena, sizeof *p->extras);
        *p->extras = (tl_page_extra){"ranks", "Ranks: busy time, exposed communication, wait", heat_write, p};
        opt->extras = p->extras;
        opt->nextras = 1;
    }
    opt->bar_sets = p->sets;
    opt->nbar_sets = p->nsets;
}

void tl_run_page_free(tl_run_page *p)
{
    tl_arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}
