/*
 * lca.h - the summary's comparison by lowest common op (TRACES.md §6, last paragraph):
 * the morphology diff's LCAs with the largest absolute change, each kind read as one line
 * ("aten::_convolution: 5 kernels of aten::miopen_convolution 0.334 ms vs 6 kernels of
 * aten::cudnn_convolution 0.281 ms, -0.053 ms, -15.9%"), for the terminal, Markdown,
 * JSON and the summary worksheet; and the regression gate on LCA deltas.
 */
#ifndef TL_SUMMARY_LCA_H
#define TL_SUMMARY_LCA_H

#include "diff/diff.h"
#include "table/table.h"

#include <stdio.h>

/* One kind of LCA as the summary shows it: the LCAs of one name over the same ops on
 * each side (a model's repeated layers), their kernels and times (ms) added. */
typedef struct tl_lca_item {
    const char *lca;         /* the LCA's name */
    size_t count;            /* how many LCAs */
    size_t first;            /* the first one's position in lca_summary */
    const char *ops1, *ops2; /* each side's cpu_op name(s) */
    size_t n1, n2;           /* each side's kernels */
    double ms1, ms2;
    double delta_ms, pct;    /* pct: NaN when the baseline has no time */
} tl_lca_item;

typedef struct tl_lca_summary {
    const char *tag1, *tag2;
    size_t nlcas;            /* every LCA of the diff */
    size_t ngroups;          /* kinds of LCA (tl_lca_item) */
    size_t nslower, nfaster; /* of those, how many changed either way */
    tl_lca_item *top;        /* by |delta|, largest first, at most `top` of them */
    size_t ntop;
    tl_lca_item *violations; /* over the gate, largest delta first */
    size_t nviolations;
    int gate_on;
    double gate_pct, gate_min_ms;
} tl_lca_summary;

/* Build from the diff; gate_pct < 0: no gate.  Strings live in `arena`. */
void tl_lca_summary_build(tl_lca_summary *s, const tl_diff *d, const char *tag1, const char *tag2, size_t top,
                          double gate_pct, double gate_min_ms, tl_arena *arena);
void tl_lca_summary_free(tl_lca_summary *s);

void tl_lca_summary_print(const tl_lca_summary *s, FILE *out, int color);
void tl_lca_summary_markdown(const tl_lca_summary *s, tl_buf *out);
/* A JSON object (schema in the man page). */
void tl_lca_summary_json(const tl_lca_summary *s, tl_buf *out);
/* The gate's lines for stderr ("tlcompare: regression: ..."). */
void tl_lca_summary_print_violations(const tl_lca_summary *s, FILE *out);
/* The summary worksheet's block: one row per listed LCA (a new table). */
tl_table *tl_lca_summary_table(const tl_lca_summary *s, tl_arena *arena);

#endif
