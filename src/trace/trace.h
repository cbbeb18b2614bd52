/*
 * trace.h - a PyTorch profiler trace, as the report sheets and the morphology diff need
 * it (TRACES.md §1-§2): the events that matter, compactly, and the CPU-op call tree with
 * the GPU events linked under their launches.
 *
 * Only these events are kept: cpu_op, cuda_runtime / cuda_driver (one kind, "runtime"),
 * and the GPU events (kernel, gpu_memcpy, gpu_memset).  python_function, user_annotation,
 * flow, instant and metadata events are consumed while the trace streams by (flows to
 * link, metadata for process and thread names) and not kept, unless a load asks for
 * python_function or user_annotation events (TL_LOAD_*: inference traces, trace/infer.h).
 *
 * Events are referred to by their index in `ev` (array order of the trace, which is also
 * UID order); `uid` is the event's position in the traceEvents array, every event
 * counted.  Names and argument texts are interned in the trace's arena: two equal names
 * are the same pointer.
 */
#ifndef TL_TRACE_H
#define TL_TRACE_H

#include "base/arena.h"
#include "base/cancel.h"
#include "base/util.h"

#include <stddef.h>
#include <stdint.h>

typedef enum tl_tev_kind {
    TL_TEV_CPU_OP = 1, /* cat "cpu_op" */
    TL_TEV_RUNTIME,    /* cat "cuda_runtime" or "cuda_driver" (ROCm uses the same) */
    TL_TEV_KERNEL,     /* cat "kernel" */
    TL_TEV_MEMCPY,     /* cat "gpu_memcpy" */
    TL_TEV_MEMSET,     /* cat "gpu_memset" */
    TL_TEV_PYTHON,     /* cat "python_function": kept only under TL_LOAD_PYTHON, in the tree */
    TL_TEV_ANNOT,      /* cat "user_annotation": kept only under TL_LOAD_ANNOT, not in the tree */
} tl_tev_kind;

/* tl_tev.flags */
enum {
    TL_TEV_IN_TREE = 1 << 0,      /* a tree event (cpu_op / runtime) the bleed rule kept */
    TL_TEV_LINKED = 1 << 1,       /* a GPU event attached to its launch (TraceLens' `tree`) */
    TL_TEV_NON_GPU_PATH = 1 << 2, /* not a GPU event, and no GPU event below it */
    TL_TEV_GRAPH_LAUNCH = 1 << 3, /* a runtime event named cudaGraphLaunch / hipGraphLaunch */
    TL_TEV_CPU_ROOT = 1 << 4,     /* a cpu root node (TRACES.md §2 step 3d) */
    TL_TEV_TS_INT = 1 << 5,       /* ts was written as a JSON integer (TRACES.md §4.6) */
    TL_TEV_DUR_INT = 1 << 6,      /* dur was written as a JSON integer */
    TL_TEV_COMM = 1 << 7,         /* named like a communication kernel (tl_trace_is_comm, once per name) */
};

#define TL_TEV_NONE UINT32_MAX /* "no event" for parent */
#define TL_TEV_REF_AUX 0x80000000u /* tl_tev.ref: an aux record (so at most 2^31 of them and of threads) */
#define TL_TEV_NO_STREAM INT64_MIN

/* One kept event: what every event has, Python frames included (most of an inference
 * capture trace's events are frames: they are kept in this record alone, 56 bytes).
 * What only some events carry is in a tl_tev_aux (tl_tev_x), their pid and tid in the
 * trace's thread table (tl_tev_thread, tl_tev_pid, tl_tev_tid); the end is tl_tev_end. */
typedef struct tl_tev {
    const char *name;  /* interned */
    double ts, dur;    /* µs, as read */
    uint32_t uid;      /* position in traceEvents */
    uint8_t kind;      /* tl_tev_kind */
    uint8_t flags;
    /* TL_TEV_REF_AUX | its aux record's index in tl_trace.aux, or for an event without
     * one (tl_tev_aux_none) its thread's index in tl_trace.threads */
    uint32_t ref;
    /* The tree: parent (TL_TEV_NONE for none); children in ts order, GPU events last
     * under their runtime event; gpu: every linked GPU event in the subtree, link order
     * (a multiset: TRACES.md §2 step 4).  Both are ranges of the trace's `idx` array. */
    uint32_t parent;
    uint32_t child0, nchild;
    uint32_t gpu0, ngpu;
} tl_tev;

