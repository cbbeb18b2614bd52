/*
 * read.c - every rank's trace read on worker threads and reduced to its facts
 * (ranks.h): a job per rank, so a worker holds one trace at a time and frees it before
 * it takes the next; the facts land in the rank's own slot, so the order the jobs run
 * in changes nothing.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include "base/pool.h"
#include "trace/trace_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rank_job {
    const char *path;
    int64_t rank;
    tl_rank_facts *f;
    int want_ops;
} rank_job;

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

/* The table's names and text cells copied into `a`: the trace they point into is freed. */
static void own_strings(tl_table *t, tl_arena *a)
{
    for (size_t c = 0; c < t->ncols; c++) {
        t->cols[c].name = tl_arena_strdup(a, t->cols[c].name);
        for (size_t r = 0; r < t->nrows; r++)
            if (t->cols[c].cells[r].kind == TL_STR)
                t->cols[c].cells[r].v.s = tl_arena_strdup(a, t->cols[c].cells[r].v.s);
    }
}

/* The bytes of t's names and texts (add 0) or their copies at *at (add 1). */
static size_t table_text(tl_table *t, char **at, int add)
{
    size_t bytes = 0;
    for (size_t c = 0; t && c < t->ncols; c++) {
        for (size_t r = 0; r <= t->nrows; r++) {
            const char **s = r == t->nrows ? &t->cols[c].name
                             : t->cols[c].cells[r].kind == TL_STR ? &t->cols[c].cells[r].v.s : NULL;
            if (!s)
                continue;
            size_t n = strlen(*s) + 1;
            bytes += n;
            if (add) {
                memcpy(*at, *s, n);
                *s = *at;
                *at += n;
            }
        }
    }
    return bytes;
}

/* The tables' texts moved into one block of their size (the arena they are in is freed
 * when the facts are compacted). */
static void compact_tables(tl_rank_facts *f)
{
    size_t bytes = table_text(f->gpu_timeline, NULL, 0) + table_text(f->ops_summary, NULL, 0);
    char *buf = tl_xmalloc(bytes ? bytes : 1), *at = buf;
    table_text(f->gpu_timeline, &at, 1);
    table_text(f->ops_summary, &at, 1);
    free(f->table_strings);
    f->table_strings = buf;
}

/* The rank's ops_summary (the comparison of runs compares ops on their mean over the
 * ranks), or NULL when the trace has no cpu_op. */
static tl_table *ops_summary(const tl_trace *t, tl_arena *a)
{
    tl_results res = {0};
    tl_error ignored = {0};
    tl_table *ops = NULL;
    if (tl_trace_sheets(t, a, &res, &ignored) == 0) {
        for (size_t i = 0; i < res.n; i++) {
            if (!ops && strcmp(res.items[i].name, "ops_summary") == 0) {
                ops = res.items[i].table;
                res.items[i].table = NULL;
            }
        }
    }
    tl_results_free(&res);
    if (ops)
        own_strings(ops, a);
    return ops;
}

static void read_rank(void *arg, int worker)
{
    rank_job *j = arg;
    tl_rank_facts *f = j->f;
    (void)worker;
    tl_arena_init(&f->arena);
    f->ndevices = f->dist_rank = f->dist_world = -1;
    /* files load by their name (MULTIRANK.md §1.4) */
    if (!has_suffix(j->path, ".json") && !has_suffix(j->path, ".json.gz")) {
        tl_error_set(&f->err, "%s: unknown file type (a rank file is .json or .json.gz)", j->path);
        f->failed = 1;
        return;
    }
    /* the collective report reads only the collective kernels (MULTIRANK.md §3.1): the
     * rest of the trace is passed over unread unless a comparison of runs wants the
     * rank's gpu_timeline and ops_summary */
    tl_trace *t = tl_trace_load_flags(j->path, j->want_ops ? 0 : TL_LOAD_KERNELS_ONLY, &f->err);
    if (!t) {
        f->failed = 1;
        return;
    }
    tl_coll_rows_add(&f->rows, t, j->rank, &f->arena);
    f->ndevices = t->ndevices;
    f->dist_rank = t->dist_rank;
    f->dist_world = t->dist_world;
    if (j->want_ops) {
        tl_error ignored = {0};
        f->gpu_timeline = tl_trace_gpu_timeline(t, 0, &ignored);
        if (f->gpu_timeline)
            own_strings(f->gpu_timeline, &f->arena);
        f->ops_summary = ops_summary(t, &f->arena);
    }
    tl_trace_free(t);
    tl_rk_facts_compact(f);
}

