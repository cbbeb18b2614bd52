/*
 * groups.c - the sheet groups of SPEC §3 (see groups.h).
 *
 * Each group is data (the tables below) plus one of two shapes of work: a summary sheet
 * compared into one result, or a split sheet compared into three results per variant.
 */
#include "compare/groups.h"

#include "compare/compare.h"
#include "compare/runs.h"
#include "base/thread.h"
#include "base/progress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* ---- the configuration (SPEC §3) ---------------------------------------------------- */

typedef struct summary_group {
    const char *sheet;
    const char *const *keys;
    size_t nkeys;
    const char *const *diffs;
    size_t ndiffs;
    const char *const *drop; /* from every report */
    size_t ndrop;
    int drop_cumulative;     /* drop "Cumulative Percentage (%)" from every variant */
    const char *sort;        /* NULL: keep merge order */
} summary_group;

static const char *const timeline_keys[] = {"type"};
static const char *const timeline_diffs[] = {"time ms"};

static const char *const ops_summary_keys[] = {"name"};
static const char *const ops_summary_diffs[] = {"total_direct_kernel_time_ms", "Count"};
static const char *const ops_summary_drop[] = {"total_direct_kernel_time_sum"};

static const char *const kernel_keys[] = {"Kernel name"};
static const char *const kernel_diffs[] = {"Kernel duration (µs)_sum", "Kernel duration (µs)_mean",
                                           "Kernel duration (µs)_count"};
static const char *const kernel_drop[] = {"Kernel duration (µs)_min", "Kernel duration (µs)_max",
                                          "Parent op category"};

static const char *const legacy_keys[] = {"name"};
static const char *const legacy_diffs[] = {"Total Kernel Time (ms)", "Mean Kernel Time (µs)", "Count"};
static const char *const legacy_drop[] = {"Total Kernel Time (µs)", "Median Kernel Time (µs)",
                                          "Std Kernel Time (µs)",   "Min Kernel Time (µs)",
                                          "Max Kernel Time (µs)",   "Category"};

#define LIST(a) a, COUNT(a)
static const summary_group gpu_timeline = {"gpu_timeline", LIST(timeline_keys), LIST(timeline_diffs),
                                           NULL, 0, 0, NULL};
static const summary_group ops_summary = {"ops_summary", LIST(ops_summary_keys), LIST(ops_summary_diffs),
                                          LIST(ops_summary_drop), 1, "total_direct_kernel_time_ms"};
static const summary_group kernel_summary = {"kernel_summary", LIST(kernel_keys), LIST(kernel_diffs),
                                             LIST(kernel_drop), 1, "Kernel duration (µs)_sum"};
static const summary_group kernel_summary_legacy = {"kernel_summary", LIST(legacy_keys),
                                                    LIST(legacy_diffs), LIST(legacy_drop), 1,
                                                    "Total Kernel Time (ms)"};

typedef struct split_sheet {
    const char *sheet;
    const char *name; /* the result name's stem */
    const char *const *diffs;
    size_t ndiffs;
} split_sheet;

static const char *const ops_keys[] = {"name", "Input type", "Input Dims", "Input Strides",
                                       "Concrete Inputs"};
static const char *const ops_diffs[] = {"total_direct_kernel_time_sum", "total_direct_kernel_time_mean",
                                        "operation_count"};
static const char *const unified_diffs[] = {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean",
                                            "operation_count"};
static const split_sheet ops_all_sheets[] = {
    {"ops_all", "ops_all", LIST(ops_diffs)},
    {"ops_unique_args", "ops_unique_args", LIST(ops_diffs)},
    {"unified_perf_summary", "unified_perf_summary", LIST(unified_diffs)},
};
static const char *const ops_all_hidden[] = {"kernel_names", "median", "std", "min", "max", "ex_UID", NULL};

static const char *const roofline_diffs[] = {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean", "name_count",
                                             "TFLOPS/s_mean", "TB/s_mean"};