/* A cpu_op's shape args as Python tuple reprs (TRACES.md §4.2) and its "Output type"
 * (what the perf models read, PERF.md §4.7), each NULL when absent.  A trace repeats a
 * few thousand combinations over millions of ops, so the reader keeps each combination
 * once and its events share it (an event's aux record holds a pointer, not five). */
typedef struct tl_op_args {
    const char *input_dims, *input_type, *input_strides, *concrete_inputs;
    const char *output_type;
} tl_op_args;

/* The args of an event that has none of them: every field NULL. */
extern const tl_op_args tl_op_args_none;

/* What some events carry beyond tl_tev: the link and stream ids, the cpu_op shape args,
 * and what the perf models read (PERF.md §1, §4.7).  Every event that is not a Python
 * frame has one; a frame has one only when it carries something here (its args are not
 * read, so almost never): the others read as tl_tev_aux_none. */
#define TL_SEQ_NONE INT64_MIN
typedef struct tl_tev_aux {
    int64_t stream;    /* GPU events: args.stream, or TL_TEV_NO_STREAM */
    int64_t corr;      /* args[linking key] (correlation or External id), or -1 */
    const tl_op_args *args; /* cpu_ops' shape args and output type; never NULL (tl_op_args_none) */
    /* runtime events under TL_LOAD_KERNEL_ARG: args.kernel (ROCm's launched kernel), or NULL */
    const char *kernel_arg;
    int64_t seq;             /* args["Sequence number"] when an integer, else TL_SEQ_NONE */
    uint8_t has_args;        /* the event has an args object */
    uint8_t is_driver;       /* a runtime event of cat "cuda_driver" (not "cuda_runtime") */
    /* an injected MoE pseudo op (trace/infer.h): its gating and experts per token */
    uint8_t moe_gated;
    int32_t moe_topk;
    uint32_t thread;         /* the event's (pid, tid): an index into tl_trace.threads */
} tl_tev_aux;

/* The aux of an event that has none: no stream, no link id, no args. */
extern const tl_tev_aux tl_tev_aux_none;

/* ---- collective kernels' metadata (TRACES.md §7, MULTIRANK.md §3.2) ------------------ */

/* The args a collective kernel carries about its collective, in this order. */
enum {
    TL_COLL_PG_NAME,    /* "Process Group Name" */
    TL_COLL_PG_RANKS,   /* "Process Group Ranks" */
    TL_COLL_NAME,       /* "Collective name" */
    TL_COLL_GROUP_SIZE, /* "Group size" */
    TL_COLL_DTYPE,      /* "dtype" */
    TL_COLL_IN_NELEMS,  /* "In msg nelems" */
    TL_COLL_OUT_NELEMS, /* "Out msg nelems" */
    TL_COLL_IN_SPLIT,   /* "In split size" */
    TL_COLL_OUT_SPLIT,  /* "Out split size" */
    TL_COLL_STREAM,     /* "stream" */
    TL_COLL_NKEYS
};
extern const char *const tl_coll_key_names[TL_COLL_NKEYS];

/* One arg value as the reference's pandas holds it: absent (or null), an int, a float, a
 * string (verbatim), or a repr (a JSON array as Python tuple text, `(0, 1)`; an object
 * as a dict repr; true/false as True/False). */
typedef enum tl_cval_kind { TL_CV_NONE = 0, TL_CV_INT, TL_CV_FLOAT, TL_CV_STR, TL_CV_REPR } tl_cval_kind;
/* 16 bytes: every collective kernel of every rank holds ten of these until the report
 * is made, so the value is read by its kind, never through another member. */
typedef struct tl_cval {
    uint8_t kind;
    union {
        int64_t i;     /* TL_CV_INT */
        double f;      /* TL_CV_FLOAT */
        const char *s; /* TL_CV_STR / TL_CV_REPR: interned */
    };
} tl_cval;

/* A collective kernel: a kept `kernel` event whose name is a communication kernel's
 * (nccl / rccl / cross_device_reduce) and whose args hold a non-null correlation or
 * External id.  Only these events' metadata are read (it is not worth a reader's time
 * for any other kernel). */
typedef struct tl_coll_meta {
    uint32_t ev; /* the event's index in tl_trace.ev */
    tl_cval v[TL_COLL_NKEYS];
} tl_coll_meta;

/* The event categories a trace's census counts (tl_trace.census): what a refusal names
 * when a trace holds nothing to report (TRACES.md §1's categories). */
