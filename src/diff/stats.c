/*
 * stats.c - what the merged tree says about the GPU work (TRACES.md §5.2, §6):
 * diff_stats (one row per GPU event per LCA), the LCAs of lca_summary, the unique-args
 * summary and the cpu_op maps' renaming.
 */
#include "diff/diff_int.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdio.h>

double tl_diff_busy(const tl_trace *t, const uint32_t *ev, size_t n)
{
    if (n == 0)
        return 0.0;
    tl_sort_item *it = tl_xmalloc(n * sizeof *it);
    for (size_t i = 0; i < n; i++)
        it[i] = (tl_sort_item){tl_sort_key_double(t->ev[ev[i]].ts), (uint32_t)i};
    if (n > 1)
        tl_sort_items(it, n, NULL);
    double sum = 0.0, s = t->ev[ev[it[0].row]].ts, e = tl_tev_end(&t->ev[ev[it[0].row]]);
    for (size_t i = 1; i < n; i++) {
        const tl_tev *x = &t->ev[ev[it[i].row]];
        if (x->ts <= e) {
            if (tl_tev_end(x) > e)
                e = tl_tev_end(x);
        } else {
            sum += e - s;
            s = x->ts;
            e = tl_tev_end(x);
        }
    }
    sum += e - s;
    free(it);
    return sum;
}

/* numpy's round(x, 3): rint(x * 1000) / 1000. */
static double round3(double x) { return rint(x * 1000.0) / 1000.0; }

/* The nearest cpu_op above a GPU event, or TL_TEV_NONE. */
static uint32_t cpu_op_above(const tl_trace *t, uint32_t e)
{
    for (uint32_t p = t->ev[e].parent; p != TL_TEV_NONE; p = t->ev[p].parent)
        if (t->ev[p].kind == TL_TEV_CPU_OP)
            return p;
    return TL_TEV_NONE;
}

/* A name's identity by content; an empty name is shown as the event's UID, which tells
 * events apart as their names would. */
static uint32_t name_key(const tl_diff *d, int side, uint32_t e)
{
    const char *s = d->s[side].t->ev[e].name;
    return s && *s ? d->s[side].nm[e] : 0x80000000u | d->s[side].t->ev[e].uid;
}

static void emit_rows(tl_diff *d, int side, const dvec *g, uint32_t lca, const char *lca_name)
{
    const tl_trace *t = d->s[side].t;
    double busy = round3(tl_diff_busy(t, g->v, g->n));
    for (size_t i = 0; i < g->n; i++) {
        uint32_t cpu = cpu_op_above(t, g->v[i]);
        if (cpu == TL_TEV_NONE)
            continue;
        TL_GROW_AHEAD(d->rows, d->caprows, d->nrows + 1, d->rows_mapped);
        d->rows[d->nrows++] = (tl_diff_row){g->v[i], cpu, lca, (uint8_t)side, busy, lca_name,
                                            tl_diff_op_name(d, side, g->v[i]), tl_diff_op_name(d, side, cpu),
                                            name_key(d, side, g->v[i]), name_key(d, side, cpu)};
        if (lca == UINT32_MAX)
            d->lca_missing = 1;
    }
}

static void add_gpu_events(const tl_trace *t, uint32_t e, dvec *g)
{
    const uint32_t *x = tl_tev_gpu(t, e);
    for (uint32_t i = 0; i < t->ev[e].ngpu; i++)
        dv_push(g, x[i]);
}

