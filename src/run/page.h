/*
 * page.h - the parts of a comparison's page (--html) that only some comparisons have, taken
 * from the comparison as it runs: the ranks of runs (their gpu_timeline per rank, and each
 * rank's wait per collective, as the ranks_gpu_timeline and stragglers sheets hold them) as
 * a rank x metric heatmap and as stacked bars per rank, and the steps of two traces
 * (ProfilerStep#N, run/steps.h), or of tlreport's one, as stacked bars per step.
 *
 * The numbers are copied from the sheets as they pass (a sheet written to the workbook is
 * freed before the page is made), never computed again.
 */
#ifndef TL_RUN_PAGE_H
#define TL_RUN_PAGE_H

#include "base/arena.h"
#include "run/steps.h"
#include "summary/page.h"
#include "table/result.h"

typedef struct tl_run_page_runs tl_run_page_runs;

typedef struct tl_run_page {
    tl_arena arena;
    tl_run_page_runs *runs;     /* from ranks_gpu_timeline (and stragglers), or NULL */
    tl_page_bar_set *sets;      /* made by tl_run_page_opts */
    size_t nsets;
    tl_page_heatmap *heat;      /* one per variant */
    tl_page_extra *extras;
    size_t nheat;
} tl_run_page;

void tl_run_page_init(tl_run_page *p);

/* Copy what the page draws from result sheet r, when it is one of runs' (any other: nothing). */
void tl_run_page_observe(tl_run_page *p, const tl_result *r);

/* Fill opt's bar sets and extra sections: the steps of rs (when measured, with the sides'
 * tags) and the ranks observed.  They stay valid until tl_run_page_free. */
void tl_run_page_opts(tl_run_page *p, const tl_run_steps *rs, const char *const *tags, tl_page_opts *opt);

/* One trace's steps (tlreport's page) as bars, or NULL when it has none; valid until
 * tl_run_page_free. */
const tl_page_bar_set *tl_run_page_report_steps(tl_run_page *p, const tl_steps *s, const char *tag);

void tl_run_page_free(tl_run_page *p);

#endif