typedef enum tl_trace_cat {
    TL_CAT_CPU_OP = 0,
    TL_CAT_CUDA_RUNTIME,
    TL_CAT_CUDA_DRIVER,
    TL_CAT_KERNEL,
    TL_CAT_GPU_MEMCPY,
    TL_CAT_GPU_MEMSET,
    TL_CAT_AC2G,     /* launch flows */
    TL_CAT_OLD_FLOW, /* "async_cpu_to_gpu": older Kineto's launch flows (TRACES.md §8) */
    TL_CAT_PYTHON,
    TL_CAT_ANNOT,    /* user_annotation */
    TL_CAT_OTHER,    /* every other category together (the first few by name: `other`) */
    TL_CAT_N
} tl_trace_cat;

/* The names of the counted categories, TL_CAT_OTHER's "other". */
extern const char *const tl_trace_cat_names[TL_CAT_N];

#define TL_CENSUS_NAMED 12 /* other categories counted by name; the rest only in n[TL_CAT_OTHER] */
typedef struct tl_trace_census {
    uint64_t n[TL_CAT_N]; /* events with a "cat" of each (every phase: flows count s and f) */
    struct {
        const char *cat;  /* interned in the trace's arena */
        uint64_t n;
    } named[TL_CENSUS_NAMED]; /* the first other categories met, and their counts */
    size_t nnamed;
} tl_trace_census;

/* A thread of the trace: the numeric pid and tid of its events (events with string ones
 * are not kept). */
typedef struct tl_pid_tid {
    int64_t pid, tid;
} tl_pid_tid;

/* A training iteration: a ProfilerStep#N user_annotation (kept whatever TL_LOAD_* says:
 * the comparison's steps, summary/steps.h). */
typedef struct tl_trace_step {
    int64_t number; /* N */
    double ts, dur; /* µs: the CPU span of the step */
} tl_trace_step;

typedef struct tl_trace {
    char *path;
    tl_tev *ev;          /* kept events, array order */
    size_t nev;
    tl_tev_aux *aux;     /* the events' aux records (tl_tev.ref) */
    size_t naux;
    tl_pid_tid *threads; /* the events' threads (tl_tev_thread), each once */
    size_t nthreads;
    uint32_t *idx;       /* the children and gpu ranges of the events point here */
    size_t nidx;
    uint32_t *roots;     /* cpu root nodes, in ts order across threads */
    size_t nroots;
    size_t ncpu_ops;     /* how many cpu_op events (0: a GPU-only trace) */
    uint32_t nuids;      /* how many UIDs are taken: traceEvents' length, plus the grafted copies of an attributed trace */
    size_t nnegative;    /* kept events with a negative duration (used as they are) */
    uint32_t first_negative; /* the uid of the first of them */
    size_t nnonfinite;       /* events of a kept kind left out for a ts or dur of NaN, ±Infinity or beyond a double */
    uint32_t first_nonfinite; /* the uid of the first of them */
    tl_arena arena;      /* names, argument texts, process and thread names */
    void *names;         /* process / thread names by (pid, tid): see tl_trace_thread_name */
    uint32_t nuid;       /* how many events traceEvents holds (every event counted) */
    unsigned load_flags; /* the TL_LOAD_* it was loaded with */
    uint64_t read_split; /* where a second thread's reading of the events took over (0: none) */
    uint64_t read_ahead_from; /* where a helper thread began inflating a gzip text (UINT64_MAX: none) */
    /* the flag of the run it was loaded for (NULL: none; tl_trace_load_cancel): the work
     * over the trace after its reading (its tree, its sheets, the perf sheets, the
     * alignment of two traces) stops, failing, soon after it is set.  The flag must live
     * as long as that work; a trace kept past its run has it cleared (tl_trace_uncancel). */
    tl_cancel *cancel;
    tl_coll_meta *coll;  /* the collective kernels, event order (tl_coll_meta) */
    size_t ncoll;
    long ndevices;       /* the length of a non-empty top-level deviceProperties array, else -1 */
    long dist_rank, dist_world; /* distributedInfo's integer rank and world_size, else -1 */

    tl_trace_census census; /* what the events are, by category */
    /* the flows the launches were linked through: TL_CAT_AC2G, or TL_CAT_OLD_FLOW for a
     * trace that has only older Kineto's (TRACES.md §8) */
    uint8_t link_flows;
    /* traces whose interned strings this one's events use (an attributed trace's
     * capture traces, trace/infer.h): freed with it */
    struct tl_trace **owned;
    size_t nowned;
    tl_trace_step *steps; /* the ProfilerStep#N annotations, in ts order */
    size_t nsteps;
    const char *gpu_name; /* deviceProperties[0].name (interned), or NULL */
} tl_trace;

