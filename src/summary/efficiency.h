/*
 * efficiency.h - the summary's efficiency lines: for the ops (and LCAs) the summary lists
 * that have a perf model, the rate each side achieved - TFLOPS/s for the matrix families
 * (GEMM, SDPA, CONV), TB/s for the memory-bound rest - and, given a GPU description, the
 * share of its peak.  "aten::bmm 45.0 -> 41.3 ms" then reads "... 63.6 -> 69.3 TFLOPS/s".
 *
 * The figures come from each report's own perf sheets, not from the comparison results
 * (the perf sheets need not have been compared; those the comparison read are taken as it
 * reads them, the others read here): unified_perf_summary when the report has it, else
 * the family sheets (GEMM, SDPA_fwd, ..., Normalization, Reduce_fwd, ...; from a _bwd
 * sheet only the names no other sheet has, since its backward rows carry the forward
 * op's name).  Per op
 * name, over the modelled rows of that name (the rows with a GFLOPS value: a unified row
 * without a model, or whose model failed to evaluate, has none):
 *   TFLOPS/s = sum(GFLOPS x calls) x 1e3 / sum(Kernel Time (us)_sum)
 *   TB/s     = sum(Data Moved (MB) x calls) x 2^20 / 1e6 / sum(Kernel Time (us)_sum)
 * where calls is operation_count (unified) or name_count (family sheets), and each time sum
 * runs over the rows that have the numerator's value.  These are the total work over the
 * total kernel time - not the mean of the per-call rates the sheets hold.  % of peak is
 * the time the rows would take at the GPU's peak (its TFLOPS/s for the row's Compute Spec,
 * or its memory bandwidth) over the time they took, summed over the rows that have a peak:
 * with one Compute Spec that is rate / peak.
 */
#ifndef TL_SUMMARY_EFFICIENCY_H
#define TL_SUMMARY_EFFICIENCY_H

#include "perf/gpu_arch.h"
#include "summary/summary.h"
#include "table/report.h"
#include "table/table.h"

#include <stdio.h>

typedef struct tl_eff_cache tl_eff_cache; /* below */

/* Options of the efficiency lines. */
typedef struct tl_eff_options {
    /* The GPU the reports ran on, for "% of peak": NULL (the default) for none.  The
     * command's --gpu-arch description belongs here. */
    const tl_gpu_arch *gpu_arch;
    /* What the comparison gathered (made with the same GPUs), or NULL: the sheets are
     * read here. */
    tl_eff_cache *cache;
    /* The variants' GPU when the sides ran on different ones (NULL: gpu_arch). */
    const tl_gpu_arch *gpu_arch_variant;
} tl_eff_options;

/* One op name on one side: the sums over its modelled rows. */
typedef struct tl_eff_side {
    size_t rows;          /* modelled rows of the name */
    int matrix;           /* some row is of a matrix family (TFLOPS/s rather than TB/s) */
    double gflops;        /* sum of GFLOPS x calls */
    double flops_us;      /* sum of Kernel Time (us)_sum over the rows with GFLOPS */
    double mb;            /* sum of Data Moved (MB) x calls */
    double bytes_us;      /* ... over the rows with Data Moved (MB) */
    double cpeak_us;      /* compute time at peak, of the rows whose Compute Spec has a peak */
    double cpeak_base_us; /* those rows' kernel time */
    double mpeak_us;      /* memory time at the peak bandwidth */
    double mpeak_base_us;
} tl_eff_side;

/* One efficiency line. */
typedef struct tl_eff_item {
    const char *name;         /* the op, or the LCA for an LCA line */
    const char *op1, *op2;    /* LCA lines: the op each side's figures are of (else = name) */
    int memory_bound;         /* 1: TB/s, 0: TFLOPS/s */
    tl_delta rate;            /* TFLOPS/s or TB/s; NaN on a side without figures */
    tl_delta pct_of_peak;     /* NaN without a GPU description or a peak */
    tl_eff_side side[2];      /* baseline, variant */
} tl_eff_item;

typedef struct tl_eff_list {
    tl_eff_item *items;
    size_t n;
} tl_eff_list;

typedef struct tl_efficiency {
    size_t nreports, nvariants;
    const char **source;       /* per report: "unified_perf_summary", "perf sheets" or NULL (none) */
    int any_source;            /* some report has perf sheets: the lines are rendered */
    const char *gpu;           /* the GPU description's name, or NULL */
    tl_eff_list *variants;     /* per variant (s->nvariants): its listed ops */
    tl_eff_list lca;           /* the LCA lines (two traces), baseline vs the first variant */
} tl_efficiency;

/* The rate a side achieved (TFLOPS/s, or TB/s when `memory`), NaN without figures. */
double tl_eff_rate(const tl_eff_side *side, int memory);
/* Its share of the peak in percent, NaN without a peak. */
double tl_eff_pct_of_peak(const tl_eff_side *side, int memory);

/*
 * The figures of the perf sheets, gathered while the comparison reads them
 * (tl_eff_cache_observe is a tl_sheet_observer, groups.h), so that the efficiency lines do
 * not read a sheet a second time; the sheets it has not seen are read when the lines are
 * built.  Made for the baseline's GPU description (report 0) and the variants' (the
 * others; NULL: the baseline's), or none.
 */
tl_eff_cache *tl_eff_cache_new(const tl_gpu_arch *arch);
tl_eff_cache *tl_eff_cache_new_sides(const tl_gpu_arch *arch, const tl_gpu_arch *arch_variant);
void tl_eff_cache_free(tl_eff_cache *c);
/* Keep the per-name sums of `t` if it is a perf sheet (else nothing): `ctx` is the cache. */
void tl_eff_cache_observe(void *ctx, size_t report, const char *sheet, const tl_table *t);

/* Build the lines of summary `s` (built from reports[0..n), baseline first) from the
 * reports' perf sheets.  A perf sheet that cannot be read is warned about and left out.
 * Strings live in `arena` or the summary's. */
void tl_efficiency_build(tl_efficiency *e, const tl_summary *s, tl_report *reports, size_t n,
                         const tl_eff_options *opt, tl_arena *arena);
void tl_efficiency_free(tl_efficiency *e);

/* The renderings, each placed by render.c after a variant's lists (variant index `v`) or
 * after the LCA section.  Nothing when there is nothing to say. */
void tl_efficiency_print(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag, FILE *out,
                         int color);
void tl_efficiency_markdown(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag,
                            tl_buf *out);
/* `"key": [...]` preceded by ",\n<indent>" (nothing without perf sheets). */
void tl_efficiency_json(const tl_efficiency *e, const tl_eff_list *l, const char *key, const char *indent,
                        tl_buf *out);
/* The summary worksheet's block (a new table), or NULL when there is no line. */
tl_table *tl_efficiency_table(const tl_efficiency *e, const tl_eff_list *l, const char *base, const char *tag,
                              tl_arena *arena);

#endif
