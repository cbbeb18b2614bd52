/*
 * read.c - every rank's trace read on worker threads and reduced to its facts
 * (ranks.h): a job per rank, so a worker holds one trace at a time and frees it before
 * it takes the next; the facts land in the rank's own slot, so the order the jobs run
 * in changes nothing.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include "base/hash.h"
#include "base/pool.h"
#include "trace/trace_report.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The ranks' compacted rows side by side in chunks of their own: a rank's few KB kept in
 * the reading thread's heap, between the next traces' blocks, would keep the pages
 * around them from being reused or given back (12 KB a rank, measured).  The rows'
 * times are kept apart from the metadata, to be freed once the report has taken them;
 * a text is kept once for all the ranks (every rank names the same process groups). */
#define STORE_CHUNK (64u << 10)
typedef struct store_pool {
    char **chunks;
    size_t n, cap;
    size_t used, size; /* of the last chunk */
} store_pool;

struct tl_rank_store {
    pthread_mutex_t lock;
    store_pool times, meta;
    tl_strmap texts; /* a text kept: its copy in meta is the key */
};

static tl_rank_store *store_new(void)
{
    tl_rank_store *st = tl_xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    return st;
}

static void pool_free(store_pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->chunks[i]);
    free(p->chunks);
    memset(p, 0, sizeof *p);
}

static void store_free(tl_rank_store *st)
{
    if (!st)
        return;
    pool_free(&st->times);
    pool_free(&st->meta);
    tl_strmap_clear(&st->texts);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void tl_rk_store_drop_times(tl_rank_store *st)
{
    if (st)
        pool_free(&st->times);
}

/* n bytes (16-aligned) from a pool; the caller holds the store's lock. */
static void *pool_take(store_pool *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!p->n || p->size - p->used < n) {
        TL_GROW(p->chunks, p->cap, p->n + 1);
        p->size = n > STORE_CHUNK ? n : STORE_CHUNK;
        p->chunks[p->n++] = tl_xmalloc(p->size);
        p->used = 0;
    }
    void *at = p->chunks[p->n - 1] + p->used;
    p->used += n;
    return at;
}

/* The store's copy of a text; the caller holds the lock. */
static const char *store_text(tl_rank_store *st, const char *s)
{
    const tl_strmap_slot *f = tl_strmap_find(&st->texts, s);
    if (f)
        return f->key;
    size_t n = strlen(s) + 1;
    char *copy = pool_take(&st->meta, n);
    memcpy(copy, s, n);
    tl_strmap_get(&st->texts, copy);
    return copy;
}

/* A rank's compacted rows moved into the store (its own copies freed). */
static void store_facts(tl_rank_store *st, tl_rank_facts *f)
{
    if (!st || f->stored)
        return;
    size_t nc = f->ncrows * sizeof *f->crows, nm = f->nmetas * sizeof *f->metas;
    pthread_mutex_t *outer = tl_oom_lock(&st->lock);
    tl_rank_row *crows = pool_take(&st->times, nc);
    tl_coll_row *metas = pool_take(&st->meta, nm);
    if (nc)
        memcpy(crows, f->crows, nc);
    if (nm)
        memcpy(metas, f->metas, nm);
    for (size_t i = 0; i < f->nmetas; i++)
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            tl_cval *v = &metas[i].v[k];
            if (v->kind == TL_CV_STR || v->kind == TL_CV_REPR)
                v->s = store_text(st, v->s);
        }
    tl_oom_unlock(&st->lock, outer);
    free(f->crows);
    free(f->metas);
    free(f->strings);
    f->crows = crows;
    f->metas = metas;
    f->strings = NULL;
    f->strings_len = 0;
    f->stored = 1;
}

typedef struct rank_job {
    tl_rank_store *store;
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
    free(f->table_strings);
    f->table_strings = NULL;
    /* nothing kept when there is nothing (the collective report keeps no table): a few
     * bytes kept per rank in a reading thread's heap pin a page each */
    if (!bytes)
        return;
    char *buf = tl_xmalloc(bytes), *at = buf;
    table_text(f->gpu_timeline, &at, 1);
    table_text(f->ops_summary, &at, 1);
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
        tl_error e = {0};
        tl_error_set(&e, "%s: unknown file type (a rank file is .json or .json.gz)", j->path);
        f->err = tl_xstrdup(e.msg);
        f->failed = 1;
        return;
    }
    /* the collective report reads only the collective kernels (MULTIRANK.md §3.1): the
     * rest of the trace is passed over unread unless a comparison of runs wants the
     * rank's gpu_timeline and ops_summary */
    tl_error e = {0};
    tl_trace *t = tl_trace_load_flags(j->path, TL_LOAD_COUNTED | (j->want_ops ? 0 : TL_LOAD_KERNELS_ONLY), &e);
    if (!t) {
        f->err = tl_xstrdup(e.msg);
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
    store_facts(j->store, f);
    /* what the trace took is free now: given back at once, or this thread's heap keeps
     * its most (the programs set malloc never to trim by itself), and the next rank's
     * reading, on another thread, adds its own */
    tl_release_freed();
}

