/*
 * trace_impl.h - what the trace reader (trace_load.c) hands the tree builder
 * (trace_tree.c): the facts of the JSON that the tree and the links need but the kept
 * events do not carry.  Private to src/trace/.
 */
#ifndef TL_TRACE_IMPL_H
#define TL_TRACE_IMPL_H

#include "trace/kmap.h"
#include "trace/trace.h"

/* tl_trace_side.evflags: per kept event */
enum {
    TL_SIDE_HAS_ARGS = 1 << 0, /* the event has an args object */
    TL_SIDE_CORR_KEY = 1 << 1, /* "correlation" is among its args (any value) */
    TL_SIDE_CORR = 1 << 2,     /* corr[] holds an integer correlation */
    TL_SIDE_EXT = 1 << 3,      /* ext[] holds an integer External id */
};

/*
 * TraceLens' (pid, tid, link id) -> event table is written by every non-flow event with
 * args, kept or not, in array order (the last write wins).  The entries are listed in
 * that order as one word each: nearly all are kept events, whose place and link ids
 * their own records hold, so the word is the event's index; an event not kept is listed
 * in full among the `others` and its word is TL_SIDE_INS_OTHER | its index there.
 */
#define TL_SIDE_INS_OTHER 0x80000000u
typedef struct tl_side_ins {
    int64_t pid, tid, corr, ext;
    uint8_t flags; /* TL_SIDE_CORR / TL_SIDE_EXT: which of corr, ext are set */
} tl_side_ins;

/* The ac2g flows of one id: whether a start was seen, and the place of the last finish
 * (TraceLens keeps one start and one finish per id, the last of each). */
typedef struct tl_side_flow {
    int64_t pid, tid;
    uint8_t has_s, has_f;
    uint8_t numeric; /* 0: the finish has a string pid or tid, which matches no kept event */
    uint32_t place;  /* the tree build's number for (pid, tid) among the usable finishes' */
} tl_side_flow;

/* Both link ids of a kept event that has one (TL_SIDE_CORR / TL_SIDE_EXT in its evflags),
 * read before the linking key was known: the events before a trace's first launch, and
 * every event of a second half's reader.  The others' link id is in their aux records. */
typedef struct tl_side_key {
    uint32_t ev;       /* kept event index */
    int64_t corr, ext; /* as read (valid as its evflags say) */
} tl_side_key;

typedef struct tl_trace_side {
    uint8_t *evflags;    /* per kept event */
    size_t evcap;
    tl_side_key *keys;   /* in event order */
    size_t nkeys, keycap;
    uint32_t *ins;       /* the table's writes, in order: a kept event, or one of others */
    size_t nins, inscap;
    tl_side_ins *others; /* the writes of events not kept */
    size_t nothers, othercap;
    tl_idmap flow_of;    /* (flow id, 1 for an older Kineto's flow) -> index into flows */
    tl_side_flow *flows;
    size_t nflows, flowcap;
    int key_decided;     /* the first launch-named runtime event was seen */
    int key_is_corr;     /* ... and it had "correlation" among its args */
} tl_trace_side;

/* Process and thread names from the M events: (pid, tid, kind) -> vals[]. */
typedef struct tl_trace_names {
    tl_kmap map;
    const char **vals;
    size_t n, cap;
} tl_trace_names;

enum { TL_NAME_PROCESS = 0, TL_NAME_LABELS = 1, TL_NAME_THREAD = 2 };
#define TL_TID_MISSING (INT64_MIN + 1)

/* Sort rows[0..n) stably by key[rows[i]], ascending (no key is NaN; -0.0 and 0.0 are
 * equal): a merge of the ascending runs the rows come in, O(n log runs), with scratch of
 * half the rows at most and a word per run. */
void tl_trace_sort_by_key(uint32_t *rows, size_t n, const double *key);

/* Put the listed link ids keys[0..n) of the events from `off` on into their aux records:
 * the id of the trace's linking key (side's decision; External id when none was made),
 * -1 left for an event without it. */
void tl_side_keys_resolve(tl_trace *t, const tl_trace_side *side, const tl_side_key *keys, size_t n, size_t off);

/* Build the tree, the links, the gpu lists and the flags (TRACES.md §1-§2) of a trace
 * whose events are read.  Returns 0, or -1 with *err set. */
int tl_trace_build(tl_trace *t, tl_trace_side *side, tl_error *err);

/* When the trace reader splits a plain trace in two, read on two threads (trace_load.c):
 * texts of at least `min_bytes`, the second part starting near `at_permille`/1000 of the
 * text.  For the tests and the fuzzer, which split small texts anywhere; the default is
 * 16 MiB and the middle. */
void tl_trace_split_tune(uint64_t min_bytes, unsigned at_permille);

/* 0 when `b` holds every fact of `a` - the counts, each event's fields and extra, the
 * tree's arrays, the names, which events share an interned name - else -1 with one line
 * in `why`: the split read's check, for the tests and the fuzzer. */
int tl_trace_same(const tl_trace *a, const tl_trace *b, char *why, size_t cap);

#endif
