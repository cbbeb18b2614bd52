/*
 * emit.c - the diff's entry point and what it writes (TRACES.md §6): the tables of
 * diff_stats, the unique-args summary and lca_summary; the merged tree text; the
 * cpu_op maps as JSON.
 */
#include "diff/diff_int.h"

#include "base/jsonw.h"
#include "base/sort.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdio.h>

/* ---- run ------------------------------------------------------------------------------- */

tl_diff *tl_diff_run(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *opts, tl_error *err)
{
    if (!t1->nroots || !t2->nroots) {
        tl_error_set(err, "%s: no CPU op to align (the morphology diff needs each trace's cpu_op call tree)",
                     !t1->nroots ? (t1->path ? t1->path : "trace 1") : (t2->path ? t2->path : "trace 2"));
        return NULL;
    }
    tl_diff *d = tl_xcalloc(1, sizeof *d);
    tl_arena_init(&d->arena);
    d->s[0].t = t1;
    d->s[1].t = t2;
    if (opts)
        d->opts = *opts;
    if (!d->opts.wf_max_cells)
        d->opts.wf_max_cells = TL_DIFF_WF_MAX_CELLS;
    if (!d->opts.disambig_max_pairs)
        d->opts.disambig_max_pairs = TL_DIFF_DISAMBIG_MAX_PAIRS;
    /* the traces' run may be cancelled (tl_trace.cancel): checked between the phases,
     * and between the roots in the alignment */
    tl_diff_names(d);
    if (!tl_trace_cancelled(t1, err) && !tl_trace_cancelled(t2, err))
        tl_diff_align(d);
    if (tl_trace_cancelled(t1, err) || tl_trace_cancelled(t2, err)) {
        tl_diff_free(d);
        return NULL;
    }
    /* each fails only when the run is cancelled, which the check after them reports */
    if (tl_diff_stats_sheet(d) == 0 && !d->opts.no_groups && tl_diff_group_rows(d) == 0)
        tl_diff_cpu_op_maps(d);
    if (tl_trace_cancelled(t1, err) || tl_trace_cancelled(t2, err)) {
        tl_diff_free(d);
        return NULL;
    }
    /* the merged tree's depth (ids are in pre-order: a node's kids come after it) */
    uint32_t *depth = tl_xcalloc(d->nnodes ? d->nnodes : 1, sizeof *depth);
    for (size_t i = 0; i < d->nnodes; i++) {
        const tl_diff_node *nd = &d->nodes[i];
        if (depth[i] + (size_t)1 > d->st.tree_depth)
            d->st.tree_depth = depth[i] + (size_t)1;
        for (uint32_t k = 0; k < nd->nkid; k++)
            depth[d->kids.v[nd->kid0 + k]] = depth[i] + 1;
    }
    free(depth);
    return d;
}

void tl_diff_free(tl_diff *d)
{
    if (!d)
        return;
    for (int k = 0; k < 2; k++) {
        free(d->s[k].nm);
        free(d->s[k].pos_stamp);
        free(d->s[k].pos_val);
        free(d->partner[k]);
    }
    free(d->names);
    tl_dst_free(&d->raw);
    tl_dst_free(&d->norm);
    free(d->nodes);
    dv_free(&d->kids);
    dv_free(&d->roots);
    free(d->rows);
    free(d->lcas);
    free(d->groups);
    for (int i = 0; i < 3; i++)
        tl_buf_free(&d->map_json[i]);
    tl_arena_free(&d->arena);
    free(d);
}

const tl_diff_node *tl_diff_nodes(const tl_diff *d, size_t *n)
{
    *n = d->nnodes;
    return d->nodes;
}
const uint32_t *tl_diff_roots(const tl_diff *d, size_t *n)
{
    *n = d->roots.n;
    return d->roots.v;
}
const uint32_t *tl_diff_kids(const tl_diff *d) { return d->kids.v; }
const tl_diff_stats *tl_diff_stats_of(const tl_diff *d) { return &d->st; }
const tl_diff_row *tl_diff_rows(const tl_diff *d, size_t *n)
{
    *n = d->nrows;
    return d->rows;
}
int tl_diff_identical(const tl_diff *d) { return d->identical; }
const tl_diff_lca *tl_diff_lcas(const tl_diff *d, size_t *n)
{
    *n = d->nlcas;
    return d->lcas;
}