/* The walk of generate_diff_stats, depth first from the roots. */
static void collect_rows(tl_diff *d)
{
    const tl_trace *t1 = d->s[0].t, *t2 = d->s[1].t;
    uint8_t *visited = tl_xcalloc(d->nnodes ? d->nnodes : 1, 1);
    dvec stack = {0}, g1 = {0}, g2 = {0};
    tl_buf b1 = {0};
    for (size_t r = d->roots.n; r-- > 0;) {
        dv_push(&stack, d->roots.v[r]);
        dv_push(&stack, UINT32_MAX);
    }
    while (stack.n) {
        uint32_t parent = stack.v[--stack.n], id = stack.v[--stack.n];
        if (visited[id])
            continue;
        const tl_diff_node *nd = &d->nodes[id];
        const uint32_t *kids = nd->nkid ? d->kids.v + nd->kid0 : NULL;
        if (nd->type != TL_DIFF_COMBINED) {
            int side = nd->type == TL_DIFF_TRACE1 ? 0 : 1;
            uint32_t e = side ? nd->ev2 : nd->ev1;
            const tl_trace *t = d->s[side].t;
            if (ev_gpu_path(t, e)) {
                const char *lname = NULL;
                uint32_t lid = UINT32_MAX;
                if (parent != UINT32_MAX) {
                    lid = parent;
                    lname = tl_diff_lca_name(d, side, side ? d->nodes[parent].ev2 : d->nodes[parent].ev1);
                }
                g1.n = 0;
                add_gpu_events(t, e, &g1);
                emit_rows(d, side, &g1, lid, lname);
            }
            visited[id] = 1;
            continue;
        }
        int gp1 = ev_gpu_path(t1, nd->ev1), gp2 = ev_gpu_path(t2, nd->ev2);
        if (gp1 && gp2) {
            int any = 0;
            for (uint32_t k = 0; k < nd->nkid && !any; k++) {
                const tl_diff_node *c = &d->nodes[kids[k]];
                any = (c->type == TL_DIFF_TRACE1 && ev_gpu_path(t1, c->ev1)) ||
                      (c->type == TL_DIFF_TRACE2 && ev_gpu_path(t2, c->ev2));
            }
            const tl_tev *e1 = &t1->ev[nd->ev1], *e2 = &t2->ev[nd->ev2];
            if (any || (ev_is_kernel(e1) && ev_is_kernel(e2))) {
                const char *n1 = tl_diff_lca_name(d, 0, nd->ev1), *n2 = tl_diff_lca_name(d, 1, nd->ev2);
                const char *lname = n1;
                if (strcmp(n1, n2) != 0)
                    lname = tl_arena_printf(&d->arena, "%s | %s", n1, n2);
                g1.n = g2.n = 0;
                for (uint32_t k = 0; k < nd->nkid; k++) {
                    const tl_diff_node *c = &d->nodes[kids[k]];
                    if (c->type == TL_DIFF_TRACE1 && ev_gpu_path(t1, c->ev1)) {
                        add_gpu_events(t1, c->ev1, &g1);
                        if (ev_is_kernel(&t1->ev[c->ev1]))
                            dv_push(&g1, c->ev1);
                    } else if (c->type == TL_DIFF_TRACE2 && ev_gpu_path(t2, c->ev2)) {
                        add_gpu_events(t2, c->ev2, &g2);
                        if (ev_is_kernel(&t2->ev[c->ev2]))
                            dv_push(&g2, c->ev2);
                    }
                }
                if (ev_is_kernel(e1))
                    dv_push(&g1, nd->ev1);
                if (ev_is_kernel(e2))
                    dv_push(&g2, nd->ev2);
                emit_rows(d, 0, &g1, id, lname);
                emit_rows(d, 1, &g2, id, lname);
                visited[id] = 1;
                for (uint32_t k = 0; k < nd->nkid; k++) {
                    const tl_diff_node *c = &d->nodes[kids[k]];
                    if ((c->type == TL_DIFF_TRACE1 && ev_gpu_path(t1, c->ev1)) ||
                        (c->type == TL_DIFF_TRACE2 && ev_gpu_path(t2, c->ev2)))
                        visited[kids[k]] = 1;
                }
            }
        }
        if (gp1 || gp2)
            for (uint32_t k = nd->nkid; k-- > 0;) {
                dv_push(&stack, kids[k]);
                dv_push(&stack, id);
            }
    }
    free(visited);
    dv_free(&stack);
    dv_free(&g1);
    dv_free(&g2);
    tl_buf_free(&b1);
}

