/*
 * trace_tree.c - the CPU-op call tree of a trace and its GPU links (TRACES.md §1-§2).
 *
 * The tree is built as TraceLens builds it: tree events sorted by ts (stably), one stack
 * per (pid, tid), the bleed rule; then every runtime event, in array order, is linked to
 * its GPU events through the ac2g flows (older Kineto's async_cpu_to_gpu in a trace
 * without them), and each linked GPU event is in the gpu list
 * of its launch and of every ancestor.  Children and gpu lists are ranges of one index
 * array, filled in two passes (count, then place); the gpu lists share one layout of the
 * links in tree order (step 4), so the whole tree costs O(events + links) whatever its
 * depth, and the links themselves are counted before they are made (graph launches).
 */
#include "trace/trace.h"
#include "trace/trace_impl.h"

#include "base/sort.h"

#include <stdlib.h>
#include <string.h>


typedef struct stack {
    uint32_t *v;
    size_t n, cap;
    long ncpu; /* cpu_ops on the stack */
} stack;

typedef struct pair {
    uint32_t parent, child;
} pair;

/* Merge the sorted neighbours a = rows[lo, mid) and b = rows[mid, hi) stably by key[],
 * through scratch the size of the shorter one. */
static void merge_pair(uint32_t *rows, const double *key, size_t lo, size_t mid, size_t hi, uint32_t *tmp)
{
    size_t la = mid - lo, lb = hi - mid;
    if (la <= lb) {
        memcpy(tmp, rows + lo, la * sizeof *tmp);
        size_t i = 0, j = mid, o = lo;
        while (i < la && j < hi)
            rows[o++] = key[rows[j]] < key[tmp[i]] ? rows[j++] : tmp[i++];
        while (i < la)
            rows[o++] = tmp[i++];
    } else {
        memcpy(tmp, rows + mid, lb * sizeof *tmp);
        size_t i = mid, j = lb, o = hi;
        while (i > lo && j > 0)
            rows[--o] = key[rows[i - 1]] > key[tmp[j - 1]] ? rows[--i] : tmp[--j];
        while (j > 0)
            rows[--o] = tmp[--j];
    }
}

/* Merge the sorted runs bound[0..nruns] of rows pairwise until one is left. */
static void merge_runs(uint32_t *rows, size_t n, const double *key, size_t *bound, size_t nruns)
{
    uint32_t *tmp = NULL;
    size_t tmpcap = 0;
    while (nruns > 1) {
        size_t w = 0;
        for (size_t r = 0; r < nruns; r += 2) {
            if (r + 1 < nruns) {
                size_t lo = bound[r], mid = bound[r + 1], hi = bound[r + 2];
                size_t need = mid - lo < hi - mid ? mid - lo : hi - mid;
                TL_GROW(tmp, tmpcap, need);
                merge_pair(rows, key, lo, mid, hi, tmp);
            }
            bound[w++] = bound[r];
        }
        bound[w] = n;
        nruns = w;
    }
    free(tmp);
}

void tl_trace_sort_by_key(uint32_t *rows, size_t n, const double *key)
{
    size_t *bound = NULL, nb = 0, bcap = 0;
    TL_GROW(bound, bcap, 2);
    bound[nb++] = 0;
    for (size_t i = 1; i < n; i++) {
        if (key[rows[i]] >= key[rows[i - 1]])
            continue;
        TL_GROW(bound, bcap, nb + 2);
        bound[nb++] = i;
    }
    bound[nb] = n;
    merge_runs(rows, n, key, bound, nb);
    free(bound);
}

/* Sort the tree events rows[0..n) stably by ts.  A trace's tree events come in a few runs
 * each in ts order (a profiler writes the ops, the runtime calls and the Python frames as
 * separate streams), so merging the runs needs scratch the size of the shorter of two
 * runs, not of the whole trace (an inference capture trace is mostly frames: the rows
 * are 4 bytes each, the keys 8 while they are merged); with more runs than a few it is
 * the radix sort.  Comparing the ts doubles with < orders them as tl_sort_key_double
 * does (-0.0 and 0.0 alike; a kept ts is finite). */
