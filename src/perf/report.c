/*
 * report.c - the perf sheets of a trace in workbook order (PERF.md §0, §6) and the full
 * report of a trace (the five basic sheets with them before kernel_summary).
 */
#include "perf/perf.h"

#include "base/thread.h"

#include "perf/perf_eval.h"
#include "trace/kmap.h"
#include "trace/trace_report.h"

#include <stdlib.h>
#include <string.h>

/* The sheet families, in sheet order; the first four make one sheet each. */
static const char *const families[] = {
    "GEMM",        "BinaryElementwise", "UnaryElementwise", "Normalization", /* single */
    "SDPA",        "CONV",              "InferenceAttention", "GroupedGEMM", "MoE_comm", "SSM",
    "RoPE",        "CrossEntropy",      "MoE_fused",        "MoE_unfused",   "MoE_aux",  "RMSNorm",
    "elementwise", "GroupQuant",        "FusedRoPE",        "CustomCollective", "mHC", "Reduce",
};
#define NFAM (sizeof families / sizeof *families)
#define NSINGLE 4

/* §0's order of the sheets */
static const char *const order[] = {
    "GEMM", "SDPA", "CONV", "InferenceAttention", "BinaryElementwise", "GroupedGEMM", "MoE_comm", "SSM", "RoPE",
    "CrossEntropy", "UnaryElementwise", "MoE_fused", "MoE_unfused", "MoE_aux", "RMSNorm", "elementwise", "GroupQuant",
    "FusedRoPE", "CustomCollective", "mHC", "Normalization", "Reduce"};
#define NORDER (sizeof order / sizeof *order)

const char *const tl_perf_sheet_names[] = {
    "unified_perf_summary", "GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "InferenceAttention_fwd",
    "InferenceAttention_bwd", "BinaryElementwise", "GroupedGEMM_fwd", "GroupedGEMM_bwd", "MoE_comm_fwd",
    "MoE_comm_bwd", "SSM_fwd", "SSM_bwd", "RoPE_fwd", "RoPE_bwd", "CrossEntropy_fwd", "CrossEntropy_bwd",
    "UnaryElementwise", "MoE_fused_fwd", "MoE_fused_bwd", "MoE_unfused_fwd", "MoE_unfused_bwd", "MoE_aux_fwd",
    "MoE_aux_bwd", "RMSNorm_fwd", "RMSNorm_bwd", "elementwise_fwd", "elementwise_bwd", "GroupQuant_fwd",
    "GroupQuant_bwd", "FusedRoPE_fwd", "FusedRoPE_bwd", "CustomCollective_fwd", "CustomCollective_bwd", "mHC_fwd",
    "mHC_bwd", "Normalization", "Reduce_fwd", "Reduce_bwd", NULL};

static int fam_index(const char *sheet)
{
    for (size_t i = 0; i < NFAM; i++)
        if (strcmp(families[i], sheet) == 0)
            return (int)i;
    return -1;
}

static void type_columns(tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        int str = 0, boolean = 1, any = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            uint8_t k = t->cols[c].cells[r].kind;
            str |= k == TL_STR;
            if (k != TL_MISSING) {
                any = 1;
                boolean &= k == TL_BOOL;
            }
        }
        t->cols[c].type = str ? TL_COL_STR : any && boolean ? TL_COL_BOOL : TL_COL_NUM;
    }
}

/* A parameter column whose texts all read True/False is a boolean column in the
 * workbook (PERF.md §9.3): a sheet split off another (§6) may be left with one. */
static void bool_params(tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (strncmp(t->cols[c].name, "param: ", 7) != 0)
            continue;
        int all = t->nrows > 0;
        for (size_t r = 0; r < t->nrows && all; r++) {
            const tl_cell *x = &t->cols[c].cells[r];
            all = x->kind == TL_BOOL ||
                  (x->kind == TL_STR && (strcmp(x->v.s, "True") == 0 || strcmp(x->v.s, "False") == 0));
        }
        for (size_t r = 0; r < t->nrows && all; r++) {
            tl_cell *x = &t->cols[c].cells[r];
            if (x->kind == TL_STR)
                *x = tl_cell_bool(x->v.s[0] == 'T');
        }
    }
}

