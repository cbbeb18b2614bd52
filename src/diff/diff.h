/*
 * diff.h - the morphology-aware diff of two traces (TRACES.md §5-§6): the two CPU-op
 * call trees are aligned into one merged tree, and the GPU work is compared where the
 * trees stop matching (the lowest common op, "LCA"), so that an MI300 convolution with
 * five MIOpen kernels and an H100 convolution with its cuDNN kernels are seen as one op
 * done two ways, not as one op removed and another added.
 *
 * Trace 1 is the baseline ("trace1"), trace 2 the variant ("trace2").  Everything here
 * is computed from the trees of trace.h alone (built without Python functions); the
 * traces must outlive the diff.
 *
 * The alignment is exact (the reference's results) within two bounds that keep a
 * pathological trace from taking hours or all memory:
 *  - Wagner-Fischer on a sibling list: when the lists, after their common tail, would
 *    need more than `wf_max_cells` cells, they are cut into consecutive proportional
 *    chunks that each fit, and each chunk pair is aligned on its own;
 *  - the same-name disambiguation: names whose candidate pairs would pass the budget of
 *    `disambig_max_pairs` pairs per sibling list keep the Wagner-Fischer matching.
 * tl_diff_stats_of() says whether either bound was hit.
 */
#ifndef TL_DIFF_H
#define TL_DIFF_H

#include "base/arena.h"
#include "base/util.h"
#include "table/table.h"
#include "trace/trace.h"

#include <stdint.h>
#include <stdio.h>

/* Default bounds (see above): 2^28 cells is 32 MB of backtracking bits and well under
 * a second; 2^22 pairs sort in a fraction of one. */
#define TL_DIFF_WF_MAX_CELLS ((uint64_t)1 << 28)
#define TL_DIFF_DISAMBIG_MAX_PAIRS ((uint64_t)1 << 22)

/* merged_tree_output.txt draws the indentation of this many levels; a deeper line keeps
 * that indentation and says how many levels deeper it is, "(+N) ", so that the file
 * grows with the number of nodes, not with the square of the depth. */
#define TL_DIFF_TREE_MAX_INDENT 64

typedef struct tl_diff_opts {
    uint64_t wf_max_cells;       /* 0: TL_DIFF_WF_MAX_CELLS */
    uint64_t disambig_max_pairs; /* 0: TL_DIFF_DISAMBIG_MAX_PAIRS */
    /* no unique-args summary or cpu_op maps (a good part of a large pair's diff, and only
     * the files of the morphology diff hold them): a run that writes neither leaves them
     * out; tl_diff_unique_args_groups() is then 0 and the maps are empty */
    int no_groups;
} tl_diff_opts;

/* What a merged node is. */
enum { TL_DIFF_COMBINED = 0, TL_DIFF_TRACE1 = 1, TL_DIFF_TRACE2 = 2 };

/* One node of the merged tree; its index is the reference's merged_id (pre-order). */
typedef struct tl_diff_node {
    uint32_t ev1, ev2;   /* event index in trace 1 / trace 2, or TL_TEV_NONE */
    uint32_t kid0, nkid; /* children: kids[kid0 .. kid0 + nkid), in alignment order */
    uint8_t type;        /* TL_DIFF_COMBINED, TL_DIFF_TRACE1, TL_DIFF_TRACE2 */
} tl_diff_node;

/* One row of diff_stats: a GPU event under an LCA (TRACES.md §5.2). */
typedef struct tl_diff_row {
    uint32_t gpu;         /* the GPU event (index into its trace's ev) */
    uint32_t cpu;         /* its nearest cpu_op */
    uint32_t lca;         /* merged id of the LCA, or UINT32_MAX for none */
    uint8_t side;         /* 0: trace1, 1: trace2 */
    double busy;          /* the LCA-level busy time of that side, rounded to 3 decimals */
    const char *lca_name; /* NULL for none */
    /* kept here, so that the tables made from the rows read no event again */
    const char *name, *cpu_name; /* the GPU event's and the cpu_op's names (or UIDs) */
    uint32_t name_id, cpu_name_id; /* their names by content (equal names, equal ids) */
} tl_diff_row;

