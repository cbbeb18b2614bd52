/*
 * trace_tree.c - the CPU-op call tree of a trace and its GPU links (TRACES.md §1-§2).
 *
 * The tree is built as TraceLens builds it: tree events sorted by ts (stably), one stack
 * per (pid, tid), the bleed rule; then every runtime event, in array order, is linked to
 * its GPU events through the ac2g flows, and each linked GPU event is added to the gpu
 * list of its launch and of every ancestor.  Children and gpu lists are ranges of one
 * index array, filled in two passes (count, then place), so the whole tree is three
 * allocations whatever its shape.
 */
#include "trace/trace.h"
#include "trace/trace_impl.h"

#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

/* The gpu lists hold each linked GPU event once per ancestor of its launch; a trace
 * nested absurdly deep could make that quadratic, so it is bounded. */
#define MAX_IDX ((size_t)1 << 30)

typedef struct stack {
    uint32_t *v;
    size_t n, cap;
    long ncpu; /* cpu_ops on the stack */
} stack;

typedef struct pair {
    uint32_t parent, child;
} pair;

static int has_key(const tl_trace_side *s, int corr_key, uint32_t i)
{
    return (s->evflags[i] & (corr_key ? TL_SIDE_CORR : TL_SIDE_EXT)) != 0;
}

static int64_t key_of(const tl_trace_side *s, int corr_key, uint32_t i) { return corr_key ? s->corr[i] : s->ext[i]; }

