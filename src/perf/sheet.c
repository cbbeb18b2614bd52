/*
 * sheet.c - a perf sheet from its raw rows (PERF.md §5): the parameter columns typed as
 * pandas types them, the groups on (name, parameter texts), their aggregates, the
 * kernel statistics, the columns in order and the rows by total kernel time.
 */
#include "perf/perf_eval.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/sort.h"
#include "perf/pyval.h"
#include "trace/jscan.h"
#include "trace/opcat.h"
#include "trace/pdnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- aggregates ------------------------------------------------------------------------ */

void tl_pm_aggregate(const double *v, size_t n, pm_agg *out)
{
    tl_kahan k = {0};
    tl_welford w = {0};
    double small[32];
    double *tmp = n <= 32 ? small : tl_xmalloc(n * sizeof *tmp);
    size_t m = 0;
    out->min = out->max = out->first = NAN;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (m == 0)
            out->first = out->min = out->max = v[i];
        if (v[i] < out->min)
            out->min = v[i];
        if (v[i] > out->max)
            out->max = v[i];
        tl_kahan_add(&k, v[i]);
        tl_welford_add(&w, v[i]);
        tmp[m++] = v[i];
    }
    out->n = m;
    out->sum = m ? k.sum : NAN;
    out->mean = m ? k.sum / (double)m : NAN;
    out->std = tl_welford_std(&w);
    if (m) {
        if (m <= 32) { /* most groups are small: insertion sort, no call per comparison */
            for (size_t i = 1; i < m; i++) {
                double x = tmp[i];
                size_t j = i;
                for (; j > 0 && tmp[j - 1] > x; j--)
                    tmp[j] = tmp[j - 1];
                tmp[j] = x;
            }
            out->median = m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
        } else {
            double lo, hi;
            tl_middle_values(tmp, m, &lo, &hi);
            out->median = m % 2 ? hi : (lo + hi) / 2;
        }
    } else {
        out->median = NAN;
    }
    if (tmp != small)
        free(tmp);
}

/* ---- kernel statistics (TRACES.md §4.2) -------------------------------------------------- */

static void buf_double(tl_buf *b, double d)
{
    char s[TL_NUMFMT_MAX];
    if (isnan(d))
        tl_buf_adds(b, "nan");
    else if (isinf(d))
        tl_buf_adds(b, d < 0 ? "-inf" : "inf");
    else
        tl_buf_add(b, s, tl_fmt_double(d, s));
}


typedef tl_kernel_stat kstat;

static int pm_kstat_cmp(size_t a, size_t b, void *ctx)
{
    const kstat *k = ctx;
    if (k[a].total != k[b].total)
        return k[a].total < k[b].total ? -1 : 1;
    return strcmp(k[a].name, k[b].name);
}

void tl_pm_kernel_summary(pm_env *env, const uint32_t *const *lists, const size_t *lens, size_t n, const char **summary,
                       const char **trunc)
{
    tl_pm_kernel_summary_ex(env, lists, lens, n, NULL, NULL, summary, trunc);
}