#define TREE_MAX_RUNS 64
static void sort_runs(uint32_t *rows, size_t n, const tl_tev *ev, size_t nev)
{
    size_t bound[TREE_MAX_RUNS + 1], nb = 0;
    bound[nb++] = 0;
    for (size_t i = 1; i < n; i++) {
        if (ev[rows[i]].ts >= ev[rows[i - 1]].ts)
            continue;
        if (nb == TREE_MAX_RUNS) {
            tl_sort_item *items = tl_xmalloc(n * sizeof *items);
            for (size_t k = 0; k < n; k++) {
                items[k].key = tl_sort_key_double(ev[rows[k]].ts);
                items[k].row = rows[k];
            }
            tl_sort_items(items, n, NULL);
            for (size_t k = 0; k < n; k++)
                rows[k] = items[k].row;
            free(items);
            return;
        }
        bound[nb++] = i;
    }
    bound[nb] = n;
    if (nb == 1)
        return;
    /* the keys in event order, so that a merge reads 8 bytes per row rather than an event */
    double *key = tl_xmalloc_filled((nev ? nev : 1) * sizeof *key);
    for (size_t i = 0; i < n; i++)
        key[rows[i]] = ev[rows[i]].ts;
    merge_runs(rows, n, key, bound, nb);
    free(key);
}

static int has_key(const tl_trace_side *s, int corr_key, uint32_t i)
{
    return (s->evflags[i] & (corr_key ? TL_SIDE_CORR : TL_SIDE_EXT)) != 0;
}

/* the link id of an event that has one (has_key), once tl_trace_build has put it in corr
 * (an event with a link id has args, so an aux record) */
static int64_t key_of(const tl_trace *t, uint32_t i) { return tl_tev_x(t, &t->ev[i])->corr; }

int tl_trace_cancelled(const tl_trace *t, tl_error *err)
{
    if (!tl_cancelled(t->cancel))
        return 0;
    if (err)
        tl_error_set(err, "%s: cancelled", t->path ? t->path : "trace");
    return 1;
}

typedef struct tree_build {
    tl_trace *t;
    tl_trace_side *side;
    int corr_key;   /* links by correlation (else by External id) */
    int old_flows;  /* older Kineto's launch flows stand in for ac2g */
    size_t nev;
    uint32_t *items; /* the tree events in ts order */
    size_t ntree;
    size_t ntp;      /* (parent, child) pairs of the tree */
    pair *lp;        /* links (runtime, gpu event), in link order */
    size_t nlp;
    size_t nchildren; /* tree pairs and links: where the gpu lists start in idx */
    uint32_t *own;   /* links per launch, then the placing cursor */
    tl_error *err;
} tree_build;

void tl_side_keys_resolve(tl_trace *t, const tl_trace_side *side, const tl_side_key *keys, size_t n, size_t off)
{
    const int corr_key = side->key_decided && side->key_is_corr;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = keys[k].ev + (uint32_t)off;
        if (has_key(side, corr_key, i))
            t->aux[t->ev[i].ref & ~TL_TEV_REF_AUX].corr = corr_key ? keys[k].corr : keys[k].ext;
    }
}

