/*
 * page.h - the summary as a page (write/html.h): the page model built from the summary's
 * own structs (the verdicts, the lists, the efficiency lines, the LCAs) and the aligned
 * call trees, so that the page shows the numbers the text and the JSON show.
 */
#ifndef TL_SUMMARY_PAGE_H
#define TL_SUMMARY_PAGE_H

#include "diff/diff.h"
#include "perf/gpu_arch.h"
#include "summary/summary.h"
#include "table/result.h"
#include "write/html.h"

/* How many nodes of the call tree the page draws at most (the widest first): the rest,
 * and nodes narrower than TL_PAGE_TREE_MIN of the baseline's time, are counted, not drawn. */
#define TL_PAGE_TREE_MAX_NODES 3000
#define TL_PAGE_TREE_MIN 5e-4
/* A call-tree node whose time changed by less than this (%) is drawn as noise. */
#define TL_PAGE_TREE_NOISE_PCT 2.0

typedef struct tl_page_opts {
    const char *tool;         /* "tlcompare" (the default) or "tlreport" */
    const tl_diff *diff;      /* two traces: their aligned call trees, or NULL */
    const tl_gpu_arch *arch;  /* --gpu-arch: the roofline's peak lines, or NULL */
    const tl_gpu_arch *arch_variant; /* the variants' own GPU when it differs, or NULL */
    /* more bars made elsewhere (a trace pair's steps, the ranks of runs), under the sides' */
    const tl_page_bar_set *bar_sets;
    size_t nbar_sets;
    /* sections made elsewhere (a rank set's heatmap: write/html.h), placed last */
    const tl_page_extra *extras;
    size_t nextras;
} tl_page_opts;

/* The page of summary `s`, appended to out (valid UTF-8). */
void tl_summary_html(const tl_summary *s, const tl_page_opts *opt, tl_buf *out);

/* The page of one report (tlreport): its gpu_timeline as a bar, its largest ops
 * (ops_summary), and its perf-model ops on the roofline (unified_perf_summary, at the
 * sheet's own FLOPS/Byte and TFLOPS/s_mean), from the report's sheets `res`, and the bars
 * sets[0..nsets) made elsewhere (its steps) under its timeline.  Appended to
 * out (valid UTF-8); a sheet the report lacks leaves its section out. */
void tl_report_html(const tl_results *res, const char *tag, const tl_gpu_arch *arch, const tl_page_bar_set *sets,
                    size_t nsets, tl_buf *out);

#endif
