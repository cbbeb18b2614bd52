/*
 * dist.c - comparing distributed runs (dist.h): the runs found and read, each rank of a
 * run of traces folded as it is read into its run's one in-memory report (its ranks' mean
 * gpu_timeline and ops_summary, as the comparison of the ranks as the runs of each side
 * makes them) and let go but for a few numbers, so that memory does not grow with the
 * rank count; the sheets only runs have, and the summary's answer.
 */
#include "run/dist.h"

#include "compare/compare.h"
#include "compare/groups.h"
#include "compare/runs.h"
#include "ranks/ranks.h"
#include "run/dist_answer.h"
#include "run/dist_facts.h"
#include "run/distreport.h"
#include "run/memreport.h"
#include "trace/trace_report.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define kTypes tl_dist_types
enum { NTYPES = TL_DIST_NTYPES };

/* The sheets a rank of a trace run is folded into: keyed and tracked as their sheet groups
 * compare them (tl_group_spec), since the fold must pair and average exactly as they do. */
static const char *const kFoldSheets[2] = {"gpu_timeline", "ops_summary"};
/* Ranks read together before they are folded, per worker: enough to keep the workers busy
 * (a batch waits for its slowest rank), few enough that their sheets weigh nothing. */
#define RANK_BATCH 16

/* What a comparison of runs hands the comparison of its ranks to keep (its owner, in
 * tl_compare_opts): the runs' facts, and their answer for the gate again. */
typedef struct dist_kept {
    struct tl_dist d;
    tl_dist_lead lead;
} dist_kept;

/* ---- recognising and reading runs ------------------------------------------------------- */

/* The rank-set options a path makes: a directory scanned, or a glob pattern. */
static void run_opts(const char *path, int jobs, tl_ranks_opts *o)
{
    memset(o, 0, sizeof *o);
    o->spec = path;
    o->jobs = jobs;
    o->mode = strchr(path, '*') ? TL_RANKS_GLOB : TL_RANKS_SCAN;
    if (o->mode == TL_RANKS_GLOB) {
        glob_t g;
        o->world_size = glob(path, 0, NULL, &g) == 0 ? (long)g.gl_pathc : 0;
        if (o->world_size)
            globfree(&g);
    }
}

/* By content: some file the path names (the directory's files, the pattern's matches) is
 * named like a rank by the default rank regex and is a trace.  A run with a rank missing
 * or damaged is still a run: reading it says what is wrong. */
static int traces_claim(const char *path)
{
    if (!strchr(path, '*') && !tl_is_dir(path))
        return 0;
    char *pattern = strchr(path, '*') ? tl_xstrdup(path) : tl_xmalloc(strlen(path) + 3);
    if (!strchr(path, '*'))
        sprintf(pattern, "%s/*", path);
    regex_t re;
    size_t group;
    tl_error err = {0};
    glob_t g;
    int claims = 0;
    if (tl_ranks_regex(TL_RANKS_DEFAULT_REGEX, &re, &group, &err) == 0) {
        if (glob(pattern, 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc && !claims; i++)
                claims = !tl_is_dir(g.gl_pathv[i]) && tl_ranks_rank_of(g.gl_pathv[i], &re, group) >= 0 &&
                         tl_trace_claims(g.gl_pathv[i]);
            globfree(&g);
        }
        regfree(&re);
    }
    free(pattern);
    return claims;
}

int tl_dist_claims(const char *path) { return traces_claim(path) || tl_dist_reports_claims(path); }

/* The cell of gpu_timeline row `type`, in ms (NaN: none). */
static double timeline_ms(const tl_table *t, const char *type)
{
    long tc = t ? tl_table_find(t, "type") : -1, mc = t ? tl_table_find(t, "time ms") : -1;
    for (size_t r = 0; tc >= 0 && mc >= 0 && r < t->nrows; r++) {
        const tl_cell *k = &t->cols[tc].cells[r];
        if (k->kind == TL_STR && strcmp(k->v.s, type) == 0)
            return tl_column_number_at(&t->cols[mc], r);
    }
    return NAN;
}

/* The baseline's rank 0's ops (its ops_summary's names, in row order): the ops whose
 * per-rank times are kept (those that moved on one rank only are found among them). */