static void emit(tl_results *out, const char *name, tl_table *t)
{
    if (!t)
        return;
    bool_params(t);
    if (t->nrows == 0) {
        tl_table_free(t);
        return;
    }
    type_columns(t);
    tl_results_add(out, name, t);
}

static int name_in(const char *n, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(n, *list) == 0)
            return 1;
    return 0;
}

/* The rows of t whose name is (keep = 1) or is not (keep = 0) in list, as a new table
 * (t keeps the others). */
static tl_table *split_rows(tl_table *t, const char *const *list)
{
    size_t *in = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *in), *out = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *out);
    size_t ni = 0, no = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const tl_cell *c = &t->cols[0].cells[r];
        if (c->kind == TL_STR && name_in(c->v.s, list))
            in[ni++] = r;
        else
            out[no++] = r;
    }
    tl_table *m = tl_table_new();
    m->nrows = ni;
    for (size_t c = 0; c < t->ncols; c++) {
        size_t k = tl_table_add_column(m, t->cols[c].name);
        for (size_t r = 0; r < ni; r++)
            m->cols[k].cells[r] = t->cols[c].cells[in[r]];
    }
    tl_table_take_rows(t, out, no);
    free(in);
    free(out);
    return m;
}

/* b's rows appended to a; columns a's, then those of b's that a lacks. */
static tl_table *concat(tl_table *a, tl_table *b)
{
    tl_table *r = tl_table_new();
    size_t na = a ? a->nrows : 0, nb = b->nrows;
    r->nrows = na + nb;
    const char **names = NULL;
    size_t nn = 0, cap = 0;
    if (a)
        for (size_t c = 0; c < a->ncols; c++) {
            TL_GROW(names, cap, nn + 1);
            names[nn++] = a->cols[c].name;
        }
    for (size_t c = 0; c < b->ncols; c++)
        if (!a || tl_table_find(a, b->cols[c].name) < 0) {
            TL_GROW(names, cap, nn + 1);
            names[nn++] = b->cols[c].name;
        }
    for (size_t c = 0; c < nn; c++) {
        size_t k = tl_table_add_column(r, names[c]);
        long ia = a ? tl_table_find(a, names[c]) : -1, ib = tl_table_find(b, names[c]);
        for (size_t q = 0; q < na; q++)
            r->cols[k].cells[q] = ia >= 0 ? a->cols[ia].cells[q] : tl_cell_missing();
        for (size_t q = 0; q < nb; q++)
            r->cols[k].cells[na + q] = ib >= 0 ? b->cols[ib].cells[q] : tl_cell_missing();
    }
    free(names);
    if (a)
        tl_table_free(a);
    tl_table_free(b);
    return r;
}

static const char *const moved_names[] = {"flash_attn::_flash_attn_varlen_backward", "aten::convolution_backward",
                                          "ConvBias_Backward", "ConvBiasReLU_Backward", NULL};
static const char *const infer_moved_names[] = {"flash_attn::_flash_attn_varlen_backward", "aten::convolution_backward",
                                                NULL};
static const char *const bwd_drop[] = {"aten::convolution", "aten::miopen_convolution", "aten::cudnn_convolution",
                                       "ConvBias_", "ConvBiasReLU_", NULL};

/* The sheet of events ev[0..n) evaluated in direction bwd, skipping `skip` (may be NULL). */
static tl_table *family_sheet(pm_env *env, const uint32_t *ev, const char *const *model, size_t n, int bwd,
                              const char *skip)
{
    pm_row *rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (TL_TRACE_CANCEL_EVERY(i, env->t, NULL))
            break; /* a cancelled run: the caller drops the sheet */
        if (skip && strcmp(env->t->ev[ev[i]].name, skip) == 0)
            continue;
        if (tl_pm_eval(env, ev[i], model[i], bwd, &rows[nr]) == PM_OK)
            nr++;
    }
    tl_table *t = tl_pm_sheet(env, rows, nr);
    free(rows);
    return t;
}

int tl_perf_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err)
{
    static const tl_perf_opts eager;
    return tl_perf_sheets_opts(t, arch, &eager, arena, out, err);
}