static const split_sheet roofline_sheets[] = {
    {"GEMM", "GEMM", LIST(roofline_diffs)},
    {"SDPA_fwd", "SDPA_fwd", LIST(roofline_diffs)},
    {"SDPA_bwd", "SDPA_bwd", LIST(roofline_diffs)},
    {"CONV_fwd", "CONV_fwd", LIST(roofline_diffs)},
    {"CONV_bwd", "CONV_bwd", LIST(roofline_diffs)},
    {"UnaryElementwise", "un_eltwise", LIST(roofline_diffs)},
    {"BinaryElementwise", "bin_eltwise", LIST(roofline_diffs)},
};
/* The other perf-model sheets, in PERF §0's family order (a family's _fwd before its
 * _bwd): compared exactly like the roofline sheets, each result named after its sheet. */
static const split_sheet perf_sheets[] = {
    {"InferenceAttention_fwd", "InferenceAttention_fwd", LIST(roofline_diffs)},
    {"InferenceAttention_bwd", "InferenceAttention_bwd", LIST(roofline_diffs)},
    {"GroupedGEMM_fwd", "GroupedGEMM_fwd", LIST(roofline_diffs)},
    {"GroupedGEMM_bwd", "GroupedGEMM_bwd", LIST(roofline_diffs)},
    {"MoE_comm_fwd", "MoE_comm_fwd", LIST(roofline_diffs)},
    {"MoE_comm_bwd", "MoE_comm_bwd", LIST(roofline_diffs)},
    {"SSM_fwd", "SSM_fwd", LIST(roofline_diffs)},
    {"SSM_bwd", "SSM_bwd", LIST(roofline_diffs)},
    {"RoPE_fwd", "RoPE_fwd", LIST(roofline_diffs)},
    {"RoPE_bwd", "RoPE_bwd", LIST(roofline_diffs)},
    {"CrossEntropy_fwd", "CrossEntropy_fwd", LIST(roofline_diffs)},
    {"CrossEntropy_bwd", "CrossEntropy_bwd", LIST(roofline_diffs)},
    {"MoE_fused_fwd", "MoE_fused_fwd", LIST(roofline_diffs)},
    {"MoE_fused_bwd", "MoE_fused_bwd", LIST(roofline_diffs)},
    {"MoE_unfused_fwd", "MoE_unfused_fwd", LIST(roofline_diffs)},
    {"MoE_unfused_bwd", "MoE_unfused_bwd", LIST(roofline_diffs)},
    {"MoE_aux_fwd", "MoE_aux_fwd", LIST(roofline_diffs)},
    {"MoE_aux_bwd", "MoE_aux_bwd", LIST(roofline_diffs)},
    {"RMSNorm_fwd", "RMSNorm_fwd", LIST(roofline_diffs)},
    {"RMSNorm_bwd", "RMSNorm_bwd", LIST(roofline_diffs)},
    {"elementwise_fwd", "elementwise_fwd", LIST(roofline_diffs)},
    {"elementwise_bwd", "elementwise_bwd", LIST(roofline_diffs)},
    {"GroupQuant_fwd", "GroupQuant_fwd", LIST(roofline_diffs)},
    {"GroupQuant_bwd", "GroupQuant_bwd", LIST(roofline_diffs)},
    {"FusedRoPE_fwd", "FusedRoPE_fwd", LIST(roofline_diffs)},
    {"FusedRoPE_bwd", "FusedRoPE_bwd", LIST(roofline_diffs)},
    {"CustomCollective_fwd", "CustomCollective_fwd", LIST(roofline_diffs)},
    {"CustomCollective_bwd", "CustomCollective_bwd", LIST(roofline_diffs)},
    {"mHC_fwd", "mHC_fwd", LIST(roofline_diffs)},
    {"mHC_bwd", "mHC_bwd", LIST(roofline_diffs)},
    {"Normalization", "Normalization", LIST(roofline_diffs)},
    {"Reduce_fwd", "Reduce_fwd", LIST(roofline_diffs)},
    {"Reduce_bwd", "Reduce_bwd", LIST(roofline_diffs)},
};
static const char *const roofline_drop_variants[] = {
    "GFLOPS_first",     "Data Moved (MB)_first", "FLOPS/Byte_first",     "Input type_first",
    "Input Dims_first", "Input Strides_first",   "Concrete Inputs_first"};
static const char *const roofline_hidden[] = {
    "kernel_names_first", "UID", "median", "std", "min", "max", "Input type_first",
    "Input Dims_first", "Input Strides_first", "Concrete Inputs_first", NULL};