uint32_t tl_diff_partner(const tl_diff *d, int side, uint32_t ev)
{
    if (side < 1 || side > 2 || ev >= d->s[side - 1].t->nev)
        return UINT32_MAX - 1;
    return d->partner[side - 1][ev];
}

/* ---- tables ---------------------------------------------------------------------------- */

static size_t col(tl_table *t, const char *name, int numeric)
{
    size_t c = tl_table_add_full_column(t, name); /* every row gets a cell */
    t->cols[c].type = numeric ? TL_COL_NUM : TL_COL_STR;
    return c;
}

static tl_cell str_or_missing(const char *s) { return s && *s ? tl_cell_str(s) : tl_cell_missing(); }

/* The cpu_op's shape arguments into row `o` of the columns dims, strides, type and conc
 * (each table makes those columns in its own order), missing where the op has none. */
static void put_shape_args(tl_table *t, size_t dims, size_t strides, size_t type, size_t conc, size_t o,
                           const tl_tev_aux *cpu)
{
    t->cols[dims].cells[o] = str_or_missing(cpu->args->input_dims);
    t->cols[strides].cells[o] = str_or_missing(cpu->args->input_strides);
    t->cols[type].cells[o] = str_or_missing(cpu->args->input_type);
    t->cols[conc].cells[o] = str_or_missing(cpu->args->concrete_inputs);
}


tl_table *tl_diff_stats_table(const tl_diff *d, tl_arena *arena)
{
    (void)arena;
    tl_table *t = tl_table_new();
    size_t n = 0;
    for (size_t r = 0; r < d->nrows; r++)
        n += !(d->identical && d->rows[r].side == 1);
    t->nrows = n;
    size_t c_name = col(t, "name", 0), c_op = col(t, "cpu_op_name", 0), c_uid = col(t, "cpu_op_uid", 1);
    size_t c_src = d->identical ? SIZE_MAX : col(t, "source", 0);
    size_t c_dims = col(t, "Input Dims", 0), c_str = col(t, "Input Strides", 0), c_type = col(t, "Input type", 0);
    size_t c_conc = col(t, "Concrete Inputs", 0), c_kt = col(t, "kernel_time", 1), c_bt = col(t, "busy_time", 1);
    size_t c_ln = col(t, "lowest_common_ancestor_name", 0), c_li = col(t, "lowest_common_ancestor_id", 1);
    size_t c_gu = col(t, "gpu_op_uid", 1), c_st = col(t, "nn_module_stack", 0), c_pa = col(t, "nn_module_parent", 0);
    size_t o = 0;
    for (size_t r = 0; r < d->nrows; r++) {
        const tl_diff_row *row = &d->rows[r];
        if (d->identical && row->side == 1)
            continue;
        const tl_trace *tr = d->s[row->side].t;
        const tl_tev *g = &tr->ev[row->gpu], *cpu = &tr->ev[row->cpu];
        t->cols[c_name].cells[o] = tl_cell_str(row->name);
        t->cols[c_op].cells[o] = tl_cell_str(row->cpu_name);
        t->cols[c_uid].cells[o] = tl_cell_int(cpu->uid);
        if (c_src != SIZE_MAX)
            t->cols[c_src].cells[o] = tl_cell_str(row->side ? "trace2" : "trace1");
        put_shape_args(t, c_dims, c_str, c_type, c_conc, o, tl_tev_x(d->s[row->side].t, cpu));
        t->cols[c_kt].cells[o] = tl_cell_float(g->dur);
        t->cols[c_bt].cells[o] = tl_cell_float(row->busy);
        t->cols[c_ln].cells[o] = row->lca_name ? tl_cell_str(row->lca_name) : tl_cell_missing();
        /* pandas makes an id column with a missing value a float column */
        t->cols[c_li].cells[o] = row->lca == UINT32_MAX ? tl_cell_missing()
                                 : d->lca_missing      ? tl_cell_float(row->lca)
                                                       : tl_cell_int(row->lca);
        t->cols[c_gu].cells[o] = tl_cell_int(g->uid);
        t->cols[c_st].cells[o] = tl_cell_str("root");
        t->cols[c_pa].cells[o] = tl_cell_str("root");
        o++;
    }
    return t;
}