/* ---- 1. the host call stacks: each thread's events nest by time ---- */
static int host_stacks(tree_build *b)
{
    tl_trace *t = b->t;
    const size_t nev = b->nev;
    tl_error *err = b->err;
    size_t ntree = 0;
    for (size_t i = 0; i < nev; i++)
        ntree += t->ev[i].kind == TL_TEV_CPU_OP || t->ev[i].kind == TL_TEV_RUNTIME || t->ev[i].kind == TL_TEV_PYTHON;
    /* the tree events in ts order; an in-tree event's parent (set below) and this order
     * are the (parent, child) pairs of the tree, children in ts order */
    uint32_t *items = b->items = tl_xmalloc((ntree ? ntree : 1) * sizeof *items);
    size_t k = 0;
    for (size_t i = 0; i < nev; i++)
        if (t->ev[i].kind == TL_TEV_CPU_OP || t->ev[i].kind == TL_TEV_RUNTIME || t->ev[i].kind == TL_TEV_PYTHON)
            items[k++] = (uint32_t)i;
    sort_runs(items, ntree, t->ev, nev); /* stable: equal ts keep array order */

    stack *stacks = tl_xcalloc(t->nthreads ? t->nthreads : 1, sizeof *stacks); /* one per thread */
    size_t ntp = 0; /* (parent, child) pairs of the tree */
    size_t rootcap = 0;

    for (size_t s = 0; s < ntree; s++) {
        if (TL_TRACE_CANCEL_EVERY(s, t, err))
            break; /* a cancelled run: see below */
        uint32_t i = items[s];
        tl_tev *e = &t->ev[i];
        stack *st = &stacks[tl_tev_thread(t, e)];
        const double e_end = tl_tev_end(e);
        while (st->n && e->ts >= tl_tev_end(&t->ev[st->v[st->n - 1]])) {
            if (t->ev[st->v[--st->n]].kind == TL_TEV_CPU_OP)
                st->ncpu--;
        }
        if (st->n && e_end > tl_tev_end(&t->ev[st->v[st->n - 1]])) {
            double overlap = tl_tev_end(&t->ev[st->v[st->n - 1]]) - e->ts;
            if (overlap < 1.0 && st->n >= 2) {
                if (t->ev[st->v[--st->n]].kind == TL_TEV_CPU_OP)
                    st->ncpu--;
            } else {
                continue; /* dropped from the tree */
            }
        }
        if (st->n) {
            e->parent = st->v[st->n - 1];
            ntp++;
        }
        TL_GROW(st->v, st->cap, st->n + 1);
        st->v[st->n++] = i;
        e->flags |= TL_TEV_IN_TREE;
        if (e->kind == TL_TEV_CPU_OP) {
            if (st->ncpu == 0) {
                e->flags |= TL_TEV_CPU_ROOT;
                TL_GROW(t->roots, rootcap, t->nroots + 1);
                t->roots[t->nroots++] = i;
            }
            st->ncpu++;
        }
    }
    for (size_t s = 0; s < t->nthreads; s++)
        free(stacks[s].v);
    free(stacks);
    b->ntree = ntree;
    b->ntp = ntp;
    return tl_trace_cancelled(t, err) ? -1 : 0;
}

/* ---- 2. links: runtime event -> GPU events ---- */

/* Whether flow fl links: it has both ends, and its finish a numeric place. */
static int usable_flow(const tl_side_flow *fl) { return fl->has_s && fl->has_f && fl->numeric; }

/* The (pid, tid) places where a usable flow finishes, numbered (ends: place -> its
 * number), each flow's number noted in it: a GPU event is then looked up by (link id,
 * number), half the bytes of (link id, pid, tid). */
static void ends_init(tl_kmap *ends, tl_trace_side *side)
{
    tl_kmap_init(ends);
    const tl_side_flow *last = NULL;
    for (size_t f = 0; f < side->nflows; f++) {
        tl_side_flow *fl = &side->flows[f];
        if (!usable_flow(fl))
            continue;
        if (last && fl->pid == last->pid && fl->tid == last->tid) { /* a stream's flows come in runs */
            fl->place = last->place;
        } else {
            int created;
            tl_kmap_slot *sl = tl_kmap_put(ends, fl->pid, fl->tid, 0, &created);
            if (created)
                sl->val = (uint32_t)(ends->n - 1);
            fl->place = sl->val;
        }
        last = fl;
    }
}

/* An entry of the (pid, tid, link id) table as written: a kept event's from its records
 * (its link id, the linking key's, is in its aux record by now: put there by the reader,
 * or from the reader's list at the start of tl_trace_build). */