size_t tl_rank_facts_nrows(const tl_rank_facts *f) { return f->rows.n ? f->rows.n : f->ncrows; }

void tl_rank_facts_row(const tl_rank_facts *f, size_t i, tl_coll_row *out)
{
    if (f->rows.n) {
        *out = f->rows.v[i];
        return;
    }
    const tl_rank_row *c = &f->crows[i];
    *out = f->metas[c->meta];
    out->ts = c->ts;
    out->dur = c->dur;
    out->ts_int = c->ts_int;
    out->dur_int = c->dur_int;
}

/* 64-bit FNV-1a of a text, and its length. */
static uint64_t text_hash(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull;
    const char *p = s;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    *len = (size_t)(p - s);
    return h;
}

/* A row's metadata as a short text, the same for two rows of the same values of the same
 * kinds (4 and 4.0 differ: they print differently); a text by its hash and length, so
 * two rows of one key are compared again before one's metadata is taken for the other's. */
static void meta_key(const tl_coll_row *r, tl_buf *b)
{
    tl_buf_clear(b);
    for (int k = 0; k < TL_COLL_NKEYS; k++) {
        const tl_cval *v = &r->v[k];
        uint64_t bits = 0;
        size_t len = 0;
        if (v->kind == TL_CV_INT)
            bits = (uint64_t)v->i;
        else if (v->kind == TL_CV_FLOAT)
            memcpy(&bits, &v->f, sizeof bits);
        else if (v->kind == TL_CV_STR || v->kind == TL_CV_REPR)
            bits = text_hash(v->s, &len);
        tl_buf_printf(b, "%d:%" PRIx64 ":%zx;", v->kind, bits, len);
    }
    uint64_t in, out;
    memcpy(&in, &r->in_mb, sizeof in);
    memcpy(&out, &r->out_mb, sizeof out);
    tl_buf_printf(b, "%" PRIx64 ";%" PRIx64 ";%" PRId64, in, out, r->rank);
}

/* The same metadata: the same kinds and values (texts byte for byte, numbers bit for bit). */
static int same_meta(const tl_coll_row *a, const tl_coll_row *b)
{
    if (a->rank != b->rank || memcmp(&a->in_mb, &b->in_mb, sizeof a->in_mb) ||
        memcmp(&a->out_mb, &b->out_mb, sizeof a->out_mb))
        return 0;
    for (int k = 0; k < TL_COLL_NKEYS; k++) {
        const tl_cval *x = &a->v[k], *y = &b->v[k];
        if (x->kind != y->kind)
            return 0;
        if ((x->kind == TL_CV_INT && x->i != y->i) || (x->kind == TL_CV_FLOAT && memcmp(&x->f, &y->f, sizeof x->f)) ||
            ((x->kind == TL_CV_STR || x->kind == TL_CV_REPR) && x->s != y->s && strcmp(x->s, y->s)))
            return 0;
    }
    return 1;
}

/* The rows as their times and an index into their distinct metadata. */
static void compact_rows(tl_rank_facts *f)
{
    tl_coll_rows *rows = &f->rows;
    tl_strmap seen = {0};
    tl_arena keys;
    tl_arena_init(&keys);
    tl_buf b = {0};
    size_t cap = 0;
    f->crows = tl_xmalloc((rows->n ? rows->n : 1) * sizeof *f->crows);
    f->ncrows = rows->n;
    for (size_t i = 0; i < rows->n; i++) {
        const tl_coll_row *r = &rows->v[i];
        meta_key(r, &b);
        size_t before = seen.n;
        tl_strmap_slot *sl = tl_strmap_get(&seen, tl_arena_strdup(&keys, tl_buf_cstr(&b)));
        size_t meta = sl->value;
        /* a new key, or (two texts of one hash) another metadata under a known one */
        if (seen.n != before || !same_meta(&f->metas[meta], r)) {
            TL_GROW(f->metas, cap, f->nmetas + 1);
            tl_coll_row *m = &f->metas[f->nmetas];
            *m = *r;
            m->ts = m->dur = 0;
            m->ts_int = m->dur_int = 0;
            meta = f->nmetas++;
            if (seen.n != before)
                sl->value = meta;
        }
        f->crows[i] = (tl_rank_row){r->ts, r->dur, (uint32_t)meta, r->ts_int, r->dur_int};
    }
    if (f->nmetas)
        f->metas = tl_xrealloc(f->metas, f->nmetas * sizeof *f->metas);
    tl_coll_rows_free(rows);
    tl_buf_free(&b);
    tl_strmap_clear(&seen);
    tl_arena_free(&keys);
}