int tl_perf_sheets_opts(const tl_trace *t, const tl_gpu_arch *arch, const tl_perf_opts *po, tl_arena *arena,
                        tl_results *out, tl_error *err)
{
    if (!t->ncpu_ops)
        return 0;
    if (tl_trace_cancelled(t, err))
        return -1;
    pm_env env;
    tl_pm_env_init(&env, t, arch, arena);
    env.num_kernels = po->num_kernels;
    env.call_stack = po->call_stack;
    if (po->inference)
        tl_pm_env_annotate(&env);
    emit(out, "unified_perf_summary", tl_pm_unified(&env));
    if (tl_trace_cancelled(t, err)) {
        tl_pm_env_free(&env);
        return -1;
    }

    /* the events of each sheet family, array order (names are interned: one lookup per
     * distinct name) */
    uint32_t *evs[NFAM] = {0};
    const char **models[NFAM] = {0};
    size_t nevs[NFAM] = {0}, caps[NFAM] = {0}, mcaps[NFAM] = {0};
    tl_kmap seen;
    tl_kmap_init(&seen);
    for (size_t i = 0; i < t->nev; i++) {
        const char *nm = t->ev[i].name;
        int created;
        tl_kmap_slot *sl = tl_kmap_put(&seen, (int64_t)(uintptr_t)nm, 0, 0, &created);
        if (created) {
            const pm_op *op = tl_pm_op_find(nm);
            sl->val = op ? (uint32_t)(fam_index(op->sheet) + 1) : 0;
        }
        if (!sl->val)
            continue;
        size_t f = sl->val - 1;
        TL_GROW(evs[f], caps[f], nevs[f] + 1);
        TL_GROW(models[f], mcaps[f], nevs[f] + 1);
        evs[f][nevs[f]] = (uint32_t)i;
        models[f][nevs[f]++] = tl_pm_op_find(nm)->model;
    }
    tl_kmap_free(&seen);

    int rc = 0;
    for (size_t o = 0; o < NORDER; o++) {
        int f = fam_index(order[o]);
        if (f < 0 || !nevs[f])
            continue;
        if (tl_trace_cancelled(t, err)) { /* between the sheets: each is quick */
            rc = -1;
            break;
        }
        /* the inference generator writes Normalization as a split family, and no
         * backward sheets: its backward pass is never run, the rows it would move there
         * are dropped */
        int single = po->inference ? f < NSINGLE && strcmp(families[f], "Normalization") != 0 : f < NSINGLE;
        if (single) {
            emit(out, families[f], family_sheet(&env, evs[f], models[f], nevs[f], 0, NULL));
            continue;
        }
        tl_table *fwd = family_sheet(&env, evs[f], models[f], nevs[f], 0, NULL);
        if (po->inference) {
            if (fwd)
                tl_table_free(split_rows(fwd, infer_moved_names));
            emit(out, tl_arena_printf(arena, "%s_fwd", families[f]), fwd);
            continue;
        }
        tl_table *moved = NULL;
        if (fwd)
            moved = split_rows(fwd, moved_names);
        tl_table *bwd = family_sheet(&env, evs[f], models[f], nevs[f], 1, "vllm::unified_attention_with_output");
        if (moved)
            bwd = concat(bwd, moved);
        if (bwd)
            tl_table_free(split_rows(bwd, bwd_drop));
        emit(out, tl_arena_printf(arena, "%s_fwd", families[f]), fwd);
        emit(out, tl_arena_printf(arena, "%s_bwd", families[f]), bwd);
    }
    if (rc == 0 && tl_trace_cancelled(t, err))
        rc = -1; /* the last family may have been cut short */
    for (size_t f = 0; f < NFAM; f++) {
        free(evs[f]);
        free(models[f]);
    }
    tl_pm_env_free(&env);
    return rc;
}

/* Whether TL_PERF_SHEETS=0 asks for the report without the perf sheets (the benchmark
 * measures their cost on the same binary). */
static int perf_sheets_off(void)
{
    const char *v = getenv("TL_PERF_SHEETS");
    return v && strcmp(v, "0") == 0;
}

/* The perf sheets of one report, made on a thread of their own beside the basic sheets:
 * the two read the same finished trace and nothing else, and on a large trace each is a
 * good part of the work after the reading. */
typedef struct perf_job {
    const tl_trace *t;
    const tl_gpu_arch *arch;
    const tl_perf_opts *po;
    tl_arena arena; /* its own, adopted by the caller's when it is done */
    tl_results out;
    tl_error err;
    int rc;
} perf_job;

