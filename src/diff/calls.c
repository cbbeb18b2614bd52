/*
 * calls.c - the ops' calls paired through the alignment (see tl_diff_calls in diff.h).
 */
#include "diff/diff_int.h"

#include "base/hash.h"

#include <math.h>

/* The nearest cpu_op above event e (its launcher, as ops_summary attributes a kernel), or
 * TL_TEV_NONE. */
static uint32_t launcher_of(const tl_trace *t, uint32_t e)
{
    for (uint32_t p = t->ev[e].parent; p != TL_TEV_NONE; p = t->ev[p].parent)
        if (t->ev[p].kind == TL_TEV_CPU_OP)
            return p;
    return TL_TEV_NONE;
}

/* Per event of t: the summed duration (µs) of the GPU events it launched directly, NaN
 * for an event that launched none. */
static double *direct_times(const tl_trace *t)
{
    double *us = tl_xmalloc((t->nev ? t->nev : 1) * sizeof *us);
    for (size_t i = 0; i < t->nev; i++)
        us[i] = NAN;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        if ((e->kind != TL_TEV_KERNEL && e->kind != TL_TEV_MEMCPY && e->kind != TL_TEV_MEMSET) ||
            !(e->flags & TL_TEV_LINKED))
            continue;
        uint32_t op = launcher_of(t, (uint32_t)i);
        if (op != TL_TEV_NONE)
            us[op] = (isnan(us[op]) ? 0 : us[op]) + e->dur;
    }
    return us;
}

/* The op's argument set as one number: calls of one shape do the same work. */
static uint64_t shape_of(const tl_trace *t, const tl_tev *e)
{
    const tl_tev_aux *x = tl_tev_x(t, e);
    const char *parts[4] = {x->args->input_dims, x->args->input_type, x->args->input_strides, x->args->concrete_inputs};
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (int k = 0; k < 4; k++) {
        const char *s = parts[k] ? parts[k] : "";
        h = tl_hash_mix(h ^ tl_hash_bytes(s, strlen(s))) + (uint64_t)k;
    }
    return h;
}

static void push(tl_diff_call **v, size_t *n, size_t *cap, tl_diff_call c)
{
    TL_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = c;
}

size_t tl_diff_calls(const tl_diff *d, tl_diff_call **out)
{
    const tl_trace *t1 = d->s[0].t, *t2 = d->s[1].t;
    double *us1 = direct_times(t1), *us2 = direct_times(t2);
    unsigned char *taken = tl_xcalloc(t2->nev ? t2->nev : 1, 1);
    tl_diff_call *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < t1->nev; i++) {
        if (isnan(us1[i]))
            continue;
        const tl_tev *e = &t1->ev[i];
        uint32_t p = d->partner[0][i];
        tl_diff_call c = {e->name, shape_of(t1, e), us1[i], NAN, e->ts, NAN};
        /* a partner of another name is another op: each side's call then stands alone */
        if (p < t2->nev && !isnan(us2[p]) && e->name && t2->ev[p].name && strcmp(e->name, t2->ev[p].name) == 0) {
            c.us2 = us2[p];
            c.ts2 = t2->ev[p].ts;
            taken[p] = 1;
        }
        push(&v, &n, &cap, c);
    }
    for (size_t i = 0; i < t2->nev; i++)
        if (!isnan(us2[i]) && !taken[i])
            push(&v, &n, &cap, (tl_diff_call){t2->ev[i].name, shape_of(t2, &t2->ev[i]), NAN, us2[i], NAN, t2->ev[i].ts});
    free(us1);
    free(us2);
    free(taken);
    *out = v;
    return n;
}
