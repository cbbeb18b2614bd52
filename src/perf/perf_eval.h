/*
 * perf_eval.h - one perf row: an event evaluated in one direction (PERF.md §3), and the
 * forward/backward links it needs (§1.6).  Private to src/perf/: the sheets (§5-§6) and
 * unified_perf_summary (§7) are made of these rows.
 */
#ifndef TL_PERF_EVAL_H
#define TL_PERF_EVAL_H

#include "base/arena.h"
#include "perf/perf_impl.h"
#include "table/table.h"
#include "trace/kmap.h"

/* A parameter's value class, for the column typing of PERF.md §5.2. */
enum { PT_INT = 0, PT_FLOAT, PT_BOOL, PT_NONE, PT_OTHER };

typedef struct pm_ptext {
    const char *name;
    uint8_t cls;
    int64_t i;
    double f;
    const char *text; /* Python's str() of the value (a string as it is) */
    const char *repr; /* its repr() (a string quoted), for perf_params */
} pm_ptext;

typedef struct pm_row {
    uint32_t ev;
    const char *name;      /* the event's name */
    double gflops, mb, fpb, tbs, tflops;
    double kt;             /* Kernel Time (µs) */
    int kt_int;            /* Kernel Time is a Python int (tl_pm_busy_int) */
    double roof_time, pct_roof; /* NaN when not computed */
    const char *roof_bound;     /* NULL when not computed */
    const char *spec;      /* Compute Spec ("" when none) */
    pm_ptext *par;         /* in the env's arena */
    size_t npar;
    uint32_t *kern;        /* its GPU events stably by ts (arena) */
    size_t nkern;
} pm_row;

/* A family's verdict on one set of arguments (eval.c's cache). */
typedef struct argres {
    const void *key[10];
    uint8_t rc;
    int bytes_none;
    double flops, bytes;
    const char *spec;
    pm_ptext *par;
    size_t npar;
} argres;

typedef struct pm_env {
    const tl_trace *t;
    const tl_gpu_arch *arch; /* NULL: no roofline columns */
    /* the inference generator (INFERENCE.md §3.8): the sheets group on the kernel count
     * (--group_by_num_kernels); annot[ev], the annotation of the attention models' ops */
    int num_kernels;
    const char **annot;
    /* --include_call_stack: unified_perf_summary's entry_point and call_stack_full */
    int call_stack;
    tl_arena *arena;         /* rows' strings and lists */
    tl_pv_pool pool;         /* per evaluation */
    /* §1.6 links: fwd[ev] (TL_TEV_NONE), and each event's backward events (CSR) */
    uint32_t *fwd;
    uint32_t *bwd0, *bwdn, *bwd;
    uint8_t *comm;           /* per event: a communication kernel */
    /* forward rows made so far: cached[ev] = 1 + the event's row in rows[] / rcs[] /
     * rmodel[] (the model it was made for), or 0; allocated with the first row */
    uint32_t *cached;
    pm_row *rows;
    uint8_t *rcs;
    const char **rmodel;
    size_t ncache, rowcap;
    size_t rows_mapped; /* how much of rows has its pages mapped ahead (tl_populate_ahead) */
    /* family verdicts by argument texts */
    tl_kmap argmap;
    argres *args;
    size_t nargs, argcap;
    /* scratch */
    uint32_t *stack, *gpu;
    size_t stackcap, gpucap;
    double *iv;
    size_t ivcap;
} pm_env;

void tl_pm_env_init(pm_env *env, const tl_trace *t, const tl_gpu_arch *arch, tl_arena *arena);
void tl_pm_env_free(pm_env *env);

/* The inference generator's annotation pass: each event named like an attention op that
 * reads its step (a name starting with one of the reference's filters) gets the first
 * user_annotation, by ts, whose span holds it, or "NA". */
void tl_pm_env_annotate(pm_env *env);

/* 1 when event ev has at least one backward link of its own. */
int tl_pm_has_bwd_link(const pm_env *env, uint32_t ev);

/* The GPU events of ev's subtree "by children" (PERF.md §1.5) appended to *out (n, cap). */
void tl_pm_subtree_gpu(pm_env *env, uint32_t ev, uint32_t **out, size_t *n, size_t *cap);

/* Union length of the intervals of GPU events idx[0..n) (TRACES.md §3). */
double tl_pm_busy(pm_env *env, const uint32_t *idx, size_t n);
/* 1 when tl_pm_busy of the same events is a Python int in the reference: every one has
 * integer ts and dur (TRACES.md §4.6; none at all: the integer 0). */
int tl_pm_busy_int(const pm_env *env, const uint32_t *idx, size_t n);

/* Evaluate event ev (any event; its model family `model`) forward or backward into *row:
 * PM_OK, PM_FAIL or PM_NOT_MODELLED (PERF.md §3.3; the backward-link rule included). */
int tl_pm_eval(pm_env *env, uint32_t ev, const char *model, int bwd, pm_row *row);

/* The model family of event ev (appendix A, or "TritonCompiled" when §4.9's test passes),
 * or NULL when it has no perf model. */
const char *tl_pm_model_of(pm_env *env, uint32_t ev);

#endif

/* ---- shared by the sheets and unified_perf_summary (sheet.c) ------------------------ */

/* Aggregates of a column's values in row order, NaN skipped (PERF.md §5.3, §9.3):
 * Kahan mean and sum, Welford std (ddof 1), median, min, max; NaN over nothing. */
typedef struct pm_agg {
    double mean, median, std, min, max, sum, first;
    size_t n;
} pm_agg;
void tl_pm_aggregate(const double *v, size_t n, pm_agg *out);

/* TRACES.md §4.2's kernel_details_summary and trunc_kernel_details of the kernel lists
 * lists[0..n) (each lens[i] GPU events): "[]" and NULL when every list is empty. */
void tl_pm_kernel_summary(pm_env *env, const uint32_t *const *lists, const size_t *lens, size_t n, const char **summary,
                       const char **trunc);

/* tl_pm_kernel_summary with, when `extra` is given, extra[i][k] (a text such as
 * ", 'call_stack': [...]", or NULL) written after the stream of list i's k-th kernel when
 * list i is the template; and, when `order` is given (room for the template's length),
 * the template positions in the summary's order. */
void tl_pm_kernel_summary_ex(pm_env *env, const uint32_t *const *lists, const size_t *lens, size_t n,
                          const char *const *const *extra, size_t *order, const char **summary, const char **trunc);

/* The perf sheet of rows[0..n) (PERF.md §5), or NULL when n is 0. */
tl_table *tl_pm_sheet(pm_env *env, const pm_row *rows, size_t n);

/* unified_perf_summary (PERF.md §7), or NULL when it has no rows. */
tl_table *tl_pm_unified(pm_env *env);
