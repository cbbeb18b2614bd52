/*
 * steps.c - a trace's steps as repeated measurements (see steps.h).
 */
#include "trace/steps.h"

#include "trace/kmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

long tl_trace_step_at(const tl_trace *t, double x)
{
    size_t lo = 0, hi = t->nsteps; /* the first step starting after x */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->steps[mid].ts <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* spans may overlap (a nested or repeated annotation): the latest one that holds x */
    for (size_t k = lo; k-- > 0;)
        if (x <= t->steps[k].ts + t->steps[k].dur)
            return (long)k;
    return -1;
}

long tl_trace_step_of_gpu(const tl_trace *t, uint32_t e)
{
    const tl_tev *g = &t->ev[e];
    return t->nsteps ? tl_trace_step_at(t, g->parent != TL_TEV_NONE ? t->ev[g->parent].ts : g->ts) : -1;
}

/* The nearest cpu_op above event e (the op ops_summary gives its kernel to), or TL_TEV_NONE. */
static uint32_t launcher_of(const tl_trace *t, uint32_t e)
{
    for (uint32_t p = t->ev[e].parent; p != TL_TEV_NONE; p = t->ev[p].parent)
        if (t->ev[p].kind == TL_TEV_CPU_OP)
            return p;
    return TL_TEV_NONE;
}

/* Op index of `name` in s, added when new. */
static size_t op_index(tl_steps *s, tl_kmap *of, size_t *cap, const char *name)
{
    int created;
    tl_kmap_slot *sl = tl_kmap_put(of, (int64_t)(uintptr_t)name, 0, 0, &created);
    if (created) {
        TL_GROW(s->op, *cap, s->nops + 1);
        s->op[s->nops] = name;
        sl->val = (uint32_t)s->nops++;
    }
    return sl->val;
}

void tl_trace_steps(const tl_trace *t, tl_steps *out)
{
    memset(out, 0, sizeof *out);
    size_t n = t->nsteps, cap = 0;
    out->n = n;
    out->span = tl_xmalloc((n ? n : 1) * sizeof *out->span);
    if (n)
        memcpy(out->span, t->steps, n * sizeof *out->span);
    /* each linked GPU event's step, and its launcher's direct time */
    long *step_of = tl_xmalloc_filled((t->nev ? t->nev : 1) * sizeof *step_of);
    double *direct = tl_xcalloc_dense(t->nev ? t->nev : 1, sizeof *direct);
    size_t *nin = tl_xcalloc(n + 1, sizeof *nin);
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        step_of[i] = -1;
        if (!tl_tev_is_gpu(e) || !(e->flags & TL_TEV_LINKED))
            continue;
        step_of[i] = tl_trace_step_of_gpu(t, (uint32_t)i);
        if (step_of[i] >= 0)
            nin[step_of[i]]++;
        uint32_t op = launcher_of(t, (uint32_t)i);
        if (op != TL_TEV_NONE)
            direct[op] += e->dur;
    }
    /* the timeline of each step over its own GPU events */
    out->tl = tl_xcalloc((n ? n : 1) * TL_TIMELINE_N, sizeof *out->tl);
    size_t *start = tl_xmalloc((n + 1) * sizeof *start);
    start[0] = 0;
    for (size_t s = 0; s < n; s++)
        start[s + 1] = start[s] + nin[s];
    uint32_t *ev = tl_xmalloc((start[n] ? start[n] : 1) * sizeof *ev);
    memset(nin, 0, (n + 1) * sizeof *nin);
    for (size_t i = 0; i < t->nev; i++)
        if (step_of[i] >= 0)
            ev[start[step_of[i]] + nin[step_of[i]]++] = (uint32_t)i;
    for (size_t s = 0; s < n; s++)
        tl_trace_timeline_of(t, ev + start[s], nin[s], out->tl + s * TL_TIMELINE_N);
    /* each op's time per step and its largest call */
    tl_kmap of;
    tl_kmap_init(&of);
    size_t pcap = 0, ucap = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if (e->kind != TL_TEV_CPU_OP || !(direct[i] > 0))
            continue;
        size_t before = out->nops;
        size_t k = op_index(out, &of, &cap, e->name);
        if (out->nops > before) {
            TL_GROW(out->peak, pcap, out->nops);
            TL_GROW(out->us, ucap, out->nops * (n ? n : 1));
            out->peak[k] = (tl_step_peak){-1, NAN, -1};
            for (size_t s = 0; s < n; s++)
                out->us[k * n + s] = 0;
        }
        long s = n ? tl_trace_step_at(t, e->ts) : -1;
        if (s >= 0)
            out->us[k * n + (size_t)s] += direct[i];
        if (direct[i] > out->peak[k].us)
            out->peak[k] = (tl_step_peak){direct[i], e->ts, s >= 0 ? t->steps[s].number : -1};
    }
    tl_kmap_free(&of);
    free(ev);
    free(start);
    free(nin);
    free(direct);
    free(step_of);
}

void tl_steps_free(tl_steps *s)
{
    if (!s)
        return;
    free(s->span);
    free(s->tl);
    free(s->op);
    free(s->us);
    free(s->peak);
    memset(s, 0, sizeof *s);
}