void tl_pm_kernel_summary_ex(pm_env *env, const uint32_t *const *lists, const size_t *lens, size_t n,
                          const char *const *const *extra, size_t *order, const char **summary, const char **trunc)
{
    const tl_trace *t = env->t;
    size_t tpl = SIZE_MAX;
    for (size_t i = 0; i < n && tpl == SIZE_MAX; i++)
        if (lens[i])
            tpl = i;
    if (tpl == SIZE_MAX) {
        *summary = "[]";
        *trunc = NULL;
        return;
    }
    size_t nk = lens[tpl];
    kstat *ks = tl_xcalloc(nk, sizeof *ks);
    double *d = tl_xmalloc(n * sizeof *d);
    for (size_t i = 0; i < nk; i++) {
        size_t m = 0;
        int ints = 1;
        for (size_t r = 0; r < n; r++) {
            if (lens[r] == nk) {
                d[m++] = t->ev[lists[r][i]].dur;
                ints &= tl_tev_dur_int(&t->ev[lists[r][i]]);
            }
        }
        ks[i] = tl_kernel_stat_of(t, &t->ev[lists[tpl][i]], d, m, ints);
    }
    /* by (total, name), stably: a merge sort through tl_sort_rows */
    size_t *ord = tl_xmalloc(nk * sizeof *ord);
    for (size_t i = 0; i < nk; i++)
        ord[i] = i;
    tl_sort_rows(ord, nk, pm_kstat_cmp, ks);
    tl_buf b = {0}, tb = {0};
    tl_buf_addc(&b, '[');
    tl_buf_addc(&tb, '[');
    for (size_t q = 0; q < nk; q++) {
        const kstat *s = &ks[ord[q]];
        if (q) {
            tl_buf_add(&b, ", ", 2);
            tl_buf_add(&tb, ", ", 2);
        }
        size_t at = b.len;
        tl_kernel_stat_texts(&b, &tb, s);
        if (extra && extra[tpl] && extra[tpl][ord[q]]) {
            /* after {'name': NAME, 'stream': S */
            tl_buf nb = {0};
            tl_py_str_repr(&nb, s->name, strlen(s->name));
            size_t from = at + 9 + nb.len + 12;
            tl_buf_free(&nb);
            const char *c = strstr(b.data + from, ", 'count': ");
            if (c) {
                size_t pos = (size_t)(c - b.data), add = strlen(extra[tpl][ord[q]]);
                tl_buf_add(&b, extra[tpl][ord[q]], add); /* room */
                memmove(b.data + pos + add, b.data + pos, b.len - add - pos);
                memcpy(b.data + pos, extra[tpl][ord[q]], add);
            }
        }
        if (order)
            order[q] = ord[q];
    }
    tl_buf_addc(&b, ']');
    tl_buf_addc(&tb, ']');
    *summary = tl_arena_strndup(env->arena, b.data, b.len);
    *trunc = tl_arena_strndup(env->arena, tb.data, tb.len);
    tl_buf_free(&b);
    tl_buf_free(&tb);
    free(ord);
    free(ks);
    free(d);
}

/* ---- the sheet --------------------------------------------------------------------------- */

typedef struct pcol {
    const char *name;
    int cls;            /* PT_INT: ints; PT_FLOAT: doubles; PT_BOOL; PT_OTHER: texts */
    tl_cell *cells;     /* per raw row */
    const char **key;   /* per raw row: the cell's text */
} pcol;

typedef struct grp {
    size_t *rows;
    size_t n, cap;
    double ktsum;
    uint32_t uid;
} grp;

static int grp_cmp(size_t a, size_t b, void *ctx)
{
    const grp *g = ctx;
    if (g[a].ktsum != g[b].ktsum)
        return g[a].ktsum > g[b].ktsum ? -1 : 1;
    return g[a].uid < g[b].uid ? -1 : g[a].uid > g[b].uid ? 1 : 0;
}

static const pm_ptext *find_par(const pm_row *r, const char *name)
{
    /* the models name their parameters with the same literals, so the pointers
     * usually match */
    for (size_t i = 0; i < r->npar; i++)
        if (r->par[i].name == name)
            return &r->par[i];
    for (size_t i = 0; i < r->npar; i++)
        if (strcmp(r->par[i].name, name) == 0)
            return &r->par[i];
    return NULL;
}

static const char *fmt_double(tl_arena *a, double d)
{
    tl_buf b = {0};
    buf_double(&b, d);
    const char *s = tl_arena_strndup(a, b.data, b.len);
    tl_buf_free(&b);
    return s;
}

