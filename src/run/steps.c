/*
 * steps.c - two traces' steps in a comparison (see steps.h).
 */
#include "run/steps.h"

#include "base/progress.h"
#include "base/thread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A trace of this many steps or more has its first left out by default: warm-up (allocator,
 * autotuning, compilation) makes it unlike the others, and two are too few to lose one. */
#define WARMUP_FROM 3

typedef struct measure_job {
    const tl_trace *t;
    tl_steps *out;
} measure_job;

static void *measure_one(void *arg)
{
    measure_job *j = arg;
    tl_trace_steps(j->t, j->out);
    return NULL;
}

void tl_run_steps_measure(tl_run_steps *rs, const tl_trace *a, const tl_trace *b, size_t first, size_t last)
{
    memset(rs, 0, sizeof *rs);
    const tl_trace *t[2] = {a, b};
    /* the two traces at once: this is the summary's largest part on a pair of traces */
    measure_job job = {b, &rs->s[1]};
    pthread_t th;
    int threaded = tl_thread_create(&th, measure_one, &job) == 0;
    tl_trace_steps(a, &rs->s[0]);
    if (threaded)
        tl_thread_join(th, NULL);
    else
        measure_one(&job);
    for (int k = 0; k < 2; k++) {
        size_t n = rs->s[k].n;
        size_t f = first ? first - 1 : n >= WARMUP_FROM ? 1 : 0;
        size_t l = last && last < n ? last : n;
        rs->first[k] = f < l ? f : l;
        rs->last[k] = l;
        if (n && (first || last) && rs->last[k] - rs->first[k] < TL_STEPS_MIN)
            tl_note("--steps %zu:%zu keeps %zu of the %zu steps of '%s': too few to judge on steps", first ? first : 1,
                    last, rs->last[k] - rs->first[k], n, t[k]->path);
    }
    rs->measured = 1;
}

void tl_run_steps_judge(const tl_run_steps *rs, tl_noise *nz)
{
    if (!rs->measured)
        return;
    tl_step_side side[2];
    double *busy[2] = {NULL, NULL}, *ms[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const tl_steps *s = &rs->s[k];
        size_t f = rs->first[k], n = rs->last[k] - f;
        busy[k] = tl_xmalloc((n ? n : 1) * sizeof *busy[k]);
        ms[k] = tl_xmalloc((n && s->nops ? n * s->nops : 1) * sizeof *ms[k]);
        for (size_t i = 0; i < n; i++)
            busy[k][i] = s->tl[(f + i) * TL_TIMELINE_N + 3] / 1e3; /* busy_time */
        for (size_t o = 0; o < s->nops; o++)
            for (size_t i = 0; i < n; i++)
                ms[k][o * n + i] = s->us[o * s->n + f + i] / 1e3;
        side[k] = (tl_step_side){n, s->n, f + 1, busy[k], s->nops, s->op, ms[k]};
    }
    tl_noise_add_steps(nz, &side[0], &side[1]);
    for (int k = 0; k < 2; k++) {
        free(busy[k]);
        free(ms[k]);
    }
}

void tl_run_steps_lca(const tl_run_steps *rs, const tl_trace *a, const tl_trace *b, const tl_diff *d,
                      tl_lca_summary *ls)
{
    if (!rs->measured || !d)
        return;
    size_t nl, nrows;
    const tl_diff_lca *l = tl_diff_lcas(d, &nl);
    const tl_diff_row *rows = tl_diff_rows(d, &nrows);
    if (nl != ls->nlcas)
        return;
    const tl_trace *t[2] = {a, b};
    long *step[2];
    size_t kept[2], all[2], first[2];
    double *busy[2];
    for (int k = 0; k < 2; k++) {
        size_t f = rs->first[k];
        kept[k] = rs->last[k] - f;
        all[k] = rs->s[k].n;
        first[k] = f + 1;
        busy[k] = tl_xmalloc((kept[k] ? kept[k] : 1) * sizeof *busy[k]);
        for (size_t i = 0; i < kept[k]; i++)
            busy[k][i] = rs->s[k].tl[(f + i) * TL_TIMELINE_N + 3] / 1e3; /* busy_time */
        /* an LCA is one node of the call tree: the step of its first GPU event's launch */
        step[k] = tl_xmalloc((nl ? nl : 1) * sizeof *step[k]);
        for (size_t i = 0; i < nl; i++) {
            size_t r = k ? l[i].row2 : l[i].row1;
            long s = r < nrows ? tl_trace_step_of_gpu(t[k], rows[r].gpu) : -1;
            step[k][i] = s >= (long)f && s < (long)rs->last[k] ? s - (long)f : -1;
        }
    }
    char basis[128];
    tl_steps_basis(kept, all, first, basis, sizeof basis);
    const long *const cstep[2] = {step[0], step[1]};
    const double *const cbusy[2] = {busy[0], busy[1]};
    tl_lca_summary_steps(ls, cstep, kept, cbusy, basis);
    for (int k = 0; k < 2; k++) {
        free(step[k]);
        free(busy[k]);
    }
}