static tl_side_ins ins_entry(const tree_build *b, uint32_t in)
{
    if (in & TL_SIDE_INS_OTHER) {
        tl_side_ins o = b->side->others[in & ~TL_SIDE_INS_OTHER];
        o.corr = b->corr_key ? o.corr : o.ext;
        return o;
    }
    const tl_tev *e = &b->t->ev[in];
    return (tl_side_ins){tl_tev_pid(b->t, e), tl_tev_tid(b->t, e), tl_tev_x(b->t, e)->corr, 0,
                         b->side->evflags[in] & (TL_SIDE_CORR | TL_SIDE_EXT)};
}

/* Whether an entry can be looked up: it has the link key and sits at a flow's end.  The
 * answer for the last (pid, tid) asked is kept: an event's neighbours share it. */
typedef struct place_filter {
    const tl_kmap *ends;
    int64_t pid, tid;
    int known;
    uint32_t place; /* its number, UINT32_MAX for none */
} place_filter;

static int ins_wanted(place_filter *pf, const tl_side_ins *in, int corr_key)
{
    if (!(in->flags & (corr_key ? TL_SIDE_CORR : TL_SIDE_EXT)))
        return 0;
    if (!pf->known || in->pid != pf->pid || in->tid != pf->tid) {
        pf->pid = in->pid;
        pf->tid = in->tid;
        pf->known = 1;
        pf->place = tl_kmap_get(pf->ends, in->pid, in->tid, 0, UINT32_MAX);
    }
    return pf->place != UINT32_MAX;
}

/* The map (link id, place) -> event, the last one written, at the places a flow
 * finishes: the only ones looked up (a GPU stream's, a fraction of the events; a map of
 * all of them would be several times larger than the cache).  0, or -1 when cancelled. */
static int places_build(const tree_build *b, tl_idmap *by_place)
{
    const tl_trace_side *side = b->side;
    tl_kmap ends;
    ends_init(&ends, b->side);
    place_filter pf = {&ends, 0, 0, 0, UINT32_MAX};
    size_t nwanted = 0;
    for (size_t n = 0; n < side->nins; n++) {
        tl_side_ins in = ins_entry(b, side->ins[n]);
        nwanted += ins_wanted(&pf, &in, b->corr_key);
    }
    tl_idmap_init(by_place);
    tl_idmap_reserve(by_place, nwanted);
    int rc = 0;
    for (size_t n = 0; n < side->nins; n++) {
        if (TL_TRACE_CANCEL_EVERY(n, b->t, b->err)) {
            rc = -1;
            break;
        }
        tl_side_ins in = ins_entry(b, side->ins[n]);
        if (ins_wanted(&pf, &in, b->corr_key)) {
            uint32_t target = side->ins[n] & TL_SIDE_INS_OTHER ? TL_TEV_NONE : side->ins[n];
            *tl_idmap_put(by_place, in.corr, pf.place, NULL) = target;
        }
    }
    tl_kmap_free(&ends);
    return rc;
}

/* The GPU events of the graph launches' link ids, for the launches to link all of. */
typedef struct graph_runs {
    tl_sort_item *items; /* the GPU events, by link id, array order within one */
    uint32_t *run;       /* at the first position of a link id's run in items: the run's end */
    size_t n;
    tl_kmap first;       /* link id -> first position in items */
    size_t links;        /* the links the launches make */
} graph_runs;

static void graph_runs_free(graph_runs *g)
{
    free(g->items);
    free(g->run);
    tl_kmap_free(&g->first);
}

/* Whether event i is a graph launch with a link id. */
static int keyed_launch(const tree_build *b, size_t i)
{
    const tl_tev *e = &b->t->ev[i];
    return e->kind == TL_TEV_RUNTIME && (e->flags & TL_TEV_GRAPH_LAUNCH) && has_key(b->side, b->corr_key, (uint32_t)i);
}

/* The GPU events with a graph launch's link id: only those ids are looked up (the other
 * GPU events, nearly all of them where graph launches are few, are left out). */