/* Whether group i has a row in the unique-args summary: trace 2's are left out of
 * identical traces. */
static int unique_args_kept(const tl_diff *d, size_t i) { return !(d->identical && d->rows[d->groups[i].first].side == 1); }

/* The unique-args summary's rows of groups [g0, g1) (n of them kept). */
static tl_table *unique_args_rows(const tl_diff *d, size_t g0, size_t g1, size_t n)
{
    tl_table *t = tl_table_new();
    t->nrows = n;
    size_t c_name = col(t, "name", 0), c_cnt = col(t, "operation_count", 1), c_op = col(t, "cpu_op_name", 0);
    size_t c_uid = col(t, "cpu_op_uid", 1), c_src = d->identical ? SIZE_MAX : col(t, "source", 0);
    size_t c_dims = col(t, "Input Dims", 0), c_str = col(t, "Input Strides", 0), c_type = col(t, "Input type", 0);
    size_t c_conc = col(t, "Concrete Inputs", 0), c_bt = col(t, "busy_time", 1);
    size_t c_ln = col(t, "lowest_common_ancestor_name", 0), c_st = col(t, "nn_module_stack", 0);
    size_t c_pa = col(t, "nn_module_parent", 0), c_mean = col(t, "kernel_time_mean", 1), c_sum = col(t, "kernel_time_sum", 1);
    size_t o = 0;
    for (size_t i = g0; i < g1; i++) {
        if (!unique_args_kept(d, i))
            continue;
        const dgroup *g = &d->groups[i];
        const tl_diff_row *row = &d->rows[g->first];
        const tl_tev *cpu = &d->s[row->side].t->ev[row->cpu];
        t->cols[c_name].cells[o] = tl_cell_str(row->name);
        t->cols[c_cnt].cells[o] = tl_cell_int((int64_t)g->count);
        t->cols[c_op].cells[o] = tl_cell_str(g->cpu_op_name);
        t->cols[c_uid].cells[o] = tl_cell_int(cpu->uid);
        if (c_src != SIZE_MAX)
            t->cols[c_src].cells[o] = tl_cell_str(row->side ? "trace2" : "trace1");
        put_shape_args(t, c_dims, c_str, c_type, c_conc, o, tl_tev_x(d->s[row->side].t, cpu));
        t->cols[c_bt].cells[o] = tl_cell_float(row->busy);
        t->cols[c_ln].cells[o] = row->lca_name ? tl_cell_str(row->lca_name) : tl_cell_missing();
        t->cols[c_st].cells[o] = tl_cell_str("root");
        t->cols[c_pa].cells[o] = tl_cell_str("root");
        t->cols[c_mean].cells[o] = tl_cell_float(g->mean);
        t->cols[c_sum].cells[o] = tl_cell_float(g->sum);
        o++;
    }
    return t;
}

size_t tl_diff_unique_args_groups(const tl_diff *d) { return d->ngroups; }

tl_table *tl_diff_unique_args_slice(const tl_diff *d, size_t *from, size_t rows)
{
    size_t g0 = *from < d->ngroups ? *from : d->ngroups, g1 = g0, n = 0;
    for (; g1 < d->ngroups && n < rows; g1++)
        n += unique_args_kept(d, g1);
    *from = g1;
    return unique_args_rows(d, g0, g1, n);
}

tl_table *tl_diff_unique_args_table(const tl_diff *d, tl_arena *arena)
{
    (void)arena;
    size_t from = 0;
    return tl_diff_unique_args_slice(d, &from, SIZE_MAX);
}