/* Children and GPU events of event i. */
static inline const uint32_t *tl_tev_children(const tl_trace *t, uint32_t i) { return t->idx + t->ev[i].child0; }
static inline const uint32_t *tl_tev_gpu(const tl_trace *t, uint32_t i) { return t->idx + t->ev[i].gpu0; }
/* 1 when event e has an aux record of its own. */
static inline int tl_tev_has_aux(const tl_tev *e) { return (e->ref & TL_TEV_REF_AUX) != 0; }
/* The aux record of event e of t (tl_tev_aux_none when it has none). */
static inline const tl_tev_aux *tl_tev_x(const tl_trace *t, const tl_tev *e)
{
    return tl_tev_has_aux(e) ? &t->aux[e->ref & ~TL_TEV_REF_AUX] : &tl_tev_aux_none;
}
/* The index of e's (pid, tid) in t->threads: two events are on one thread when these
 * are equal. */
static inline uint32_t tl_tev_thread(const tl_trace *t, const tl_tev *e)
{
    return tl_tev_has_aux(e) ? t->aux[e->ref & ~TL_TEV_REF_AUX].thread : e->ref;
}
/* ts + dur: the one double addition TRACES.md §2 step 1 makes the end of an event. */
static inline double tl_tev_end(const tl_tev *e) { return e->ts + e->dur; }
/* TRACES.md §4.6: whether a time made of e is a Python int in the reference: its dur
 * alone (durations), or its ts and dur (an end, so a busy time). */
static inline int tl_tev_dur_int(const tl_tev *e) { return (e->flags & TL_TEV_DUR_INT) != 0; }
static inline int tl_tev_times_int(const tl_tev *e)
{
    return (e->flags & (TL_TEV_TS_INT | TL_TEV_DUR_INT)) == (TL_TEV_TS_INT | TL_TEV_DUR_INT);
}
static inline int64_t tl_tev_pid(const tl_trace *t, const tl_tev *e) { return t->threads[tl_tev_thread(t, e)].pid; }
static inline int64_t tl_tev_tid(const tl_trace *t, const tl_tev *e) { return t->threads[tl_tev_thread(t, e)].tid; }
static inline int tl_tev_is_gpu(const tl_tev *e)
{
    return e->kind == TL_TEV_KERNEL || e->kind == TL_TEV_MEMCPY || e->kind == TL_TEV_MEMSET;
}

/* ---- limits (README "Limits"): what a trace may make the reader hold ---------------- */

/* One shape argument (Input Dims, Input type, Input Strides, Concrete Inputs), as the
 * Python tuple text it becomes: at most this many bytes. */
#define TL_TRACE_MAX_ARG_BYTES ((size_t)16 << 20)
/* Graph launches that share a link id each link every GPU event of that id: the links
 * beyond one per GPU event are at most this many (real traces give each launch its own
 * id: none at all; the sheets' work on 2^22 repeats is a few seconds). */
#define TL_TRACE_MAX_LINK_REPEATS ((uint64_t)1 << 22)
/* GPU lists that cannot be a range of the tree-order layout (launches out of their
 * time order inside a subtree) get their own copy: at most this many entries in all. */
#define TL_TRACE_MAX_GPU_COPIES ((uint64_t)1 << 26)

/* ---- loading ----------------------------------------------------------------------- */

/* 1 when the file at `path` is a trace by its content: gzip magic, or a first non-space
 * byte '{' (a directory, an .xlsx (zip) or an unreadable file is not). */
int tl_trace_sniff(const char *path);

/* 1 when `path` is to be read as a trace: a trace by its content (tl_trace_sniff), a
 * FIFO not named *.xlsx (a report cannot come through one: a workbook is read out of
 * order, a CSV report is a directory), or a regular file named *.json or *.json.gz
 * whatever it holds, so that a damaged trace is told what is wrong with it as a trace. */
int tl_trace_claims(const char *path);

