/*
 * dist_answer.h - a comparison of runs' answer first, from the runs' facts (dist_facts.h):
 * how the slowest rank, the ranks alone, the collectives and the straggler moved, said as
 * the summary's lines, its JSON "runs" object and the summary sheet's first blocks; the
 * ops that moved on one rank only (ranks_ops); the runs' gate, and the gate again.
 */
#ifndef TL_RUN_DIST_ANSWER_H
#define TL_RUN_DIST_ANSWER_H

#include "run/compare.h"
#include "run/dist_facts.h"

/* What the answer says, per variant against the baseline; tl_dist_lead_free frees it. */
typedef struct tl_dist_lead {
    tl_buf text, md, json;  /* the summary's first lines (text, Markdown), the JSON `runs` */
    tl_table *rank_ops;     /* ranks_ops, until put with the other sheets (NULL then) */
    tl_table **tables;      /* the summary sheet's blocks, a variant each */
    const char **titles;
    size_t n;
    tl_buf violations;      /* the runs' gate violations, a line each */
    struct answer *answers; /* per variant, what the summary said (for the gate again) */
    size_t nanswers;
} tl_dist_lead;

/* The answer of the runs of d (the collectives sheet already in d->extra; the titles in
 * d->arena) into l, zeroed before; 1 when the runs' gate fails (the slowest rank's busy
 * time, or a collective's bus bandwidth, worse than o->fail_pct and beyond the noise). */
int tl_dist_build_lead(struct tl_dist *d, tl_dist_lead *l, const tl_compare_opts *o);

/* The runs' gate again at `pct` (the slowest rank's busy time, the collective whose bus
 * bandwidth changed most): 1 when it fails, its violations appended to `violations` a
 * line each (as tl_summary's lead_violations), else 0. */
int tl_dist_gate(const tl_dist_lead *l, double pct, tl_buf *violations);

void tl_dist_lead_free(tl_dist_lead *l);

#endif