static const char cumulative[] = "Cumulative Percentage (%)";

/* ---- results -------------------------------------------------------------------------- */

unsigned tl_group_from_name(const char *name)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"gpu_timeline", TL_GROUP_GPU_TIMELINE}, {"ops_summary", TL_GROUP_OPS_SUMMARY},
        {"kernel_summary", TL_GROUP_KERNEL_SUMMARY}, {"ops_all", TL_GROUP_OPS_ALL},
        {"roofline", TL_GROUP_ROOFLINE}, {"perf", TL_GROUP_PERF}, {"all", TL_GROUP_ALL},
    };
    for (size_t i = 0; i < COUNT(names); i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].bit;
    return 0;
}

int tl_group_spec(const char *sheet, tl_compare_spec *spec)
{
    static const summary_group *const groups[] = {&gpu_timeline, &ops_summary, &kernel_summary};
    for (size_t i = 0; i < COUNT(groups); i++)
        if (strcmp(sheet, groups[i]->sheet) == 0) {
            const summary_group *g = groups[i];
            *spec = (tl_compare_spec){g->sheet, g->keys, g->nkeys, g->diffs, g->ndiffs, 0};
            return 0;
        }
    return -1;
}

/* ---- shared steps --------------------------------------------------------------------- */

typedef struct run_ctx {
    tl_report *reports;
    size_t n;
    const char **tags;
    tl_arena *arena;
    tl_error *err;
    tl_sink *sink;
    int scratch;      /* read split sheets into the reports' scratch arenas, in turn */
    size_t nsplit;    /* split sheets begun: sheet k uses scratch[k % 2] */
    size_t emitted;   /* results given to the sink */
    size_t done_at[2]; /* results emitted when the sheet last in scratch[i] was done */
    int tracelens_keys; /* no row-key step */
    int read_once;      /* each sheet let go by its report once read */
    /* The sides: a tag given to several reports makes them runs of one side (runs.h). */
    size_t nsides;
    const char **stags; /* each side's tag, in the order of its first report */
    size_t *side_of;    /* each report's side */
    tl_sheet_observer observe; /* or NULL */
    void *observe_ctx;
} run_ctx;

/* Hand a result to the sink (which owns its table from then on). */
static int emit(run_ctx *c, const char *name, tl_table *t, const char *const *hidden)
{
    tl_result r = {name, t, hidden, t->nrows, t->ncols, NULL};
    c->emitted++;
    return c->sink->put(c->sink->ctx, &r, c->err);
}

static void drop_column(tl_table *t, const char *name)
{
    long i = tl_table_find(t, name);
    if (i >= 0)
        tl_table_remove_column(t, (size_t)i);
}

static void free_all(tl_table **tables, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tl_table_free(tables[i]);
}

typedef struct read_job {
    tl_report *report;
    tl_arena *arena;
    const char *sheet;
    int forget; /* the report may let the sheet go once it is read */
    int forgot; /* and it freed memory so */
    tl_table *table;
    tl_error err;
} read_job;

static void *read_one(void *arg)
{
    read_job *j = arg;
    j->table = tl_report_read_sheet(j->report, j->sheet, j->arena, &j->err);
    if (j->forget)
        j->forgot = tl_report_forget_sheet(j->report, j->sheet);
    return NULL;
}

/*
 * Read `sheet` from every report into tables[]; on failure frees what it read.
 * Reading and typing a big sheet is most of the input work, and each report is
 * independent (own file, own arena), so the reports are read in parallel, a thread
 * each, no more than TL_READ_THREADS at a time.
 */