static void take_ops(struct tl_dist *d, const tl_table *t)
{
    long nc = t ? tl_table_find(t, "name") : -1;
    if (nc < 0)
        return;
    d->have_ops = 1;
    d->ops = tl_xcalloc(t->nrows ? t->nrows : 1, sizeof *d->ops);
    d->op_first = tl_xcalloc(t->nrows ? t->nrows : 1, sizeof *d->op_first);
    for (size_t r = 0; r < t->nrows; r++) {
        const tl_cell *c = &t->cols[nc].cells[r];
        if (c->kind != TL_STR)
            continue;
        const char *op = tl_arena_strdup(&d->arena, c->v.s);
        tl_strmap_slot *slot = tl_strmap_get(&d->op_index, op);
        if (!slot->value)
            slot->value = d->nops + 1;
        d->op_first[d->nops] = slot->value - 1;
        d->ops[d->nops++] = op;
    }
}

/* Rank i's ops' times into run->op_ms (an op named twice in the rank: its last row). */
static void take_op_times(struct tl_dist *d, dist_run *run, size_t i, const tl_table *t)
{
    long c = t ? tl_table_find(t, "name") : -1, m = t ? tl_table_find(t, "total_direct_kernel_time_ms") : -1;
    for (size_t q = 0; c >= 0 && m >= 0 && q < t->nrows; q++) {
        const tl_cell *name = &t->cols[c].cells[q];
        const tl_strmap_slot *slot = name->kind == TL_STR ? tl_strmap_find(&d->op_index, name->v.s) : NULL;
        if (slot)
            run->op_ms[(slot->value - 1) * run->set.n + i] = tl_column_number_at(&t->cols[m], q);
    }
}

/* What the comparison keeps of rank i of run k, taken once it is read: its times, its ops'
 * times, and (a trace run) its sheets folded into the run's, its tables then let go. */
static int take_rank(struct tl_dist *d, size_t k, size_t i, tl_runs_fold **fold, tl_error *err)
{
    dist_run *run = &d->runs[k];
    tl_rank_facts *f = &run->set.facts[i];
    size_t n = run->set.n;
    for (int ty = 0; ty < NTYPES; ty++) {
        if (!run->times[ty])
            run->times[ty] = tl_xmalloc((n ? n : 1) * sizeof *run->times[ty]);
        run->times[ty][i] = timeline_ms(f->gpu_timeline, kTypes[ty]);
    }
    if (k == 0 && i == 0)
        take_ops(d, f->ops_summary);
    if (d->have_ops) {
        if (!run->op_ms) {
            run->op_ms = tl_xmalloc((d->nops * n + 1) * sizeof *run->op_ms);
            for (size_t j = 0; j < d->nops * n; j++)
                run->op_ms[j] = NAN;
        }
        take_op_times(d, run, i, f->ops_summary);
    }
    if (!fold)
        return 0;
    run->no_ops |= !f->ops_summary;
    tl_error e = {0};
    if (tl_runs_fold_add(fold[0], f->gpu_timeline, &e) != 0 ||
        (!run->no_ops && tl_runs_fold_add(fold[1], f->ops_summary, &e) != 0)) {
        tl_error_set(err, "%s: rank %zu (%s): %s", run->path, i, run->set.paths[i], e.msg);
        return -1;
    }
    tl_table_free(f->gpu_timeline);
    tl_table_free(f->ops_summary);
    free(f->table_strings);
    f->gpu_timeline = f->ops_summary = NULL;
    f->table_strings = NULL;
    return 0;
}

/* Run k's rank traces read RANK_BATCH ranks a worker at a time (each batch on o->jobs workers,
 * or all at once by an MPI front end's processes), each rank taken in rank order as soon
 * as its batch is read: what is held of the ranks' sheets is the run's one folded copy. */
