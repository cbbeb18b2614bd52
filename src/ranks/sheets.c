/*
 * sheets.c - the multi-rank collective report's sheets (MULTIRANK.md §2-§7) from the
 * ranks' collective rows: nccl_long, nccl_summary_long, the implicit-sync sheets and the
 * straggler summary, the all_to_allv sheets, and the node columns.
 *
 * Cells are built as tl_cval values (an int stays an int, as Python keeps it) and typed
 * per column as pandas types a DataFrame built from them: a column of numbers with a
 * missing or float value prints as floats, one with any text keeps each value as is.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- nccl_long (§3) -------------------------------------------------------------------- */

static tl_table *nccl_long(const tl_coll_rows *rows)
{
    rk_sheet s;
    tl_rk_sheet_init(&s, rows->n);
    size_t cid = tl_rk_col(&s, "collective_id"), cix = tl_rk_col(&s, "index_in_group"), crank = tl_rk_col(&s, "rank");
    size_t ck[TL_COLL_NKEYS], cin = 0, cout = 0;
    for (int k = 0; k < TL_COLL_NKEYS; k++) {
        ck[k] = tl_rk_col(&s, tl_coll_key_names[k]);
        if (k == TL_COLL_IN_NELEMS)
            cin = tl_rk_col(&s, "In msg size (MB)");
        if (k == TL_COLL_OUT_NELEMS)
            cout = tl_rk_col(&s, "Out msg size (MB)");
    }
    size_t cts = tl_rk_col(&s, "ts"), cdur = tl_rk_col(&s, "dur");
    for (size_t i = 0; i < rows->n; i++) {
        const tl_coll_row *r = &rows->v[i];
        s.c[cid].v[i] = tl_rk_str(r->id);
        s.c[cix].v[i] = tl_rk_int(r->index_in_group);
        s.c[crank].v[i] = tl_rk_int(r->rank);
        for (int k = 0; k < TL_COLL_NKEYS; k++)
            s.c[ck[k]].v[i] = r->v[k];
        s.c[cin].v[i] = tl_rk_num(r->in_mb, 0);
        s.c[cout].v[i] = tl_rk_num(r->out_mb, 0);
        s.c[cts].v[i] = tl_rk_num(r->ts, r->ts_int);
        s.c[cdur].v[i] = tl_rk_num(r->dur, r->dur_int);
    }
    return tl_rk_sheet_table(&s);
}

/* ---- all of them ------------------------------------------------------------------------- */

static void put(tl_results *out, const char *name, tl_table *t, long gpn)
{
    tl_rk_node_columns(t, gpn);
    TL_GROW(out->items, out->cap, out->n + 1);
    tl_result *r = &out->items[out->n++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->table = t;
    r->nrows = t->nrows;
    r->ncols = t->ncols;
}

/* A warning when a process group's ranks saw different numbers of collectives: matching
 * by position then pairs collectives that may not be the same ones (the reference is
 * silent).  Rows are numbered from 0 within (group, rank), so a count is the highest
 * index + 1. */
static void warn_counts(const tl_coll_rows *rows, size_t nranks)
{
    tl_strmap groups = {0};
    const char **names = NULL;
    int64_t *cnt = NULL; /* ng x nranks */
    size_t ng = 0, namecap = 0, cntcap = 0;
    tl_buf b = {0};
    tl_arena keys;
    tl_arena_init(&keys);
    for (size_t i = 0; i < rows->n; i++) {
        const tl_coll_row *r = &rows->v[i];
        tl_buf_clear(&b);
        tl_cval_text(&r->v[TL_COLL_PG_NAME], &b);
        const tl_strmap_slot *f = tl_strmap_find(&groups, tl_buf_cstr(&b));
        size_t g;
        if (f) {
            g = f->value;
        } else {
            g = ng++;
            TL_GROW(names, namecap, ng);
            names[g] = tl_arena_strdup(&keys, tl_buf_cstr(&b));
            tl_strmap_get(&groups, names[g])->value = g;
            TL_GROW(cnt, cntcap, ng * nranks);
            memset(cnt + g * nranks, 0, nranks * sizeof *cnt);
        }
        if ((size_t)r->rank < nranks && r->index_in_group + 1 > cnt[g * nranks + r->rank])
            cnt[g * nranks + r->rank] = r->index_in_group + 1;
    }
    for (size_t g = 0; g < ng; g++) {
        size_t lo = SIZE_MAX, hi = SIZE_MAX;
        for (size_t r = 0; r < nranks; r++) {
            int64_t c = cnt[g * nranks + r];
            if (lo == SIZE_MAX || c < cnt[g * nranks + lo])
                lo = r;
            if (hi == SIZE_MAX || c > cnt[g * nranks + hi])
                hi = r;
        }
        if (lo != SIZE_MAX && cnt[g * nranks + lo] != cnt[g * nranks + hi])
            tl_warn("process group %s: rank %zu has %lld collectives, rank %zu has %lld; collectives are matched by "
                    "their position in each rank, so past the first %lld they are matched across fewer ranks (and "
                    "wrongly, if a rank missed one before)", names[g], lo, (long long)cnt[g * nranks + lo], hi,
                    (long long)cnt[g * nranks + hi], (long long)cnt[g * nranks + lo]);
    }
    tl_buf_free(&b);
    free(names);
    free(cnt);
    tl_strmap_clear(&groups);
    tl_arena_free(&keys);
}

/* A warning when the files' distributedInfo says they come from another job or rank than
 * their place in the set (MULTIRANK.md §1.4: the place decides; never refused): the
 * first such file named, with how many more there are. */
static void warn_jobs(const tl_rank_set *set)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < set->n; i++) {
        const tl_rank_facts *f = &set->facts[i];
        if ((f->dist_world >= 0 && (size_t)f->dist_world != set->n) || (f->dist_rank >= 0 && (size_t)f->dist_rank != i))
            if (bad++ == 0)
                first = i;
    }
    if (!bad)
        return;
    const tl_rank_facts *f = &set->facts[first];
    tl_buf more = {0};
    if (bad > 1)
        tl_buf_printf(&more, " (and %zu more files that disagree)", bad - 1);
    tl_warn("rank %zu (%s): its distributedInfo says rank %ld of a world of %ld, not rank %zu of %zu: files of "
            "another job or rank?  Read as rank %zu, by its place in the set%s",
            first, set->paths[first], f->dist_rank, f->dist_world, first, set->n, first, tl_buf_cstr(&more));
    tl_buf_free(&more);
}