#define TL_READ_THREADS 2
static int read_all(run_ctx *c, const char *sheet, tl_table **tables)
{
    tl_progress("reading and comparing %s", sheet);
    double t0 = tl_now();
    read_job *jobs = tl_xcalloc(c->n, sizeof *jobs);
    for (size_t i = 0; i < c->n; i += TL_READ_THREADS) {
        pthread_t th[TL_READ_THREADS];
        int started[TL_READ_THREADS] = {0};
        for (size_t k = 0; k < TL_READ_THREADS && i + k < c->n; k++) {
            tl_report *r = &c->reports[i + k];
            jobs[i + k] = (read_job){r, c->scratch ? &r->scratch[c->nsplit % 2] : &r->arena, sheet, c->read_once, 0,
                                     NULL, {0}};
            /* the last of a batch runs on this thread; a failed start runs here too */
            if (k + 1 < TL_READ_THREADS && i + k + 1 < c->n)
                started[k] = tl_thread_create(&th[k], read_one, &jobs[i + k]) == 0;
            if (!started[k])
                read_one(&jobs[i + k]);
        }
        for (size_t k = 0; k < TL_READ_THREADS && i + k < c->n; k++)
            if (started[k])
                tl_thread_join(th[k], NULL);
    }
    int rc = 0, forgot = 0;
    for (size_t i = 0; i < c->n; i++) {
        forgot |= jobs[i].forgot;
        tables[i] = jobs[i].table;
        if (!tables[i] && rc == 0) {
            tl_error_set(c->err, "%s", jobs[i].err.msg);
            rc = -1;
        }
    }
    if (rc != 0)
        free_all(tables, c->n);
    free(jobs);
    if (forgot)
        tl_release_freed(); /* the sheets let go were made on the reports' loading threads */
    tl_timing.read += tl_now() - t0;
    return rc;
}

/* The first report that lacks `sheet`, or -1. */
static long first_lacking(const run_ctx *c, const char *sheet)
{
    for (size_t i = 0; i < c->n; i++)
        if (!tl_report_has_sheet(&c->reports[i], sheet))
            return (long)i;
    return -1;
}

/* The first report whose table lacks column `col`, or -1. */
static long first_without(tl_table **tables, size_t n, const char *col)
{
    for (size_t i = 0; i < n; i++)
        if (tl_table_find(tables[i], col) < 0)
            return (long)i;
    return -1;
}

/*
 * The sides' tables in side order: a report's own, or its side's runs made one
 * (tl_runs_collapse).  tables[0..n) are consumed; returns a new array (or `tables` itself
 * when every side has one report), or NULL with the error set.
 */
static tl_table **by_side(run_ctx *c, tl_table **tables, const tl_compare_spec *spec)
{
    if (c->nsides == c->n)
        return tables;
    tl_table **out = tl_xcalloc(c->nsides, sizeof *out), **runs = tl_xcalloc(c->n, sizeof *runs);
    int failed = 0;
    for (size_t s = 0; s < c->nsides; s++) {
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->side_of[i] == s)
                runs[k++] = tables[i], tables[i] = NULL;
        if (failed)
            free_all(runs, k);
        else if (k == 1)
            out[s] = runs[0];
        else if (!(out[s] = tl_runs_collapse(runs, k, c->stags[s], spec, c->arena, c->err)))
            failed = 1;
    }
    free(runs);
    free(tables);
    if (failed) {
        free_all(out, c->nsides);
        free(out);
        return NULL;
    }
    return out;
}

/* ---- summary groups: one result each -------------------------------------------------- */

static int run_summary(run_ctx *c, const summary_group *g)
{
    long lacking = first_lacking(c, g->sheet);
    if (lacking > 0) {
        tl_warn("report '%s' (%s) has no sheet '%s'; skipping %s", c->tags[lacking],
                c->reports[lacking].path, g->sheet, g->sheet);
        return 0;
    }
    tl_table **tables = tl_xcalloc(c->n, sizeof *tables);
    if (read_all(c, g->sheet, tables) != 0) {
        free(tables);
        return -1;
    }
    /* The baseline chooses the kernel_summary layout (SPEC §3). */
    if (g == &kernel_summary && tl_table_find(tables[0], kernel_keys[0]) < 0)
        g = &kernel_summary_legacy;

    for (size_t i = 0; i < c->n; i++) {
        for (size_t d = 0; d < g->ndrop; d++)
            drop_column(tables[i], g->drop[d]);
        if (c->side_of[i] > 0 && g->drop_cumulative)
            drop_column(tables[i], cumulative);
    }
    long without = first_without(tables, c->n, g->diffs[0]);
    if (without >= 0) {
        tl_warn("sheet '%s' of report '%s' has no column '%s'; skipping %s", g->sheet,
                c->tags[without], g->diffs[0], g->sheet);
        free_all(tables, c->n);
        free(tables);
        return 0;
    }
    tl_compare_spec spec = {g->sheet, g->keys, g->nkeys, g->diffs, g->ndiffs, c->tracelens_keys};
    if (!(tables = by_side(c, tables, &spec)))
        return -1;
    tl_table *t = tl_compare(tables, c->stags, c->nsides, &spec, c->arena, c->err);
    free(tables);
    if (!t)
        return -1;
    if (g->sort) {
        const char *col = tl_arena_printf(c->arena, "%s::%s", c->stags[0], g->sort);
        long i = tl_table_find(t, col);
        if (i >= 0)
            tl_sort_desc(t, (size_t)i);
    }
    return emit(c, g->sheet, t, NULL);
}