static int read_trace_ranks(struct tl_dist *d, size_t k, const tl_compare_opts *o, tl_error *err)
{
    dist_run *run = &d->runs[k];
    tl_rank_set *s = &run->set;
    long workers = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = s->n, batch = o->read_ranks ? n : RANK_BATCH * (size_t)(workers > 1 ? workers : 1);
    tl_runs_fold *fold[2];
    for (int g = 0; g < 2; g++) {
        tl_compare_spec spec;
        if (tl_group_spec(kFoldSheets[g], &spec) != 0)
            abort(); /* the groups' own sheets: cannot be missing */
        fold[g] = tl_runs_fold_new(run->tag, &spec, &d->arena);
    }
    long no_timeline = -1;
    int rc = 0;
    tl_error ferr = {0};
    if (o->read_ranks) {
        rc = o->read_ranks(s, o->jobs, o->read_ranks_ctx, err);
    } else {
        s->facts = tl_xcalloc(n ? n : 1, sizeof *s->facts);
    }
    for (size_t start = 0; rc == 0 && start < n; start += batch) {
        size_t end = start + batch < n ? start + batch : n;
        if (!o->read_ranks) {
            /* the ranks start..end read as the last ranks of a set of `end` (their rows in
             * the run's store), then moved into the run's */
            tl_rank_set sub = {0};
            sub.n = end;
            sub.store = s->store;
            sub.paths = s->paths;
            sub.want_ops = 1;
            tl_ranks_read_part(&sub, o->jobs, start, 1);
            s->store = sub.store;
            memcpy(&s->facts[start], &sub.facts[start], (end - start) * sizeof *s->facts);
            free(sub.facts);
            tl_release_freed(); /* the batch's traces, freed on the workers among its facts */
            if (tl_ranks_read_failed(s, err) != 0)
                rc = -1;
        }
        for (size_t i = start; rc == 0 && i < end && no_timeline < 0 && !ferr.set; i++) {
            if (!s->facts[i].gpu_timeline)
                no_timeline = (long)i;
            else
                take_rank(d, k, i, fold, &ferr);
        }
    }
    if (rc != 0) {
        tl_error e = *err;
        tl_error_set(err, "%s: %s", run->path, e.msg);
    } else if (no_timeline >= 0) {
        tl_error_set(err, "%s: rank %ld (%s): no GPU event linked to a launch, so no gpu_timeline", run->path,
                     no_timeline, s->paths[no_timeline]);
        rc = -1;
    } else if (ferr.set) {
        *err = ferr;
        rc = -1;
    }
    if (rc != 0) {
        tl_runs_fold_free(fold[0]);
        tl_runs_fold_free(fold[1]);
        return -1;
    }
    run->mean[0] = tl_runs_fold_finish(fold[0]);
    run->mean[1] = tl_runs_fold_finish(fold[1]);
    if (run->no_ops) {
        tl_table_free(run->mean[1]);
        run->mean[1] = NULL;
    }
    return 0;
}

/* A copy of t whose texts live in `a` (not in the ranks' facts). */
static tl_table *own_table(const tl_table *t, tl_arena *a)
{
    tl_table *c = tl_table_copy(t);
    for (size_t j = 0; j < c->ncols; j++) {
        c->cols[j].name = tl_arena_strdup(a, c->cols[j].name);
        for (size_t r = 0; r < c->nrows; r++) {
            tl_cell *x = &c->cols[j].cells[r];
            if (x->kind == TL_STR) {
                size_t n = tl_cell_len(x);
                *x = tl_cell_strn(tl_arena_strndup(a, x->v.s, n), n);
            }
        }
    }
    return c;
}

/* The collective sheets a comparison reads (its summary rows and stragglers compared), the
 * run's straggler found first: the others (their rows a rank per collective, or a column
 * per rank) are let go, and with them a trace run's ranks' facts. */
static void keep_coll(struct tl_dist *d, dist_run *run)
{
    static const char *const kept[] = {"nccl_summary_implicit_sync", "straggler_summary"};
    run->straggler = tl_dist_straggler(run);
    tl_results coll = {0};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        const tl_table *t = tl_dist_coll_sheet(run, kept[i]);
        if (t)
            tl_results_add(&coll, tl_arena_strdup(&d->arena, kept[i]), own_table(t, &d->arena));
    }
    tl_results_free(&run->coll);
    run->coll = coll;
    if (run->reports)
        return; /* their tables are the ranks' reports */
    size_t n = run->set.n; /* the world size stays: the rest is the comparison's own */
    tl_rank_set_free(&run->set);
    run->set.n = n;
}