/* Type a parameter column over the raw rows (PERF.md §5.2). */
static void type_column(pm_env *env, const pm_row *rows, size_t n, pcol *pc)
{
    int all_present = 1, all_int = 1, all_bool = 1, num_only = 1, any_num = 0, any_float = 0, any_none = 0;
    for (size_t r = 0; r < n; r++) {
        const pm_ptext *p = find_par(&rows[r], pc->name);
        if (!p) {
            all_present = 0;
            continue;
        }
        all_int &= p->cls == PT_INT;
        all_bool &= p->cls == PT_BOOL;
        if (p->cls == PT_INT || p->cls == PT_FLOAT)
            any_num = 1;
        else if (p->cls == PT_NONE)
            any_none = 1;
        else
            num_only = 0;
        any_float |= p->cls == PT_FLOAT;
    }
    if (all_present && all_int)
        pc->cls = PT_INT;
    else if (num_only && any_num && (any_float || !all_present || any_none))
        pc->cls = PT_FLOAT;
    else if (all_present && all_bool)
        pc->cls = PT_BOOL;
    else
        pc->cls = PT_OTHER;
    pc->cells = tl_xcalloc(n, sizeof *pc->cells);
    pc->key = tl_xcalloc(n, sizeof *pc->key);
    for (size_t r = 0; r < n; r++) {
        const pm_ptext *p = find_par(&rows[r], pc->name);
        switch (pc->cls) {
        case PT_INT:
            pc->cells[r] = tl_cell_int(p->i);
            pc->key[r] = p->text;
            break;
        case PT_FLOAT:
            if (!p || p->cls == PT_NONE) {
                /* a NaN double: "nan" in the CSV, an empty cell in the workbook (a number
                 * column there), as pandas writes the column's NaN */
                pc->cells[r] = tl_cell_float(NAN);
                pc->key[r] = "nan";
            } else {
                pc->key[r] = fmt_double(env->arena, p->f);
                pc->cells[r] = tl_cell_float(p->f);
            }
            break;
        case PT_BOOL:
            pc->cells[r] = tl_cell_bool((int)p->i);
            pc->key[r] = p->i ? "True" : "False";
            break;
        default:
            pc->key[r] = p ? p->text : "nan";
            pc->cells[r] = tl_cell_str(pc->key[r]);
        }
    }
}

/* A table being filled column by column. */
typedef struct tb {
    tl_table *t;
    size_t c;
} tb;

static tl_cell *col(tb *b, const char *name)
{
    b->c = tl_table_add_column(b->t, name);
    return b->t->cols[b->c].cells;
}

static tl_cell fcell(double v) { return isnan(v) ? tl_cell_missing() : tl_cell_float(v); }
static tl_cell scell(const char *s) { return s ? tl_cell_str(s) : tl_cell_missing(); }

static const char *list_text(tl_arena *a, const char *tuple_text)
{
    if (!tuple_text)
        return NULL;
    tl_buf b = {0};
    tl_pv_tuple_text_as_list(&b, tuple_text);
    const char *s = tl_arena_strndup(a, b.data ? b.data : "", b.len);
    tl_buf_free(&b);
    return s;
}

/* The per-group aggregates of a sheet, A_N per group. */
enum { A_TBS, A_TFL, A_KT, A_PCT, A_N };

/* The parameter columns of rows[0..n), in first-seen order, typed (*npc of them). */
static pcol *param_columns(pm_env *env, const pm_row *rows, size_t n, size_t *npc_out)
{
    pcol *pc = NULL;
    size_t npc = 0, pccap = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < rows[r].npar; i++) {
            const char *pn = rows[r].par[i].name;
            size_t k = 0;
            while (k < npc && pc[k].name != pn)
                k++;
            if (k == npc) {
                k = 0;
                while (k < npc && strcmp(pc[k].name, pn) != 0)
                    k++;
            }
            if (k == npc) {
                TL_GROW(pc, pccap, npc + 1);
                memset(&pc[npc], 0, sizeof pc[npc]);
                pc[npc++].name = rows[r].par[i].name;
            }
        }
    for (size_t k = 0; k < npc; k++)
        type_column(env, rows, n, &pc[k]);
    *npc_out = npc;
    return pc;
}