static const char *py_list(const tl_diff *d, int side, size_t first_row, size_t count, tl_arena *arena)
{
    tl_buf b = {0};
    tl_buf_addc(&b, '[');
    size_t k = 0;
    for (size_t r = first_row; r < d->nrows && k < count; r++) {
        const tl_diff_row *row = &d->rows[r];
        if (row->side != side || row->lca != d->rows[first_row].lca)
            continue;
        if (k++)
            tl_buf_adds(&b, ", ");
        tl_diff_py_repr(row->name, &b);
    }
    tl_buf_addc(&b, ']');
    const char *s = tl_arena_strdup(arena, tl_buf_cstr(&b));
    tl_buf_free(&b);
    return s;
}

tl_table *tl_diff_lca_table(const tl_diff *d, tl_arena *arena)
{
    tl_table *t = tl_table_new();
    size_t n = d->nlcas;
    t->nrows = n;
    size_t c_name = col(t, "name", 0), c_ln = col(t, "lowest_common_ancestor_name", 0);
    size_t c_li = col(t, "lowest_common_ancestor_id", 1), c_st = col(t, "nn_module_stack", 0);
    size_t c_pa = col(t, "nn_module_parent", 0), c_dims = col(t, "Input Dims", 0), c_type = col(t, "Input type", 0);
    size_t c_str = col(t, "Input Strides", 0), c_conc = col(t, "Concrete Inputs", 0);
    size_t c_t1 = col(t, "kernel_time_trace1_us", 1), c_t2 = col(t, "kernel_time_trace2_us", 1);
    size_t c_n1 = col(t, "num_kernels_trace1", 1), c_n2 = col(t, "num_kernels_trace2", 1);
    size_t c_k1 = col(t, "kernel_names_trace1", 0), c_k2 = col(t, "kernel_names_trace2", 0);
    size_t c_sp = col(t, "speedup (trace2/trace1)", 1), c_de = col(t, "delta_us (trace2 - trace1)", 1);
    double *v1 = tl_xmalloc((n ? n : 1) * sizeof *v1), *v2 = tl_xmalloc((n ? n : 1) * sizeof *v2);
    for (size_t i = 0; i < n; i++) {
        const tl_diff_lca *l = &d->lcas[i];
        size_t src = l->row1 != SIZE_MAX ? l->row1 : l->row2;
        const tl_diff_row *row = &d->rows[src];
        const tl_tev *cpu = &d->s[row->side].t->ev[row->cpu];
        t->cols[c_name].cells[i] = tl_cell_str(l->name);
        t->cols[c_ln].cells[i] = l->lca_name ? tl_cell_str(l->lca_name) : tl_cell_missing();
        t->cols[c_li].cells[i] = tl_cell_int(l->id);
        t->cols[c_st].cells[i] = tl_cell_str("root");
        t->cols[c_pa].cells[i] = tl_cell_str("root");
        put_shape_args(t, c_dims, c_str, c_type, c_conc, i, tl_tev_x(d->s[row->side].t, cpu));
        t->cols[c_t1].cells[i] = tl_cell_float(l->time1);
        t->cols[c_t2].cells[i] = tl_cell_float(l->time2);
        t->cols[c_n1].cells[i] = tl_cell_int((int64_t)l->n1);
        t->cols[c_n2].cells[i] = tl_cell_int((int64_t)l->n2);
        t->cols[c_k1].cells[i] = tl_cell_str(l->row1 != SIZE_MAX ? py_list(d, 0, l->row1, l->n1, arena) : "[]");
        t->cols[c_k2].cells[i] = tl_cell_str(l->row2 != SIZE_MAX ? py_list(d, 1, l->row2, l->n2, arena) : "[]");
        t->cols[c_sp].cells[i] = l->time1 > 0 ? tl_cell_float(l->time2 / l->time1) : tl_cell_missing();
        t->cols[c_de].cells[i] = tl_cell_float(l->time2 - l->time1);
        v1[i] = l->time1;
        v2[i] = l->time2;
    }
    double tot1 = tl_np_sum(v1, n), tot2 = tl_np_sum(v2, n); /* Series.sum */
    if (tot1 > 0) {
        size_t c_p1 = col(t, "pct_of_trace1_total (%)", 1), c_cu = col(t, "cumulative_pct_trace1 (%)", 1);
        double cum = 0;
        for (size_t i = 0; i < n; i++) {
            double p = v1[i] / tot1 * 100;
            cum += p;
            t->cols[c_p1].cells[i] = tl_cell_float(p);
            t->cols[c_cu].cells[i] = tl_cell_float(cum);
        }
    }
    if (tot2 > 0) {
        size_t c_p2 = col(t, "pct_of_trace2_total (%)", 1);
        for (size_t i = 0; i < n; i++)
            t->cols[c_p2].cells[i] = tl_cell_float(v2[i] / tot2 * 100);
    }
    free(v1);
    free(v2);
    return t;
}