static int str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return a == b || strcmp(a, b) == 0;
}

/* Two rows equal but for their source (DataFrame.equals of the two halves). */
static int rows_equal(const tl_diff *d, const tl_diff_row *a, const tl_diff_row *b)
{
    const tl_tev *ga = &d->s[a->side].t->ev[a->gpu], *gb = &d->s[b->side].t->ev[b->gpu];
    const tl_tev *ca = &d->s[a->side].t->ev[a->cpu], *cb = &d->s[b->side].t->ev[b->cpu];
    const tl_tev_aux *xa = tl_tev_x(d->s[a->side].t, ca), *xb = tl_tev_x(d->s[b->side].t, cb);
    return a->name_id == b->name_id && a->cpu_name_id == b->cpu_name_id &&
           ca->uid == cb->uid && str_eq(xa->args->input_dims, xb->args->input_dims) &&
           str_eq(xa->args->input_strides, xb->args->input_strides) && str_eq(xa->args->input_type, xb->args->input_type) &&
           str_eq(xa->args->concrete_inputs, xb->args->concrete_inputs) &&
           (ga->dur == gb->dur || (isnan(ga->dur) && isnan(gb->dur))) && a->busy == b->busy &&
           str_eq(a->lca_name, b->lca_name) && a->lca == b->lca && ga->uid == gb->uid;
}

static void check_identical(tl_diff *d)
{
    size_t n1 = 0, n2 = 0;
    for (size_t i = 0; i < d->nrows; i++)
        *(d->rows[i].side ? &n2 : &n1) += 1;
    if (d->nrows == 0) {
        d->identical = 1; /* the reference: "No GPU events found in either trace" */
        return;
    }
    if (n1 != n2) {
        d->identical = 0;
        return;
    }
    size_t i = 0, j = 0;
    for (;;) {
        while (i < d->nrows && d->rows[i].side != 0)
            i++;
        while (j < d->nrows && d->rows[j].side != 1)
            j++;
        if (i >= d->nrows || j >= d->nrows)
            break;
        if (!rows_equal(d, &d->rows[i], &d->rows[j])) {
            d->identical = 0;
            return;
        }
        i++, j++;
    }
    d->identical = 1;
}

/* ---- the LCAs ----------------------------------------------------------------------- */

/* The distinct cpu_op names of rows[idx[0..n)] in order: one, or " | ".join(sorted). */
static int str_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static const char *op_names(tl_diff *d, const size_t *idx, size_t n)
{
    const char **v = tl_xmalloc((n ? n : 1) * sizeof *v);
    dstrtab seen = {0};
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_diff_row *r = &d->rows[idx[i]];
        const char *s = r->cpu_name;
        if (tl_dst_intern(&seen, s, strlen(s), NULL) == k)
            v[k++] = s;
    }
    tl_dst_free(&seen);
    const char *out = "";
    if (k == 1) {
        out = v[0];
    } else if (k > 1) {
        qsort(v, k, sizeof *v, str_cmp);
        tl_buf b = {0};
        for (size_t i = 0; i < k; i++) {
            if (i)
                tl_buf_adds(&b, " | ");
            tl_buf_adds(&b, v[i]);
        }
        out = tl_arena_strdup(&d->arena, tl_buf_cstr(&b));
        tl_buf_free(&b);
    }
    free(v);
    return out;
}

/* The cpu_op an LCA node stands for on side k: the node's event, or the nearest cpu_op
 * above it ("" for none). */
static const char *lca_cpu_op(tl_diff *d, int k, uint32_t e)
{
    const tl_trace *t = d->s[k].t;
    while (e != TL_TEV_NONE && t->ev[e].kind != TL_TEV_CPU_OP)
        e = t->ev[e].parent;
    return e == TL_TEV_NONE ? "" : tl_diff_lca_name(d, k, e);
}