/* The groups of rows[0..n) on (name, parameter texts), first seen (*ng of them). */
static grp *group_rows(pm_env *env, const pm_row *rows, size_t n, const pcol *pc, size_t npc, size_t *ng_out)
{
    tl_strmap map = {0};
    grp *g = NULL;
    size_t ng = 0, gcap = 0;
    tl_buf kb = {0};
    for (size_t r = 0; r < n; r++) {
        tl_buf_clear(&kb);
        tl_buf_adds(&kb, rows[r].name);
        for (size_t k = 0; k < npc; k++) {
            tl_buf_addc(&kb, '\x1f');
            tl_buf_adds(&kb, pc[k].key[r]);
        }
        if (env->num_kernels)
            tl_buf_printf(&kb, "\x1f%zu", rows[r].nkern);
        tl_strmap_slot *sl = tl_strmap_get(&map, tl_buf_cstr(&kb));
        if (sl->value == 0) {
            sl->key = tl_arena_strndup(env->arena, kb.data, kb.len);
            TL_GROW(g, gcap, ng + 1);
            memset(&g[ng], 0, sizeof g[ng]);
            sl->value = ++ng;
        }
        grp *gr = &g[sl->value - 1];
        TL_GROW(gr->rows, gr->cap, gr->n + 1);
        gr->rows[gr->n++] = r;
    }
    tl_buf_free(&kb);
    tl_strmap_clear(&map);
    *ng_out = ng;
    return g;
}

/* Each group's aggregates of TB/s, TFLOPS/s, Kernel Time and Pct Roofline (A_N a group);
 * sets each group's Kernel Time sum and first UID, its sort keys. */
static pm_agg *aggregate_groups(const tl_trace *t, const pm_row *rows, size_t n, grp *g, size_t ng)
{
    pm_agg *ag = tl_xcalloc(ng * A_N, sizeof *ag);
    double *v = tl_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < ng; i++) {
        for (int a = 0; a < A_N; a++) {
            for (size_t q = 0; q < g[i].n; q++) {
                const pm_row *rw = &rows[g[i].rows[q]];
                v[q] = a == A_TBS ? rw->tbs : a == A_TFL ? rw->tflops : a == A_KT ? rw->kt : rw->pct_roof;
            }
            tl_pm_aggregate(v, g[i].n, &ag[i * A_N + a]);
        }
        g[i].ktsum = ag[i * A_N + A_KT].sum;
        g[i].uid = t->ev[rows[g[i].rows[0]].ev].uid;
    }
    free(v);
    return ag;
}

/* A sheet being made: the rows, their groups in sheet order, the aggregates. */
typedef struct sheet_ctx {
    pm_env *env;
    const pm_row *rows;
    size_t n;
    const pcol *pc;
    size_t npc;
    const grp *g;
    size_t ng;
    const size_t *ord; /* the groups in sheet order */
    const pm_agg *ag;
    int kt_int;        /* Kernel Time is integral in every row */
    int any_roof;      /* some row has a roofline */
    tb *b;
} sheet_ctx;

/* Row r's group (rows are the groups in sheet order), its first row, its aggregates of a. */
static const grp *sgrp(const sheet_ctx *c, size_t r) { return &c->g[c->ord[r]]; }
static const pm_row *first_row(const sheet_ctx *c, size_t r) { return &c->rows[sgrp(c, r)->rows[0]]; }
static const pm_agg *sagg(const sheet_ctx *c, size_t r, int a) { return &c->ag[c->ord[r] * A_N + a]; }

/* The statistics of an aggregate, in the order of the sheets' columns. */
enum { S_MEAN, S_MEDIAN, S_STD, S_MIN, S_MAX, S_SUM };
static const char *const stat_names[6] = {"mean", "median", "std", "min", "max", "sum"};

static double stat_of(const pm_agg *p, int s)
{
    return s == S_MEAN ? p->mean : s == S_MEDIAN ? p->median : s == S_STD ? p->std : s == S_MIN ? p->min
         : s == S_MAX ? p->max : p->sum;
}

/* The float fields a group shows from its first row that has one. */
enum { F_GFLOPS, F_MB, F_FPB, F_ROOF_TIME };

