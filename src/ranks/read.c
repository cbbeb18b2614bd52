/*
 * read.c - every rank's trace read on worker threads and reduced to its facts
 * (ranks.h): a job per rank, so a worker holds one trace at a time and frees it before
 * it takes the next; the facts land in the rank's own slot, so the order the jobs run
 * in changes nothing.
 */
#include "ranks/ranks.h"

#include "base/pool.h"
#include "trace/trace_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rank_job {
    const char *path;
    int64_t rank;
    tl_rank_facts *f;
} rank_job;

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

static void read_rank(void *arg, int worker)
{
    rank_job *j = arg;
    tl_rank_facts *f = j->f;
    (void)worker;
    tl_arena_init(&f->arena);
    f->ndevices = -1;
    /* files load by their name (MULTIRANK.md §1.4) */
    if (!has_suffix(j->path, ".json") && !has_suffix(j->path, ".json.gz")) {
        tl_error_set(&f->err, "%s: unknown file type (a rank file is .json or .json.gz)", j->path);
        f->failed = 1;
        return;
    }
    tl_trace *t = tl_trace_load(j->path, &f->err);
    if (!t) {
        f->failed = 1;
        return;
    }
    tl_coll_rows_add(&f->rows, t, j->rank, &f->arena);
    f->ndevices = t->ndevices;
    tl_error ignored = {0};
    f->gpu_timeline = tl_trace_gpu_timeline(t, 0, &ignored);
    tl_trace_free(t);
}

static int cpus_available(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

int tl_ranks_read(tl_rank_set *s, int jobs, tl_error *err)
{
    if (jobs <= 0)
        jobs = cpus_available();
    if ((size_t)jobs > s->n)
        jobs = s->n ? (int)s->n : 1;
    s->facts = tl_xcalloc(s->n ? s->n : 1, sizeof *s->facts);
    rank_job *job = tl_xcalloc(s->n ? s->n : 1, sizeof *job);
    /* the caller is a worker too: jobs - 1 threads */
    tl_pool *pool = tl_pool_new(jobs > 64 ? 63 : jobs - 1);
    for (size_t i = 0; i < s->n; i++) {
        job[i] = (rank_job){s->paths[i], (int64_t)i, &s->facts[i]};
        tl_pool_add(pool, read_rank, &job[i]);
    }
    tl_pool_wait(pool, s->n);
    tl_pool_free(pool, 0);
    free(job);
    for (size_t i = 0; i < s->n; i++) {
        if (s->facts[i].failed) {
            tl_error_set(err, "rank %zu of %zu: %s", i, s->n, s->facts[i].err.msg);
            return -1;
        }
    }
    return 0;
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
        }
    }
    free(s->paths);
    free(s->facts);
    memset(s, 0, sizeof *s);
}