/* Below this, the sheets take a millisecond or two and a thread would only add its
 * memory; above, it pays (measured: at 39k events, owlv2's H100 report takes 0.92x the
 * wall time with the perf sheets on a thread). */
#define PERF_THREAD_MIN_EVENTS ((size_t)1 << 14)

static void *perf_job_run(void *arg)
{
    perf_job *pj = arg;
    pj->rc = tl_perf_sheets_opts(pj->t, pj->arch, pj->po, &pj->arena, &pj->out, &pj->err);
    return NULL;
}

/* The basic sheets in layout `so` with the perf sheets of options `po` before kernel_summary. */
static int report_sheets(const tl_trace *t, const tl_sheet_opts *so, const tl_perf_opts *po, const tl_gpu_arch *arch,
                         tl_arena *arena, tl_results *out, tl_error *err)
{
    tl_results basic = {0};
    perf_job pj = {t, arch, po, {0}, {0}, {0}, 0};
    tl_arena_init(&pj.arena);
    int with_perf = !perf_sheets_off() && t->ncpu_ops;
    pthread_t th;
    int threaded = with_perf && t->nev >= PERF_THREAD_MIN_EVENTS && tl_thread_create(&th, perf_job_run, &pj) == 0;
    int rc = tl_trace_sheets_opts(t, so, arena, &basic, err);
    if (threaded)
        tl_thread_join(th, NULL);
    else if (with_perf && rc == 0)
        perf_job_run(&pj);
    tl_arena_adopt(arena, &pj.arena);
    if (rc == 0 && tl_trace_cancelled(t, err))
        rc = -1;
    if (rc == 0 && with_perf && pj.rc != 0) {
        tl_error_set(err, "%s", pj.err.msg);
        rc = -1;
    }
    if (rc != 0) {
        tl_results_free(&basic);
        tl_results_free(&pj.out);
        return -1;
    }
    tl_results *perf = &pj.out;
    size_t ks = basic.n;
    for (size_t i = 0; i < basic.n; i++)
        if (strcmp(basic.items[i].name, "kernel_summary") == 0)
            ks = i;
    for (size_t i = 0; i < basic.n + perf->n; i++) {
        const tl_result *src = i < ks ? &basic.items[i] : i < ks + perf->n ? &perf->items[i - ks] : &basic.items[i - perf->n];
        TL_GROW(out->items, out->cap, out->n + 1);
        out->items[out->n++] = *src;
    }
    free(basic.items);
    free(perf->items);
    return 0;
}

int tl_perf_report_sheets(const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena, tl_results *out, tl_error *err)
{
    static const tl_sheet_opts eager_layout;
    static const tl_perf_opts eager;
    return report_sheets(t, &eager_layout, &eager, arch, arena, out, err);
}

int tl_perf_report_sheets_layout(const tl_trace *t, const tl_sheet_opts *so, const tl_gpu_arch *arch, tl_arena *arena,
                                 tl_results *out, tl_error *err)
{
    static const tl_perf_opts eager;
    return report_sheets(t, so, &eager, arch, arena, out, err);
}

int tl_perf_infer_report_sheets(const tl_trace *t, const tl_sheet_opts *so, const tl_infer_opts *io, tl_arena *arena,
                                tl_results *out, tl_error *err)
{
    tl_perf_opts po = {0};
    po.inference = so->inference;
    po.num_kernels = so->num_kernels;
    po.call_stack = io->call_stack;
    return report_sheets(t, so, &po, NULL, arena, out, err);
}

static int build(const tl_trace *t, void *ctx, tl_arena *arena, tl_results *out, tl_error *err)
{
    return tl_perf_report_sheets(t, ctx, arena, out, err);
}

int tl_perf_report_open(tl_report *r, const char *path, const tl_gpu_arch *arch, tl_error *err)
{
    return tl_perf_report_open_cancel(r, path, arch, NULL, err);
}

int tl_perf_report_open_cancel(tl_report *r, const char *path, const tl_gpu_arch *arch, tl_cancel *cancel,
                               tl_error *err)
{
    return tl_trace_report_open_cancel_with(r, path, build, (void *)arch, cancel, err);
}

int tl_perf_report_open_infer(tl_report *r, const char *path, const tl_trace_infer_spec *spec, tl_error *err)
{
    return tl_trace_report_open_infer_with(r, path, spec, tl_perf_infer_report_sheets, err);
}