/* Read the trace at `path` (plain or gzip JSON, streamed) and build its tree and links
 * (TRACES.md §1-§2).  Returns NULL with *err set: one line naming the file and, where it
 * applies, the byte offset or event index. */
tl_trace *tl_trace_load(const char *path, tl_error *err);

/* The same over n bytes of trace in memory (plain or gzip), called `name` in messages:
 * for the tests and the fuzzer. */
tl_trace *tl_trace_load_mem(const void *data, size_t n, const char *name, tl_error *err);

/* What more than the sheets' events a load keeps (INFERENCE.md §1.3, §2.1): */
enum {
    TL_LOAD_PYTHON = 1 << 0,     /* python_function events, as tree events like cpu_ops */
    TL_LOAD_ANNOT = 1 << 1,      /* user_annotation events (outside the tree) */
    TL_LOAD_KERNEL_ARG = 1 << 2, /* args.kernel of runtime events */
    /* Only the events that may be collective kernels (cat "kernel", a communication
     * kernel's name; their metadata in `coll`), the devices and distributedInfo: every
     * other event is passed over as soon as its cat or name says so (its args not
     * decoded, only checked to be JSON) and no tree is built (no links, roots or GPU
     * lists; ncpu_ops is 0).  For the multi-rank collective report, which reads nothing else
     * (MULTIRANK.md §3.1); not for the sheets.  TL_LOAD_PYTHON and TL_LOAD_ANNOT are
     * ignored with it. */
    TL_LOAD_KERNELS_ONLY = 1 << 3,
    /* The caller counted this load among the process's trace readers already
     * (tl_trace_readers_add), before starting the threads that load: two traces opened
     * one after the other, or the ranks of a set read by a pool, are then all counted
     * before any decides whether to take a second thread of its own (a large trace's
     * split read). */
    TL_LOAD_COUNTED = 1 << 4,
};

/* Count n more (or, negative, fewer) threads of this process reading a trace. */
void tl_trace_readers_add(int n);

/* tl_trace_load / tl_trace_load_mem keeping what `flags` (TL_LOAD_*) asks for too.  The
 * sheets walk through python_function events as TRACES.md's walk goes through
 * `execute`, so a trace loaded with them is the inference generator's tree. */
tl_trace *tl_trace_load_flags(const char *path, unsigned flags, tl_error *err);
/* tl_trace_load_flags that stops, failing ("cancelled"), soon after *cancel is set (both
 * of its reading threads check it between events); cancel may be NULL. */
tl_trace *tl_trace_load_cancel(const char *path, unsigned flags, tl_cancel *cancel, tl_error *err);

/* Whether the run the trace was loaded for is cancelled: 1 with *err (unless NULL) set
 * ("cancelled", naming the trace), else 0.  Cheap enough for a long loop's every 64Ki-th turn. */
int tl_trace_cancelled(const tl_trace *t, tl_error *err);

/* Forget the run's flag: the trace outlives the run (its flag's owner). */
static inline void tl_trace_uncancel(tl_trace *t) { t->cancel = NULL; }

/* For a loop over i: check the flag every 64Ki turns only. */
#define TL_TRACE_CANCEL_EVERY(i, t, err) (((i) & 0xffffu) == 0 && tl_trace_cancelled((t), (err)))
tl_trace *tl_trace_load_mem_flags(const void *data, size_t n, const char *name, unsigned flags, tl_error *err);

void tl_trace_free(tl_trace *t);

/* Free the events and the tree of `t` but keep its interned strings (and process and
 * thread names) until tl_trace_free: for a trace whose strings another trace's events
 * point to once its own events are of no more use (an attributed trace's capture traces,
 * trace/infer.h), so that they do not stay in memory for the sheets. */
void tl_trace_keep_strings(tl_trace *t);

/* What the trace holds, for a message: its events by category, "31,236 cpu_op, 9,876
 * kernel, 4,856 gpu_memcpy, 120 of other categories": the census by count (largest
 * first; at most `max` named, the rest summed up), appended to b; "none" for none. */
void tl_trace_census_text(const tl_trace *t, tl_buf *b, size_t max);

/* The process name (tid 0 entry) or thread name of (pid, tid) from the M events, or
 * "Unknown" (TRACES.md §4.2). */
const char *tl_trace_process_name(const tl_trace *t, int64_t pid);
const char *tl_trace_process_label(const tl_trace *t, int64_t pid);
const char *tl_trace_thread_name(const tl_trace *t, int64_t pid, int64_t tid);

#endif