/* ---- split groups: three results per variant ------------------------------------------ */

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* `roofline`: NULL for the ops_all group, else the group's name for the notes ("roofline",
 * "perf"): both kinds of perf sheet are keyed, trimmed and hidden alike. */
static int run_split(run_ctx *c, const split_sheet *s, const char *roofline)
{
    long lacking = first_lacking(c, s->sheet);
    if (lacking > 0) {
        tl_warn("report '%s' (%s) has no sheet '%s'; skipping it", c->tags[lacking],
                c->reports[lacking].path, s->sheet);
        return 0;
    }
    tl_table **tables = tl_xcalloc(c->n, sizeof *tables);
    if (read_all(c, s->sheet, tables) != 0) {
        free(tables);
        return -1;
    }
    for (size_t i = 0; c->observe && i < c->n; i++)
        c->observe(c->observe_ctx, i, s->sheet, tables[i]);
    const char **keys = NULL;
    size_t nkeys = 0;
    int rc = 0;
    if (roofline) {
        for (size_t i = 1; i < c->n; i++)
            for (size_t d = 0; c->side_of[i] > 0 && d < COUNT(roofline_drop_variants); d++)
                drop_column(tables[i], roofline_drop_variants[d]);
        for (size_t i = 0; i < c->n; i++) {
            if (tables[i]->nrows == 0 || tables[i]->ncols == 0) {
                tl_note("Skipping %s sheet '%s' because one of the reports is empty.", roofline, s->sheet);
                goto skip;
            }
        }
        /* name, then the param: columns every report has, by code point; looked up
         * through an index, since a sheet may have thousands of param: columns */
        keys = tl_xmalloc((tables[0]->ncols + 1) * sizeof *keys);
        keys[nkeys++] = "name";
        size_t first_param = nkeys;
        tl_name_index *ix = tl_xcalloc(c->n, sizeof *ix);
        for (size_t i = 1; i < c->n; i++)
            tl_name_index_init(&ix[i], tables[i]);
        for (size_t col = 0; col < tables[0]->ncols; col++) {
            const char *name = tables[0]->cols[col].name;
            int everywhere = strncmp(name, "param:", 6) == 0;
            for (size_t i = 1; i < c->n && everywhere; i++)
                everywhere = tl_name_index_find(&ix[i], name) >= 0;
            if (everywhere)
                keys[nkeys++] = name;
        }
        for (size_t i = 1; i < c->n; i++)
            tl_name_index_free(&ix[i]);
        free(ix);
        qsort(keys + first_param, nkeys - first_param, sizeof *keys, cmp_cstr);
    } else {
        keys = tl_xmalloc(COUNT(ops_keys) * sizeof *keys);
        for (size_t k = 0; k < COUNT(ops_keys); k++)
            keys[nkeys++] = ops_keys[k];
    }
    long without = first_without(tables, c->n, s->diffs[0]);
    if (without >= 0) {
        tl_warn("sheet '%s' of report '%s' has no column '%s'; skipping %s", s->sheet,
                c->tags[without], s->diffs[0], s->sheet);
        goto skip;
    }

    tl_compare_spec spec = {s->sheet, keys, nkeys, s->diffs, s->ndiffs, c->tracelens_keys};
    tables = by_side(c, tables, &spec);
    tl_table *merged = tables ? tl_compare(tables, c->stags, c->nsides, &spec, c->arena, c->err) : NULL;
    free(tables);
    tables = NULL;
    if (!merged) {
        free(keys);
        return -1;
    }
    const char *const *hidden = roofline ? roofline_hidden : ops_all_hidden;
    const char *m0 = s->diffs[0];
    size_t base_m0 = (size_t)tl_table_find(merged, tl_arena_printf(c->arena, "%s::%s", c->stags[0], m0));
    for (size_t v = 1; v < c->nsides; v++) {
        size_t var_m0 = (size_t)tl_table_find(merged, tl_arena_printf(c->arena, "%s::%s", c->stags[v], m0));
        static const struct { tl_split_kind kind; const char *what; } parts[] = {
            {TL_SPLIT_INTERSECT, "intersect"},
            {TL_SPLIT_ONLY_BASELINE, "only_baseline"},
            {TL_SPLIT_ONLY_VARIANT, "only_variant"},
        };
        for (size_t p = 0; p < COUNT(parts); p++) {
            /* the sort column is m0 in every split group */
            tl_table *t = tl_split(merged, parts[p].kind, (int)v, base_m0, var_m0, base_m0, var_m0);
            tl_split_release(merged, parts[p].kind, (int)v, (int)c->nsides - 1, base_m0);
            if (rc == 0)
                rc = emit(c, tl_arena_printf(c->arena, "%s_%s_%s", s->name, parts[p].what, c->stags[v]), t,
                          hidden);
            else
                tl_table_free(t);
        }
    }
    tl_table_free(merged);
    free(keys);
    c->done_at[c->nsplit % 2] = c->emitted;
    return rc;

skip:
    free_all(tables, c->n);
    free(tables);
    free(keys);
    return 0;
}