/* One LCA: the rows of one lowest_common_ancestor_id (lca_summary, and the summaries). */
typedef struct tl_diff_lca {
    uint32_t id;            /* merged id */
    const char *lca_name;   /* the first row's lowest_common_ancestor_name */
    const char *name;       /* the cpu_op name(s), as lca_summary's `name` */
    const char *name1, *name2; /* each side's cpu_op name(s) ("" when the side has none) */
    double time1, time2;    /* each side's busy time (µs), 0 when absent */
    size_t n1, n2;          /* each side's kernels (rows) */
    size_t row1, row2;      /* the side's first row in tl_diff_rows(), SIZE_MAX if none */
    /* The LCA as a CPU op on each side: its node's cpu_op, or the nearest cpu_op above
     * the node when that is a kernel, a runtime call or a memcpy (named as lca_name is:
     * "(digits)" removed); "" when the side has no cpu_op there. */
    const char *op1, *op2;
} tl_diff_lca;

typedef struct tl_diff_stats {
    size_t nodes, combined, trace1_only, trace2_only;
    size_t wf_runs, wf_chunked;        /* Wagner-Fischer runs, and those cut into chunks */
    size_t disambig_skipped;           /* names left to Wagner-Fischer by the pair budget */
    size_t tree_depth;                 /* levels of the merged tree (1: roots only) */
} tl_diff_stats;

typedef struct tl_diff tl_diff;

/*
 * Align the two trees and compute diff_stats, the LCAs, the unique-args summary and the
 * cpu_op maps (with opts->no_groups, not the last two).  opts may
 * be NULL.  Returns NULL with *err set when a trace has no cpu root node (the reference
 * raises there: there is no tree to align), or when the traces' run is cancelled.
 */
tl_diff *tl_diff_run(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *opts, tl_error *err);
void tl_diff_free(tl_diff *d);

/* The merged tree: every node (index = merged id), the roots in order, the kids array. */
const tl_diff_node *tl_diff_nodes(const tl_diff *d, size_t *n);
const uint32_t *tl_diff_roots(const tl_diff *d, size_t *n);
const uint32_t *tl_diff_kids(const tl_diff *d);
const tl_diff_stats *tl_diff_stats_of(const tl_diff *d);

/* The partner of event `ev` of trace `side` (1 or 2) in the other trace, as the
 * reference's merged_uid_map: its event index, TL_TEV_NONE when it was merged alone,
 * or UINT32_MAX - 1 when it is not in the merged tree. */
uint32_t tl_diff_partner(const tl_diff *d, int side, uint32_t ev);

/* The name of merged node `id` on side 0 (trace 1) or 1 (trace 2) as merged_tree_output.txt
 * writes it, or NULL when the node is not on that side.  Not thread-safe (a name may be
 * made on demand). */
const char *tl_diff_node_op(const tl_diff *d, uint32_t id, int side);

/* One call of an op that launched GPU work itself (ops_summary's unit), on one side or
 * paired through the alignment with the same op at the same place of the other call tree. */
typedef struct tl_diff_call {
    const char *name; /* the op's name (interned in its trace) */
    uint64_t shape;   /* its argument set (Input Dims, type, strides, concrete inputs) as one number */
    double us1, us2;  /* the direct GPU time (µs: the durations of the GPU events it launched,
                       * added) on trace 1 / trace 2; NaN on the side that has no such call */
    double ts1, ts2;  /* the call's trace time (µs) on each side, NaN where it has none */
} tl_diff_call;

/* Every such call of trace 1, each with its partner of trace 2 when the alignment paired
 * it with an op of the same name that launched GPU work too, then trace 2's unpaired calls.
 * *out is malloc'd (free it); returns how many. */
size_t tl_diff_calls(const tl_diff *d, tl_diff_call **out);

/* diff_stats rows in order (both sides, before the identical-traces reduction). */
const tl_diff_row *tl_diff_rows(const tl_diff *d, size_t *n);
/* 1 when trace2's rows equal trace1's (the identical-traces form, TRACES.md §5.2). */
int tl_diff_identical(const tl_diff *d);
/* The LCAs in lca_summary's order (trace1 time, largest first). */
const tl_diff_lca *tl_diff_lcas(const tl_diff *d, size_t *n);