static double row_field(const pm_row *w, int f)
{
    return f == F_GFLOPS ? w->gflops : f == F_MB ? w->mb : f == F_FPB ? w->fpb : w->roof_time;
}

/* A column of field f: the first non-missing value over each group. */
static void first_column(const sheet_ctx *c, const char *name, int f)
{
    tl_cell *x = col(c->b, name);
    for (size_t r = 0; r < c->ng; r++) {
        const grp *gr = sgrp(c, r);
        double fv = NAN;
        for (size_t q = 0; q < gr->n && isnan(fv); q++)
            fv = row_field(&c->rows[gr->rows[q]], f);
        x[r] = fcell(fv);
    }
}

/* The five statistics of aggregate a: "<prefix>_mean" ... "<prefix>_max". */
static void stat_columns(const sheet_ctx *c, const char *prefix, int a)
{
    for (int s = S_MEAN; s <= S_MAX; s++) {
        tl_cell *x = col(c->b, tl_arena_printf(c->env->arena, "%s_%s", prefix, stat_names[s]));
        for (size_t r = 0; r < c->ng; r++)
            x[r] = fcell(stat_of(sagg(c, r, a), s));
    }
}

/* The process name, process label and thread name of each group's first row. */
static void thread_columns(const sheet_ctx *c)
{
    const tl_trace *t = c->env->t;
    tl_cell *pn = col(c->b, "process_name_first");
    tl_cell *pl = col(c->b, "process_label_first");
    tl_cell *tn = col(c->b, "thread_name_first");
    for (size_t r = 0; r < c->ng; r++) {
        const tl_tev *e0 = &t->ev[first_row(c, r)->ev];
        pn[r] = tl_cell_str(tl_trace_process_name(t, tl_tev_pid(t, e0)));
        pl[r] = tl_cell_str(tl_trace_process_label(t, tl_tev_pid(t, e0)));
        tn[r] = tl_cell_str(tl_trace_thread_name(t, tl_tev_pid(t, e0), tl_tev_tid(t, e0)));
    }
}

/* name, the parameters, the rates, the process and thread, Compute Spec, the roofline. */
static void head_columns(const sheet_ctx *c)
{
    tl_cell *x = col(c->b, "name");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_str(first_row(c, r)->name);
    for (size_t k = 0; k < c->npc; k++) {
        x = col(c->b, tl_arena_printf(c->env->arena, "param: %s", c->pc[k].name));
        for (size_t r = 0; r < c->ng; r++)
            x[r] = c->pc[k].cells[sgrp(c, r)->rows[0]];
    }
    if (c->env->num_kernels) {
        x = col(c->b, "num_kernels");
        for (size_t r = 0; r < c->ng; r++)
            x[r] = tl_cell_int((int64_t)first_row(c, r)->nkern);
    }
    first_column(c, "GFLOPS_first", F_GFLOPS);
    first_column(c, "Data Moved (MB)_first", F_MB);
    first_column(c, "FLOPS/Byte_first", F_FPB);
    stat_columns(c, "TB/s", A_TBS);
    stat_columns(c, "TFLOPS/s", A_TFL);
    thread_columns(c);
    x = col(c->b, "Compute Spec");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_str(first_row(c, r)->spec);
    if (c->any_roof) {
        first_column(c, "Roofline Time (µs)_first", F_ROOF_TIME);
        x = col(c->b, "Roofline Bound_first");
        for (size_t r = 0; r < c->ng; r++) {
            const grp *gr = sgrp(c, r);
            const char *s = NULL;
            for (size_t q = 0; q < gr->n && !s; q++)
                s = c->rows[gr->rows[q]].roof_bound;
            x[r] = scell(s);
        }
        stat_columns(c, "Pct Roofline", A_PCT);
    }
}