int tl_trace_build(tl_trace *t, tl_trace_side *side, tl_error *err)
{
    const int corr_key = side->key_decided && side->key_is_corr;
    const size_t nev = t->nev;
    int rc = -1;

    for (size_t i = 0; i < nev; i++)
        t->ev[i].corr = has_key(side, corr_key, (uint32_t)i) ? key_of(side, corr_key, (uint32_t)i) : -1;

    /* ---- 1. the host call stacks ---- */
    size_t ntree = 0;
    for (size_t i = 0; i < nev; i++)
        ntree += t->ev[i].kind == TL_TEV_CPU_OP || t->ev[i].kind == TL_TEV_RUNTIME || t->ev[i].kind == TL_TEV_PYTHON;
    tl_sort_item *items = tl_xmalloc((ntree ? ntree : 1) * sizeof *items);
    size_t k = 0;
    for (size_t i = 0; i < nev; i++) {
        if (t->ev[i].kind == TL_TEV_CPU_OP || t->ev[i].kind == TL_TEV_RUNTIME || t->ev[i].kind == TL_TEV_PYTHON) {
            items[k].key = tl_sort_key_double(t->ev[i].ts);
            items[k].row = (uint32_t)i;
            k++;
        }
    }
    tl_sort_items(items, ntree, NULL); /* stable: equal ts keep array order */

    tl_kmap stack_of;
    tl_kmap_init(&stack_of);
    stack *stacks = NULL;
    size_t nstacks = 0, stackcap = 0;
    pair *tp = tl_xmalloc((ntree ? ntree : 1) * sizeof *tp); /* tree (parent, child), in order */
    size_t ntp = 0;
    size_t rootcap = 0;

    for (size_t s = 0; s < ntree; s++) {
        uint32_t i = items[s].row;
        tl_tev *e = &t->ev[i];
        int created;
        tl_kmap_slot *sl = tl_kmap_put(&stack_of, e->pid, e->tid, 0, &created);
        if (created) {
            TL_GROW(stacks, stackcap, nstacks + 1);
            memset(&stacks[nstacks], 0, sizeof stacks[nstacks]);
            sl->val = (uint32_t)nstacks++;
        }
        stack *st = &stacks[sl->val];
        while (st->n && e->ts >= t->ev[st->v[st->n - 1]].t_end) {
            if (t->ev[st->v[--st->n]].kind == TL_TEV_CPU_OP)
                st->ncpu--;
        }
        if (st->n && e->t_end > t->ev[st->v[st->n - 1]].t_end) {
            double overlap = t->ev[st->v[st->n - 1]].t_end - e->ts;
            if (overlap < 1.0 && st->n >= 2) {
                if (t->ev[st->v[--st->n]].kind == TL_TEV_CPU_OP)
                    st->ncpu--;
            } else {
                continue; /* dropped from the tree */
            }
        }
        if (st->n) {
            e->parent = st->v[st->n - 1];
            tp[ntp].parent = e->parent;
            tp[ntp].child = i;
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
    for (size_t s = 0; s < nstacks; s++)
        free(stacks[s].v);
    free(stacks);
    tl_kmap_free(&stack_of);
    free(items);

    /* ---- 2. links: runtime event -> GPU events ---- */
    tl_kmap by_place; /* (pid, tid, link id) -> event, the last one written */
    tl_kmap_init(&by_place);
    tl_kmap_reserve(&by_place, side->nins);
    for (size_t n = 0; n < side->nins; n++) {
        const tl_side_ins *in = &side->ins[n];
        if (!(in->flags & (corr_key ? TL_SIDE_CORR : TL_SIDE_EXT)))
            continue;
        tl_kmap_put(&by_place, in->pid, in->tid, corr_key ? in->corr : in->ext, NULL)->val = in->target;
    }

    /* GPU events by link id, in array order (for graph launches); made only when needed */
    int any_graph = 0;
    for (size_t i = 0; i < nev && !any_graph; i++)
        any_graph = (t->ev[i].flags & TL_TEV_GRAPH_LAUNCH) != 0;
    tl_sort_item *gitems = NULL;
    size_t ngitems = 0;
    tl_kmap gfirst; /* link id -> first position in gitems */
    tl_kmap_init(&gfirst);
    if (any_graph) {
        gitems = tl_xmalloc((nev ? nev : 1) * sizeof *gitems);
        for (size_t i = 0; i < nev; i++) {
            if (tl_tev_is_gpu(&t->ev[i]) && (side->evflags[i] & TL_SIDE_HAS_ARGS) && has_key(side, corr_key, (uint32_t)i)) {
                gitems[ngitems].key = tl_sort_key_int(key_of(side, corr_key, (uint32_t)i));
                gitems[ngitems].row = (uint32_t)i;
                ngitems++;
            }
        }
        tl_sort_items(gitems, ngitems, NULL);
        for (size_t g = ngitems; g-- > 0;)
            tl_kmap_put(&gfirst, key_of(side, corr_key, gitems[g].row), 0, 0, NULL)->val = (uint32_t)g;
    }

    pair *lp = NULL; /* links (runtime, gpu event), in link order */
    size_t nlp = 0, lpcap = 0;
    for (size_t i = 0; i < nev; i++) {
        tl_tev *r = &t->ev[i];
        if (r->kind != TL_TEV_RUNTIME || !has_key(side, corr_key, (uint32_t)i))
            continue;
        int64_t c = key_of(side, corr_key, (uint32_t)i);
        if (r->flags & TL_TEV_GRAPH_LAUNCH) {
            uint32_t g = tl_kmap_get(&gfirst, c, 0, 0, UINT32_MAX);
            for (; g != UINT32_MAX && g < ngitems && key_of(side, corr_key, gitems[g].row) == c; g++) {
                TL_GROW(lp, lpcap, nlp + 1);
                lp[nlp].parent = (uint32_t)i;
                lp[nlp].child = gitems[g].row;
                nlp++;
            }
            continue;
        }
        uint32_t f = tl_kmap_get(&side->flow_of, c, 0, 0, UINT32_MAX);
        if (f == UINT32_MAX || !side->flows[f].has_s || !side->flows[f].has_f || !side->flows[f].numeric)
            continue;
        uint32_t g = tl_kmap_get(&by_place, side->flows[f].pid, side->flows[f].tid, c, TL_TEV_NONE);
        /* An event that is not a GPU event (TraceLens would make it the launch's child
         * and loop on a runtime event found as its own output) links nothing. */
        if (g == TL_TEV_NONE || !tl_tev_is_gpu(&t->ev[g]))
            continue;
        TL_GROW(lp, lpcap, nlp + 1);
        lp[nlp].parent = (uint32_t)i;
        lp[nlp].child = g;
        nlp++;
    }
    tl_kmap_free(&by_place);
    tl_kmap_free(&gfirst);
    free(gitems);
    for (size_t n = 0; n < nlp; n++) {
        tl_tev *g = &t->ev[lp[n].child];
        g->parent = lp[n].parent;
        g->flags |= TL_TEV_LINKED;
    }

    /* ---- 3. children and gpu ranges ---- */
    size_t total = ntp + nlp, ngpu_total = 0;
    for (size_t n = 0; n < ntp; n++)
        t->ev[tp[n].parent].nchild++;
    for (size_t n = 0; n < nlp; n++) {
        t->ev[lp[n].parent].nchild++;
        for (uint32_t a = lp[n].parent; a != TL_TEV_NONE; a = t->ev[a].parent) {
            t->ev[a].ngpu++;
            if (++ngpu_total > MAX_IDX) {
                tl_error_set(err, "%s: the trace's calls nest too deeply to be linked (more than %zu GPU-list entries)",
                             t->path, MAX_IDX);
                goto out;
            }
        }
    }
    total += ngpu_total;
    t->nidx = total;
    t->idx = tl_xmalloc((total ? total : 1) * sizeof *t->idx);
    size_t off = 0;
    for (size_t i = 0; i < nev; i++) {
        t->ev[i].child0 = (uint32_t)off;
        off += t->ev[i].nchild;
        t->ev[i].nchild = 0; /* the cursor while placing */
    }
    for (size_t i = 0; i < nev; i++) {
        t->ev[i].gpu0 = (uint32_t)off;
        off += t->ev[i].ngpu;
        t->ev[i].ngpu = 0;
    }
    for (size_t n = 0; n < ntp; n++) {
        tl_tev *p = &t->ev[tp[n].parent];
        t->idx[p->child0 + p->nchild++] = tp[n].child;
    }
    for (size_t n = 0; n < nlp; n++) {
        tl_tev *p = &t->ev[lp[n].parent];
        t->idx[p->child0 + p->nchild++] = lp[n].child;
        for (uint32_t a = lp[n].parent; a != TL_TEV_NONE; a = t->ev[a].parent) {
            tl_tev *x = &t->ev[a];
            t->idx[x->gpu0 + x->ngpu++] = lp[n].child;
        }
    }

    /* ---- 4. non-GPU paths ---- */
    for (size_t i = 0; i < nev; i++) {
        tl_tev *e = &t->ev[i];
        if (!tl_tev_is_gpu(e) && e->ngpu == 0)
            e->flags |= TL_TEV_NON_GPU_PATH;
    }
    rc = 0;
out:
    free(tp);
    free(lp);
    return rc;
}