/*
 * Make scratch[nsplit % 2] free for the next split sheet: the sink must first be done
 * with the results of the sheet that used it last (two sheets ago), whose strings live
 * there.  The previous sheet's results may still be being written meanwhile.
 */
static int begin_split(run_ctx *c)
{
    if (!c->scratch)
        return 0;
    size_t slot = c->nsplit % 2;
    if (c->sink->sync(c->sink->ctx, c->done_at[slot], c->err) != 0)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        tl_arena_free(&c->reports[i].scratch[slot]);
    return 0;
}

/* ---- which groups run ----------------------------------------------------------------- */

static int baseline_has_any(const run_ctx *c, const split_sheet *sheets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tl_report_has_sheet(&c->reports[0], sheets[i].sheet))
            return 1;
    return 0;
}

const char *tl_perf_sheet(size_t i)
{
    if (i < COUNT(roofline_sheets))
        return roofline_sheets[i].sheet;
    i -= COUNT(roofline_sheets);
    return i < COUNT(perf_sheets) ? perf_sheets[i].sheet : NULL;
}

const char *tl_perf_result_stem(size_t i)
{
    if (i < COUNT(roofline_sheets))
        return roofline_sheets[i].name;
    i -= COUNT(roofline_sheets);
    return i < COUNT(perf_sheets) ? perf_sheets[i].name : NULL;
}

int tl_groups_any_sheet(const tl_report *r, unsigned run)
{
    static const struct { unsigned bit; const char *sheet; } sheets[] = {
        {TL_GROUP_GPU_TIMELINE, "gpu_timeline"}, {TL_GROUP_OPS_SUMMARY, "ops_summary"},
        {TL_GROUP_KERNEL_SUMMARY, "kernel_summary"},
    };
    for (size_t i = 0; i < COUNT(sheets); i++)
        if ((run & sheets[i].bit) && tl_report_has_sheet(r, sheets[i].sheet))
            return 1;
    for (size_t i = 0; i < COUNT(ops_all_sheets); i++)
        if ((run & TL_GROUP_OPS_ALL) && tl_report_has_sheet(r, ops_all_sheets[i].sheet))
            return 1;
    for (size_t i = 0; i < COUNT(roofline_sheets); i++)
        if ((run & TL_GROUP_ROOFLINE) && tl_report_has_sheet(r, roofline_sheets[i].sheet))
            return 1;
    for (size_t i = 0; i < COUNT(perf_sheets); i++)
        if ((run & TL_GROUP_PERF) && tl_report_has_sheet(r, perf_sheets[i].sheet))
            return 1;
    return 0;
}

int tl_run_groups(tl_report *reports, size_t n, unsigned run, unsigned named, tl_sink *sink,
                  tl_arena *arena, tl_error *err)
{
    return tl_run_groups_with(reports, n, run, named, 0, sink, arena, err);
}

