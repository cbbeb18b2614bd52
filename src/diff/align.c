/*
 * align.c - the merged tree (TRACES.md §5.1): roots paired by position, then each pair
 * of nodes merged by aligning their children lists in four phases (list collapse,
 * alignment, wrapper reconciliation, per-node canonicalisation).
 *
 * The reference recurses; a trace's tree can be as deep as its nesting, so the merge
 * here is a loop over an explicit stack.  Every step keeps the reference's order of
 * operations, because the order of a node's children is the order of the merged ids and
 * of the lines of the tree text.
 */
#include "diff/diff_int.h"

#include "base/hash.h"
#include "base/sort.h"

#include <stdio.h>

typedef tl_diff_op op_t;

/* A growable array of ops. */
typedef struct opvec {
    op_t *v;
    size_t n, cap;
} opvec;

static void ov_push(opvec *o, uint8_t kind, uint32_t i, uint32_t j)
{
    if (o->n == o->cap)
        TL_GROW(o->v, o->cap, o->n + 1);
    o->v[o->n++] = (op_t){kind, i, j};
}

/* The ops of an alignment of two sublists appended to *out as ops over the lists they were
 * taken from: sublist positions mapped through to_i and to_j. */
static void ov_push_mapped(opvec *out, const opvec *ops, const uint32_t *to_i, const uint32_t *to_j)
{
    for (size_t x = 0; x < ops->n; x++) {
        op_t o = ops->v[x];
        ov_push(out, o.kind, o.kind != TL_DIFF_INSERT ? to_i[o.i] : 0, o.kind != TL_DIFF_DELETE ? to_j[o.j] : 0);
    }
}

/* ---- the aligner --------------------------------------------------------------------- */

/* Scratch that lives through the merge: stamp-tagged maps over normalised-name ids and
 * over events, and the buffers of the phases. */
typedef struct aligner {
    tl_diff *d;
    size_t nnorm;
    uint32_t stamp;
    uint32_t *mark[6];   /* per normalised name: stamp tags */
    uint32_t *val[2];    /* per normalised name: a value, valid under mark[4], mark[5] */
    uint32_t *cnt[2];    /* per normalised name: counts (disambiguation) */
    dvec all1, all2, kids;
    dvec wn1, wn2;       /* Wagner-Fischer names */
    opvec wfops;
    dvec sorttmp;
    /* disambiguation */
    dvec amb, idx1, idx2, lev, levoff;
    opvec keep;
    /* the merge stack */
    dvec pairs;          /* (ev1, ev2) pairs still to visit, two entries each */
    dvec pbase;          /* per frame: where its pairs start */
    dvec pnext;          /* per frame: the next pair to visit */
    dvec pnode;          /* per frame: its merged id */
    dvec kidstack;       /* merged ids of the children made so far, per frame */
    dvec kbase;
    /* (ev1, ev2) -> merged id: through each side's partners (d->partner) and node_of,
     * the pair an event was last entered in; the pairs those no longer tell (an event
     * entered again with another partner) in a small table */
    uint32_t *node_of[2];
    uint64_t *pk;
    uint32_t *pv;
    size_t pmask, pn;
    size_t nodes_mapped; /* how much of d->nodes has its pages mapped ahead (tl_populate_ahead) */
} aligner;

static uint32_t next_stamp(aligner *A)
{
    if (++A->stamp == 0) {
        for (int i = 0; i < 6; i++)
            memset(A->mark[i], 0, A->nnorm * sizeof *A->mark[i]);
        A->stamp = 1;
    }
    return A->stamp;
}

static inline uint32_t nid(const aligner *A, int k, uint32_t e) { return A->d->names[A->d->s[k].nm[e]].norm; }

static inline const tl_tev *EV(const aligner *A, int k, uint32_t e) { return &A->d->s[k].t->ev[e]; }

/* The name Wagner-Fischer compares: normalised (or "strip details"); an empty name is
 * the event's UID in decimal, as the reference's _get_op_name makes it. */
static uint32_t wf_name(aligner *A, int k, uint32_t e, int strip)
{
    const dname *nm = dname_of(A->d, k, e);
    if (nm->norm != 0)
        return strip ? nm->strip : nm->norm;
    char buf[16];
    int n = snprintf(buf, sizeof buf, "%u", (unsigned)EV(A, k, e)->uid);
    return tl_dst_intern(&A->d->norm, buf, (size_t)n, &A->d->arena);
}

/* Append the GPU-path children of e (in children order) to out. */
static void gpu_children(const aligner *A, int k, uint32_t e, dvec *out)
{
    if (e == TL_TEV_NONE)
        return;
    const tl_trace *t = A->d->s[k].t;
    const uint32_t *c = tl_tev_children(t, e);
    for (uint32_t x = 0; x < t->ev[e].nchild; x++)
        if (ev_gpu_path(t, c[x]))
            dv_push(out, c[x]);
}

static size_t count_gpu_children(const aligner *A, int k, uint32_t e)
{
    const tl_trace *t = A->d->s[k].t;
    const uint32_t *c = tl_tev_children(t, e);
    size_t n = 0;
    for (uint32_t x = 0; x < t->ev[e].nchild; x++)
        n += ev_gpu_path(t, c[x]);
    return n;
}