int tl_ranks_sheets(tl_rank_set *set, const tl_ranks_opts *o, tl_arena *a, tl_results *out, tl_error *err)
{
    /* every rank's rows, rank by rank, moved (their strings stay in the ranks' facts) */
    tl_coll_rows rows = {0};
    size_t total = 0;
    for (size_t i = 0; i < set->n; i++)
        total += set->facts[i].rows.n;
    rows.v = tl_xmalloc((total ? total : 1) * sizeof *rows.v); /* made to size: it is the largest block */
    rows.cap = total;
    for (size_t i = 0; i < set->n; i++) {
        tl_coll_rows *fr = &set->facts[i].rows;
        if (fr->n)
            memcpy(rows.v + rows.n, fr->v, fr->n * sizeof *fr->v);
        rows.n += fr->n;
        tl_coll_rows_free(fr);
    }
    /* the ranks' rows were made on the reading threads, whose malloc arenas keep what is
     * freed there: give those pages back before the sheets are made */
    tl_release_freed();
    if (rows.n == 0) {
        tl_error_set(err, "no NCCL/RCCL collective kernels in any of the %zu rank files", set->n);
        tl_coll_rows_free(&rows);
        return -1;
    }
    long gpn = o->gpus_per_node > 0 ? o->gpus_per_node : set->facts[0].ndevices > 0 ? set->facts[0].ndevices : 0;
    int simple = tl_coll_match(&rows, a);
    warn_jobs(set);
    warn_counts(&rows, set->n);
    rk_colls cs;
    tl_rk_colls_build(&rows, &cs);
    rk_implicit isync;
    int rc = -1;
    if (tl_rk_implicit_build(set, &rows, &cs, simple, a, &isync, err) < 0)
        goto done;
    rk_a2a a2a;
    if (tl_rk_a2a_build(set, &rows, &cs, a, &a2a, err) < 0) {
        tl_rk_implicit_free(&isync);
        goto done;
    }
    const char *const *aggs = o->naggs ? o->aggs : (const char *const[]){"mean", "median", "min", "max"};
    size_t naggs = o->naggs ? o->naggs : 4;
    put(out, "nccl_summary_implicit_sync", tl_rk_implicit_summary(&isync, aggs, naggs, a), gpn);
    put(out, "nccl_summary_long", tl_coll_summary(&rows, a), gpn);
    tl_table *a2a_sum = a2a.n ? tl_rk_a2a_summary(&a2a, aggs, naggs, a) : NULL;
    if (a2a_sum)
        put(out, "nccl_summary_all2allv", a2a_sum, gpn);
    /* the heatmap reads every all_to_allv row, whatever its collective's reference row */
    if (o->heatmap && set->n <= 1024) {
        tl_table *hm = tl_rk_a2a_heatmap(&rows);
        if (hm)
            put(out, "nccl_all2allv_heatmap", hm, 0);
    }
    put(out, "nccl_long", nccl_long(&rows), gpn);
    put(out, "nccl_implicit_sync", tl_rk_implicit_table(&isync), gpn);
    if (a2a.n)
        put(out, "nccl_all2allv", tl_rk_a2a_table(&a2a), gpn);
    if (isync.n)
        put(out, "straggler_summary", tl_rk_straggler(&isync, &rows, set->n), gpn);
    tl_rk_implicit_free(&isync);
    tl_rk_a2a_free(&a2a);
    rc = 0;
done:
    tl_rk_colls_free(&cs);
    tl_coll_rows_free(&rows);
    return rc;
}