static void graph_items(const tree_build *b, graph_runs *g)
{
    const tl_trace *t = b->t;
    const size_t nev = b->nev;
    tl_kmap launch_ids;
    tl_kmap_init(&launch_ids);
    for (size_t i = 0; i < nev; i++)
        if (keyed_launch(b, i))
            tl_kmap_put(&launch_ids, key_of(t, (uint32_t)i), 0, 0, NULL);
    uint8_t *keyed = tl_xmalloc(nev ? nev : 1);
    size_t nkeyed = 0;
    for (size_t i = 0; i < nev; i++) {
        keyed[i] = tl_tev_is_gpu(&t->ev[i]) && (b->side->evflags[i] & TL_SIDE_HAS_ARGS) &&
                   has_key(b->side, b->corr_key, (uint32_t)i) &&
                   tl_kmap_get(&launch_ids, key_of(t, (uint32_t)i), 0, 0, UINT32_MAX) != UINT32_MAX;
        nkeyed += keyed[i];
    }
    tl_kmap_free(&launch_ids);
    g->items = tl_xmalloc((nkeyed ? nkeyed : 1) * sizeof *g->items);
    for (size_t i = 0; i < nev; i++) {
        if (keyed[i]) {
            g->items[g->n].key = tl_sort_key_int(key_of(t, (uint32_t)i));
            g->items[g->n].row = (uint32_t)i;
            g->n++;
        }
    }
    free(keyed);
    tl_sort_items(g->items, g->n, NULL);
    g->run = tl_xmalloc((g->n ? g->n : 1) * sizeof *g->run);
    for (size_t k = 0; k < g->n;) {
        size_t e = k + 1;
        while (e < g->n && g->items[e].key == g->items[k].key)
            e++;
        g->run[k] = (uint32_t)e;
        tl_kmap_put(&g->first, key_of(t, g->items[k].row), 0, 0, NULL)->val = (uint32_t)k;
        k = e;
    }
}

/* The graph launches' GPU event runs, their links counted.  Every graph launch links every
 * GPU event of its link id, so launches that share one id multiply: the repeats (the
 * links beyond one per GPU event) are bounded before any is made.  0, or -1 with *err set. */
static int graph_runs_build(const tree_build *b, graph_runs *g)
{
    const tl_trace *t = b->t;
    graph_items(b, g);
    tl_kmap nlaunch; /* link id -> graph launches with it */
    tl_kmap_init(&nlaunch);
    uint32_t any_launch = TL_TEV_NONE;
    for (size_t i = 0; i < b->nev; i++) {
        if (keyed_launch(b, i) && tl_kmap_get(&g->first, key_of(t, (uint32_t)i), 0, 0, UINT32_MAX) != UINT32_MAX) {
            tl_kmap_put(&nlaunch, key_of(t, (uint32_t)i), 0, 0, NULL)->val++;
            any_launch = (uint32_t)i;
        }
    }
    uint64_t repeats = 0, links = 0, worst = 0;
    int64_t worst_id = 0;
    uint32_t worst_launches = 0, worst_gpu = 0;
    for (size_t s = 0; s < nlaunch.cap; s++) {
        const tl_kmap_slot *sl = &nlaunch.slots[s];
        if (!sl->used)
            continue;
        uint32_t k = tl_kmap_get(&g->first, sl->a, 0, 0, UINT32_MAX);
        uint64_t ng = g->run[k] - k, rep = (uint64_t)(sl->val - 1) * ng;
        links += (uint64_t)sl->val * ng;
        repeats += rep;
        /* the worst id named, the smallest among equals: whatever order the map holds them in */
        if (rep > worst || !worst_launches || (rep == worst && sl->a < worst_id)) {
            worst = rep;
            worst_id = sl->a;
            worst_launches = sl->val;
            worst_gpu = (uint32_t)ng;
        }
    }
    tl_kmap_free(&nlaunch);
    if (repeats > TL_TRACE_MAX_LINK_REPEATS) {
        tl_error_set(b->err, "%s: %u %s events share %s %lld, each linking the same %u GPU events: %llu links, "
                             "%llu of them repeats (the limit is %llu repeated links)",
                     t->path, worst_launches, t->ev[any_launch].name, b->corr_key ? "correlation" : "External id",
                     (long long)worst_id, worst_gpu, (unsigned long long)links, (unsigned long long)repeats,
                     (unsigned long long)TL_TRACE_MAX_LINK_REPEATS);
        return -1;
    }
    g->links = (size_t)links;
    return 0;
}