/* Each group's kernel summary and its truncated form. */
static void kernel_columns(const sheet_ctx *c)
{
    tl_cell *ks = col(c->b, "kernel_details__summarize_kernel_stats");
    tl_cell *kt = col(c->b, "trunc_kernel_details");
    const uint32_t **lists = tl_xmalloc(c->n * sizeof *lists);
    size_t *lens = tl_xmalloc(c->n * sizeof *lens);
    for (size_t r = 0; r < c->ng; r++) {
        const grp *gr = sgrp(c, r);
        for (size_t q = 0; q < gr->n; q++) {
            lists[q] = c->rows[gr->rows[q]].kern;
            lens[q] = c->rows[gr->rows[q]].nkern;
        }
        const char *s, *tr;
        tl_pm_kernel_summary(c->env, lists, lens, gr->n, &s, &tr);
        ks[r] = tl_cell_str(s);
        kt[r] = scell(tr);
    }
    free(lists);
    free(lens);
}

/* The kernels, the arguments, Kernel Time, the count and the first UID. */
static void tail_columns(const sheet_ctx *c)
{
    const tl_trace *t = c->env->t;
    kernel_columns(c);
    static const char *const argcol[4] = {"Input Dims_first", "Input type_first", "Input Strides_first",
                                          "Concrete Inputs_first"};
    for (int a = 0; a < 4; a++) {
        tl_cell *x = col(c->b, argcol[a]);
        for (size_t r = 0; r < c->ng; r++) {
            const grp *gr = sgrp(c, r);
            const char *s = NULL;
            for (size_t q = 0; q < gr->n && !s; q++) {
                const tl_tev_aux *e = tl_tev_x(t, &t->ev[c->rows[gr->rows[q]].ev]);
                s = a == 0 ? e->args->input_dims : a == 1 ? e->args->input_type : a == 2 ? e->args->input_strides : e->args->concrete_inputs;
            }
            x[r] = scell(list_text(c->env->arena, s));
        }
    }
    /* Kernel Time's min, max and sum are ints when every row's is */
    for (int s = S_MEAN; s <= S_SUM; s++) {
        tl_cell *x = col(c->b, tl_arena_printf(c->env->arena, "Kernel Time (µs)_%s", stat_names[s]));
        for (size_t r = 0; r < c->ng; r++) {
            double d = stat_of(sagg(c, r, A_KT), s);
            x[r] = c->kt_int && s >= S_MIN && !isnan(d) ? tl_trace_time_cell(d, 1) : fcell(d);
        }
    }
    tl_cell *x = col(c->b, "name_count");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_int((int64_t)sgrp(c, r)->n);
    x = col(c->b, "UID_first");
    for (size_t r = 0; r < c->ng; r++)
        x[r] = tl_cell_int(sgrp(c, r)->uid);
}

tl_table *tl_pm_sheet(pm_env *env, const pm_row *rows, size_t n)
{
    if (n == 0)
        return NULL;
    size_t npc = 0, ng = 0;
    pcol *pc = param_columns(env, rows, n, &npc);
    grp *g = group_rows(env, rows, n, pc, npc, &ng);
    int kt_int = 1, any_roof = 0;
    for (size_t r = 0; r < n; r++) {
        kt_int &= rows[r].kt_int;
        any_roof |= rows[r].roof_bound != NULL;
    }
    pm_agg *ag = aggregate_groups(env->t, rows, n, g, ng);
    size_t *ord = tl_xmalloc(ng * sizeof *ord);
    for (size_t i = 0; i < ng; i++)
        ord[i] = i;
    tl_sort_rows(ord, ng, grp_cmp, g);

    tb b = {tl_table_new(), 0};
    b.t->nrows = ng;
    sheet_ctx c = {env, rows, n, pc, npc, g, ng, ord, ag, kt_int, any_roof, &b};
    head_columns(&c);
    tail_columns(&c);

    for (size_t k = 0; k < npc; k++) {
        free(pc[k].cells);
        free(pc[k].key);
    }
    free(pc);
    for (size_t i = 0; i < ng; i++)
        free(g[i].rows);
    free(g);
    free(ag);
    free(ord);
    return b.t;
}