int tl_run_steps_put(const tl_run_steps *rs, const char *const tags[2], const tl_sink *sink, tl_error *err)
{
    if (!rs->measured || (!rs->s[0].n && !rs->s[1].n))
        return 0;
    /* gpu_timeline's rows a step shows, by their index in tl_trace_timeline_of's */
    static const struct {
        const char *col;
        int row;
    } shown[] = {{"busy_time ms", 3},           {"computation_time ms", 0}, {"exposed_comm_time ms", 1},
                 {"exposed_memcpy_time ms", 2}, {"idle_time ms", 4},        {"total_time ms", 5}};
    static const char *const lead[] = {"trace", "step", "position", "kept", "cpu ts us"};
    tl_table *t = tl_table_new();
    t->nrows = rs->s[0].n + rs->s[1].n;
    for (size_t c = 0; c < sizeof lead / sizeof *lead; c++)
        tl_table_add_column(t, lead[c]);
    for (size_t c = 0; c < sizeof shown / sizeof *shown; c++)
        tl_table_add_column(t, shown[c].col);
    size_t r = 0;
    for (int k = 0; k < 2; k++) {
        const tl_steps *s = &rs->s[k];
        for (size_t i = 0; i < s->n; i++, r++) {
            int kept = i >= rs->first[k] && i < rs->last[k];
            t->cols[0].cells[r] = tl_cell_str(tags[k]);
            t->cols[1].cells[r] = tl_cell_int(s->span[i].number);
            t->cols[2].cells[r] = tl_cell_int((int64_t)i + 1);
            t->cols[3].cells[r] = tl_cell_str(kept ? "yes" : "no");
            t->cols[4].cells[r] = tl_cell_float(s->span[i].ts);
            for (size_t c = 0; c < sizeof shown / sizeof *shown; c++)
                t->cols[5 + c].cells[r] = tl_cell_float(s->tl[i * TL_TIMELINE_N + shown[c].row] / 1e3);
        }
    }
    t->cols[0].type = t->cols[3].type = TL_COL_STR;
    tl_result res = {.name = "steps", .table = t, .nrows = t->nrows, .ncols = t->ncols};
    return sink->put(sink->ctx, &res, err);
}

/* The peak of op `name` in s, or NULL (a listed item is one of a few dozen: a scan). */
static const tl_step_peak *peak_of(const tl_steps *s, const char *name)
{
    for (size_t k = 0; name && k < s->nops; k++)
        if (strcmp(s->op[k], name) == 0)
            return &s->peak[k];
    return NULL;
}

static void locate_items(const tl_run_steps *rs, tl_summary_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            const tl_step_peak *p = peak_of(&rs->s[k], items[i].name);
            items[i].peak_step[k] = p ? p->step : -1;
            items[i].peak_ts[k] = p ? p->ts : NAN;
        }
    }
}

void tl_run_steps_locate(const tl_run_steps *rs, tl_summary *s)
{
    if (!rs->measured)
        return;
    for (size_t vi = 0; vi < s->nvariants; vi++) {
        tl_variant_summary *v = &s->variants[vi];
        locate_items(rs, v->regressions, v->nregressions);
        locate_items(rs, v->improvements, v->nimprovements);
        locate_items(rs, v->only_base, v->nonly_base);
        locate_items(rs, v->only_var, v->nonly_var);
    }
    s->located = 1;
}

void tl_run_steps_free(tl_run_steps *rs)
{
    tl_steps_free(&rs->s[0]);
    tl_steps_free(&rs->s[1]);
    rs->measured = 0;
}