static void collect_lcas(tl_diff *d)
{
    /* group the rows by LCA id, in first-appearance order */
    uint32_t *slot = tl_xmalloc((d->nnodes ? d->nnodes : 1) * sizeof *slot);
    for (size_t i = 0; i < d->nnodes; i++)
        slot[i] = UINT32_MAX;
    size_t n = 0;
    size_t *count = NULL, cap = 0;
    for (size_t r = 0; r < d->nrows; r++) {
        uint32_t l = d->rows[r].lca;
        if (l == UINT32_MAX)
            continue;
        if (slot[l] == UINT32_MAX) {
            slot[l] = (uint32_t)n++;
            TL_GROW(count, cap, n);
            count[n - 1] = 0;
        }
        count[slot[l]]++;
    }
    size_t *start = tl_xcalloc(n + 1, sizeof *start), *fill = tl_xcalloc(n + 1, sizeof *fill);
    for (size_t i = 0; i < n; i++)
        start[i + 1] = start[i] + count[i];
    size_t *rows = tl_xmalloc((start[n] ? start[n] : 1) * sizeof *rows);
    for (size_t r = 0; r < d->nrows; r++) {
        uint32_t l = d->rows[r].lca;
        if (l != UINT32_MAX) {
            size_t g = slot[l];
            rows[start[g] + fill[g]++] = r;
        }
    }
    tl_diff_lca *lc = tl_xcalloc(n ? n : 1, sizeof *lc);
    size_t *side1 = tl_xmalloc((start[n] ? start[n] : 1) * sizeof *side1);
    size_t *side2 = tl_xmalloc((start[n] ? start[n] : 1) * sizeof *side2);
    for (size_t g = 0; g < n; g++) {
        size_t k1 = 0, k2 = 0;
        for (size_t x = start[g]; x < start[g + 1]; x++) {
            if (d->rows[rows[x]].side == 0)
                side1[k1++] = rows[x];
            else
                side2[k2++] = rows[x];
        }
        tl_diff_lca *l = &lc[g];
        l->id = d->rows[rows[start[g]]].lca;
        l->lca_name = d->rows[rows[start[g]]].lca_name;
        l->name1 = op_names(d, side1, k1);
        l->name2 = op_names(d, side2, k2);
        l->name = k1 ? l->name1 : k2 ? l->name2 : "unknown";
        l->n1 = k1;
        l->n2 = k2;
        l->time1 = k1 ? d->rows[side1[0]].busy : 0.0;
        l->time2 = k2 ? d->rows[side2[0]].busy : 0.0;
        l->row1 = k1 ? side1[0] : SIZE_MAX;
        l->row2 = k2 ? side2[0] : SIZE_MAX;
        l->op1 = lca_cpu_op(d, 0, d->nodes[l->id].ev1);
        l->op2 = lca_cpu_op(d, 1, d->nodes[l->id].ev2);
    }
    /* lca_summary's order: trace1's time, largest first, as pandas sorts it */
    size_t *ord = tl_xmalloc((n ? n : 1) * sizeof *ord);
    double *keys = tl_xmalloc_filled((n ? n : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = lc[i].time1;
    tl_pd_sort_desc(keys, n, ord); /* pandas' default sort: its ties show in the cumulative column */
    free(keys);
    d->lcas = tl_xmalloc_filled((n ? n : 1) * sizeof *d->lcas);
    for (size_t i = 0; i < n; i++)
        d->lcas[i] = lc[ord[i]];
    d->nlcas = n;
    free(ord);
    free(lc);
    free(side1);
    free(side2);
    free(rows);
    free(start);
    free(fill);
    free(count);
    free(slot);
}

/* ---- the unique-args summary -------------------------------------------------------- */

/* The key of a row's group: everything but kernel_time (and the dropped id columns). */
typedef struct gkey {
    uint8_t side;
    uint32_t cpu;
    uint32_t kname;  /* names index of the kernel (content) */
    uint64_t busy;   /* bits */
    uint32_t lname;  /* interned LCA name, UINT32_MAX for none */
} gkey;

typedef struct gsort {
    tl_diff *d;
    char **text; /* per group: the str() of each column, as the reference compares them */
} gsort;

enum { G_NAME, G_COUNT, G_OPNAME, G_UID, G_SOURCE, G_DIMS, G_STRIDES, G_TYPE, G_CONCRETE, G_BUSY, G_LCA, G_STACK,
       G_PARENT, G_MEAN, G_NCOLS };

static const char *fmt_double_arena(tl_arena *a, double x)
{
    if (isnan(x))
        return "nan";
    char buf[TL_NUMFMT_MAX];
    size_t n = tl_fmt_double(x, buf);
    return tl_arena_strndup(a, buf, n);
}

/* Two groups of one kernel_time_sum, by their other columns' text. */
static int group_text_cmp(size_t a, size_t b, void *ctx)
{
    const gsort *g = ctx;
    for (int c = 0; c < G_NCOLS; c++) {
        const char *p = g->text[a * G_NCOLS + c], *q = g->text[b * G_NCOLS + c];
        int r = p == q ? 0 : strcmp(p, q); /* a name its events share is one string */
        if (r)
            return r;
    }
    return 0;
}

static int group_cmp(size_t a, size_t b, void *ctx)
{
    const gsort *g = ctx;
    const dgroup *x = &g->d->groups[a], *y = &g->d->groups[b];
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return group_text_cmp(a, b, ctx);
}

/* The sort of a large pair's groups is the longest step here (a quarter of a second on two
 * 1 GB traces): it gives up when the run is cancelled (tl_diff_group_rows then fails, and
 * tl_diff_run drops the diff). */
static int group_sort_stopped(void *ctx) { return diff_cancelled(((const gsort *)ctx)->d); }

/* ord[0..ng) in group_cmp's order, stably.  Most comparisons are settled by the sum, so
 * the sums are radix-sorted first as compact keys (a comparison sort of the groups
 * themselves waits on memory at each step), then each run of equal sums by its text.
 * NaN sums have no key: then the comparison sort does it all. */
static void sort_groups(size_t *ord, size_t ng, gsort *ctx)
{
    const dgroup *gs = ctx->d->groups;
    size_t nan = 0;
    for (size_t i = 0; i < ng; i++)
        nan += isnan(gs[i].sum);
    if (nan) {
        (void)tl_sort_rows_until(ord, ng, group_cmp, group_sort_stopped, ctx);
        return;
    }
    tl_sort_item *it = tl_xmalloc((ng ? ng : 1) * sizeof *it);
    for (size_t i = 0; i < ng; i++)
        it[i] = (tl_sort_item){~tl_sort_key_double(gs[i].sum), (uint32_t)i}; /* descending */
    tl_sort_items(it, ng, NULL);
    for (size_t i = 0; i < ng; i++)
        ord[i] = it[i].row;
    for (size_t lo = 0, hi; lo < ng; lo = hi) {
        for (hi = lo + 1; hi < ng && it[hi].key == it[lo].key; hi++)
            ;
        if (hi - lo > 1 && tl_sort_rows_until(ord + lo, hi - lo, group_text_cmp, group_sort_stopped, ctx) != 0)
            break;
    }
    free(it);
}

static const char *or_empty(const char *s) { return s ? s : ""; }


static uint64_t gkey_hash(const gkey *k)
{
    return tl_hash_mix(tl_hash_mix(tl_hash_mix(((uint64_t)k->cpu << 32 | k->kname) ^ k->side) ^ k->busy) ^ k->lname);
}

static void unique_args(tl_diff *d)
{
    /* the LCA names by content, for the group keys */
    dstrtab lt = {0};
    size_t ng = 0, capg = 0;
    dgroup *gs = NULL;
    gkey *keys = NULL;
    size_t capk = 0;
    uint32_t *slots = NULL;
    size_t mask = 0;
    for (size_t r = 0; r < d->nrows; r++) {
        const tl_diff_row *row = &d->rows[r];
        gkey k;
        memset(&k, 0, sizeof k);
        k.side = row->side;
        k.cpu = row->cpu;
        k.kname = row->name_id;
        double bz = row->busy == 0 ? 0.0 : row->busy;
        memcpy(&k.busy, &bz, sizeof bz);
        k.lname = row->lca_name ? tl_dst_intern(&lt, row->lca_name, strlen(row->lca_name), NULL) : UINT32_MAX;
        if (ng * 2 >= mask) {
            size_t cap = mask ? (mask + 1) * 2 : 1024;
            free(slots);
            slots = tl_xmalloc(cap * sizeof *slots);
            memset(slots, 0xff, cap * sizeof *slots);
            mask = cap - 1;
            for (size_t i = 0; i < ng; i++) {
                size_t s = (size_t)gkey_hash(&keys[i]) & mask;
                while (slots[s] != UINT32_MAX)
                    s = (s + 1) & mask;
                slots[s] = (uint32_t)i;
            }
        }
        size_t s = (size_t)gkey_hash(&k) & mask;
        uint32_t found = UINT32_MAX;
        for (; slots[s] != UINT32_MAX; s = (s + 1) & mask) {
            const gkey *o = &keys[slots[s]];
            if (o->side == k.side && o->cpu == k.cpu && o->kname == k.kname && o->busy == k.busy && o->lname == k.lname) {
                found = slots[s];
                break;
            }
        }
        if (found == UINT32_MAX) {
            found = (uint32_t)ng;
            slots[s] = found;
            TL_GROW(keys, capk, ng + 1);
            TL_GROW(gs, capg, ng + 1);
            keys[ng] = k;
            memset(&gs[ng], 0, sizeof gs[ng]);
            gs[ng].first = r;
            ng++;
        }
        /* pandas' grouped sum: Kahan-compensated */
        dgroup *g = &gs[found];
        double v = d->s[row->side].t->ev[row->gpu].dur;
        double y = v - g->comp, t = g->sum + y;
        g->comp = t - g->sum - y;
        g->sum = t;
        g->count++;
    }
    for (size_t i = 0; i < ng; i++)
        gs[i].mean = gs[i].sum / (double)gs[i].count;
    free(slots);
    free(keys);
    tl_dst_free(&lt);
    d->groups = gs;
    d->ngroups = ng;

    /* the order: kernel_time_sum descending, then every other column as text */
    gsort ctx = {d, tl_xmalloc_filled((ng ? ng : 1) * G_NCOLS * sizeof(char *))};
    for (size_t i = 0; i < ng; i++) {
        const tl_diff_row *row = &d->rows[gs[i].first];
        const tl_tev *cpu = &d->s[row->side].t->ev[row->cpu];
        char **t = ctx.text + i * G_NCOLS;
        t[G_NAME] = (char *)row->name;
        t[G_COUNT] = tl_arena_printf(&d->arena, "%zu", gs[i].count);
        t[G_OPNAME] = (char *)row->cpu_name;
        t[G_UID] = tl_arena_printf(&d->arena, "%u", (unsigned)cpu->uid);
        t[G_SOURCE] = row->side ? "trace2" : "trace1";
        const tl_tev_aux *cx = tl_tev_x(d->s[row->side].t, cpu);
        t[G_DIMS] = (char *)or_empty(cx->args->input_dims);
        t[G_STRIDES] = (char *)or_empty(cx->args->input_strides);
        t[G_TYPE] = (char *)or_empty(cx->args->input_type);
        t[G_CONCRETE] = (char *)or_empty(cx->args->concrete_inputs);
        t[G_BUSY] = (char *)fmt_double_arena(&d->arena, row->busy);
        t[G_LCA] = (char *)(row->lca_name ? row->lca_name : "nan");
        t[G_STACK] = "root";
        t[G_PARENT] = "root";
        t[G_MEAN] = (char *)fmt_double_arena(&d->arena, gs[i].mean);
    }
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t i = 0; i < ng; i++)
        ord[i] = i;
    sort_groups(ord, ng, &ctx);
    dgroup *sorted = tl_xmalloc_filled((ng ? ng : 1) * sizeof *sorted);
    for (size_t i = 0; i < ng; i++)
        sorted[i] = gs[ord[i]];
    free(gs);
    d->groups = sorted;
    free(ord);
    free((void *)ctx.text);
}

/* ---- the cpu_op maps' renaming ------------------------------------------------------ */

/* The part after the last "::". */
static const char *after_colons(const char *s)
{
    const char *r = s;
    for (const char *p = s; (p = strstr(p, "::")) != NULL; p += 2)
        r = p + 2;
    return r;
}

/* The byte length of the first `n` code points of s (Python's s[0:n]). */
static size_t prefix_len(const char *s, size_t n)
{
    size_t i = 0, cps = 0;
    while (s[i] && cps < n) {
        i++;
        while ((s[i] & 0xc0) == 0x80)
            i++;
        cps++;
    }
    return i;
}

/* The reference's find_common_name, with every op's module list ["root"] (no Python
 * functions: every op's nn_module_parent is "root"). */
static const char *common_name(tl_diff *d, const char *n1, const char *n2)
{
    const char *c1 = after_colons(n1), *c2 = after_colons(n2);
    if (strcmp(c1, c2) == 0 || strstr(c2, c1))
        return c1;
    if (strstr(c1, c2))
        return c2;
    size_t p1 = prefix_len(c1, 20), p2 = prefix_len(c2, 20);
    if (p1 == p2 && memcmp(c1, c2, p1) == 0)
        return tl_arena_printf(&d->arena, "%s/%s", c1, c2);
    return "root";
}

/* The renames: each name's latest common name (a later rename overwrites an earlier
 * one), looked up through a string table. */
typedef struct renames {
    dstrtab names;      /* names renamed */
    const char **to;    /* by names id */
    size_t cap;
    dstrtab seen;       /* names marked visited */
} renames;

static void rename_add(renames *r, const char *from, const char *to)
{
    uint32_t id = tl_dst_intern(&r->names, from, strlen(from), NULL);
    TL_GROW(r->to, r->cap, (size_t)id + 1);
    r->to[id] = to;
}

/* Distinct cpu_op names of one side's rows of an LCA, in row order. */
static size_t lca_side_names(tl_diff *d, const size_t *rows, size_t nr, int side, const char **out)
{
    dstrtab seen = {0};
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        const tl_diff_row *r = &d->rows[rows[i]];
        if (r->side != side)
            continue;
        const char *s = r->cpu_name;
        if (tl_dst_intern(&seen, s, strlen(s), NULL) == k)
            out[k++] = s;
    }
    tl_dst_free(&seen);
    return k;
}