static int links(tree_build *b)
{
    tl_trace *t = b->t;
    tl_trace_side *side = b->side;
    const size_t nev = b->nev;
    const int corr_key = b->corr_key, old_flows = b->old_flows;
    tl_idmap by_place;
    graph_runs g = {0};
    int any_graph = 0;
    for (size_t i = 0; i < nev && !any_graph; i++)
        any_graph = (t->ev[i].flags & TL_TEV_GRAPH_LAUNCH) != 0;
    if (places_build(b, &by_place) < 0 || (any_graph && graph_runs_build(b, &g) < 0)) {
        tl_idmap_free(&by_place);
        graph_runs_free(&g);
        return -1;
    }
    size_t nlp = 0, lpcap = g.links;
    pair *lp = tl_xmalloc((lpcap ? lpcap : 1) * sizeof *lp);
    for (size_t i = 0; i < nev; i++) {
        tl_tev *r = &t->ev[i];
        if (r->kind != TL_TEV_RUNTIME || !has_key(side, corr_key, (uint32_t)i))
            continue;
        int64_t c = key_of(t, (uint32_t)i);
        if (r->flags & TL_TEV_GRAPH_LAUNCH) {
            uint32_t k = tl_kmap_get(&g.first, c, 0, 0, UINT32_MAX);
            if (k == UINT32_MAX)
                continue;
            uint32_t kend = g.run[k];
            TL_GROW(lp, lpcap, nlp + (kend - k));
            for (; k < kend; k++) {
                lp[nlp].parent = (uint32_t)i;
                lp[nlp].child = g.items[k].row;
                nlp++;
            }
            continue;
        }
        uint32_t f = tl_idmap_get(&side->flow_of, c, (uint32_t)old_flows, UINT32_MAX);
        if (f == UINT32_MAX || !usable_flow(&side->flows[f]))
            continue;
        uint32_t ge = tl_idmap_get(&by_place, c, side->flows[f].place, TL_TEV_NONE);
        /* An event that is not a GPU event (TraceLens would make it the launch's child
         * and loop on a runtime event found as its own output) links nothing. */
        if (ge == TL_TEV_NONE || !tl_tev_is_gpu(&t->ev[ge]))
            continue;
        TL_GROW(lp, lpcap, nlp + 1);
        lp[nlp].parent = (uint32_t)i;
        lp[nlp].child = ge;
        nlp++;
    }
    tl_idmap_free(&by_place);
    graph_runs_free(&g);
    for (size_t n = 0; n < nlp; n++) {
        tl_tev *ge = &t->ev[lp[n].child];
        ge->parent = lp[n].parent;
        ge->flags |= TL_TEV_LINKED;
    }
    b->lp = lp;
    b->nlp = nlp;
    return 0;
}

