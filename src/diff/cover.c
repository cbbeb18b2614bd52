/*
 * cover.c - how much of each side's GPU time the LCAs account for, and where the rest
 * is (see tl_diff_coverage in diff.h).  A comparison by lowest common op that silently
 * covers 0.1 ms of 490 ms would mislead: the summary states this beside its lines.
 */
#include "diff/diff_int.h"

enum { C_NONE, C_LCA, C_UNMATCHED };

static double busy_of(const tl_trace *t, const dvec *v) { return v->n ? tl_diff_busy(t, v->v, v->n) : 0.0; }

/* 1 when event e sits under a torch.compile graph's op (CompiledFunction,
 * CompiledFunctionBackward): its graph launches are a training step's, attributed by ops. */
static int under_compiled(const tl_trace *t, uint32_t e)
{
    static const char prefix[] = "CompiledFunction";
    for (uint32_t p = e; p != TL_TEV_NONE; p = t->ev[p].parent)
        if (t->ev[p].kind == TL_TEV_CPU_OP && t->ev[p].name && !strncmp(t->ev[p].name, prefix, sizeof prefix - 1))
            return 1;
    return 0;
}

void tl_diff_coverage(const tl_diff *d, int side, tl_diff_cover *out)
{
    const tl_trace *t = d->s[side].t;
    memset(out, 0, sizeof *out);
    uint8_t *mark = tl_xcalloc(t->nev ? t->nev : 1, 1);
    for (size_t r = 0; r < d->nrows; r++) {
        const tl_diff_row *row = &d->rows[r];
        if (row->side != side || row->gpu >= t->nev)
            continue;
        if (row->lca != UINT32_MAX)
            mark[row->gpu] = C_LCA;
        else if (mark[row->gpu] == C_NONE)
            mark[row->gpu] = C_UNMATCHED;
    }
    dvec all = {0}, lca = {0}, unm = {0}, graph = {0}, out_ = {0}, graph_all = {0}, graph_cap = {0};
    for (uint32_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (!tl_tev_is_gpu(e) || !(e->flags & TL_TEV_LINKED))
            continue; /* as gpu_timeline counts them: only GPU events linked to a launch */
        dv_push(&all, i);
        int by_graph = e->parent != TL_TEV_NONE && (t->ev[e->parent].flags & TL_TEV_GRAPH_LAUNCH);
        if (by_graph)
            dv_push(&graph_all, i);
        if (by_graph && !under_compiled(t, e->parent))
            dv_push(&graph_cap, i);
        dv_push(mark[i] == C_LCA ? &lca : mark[i] == C_UNMATCHED ? &unm : by_graph ? &graph : &out_, i);
    }
    out->busy_us = busy_of(t, &all);
    out->lca_us = busy_of(t, &lca);
    out->unmatched_us = busy_of(t, &unm);
    out->graph_us = busy_of(t, &graph);
    out->outside_us = busy_of(t, &out_);
    out->graph_all_us = busy_of(t, &graph_all);
    out->graph_capture_us = busy_of(t, &graph_cap);
    dv_free(&all);
    dv_free(&lca);
    dv_free(&unm);
    dv_free(&graph);
    dv_free(&out_);
    dv_free(&graph_all);
    dv_free(&graph_cap);
    free(mark);
}