int tl_run_groups_with(tl_report *reports, size_t n, unsigned run, unsigned named, unsigned flags,
                       tl_sink *sink, tl_arena *arena, tl_error *err)
{
    return tl_run_groups_observed(reports, n, run, named, flags, NULL, NULL, sink, arena, err);
}

int tl_run_groups_observed(tl_report *reports, size_t n, unsigned run, unsigned named, unsigned flags,
                           tl_sheet_observer observe, void *observe_ctx, tl_sink *sink, tl_arena *arena,
                           tl_error *err)
{
    const char **tags = tl_xmalloc(n * sizeof *tags);
    for (size_t i = 0; i < n; i++)
        tags[i] = reports[i].tag;
    run_ctx c = {.reports = reports, .n = n, .tags = tags, .arena = arena, .err = err, .sink = sink,
                 .tracelens_keys = (flags & TL_RUN_TRACELENS_KEYS) != 0,
                 .read_once = (flags & TL_RUN_READ_ONCE) != 0, .observe = observe,
                 .observe_ctx = observe_ctx};
    c.stags = tl_xmalloc(n * sizeof *c.stags);
    c.side_of = tl_xmalloc(n * sizeof *c.side_of);
    for (size_t i = 0; i < n; i++) {
        size_t s = 0;
        while (s < c.nsides && strcmp(c.stags[s], tags[i]) != 0)
            s++;
        if (s == c.nsides)
            c.stags[c.nsides++] = tags[i];
        c.side_of[i] = s;
    }
    int rc = 0;
    double t0 = tl_now(), read0 = tl_timing.read;
    double written0 = tl_timing.format + tl_timing.write_csv + tl_timing.write_xlsx;

    static const struct { unsigned bit; const summary_group *g; } summaries[] = {
        {TL_GROUP_GPU_TIMELINE, &gpu_timeline},
        {TL_GROUP_OPS_SUMMARY, &ops_summary},
        {TL_GROUP_KERNEL_SUMMARY, &kernel_summary},
    };
    for (size_t i = 0; i < COUNT(summaries) && rc == 0; i++) {
        if (!(run & summaries[i].bit))
            continue;
        const char *sheet = summaries[i].g->sheet;
        if (!tl_report_has_sheet(&reports[0], sheet)) {
            if (named & summaries[i].bit) {
                tl_error_set(err, "%s sheet not found in %s", sheet, reports[0].path);
                rc = -1;
            }
            continue;
        }
        rc = run_summary(&c, summaries[i].g);
    }

    static const struct { unsigned bit; const char *name; const split_sheet *sheets; size_t n; int roofline; }
        splits[] = {
            {TL_GROUP_OPS_ALL, "ops_all", ops_all_sheets, COUNT(ops_all_sheets), 0},
            {TL_GROUP_ROOFLINE, "roofline", roofline_sheets, COUNT(roofline_sheets), 1},
            {TL_GROUP_PERF, "perf", perf_sheets, COUNT(perf_sheets), 1},
        };
    for (size_t g = 0; g < COUNT(splits) && rc == 0; g++) {
        if (!(run & splits[g].bit))
            continue;
        if (!baseline_has_any(&c, splits[g].sheets, splits[g].n)) {
            if (named & splits[g].bit) {
                tl_error_set(err, "%s: none of its sheets (%s, ...) found in %s", splits[g].name,
                             splits[g].sheets[0].sheet, reports[0].path);
                rc = -1;
            }
            continue;
        }
        c.scratch = sink->sync != NULL; /* a sink that keeps results keeps their strings */
        for (size_t s = 0; s < splits[g].n && rc == 0; s++) {
            if (!tl_report_has_sheet(&reports[0], splits[g].sheets[s].sheet))
                continue;
            rc = begin_split(&c);
            if (rc == 0)
                rc = run_split(&c, &splits[g].sheets[s], splits[g].roofline ? splits[g].name : NULL);
            c.nsplit++;
        }
    }
    free(tags);
    free(c.stags);
    free(c.side_of);
    /* what is neither reading nor the sink's writing is comparing */
    tl_timing.compare += tl_now() - t0 - (tl_timing.read - read0) -
                         (tl_timing.format + tl_timing.write_csv + tl_timing.write_xlsx - written0);
    return rc;
}