/* ---- 3. children ranges: the tree's children, then each launch's GPU events ---- */
static int children_ranges(tree_build *b)
{
    tl_trace *t = b->t;
    const size_t nev = b->nev, ntree = b->ntree, ntp = b->ntp, nlp = b->nlp;
    const uint32_t *items = b->items;
    const pair *lp = b->lp;
    tl_error *err = b->err;
    size_t nchildren = ntp + nlp;
    if (nchildren + nlp > UINT32_MAX) {
        tl_error_set(err, "%s: more than %u tree and link entries", t->path, UINT32_MAX);
        return -1;
    }
    if (tl_trace_cancelled(t, err))
        return -1;
    uint32_t *own = b->own = tl_xcalloc_dense(nev ? nev : 1, sizeof *own); /* links per launch, then the placing cursor */
    for (size_t s = 0; s < ntree; s++)
        if (t->ev[items[s]].parent != TL_TEV_NONE)
            t->ev[t->ev[items[s]].parent].nchild++;
    for (size_t n = 0; n < nlp; n++) {
        t->ev[lp[n].parent].nchild++;
        own[lp[n].parent]++;
    }
    size_t off = 0;
    for (size_t i = 0; i < nev; i++) {
        t->ev[i].child0 = (uint32_t)off;
        off += t->ev[i].nchild;
        t->ev[i].nchild = 0; /* the cursor while placing */
    }
    t->idx = tl_xmalloc_filled((nchildren + nlp ? nchildren + nlp : 1) * sizeof *t->idx);
    for (size_t s = 0; s < ntree; s++) {
        uint32_t c = items[s];
        if (t->ev[c].parent == TL_TEV_NONE)
            continue;
        tl_tev *p = &t->ev[t->ev[c].parent];
        t->idx[p->child0 + p->nchild++] = c;
    }
    for (size_t n = 0; n < nlp; n++) {
        tl_tev *p = &t->ev[lp[n].parent];
        t->idx[p->child0 + p->nchild++] = lp[n].child;
    }
    b->nchildren = nchildren;
    return 0;
}

/*
 * ---- 4. gpu lists ----
 * An event's gpu list is every link made by a launch in its subtree, in link order.
 * The links are laid out once in tree order (a launch's own links, then its
 * children's subtrees in ts order), so each subtree's links are one range; the range
 * is the gpu list itself whenever its links are already in link order, which they are
 * unless launches appear in the trace out of their time order.  Only the lists that
 * are not get a copy of their own, sorted; those copies are counted, and bounded,
 * before any is made.
 */