/* Where one side's GPU time is, as the LCAs see it: each a union of intervals (µs), so
 * that overlapping kernels count once.  The parts need not add up to busy_us exactly
 * (two parts may overlap in time on different streams). */
typedef struct tl_diff_cover {
    double busy_us;      /* every GPU event of the side linked to a launch (gpu_timeline's busy_time) */
    double lca_us;       /* the GPU events under an LCA */
    double unmatched_us; /* under a top-level op only this side has (no LCA: nothing to pair with) */
    double graph_us;     /* launched by a graph launch, and under no LCA */
    double outside_us;   /* the rest: launched outside every cpu_op */
    double graph_all_us; /* every GPU event launched by a graph launch, under an LCA or not */
    /* of those, the ones a capture folder would attribute (vLLM/SGLang's replays): not the
     * graphs torch.compile launches under a CompiledFunction op, which ops attribute */
    double graph_capture_us;
} tl_diff_cover;

/* The cover of side 0 (trace 1) or 1 (trace 2). */
void tl_diff_coverage(const tl_diff *d, int side, tl_diff_cover *out);

/* The tables of TRACES.md §5.2 and §6, their strings in `arena`:
 * diff_stats (identical traces: trace1's rows, no `source`), the unique-args summary
 * (cpu_op_name renamed, as the reference writes it) and lca_summary. */
tl_table *tl_diff_stats_table(const tl_diff *d, tl_arena *arena);
tl_table *tl_diff_unique_args_table(const tl_diff *d, tl_arena *arena);
tl_table *tl_diff_lca_table(const tl_diff *d, tl_arena *arena);

/* The unique-args summary a slice at a time, so that it can be written without being held
 * whole: the rows of the groups from *from on, at most `rows` of them (none when no group
 * is left); *from moves past them, up to tl_diff_unique_args_groups(d).  The slices'
 * rows, in order, are tl_diff_unique_args_table's. */
tl_table *tl_diff_unique_args_slice(const tl_diff *d, size_t *from, size_t rows);
size_t tl_diff_unique_args_groups(const tl_diff *d);

/* merged_tree_output.txt (prune off), streamed to f, indented at most
 * TL_DIFF_TREE_MAX_INDENT levels (see there).  Returns 0, or -1 on a write error. */
int tl_diff_write_tree(const tl_diff *d, FILE *f);

/* cpu_op_map_trace1.json (which 1), cpu_op_map_trace2.json (2) or cpu_op_map.json (0). */
void tl_diff_cpu_op_map_json(const tl_diff *d, int which, tl_buf *out);

/* ---- pieces, exposed for the unit tests ------------------------------------------- */

/* TRACES.md §5 name normalisation of s[0..n) into out (cleared first). */
void tl_diff_normalize(const char *s, size_t n, int strip_details, tl_buf *out);

/* Remove every "(digits)" from s (the LCA name rule); the result in out. */
void tl_diff_strip_digits(const char *s, tl_buf *out);

/* Wagner-Fischer on name ids a[0..m), b[0..n) with the reference's backtracking.  Ops
 * go to ops[] (at most m + n): kind 0 match (i, j), 1 delete (i), 2 insert (j). */
typedef struct tl_diff_op {
    uint8_t kind;
    uint32_t i, j;
} tl_diff_op;
enum { TL_DIFF_MATCH = 0, TL_DIFF_DELETE = 1, TL_DIFF_INSERT = 2 };
size_t tl_diff_wf(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t max_cells, tl_diff_op *ops,
                  int *chunked);

/* The order in which CPython iterates a set of (i, j) int tuples added in the order
 * given: the reference emits its disambiguated matches that way.  Permutes p[0..n). */
void tl_diff_pyset_order(uint32_t (*p)[2], size_t n);

/* Python's repr() of a str (for the kernel-name lists of lca_summary). */
void tl_diff_py_repr(const char *s, tl_buf *out);

#endif