/* ---- the merged tree text ------------------------------------------------------------ */

/*
 * The text is composed in a block of TREE_BLOCK bytes and written a block at a time,
 * straight from it (the file's own stdio buffer is bypassed by writes that large): a
 * large pair's tree is hundreds of MB, which line by line through stdio's 4 KiB buffer
 * took a system call per 4 KiB and a copy more of every byte.
 */
#define TREE_BLOCK ((size_t)1 << 20)

typedef struct tree_out {
    FILE *f;
    tl_buf b;
    int bad;
} tree_out;

static void tree_flush(tree_out *o)
{
    if (o->b.len && fwrite(o->b.data, 1, o->b.len, o->f) != o->b.len)
        o->bad = 1;
    o->b.len = 0;
}

typedef struct tframe {
    size_t k0, nk, next, plen;
    int last;
} tframe;

/* One line: prefix, connector, the node's text; a node deeper than the drawn levels
 * says by how many ("(+N) "). */
static void tree_line(tl_diff *d, tree_out *o, const tl_buf *prefix, uint32_t id, int last, size_t depth)
{
    const tl_diff_node *nd = &d->nodes[id];
    tl_buf *b = &o->b;
    tl_buf_add(b, prefix->data, prefix->len);
    if (depth > TL_DIFF_TREE_MAX_INDENT)
        tl_buf_printf(b, "(+%zu) ", depth - TL_DIFF_TREE_MAX_INDENT);
    tl_buf_add(b, last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 " : "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ", 10);
    const char *n1 = nd->ev1 != TL_TEV_NONE ? tl_diff_op_name(d, 0, nd->ev1) : NULL;
    const char *n2 = nd->ev2 != TL_TEV_NONE ? tl_diff_op_name(d, 1, nd->ev2) : NULL;
    if (nd->type == TL_DIFF_COMBINED) {
        if (strcmp(n1, n2) != 0) {
            tl_buf_adds(b, "combined: ");
            tl_buf_adds(b, n1);
            tl_buf_adds(b, " | ");
        }
        tl_buf_adds(b, n2);
    } else {
        tl_buf_adds(b, nd->type == TL_DIFF_TRACE1 ? ">> trace1: " : "<< trace2: ");
        tl_buf_adds(b, nd->type == TL_DIFF_TRACE1 ? n1 : n2);
    }
    tl_buf_addc(b, '\n');
    if (b->len >= TREE_BLOCK)
        tree_flush(o);
}

int tl_diff_write_tree(const tl_diff *cd, FILE *f)
{
    tl_diff *d = (tl_diff *)cd; /* names made on demand go to its arena */
    tl_buf prefix = {0};
    tl_buf_reserve(&prefix, 64);
    tframe *st = NULL;
    size_t nst = 0, capst = 0;
    dvec order = {0};
    tree_out o = {f, {0}, 0};
    tl_buf_reserve(&o.b, TREE_BLOCK + 4096);
    for (size_t r = 0; r < d->roots.n && !o.bad; r++) {
        prefix.len = 0;
        uint32_t id = d->roots.v[r];
        int last = r + 1 == d->roots.n;
        for (;;) {
            tree_line(d, &o, &prefix, id, last, nst);
            /* its children in print order: combined, then trace1-only, then trace2-only */
            const tl_diff_node *nd = &d->nodes[id];
            size_t k0 = order.n;
            for (int ty = 0; ty < 3; ty++)
                for (uint32_t k = 0; k < nd->nkid; k++) {
                    uint32_t c = d->kids.v[nd->kid0 + k];
                    if (d->nodes[c].type == ty)
                        dv_push(&order, c);
                }
            TL_GROW(st, capst, nst + 1);
            st[nst++] = (tframe){k0, order.n - k0, 0, prefix.len, last};
            /* the next line: the next child of the deepest frame that has one */
            id = UINT32_MAX;
            while (nst) {
                tframe *fr = &st[nst - 1];
                if (fr->next < fr->nk) {
                    id = order.v[fr->k0 + fr->next++];
                    last = fr->next == fr->nk;
                    prefix.len = fr->plen;
                    /* the child is at depth nst: past the drawn levels, no more rails (the
                     * file would grow with the square of the depth) */
                    if (nst <= TL_DIFF_TREE_MAX_INDENT)
                        tl_buf_adds(&prefix, fr->last ? "    " : "\xe2\x94\x82   ");
                    break;
                }
                order.n = fr->k0;
                nst--;
            }
            if (id == UINT32_MAX || o.bad)
                break;
        }
        nst = 0;
        order.n = 0;
    }
    tree_flush(&o);
    tl_buf_free(&o.b);
    free(st);
    dv_free(&order);
    tl_buf_free(&prefix);
    return o.bad ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* A sorted list of distinct strings, indented as json.dump(indent=2) at `depth`. */
static void json_list(tl_buf *b, const char **v, size_t n, int depth)
{
    if (!n) {
        tl_buf_adds(b, "[]");
        return;
    }
    tl_buf_adds(b, "[\n");
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < depth + 1; k++)
            tl_buf_adds(b, "  ");
        tl_json_str(b, v[i]);
        tl_buf_adds(b, i + 1 < n ? ",\n" : "\n");
    }
    for (int k = 0; k < depth; k++)
        tl_buf_adds(b, "  ");
    tl_buf_addc(b, ']');
}