static int gpu_lists(tree_build *b)
{
    tl_trace *t = b->t;
    const size_t nev = b->nev, ntree = b->ntree, nlp = b->nlp, nchildren = b->nchildren;
    const uint32_t *items = b->items;
    const pair *lp = b->lp;
    uint32_t *own = b->own;
    tl_error *err = b->err;
    const size_t base = nchildren;
    for (size_t i = 0; i < nev; i++)
        t->ev[i].ngpu = own[i];
    for (size_t s = ntree; s-- > 0;) { /* a parent comes before its children in ts order */
        const tl_tev *e = &t->ev[items[s]];
        if (e->parent != TL_TEV_NONE)
            t->ev[e->parent].ngpu += e->ngpu;
    }
    size_t roff = base;
    for (size_t s = 0; s < ntree; s++) {
        uint32_t i = items[s];
        tl_tev *e = &t->ev[i];
        if (e->parent == TL_TEV_NONE) {
            e->gpu0 = (uint32_t)roff;
            roff += e->ngpu;
        }
        size_t c = (size_t)e->gpu0 + own[i];
        const uint32_t *kids = tl_tev_children(t, i);
        for (uint32_t q = 0; q < e->nchild; q++) {
            tl_tev *ch = &t->ev[kids[q]];
            if (tl_tev_is_gpu(ch))
                continue;
            ch->gpu0 = (uint32_t)c;
            c += ch->ngpu;
        }
        own[i] = 0;
    }
    for (size_t i = 0; i < nev; i++)
        if (tl_tev_is_gpu(&t->ev[i]))
            t->ev[i].gpu0 = (uint32_t)base;
    uint32_t *order = tl_xmalloc((nlp ? nlp : 1) * sizeof *order); /* link number at each tree position */
    for (size_t n = 0; n < nlp; n++) {
        uint32_t p = lp[n].parent;
        size_t pos = (size_t)t->ev[p].gpu0 + own[p]++;
        t->idx[pos] = lp[n].child;
        order[pos - base] = (uint32_t)n;
    }
    free(own);
    b->own = NULL;
    /* descents[k]: positions in 1..k whose link comes before the previous position's */
    uint32_t *descents = tl_xmalloc((nlp ? nlp : 1) * sizeof *descents);
    for (size_t q = 0; q < nlp; q++)
        descents[q] = q ? descents[q - 1] + (order[q] < order[q - 1]) : 0;
    uint64_t ncopy = 0;
    size_t nunsorted = 0;
    for (size_t i = 0; i < nev; i++) {
        const tl_tev *e = &t->ev[i];
        size_t s0 = e->gpu0 - base;
        if (e->ngpu >= 2 && descents[s0 + e->ngpu - 1] != descents[s0]) {
            ncopy += e->ngpu;
            nunsorted++;
        }
    }
    if (ncopy > TL_TRACE_MAX_GPU_COPIES || base + nlp + ncopy > UINT32_MAX) {
        tl_error_set(err, "%s: %zu nested calls launch GPU work out of their time order, so each needs a GPU list of "
                          "its own: %llu entries, more than %llu (the limit)",
                     t->path, nunsorted, (unsigned long long)ncopy, (unsigned long long)TL_TRACE_MAX_GPU_COPIES);
        free(order);
        free(descents);
        return -1;
    }
    if (ncopy) {
        t->idx = tl_xrealloc(t->idx, (base + nlp + ncopy) * sizeof *t->idx);
        tl_sort_item *sl = NULL, *tmp = NULL;
        size_t slcap = 0, tmpcap = 0, coff = base + nlp;
        for (size_t i = 0; i < nev; i++) {
            tl_tev *e = &t->ev[i];
            size_t s0 = e->gpu0 - base;
            if (e->ngpu < 2 || descents[s0 + e->ngpu - 1] == descents[s0])
                continue;
            TL_GROW(sl, slcap, e->ngpu);
            TL_GROW(tmp, tmpcap, e->ngpu);
            for (uint32_t q = 0; q < e->ngpu; q++) {
                sl[q].key = order[s0 + q];
                sl[q].row = t->idx[e->gpu0 + q];
            }
            tl_sort_items(sl, e->ngpu, tmp);
            for (uint32_t q = 0; q < e->ngpu; q++)
                t->idx[coff + q] = sl[q].row;
            e->gpu0 = (uint32_t)coff;
            coff += e->ngpu;
        }
        free(sl);
        free(tmp);
    }
    t->nidx = base + nlp + (size_t)ncopy;
    free(order);
    free(descents);
    return 0;
}

int tl_trace_build(tl_trace *t, tl_trace_side *side, tl_error *err)
{
    tree_build b = {0};
    b.t = t;
    b.side = side;
    b.err = err;
    b.nev = t->nev;
    b.corr_key = side->key_decided && side->key_is_corr;
    /* older Kineto's launch flows stand in for ac2g in a trace that has none (TRACES.md
     * §8); a trace with both links through ac2g alone */
    b.old_flows = t->census.n[TL_CAT_AC2G] == 0 && t->census.n[TL_CAT_OLD_FLOW] > 0;
    t->link_flows = b.old_flows ? TL_CAT_OLD_FLOW : TL_CAT_AC2G;

    /* the link ids the reader listed, of the events it read before it knew the key (it
     * put the others' in their aux records) */
    tl_side_keys_resolve(t, side, side->keys, side->nkeys, 0);
    /* each phase fails with *err set: the trace is then freed by the caller */
    int ok = host_stacks(&b) == 0 && links(&b) == 0 && children_ranges(&b) == 0 && gpu_lists(&b) == 0 &&
             !tl_trace_cancelled(t, err);
    int rc = ok ? 0 : -1;
    /* ---- 5. non-GPU paths ---- */
    for (size_t i = 0; rc == 0 && i < b.nev; i++) {
        tl_tev *e = &t->ev[i];
        if (!tl_tev_is_gpu(e) && e->ngpu == 0)
            e->flags |= TL_TEV_NON_GPU_PATH;
    }
    free(b.items);
    free(b.lp);
    free(b.own);
    return rc;
}