/* Find and read every run, then its collective sheets. */
static int read_runs(struct tl_dist *d, const tl_compare_opts *o, tl_error *err)
{
    for (size_t k = 0; k < d->nruns; k++) {
        dist_run *run = &d->runs[k];
        run->reports = !traces_claim(run->path);
        if (run->reports) {
            if (tl_dist_reports_read(run->path, &run->set, &run->coll, &run->coll_path, &d->arena, err) != 0)
                return -1;
            for (size_t i = 0; i < run->set.n; i++)
                take_rank(d, k, i, NULL, err);
            if (run->coll.n == 0) {
                run->no_coll = tl_arena_printf(&d->arena, "%s has no collective report beside its ranks' reports",
                                               run->path);
                tl_note("%s: collectives are not compared", run->no_coll);
            }
            keep_coll(d, run);
            continue;
        }
        tl_ranks_opts ro;
        run_opts(run->path, o->jobs, &ro);
        if (tl_ranks_find(&ro, &run->set, err) != 0)
            return -1;
        run->set.want_ops = 1;
        if (read_trace_ranks(d, k, o, err) != 0)
            return -1;
        tl_error cerr = {0};
        int quiet = tl_quiet;
        tl_quiet = 1;
        if (tl_ranks_sheets(&run->set, &ro, &d->arena, &run->coll, &cerr) != 0) {
            tl_results_free(&run->coll);
            memset(&run->coll, 0, sizeof run->coll);
        }
        tl_quiet = quiet;
        if (run->coll.n == 0) {
            run->no_coll = tl_arena_printf(&d->arena, "%s: no collective matched across its ranks (%s)", run->path,
                                           cerr.msg[0] ? cerr.msg : "none found");
            tl_note("%s: no collective sheets", run->no_coll);
        }
        keep_coll(d, run);
    }
    return 0;
}

/* The reports the comparison reads, tagged with their run's tag: a trace run's one report
 * of its ranks folded (the side's sheets as the runs' collapse makes them), a run of
 * per-rank reports its ranks' own, collapsed by the sheet groups as runs of one side. */
static int rank_reports(struct tl_dist *d, tl_error *err)
{
    size_t total = 0;
    for (size_t k = 0; k < d->nruns; k++)
        total += d->runs[k].reports ? d->runs[k].set.n : 1;
    d->given = tl_xcalloc(total, sizeof *d->given);
    d->inputs = tl_xcalloc(total + 1, sizeof *d->inputs);
    d->names = tl_xcalloc(total, sizeof *d->names);
    d->ngiven = total;
    size_t at = 0;
    for (size_t k = 0; k < d->nruns; k++) {
        dist_run *run = &d->runs[k];
        if (!run->reports) {
            d->inputs[at] = run->path;
            d->names[at] = run->tag;
            tl_mem_report_open(&d->given[at], d->inputs[at]);
            int rc = tl_mem_report_put_sheet(&d->given[at], "gpu_timeline", run->mean[0], err);
            run->mean[0] = NULL;
            if (rc == 0 && run->mean[1])
                rc = tl_mem_report_put_sheet(&d->given[at], "ops_summary", run->mean[1], err);
            run->mean[1] = NULL;
            at++;
            if (rc != 0)
                return -1;
            continue;
        }
        for (size_t i = 0; i < run->set.n; i++, at++) {
            tl_rank_facts *f = &run->set.facts[i];
            d->inputs[at] = tl_arena_printf(&d->arena, "%s rank %zu", run->tag, i);
            d->names[at] = run->tag;
            tl_mem_report_open(&d->given[at], d->inputs[at]);
            /* the facts' tables as they are (their texts live as long as the run): a
             * rank's report costs its cells only */
            if (tl_mem_report_put_sheet(&d->given[at], "gpu_timeline", tl_table_copy(f->gpu_timeline), err) != 0 ||
                (f->ops_summary &&
                 tl_mem_report_put_sheet(&d->given[at], "ops_summary", tl_table_copy(f->ops_summary), err) != 0))
                return -1;
        }
    }
    return 0;
}

/* ---- the sheets of runs ------------------------------------------------------------------ */

/* A new column (its name from fmt, x, y): its index (t->cols moves as columns are added). */
static size_t col(tl_table *t, tl_arena *a, const char *fmt, const char *x, const char *y)
{
    return tl_table_add_column(t, tl_arena_printf(a, fmt, x, y));
}

/* ranks_gpu_timeline: a row per rank, per type the baseline's and each variant's time and
 * the diffs (ms, %); ranks are paired by number (a run with fewer ranks leaves its cells
 * empty). */