/* The metadata's texts moved into one block of their size, each text once. */
static void compact_meta_strings(tl_rank_facts *f)
{
    size_t bytes = 0;
    for (size_t i = 0; i < f->nmetas; i++)
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            const tl_cval *v = &f->metas[i].v[k];
            if (v->kind == TL_CV_STR || v->kind == TL_CV_REPR)
                bytes += strlen(v->s) + 1;
        }
    char *buf = tl_xmalloc(bytes ? bytes : 1), *at = buf;
    tl_strmap copies = {0}; /* a text already in buf, by its text: where */
    for (size_t i = 0; i < f->nmetas; i++)
        for (int k = 0; k < TL_COLL_NKEYS; k++) {
            tl_cval *v = &f->metas[i].v[k];
            if (v->kind != TL_CV_STR && v->kind != TL_CV_REPR)
                continue;
            const tl_strmap_slot *c = tl_strmap_find(&copies, v->s);
            if (c) {
                v->s = buf + c->value;
                continue;
            }
            size_t n = strlen(v->s) + 1;
            memcpy(at, v->s, n);
            v->s = at;
            tl_strmap_get(&copies, at)->value = (size_t)(at - buf);
            at += n;
        }
    tl_strmap_clear(&copies);
    if (!f->stored)
        free(f->strings);
    f->strings = buf;
    f->strings_len = (size_t)(at - buf);
    if (f->stored) { /* the metas and rows too are the facts' own again */
        tl_rank_row *crows = tl_xmalloc((f->ncrows ? f->ncrows : 1) * sizeof *crows);
        tl_coll_row *metas = tl_xmalloc((f->nmetas ? f->nmetas : 1) * sizeof *metas);
        memcpy(crows, f->crows, f->ncrows * sizeof *crows);
        memcpy(metas, f->metas, f->nmetas * sizeof *metas);
        f->crows = crows;
        f->metas = metas;
        f->stored = 0;
    }
}

void tl_rk_facts_compact(tl_rank_facts *f)
{
    /* the tables' texts too, before their arena goes: facts unpacked from another
     * process have theirs in it as well */
    compact_tables(f);
    if (f->rows.n)
        compact_rows(f);
    compact_meta_strings(f);
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
    if (!s->store)
        s->store = store_new();
    rank_job *job = tl_xcalloc(s->n ? s->n : 1, sizeof *job);
    /* the caller is a worker too: jobs - 1 threads.  Every worker is counted among the
     * trace readers before any starts (TL_LOAD_COUNTED): a rank that loads first must
     * not take a second thread of its own on a CPU the next rank's worker needs */
    tl_trace_readers_add(jobs);
    tl_pool *pool = tl_pool_new(jobs > 64 ? 63 : jobs - 1);
    size_t k = 0;
    for (size_t i = part; nparts && i < s->n; i += nparts) {
        job[k] = (rank_job){s->store, s->paths[i], (int64_t)i, &s->facts[i], s->want_ops};
        tl_pool_add(pool, read_rank, &job[k++]);
    }
    tl_pool_wait(pool, k);
    tl_pool_free(pool, 0);
    tl_trace_readers_add(-jobs);
    free(job);
}

int tl_ranks_read_failed(const tl_rank_set *s, tl_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->facts[i].failed) {
            tl_error_set(err, "rank %zu of %zu: %s", i, s->n, s->facts[i].err ? s->facts[i].err : "failed");
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
            if (!s->facts[i].stored) {
                free(s->facts[i].crows);
                free(s->facts[i].metas);
                free(s->facts[i].strings);
            }
            free(s->facts[i].err);
            tl_table_free(s->facts[i].gpu_timeline);
            tl_table_free(s->facts[i].ops_summary);
            tl_arena_free(&s->facts[i].arena);
            free(s->facts[i].table_strings);
        }
    }
    free(s->paths);
    free(s->facts);
    store_free(s->store);
    memset(s, 0, sizeof *s);
}