/* Stable sort of events by ts (the reference's _sort_by_ts). */
static void sort_by_ts(aligner *A, int k, uint32_t *v, size_t n)
{
    const tl_tev *ev = A->d->s[k].t->ev;
    size_t i = 1;
    while (i < n && ev[v[i - 1]].ts <= ev[v[i]].ts)
        i++;
    if (i >= n)
        return;
    if (n <= 32) {
        for (i = 1; i < n; i++) {
            uint32_t x = v[i];
            size_t j = i;
            while (j > 0 && ev[v[j - 1]].ts > ev[x].ts) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    dv_reserve(&A->sorttmp, n);
    uint32_t *tmp = A->sorttmp.v, *src = v, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t p = lo, q = mid, o = lo;
            while (p < mid && q < hi)
                dst[o++] = ev[src[q]].ts < ev[src[p]].ts ? src[q++] : src[p++];
            while (p < mid)
                dst[o++] = src[p++];
            while (q < hi)
                dst[o++] = src[q++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
}

/* The children lists of a pair (get_children_with_missing): each side's GPU-path
 * children, plus, for a name GPU-path on one side only, the other side's last child of
 * that name even when it is not on the GPU path; both sorted by ts. */
static void children_with_missing(aligner *A, uint32_t u1, uint32_t u2, dvec *c1, dvec *c2)
{
    c1->n = c2->n = 0;
    gpu_children(A, 0, u1, c1);
    gpu_children(A, 1, u2, c2);
    uint32_t s = next_stamp(A);
    uint32_t *in1 = A->mark[0], *in2 = A->mark[1], *done = A->mark[2], *has1 = A->mark[4], *has2 = A->mark[5];
    for (size_t i = 0; i < c1->n; i++)
        in1[nid(A, 0, c1->v[i])] = s;
    for (size_t i = 0; i < c2->n; i++)
        in2[nid(A, 1, c2->v[i])] = s;
    const tl_trace *t1 = A->d->s[0].t, *t2 = A->d->s[1].t;
    if (u1 != TL_TEV_NONE)
        for (uint32_t x = 0; x < t1->ev[u1].nchild; x++) {
            uint32_t c = tl_tev_children(t1, u1)[x], nm = nid(A, 0, c);
            has1[nm] = s;
            A->val[0][nm] = c;
        }
    if (u2 != TL_TEV_NONE)
        for (uint32_t x = 0; x < t2->ev[u2].nchild; x++) {
            uint32_t c = tl_tev_children(t2, u2)[x], nm = nid(A, 1, c);
            has2[nm] = s;
            A->val[1][nm] = c;
        }
    uint32_t *done2 = A->mark[3];
    size_t n1 = c1->n, n2 = c2->n;
    for (size_t i = 0; i < n1; i++) {
        uint32_t nm = nid(A, 0, c1->v[i]);
        if (done[nm] != s && in2[nm] != s && has2[nm] == s)
            dv_push(c2, A->val[1][nm]);
        done[nm] = s;
    }
    for (size_t i = 0; i < n2; i++) {
        uint32_t nm = nid(A, 1, c2->v[i]);
        if (done2[nm] != s && in1[nm] != s && has1[nm] == s)
            dv_push(c1, A->val[0][nm]);
        done2[nm] = s;
    }
    sort_by_ts(A, 0, c1->v, c1->n);
    sort_by_ts(A, 1, c2->v, c2->n);
}

/* Descend from e through wrappers (one GPU-path child) to the first node that is a
 * launch, a cpu_op with a launch child, or has other than one GPU-path child.  Returns
 * that node; its GPU-path children go to kids (only in the last case). */
static uint32_t collapse(aligner *A, int k, uint32_t e, dvec *kids)
{
    const tl_trace *t = A->d->s[k].t;
    if (kids)
        kids->n = 0;
    for (;;) {
        const tl_tev *ev = &t->ev[e];
        if (ev_is_launch(ev))
            return e;
        const uint32_t *c = tl_tev_children(t, e);
        if (ev->kind == TL_TEV_CPU_OP)
            for (uint32_t x = 0; x < ev->nchild; x++)
                if (ev_is_launch(&t->ev[c[x]]))
                    return e;
        size_t ng = count_gpu_children(A, k, e);
        if (ng != 1) {
            if (kids)
                gpu_children(A, k, e, kids);
            return e;
        }
        for (uint32_t x = 0; x < ev->nchild; x++)
            if (ev_gpu_path(t, c[x])) {
                e = c[x];
                break;
            }
    }
}

static int any_launch(const aligner *A, int k, const uint32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ev_is_launch(EV(A, k, v[i])))
            return 1;
    return 0;
}

/* ---- disambiguation ------------------------------------------------------------------ */

/* The BFS signature of a node: per depth 1..4, the sorted multiset of the normalised
 * names of its GPU-path descendants at that depth.  Appended to A->lev as
 * [nlevels, len_1, names_1..., len_2, ...]; returns its offset. */
static uint32_t bfs_levels(aligner *A, int k, uint32_t e, dvec *front, dvec *next)
{
    const tl_trace *t = A->d->s[k].t;
    uint32_t at = (uint32_t)A->lev.n;
    dv_push(&A->lev, 0);
    front->n = 0;
    dv_push(front, e);
    for (int depth = 0; depth < 4; depth++) {
        next->n = 0;
        size_t lenpos = A->lev.n;
        dv_push(&A->lev, 0);
        for (size_t f = 0; f < front->n; f++) {
            uint32_t u = front->v[f];
            const uint32_t *c = tl_tev_children(t, u);
            for (uint32_t x = 0; x < t->ev[u].nchild; x++)
                if (ev_gpu_path(t, c[x])) {
                    dv_push(next, c[x]);
                    dv_push(&A->lev, nid(A, k, c[x]));
                }
        }
        uint32_t len = (uint32_t)(A->lev.n - lenpos - 1);
        A->lev.v[lenpos] = len;
        uint32_t *names = A->lev.v + lenpos + 1;
        /* sort the names (insertion sort for short levels, else qsort-like shell) */
        for (size_t gap = len / 2 > 8 ? len / 2 : 1;; gap = gap > 1 ? gap / 2 : 0) {
            for (size_t i = gap; i < len; i++) {
                uint32_t x = names[i];
                size_t j = i;
                while (j >= gap && names[j - gap] > x) {
                    names[j] = names[j - gap];
                    j -= gap;
                }
                names[j] = x;
            }
            if (gap <= 1)
                break;
        }
        A->lev.v[at]++;
        dvec t2 = *front;
        *front = *next;
        *next = t2;
        if (front->n == 0)
            break;
    }
    return at;
}

/* The reference's match_depth: (levels equal before the first difference, multiset
 * overlap at that level). */
static void match_depth(const uint32_t *a, const uint32_t *b, uint32_t *depth, uint32_t *overlap)
{
    uint32_t la = a[0], lb = b[0], maxd = la > lb ? la : lb;
    const uint32_t *pa = a + 1, *pb = b + 1;
    for (uint32_t d = 0; d < maxd; d++) {
        uint32_t na = d < la ? pa[0] : 0, nb = d < lb ? pb[0] : 0;
        const uint32_t *xa = d < la ? pa + 1 : NULL, *xb = d < lb ? pb + 1 : NULL;
        int same = na == nb && (na == 0 || memcmp(xa, xb, na * sizeof *xa) == 0);
        if (!same) {
            uint32_t ov = 0, i = 0, j = 0;
            while (i < na && j < nb) {
                if (xa[i] == xb[j])
                    ov++, i++, j++;
                else if (xa[i] < xb[j])
                    i++;
                else
                    j++;
            }
            *depth = d;
            *overlap = ov;
            return;
        }
        if (d < la)
            pa += 1 + pa[0];
        if (d < lb)
            pb += 1 + pb[0];
    }
    *depth = maxd;
    *overlap = 0;
}

typedef struct scored {
    uint32_t depth, overlap;
    uint8_t orig;
    uint32_t i, j;
} scored;

static int scored_cmp(const void *pa, const void *pb)
{
    const scored *a = pa, *b = pb;
    if (a->depth != b->depth)
        return a->depth > b->depth ? -1 : 1;
    if (a->overlap != b->overlap)
        return a->overlap > b->overlap ? -1 : 1;
    if (a->orig != b->orig)
        return a->orig ? -1 : 1;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* The disambiguation under way: the two sides' items and what the re-pairing decides. */
typedef struct dstate {
    const uint32_t *it1, *it2;
    size_t n1, n2;
    uint32_t *wfj;          /* trace1 index -> its Wagner-Fischer match, or UINT32_MAX */
    uint8_t *h1, *h2;       /* handled here; 2: a new delete / insert */
    uint32_t *mj;           /* trace1 index -> its new match, or UINT32_MAX */
    uint8_t *as2;           /* trace2 index newly matched */
    uint32_t (*newm)[2];    /* the new matches, in the order made */
    size_t npairs, capp;
    int any_new;            /* a new match the Wagner-Fischer pass did not make */
    uint64_t budget;        /* signature pairs left to score */
    dvec front, next;       /* bfs_levels' work */
    scored *sc;
    size_t capsc;
    size_t *start1, *start2; /* ambiguous name x's indexes: A->idx1/2 from start[x] to start[x + 1] */
} dstate;

/* The names that match somewhere and occur more than once on a side, in first-appearance
 * order, into A->amb; their counts per side stay in A->cnt[0] and A->cnt[1] under stamp s. */
static size_t ambiguous_names(aligner *A, const opvec *ops, const dstate *z, uint32_t s)
{
    uint32_t *seen = A->mark[0], *matched = A->mark[1];
    uint32_t *c1 = A->cnt[0], *c2 = A->cnt[1];
    A->amb.n = 0;
    for (size_t x = 0; x < ops->n; x++) {
        op_t o = ops->v[x];
        for (int side = 0; side < 2; side++) {
            if ((side == 0 && o.kind == TL_DIFF_INSERT) || (side == 1 && o.kind == TL_DIFF_DELETE))
                continue;
            uint32_t nm = side == 0 ? nid(A, 0, z->it1[o.i]) : nid(A, 1, z->it2[o.j]);
            if (seen[nm] != s) {
                seen[nm] = s;
                c1[nm] = c2[nm] = 0;
                dv_push(&A->amb, nm);
            }
            (side == 0 ? c1 : c2)[nm]++;
            if (o.kind == TL_DIFF_MATCH)
                matched[nm] = s;
        }
    }
    size_t na = 0;
    for (size_t x = 0; x < A->amb.n; x++) {
        uint32_t nm = A->amb.v[x];
        if (c1[nm] && c2[nm] && matched[nm] == s && (c1[nm] > 1 || c2[nm] > 1))
            A->amb.v[na++] = nm;
    }
    A->amb.n = na;
    return na;
}

/* The indexes of each ambiguous name, side by side, by a counting sort into A->idx1 and
 * A->idx2 (z->start1, z->start2 made here). */
static void group_indexes(aligner *A, dstate *z, uint32_t s, size_t na)
{
    const uint32_t *c1 = A->cnt[0], *c2 = A->cnt[1];
    uint32_t *ord = A->val[0], *isamb = A->mark[2];
    size_t *start1 = z->start1 = tl_xcalloc(na + 1, sizeof *start1);
    size_t *start2 = z->start2 = tl_xcalloc(na + 1, sizeof *start2);
    for (size_t x = 0; x < na; x++) {
        isamb[A->amb.v[x]] = s;
        ord[A->amb.v[x]] = (uint32_t)x;
        start1[x + 1] = start1[x] + c1[A->amb.v[x]];
        start2[x + 1] = start2[x] + c2[A->amb.v[x]];
    }
    dv_reserve(&A->idx1, start1[na] + 1);
    dv_reserve(&A->idx2, start2[na] + 1);
    size_t *f1 = tl_xmalloc((na + 1) * sizeof *f1), *f2 = tl_xmalloc((na + 1) * sizeof *f2);
    memcpy(f1, start1, (na + 1) * sizeof *f1);
    memcpy(f2, start2, (na + 1) * sizeof *f2);
    for (size_t i = 0; i < z->n1; i++) {
        uint32_t nm = nid(A, 0, z->it1[i]);
        if (isamb[nm] == s)
            A->idx1.v[f1[ord[nm]]++] = (uint32_t)i;
    }
    for (size_t j = 0; j < z->n2; j++) {
        uint32_t nm = nid(A, 1, z->it2[j]);
        if (isamb[nm] == s)
            A->idx2.v[f2[ord[nm]]++] = (uint32_t)j;
    }
    free(f1);
    free(f2);
}

/* Score every pair of ambiguous name x's items by their BFS signatures into z->sc, best
 * first; the number of pairs. */
static size_t score_pairs(aligner *A, dstate *z, const uint32_t *ix1, size_t m1, const uint32_t *ix2, size_t m2)
{
    A->lev.n = 0;
    A->levoff.n = 0;
    for (size_t i = 0; i < m1; i++)
        dv_push(&A->levoff, bfs_levels(A, 0, z->it1[ix1[i]], &z->front, &z->next));
    for (size_t j = 0; j < m2; j++)
        dv_push(&A->levoff, bfs_levels(A, 1, z->it2[ix2[j]], &z->front, &z->next));
    size_t pairs = m1 * m2;
    if (pairs > z->capsc) {
        free(z->sc);
        z->capsc = pairs;
        z->sc = tl_xmalloc(z->capsc * sizeof *z->sc);
    }
    size_t np = 0;
    for (size_t a = 0; a < m1; a++)
        for (size_t b = 0; b < m2; b++) {
            scored *p = &z->sc[np++];
            p->i = ix1[a];
            p->j = ix2[b];
            p->orig = z->wfj[p->i] == p->j;
            match_depth(A->lev.v + A->levoff.v[a], A->lev.v + A->levoff.v[m1 + b], &p->depth, &p->overlap);
        }
    qsort(z->sc, np, sizeof *z->sc, scored_cmp);
    return np;
}

/* Re-pair ambiguous name x's items greedily from the best score (within the budget of
 * scored pairs; a name past it keeps its Wagner-Fischer pairs); the items left over
 * become new deletes and inserts. */
static void repair_name(aligner *A, dstate *z, size_t x)
{
    const uint32_t *ix1 = A->idx1.v + z->start1[x], *ix2 = A->idx2.v + z->start2[x];
    size_t m1 = z->start1[x + 1] - z->start1[x], m2 = z->start2[x + 1] - z->start2[x];
    uint64_t pairs = (uint64_t)m1 * m2;
    if (pairs > z->budget) {
        A->d->st.disambig_skipped++;
        return;
    }
    z->budget -= pairs;
    size_t np = score_pairs(A, z, ix1, m1, ix2, m2);
    const scored *sc = z->sc;
    size_t want = m1 < m2 ? m1 : m2, got = 0;
    for (size_t i = 0; i < m1; i++) {
        z->h1[ix1[i]] = 1;
        z->mj[ix1[i]] = UINT32_MAX;
    }
    for (size_t j = 0; j < m2; j++) {
        z->h2[ix2[j]] = 1;
        z->as2[ix2[j]] = 0;
    }
    for (size_t p = 0; p < np && got < want; p++) {
        if (z->mj[sc[p].i] != UINT32_MAX || z->as2[sc[p].j])
            continue;
        z->mj[sc[p].i] = sc[p].j;
        z->as2[sc[p].j] = 1;
        got++;
        if (z->npairs == z->capp)
            TL_GROW(z->newm, z->capp, z->npairs + 1);
        z->newm[z->npairs][0] = sc[p].i;
        z->newm[z->npairs][1] = sc[p].j;
        z->npairs++;
        if (!sc[p].orig)
            z->any_new = 1;
    }
    for (size_t i = 0; i < m1; i++)
        if (z->mj[ix1[i]] == UINT32_MAX)
            z->h1[ix1[i]] = 2; /* a new delete */
    for (size_t j = 0; j < m2; j++)
        if (!z->as2[ix2[j]])
            z->h2[ix2[j]] = 2;
}

/* The ops again: the kept ones in order, then the new matches in the order CPython
 * iterates the set it keeps them in, then the new deletes and inserts by index. */
static void rewrite_ops(aligner *A, opvec *ops, dstate *z)
{
    A->keep.n = 0;
    for (size_t x = 0; x < ops->n; x++) {
        op_t o = ops->v[x];
        int handled = (o.kind == TL_DIFF_MATCH && (z->h1[o.i] || z->h2[o.j])) || (o.kind == TL_DIFF_DELETE && z->h1[o.i]) ||
                      (o.kind == TL_DIFF_INSERT && z->h2[o.j]);
        if (!handled)
            ov_push(&A->keep, o.kind, o.i, o.j);
    }
    tl_diff_pyset_order(z->newm, z->npairs);
    for (size_t p = 0; p < z->npairs; p++)
        ov_push(&A->keep, TL_DIFF_MATCH, z->newm[p][0], z->newm[p][1]);
    for (size_t i = 0; i < z->n1; i++)
        if (z->h1[i] == 2)
            ov_push(&A->keep, TL_DIFF_DELETE, (uint32_t)i, 0);
    for (size_t j = 0; j < z->n2; j++)
        if (z->h2[j] == 2)
            ov_push(&A->keep, TL_DIFF_INSERT, 0, (uint32_t)j);
    opvec t = *ops;
    *ops = A->keep;
    A->keep = t;
}

/* The post-Wagner-Fischer pass (_disambiguate_same_name_candidates): names that match
 * somewhere and occur more than once on a side are re-paired by their BFS signatures,
 * greedily from the best score. */
static void disambiguate(aligner *A, opvec *ops, const uint32_t *it1, size_t n1, const uint32_t *it2, size_t n2)
{
    if (ops->n == 0)
        return;
    uint32_t s = next_stamp(A);
    dstate z = {.it1 = it1, .it2 = it2, .n1 = n1, .n2 = n2, .budget = A->d->opts.disambig_max_pairs};
    size_t na = ambiguous_names(A, ops, &z, s);
    if (!na)
        return;
    z.wfj = tl_xmalloc((n1 ? n1 : 1) * sizeof *z.wfj);
    for (size_t i = 0; i < n1; i++)
        z.wfj[i] = UINT32_MAX;
    for (size_t x = 0; x < ops->n; x++)
        if (ops->v[x].kind == TL_DIFF_MATCH)
            z.wfj[ops->v[x].i] = ops->v[x].j;
    z.h1 = tl_xcalloc(n1 ? n1 : 1, 1);
    z.h2 = tl_xcalloc(n2 ? n2 : 1, 1);
    z.mj = tl_xmalloc((n1 ? n1 : 1) * sizeof *z.mj);
    z.as2 = tl_xcalloc(n2 ? n2 : 1, 1);
    group_indexes(A, &z, s, na);
    for (size_t x = 0; x < na; x++)
        repair_name(A, &z, x);
    if (z.any_new)
        rewrite_ops(A, ops, &z);
    free(z.start1);
    free(z.start2);
    free(z.sc);
    free(z.newm);
    free(z.wfj);
    free(z.h1);
    free(z.h2);
    free(z.mj);
    free(z.as2);
    dv_free(&z.front);
    dv_free(&z.next);
}

/* Wagner-Fischer on the (normalised or stripped) names, then the disambiguation:
 * the reference's aligned_wf.  ops are replaced. */
static void aligned_wf(aligner *A, const uint32_t *it1, size_t n1, const uint32_t *it2, size_t n2, int strip,
                       opvec *ops)
{
    A->wn1.n = A->wn2.n = 0;
    for (size_t i = 0; i < n1; i++)
        dv_push(&A->wn1, wf_name(A, 0, it1[i], strip));
    for (size_t j = 0; j < n2; j++)
        dv_push(&A->wn2, wf_name(A, 1, it2[j], strip));
    ops->n = 0;
    TL_GROW(ops->v, ops->cap, n1 + n2 + 1);
    int chunked = 0;
    ops->n = tl_diff_wf(A->wn1.v, n1, A->wn2.v, n2, A->d->opts.wf_max_cells, ops->v, &chunked);
    A->d->st.wf_runs++;
    A->d->st.wf_chunked += chunked;
    disambiguate(A, ops, it1, n1, it2, n2);
}

/* Phase 2's rule, also used again in phase 3: equal lengths and no launch on either
 * side align by position, whatever the names; otherwise aligned_wf. */
static void align_lists(aligner *A, const uint32_t *it1, size_t n1, const uint32_t *it2, size_t n2, opvec *ops)
{
    if (n1 == n2 && !any_launch(A, 0, it1, n1) && !any_launch(A, 1, it2, n2)) {
        ops->n = 0;
        for (size_t i = 0; i < n1; i++)
            ov_push(ops, TL_DIFF_MATCH, (uint32_t)i, (uint32_t)i);
    } else {
        aligned_wf(A, it1, n1, it2, n2, 0, ops);
    }
}

/* ---- phase 3: wrapper reconciliation ---------------------------------------------- */

static int recon_skip(const tl_tev *e) { return (e->kind == TL_TEV_KERNEL || e->kind == TL_TEV_RUNTIME) && !(e->flags & TL_TEV_GRAPH_LAUNCH); }

static uint64_t list_hash(const aligner *A, int k, const dvec *v)
{
    uint64_t h = tl_hash_mix(v->n);
    for (size_t i = 0; i < v->n; i++)
        h = tl_hash_mix(h ^ nid(A, k, v->v[i]));
    return h;
}

/* Which deletes (sub1) and inserts (sub2) are wrappers to be replaced by their GPU-path
 * children.  Returns 1 when any is. */
static int reconcile(aligner *A, const opvec *ops, const dvec *c1, const dvec *c2, uint8_t *sub1, uint8_t *sub2)
{
    dvec D = {0}, I = {0};
    for (size_t x = 0; x < ops->n; x++) {
        if (ops->v[x].kind == TL_DIFF_DELETE)
            dv_push(&D, ops->v[x].i);
        else if (ops->v[x].kind == TL_DIFF_INSERT)
            dv_push(&I, ops->v[x].j);
    }
    int any = 0;
    if (D.n && I.n) {
        /* only pairs of non-skipped nodes are looked at */
        size_t nd = 0, ni = 0;
        for (size_t x = 0; x < D.n; x++)
            if (!recon_skip(EV(A, 0, c1->v[D.v[x]])))
                D.v[nd++] = D.v[x];
        for (size_t x = 0; x < I.n; x++)
            if (!recon_skip(EV(A, 1, c2->v[I.v[x]])))
                I.v[ni++] = I.v[x];
        D.n = nd;
        I.n = ni;
    }
    if (D.n && I.n) {
        uint32_t s = next_stamp(A);
        uint32_t *ndel = A->mark[0], *nins = A->mark[1];
        for (size_t x = 0; x < D.n; x++)
            ndel[nid(A, 0, c1->v[D.v[x]])] = s;
        for (size_t x = 0; x < I.n; x++)
            nins[nid(A, 1, c2->v[I.v[x]])] = s;
        ndel[0] = nins[0] = 0; /* an empty name matches nothing here */
        dvec kids = {0};
        uint64_t *hd = tl_xmalloc(D.n * sizeof *hd);
        for (size_t x = 0; x < D.n; x++) {
            kids.n = 0;
            gpu_children(A, 0, c1->v[D.v[x]], &kids);
            for (size_t y = 0; y < kids.n; y++)
                if (nins[nid(A, 0, kids.v[y])] == s)
                    sub1[D.v[x]] = 1;
            hd[x] = kids.n ? list_hash(A, 0, &kids) : 0;
        }
        /* the deletes by their children's hash, for the equal-lists rule */
        tl_sort_item *hord = tl_xmalloc(D.n * sizeof *hord);
        for (size_t x = 0; x < D.n; x++)
            hord[x] = (tl_sort_item){hd[x], (uint32_t)x};
        tl_sort_items(hord, D.n, NULL);
        /* runinfo[start of a run of equal hashes]: 1 when all its lists are equal (2 once
         * its deletes are marked), 0 otherwise (a 64-bit collision: checked one by one) */
        uint8_t *runinfo = tl_xcalloc(D.n + 1, 1);
        {
            dvec rep = {0};
            for (size_t z = 0; z < D.n;) {
                size_t e = z + 1;
                rep.n = 0;
                gpu_children(A, 0, c1->v[D.v[hord[z].row]], &rep);
                int uniform = 1;
                for (; e < D.n && hord[e].key == hord[z].key; e++) {
                    kids.n = 0;
                    gpu_children(A, 0, c1->v[D.v[hord[e].row]], &kids);
                    int eq = kids.n == rep.n;
                    for (size_t y = 0; eq && y < kids.n; y++)
                        eq = nid(A, 0, kids.v[y]) == nid(A, 0, rep.v[y]);
                    uniform &= eq;
                }
                runinfo[z] = (uint8_t)uniform;
                z = e;
            }
            dv_free(&rep);
        }
        dvec ik = {0};
        for (size_t x = 0; x < I.n; x++) {
            ik.n = 0;
            gpu_children(A, 1, c2->v[I.v[x]], &ik);
            for (size_t y = 0; y < ik.n; y++)
                if (ndel[nid(A, 1, ik.v[y])] == s)
                    sub2[I.v[x]] = 1;
            if (!ik.n)
                continue;
            /* the deletes with this hash: a run of the sorted order */
            uint64_t h = list_hash(A, 1, &ik);
            size_t lo = 0, hi = D.n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (hd[hord[mid].row] < h)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < D.n && hd[hord[lo].row] == h && runinfo[lo] != 0) {
                /* a run whose lists are all equal: one comparison decides for all of it */
                kids.n = 0;
                gpu_children(A, 0, c1->v[D.v[hord[lo].row]], &kids);
                int eq = kids.n == ik.n;
                for (size_t y = 0; eq && y < kids.n; y++)
                    eq = nid(A, 0, kids.v[y]) == nid(A, 1, ik.v[y]);
                if (eq) {
                    sub2[I.v[x]] = 1;
                    if (runinfo[lo] == 1) {
                        for (size_t z = lo; z < D.n && hd[hord[z].row] == h; z++)
                            sub1[D.v[hord[z].row]] = 1;
                        runinfo[lo] = 2;
                    }
                }
                continue;
            }
            for (size_t z = lo; z < D.n && hd[hord[z].row] == h; z++) {
                size_t dz = hord[z].row;
                kids.n = 0;
                gpu_children(A, 0, c1->v[D.v[dz]], &kids);
                int eq = kids.n == ik.n;
                for (size_t y = 0; eq && y < kids.n; y++)
                    eq = nid(A, 0, kids.v[y]) == nid(A, 1, ik.v[y]);
                if (eq) {
                    sub1[D.v[dz]] = 1;
                    sub2[I.v[x]] = 1;
                }
            }
        }
        free(runinfo);
        free(hord);
        free(hd);
        dv_free(&kids);
        dv_free(&ik);
        for (size_t x = 0; x < D.n; x++)
            any |= sub1[D.v[x]];
        for (size_t x = 0; x < I.n; x++)
            any |= sub2[I.v[x]];
    }
    dv_free(&D);
    dv_free(&I);
    return any;
}

/* ---- one node ----------------------------------------------------------------------- */

/* Position maps over events: pos(k, e) = the last index of e in a list. */
static void pos_set(aligner *A, int k, uint32_t s, const dvec *v)
{
    for (size_t i = 0; i < v->n; i++) {
        A->d->s[k].pos_stamp[v->v[i]] = s;
        A->d->s[k].pos_val[v->v[i]] = (uint32_t)i;
    }
}
static uint32_t pos_get(const aligner *A, int k, uint32_t s, uint32_t e)
{
    return A->d->s[k].pos_stamp[e] == s ? A->d->s[k].pos_val[e] : UINT32_MAX;
}


/* Phase 1: when one side has a single child and the other a different count, the single
 * child collapses (collapse) and its node moves down to where it stops. */
static void collapse_single(aligner *A, uint32_t *u1, uint32_t *u2, dvec *c1, dvec *c2)
{
    if (c1->n == c2->n || (c1->n != 1 && c2->n != 1))
        return;
    int k = c1->n == 1 ? 0 : 1;
    dvec *c = k == 0 ? c1 : c2;
    dvec kids = {0};
    uint32_t stop = collapse(A, k, c->v[0], &kids);
    if (kids.n) {
        *(k == 0 ? u1 : u2) = stop;
        c->n = 0;
        for (size_t i = 0; i < kids.n; i++)
            dv_push(c, kids.v[i]);
    }
    dv_free(&kids);
}

/* Side k's children again, the substituted ones (sub) replaced by their GPU children,
 * in ts order. */
static void expand_substituted(aligner *A, int k, const dvec *c, const uint8_t *sub, dvec *r)
{
    for (size_t i = 0; i < c->n; i++) {
        if (sub[i])
            gpu_children(A, k, c->v[i], r);
        else
            dv_push(r, c->v[i]);
    }
    sort_by_ts(A, k, r->v, r->n);
}

/* The ops over the expanded lists r1, r2: the matches of ops whose nodes are still there,
 * then the nodes left free aligned again (or deleted and inserted when one side has none). */
static void realign_expanded(aligner *A, const opvec *ops, const dvec *c1, const dvec *c2, const dvec *r1, const dvec *r2,
                             opvec *nops)
{
    uint32_t s = next_stamp(A);
    pos_set(A, 0, s, r1);
    pos_set(A, 1, s, r2);
    uint8_t *pin1 = tl_xcalloc(r1->n + 1, 1), *pin2 = tl_xcalloc(r2->n + 1, 1);
    nops->n = 0;
    for (size_t x = 0; x < ops->n; x++) {
        if (ops->v[x].kind != TL_DIFF_MATCH)
            continue;
        uint32_t ri = pos_get(A, 0, s, c1->v[ops->v[x].i]), rj = pos_get(A, 1, s, c2->v[ops->v[x].j]);
        if (ri != UINT32_MAX && rj != UINT32_MAX) {
            ov_push(nops, TL_DIFF_MATCH, ri, rj);
            pin1[ri] = pin2[rj] = 1;
        }
    }
    dvec f1 = {0}, f2 = {0}, fi1 = {0}, fi2 = {0};
    for (size_t i = 0; i < r1->n; i++)
        if (!pin1[i]) {
            dv_push(&f1, (uint32_t)i);
            dv_push(&fi1, r1->v[i]);
        }
    for (size_t j = 0; j < r2->n; j++)
        if (!pin2[j]) {
            dv_push(&f2, (uint32_t)j);
            dv_push(&fi2, r2->v[j]);
        }
    if (f1.n && f2.n) {
        opvec fops = {0};
        align_lists(A, fi1.v, fi1.n, fi2.v, fi2.n, &fops);
        ov_push_mapped(nops, &fops, f1.v, f2.v);
        free(fops.v);
    } else {
        for (size_t i = 0; i < f1.n; i++)
            ov_push(nops, TL_DIFF_DELETE, f1.v[i], 0);
        for (size_t j = 0; j < f2.n; j++)
            ov_push(nops, TL_DIFF_INSERT, 0, f2.v[j]);
    }
    dv_free(&f1);
    dv_free(&f2);
    dv_free(&fi1);
    dv_free(&fi2);
    free(pin1);
    free(pin2);
}

/* Phase 3: when some child is left unmatched, reconcile may substitute nodes by their GPU
 * children; the lists are then expanded and aligned again (ops, c1, c2 replaced). */
static void substitute_phase(aligner *A, opvec *ops, dvec *c1, dvec *c2)
{
    int unmatched = 0;
    for (size_t x = 0; x < ops->n; x++)
        unmatched |= ops->v[x].kind != TL_DIFF_MATCH;
    if (!unmatched)
        return;
    uint8_t *sub1 = tl_xcalloc(c1->n + 1, 1), *sub2 = tl_xcalloc(c2->n + 1, 1);
    if (reconcile(A, ops, c1, c2, sub1, sub2)) {
        dvec r1 = {0}, r2 = {0};
        opvec nops = {0};
        expand_substituted(A, 0, c1, sub1, &r1);
        expand_substituted(A, 1, c2, sub2, &r2);
        realign_expanded(A, ops, c1, c2, &r1, &r2, &nops);
        free(ops->v);
        *ops = nops;
        dv_free(c1);
        *c1 = r1;
        dv_free(c2);
        *c2 = r2;
    }
    free(sub1);
    free(sub2);
}

/* The collapsed unmatched nodes col1, col2 aligned (aligned_wf on the normalised names),
 * and what that leaves unmatched on both sides aligned again on the stripped names:
 * the ops over col1, col2 into *cops. */
static void align_collapsed(aligner *A, const dvec *col1, const dvec *col2, opvec *cops)
{
    opvec fops = {0};
    aligned_wf(A, col1->v, col1->n, col2->v, col2->n, 0, &fops);
    dvec sci = {0}, scj = {0}, s1 = {0}, s2 = {0};
    for (size_t x = 0; x < fops.n; x++) {
        if (fops.v[x].kind == TL_DIFF_DELETE)
            dv_push(&sci, fops.v[x].i);
        else if (fops.v[x].kind == TL_DIFF_INSERT)
            dv_push(&scj, fops.v[x].j);
    }
    cops->n = 0;
    if (sci.n && scj.n) {
        for (size_t x = 0; x < fops.n; x++)
            if (fops.v[x].kind == TL_DIFF_MATCH)
                ov_push(cops, TL_DIFF_MATCH, fops.v[x].i, fops.v[x].j);
        for (size_t x = 0; x < sci.n; x++)
            dv_push(&s1, col1->v[sci.v[x]]);
        for (size_t x = 0; x < scj.n; x++)
            dv_push(&s2, col2->v[scj.v[x]]);
        opvec p2 = {0};
        aligned_wf(A, s1.v, s1.n, s2.v, s2.n, 1, &p2);
        ov_push_mapped(cops, &p2, sci.v, scj.v);
        free(p2.v);
    } else {
        for (size_t x = 0; x < fops.n; x++)
            ov_push(cops, fops.v[x].kind, fops.v[x].i, fops.v[x].j);
    }
    free(fops.v);
    dv_free(&sci);
    dv_free(&scj);
    dv_free(&s1);
    dv_free(&s2);
}

/* Phase 4: collapse each unmatched node and align the collapsed ones again; the matches
 * of ops stay, the collapsed nodes take their unmatched ones' places in c1, c2. */
static void collapse_unmatched(aligner *A, opvec *ops, dvec *c1, dvec *c2)
{
    dvec U1 = {0}, U2 = {0};
    for (size_t x = 0; x < ops->n; x++) {
        if (ops->v[x].kind == TL_DIFF_DELETE)
            dv_push(&U1, ops->v[x].i);
        else if (ops->v[x].kind == TL_DIFF_INSERT)
            dv_push(&U2, ops->v[x].j);
    }
    if (U1.n && U2.n) {
        dvec col1 = {0}, col2 = {0};
        for (size_t x = 0; x < U1.n; x++)
            dv_push(&col1, collapse(A, 0, c1->v[U1.v[x]], NULL));
        for (size_t x = 0; x < U2.n; x++)
            dv_push(&col2, collapse(A, 1, c2->v[U2.v[x]], NULL));
        opvec cops = {0}, nops = {0};
        align_collapsed(A, &col1, &col2, &cops);
        for (size_t x = 0; x < ops->n; x++)
            if (ops->v[x].kind == TL_DIFF_MATCH)
                ov_push(&nops, TL_DIFF_MATCH, ops->v[x].i, ops->v[x].j);
        for (size_t x = 0; x < cops.n; x++) {
            op_t o = cops.v[x];
            uint32_t oi = o.kind != TL_DIFF_INSERT ? U1.v[o.i] : 0, oj = o.kind != TL_DIFF_DELETE ? U2.v[o.j] : 0;
            if (o.kind != TL_DIFF_INSERT)
                c1->v[oi] = col1.v[o.i];
            if (o.kind != TL_DIFF_DELETE)
                c2->v[oj] = col2.v[o.j];
            ov_push(&nops, o.kind, oi, oj);
        }
        free(ops->v);
        *ops = nops;
        free(cops.v);
        dv_free(&col1);
        dv_free(&col2);
    }
    dv_free(&U1);
    dv_free(&U2);
}

/* The children pairs of the merged node (u1, u2), in alignment order, appended to
 * A->pairs; *u1, *u2 may move down (phase 1). */
static void merge_children(aligner *A, uint32_t *pu1, uint32_t *pu2)
{
    dvec c1 = {0}, c2 = {0};
    opvec ops = {0};
    children_with_missing(A, *pu1, *pu2, &c1, &c2);
    collapse_single(A, pu1, pu2, &c1, &c2);
    /* phase 2 */
    align_lists(A, c1.v, c1.n, c2.v, c2.n, &ops);
    substitute_phase(A, &ops, &c1, &c2);
    collapse_unmatched(A, &ops, &c1, &c2);
    for (size_t x = 0; x < ops.n; x++) {
        op_t o = ops.v[x];
        dv_push(&A->pairs, o.kind != TL_DIFF_INSERT ? c1.v[o.i] : TL_TEV_NONE);
        dv_push(&A->pairs, o.kind != TL_DIFF_DELETE ? c2.v[o.j] : TL_TEV_NONE);
    }
    dv_free(&c1);
    dv_free(&c2);
    free(ops.v);
}

/* ---- the merge ---------------------------------------------------------------------- */

static uint64_t pair_key(uint32_t a, uint32_t b) { return ((uint64_t)a << 32) | b; }

/* The displaced pairs' table: its slot for key (empty or holding it). */
static size_t pair_slot(const aligner *A, uint64_t key)
{
    size_t i = (size_t)tl_hash_mix(key) & A->pmask; /* every bit of both halves mixed in */
    while (A->pv[i] != UINT32_MAX && A->pk[i] != key)
        i = (i + 1) & A->pmask;
    return i;
}

static void pair_grow(aligner *A)
{
    uint64_t *ok = A->pk;
    uint32_t *ovv = A->pv;
    size_t on = ok ? A->pmask + 1 : 0, cap = on ? on * 2 : 1024;
    A->pk = tl_xmalloc(cap * sizeof *A->pk);
    A->pv = tl_xmalloc_filled(cap * sizeof *A->pv);
    memset(A->pv, 0xff, cap * sizeof *A->pv);
    A->pmask = cap - 1;
    for (size_t i = 0; i < on; i++)
        if (ovv[i] != UINT32_MAX) {
            size_t j = pair_slot(A, ok[i]);
            A->pk[j] = ok[i];
            A->pv[j] = ovv[i];
        }
    free(ok);
    free(ovv);
}

static void displaced_put(aligner *A, uint32_t a, uint32_t b, uint32_t id)
{
    if (!A->pk || (A->pn + 1) * 2 > A->pmask)
        pair_grow(A);
    size_t slot = pair_slot(A, pair_key(a, b));
    A->pk[slot] = pair_key(a, b);
    A->pv[slot] = id;
    A->pn++;
}

/* The merged id of the pair (a, b), or UINT32_MAX when it has not been entered.  A pair
 * with an event on side 1 is found through that event, (none, b) through b. */
static uint32_t pair_find(const aligner *A, uint32_t a, uint32_t b)
{
    const tl_diff *d = A->d;
    if (a != TL_TEV_NONE ? d->partner[0][a] == b : d->partner[1][b] == TL_TEV_NONE)
        return a != TL_TEV_NONE ? A->node_of[0][a] : A->node_of[1][b];
    if (!A->pn)
        return UINT32_MAX;
    size_t slot = pair_slot(A, pair_key(a, b));
    return A->pv[slot];
}

/* Note the pair (a, b) entered as merged id `id`.  A pair whose event is entered again
 * with another partner moves to the displaced pairs' table. */
static void pair_note(aligner *A, uint32_t a, uint32_t b, uint32_t id)
{
    tl_diff *d = A->d;
    if (a != TL_TEV_NONE) {
        uint32_t was = d->partner[0][a];
        if (was != UINT32_MAX - 1)
            displaced_put(A, a, was, A->node_of[0][a]);
        d->partner[0][a] = b;
        A->node_of[0][a] = id;
    }
    if (b != TL_TEV_NONE) {
        if (d->partner[1][b] == TL_TEV_NONE) /* (none, b) is found through b: no more */
            displaced_put(A, TL_TEV_NONE, b, A->node_of[1][b]);
        d->partner[1][b] = a;
        A->node_of[1][b] = id;
    }
}

/* Enter the pair (u1, u2): a new merged node (pre-order id), its children pairs pushed
 * as a new frame.  Returns its id. */
static uint32_t enter(aligner *A, uint32_t u1, uint32_t u2)
{
    tl_diff *d = A->d;
    TL_GROW_AHEAD(d->nodes, d->capnodes, d->nnodes + 1, A->nodes_mapped);
    uint32_t id = (uint32_t)d->nnodes++;
    pair_note(A, u1, u2, id);
    dv_push(&A->pbase, (uint32_t)A->pairs.n);
    merge_children(A, &u1, &u2);
    tl_diff_node *nd = &d->nodes[id];
    nd->ev1 = u1;
    nd->ev2 = u2;
    nd->type = u1 != TL_TEV_NONE && u2 != TL_TEV_NONE ? TL_DIFF_COMBINED : u1 != TL_TEV_NONE ? TL_DIFF_TRACE1 : TL_DIFF_TRACE2;
    nd->kid0 = nd->nkid = 0;
    dv_push(&A->pnext, A->pbase.v[A->pbase.n - 1]);
    dv_push(&A->pnode, id);
    dv_push(&A->kbase, (uint32_t)A->kidstack.n);
    return id;
}

/* Merge the pair (u1, u2) and everything below it.  Returns its merged id. */
static uint32_t merge(aligner *A, uint32_t u1, uint32_t u2)
{
    tl_diff *d = A->d;
    uint32_t known = pair_find(A, u1, u2);
    if (known != UINT32_MAX)
        return known;
    size_t depth0 = A->pnode.n;
    uint32_t top = enter(A, u1, u2);
    while (A->pnode.n > depth0) {
        size_t f = A->pnode.n - 1;
        uint32_t next = A->pnext.v[f];
        if (next < A->pairs.n) {
            uint32_t a = A->pairs.v[next], b = A->pairs.v[next + 1];
            A->pnext.v[f] = next + 2;
            uint32_t kid = pair_find(A, a, b);
            if (kid != UINT32_MAX) {
                dv_push(&A->kidstack, kid);
            } else {
                /* the child's id goes on this frame's list before the child's own frame */
                dv_push(&A->kidstack, (uint32_t)d->nnodes);
                enter(A, a, b);
            }
            continue;
        }
        /* this frame is done: its children ids move to the kids array */
        uint32_t id = A->pnode.v[f];
        size_t kb = A->kbase.v[f];
        d->nodes[id].kid0 = (uint32_t)d->kids.n;
        d->nodes[id].nkid = (uint32_t)(A->kidstack.n - kb);
        for (size_t x = kb; x < A->kidstack.n; x++)
            dv_push(&d->kids, A->kidstack.v[x]);
        A->kidstack.n = kb;
        A->pairs.n = A->pbase.v[f];
        A->pbase.n--;
        A->pnext.n--;
        A->pnode.n--;
        A->kbase.n--;
    }
    return top;
}

/* The top-level node of a cpu root (the reference's _get_top_level_root): up to the top,
 * then down while there is exactly one child that is neither a cpu_op nor a launch. */
static uint32_t top_level_root(const tl_trace *t, uint32_t e)
{
    while (t->ev[e].parent != TL_TEV_NONE)
        e = t->ev[e].parent;
    for (;;) {
        if (t->ev[e].nchild != 1)
            return e;
        uint32_t c = tl_tev_children(t, e)[0];
        const tl_tev *ce = &t->ev[c];
        if (ce->kind == TL_TEV_CPU_OP || ev_is_launch(ce))
            return e;
        e = c;
    }
}

void tl_diff_align(tl_diff *d)
{
    aligner A = {0};
    A.d = d;
    A.nnorm = d->norm.n;
    for (int i = 0; i < 6; i++)
        A.mark[i] = tl_xcalloc(A.nnorm, sizeof *A.mark[i]);
    for (int k = 0; k < 2; k++) {
        A.val[k] = tl_xcalloc(A.nnorm, sizeof *A.val[k]);
        A.cnt[k] = tl_xcalloc(A.nnorm, sizeof *A.cnt[k]);
        size_t nev = d->s[k].t->nev ? d->s[k].t->nev : 1;
        d->s[k].pos_stamp = tl_xcalloc(nev, sizeof *d->s[k].pos_stamp);
        d->s[k].pos_val = tl_xmalloc(nev * sizeof *d->s[k].pos_val);
        d->partner[k] = tl_xmalloc_filled(nev * sizeof *d->partner[k]);
        for (size_t e = 0; e < nev; e++)
            d->partner[k][e] = UINT32_MAX - 1;
        A.node_of[k] = tl_xmalloc(nev * sizeof *A.node_of[k]); /* read only where partner says it is set */
    }

    /* roots: each cpu root's top-level node, deduplicated, paired by position */
    dvec roots[2] = {{0}, {0}};
    for (int k = 0; k < 2; k++) {
        const tl_trace *t = d->s[k].t;
        uint8_t *seen = tl_xcalloc(t->nev ? t->nev : 1, 1);
        for (size_t r = 0; r < t->nroots; r++) {
            uint32_t top = top_level_root(t, t->roots[r]);
            if (!seen[top]) {
                seen[top] = 1;
                dv_push(&roots[k], top);
            }
        }
        free(seen);
    }
    size_t n = roots[0].n > roots[1].n ? roots[0].n : roots[1].n;
    for (size_t i = 0; i < n; i++) {
        /* a cancelled run leaves the merge unfinished: tl_diff_run drops it */
        if ((i & 63) == 0 && diff_cancelled(d))
            break;
        uint32_t a = i < roots[0].n ? roots[0].v[i] : TL_TEV_NONE, b = i < roots[1].n ? roots[1].v[i] : TL_TEV_NONE;
        dv_push(&d->roots, merge(&A, a, b));
    }
    dv_free(&roots[0]);
    dv_free(&roots[1]);

    for (size_t i = 0; i < d->nnodes; i++) {
        d->st.combined += d->nodes[i].type == TL_DIFF_COMBINED;
        d->st.trace1_only += d->nodes[i].type == TL_DIFF_TRACE1;
        d->st.trace2_only += d->nodes[i].type == TL_DIFF_TRACE2;
    }
    d->st.nodes = d->nnodes;

    for (int i = 0; i < 6; i++)
        free(A.mark[i]);
    for (int k = 0; k < 2; k++) {
        free(A.val[k]);
        free(A.cnt[k]);
    }
    dvec *vs[] = {&A.all1, &A.all2, &A.kids, &A.wn1, &A.wn2, &A.sorttmp, &A.amb, &A.idx1, &A.idx2, &A.lev,
                  &A.levoff, &A.pairs, &A.pbase, &A.pnext, &A.pnode, &A.kidstack, &A.kbase};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
        dv_free(vs[i]);
    free(A.wfops.v);
    free(A.keep.v);
    free(A.pk);
    free(A.pv);
    free(A.node_of[0]);
    free(A.node_of[1]);
}