static tl_table *ranks_sheet(struct tl_dist *d)
{
    size_t n = 0;
    for (size_t k = 0; k < d->nruns; k++)
        n = d->runs[k].set.n > n ? d->runs[k].set.n : n;
    tl_table *t = tl_table_new();
    t->nrows = n;
    tl_table_add_column(t, "rank");
    for (size_t r = 0; r < n; r++)
        t->cols[0].cells[r] = tl_cell_int((int64_t)r);
    const dist_run *base = &d->runs[0];
    for (int ty = 0; ty < NTYPES; ty++) {
        for (size_t k = 0; k < d->nruns; k++) {
            size_t c = col(t, &d->arena, "%s_ms::%s", kTypes[ty], d->runs[k].tag);
            for (size_t r = 0; r < d->runs[k].set.n; r++)
                tl_dist_put_num(&t->cols[c], r, d->runs[k].times[ty][r]);
        }
        for (size_t k = 1; k < d->nruns; k++) {
            size_t cd = col(t, &d->arena, "%s_ms__%s_diff", kTypes[ty], d->runs[k].tag);
            size_t cp = col(t, &d->arena, "%s_ms__%s_pct", kTypes[ty], d->runs[k].tag);
            for (size_t r = 0; r < d->runs[k].set.n && r < base->set.n; r++) {
                double a = base->times[ty][r], b = d->runs[k].times[ty][r];
                tl_dist_put_num(&t->cols[cd], r, b - a);
                tl_dist_put_num(&t->cols[cp], r, a > 0 ? 100 * (b - a) / a : NAN);
            }
        }
    }
    return t;
}

/* ranks_spread: a row per type; per run min, median, max and the rank of the max; per
 * variant the max's diff and whether the slowest rank changed. */
static tl_table *spread_sheet(struct tl_dist *d)
{
    tl_table *t = tl_table_new();
    t->nrows = NTYPES;
    tl_table_add_column(t, "type");
    for (int ty = 0; ty < NTYPES; ty++)
        t->cols[0].cells[ty] = tl_cell_strn(kTypes[ty], strlen(kTypes[ty]));
    t->cols[0].type = TL_COL_STR;
    static const char *const what[] = {"min", "median", "max", "max_rank"};
    size_t base_rank[NTYPES] = {0};
    double base_max[NTYPES] = {0};
    for (size_t k = 0; k < d->nruns; k++) {
        size_t ci[4], cdi = 0, cpi = 0, cci = 0;
        for (int w = 0; w < 4; w++)
            ci[w] = col(t, &d->arena, "%s::%s", what[w], d->runs[k].tag);
        if (k) {
            cdi = col(t, &d->arena, "max__%s_%s", d->runs[k].tag, "diff");
            cpi = col(t, &d->arena, "max__%s_%s", d->runs[k].tag, "pct");
            cci = col(t, &d->arena, "max_rank__%s_%s", d->runs[k].tag, "changed");
        }
        tl_column *c[4] = {&t->cols[ci[0]], &t->cols[ci[1]], &t->cols[ci[2]], &t->cols[ci[3]]};
        tl_column *cd = &t->cols[cdi], *cp = &t->cols[cpi], *cc = &t->cols[cci];
        for (int ty = 0; ty < NTYPES; ty++) {
            size_t n = d->runs[k].set.n;
            double *v = tl_dist_rank_values(&d->runs[k], kTypes[ty]);
            size_t am = tl_dist_argmax(v, n), amin = 0;
            for (size_t i = 1; i < n; i++)
                amin = v[i] < v[amin] ? i : amin;
            tl_dist_put_num(c[0], ty, v[amin]);
            tl_dist_put_num(c[1], ty, tl_dist_median(v, n));
            tl_dist_put_num(c[2], ty, v[am]);
            c[3]->cells[ty] = tl_cell_int((int64_t)am);
            if (k == 0) {
                base_rank[ty] = am, base_max[ty] = v[am];
            } else {
                tl_dist_put_num(cd, ty, v[am] - base_max[ty]);
                tl_dist_put_num(cp, ty, base_max[ty] > 0 ? 100 * (v[am] - base_max[ty]) / base_max[ty] : NAN);
                cc->cells[ty] = tl_cell_bool(am != base_rank[ty]);
            }
            free(v);
        }
    }
    return t;
}

/* The sheet `name` of every run compared on `keys` with `diffs` (tl_compare), or NULL when
 * a run lacks it. */