static void indent(tl_buf *b, int depth)
{
    for (int k = 0; k < depth; k++)
        tl_buf_adds(b, "  ");
}

/* (key, side, value) triples, sorted and made distinct, for the maps. */
typedef struct triple {
    const char *key;
    size_t key_order; /* the key's first appearance, or 0 when keys sort by text */
    int side;
    const char *val;
} triple;

static int triple_cmp(size_t a, size_t b, void *ctx)
{
    const triple *t = ctx;
    if (t[a].key_order != t[b].key_order)
        return t[a].key_order < t[b].key_order ? -1 : 1;
    int r = strcmp(t[a].key, t[b].key);
    if (r)
        return r;
    if (t[a].side != t[b].side)
        return t[a].side - t[b].side;
    return strcmp(t[a].val, t[b].val);
}

static size_t sorted_distinct(triple *t, size_t n, size_t **ordp)
{
    size_t *ord = tl_xmalloc((n ? n : 1) * sizeof *ord);
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    tl_sort_rows(ord, n, triple_cmp, t);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || triple_cmp(ord[k - 1], ord[i], t) != 0)
            ord[k++] = ord[i];
    *ordp = ord;
    return k;
}

/* cpu_op_map_traceN.json: side's cpu_op name -> sorted distinct kernel names. */
static void side_map(tl_diff *d, int side, tl_buf *b)
{
    triple *t = tl_xmalloc((d->ngroups ? d->ngroups : 1) * sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < d->ngroups; i++) {
        const tl_diff_row *row = &d->rows[d->groups[i].first];
        if (row->side != side)
            continue;
        t[n++] = (triple){row->cpu_name, 0, side, row->name};
    }
    size_t *ord;
    size_t k = sorted_distinct(t, n, &ord);
    const char **vals = tl_xmalloc((k ? k : 1) * sizeof *vals);
    tl_buf_clear(b);
    tl_buf_addc(b, '{');
    size_t nkeys = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i, nv = 0;
        while (j < k && strcmp(t[ord[j]].key, t[ord[i]].key) == 0)
            vals[nv++] = t[ord[j++]].val;
        tl_buf_adds(b, nkeys++ ? ",\n" : "\n");
        indent(b, 1);
        tl_json_str(b, t[ord[i]].key);
        tl_buf_adds(b, ": ");
        json_list(b, vals, nv, 1);
        i = j;
    }
    tl_buf_adds(b, nkeys ? "\n}" : "}");
    free(vals);
    free(ord);
    free(t);
}