void tl_rk_facts_compact(tl_rank_facts *f)
{
    /* the tables' texts too, before their arena goes: facts unpacked from another
     * process have theirs in it as well */
    compact_tables(f);
    tl_coll_rows *rows = &f->rows;
    if (rows->n && rows->n < rows->cap) {
        rows->v = tl_xrealloc(rows->v, rows->n * sizeof *rows->v);
        rows->cap = rows->n;
    }
    /* the texts, each once: rows share them by pointer (the reader copies a repeated
     * text once), so a text is copied when it is not the previous row's */
    size_t bytes = 0;
    for (size_t i = 0; i < rows->n; i++)
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            const tl_cval *v = &rows->v[i].v[k];
            const tl_cval *u = i ? &rows->v[i - 1].v[k] : NULL;
            if ((v->kind == TL_CV_STR || v->kind == TL_CV_REPR) && !(u && u->kind == v->kind && u->s == v->s))
                bytes += strlen(v->s) + 1;
        }
    char *buf = tl_xmalloc(bytes ? bytes : 1), *at = buf;
    for (size_t i = 0; i < rows->n; i++)
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            tl_cval *v = &rows->v[i].v[k];
            if (v->kind != TL_CV_STR && v->kind != TL_CV_REPR)
                continue;
            if (i && rows->v[i - 1].v[k].kind == v->kind && rows->v[i - 1].v[k].s != NULL &&
                at > buf && strcmp(rows->v[i - 1].v[k].s, v->s) == 0 && rows->v[i - 1].v[k].s >= buf &&
                rows->v[i - 1].v[k].s < at) {
                v->s = rows->v[i - 1].v[k].s; /* the previous row's copy */
                continue;
            }
            size_t n = strlen(v->s) + 1;
            memcpy(at, v->s, n);
            v->s = at;
            at += n;
        }
    free(f->strings);
    f->strings = buf;
    tl_arena_free(&f->arena);
}

static int cpus_available(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

void tl_ranks_read_part(tl_rank_set *s, int jobs, size_t part, size_t nparts)
{
    size_t mine = nparts && part < nparts ? (s->n + nparts - 1 - part) / nparts : 0;
    if (jobs <= 0)
        jobs = cpus_available();
    if ((size_t)jobs > mine)
        jobs = mine ? (int)mine : 1;
    s->facts = tl_xcalloc(s->n ? s->n : 1, sizeof *s->facts);
    rank_job *job = tl_xcalloc(s->n ? s->n : 1, sizeof *job);
    /* the caller is a worker too: jobs - 1 threads */
    tl_pool *pool = tl_pool_new(jobs > 64 ? 63 : jobs - 1);
    size_t k = 0;
    for (size_t i = part; nparts && i < s->n; i += nparts) {
        job[k] = (rank_job){s->paths[i], (int64_t)i, &s->facts[i], s->want_ops};
        tl_pool_add(pool, read_rank, &job[k++]);
    }
    tl_pool_wait(pool, k);
    tl_pool_free(pool, 0);
    free(job);
}

int tl_ranks_read_failed(const tl_rank_set *s, tl_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->facts[i].failed) {
            tl_error_set(err, "rank %zu of %zu: %s", i, s->n, s->facts[i].err.msg);
            return -1;
        }
    }
    return 0;
}

int tl_ranks_read(tl_rank_set *s, int jobs, tl_error *err)
{
    tl_ranks_read_part(s, jobs, 0, 1);
    return tl_ranks_read_failed(s, err);
}

void tl_rank_set_free(tl_rank_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->paths ? s->paths[i] : NULL);
        if (s->facts) {
            tl_coll_rows_free(&s->facts[i].rows);
            tl_table_free(s->facts[i].gpu_timeline);
            tl_table_free(s->facts[i].ops_summary);
            tl_arena_free(&s->facts[i].arena);
            free(s->facts[i].strings);
            free(s->facts[i].table_strings);
        }
    }
    free(s->paths);
    free(s->facts);
    memset(s, 0, sizeof *s);
}