static tl_table *compare_coll(struct tl_dist *d, const char *name, const char *const *keys, size_t nkeys,
                              const char *const *diffs, size_t ndiffs, tl_error *err)
{
    tl_table **tables = tl_xcalloc(d->nruns, sizeof *tables);
    const char **tags = tl_xcalloc(d->nruns, sizeof *tags);
    for (size_t k = 0; k < d->nruns; k++) {
        const tl_table *t = tl_dist_coll_sheet(&d->runs[k], name);
        if (!t) {
            for (size_t j = 0; j < k; j++)
                tl_table_free(tables[j]);
            free(tables);
            free(tags);
            return NULL;
        }
        tables[k] = tl_table_copy(t);
        tags[k] = d->runs[k].tag;
    }
    tl_compare_spec spec = {name, keys, nkeys, diffs, ndiffs, 1};
    int quiet = tl_quiet;
    tl_quiet = 1;
    tl_table *m = tl_compare(tables, tags, d->nruns, &spec, &d->arena, err);
    tl_quiet = quiet;
    free(tables);
    free(tags);
    return m;
}

static const char *const kCollKeys[] = {"Collective name", "Process Group Name", "dtype", "In msg nelems"};
static const char *const kCollDiffs[] = {"bus bw (GB/s)_mean", "algo bw (GB/s)_mean", "comm_latency_mean",
                                         "skew in start time_mean", "Total comm latency (ms)", "count"};
static const char *const kStragKeys[] = {"rank"};
static const char *const kStragDiffs[] = {"total_wait_time_us", "mean_wait_time_us", "times_arrived_last",
                                          "pct_arrived_last", "total_nccl_dur_us"};

static void add_extra(struct tl_dist *d, const char *name, tl_table *t)
{
    if (!t)
        return;
    if (d->extra.n == d->extra.cap) {
        d->extra.cap = d->extra.cap ? 2 * d->extra.cap : 8;
        d->extra.items = tl_xrealloc(d->extra.items, d->extra.cap * sizeof *d->extra.items);
    }
    d->extra.items[d->extra.n++] = (tl_result){name, t, NULL, t->nrows, t->ncols, NULL};
}

/* ---- the run --------------------------------------------------------------------------- */

/* What the runs hold, freed (d itself is the caller's). */
static void runs_free(struct tl_dist *d)
{
    for (size_t k = 0; k < d->nruns; k++) {
        tl_rank_set_free(&d->runs[k].set);
        tl_results_free(&d->runs[k].coll);
        free(d->runs[k].coll_path);
        for (int ty = 0; ty < NTYPES; ty++)
            free(d->runs[k].times[ty]);
        free(d->runs[k].op_ms);
        tl_table_free(d->runs[k].mean[0]);
        tl_table_free(d->runs[k].mean[1]);
    }
    free(d->ops);
    free(d->op_first);
    tl_strmap_clear(&d->op_index);
    free(d->runs);
    for (size_t i = 0; i < d->extra.n; i++)
        tl_table_free(d->extra.items[i].table);
    free(d->extra.items);
    free(d->given); /* the reports themselves are the comparison's once given */
    free(d->inputs);
    free(d->names);
    tl_arena_free(&d->arena);
}

/* The owner's free and gate (tl_compare_owner), for the comparison of the ranks. */
static void kept_free(void *ctx)
{
    dist_kept *k = ctx;
    if (!k)
        return;
    tl_dist_lead_free(&k->lead);
    runs_free(&k->d);
    free(k);
}

static int kept_gate(const void *ctx, double pct, tl_buf *violations)
{
    const dist_kept *k = ctx;
    return tl_dist_gate(&k->lead, pct, violations);
}

/* A run that stops before it starts: c holds only the error (fmt with a and b). */
static int dist_fail(tl_comparison *c, int status, const char *fmt, const char *a, const char *b)
{
    memset(c, 0, sizeof *c);
    snprintf(c->err.msg, sizeof c->err.msg, fmt, a, b);
    c->err.set = 1;
    return c->status = status;
}

static int dist_usage(tl_comparison *c, const char *fmt, const char *a, const char *b)
{
    return dist_fail(c, TL_RUN_USAGE, fmt, a, b);
}

/* The first option given of those that only traces take (a capture folder, the call
 * trees, the steps, the inference generator's reading), or NULL: runs are read rank by
 * rank through the rank reader, which has none of them. */
static const char *trace_option(const tl_compare_opts *o)
{
    if (tl_compare_capture_given(o))
        return "a capture folder";
    return o->tracediff_dir ? "--tracediff-dir" : o->steps ? "--steps" : tl_compare_infer_option(o);
}