/* cpu_op_map.json: renamed cpu_op name -> per side {kernels, nn_module_parents}. */
static void joint_map(tl_diff *d, tl_buf *b)
{
    triple *t = tl_xmalloc((d->ngroups ? d->ngroups : 1) * sizeof *t);
    /* keys in first-appearance order over the summary's rows */
    dstrtab keys = {0};
    for (size_t i = 0; i < d->ngroups; i++) {
        const tl_diff_row *row = &d->rows[d->groups[i].first];
        const char *key = d->groups[i].cpu_op_name;
        size_t order = tl_dst_intern(&keys, key, strlen(key), NULL);
        t[i] = (triple){key, order + 1, row->side, row->name};
    }
    size_t *ord;
    size_t k = sorted_distinct(t, d->ngroups, &ord);
    const char **vals = tl_xmalloc((k ? k : 1) * sizeof *vals);
    const char *root[1] = {"root"};
    tl_buf_clear(b);
    tl_buf_addc(b, '{');
    size_t nkeys = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && t[ord[j]].key_order == t[ord[i]].key_order)
            j++;
        tl_buf_adds(b, nkeys++ ? ",\n" : "\n");
        indent(b, 1);
        tl_json_str(b, t[ord[i]].key);
        tl_buf_adds(b, ": {");
        int nsides = 0;
        for (int side = 0; side < 2; side++) {
            if (d->identical && side == 1 && nsides)
                break;
            size_t nv = 0;
            for (size_t x = i; x < j; x++)
                if (t[ord[x]].side == side)
                    vals[nv++] = t[ord[x]].val;
            if (!nv)
                continue;
            int depth = 2;
            if (d->identical) {
                depth = 1; /* the op maps straight to trace1's object */
            } else {
                tl_buf_adds(b, nsides ? ",\n" : "\n");
                indent(b, 2);
                tl_json_str(b, side ? "trace2" : "trace1");
                tl_buf_adds(b, ": {");
            }
            tl_buf_addc(b, '\n');
            indent(b, depth + 1);
            tl_buf_adds(b, "\"kernels\": ");
            json_list(b, vals, nv, depth + 1);
            tl_buf_adds(b, ",\n");
            indent(b, depth + 1);
            tl_buf_adds(b, "\"nn_module_parents\": ");
            json_list(b, root, 1, depth + 1);
            tl_buf_addc(b, '\n');
            indent(b, depth);
            tl_buf_addc(b, '}');
            nsides++;
        }
        if (!d->identical) {
            tl_buf_addc(b, '\n');
            indent(b, 1);
            tl_buf_addc(b, '}');
        } else if (!nsides) {
            tl_buf_addc(b, '}');
        }
        i = j;
    }
    tl_buf_adds(b, nkeys ? "\n}" : "}");
    free(vals);
    free(ord);
    free(t);
    tl_dst_free(&keys);
}

void tl_diff_cpu_op_maps(tl_diff *d)
{
    joint_map(d, &d->map_json[0]);
    side_map(d, 0, &d->map_json[1]);
    side_map(d, 1, &d->map_json[2]);
    /* op and kernel names are input bytes: JSON must be UTF-8, so invalid sequences
     * become U+FFFD, as in every JSON the tools write */
    for (int i = 0; i < 3; i++)
        tl_utf8_sanitize(&d->map_json[i]);
}

void tl_diff_cpu_op_map_json(const tl_diff *d, int which, tl_buf *out)
{
    tl_buf_clear(out);
    if (which >= 0 && which <= 2)
        tl_buf_add(out, d->map_json[which].data ? d->map_json[which].data : "", d->map_json[which].len);
}

const char *tl_diff_node_op(const tl_diff *cd, uint32_t id, int side)
{
    tl_diff *d = (tl_diff *)cd; /* names made on demand go to its arena */
    const tl_diff_node *nd = &d->nodes[id];
    uint32_t ev = side == 0 ? nd->ev1 : nd->ev2;
    return ev == TL_TEV_NONE ? NULL : tl_diff_op_name(d, side, ev);
}
