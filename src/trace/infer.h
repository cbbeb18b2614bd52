/*
 * infer.h - graph-replay traces attributed through their capture traces (INFERENCE.md
 * §2): the execution steps and their graph launches, the capture roots, the pairing of
 * roots with launches, the alignment of replay kernels with capture-time launches and
 * the grafting of the capture subtrees into the execution tree.
 *
 * The result is an ordinary tl_trace (the "merged tree"): the grafted copies are events
 * appended after the execution trace's own (uid = traceEvents length + position), each
 * attributed replay kernel is the child of its capture launch's copy, and every copy's
 * gpu list holds the replay kernels below it.  So the sheets (trace_report.h) and a perf
 * layer over tl_trace read it without knowing about graphs.  For the perf-model sheets
 * (§3.8): every event of the merged tree whose name has a perf model, copies included, is
 * a row (one instance per graph launch it was grafted under), its shapes (input_dims, ...)
 * the capture's, its kernels those of its gpu list (tl_tev_gpu: the replay kernels below
 * it; none for a copy whose launches went unmatched), its CPU ts/dur the graph launch's
 * (so CPU-duration columns mean nothing for copies).  The execution trace's
 * user_annotation events are kept (kind TL_TEV_ANNOT, outside the tree): the annotation
 * enclosing an event by time, copies included, is its step's iteration annotation, which
 * the attention models read.  Pseudo-op renames (tl_infer_pseudo_ops) are already in the
 * names.  tl_infer_is_copy tells a copy from an execution-trace event.  The Python
 * frames with no attributed launch below them are not copied (their UIDs are still
 * counted): nothing of the sheets reads them.
 */
#ifndef TL_TRACE_INFER_H
#define TL_TRACE_INFER_H

#include "trace/capture.h"
#include "trace/trace.h"

/* What an attribution did: the success line and the warnings come from here. */
typedef struct tl_infer_stats {
    size_t nlaunch;           /* graph launches in the execution trace */
    size_t nattributed;       /* ... grafted */
    size_t nreplay;           /* replay kernels (GPU events under graph launches) */
    size_t nreplay_attributed;
    size_t nroots;            /* execution roots (§2.2) */
    size_t ncopies;           /* grafted events */
    size_t nunmatched;        /* capture launches left unmatched */
    int64_t capture_batch;    /* batch size and mode of the first capture used (-1: none) */
    int piecewise;
    char reason[512];         /* the first reason a root or pair was not attributed */
} tl_infer_stats;

/*
 * Attribute the graph replays of `t` (loaded with TL_LOAD_ANNOT | TL_LOAD_PYTHON) through
 * the capture folder `cap` (§2), grafting in place; `all_frames` copies every Python frame
 * of the capture subtrees, not only those above an attributed launch (the reference's
 * whole subtree: for the tests).  Warnings (§5) are printed; the
 * errors of §5 (no iteration annotation, overlapping annotations, a multi-stream replay
 * without kernel names, nothing attributed) return -1 with *err set and leave `t` as it
 * was.  Capture traces that were grafted from are moved into t->owned.
 */
int tl_infer_attribute(tl_trace *t, tl_capture *cap, int all_frames, tl_infer_stats *st, tl_error *err);

/* The one line tlreport prints on success (§0), without a newline. */
void tl_infer_summary(const tl_trace *t, const tl_infer_stats *st, tl_buf *out);

/* INFERENCE.md §0.1's hint, as a note: `t` (loaded from `path` without a capture folder)
 * has most of its kernel time under graph launches and a capture_traces/ directory lies
 * beside it. */
void tl_infer_capture_hint(const tl_trace *t, const char *path);

/* 1 when event i of an attributed trace is a grafted copy. */
int tl_infer_is_copy(const tl_trace *t, uint32_t i);

/* --enable_pseudo_ops on a (merged) tree (§2.10): SGLang's numbered profiler names lose
 * their last `_<digits>`. */
void tl_infer_pseudo_ops(tl_trace *t);

/* How a trace is read in inference mode (INFERENCE.md §0). */
typedef struct tl_infer_opts {
    const char *capture_dir; /* the capture folder, or NULL */
    int python;              /* Python functions in the tree (--group_by_parent_module, --include_call_stack) */
    int pseudo_ops;          /* --enable_pseudo_ops */
    int call_stack;          /* --include_call_stack: unified_perf_summary's call-stack columns */
    tl_cancel *cancel;       /* NULL, or the run's flag: the loads stop soon after it is set */
    unsigned load_flags;     /* more TL_LOAD_* flags (TL_LOAD_COUNTED) */
} tl_infer_opts;

/*
 * Load the trace at `path` as the inference generator reads it: with Python functions
 * when a capture folder or o->python asks for them, attributed through the capture
 * folder (warnings printed, *st filled: st->nlaunch is 0 without a folder), pseudo ops
 * applied.  NULL with *err set (a §5 error, or the trace's own).
 */
tl_trace *tl_infer_load(const char *path, const tl_infer_opts *o, tl_infer_stats *st, tl_error *err);

/* The reference's pseudo ops that would re-parent events of `t` (MLA decode / prefill,
 * DeepSeek-V4 paged decode, flydsl MoE; §2.10), which are not implemented: their names,
 * at most max of them, into what[]; returns how many (tl_infer_pseudo_ops warns). */
size_t tl_infer_unapplied_pseudo_ops(const tl_trace *t, const char **what, size_t max);

/* ---- the phases, for the tests --------------------------------------------------------- */

/* §2.3: the batch size of an iteration annotation named `name`; 0 and *batch, or -1. */
int tl_infer_step_batch(const char *name, int64_t *batch);

/* The roofline aggregates of an iteration annotation named `name` (what the attention
 * models of PERF.md read: the reference's IterationAnnotation.chunk_stats): st[] gets
 * c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk; returns 1, or 0 when the name is
 * no detailed annotation (st[] all 0). */
int tl_infer_chunk_stats(const char *name, int64_t st[8]);

/* §2.2: 2 when `name` is a detailed iteration annotation, 1 a native one, else 0. */
int tl_infer_root_kind(const char *name);

/* A pair of (replay kernel, capture launch) by their indexes in the two sides' lists. */
typedef struct tl_infer_pair {
    uint32_t k, c;
} tl_infer_pair;

/* One side of an alignment: names, kernel names (NULL: no args.kernel), streams. */
typedef struct tl_infer_side {
    const char **name;
    const char **kernel; /* capture side only */
    const int64_t *stream; /* replay side only (TL_TEV_NO_STREAM: missing) */
    size_t n;
} tl_infer_side;

/*
 * §2.7 on one pair: replay kernels `r` against capture launches `c`.  Returns 0 with
 * pairs[0..*npairs) (replay index, capture index) filled (pairs must hold r->n), 1 when
 * the pair fails (*why set), 2 for a multi-stream replay whose capture launches carry
 * no kernel names.
 */
int tl_infer_align(const tl_infer_side *r, const tl_infer_side *c, tl_infer_pair *pairs, size_t *npairs,
                   char *why, size_t whylen);

#endif
