/*
 * sheets_infer.h - the inference generator's layout of the op sheets (INFERENCE.md §3):
 * call stacks and parent modules of the launchers, and ops_summary /
 * ops_summary_by_category grouped as that generator groups them.  Private to
 * src/trace/ (sheets.c calls it).
 */
#ifndef TL_TRACE_SHEETS_INFER_H
#define TL_TRACE_SHEETS_INFER_H

#include "table/table.h"
#include "trace/trace_report.h"

/* Per launcher (in launcher order): parent_module and call_stack texts (§3.2). */
typedef struct tl_sh_module {
    const char **parent_module;
    const char **call_stack;
    size_t n;
} tl_sh_module;

/* Build the texts for the launchers ev[0..n) of t (strings in `a`). */
void tl_sh_module_build(const tl_trace *t, const uint32_t *ev, size_t n, tl_arena *a, tl_sh_module *m);
void tl_sh_module_free(tl_sh_module *m);

/* The launchers as the summaries need them, in launcher order. */
typedef struct tl_sh_rows {
    size_t n;
    const char **name, **cat;
    const double *direct, *subtree;
} tl_sh_rows;

/* ops_summary_by_category and ops_summary in the inference layout (§3.3, §3.4). */
void tl_sh_infer_summaries(const tl_sh_rows *r, const tl_sheet_opts *o, const tl_sh_module *mod, tl_arena *arena,
                           tl_table **by_cat, tl_table **by_name);

#endif