int tl_dist_compare_run(const tl_compare_opts *o, tl_comparison *c)
{
    size_t nrun = 0;
    const char *a_run = NULL, *a_single = NULL;
    for (size_t i = 0; i < o->ninputs; i++) {
        if (tl_dist_claims(o->inputs[i]))
            nrun++, a_run = a_run ? a_run : o->inputs[i];
        else
            a_single = a_single ? a_single : o->inputs[i];
    }
    if (nrun == 0)
        return -1;
    if (a_single && access(a_single, F_OK) != 0) /* as the reading of any input says it */
        return dist_fail(c, TL_RUN_FAILED, "%s: %s", a_single, strerror(errno));
    if (a_single)
        return dist_usage(c, "'%s' is a run (a set of rank traces or reports) but '%s' is not: compare runs with runs, or one "
                             "rank's trace with another's", a_run, a_single);
    const char *traces_only = trace_option(o);
    if (traces_only)
        return dist_usage(c, "%s is not available for runs, which are read rank by rank (give one rank's trace of each "
                             "run%s)", traces_only, " to use it");
    if (o->names_given && o->nnames != o->ninputs)
        return dist_usage(c, "--names gives %s tags for %s runs; give exactly one per run", "a different number of",
                          "the");
    dist_kept *kept = tl_xcalloc(1, sizeof *kept);
    struct tl_dist *d = &kept->d;
    tl_arena_init(&d->arena);
    d->nruns = o->ninputs;
    d->runs = tl_xcalloc(d->nruns, sizeof *d->runs);
    char **tags = o->names_given ? NULL : tl_compare_default_tags(o->inputs, o->ninputs);
    for (size_t k = 0; k < d->nruns; k++) {
        d->runs[k].path = o->inputs[k];
        d->runs[k].tag = tl_arena_strdup(&d->arena, o->names_given ? o->names[k] : tags[k]);
        if (tags)
            free(tags[k]);
    }
    free(tags);
    tl_error err = {0};
    if (read_runs(d, o, &err) != 0 || rank_reports(d, &err) != 0) {
        memset(c, 0, sizeof *c);
        c->err = err;
        c->status = TL_RUN_FAILED;
        for (size_t i = 0; i < d->ngiven; i++)
            if (d->given[i].ops)
                tl_report_close(&d->given[i]);
        kept_free(kept);
        return c->status;
    }
    add_extra(d, TL_DIST_SHEET_RANKS, ranks_sheet(d));
    add_extra(d, TL_DIST_SHEET_SPREAD, spread_sheet(d));
    tl_error cerr = {0};
    add_extra(d, TL_DIST_SHEET_COLL, compare_coll(d, "nccl_summary_implicit_sync", kCollKeys, 4, kCollDiffs, 6, &cerr));
    add_extra(d, TL_DIST_SHEET_STRAGGLERS, compare_coll(d, "straggler_summary", kStragKeys, 1, kStragDiffs, 5, &cerr));
    tl_dist_lead *lead = &kept->lead;
    int gate_failed = tl_dist_build_lead(d, lead, o);
    add_extra(d, TL_DIST_SHEET_RANK_OPS, lead->rank_ops);
    lead->rank_ops = NULL;

    tl_compare_opts in = *o;
    size_t total = d->ngiven;
    in.inputs = d->inputs;
    in.ninputs = total;
    in.names = d->names;
    in.nnames = total;
    in.names_given = 1;
    in.given = d->given;
    in.captures = NULL;
    in.tracediff_dir = NULL;
    in.owner = (tl_compare_owner){kept, kept_gate, kept_free};
    in.extra = &d->extra;
    in.lead_text = tl_buf_cstr(&lead->text);
    in.lead_md = tl_buf_cstr(&lead->md);
    in.lead_json = tl_buf_cstr(&lead->json);
    in.lead_gate_failed = gate_failed;
    in.lead_violations = tl_buf_cstr(&lead->violations);
    in.lead_tables = (const tl_table *const *)lead->tables;
    in.lead_titles = lead->titles;
    in.nlead = lead->n;
    in.ranks_as_runs = 1;
    /* the ops' verdicts get half the error rate, the ranks' statements the other half */
    in.confidence = 1 - (1 - (o->confidence > 0 ? o->confidence : 0.95)) / 2;
    return tl_compare_reports(&in, c);
}