static void cpu_op_renames(tl_diff *d, renames *rn)
{
    /* rows per LCA id, first-appearance order */
    size_t nl = 0;
    uint32_t *slot = tl_xmalloc((d->nnodes ? d->nnodes : 1) * sizeof *slot);
    for (size_t i = 0; i < d->nnodes; i++)
        slot[i] = UINT32_MAX;
    dvec order = {0};
    for (size_t r = 0; r < d->nrows; r++) {
        uint32_t l = d->rows[r].lca;
        if (l != UINT32_MAX && slot[l] == UINT32_MAX) {
            slot[l] = (uint32_t)nl++;
            dv_push(&order, l);
        }
    }
    size_t *cnt = tl_xcalloc(nl + 1, sizeof *cnt);
    for (size_t r = 0; r < d->nrows; r++)
        if (d->rows[r].lca != UINT32_MAX)
            cnt[slot[d->rows[r].lca] + 1]++;
    for (size_t i = 0; i < nl; i++)
        cnt[i + 1] += cnt[i];
    size_t *fill = tl_xmalloc((nl + 1) * sizeof *fill);
    memcpy(fill, cnt, (nl + 1) * sizeof *fill);
    size_t *rows = tl_xmalloc((d->nrows ? d->nrows : 1) * sizeof *rows);
    for (size_t r = 0; r < d->nrows; r++)
        if (d->rows[r].lca != UINT32_MAX)
            rows[fill[slot[d->rows[r].lca]]++] = r;
    const char **l1 = tl_xmalloc((d->nrows + 1) * sizeof *l1), **l2 = tl_xmalloc((d->nrows + 1) * sizeof *l2);
    const char **c1 = tl_xmalloc((d->nrows + 1) * sizeof *c1);
    for (size_t g = 0; g < nl; g++) {
        const size_t *rr = rows + cnt[g];
        size_t nr = cnt[g + 1] - cnt[g];
        size_t n1 = lca_side_names(d, rr, nr, 0, l1), n2 = lca_side_names(d, rr, nr, 1, l2);
        if (!n1 || !n2)
            continue;
        /* all seen? (look up without adding) */
        size_t before = rn->seen.n;
        int fresh = 0;
        for (size_t i = 0; i < n1; i++)
            if (tl_dst_intern(&rn->seen, l1[i], strlen(l1[i]), NULL) >= before)
                fresh = 1;
        for (size_t i = 0; i < n2; i++)
            if (tl_dst_intern(&rn->seen, l2[i], strlen(l2[i]), NULL) >= before)
                fresh = 1;
        if (!fresh)
            continue;
        if (n1 == n2) {
            for (size_t i = 0; i < n1; i++)
                if (strcmp(l1[i], l2[i]) != 0) {
                    const char *c = common_name(d, l1[i], l2[i]);
                    rename_add(rn, l2[i], c);
                    rename_add(rn, l1[i], c);
                }
        } else {
            /* drop exact matches (each trace1 name with the equal trace2 name: names are
             * distinct on a side), then pair each trace1 name left with the first trace2
             * name left that has a common name with it (every pair has one: each op's
             * only module is "root") */
            dstrtab t2 = {0};
            for (size_t j = 0; j < n2; j++)
                tl_dst_intern(&t2, l2[j], strlen(l2[j]), NULL);
            uint8_t *gone = tl_xcalloc(n2 + 1, 1);
            size_t k1 = 0;
            for (size_t i = 0; i < n1; i++) {
                uint32_t id = tl_dst_find(&t2, l1[i], strlen(l1[i]));
                if (id != UINT32_MAX && !gone[id])
                    gone[id] = 1;
                else
                    c1[k1++] = l1[i];
            }
            size_t next = 0;
            for (size_t i = 0; i < k1; i++) {
                while (next < n2 && gone[next])
                    next++;
                if (next == n2)
                    break;
                const char *c = common_name(d, c1[i], l2[next]);
                rename_add(rn, c1[i], c);
                rename_add(rn, l2[next], c);
                gone[next] = 1;
            }
            free(gone);
            tl_dst_free(&t2);
        }
    }
    free(l1);
    free(l2);
    free(c1);
    free(rows);
    free(fill);
    free(cnt);
    free(slot);
    dv_free(&order);
}

static const char *renamed(const renames *rn, const char *name)
{
    uint32_t id = tl_dst_find(&rn->names, name, strlen(name));
    return id == UINT32_MAX ? name : rn->to[id];
}

int tl_diff_stats_sheet(tl_diff *d)
{
    collect_rows(d);
    check_identical(d);
    if (diff_cancelled(d))
        return -1;
    collect_lcas(d);
    return diff_cancelled(d) ? -1 : 0;
}

int tl_diff_group_rows(tl_diff *d)
{
    unique_args(d);
    if (diff_cancelled(d))
        return -1;
    renames rn = {0};
    cpu_op_renames(d, &rn);
    for (size_t i = 0; i < d->ngroups; i++) {
        const tl_diff_row *row = &d->rows[d->groups[i].first];
        d->groups[i].cpu_op_name = renamed(&rn, row->cpu_name);
    }
    free(rn.to);
    tl_dst_free(&rn.names);
    tl_dst_free(&rn.seen);
    return 0;
}
