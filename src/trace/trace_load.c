/*
 * trace_load.c - read a PyTorch profiler trace: a streaming JSON scanner made for the
 * Chrome-trace layout, and the event reader on top of it (TRACES.md §1).
 *
 * Why a scanner of our own: the sheets need a few fields of a few event kinds, and most
 * of a trace (python_function frames, the metadata dump, flow and instant events) is to
 * be passed over.  A general parser builds every value before the reader can ignore it;
 * this one classifies an event by its "cat" as soon as it is read and skips the rest of
 * a python_function event by scanning for its closing brace, so the bulk of the text is
 * looked at only by a quote-and-bracket scan.  It still checks that the whole text is
 * JSON (strings may hold any byte but a raw control character, as Python's json allows;
 * NaN and Infinity are accepted as Python's json does).  BENCHMARKS.md has the figures
 * against YAJL, jansson, json-c and cJSON.
 *
 * The text is read through a window (1 MiB, grown only for a single string or number
 * longer than it) over the plain or inflating stream of io/gzip_stream.h, so memory does
 * not grow with the file: only the kept events do.
 */
#include "trace/trace.h"
#include "trace/trace_impl.h"
#include "trace/jscan.h"
#include "trace/opcat.h"

#include "base/hash.h"
#include "base/numfmt.h"
#include "base/thread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- interning ----------------------------------------------------------------------- */

typedef struct intern_slot {
    uint64_t h;
    const char *s;
    uint32_t n;   /* a string is at most J_MAX_WINDOW bytes */
    int32_t comm; /* tl_trace_is_comm(s) once asked, else -1: a name's events share it */
} intern_slot;

typedef struct intern {
    intern_slot *slots;
    size_t cap, n;
    tl_arena *arena;
    /* Each string is stored behind a remap_head, where a merge notes the same string's
     * copy in another table (a second half's strings: see split_merge). */
    int remap;
} intern;

/* What a `remap` table keeps in front of each of its strings. */
typedef struct remap_head {
    const char *other; /* the string's copy in the table merged into, once made */
    size_t n;
} remap_head;

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

/* The slot of string s[0..n), added when new; valid until the next insertion. */
static intern_slot *intern_slot_of(intern *in, const char *s, size_t n)
{
    if ((in->n + 1) * 2 > in->cap) {
        size_t ncap = in->cap ? in->cap * 2 : 1024;
        intern_slot *ns = tl_xcalloc_dense(ncap, sizeof *ns);
        for (size_t i = 0; i < in->cap; i++) {
            if (!in->slots[i].s)
                continue;
            size_t k = in->slots[i].h & (ncap - 1);
            while (ns[k].s)
                k = (k + 1) & (ncap - 1);
            ns[k] = in->slots[i];
        }
        free(in->slots);
        in->slots = ns;
        in->cap = ncap;
    }
    uint64_t h = str_hash(s, n);
    size_t k = h & (in->cap - 1);
    for (;;) {
        intern_slot *sl = &in->slots[k];
        if (!sl->s) {
            sl->h = h;
            if (in->remap) {
                remap_head *hd = tl_arena_alloc(in->arena, sizeof *hd + n + 1);
                char *m = (char *)(hd + 1);
                hd->other = NULL;
                hd->n = n;
                memcpy(m, s, n);
                m[n] = 0;
                sl->s = m;
            } else {
                sl->s = tl_arena_strndup(in->arena, s, n);
            }
            sl->n = (uint32_t)n;
            sl->comm = -1;
            in->n++;
            return sl;
        }
        if (sl->h == h && sl->n == n && memcmp(sl->s, s, n) == 0)
            return sl;
        k = (k + 1) & (in->cap - 1);
    }
}

static const char *intern_get(intern *in, const char *s, size_t n) { return intern_slot_of(in, s, n)->s; }

/* The distinct tl_op_args of a trace, each kept once in the trace's arena: their
 * strings are interned, so a combination is told by its five pointers. */
typedef struct args_table {
    const tl_op_args **slots;
    size_t cap, n;
} args_table;

/* A combination is its five pointers and nothing else, so its bytes are its key. */
_Static_assert(sizeof(tl_op_args) == 5 * sizeof(const char *), "tl_op_args: five pointers, no padding");

static uint64_t args_hash(const tl_op_args *a) { return tl_hash_bytes(a, sizeof *a); }

static int args_equal(const tl_op_args *a, const tl_op_args *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The trace's copy of combination *a (its strings interned in the same table), made in
 * `arena` when new; tl_op_args_none when every field is NULL. */
static const tl_op_args *args_intern(args_table *tab, tl_arena *arena, const tl_op_args *a)
{
    if (args_equal(a, &tl_op_args_none))
        return &tl_op_args_none;
    if ((tab->n + 1) * 2 > tab->cap) {
        size_t ncap = tab->cap ? tab->cap * 2 : 256;
        const tl_op_args **ns = tl_xcalloc(ncap, sizeof *ns);
        for (size_t i = 0; i < tab->cap; i++) {
            if (!tab->slots[i])
                continue;
            size_t k = args_hash(tab->slots[i]) & (ncap - 1);
            while (ns[k])
                k = (k + 1) & (ncap - 1);
            ns[k] = tab->slots[i];
        }
        free(tab->slots);
        tab->slots = ns;
        tab->cap = ncap;
    }
    for (size_t k = args_hash(a) & (tab->cap - 1);; k = (k + 1) & (tab->cap - 1)) {
        if (!tab->slots[k]) {
            tl_op_args *c = tl_arena_alloc(arena, sizeof *c);
            *c = *a;
            tab->slots[k] = c;
            tab->n++;
            return c;
        }
        if (args_equal(tab->slots[k], a))
            return tab->slots[k];
    }
}

/* Whether a name interned in `in` is a communication kernel's, worked out once per name. */
static int slot_comm(intern_slot *sl)
{
    if (sl->comm < 0)
        sl->comm = tl_trace_is_comm(sl->s);
    return sl->comm;
}

/* ---- events ------------------------------------------------------------------------- */

enum {
    CAT_NONE = 0, /* no cat key */
    CAT_CPU_OP,
    CAT_RUNTIME,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_AC2G,
    CAT_OLD_FLOW, /* "async_cpu_to_gpu": older Kineto's ac2g (TRACES.md §8) */
    CAT_PYTHON,
    CAT_ANNOT,
    CAT_OTHER,
};

static int classify_cat(const char *s, size_t n)
{
#define IS(lit) (n == sizeof lit - 1 && memcmp(s, lit, n) == 0)
    if (IS("python_function"))
        return CAT_PYTHON;
    if (IS("cpu_op"))
        return CAT_CPU_OP;
    if (IS("cuda_runtime") || IS("cuda_driver"))
        return CAT_RUNTIME;
    if (IS("kernel"))
        return CAT_KERNEL;
    if (IS("gpu_memcpy"))
        return CAT_MEMCPY;
    if (IS("gpu_memset"))
        return CAT_MEMSET;
    if (IS("ac2g"))
        return CAT_AC2G;
    if (IS("async_cpu_to_gpu"))
        return CAT_OLD_FLOW;
    if (IS("user_annotation"))
        return CAT_ANNOT;
    return CAT_OTHER;
#undef IS
}

const char *const tl_trace_cat_names[TL_CAT_N] = {
    [TL_CAT_CPU_OP] = "cpu_op",         [TL_CAT_CUDA_RUNTIME] = "cuda_runtime", [TL_CAT_CUDA_DRIVER] = "cuda_driver",
    [TL_CAT_KERNEL] = "kernel",         [TL_CAT_GPU_MEMCPY] = "gpu_memcpy",     [TL_CAT_GPU_MEMSET] = "gpu_memset",
    [TL_CAT_AC2G] = "ac2g",             [TL_CAT_OLD_FLOW] = "async_cpu_to_gpu", [TL_CAT_PYTHON] = "python_function",
    [TL_CAT_ANNOT] = "user_annotation", [TL_CAT_OTHER] = "other",
};

/* The census category of a classified cat (CAT_*). */
static const uint8_t census_cat[] = {
    [CAT_NONE] = TL_CAT_OTHER,     [CAT_CPU_OP] = TL_CAT_CPU_OP,     [CAT_RUNTIME] = TL_CAT_CUDA_RUNTIME,
    [CAT_KERNEL] = TL_CAT_KERNEL,  [CAT_MEMCPY] = TL_CAT_GPU_MEMCPY, [CAT_MEMSET] = TL_CAT_GPU_MEMSET,
    [CAT_AC2G] = TL_CAT_AC2G,      [CAT_OLD_FLOW] = TL_CAT_OLD_FLOW, [CAT_PYTHON] = TL_CAT_PYTHON,
    [CAT_ANNOT] = TL_CAT_ANNOT,    [CAT_OTHER] = TL_CAT_OTHER,
};

/* Count `n` events of the other category `cat` (interned): by name while there is room. */
static void census_add_other(tl_trace_census *c, const char *cat, uint64_t n)
{
    c->n[TL_CAT_OTHER] += n;
    for (size_t i = 0; i < c->nnamed; i++) {
        if (c->named[i].cat == cat) {
            c->named[i].n += n;
            return;
        }
    }
    if (c->nnamed < TL_CENSUS_NAMED) {
        c->named[c->nnamed].cat = cat;
        c->named[c->nnamed++].n = n;
    }
}

/* What one event's fields said. */
typedef struct evread {
    int cat;
    int is_driver;       /* cat "cuda_driver" (CAT_RUNTIME covers both) */
    int ph;              /* its one character, '?' for a longer or missing ph */
    int has_ts, has_dur; /* numeric */
    int ts_int, dur_int; /* written as JSON integers (no '.', no exponent: TRACES.md §4.6) */
    double ts, dur;
    int pid_num, tid_num; /* 1 numeric (integral), 0 missing or otherwise */
    int has_tid;
    int64_t pid, tid;
    int has_id;
    int64_t id;
    int has_name;
    tl_buf name;
    const char *name_in; /* the name interned (event_name), or NULL while not yet asked */
    int name_comm;       /* ... and whether it is a communication kernel's */
    int has_args;
    uint8_t sflags;       /* TL_SIDE_CORR_KEY / _CORR / _EXT */
    int64_t corr, ext;
    int has_stream;
    int64_t stream;
    int has_shape[4];
    tl_buf shape[4];      /* Input Dims, Input type, Input Strides, Concrete Inputs */
    int has_mname, has_mlabels;
    tl_buf mname, mlabels;
    int has_seq;          /* an integer "Sequence number" (the perf models' fwd/bwd links) */
    int64_t seq;
    int has_otype;        /* "Output type" (the reduce model's output dtype) */
    tl_buf otype;
    int has_kernel;
    tl_buf kernel;        /* args.kernel (TL_LOAD_KERNEL_ARG) */
    int coll_link;        /* a non-null correlation or External id (a collective kernel's test) */
    tl_cval cv[TL_COLL_NKEYS]; /* a communication kernel's metadata (stream: has_stream) */
    tl_buf cvbuf[TL_COLL_NKEYS]; /* ... the texts of its strings and reprs */
} evread;

struct split;

typedef struct loader {
    J j;
    tl_trace *t;
    tl_cancel *cancel; /* the caller's: stops both halves' reads (NULL: never) */
    tl_trace_side side;
    tl_trace_names *names;
    intern in;
    args_table args;      /* the cpu_ops' distinct shape args (in t's arena, as `in`'s strings) */
    size_t evcap, auxcap, threadcap, collcap, stepcap;
    /* how much of each event array has its pages mapped ahead of the writes (tl_populate_ahead) */
    size_t ev_mapped, aux_mapped, keys_mapped, ins_mapped;
    tl_kmap thread_of;    /* (pid, tid) -> index into t->threads */
    uint32_t last_thread; /* the last event's thread (most follow one of their own) */
    evread r;
    uint32_t uid;
    unsigned flags;       /* TL_LOAD_* */
    struct split *split;  /* the second half being read on a thread, or NULL */
    /* A second half's loader cannot know the linking key the first half decided: it
     * keeps every (pid, tid, link id) entry and both link ids of every event, and notes
     * where its own decision came, for the merge to drop what the serial read would not
     * have kept. */
    int second_half;
    size_t ins_decided_at;
    int ahead_held;       /* a gzip text's helper held back while every core has a reader */
} loader;

static int key_is(const char *s, size_t n, const char *lit)
{
    size_t ln = strlen(lit);
    return n == ln && memcmp(s, lit, n) == 0;
}

/* Ids (pid, tid, flow id, correlation, External id, stream) are held as int64: an integer
 * beyond it is refused, not dropped, since dropping it would silently unlink events. */
static int big_id(J *j, const jnum *num, const char *what)
{
    if (!num->big)
        return 0;
    tl_j_fail(j, j->p, "%s is an integer beyond 64 bits (ids must fit in a 64-bit integer)", what);
    return -1;
}

/* 1 when the window holds a byte at p and it cannot go on a number: what the quick
 * readers need to know that the number they read is the whole of it. */
static int ends_number(const unsigned char *p, const unsigned char *e)
{
    return p < e && !(*p >= '0' && *p <= '9') && *p != '.' && *p != 'e' && *p != 'E' && *p != '-' && *p != '+';
}

/* An integer in its plain form, -?(0|[1-9][0-9]{0,17}), followed in the window by a byte
 * that cannot go on a number (p at its first byte): 1 with *v and p past it; else 0 with
 * nothing consumed, for the scanner's number reader to decide.  Ids (pid, tid, link ids)
 * are such integers: they need no double. */
static int quick_int(J *j, int64_t *v)
{
    const unsigned char *p = j->p, *e = j->end;
    int neg = *p == '-';
    p += neg;
    const unsigned char *d = p;
    uint64_t w = 0;
    while (p < e && *p >= '0' && *p <= '9' && p - d < 18)
        w = w * 10 + (uint64_t)(*p++ - '0');
    if (p == d || !ends_number(p, e) || (p - d > 1 && *d == '0'))
        return 0;
    *v = neg ? -(int64_t)w : (int64_t)w;
    j->p = (unsigned char *)p;
    return 1;
}

/* A time (ts, dur) in its plain form, -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 19 digits,
 * followed in the window by a byte that cannot go on a number (p at its first byte): 1
 * with *d and p past it; else 0 with nothing consumed, for the scanner's number reader.
 * The double is the scanner's: the same digits and power of ten through the same exact
 * conversion (which may decline: then the scanner's way too).  The scanner reads a number
 * twice (its extent, then its grammar); a profiler's times are all of this form. */
static int quick_double(J *j, double *d, int *is_int)
{
    const unsigned char *p = j->p, *e = j->end;
    int neg = *p == '-';
    p += neg;
    const unsigned char *d0 = p;
    uint64_t w = 0;
    while (p < e && *p >= '0' && *p <= '9')
        w = w * 10 + (uint64_t)(*p++ - '0');
    size_t nint = (size_t)(p - d0), nfrac = 0;
    if (nint == 0 || (nint > 1 && *d0 == '0'))
        return 0;
    if (p < e && *p == '.') {
        const unsigned char *f0 = ++p;
        while (p < e && *p >= '0' && *p <= '9')
            w = w * 10 + (uint64_t)(*p++ - '0');
        nfrac = (size_t)(p - f0);
        if (nfrac == 0)
            return 0;
    }
    if (nint + nfrac > 19 || !ends_number(p, e))
        return 0;
    double v;
    if (!tl_decimal_to_double(w, -(int)nfrac, &v))
        return 0;
    *d = neg ? -v : v;
    /* an int64, as the slow path's is_int (19 digits may pass it) */
    *is_int = nfrac == 0 && (w <= (uint64_t)INT64_MAX || (neg && w == (uint64_t)INT64_MAX + 1));
    j->p = (unsigned char *)p;
    return 1;
}

/* A number field that should be an integer id: *v and 1 when it is one. */
static int read_int_value(J *j, int64_t *v, int *ok, const char *what)
{
    int c = j_peek(j);
    *ok = 0;
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (quick_int(j, v)) {
            *ok = 1;
            return 0;
        }
        jnum num;
        if (tl_j_number(j, &num) < 0 || big_id(j, &num, what) < 0)
            return -1;
        if (num.integral) {
            *v = num.i;
            *ok = 1;
        }
        return 0;
    }
    return tl_j_skip(j);
}

const char *const tl_coll_key_names[TL_COLL_NKEYS] = {
    "Process Group Name", "Process Group Ranks", "Collective name", "Group size", "dtype",
    "In msg nelems", "Out msg nelems", "In split size", "Out split size", "stream"};

/* The event's name interned, and (r->name_comm) whether it is a communication kernel's:
 * looked up once per event, whichever asks first (the args' collective test, the
 * kernels-only pass, the kept event). */
static const char *event_name(loader *L)
{
    evread *r = &L->r;
    if (!r->name_in) {
        int named = r->has_name && r->name.len;
        intern_slot *sl = intern_slot_of(&L->in, named ? tl_buf_cstr(&r->name) : "", named ? r->name.len : 0);
        r->name_in = sl->s;
        r->name_comm = slot_comm(sl);
    }
    return r->name_in;
}

static int event_name_comm(loader *L)
{
    event_name(L);
    return L->r.name_comm;
}

/* Whether the event whose args are read may be a collective kernel: a kernel (or an
 * event whose cat comes later) whose name, when already read, is a communication
 * kernel's.  Only those pay for the metadata keys. */
static int may_be_coll(loader *L)
{
    const evread *r = &L->r;
    return (r->cat == CAT_KERNEL || r->cat == CAT_NONE) && (!r->has_name || event_name_comm(L));
}

/* One metadata value as pandas holds what json.load made of it (tl_cval). */
static int read_coll_value(J *j, tl_cval *v, tl_buf *b)
{
    int c = j_peek(j);
    memset(v, 0, sizeof *v);
    tl_buf_clear(b);
    if (c == '"') {
        const char *s;
        size_t sn;
        if (tl_j_string(j, &s, &sn) < 0)
            return -1;
        tl_buf_add(b, s, sn);
        tl_buf_cstr(b);
        v->kind = TL_CV_STR;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        jnum num;
        if (tl_j_number(j, &num) < 0)
            return -1;
        if (num.is_int) {
            v->kind = TL_CV_INT;
            v->i = num.i;
        } else {
            v->kind = TL_CV_FLOAT;
            v->f = num.d;
        }
        return 0;
    }
    if (c == 'n')
        return tl_j_literal(j) < 0 ? -1 : 0; /* null: None, as an absent key */
    j->repr_max = TL_TRACE_MAX_ARG_BYTES;
    j->repr_what = "collective metadata";
    int bad = tl_j_repr(j, b, 0) < 0;
    j->repr_max = 0;
    if (bad)
        return -1;
    tl_buf_cstr(b);
    v->kind = TL_CV_REPR;
    return 0;
}

/* The args keys the reader keeps. */
typedef enum arg_key {
    ARG_OTHER = 0,
    ARG_CORR,       /* "correlation": the launch link */
    ARG_EXT,        /* "External id" */
    ARG_STREAM,     /* "stream" (of a GPU event; a collective's too) */
    ARG_KERNEL,     /* "kernel" of a runtime call (TL_LOAD_KERNEL_ARG) */
    ARG_DIMS,       /* the four shape args, in evread.shape's order */
    ARG_TYPE,
    ARG_STRIDES,
    ARG_CONCRETE,
    ARG_SEQ,        /* "Sequence number" */
    ARG_OTYPE,      /* "Output type" */
    ARG_MNAME,      /* a metadata event's "name" */
    ARG_MLABELS,    /* ... and "labels" */
    ARG_COLL,       /* ARG_COLL + i: the collective metadata key tl_coll_key_names[i] */
} arg_key;

/* Which events a key is read for. */
enum {
    FOR_ALL,        /* every event whose args are read */
    FOR_RUNTIME,    /* a runtime call, when the kernel arg is asked for */
    FOR_CPU_OP,     /* a CPU op (or an event whose cat comes later) */
    FOR_META,       /* an M event (or an event whose cat comes later) */
    FOR_COLL,       /* an event that may be a collective kernel (may_be_coll) */
};

static const struct {
    const char *name;
    unsigned char len, key, when;
} arg_keys[] = {
#define K(s, key, when) {s, sizeof s - 1, key, when}
    K("correlation", ARG_CORR, FOR_ALL),
    K("External id", ARG_EXT, FOR_ALL),
    K("stream", ARG_STREAM, FOR_ALL),
    K("kernel", ARG_KERNEL, FOR_RUNTIME),
    K("Input Dims", ARG_DIMS, FOR_CPU_OP),
    K("Input type", ARG_TYPE, FOR_CPU_OP),
    K("Input Strides", ARG_STRIDES, FOR_CPU_OP),
    K("Concrete Inputs", ARG_CONCRETE, FOR_CPU_OP),
    K("Sequence number", ARG_SEQ, FOR_CPU_OP),
    K("Output type", ARG_OTYPE, FOR_CPU_OP),
    K("name", ARG_MNAME, FOR_META),
    K("labels", ARG_MLABELS, FOR_META),
    K("Process Group Name", ARG_COLL + TL_COLL_PG_NAME, FOR_COLL),
    K("Process Group Ranks", ARG_COLL + TL_COLL_PG_RANKS, FOR_COLL),
    K("Collective name", ARG_COLL + TL_COLL_NAME, FOR_COLL),
    K("Group size", ARG_COLL + TL_COLL_GROUP_SIZE, FOR_COLL),
    K("dtype", ARG_COLL + TL_COLL_DTYPE, FOR_COLL),
    K("In msg nelems", ARG_COLL + TL_COLL_IN_NELEMS, FOR_COLL),
    K("Out msg nelems", ARG_COLL + TL_COLL_OUT_NELEMS, FOR_COLL),
    K("In split size", ARG_COLL + TL_COLL_IN_SPLIT, FOR_COLL),
    K("Out split size", ARG_COLL + TL_COLL_OUT_SPLIT, FOR_COLL),
#undef K
};

/*
 * The table above indexed by a hash of a key's length and end bytes: an event's args
 * keys are mostly ones no sheet reads ("device", "grid", "Ev Idx", ...), and most of
 * those land on an empty slot without a comparison.  Built once, for every reader.
 */
#define ARG_SLOTS 64
static unsigned char arg_slot[ARG_SLOTS]; /* index + 1 into arg_keys, or 0 */
static pthread_once_t arg_slots_once = PTHREAD_ONCE_INIT;

static unsigned arg_hash(const char *k, size_t kn)
{
    return ((unsigned)kn * 31u + (unsigned char)k[0] * 7u + (unsigned char)k[kn - 1]) & (ARG_SLOTS - 1);
}

static void arg_slots_build(void)
{
    for (size_t i = 0; i < sizeof arg_keys / sizeof *arg_keys; i++) {
        unsigned h = arg_hash(arg_keys[i].name, arg_keys[i].len);
        while (arg_slot[h])
            h = (h + 1) & (ARG_SLOTS - 1);
        arg_slot[h] = (unsigned char)(i + 1);
    }
}

/* What key k (kn bytes) is for this event: its arg_key, or ARG_OTHER when the event
 * does not read it.  `coll`: may_be_coll, asked once per event (kernel names are long). */
static int arg_key_of(const loader *L, const char *k, size_t kn, int coll)
{
    const evread *r = &L->r;
    if (kn == 0)
        return ARG_OTHER;
    for (unsigned h = arg_hash(k, kn); arg_slot[h]; h = (h + 1) & (ARG_SLOTS - 1)) {
        size_t i = arg_slot[h] - 1u;
        if (arg_keys[i].len != kn || memcmp(arg_keys[i].name, k, kn) != 0)
            continue;
        switch (arg_keys[i].when) {
        case FOR_RUNTIME: return r->cat == CAT_RUNTIME && (L->flags & TL_LOAD_KERNEL_ARG) ? arg_keys[i].key : ARG_OTHER;
        case FOR_CPU_OP: return r->cat == CAT_CPU_OP || r->cat == CAT_NONE ? arg_keys[i].key : ARG_OTHER;
        case FOR_META: return r->ph == 'M' || r->cat == CAT_NONE ? arg_keys[i].key : ARG_OTHER;
        case FOR_COLL: return coll ? arg_keys[i].key : ARG_OTHER;
        default: return arg_keys[i].key;
        }
    }
    return ARG_OTHER;
}

/* A value read as Python's str() of it into b, held to the one-argument cap while it is
 * read (not after); `what` names it in the message. */
static int read_capped_repr(J *j, tl_buf *b, const char *what)
{
    j->repr_max = TL_TRACE_MAX_ARG_BYTES;
    j->repr_what = what;
    int bad = tl_j_repr(j, b, 0) < 0;
    j->repr_max = 0;
    return bad ? -1 : 0;
}

/* A string's text, or any other value's str() (capped when `what` is given), into b. */
static int read_text_value(J *j, tl_buf *b, const char *what)
{
    tl_buf_clear(b);
    if (j_peek(j) == '"') {
        const char *s;
        size_t sn;
        if (tl_j_string(j, &s, &sn) < 0)
            return -1;
        tl_buf_add(b, s, sn);
        return 0;
    }
    return what ? read_capped_repr(j, b, what) : tl_j_repr(j, b, 0);
}

/* An integer id arg (correlation, External id, stream, Sequence number). */
static int read_id_arg(loader *L, int key)
{
    static const char *const what[] = {[ARG_CORR] = "args \"correlation\"", [ARG_EXT] = "args \"External id\"",
                                       [ARG_STREAM] = "args \"stream\"", [ARG_SEQ] = "args \"Sequence number\""};
    evread *r = &L->r;
    int ok;
    int64_t v = 0;
    if (read_int_value(&L->j, &v, &ok, what[key]) < 0)
        return -1;
    switch (key) {
    case ARG_CORR:
        /* the key's presence decides the linking key, a usable value the link */
        r->sflags = (uint8_t)((r->sflags | TL_SIDE_CORR_KEY) & ~TL_SIDE_CORR) | (ok ? TL_SIDE_CORR : 0);
        if (ok)
            r->corr = v;
        break;
    case ARG_EXT:
        r->sflags = (uint8_t)(r->sflags & ~TL_SIDE_EXT) | (ok ? TL_SIDE_EXT : 0);
        if (ok)
            r->ext = v;
        break;
    case ARG_STREAM:
        r->has_stream = ok;
        r->stream = v;
        break;
    default:
        r->has_seq = ok;
        r->seq = v;
    }
    return 0;
}

/* 1 when a repr is Python's None (a JSON null: TraceLens' args.get finds None, as for a
 * missing arg). */
static int is_none(const tl_buf *b) { return b->len == 4 && memcmp(b->data, "None", 4) == 0; }

/* The value of the args key `key` (p at the value). */
static int read_arg_value(loader *L, int key)
{
    static const char *const shape_key[4] = {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"};
    J *j = &L->j;
    evread *r = &L->r;
    if ((key == ARG_CORR || key == ARG_EXT) && j_peek(j) != 'n')
        r->coll_link = 1;
    if (key >= ARG_COLL)
        return read_coll_value(j, &r->cv[key - ARG_COLL], &r->cvbuf[key - ARG_COLL]);
    switch (key) {
    case ARG_CORR: case ARG_EXT: case ARG_STREAM: case ARG_SEQ:
        return read_id_arg(L, key);
    case ARG_KERNEL:
        if (read_text_value(j, &r->kernel, "kernel") < 0)
            return -1;
        r->has_kernel = 1;
        return 0;
    case ARG_DIMS: case ARG_TYPE: case ARG_STRIDES: case ARG_CONCRETE: {
        tl_buf *b = &r->shape[key - ARG_DIMS];
        tl_buf_clear(b);
        if (read_capped_repr(j, b, shape_key[key - ARG_DIMS]) < 0)
            return -1;
        r->has_shape[key - ARG_DIMS] = !is_none(b);
        return 0;
    }
    case ARG_OTYPE:
        tl_buf_clear(&r->otype);
        if (read_capped_repr(j, &r->otype, "Output type") < 0)
            return -1;
        r->has_otype = !is_none(&r->otype);
        return 0;
    case ARG_MNAME: case ARG_MLABELS: {
        tl_buf *dst = key == ARG_MNAME ? &r->mname : &r->mlabels;
        if (read_text_value(j, dst, NULL) < 0)
            return -1;
        tl_buf_cstr(dst);
        *(key == ARG_MNAME ? &r->has_mname : &r->has_mlabels) = 1;
        return 0;
    }
    default:
        return tl_j_skip(j);
    }
}

static int read_args(loader *L)
{
    J *j = &L->j;
    evread *r = &L->r;
    if (j_peek(j) != '{') {
        /* not an object: TraceLens would fail on it; it carries nothing we read */
        return tl_j_skip(j);
    }
    r->has_args = 1;
    j->p++;
    if (j_peek(j) == '}') {
        j->p++;
        return 0;
    }
    int coll = may_be_coll(L); /* asked once: kernel names are long */
    for (;;) {
        const char *k;
        size_t kn;
        int c = j_peek(j);
        if (c != '"') {
            if (!j->failed)
                tl_j_fail(j, j->p, "expected a key string");
            return -1;
        }
        if (tl_j_string(j, &k, &kn) < 0)
            return -1;
        int key = arg_key_of(L, k, kn, coll); /* before the next scanner call invalidates k */
        if (tl_j_expect_here(j, ':', "':'") < 0 || read_arg_value(L, key) < 0)
            return -1;
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            continue;
        }
        if (c == '}') {
            j->p++;
            return 0;
        }
        if (!j->failed)
            tl_j_fail(j, j->p, c < 0 ? "the text ends inside an object" : "expected ',' or '}'");
        return -1;
    }
}

static void side_grow(loader *L, size_t need)
{
    tl_trace_side *s = &L->side;
    if (need <= s->evcap)
        return;
    size_t ncap = s->evcap ? s->evcap * 2 : 4096;
    while (ncap < need)
        ncap *= 2;
    s->evflags = tl_xrealloc(s->evflags, ncap);
    s->evcap = ncap;
}

static void names_set(tl_trace_names *nm, int64_t pid, int64_t tid, int kind, const char *val)
{
    int created;
    tl_kmap_slot *sl = tl_kmap_put(&nm->map, pid, tid, kind, &created);
    if (created) {
        TL_GROW(nm->vals, nm->cap, nm->n + 1);
        sl->val = (uint32_t)nm->n;
        nm->vals[nm->n++] = val;
    } else {
        nm->vals[sl->val] = val; /* the last entry wins */
    }
}

static const char *buf_str(tl_buf *b) { return b->len ? tl_buf_cstr(b) : ""; }

const tl_op_args tl_op_args_none;
const tl_tev_aux tl_tev_aux_none = {.stream = TL_TEV_NO_STREAM, .corr = -1, .args = &tl_op_args_none, .seq = TL_SEQ_NONE};

/* The next event record's place (and its flags'), with room for it and its pages mapped
 * ahead of the writes. */
static tl_tev *next_event(loader *L)
{
    tl_trace *t = L->t;
    TL_GROW_AHEAD(t->ev, L->evcap, t->nev + 1, L->ev_mapped);
    side_grow(L, t->nev + 1);
    return &t->ev[t->nev];
}

/* The next aux record, the same way, holding tl_tev_aux_none. */
static tl_tev_aux *next_aux(loader *L)
{
    tl_trace *t = L->t;
    TL_GROW_AHEAD(t->aux, L->auxcap, t->naux + 1, L->aux_mapped);
    t->aux[t->naux] = tl_tev_aux_none;
    return &t->aux[t->naux];
}

/* The index of thread (pid, tid) in t->threads, added when new. */
static uint32_t thread_index(loader *L, int64_t pid, int64_t tid)
{
    tl_trace *t = L->t;
    if (L->last_thread < t->nthreads && t->threads[L->last_thread].pid == pid && t->threads[L->last_thread].tid == tid)
        return L->last_thread;
    int created;
    tl_kmap_slot *sl = tl_kmap_put(&L->thread_of, pid, tid, 0, &created);
    if (created) {
        TL_GROW(t->threads, L->threadcap, t->nthreads + 1);
        t->threads[t->nthreads] = (tl_pid_tid){pid, tid};
        sl->val = (uint32_t)t->nthreads++;
    }
    return L->last_thread = sl->val;
}

/* The collective kernel just kept as event `ev`: its metadata. */
static void keep_coll(loader *L, uint32_t ev)
{
    tl_trace *t = L->t;
    evread *r = &L->r;
    TL_GROW(t->coll, L->collcap, t->ncoll + 1);
    tl_coll_meta *m = &t->coll[t->ncoll++];
    m->ev = ev;
    for (int i = 0; i < TL_COLL_STREAM; i++) {
        m->v[i] = r->cv[i];
        if (r->cv[i].kind == TL_CV_STR || r->cv[i].kind == TL_CV_REPR)
            m->v[i].s = intern_get(&L->in, buf_str(&r->cvbuf[i]), r->cvbuf[i].len);
    }
    memset(&m->v[TL_COLL_STREAM], 0, sizeof m->v[TL_COLL_STREAM]);
    if (r->has_stream) {
        m->v[TL_COLL_STREAM].kind = TL_CV_INT;
        m->v[TL_COLL_STREAM].i = r->stream;
    }
}

/* A ProfilerStep#N annotation (N a decimal number, a span with a finite ts and dur): kept
 * as a step of the trace. */
static void keep_step(loader *L)
{
    static const char prefix[] = "ProfilerStep#";
    evread *r = &L->r;
    const char *nm = r->has_name ? buf_str(&r->name) : "";
    if (strncmp(nm, prefix, sizeof prefix - 1) != 0 || !r->has_ts || !r->has_dur || !isfinite(r->ts) ||
        !isfinite(r->dur) || r->dur < 0)
        return;
    const char *d = nm + sizeof prefix - 1;
    char *end;
    errno = 0;
    long long n = strtoll(d, &end, 10);
    if (end == d || *end || errno)
        return;
    tl_trace *t = L->t;
    TL_GROW(t->steps, L->stepcap, t->nsteps + 1);
    t->steps[t->nsteps++] = (tl_trace_step){n, r->ts, r->dur};
}

/* Whether the event being read is passed over as soon as its cat (or name) says so: the
 * rest of it is only checked to be JSON (by the structural skip), and it counts in the
 * census and the event indices but is not kept.  A Python frame, unless frames are
 * asked for (the bulk of a trace: nothing in it is used); under TL_LOAD_KERNELS_ONLY,
 * an event known not to be a collective kernel: its cat read and not "kernel", or a
 * kernel whose name is read and is not a communication kernel's (its cat is always read
 * first: the census counts every event). */
static int passed_over(loader *L)
{
    const evread *r = &L->r;
    if (r->cat == CAT_PYTHON && !(L->flags & TL_LOAD_PYTHON))
        return 1;
    if (!(L->flags & TL_LOAD_KERNELS_ONLY) || r->cat == CAT_NONE)
        return 0;
    return r->cat != CAT_KERNEL || (r->has_name && !event_name_comm(L));
}

/* A flow event's end (ac2g, or an older Kineto's launch flow): kept by (id, kind), the
 * last finish winning. */
static void keep_flow(loader *L)
{
    evread *r = &L->r;
    tl_trace_side *s = &L->side;
    if (!r->has_id || (r->ph != 's' && r->ph != 'f'))
        return;
    int created;
    uint32_t *ix = tl_idmap_put(&s->flow_of, r->id, r->cat == CAT_OLD_FLOW, &created);
    if (created) {
        TL_GROW(s->flows, s->flowcap, s->nflows + 1);
        memset(&s->flows[s->nflows], 0, sizeof s->flows[s->nflows]);
        *ix = (uint32_t)s->nflows++;
    }
    tl_side_flow *f = &s->flows[*ix];
    if (r->ph == 's') {
        f->has_s = 1;
    } else {
        f->has_f = 1;
        f->numeric = r->pid_num && r->tid_num;
        f->pid = r->pid;
        f->tid = r->tid;
    }
}

/* A cpu_op's shape args and output type, as read, in the trace's table. */
static const tl_op_args *read_op_args(loader *L)
{
    evread *r = &L->r;
    tl_op_args a = tl_op_args_none;
    const char **dst[4] = {&a.input_dims, &a.input_type, &a.input_strides, &a.concrete_inputs};
    for (int i = 0; i < 4; i++)
        if (r->has_shape[i])
            *dst[i] = intern_get(&L->in, buf_str(&r->shape[i]), r->shape[i].len);
    if (r->has_otype)
        a.output_type = intern_get(&L->in, buf_str(&r->otype), r->otype.len);
    return args_intern(&L->args, &L->t->arena, &a);
}

/* The link ids of the kept event being read (it has args, so an aux record; its evflags
 * are set).  Once the linking key is known its id is put in the aux record at once, as
 * tl_trace_build puts the listed ones; before that, and in a second half's reader (the
 * first half may decide the key), both are listed, for the build or the merge to choose
 * from.  A trace read by one reader lists only the events before its first launch. */
static void keep_link_ids(loader *L)
{
    const evread *r = &L->r;
    tl_trace_side *s = &L->side;
    tl_side_key k = {(uint32_t)L->t->nev, r->corr, r->ext};
    if (s->key_decided && !L->second_half) {
        tl_side_keys_resolve(L->t, s, &k, 1, 0);
        return;
    }
    TL_GROW_AHEAD(s->keys, s->keycap, s->nkeys + 1, L->keys_mapped);
    s->keys[s->nkeys++] = k;
}

/* The event's fields are read: keep what it contributes. */
static void finish_event(loader *L)
{
    evread *r = &L->r;
    tl_trace *t = L->t;
    tl_trace_side *s = &L->side;
    uint32_t uid = L->uid;

    /* a metadata or flow event, or one without a cat: nothing of it is needed */
    if ((L->flags & TL_LOAD_KERNELS_ONLY) && (r->cat != CAT_KERNEL || passed_over(L)))
        return;
    if (r->ph == 'M' && r->pid_num) {
        int64_t tid = r->has_tid && r->tid_num ? r->tid : TL_TID_MISSING;
        const char *nm = r->has_name ? buf_str(&r->name) : "";
        if (r->has_tid && !r->tid_num)
            return; /* a string tid names nothing the sheets look up */
        if (strcmp(nm, "process_name") == 0 && r->has_mname)
            names_set(L->names, r->pid, tid, TL_NAME_PROCESS, intern_get(&L->in, r->mname.data ? r->mname.data : "", r->mname.len));
        else if (strcmp(nm, "process_labels") == 0 && r->has_mlabels)
            names_set(L->names, r->pid, tid, TL_NAME_LABELS, intern_get(&L->in, r->mlabels.data ? r->mlabels.data : "", r->mlabels.len));
        else if (strcmp(nm, "thread_name") == 0 && r->has_mname)
            names_set(L->names, r->pid, tid, TL_NAME_THREAD, intern_get(&L->in, r->mname.data ? r->mname.data : "", r->mname.len));
        return;
    }
    if (r->cat == CAT_AC2G || r->cat == CAT_OLD_FLOW) {
        keep_flow(L);
        return;
    }
    if (r->cat == CAT_ANNOT)
        keep_step(L);
    int kind = r->cat == CAT_CPU_OP   ? TL_TEV_CPU_OP
               : r->cat == CAT_RUNTIME ? TL_TEV_RUNTIME
               : r->cat == CAT_KERNEL  ? TL_TEV_KERNEL
               : r->cat == CAT_MEMCPY  ? TL_TEV_MEMCPY
               : r->cat == CAT_MEMSET  ? TL_TEV_MEMSET
               : r->cat == CAT_PYTHON && (L->flags & TL_LOAD_PYTHON) ? TL_TEV_PYTHON
               : r->cat == CAT_ANNOT && (L->flags & TL_LOAD_ANNOT)   ? TL_TEV_ANNOT
                                       : 0;
    int kept = kind && r->pid_num && r->tid_num && r->has_ts && r->has_dur;
    if (kept && !(isfinite(r->ts) && isfinite(r->dur))) {
        /* NaN or ±Infinity (Python's json writes them), or a number beyond a double (a
         * 400-digit integer): no interval to place, said after the load */
        if (t->nnonfinite++ == 0)
            t->first_nonfinite = uid;
        kept = 0;
    }
    uint32_t target = TL_TEV_NONE;
    if (kept) {
        if (t->nev >= TL_TEV_REF_AUX - 1) { /* the indexes tl_tev.ref can hold */
            kept = 0;
        } else {
            tl_tev *e = next_event(L);
            e->name = event_name(L);
            uint8_t comm = r->name_comm ? TL_TEV_COMM : 0;
            e->ts = r->ts;
            e->dur = r->dur;
            if (r->dur < 0 && t->nnegative++ == 0)
                t->first_negative = uid;
            e->uid = uid;
            e->kind = (uint8_t)kind;
            e->flags = (uint8_t)((r->ts_int ? TL_TEV_TS_INT : 0) | (r->dur_int ? TL_TEV_DUR_INT : 0) | comm);
            uint32_t thread = thread_index(L, r->pid, r->tid);
            e->ref = thread;
            e->parent = TL_TEV_NONE;
            e->child0 = e->nchild = e->gpu0 = e->ngpu = 0;
            /* a frame's args are not read (unless they come before its cat): it carries
             * nothing of an aux record then */
            if (kind != TL_TEV_PYTHON || r->has_args) {
                tl_tev_aux *x = next_aux(L);
                x->thread = thread;
                x->stream = r->has_stream ? r->stream : TL_TEV_NO_STREAM;
                x->seq = r->has_seq ? r->seq : TL_SEQ_NONE;
                x->has_args = (uint8_t)r->has_args;
                x->is_driver = (uint8_t)r->is_driver;
                if (kind == TL_TEV_CPU_OP)
                    x->args = read_op_args(L);
                if (kind == TL_TEV_RUNTIME && r->has_kernel)
                    x->kernel_arg = intern_get(&L->in, buf_str(&r->kernel), r->kernel.len);
                e->ref = TL_TEV_REF_AUX | (uint32_t)t->naux++;
            }
            if (kind == TL_TEV_CPU_OP)
                t->ncpu_ops++;
            if (kind == TL_TEV_RUNTIME && (strcmp(e->name, "cudaGraphLaunch") == 0 || strcmp(e->name, "hipGraphLaunch") == 0))
                e->flags |= TL_TEV_GRAPH_LAUNCH;
            s->evflags[t->nev] = (uint8_t)(r->sflags | (r->has_args ? TL_SIDE_HAS_ARGS : 0));
            if (r->sflags & (TL_SIDE_CORR | TL_SIDE_EXT))
                keep_link_ids(L);
            if (kind == TL_TEV_KERNEL && r->coll_link && (e->flags & TL_TEV_COMM))
                keep_coll(L, (uint32_t)t->nev);
            target = (uint32_t)t->nev;
            t->nev++;
        }
    }
    /* the linking key: from the first runtime event named like a launch */
    if (r->cat == CAT_RUNTIME && !s->key_decided && r->has_name) {
        const char *nm = buf_str(&r->name);
        size_t n = r->name.len;
        for (size_t i = 0; i + 6 <= n; i++) {
            if (strncasecmp(nm + i, "launch", 6) == 0) {
                s->key_decided = 1;
                L->ins_decided_at = s->nins;
                s->key_is_corr = r->has_args && (r->sflags & TL_SIDE_CORR_KEY);
                break;
            }
        }
    }
    /* once the key is known, an entry without it can never be looked up */
    uint8_t wanted = !s->key_decided || L->second_half ? (TL_SIDE_CORR | TL_SIDE_EXT)
                     : s->key_is_corr                     ? TL_SIDE_CORR
                                                          : TL_SIDE_EXT;
    if (r->has_args && r->pid_num && r->tid_num && (r->sflags & wanted)) {
        if (target == TL_TEV_NONE) {
            TL_GROW(s->others, s->othercap, s->nothers + 1);
            s->others[s->nothers] = (tl_side_ins){r->pid, r->tid, r->corr, r->ext, r->sflags & (TL_SIDE_CORR | TL_SIDE_EXT)};
            target = TL_SIDE_INS_OTHER | (uint32_t)s->nothers++;
        }
        TL_GROW_AHEAD(s->ins, s->inscap, s->nins + 1, L->ins_mapped);
        s->ins[s->nins++] = target;
    }
}

static void evread_reset(evread *r)
{
    r->cat = CAT_NONE;
    r->name_in = NULL;
    r->is_driver = 0;
    r->ph = '?';
    r->has_ts = r->has_dur = 0;
    r->ts_int = r->dur_int = 0;
    r->pid_num = r->tid_num = r->has_tid = 0;
    r->pid = r->tid = 0;
    r->has_id = 0;
    r->has_name = 0;
    r->has_args = 0;
    r->sflags = 0;
    r->corr = r->ext = -1;
    r->has_stream = 0;
    for (int i = 0; i < 4; i++)
        r->has_shape[i] = 0;
    r->has_mname = r->has_mlabels = 0;
    r->has_seq = r->has_otype = 0;
    r->has_kernel = 0;
    r->coll_link = 0;
    memset(r->cv, 0, sizeof r->cv);
}


/* One event (p at its '{'). */
static int read_event(loader *L)
{
    J *j = &L->j;
    evread *r = &L->r;
    evread_reset(r);
    j->p++;
    int c = j_peek(j);
    if (c == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        const char *k;
        size_t kn;
        if (c != '"') {
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside an event" : "expected a key string");
            return -1;
        }
        if (tl_j_string(j, &k, &kn) < 0)
            return -1;
        int which = 0;
        if (kn >= 2 && kn <= 4) {
            if (key_is(k, kn, "ph")) which = 1;
            else if (key_is(k, kn, "cat")) which = 2;
            else if (key_is(k, kn, "name")) which = 3;
            else if (key_is(k, kn, "pid")) which = 4;
            else if (key_is(k, kn, "tid")) which = 5;
            else if (key_is(k, kn, "ts")) which = 6;
            else if (key_is(k, kn, "dur")) which = 7;
            else if (key_is(k, kn, "id")) which = 8;
            else if (key_is(k, kn, "args")) which = 9;
        }
        if (tl_j_expect_here(j, ':', "':'") < 0)
            return -1;
        c = j_peek(j);
        if (which >= 1 && which <= 3 && c == '"') {
            const char *s;
            size_t sn;
            if (tl_j_string(j, &s, &sn) < 0)
                return -1;
            if (which == 1) {
                r->ph = sn == 1 ? (unsigned char)s[0] : '?';
            } else if (which == 2) {
                r->cat = classify_cat(s, sn);
                r->is_driver = sn == 11 && memcmp(s, "cuda_driver", 11) == 0;
                if (r->cat == CAT_OTHER)
                    census_add_other(&L->t->census, intern_get(&L->in, s, sn), 1);
                else
                    L->t->census.n[r->is_driver ? TL_CAT_CUDA_DRIVER : census_cat[r->cat]]++;
            } else {
                tl_buf_clear(&r->name);
                tl_buf_add(&r->name, s, sn);
                tl_buf_cstr(&r->name);
                r->has_name = 1;
                r->name_in = NULL;
            }
            if (which != 1 && passed_over(L))
                return tl_j_skip_object_rest(j); /* nothing more of it is used */
        } else if (which >= 4 && which <= 8 &&
                   (c == '-' || (c >= '0' && c <= '9') || ((which == 6 || which == 7) && (c == 'N' || c == 'I')))) {
            /* a time may be Python's NaN or Infinity: read, so that the event is counted
             * when it is left out */
            jnum num;
            int64_t id;
            if (which != 6 && which != 7 && quick_int(j, &id)) {
                num.integral = 1;
                num.i = id;
            } else if ((which == 6 || which == 7) && quick_double(j, &num.d, &num.is_int)) {
                /* a time: its double, and whether it was written as an integer */
            } else if (tl_j_number(j, &num) < 0) {
                return -1;
            } else if (which != 6 && which != 7 &&
                       big_id(j, &num, which == 4 ? "\"pid\"" : which == 5 ? "\"tid\"" : "\"id\"") < 0) {
                /* a time beyond 64 bits is the double it reads as, as Python's json
                 * makes of it once pandas holds it; only ids must be exact */
                return -1;
            }
            switch (which) {
            case 4:
                r->pid_num = num.integral;
                r->pid = num.i;
                break;
            case 5:
                r->has_tid = 1;
                r->tid_num = num.integral;
                r->tid = num.i;
                break;
            case 6:
                r->has_ts = 1;
                r->ts = num.d;
                r->ts_int = num.is_int;
                break;
            case 7:
                r->has_dur = 1;
                r->dur = num.d;
                r->dur_int = num.is_int;
                break;
            case 8:
                r->has_id = num.integral;
                r->id = num.i;
                break;
            }
        } else if (which == 9) {
            if (r->cat == CAT_AC2G || r->cat == CAT_OLD_FLOW || r->cat == CAT_PYTHON) {
                if (tl_j_skip(j) < 0)
                    return -1;
            } else if (read_args(L) < 0) {
                return -1;
            }
        } else {
            if (which == 5)
                r->has_tid = 1; /* a string tid: present, not numeric */
            if (which == 4)
                r->pid_num = 0;
            if (which == 2)
                r->cat = CAT_OTHER;
            if (tl_j_skip(j) < 0)
                return -1;
        }
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            c = j_peek(j);
            continue;
        }
        if (c == '}') {
            j->p++;
            finish_event(L);
            return 0;
        }
        if (!j->failed)
            tl_j_fail(j, j->p, c < 0 ? "the text ends inside an event" : "expected ',' or '}'");
        return -1;
    }
}

/* ---- the second half of a large plain trace, read on a thread ---------------------- */

/*
 * Why: reading the JSON is most of the work on a large trace, and a plain file can be
 * read from anywhere.  A second loader starts at an event near the middle and reads
 * from there to the end of the events; the first reads up to that event and merges the
 * second's.  Where the second starts is a guess made from the bytes alone (a '{' after a
 * ',' and before a key), since a string's contents cannot be told from the outside; the
 * first loader, which knows, takes the second's events only if an event of traceEvents
 * starts at exactly that byte, and otherwise reads on by itself.  The second reads its
 * events with the same code as the first would, so the merge - which redoes in order
 * what depended on the first half: event indices and UIDs, the linking key, the last
 * write of a flow or a name - gives the trace the first would have read alone.
 */

/*
 * A gzip text cannot be read from the middle, but it inflates several times faster than
 * it is scanned.  So the second reader inflates its own copy from the start and passes
 * over the first part on its thread, while the first reader scans it.  Where it starts
 * is measured, not derived (the second inflates more, the first merges): of 420, 460 and
 * 500 per mille, 460 was the fastest (BENCHMARKS.md).  The first reader's stream cannot
 * skip to the meeting point's far side, so the second keeps the text after traceEvents
 * (at most SPLIT_TAIL bytes, else no split) for the first to read on in; having read to
 * the end, it has checked the gzip trailers as the first would have.
 */

#define SPLIT_SEARCH ((size_t)4 << 20) /* bytes searched for an event start */
#define SPLIT_LOOK ((size_t)64 << 10)  /* ... read at a time */
#define SPLIT_AHEAD 512                 /* what a candidate start needs after it: '{', a key of up to 256 bytes, its ':' */
#define SPLIT_TAIL ((size_t)16 << 20)  /* a gzip text's end kept after traceEvents */
#define SPLIT_STEP ((uint64_t)8 << 20) /* a gzip text's bytes passed over between looks at the flag */
#define SPLIT_UNKNOWN UINT64_MAX        /* `at` while the thread has not found it yet */

static uint64_t split_min = (uint64_t)16 << 20;
/* Threads of this process reading a trace (tlcompare reads its traces side by side): a
 * split that finds every CPU taken would only add the merge. */
static atomic_int readers;
static unsigned split_permille = 440;      /* the first reader also merges: it gets less */
static unsigned split_permille_gzip = 460; /* measured: see above */
static int split_wait; /* the first reader waits for a gzip split's guess (the tests) */

void tl_trace_readers_add(int n) { atomic_fetch_add(&readers, n); }

static long ncores;
static pthread_once_t ncores_once = PTHREAD_ONCE_INIT;
static void ncores_read(void) { ncores = sysconf(_SC_NPROCESSORS_ONLN); }

/* Whether every core has a trace reader of this process already. */
static int cores_taken(void)
{
    pthread_once(&ncores_once, ncores_read);
    return atomic_load(&readers) >= ncores;
}

void tl_trace_split_tune(uint64_t min_bytes, unsigned at_permille)
{
    split_min = min_bytes;
    split_permille = split_permille_gzip = at_permille > 1000 ? 1000 : at_permille;
    split_wait = 1;
}

typedef struct split {
    pthread_t thread;
    loader *L2;       /* the second half's loader: its own trace, names and strings */
    tl_instream *in;  /* its stream, at `at` */
    const char *path;
    uint64_t from;    /* where the search for `at` starts */
    _Atomic uint64_t at; /* where its first event starts (a '{'), or SPLIT_UNKNOWN */
    uint64_t end;     /* where its read ended: after traceEvents' ']' */
    int gzip;         /* its stream inflates from the start: `at` is found on the thread */
    atomic_int guessed; /* the thread has looked for `at` (found or not) */
    tl_buf tail;      /* gzip: the text from `end` to the end */
    int rc;           /* 0: it read every event from `at` through that ']' (and the tail) */
    atomic_int cancel;
    tl_error err;     /* its error: never shown (the first loader reads on instead) */
} split;

static int read_event_list(loader *L, atomic_int *cancel);
static uint64_t split_guess(tl_instream *in, uint64_t from);

/* Where the first reader, past `from`, stops to meet the second: its first event once
 * known, else here (the first reader got there first: no split). */
static uint64_t split_watch(split *sp)
{
    while (split_wait && !atomic_load(&sp->guessed))
        sched_yield();
    uint64_t at = atomic_load_explicit(&sp->at, memory_order_acquire);
    return at != SPLIT_UNKNOWN ? at : sp->from;
}

static int split_stopped(split *sp) { return atomic_load(&sp->cancel) || tl_cancelled(sp->L2->cancel); }

/* A gzip text: inflate up to `from`, a step at a time so that a stop is seen, and find
 * the first event there.  0 when there is none or the read stopped. */
static uint64_t split_find(split *sp)
{
    for (uint64_t pos = 0; pos < sp->from;) {
        pos = sp->from - pos > SPLIT_STEP ? pos + SPLIT_STEP : sp->from;
        if (split_stopped(sp) || tl_instream_seek(sp->in, pos, &sp->err) < 0)
            return 0;
    }
    return split_stopped(sp) ? 0 : split_guess(sp->in, sp->from);
}

/* A gzip text's end, after the events read (p after traceEvents' ']'): what the window
 * holds past p and the rest of the stream.  0, or -1 when it is too long, damaged or the
 * read stopped. */
static int split_keep_tail(split *sp, J *j)
{
    tl_buf_add(&sp->tail, j->p, (size_t)(j->end - j->p));
    unsigned char *b = tl_xmalloc(J_WINDOW);
    long k = 0;
    while (sp->tail.len <= SPLIT_TAIL && !split_stopped(sp) && (k = tl_instream_read(sp->in, b, J_WINDOW, &sp->err)) > 0)
        tl_buf_add(&sp->tail, b, (size_t)k);
    free(b);
    return k == 0 && sp->tail.len <= SPLIT_TAIL ? 0 : -1;
}

static void *split_main(void *arg)
{
    split *sp = arg;
    J *j = &sp->L2->j;
    tl_j_open(j, sp->in, sp->path, &sp->err);
    sp->rc = -1;
    uint64_t at = sp->gzip ? split_find(sp) : atomic_load(&sp->at);
    if (at != 0 && sp->gzip)
        atomic_store_explicit(&sp->at, at, memory_order_release);
    atomic_store(&sp->guessed, 1);
    if (at != 0 && tl_j_seek(j, at) == 0)
        sp->rc = read_event_list(sp->L2, &sp->cancel);
    if (sp->rc == 0) {
        sp->end = j_offset(j, j->p);
        if (sp->gzip)
            sp->rc = split_keep_tail(sp, j);
    }
    tl_j_close(j);
    return NULL;
}

static void loader_free(loader *L)
{
    tl_buf_free(&L->r.name);
    for (int i = 0; i < 4; i++)
        tl_buf_free(&L->r.shape[i]);
    tl_buf_free(&L->r.mname);
    tl_buf_free(&L->r.mlabels);
    tl_buf_free(&L->r.otype);
    tl_buf_free(&L->r.kernel);
    for (int i = 0; i < TL_COLL_NKEYS; i++)
        tl_buf_free(&L->r.cvbuf[i]);
    free(L->in.slots);
    free(L->args.slots);
    free(L->side.keys);
    free(L->side.evflags);
    free(L->side.ins);
    free(L->side.others);
    free(L->side.flows);
    tl_idmap_free(&L->side.flow_of);
    tl_kmap_free(&L->thread_of);
    free(L);
}

static loader *loader_new(const char *path, unsigned flags)
{
    pthread_once(&arg_slots_once, arg_slots_build);
    loader *L = tl_xcalloc(1, sizeof *L);
    L->flags = flags;
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    tl_arena_init(&t->arena);
    t->path = tl_xstrdup(path);
    t->ndevices = -1;
    t->dist_rank = t->dist_world = -1;
    t->read_ahead_from = UINT64_MAX;
    L->t = t;
    L->names = tl_xcalloc(1, sizeof *L->names);
    t->names = L->names;
    L->in.arena = &t->arena;
    return L;
}

/*
 * The kept events' arrays (and their link ids and places) sized once for the text's
 * size, so that they are not copied as they grow: every doubling copies all of an
 * array, and faults its pages in twice (the allocator keeps arrays this size on its
 * heap, where a grown block is seldom left in place).  A guess, about one kept event per
 * BYTES_PER_KEPT bytes (PyTorch traces run 250-400 bytes an event, a third to a half of
 * them kept), capped so that a hint that is wrong reserves no more than the largest
 * trace might use.  Pages never written cost nothing; the events' arrays are cut to
 * their size when the read ends, the rest freed once the tree is built.  A kernels-only
 * load keeps next to nothing: nothing is reserved.
 */
#define BYTES_PER_KEPT 768
#define PRESIZE_MAX ((size_t)1 << 24)

static void presize(loader *L, uint64_t text_bytes)
{
    if (L->flags & TL_LOAD_KERNELS_ONLY)
        return;
    uint64_t guess = text_bytes / BYTES_PER_KEPT;
    size_t n = guess < PRESIZE_MAX ? (size_t)guess : PRESIZE_MAX;
    if (n < 4096)
        return; /* small traces: doubling is cheap */
    TL_GROW(L->t->ev, L->evcap, n);
    TL_GROW(L->t->aux, L->auxcap, n);
    side_grow(L, n);
    /* nearly every kept event has a link id, listed until the linking key is known (a
     * trace whose launches come after its ops: all of them), and its place is noted */
    TL_GROW(L->side.keys, L->side.keycap, n);
    TL_GROW(L->side.ins, L->side.inscap, n);
}

/* A key that events have and the objects nested in their args rarely do. */
static int event_key(const char *k, size_t n)
{
    static const char *const keys[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "args"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (key_is(k, n, keys[i]))
            return 1;
    return 0;
}

/* An event start at b[i] (n bytes known): a '{' after a ',' (prev, the last non-space
 * byte) and before an event's key and its ':'. */
static int event_start_at(const unsigned char *b, size_t n, size_t i, int prev)
{
    if (b[i] != '{' || prev != ',')
        return 0;
    size_t q = i + 1;
    while (q < n && j_ws(b[q]))
        q++;
    if (q >= n || b[q] != '"')
        return 0;
    size_t e = q + 1;
    while (e < n && e - q < 256 && b[e] != '"' && b[e] != '\\' && b[e] >= 0x20)
        e++;
    size_t colon = e + 1;
    while (colon < n && j_ws(b[colon]))
        colon++;
    return e < n && b[e] == '"' && colon < n && b[colon] == ':' && event_key((const char *)b + q + 1, e - q - 1);
}

/* The first event start at or after byte `from` by the bytes alone (event_start_at), or
 * 0 when none is found within SPLIT_SEARCH bytes.  The text is read a little at a time:
 * an event starts within a few hundred bytes, and a gzip stream must put back what it
 * read past the start (it cannot seek back). */
static uint64_t split_guess(tl_instream *in, uint64_t from)
{
    tl_error ignored = {0};
    if (tl_instream_seek(in, from, &ignored) < 0)
        return 0;
    unsigned char *b = NULL;
    size_t n = 0, cap = 0, i = 0;
    int prev = 0, eof = 0;
    uint64_t found = 0;
    while (!found) {
        if (!eof && n < SPLIT_SEARCH && n - i < SPLIT_AHEAD) { /* a candidate at i may need what follows */
            size_t want = SPLIT_SEARCH - n < SPLIT_LOOK ? SPLIT_SEARCH - n : SPLIT_LOOK;
            if (n + want > cap) {
                cap = n + want;
                b = tl_xrealloc(b, cap);
            }
            long k = tl_instream_read(in, b + n, want, &ignored);
            if (k <= 0)
                eof = 1;
            else
                n += (size_t)k;
            continue;
        }
        if (i >= n)
            break;
        if (event_start_at(b, n, i, prev))
            found = from + i;
        else if (!j_ws(b[i]))
            prev = b[i];
        i++;
    }
    if (found && tl_instream_is_gzip(in))
        tl_instream_unread(in, b + (found - from), n - (size_t)(found - from)); /* it cannot seek back */
    free(b);
    return found;
}

/* Free a second half's reader whose thread has ended (or never started). */
static void split_free(split *sp)
{
    tl_trace_free(sp->L2->t);
    loader_free(sp->L2);
    tl_instream_close(sp->in);
    tl_buf_free(&sp->tail);
    free(sp);
}

/* Tell the second half's thread to stop where it is. */
static void split_stop(void *arg) { atomic_store(&((split *)arg)->cancel, 1); }

/* Wait for the second half's thread, telling it to stop first when `stop`. */
static void split_join(split *sp, int stop)
{
    if (stop)
        split_stop(sp);
    tl_thread_join(sp->thread, NULL);
    atomic_fetch_sub(&readers, 1);
}

/* Start reading the second half of the text under L's stream on a thread, when it is
 * large and plain and seekable, or gzip data in memory or a regular file (its size from
 * the trailer).  Nothing happens when it is not, or anything fails. */
static void split_start(loader *L, tl_instream *in, const char *path)
{
    int gzip = tl_instream_is_gzip(in);
    uint64_t size = gzip ? tl_instream_size_hint(in) : tl_instream_seekable_size(in);
    const char *off = getenv("TL_TRACE_SPLIT"); /* "0": one reader (the benchmark's A/B) */
    if (off && strcmp(off, "0") == 0)
        return;
    if (size < split_min || size < 2 || (L->flags & TL_LOAD_PYTHON) || cores_taken())
        return;
    tl_error ignored = {0};
    tl_instream *in2 = tl_instream_reopen(in, &ignored);
    if (!in2)
        return;
    unsigned pm = gzip ? split_permille_gzip : split_permille;
    uint64_t from = size / 1000 * pm + size % 1000 * pm / 1000;
    uint64_t at = gzip ? SPLIT_UNKNOWN : split_guess(in2, from);
    if (at == 0) {
        tl_instream_close(in2);
        return;
    }
    split *sp = tl_xcalloc(1, sizeof *sp);
    sp->in = in2;
    sp->path = path;
    sp->from = from;
    sp->gzip = gzip;
    atomic_init(&sp->at, at);
    atomic_init(&sp->guessed, !gzip);
    atomic_init(&sp->cancel, 0);
    sp->L2 = loader_new(path, L->flags);
    sp->L2->cancel = L->cancel;
    sp->L2->in.remap = 1;
    sp->L2->second_half = 1;
    presize(sp->L2, size - from);
    atomic_fetch_add(&readers, 1);
    if (tl_thread_create_stoppable(&sp->thread, split_main, sp, split_stop, sp) != 0) {
        atomic_fetch_sub(&readers, 1);
        split_free(sp);
        return;
    }
    L->split = sp;
    if (gzip)
        tl_instream_set_ahead(in, 0); /* two threads inflating, each for itself */
}

/* Stop (if it still runs) and free the second half's reader. */
static void split_end(loader *L)
{
    split *sp = L->split;
    if (!sp)
        return;
    split_join(sp, 1);
    split_free(sp);
    L->split = NULL;
}

/* A gzip text is inflated ahead of its reader by a helper thread (io/gzip_stream.c) only
 * while a core is free for it: when every core already has a trace reader (tlcompare's
 * two traces on two cores, a rank set's workers), the helpers would only add their
 * hand-over to the same work (measured: the timesformer pair takes 0.94x the wall time
 * without them).  The reader inflates for itself then, and lets the helper start once a
 * core is free again (ahead_release). */
static void ahead_hold(loader *L, tl_instream *in)
{
    if (!L->split && tl_instream_is_gzip(in) && cores_taken()) {
        tl_instream_set_ahead(in, 0);
        L->ahead_held = 1;
    }
}

/* How many events the reader reads between looks at whether a core is free. */
#define AHEAD_LOOK 4096

static void ahead_release(loader *L)
{
    if (!cores_taken()) {
        tl_instream_set_ahead(L->j.in, 1);
        L->ahead_held = 0;
    }
}

/* A second half's string as the first half's table holds it (made there on first use). */
static const char *merge_str(loader *L, const char *s2)
{
    if (!s2)
        return NULL;
    remap_head *hd = (remap_head *)(uintptr_t)s2 - 1;
    if (!hd->other)
        hd->other = intern_get(&L->in, s2, hd->n);
    return hd->other;
}

/* A second half's shape args as the first half's table holds them. */
static const tl_op_args *merge_args(loader *L, const tl_op_args *a2)
{
    if (a2 == &tl_op_args_none)
        return a2;
    tl_op_args a = {merge_str(L, a2->input_dims), merge_str(L, a2->input_type), merge_str(L, a2->input_strides),
                    merge_str(L, a2->concrete_inputs), merge_str(L, a2->output_type)};
    return args_intern(&L->args, &L->t->arena, &a);
}

/* The second half's flows after the first half's: a start seen on either side, the last
 * finish wins.  A profiler writes its flows after the events (Kineto: at the end), so the
 * first half mostly has none: the second's are then taken as they are, not entered again
 * one by one. */
static void merge_flows(tl_trace_side *s, tl_trace_side *s2)
{
    if (s2->nflows && !s->nflows) {
        tl_idmap m = s->flow_of;
        s->flow_of = s2->flow_of;
        s2->flow_of = m;
        tl_side_flow *f = s->flows;
        s->flows = s2->flows;
        s2->flows = f;
        size_t cap = s->flowcap;
        s->flowcap = s2->flowcap;
        s2->flowcap = cap;
        s->nflows = s2->nflows;
        s2->nflows = 0;
    } else if (s2->nflows) {
        const tl_idmap_slot **key = tl_xmalloc(s2->nflows * sizeof *key); /* (id, kind) of each */
        tl_idmap_reserve(&s->flow_of, s->nflows + s2->nflows);
        TL_GROW(s->flows, s->flowcap, s->nflows + s2->nflows);
        for (size_t k = 0; k < s2->flow_of.cap; k++)
            if (s2->flow_of.slots[k].tag)
                key[s2->flow_of.slots[k].val] = &s2->flow_of.slots[k];
        for (size_t k = 0; k < s2->nflows; k++) {
            int created;
            uint32_t *ix = tl_idmap_put(&s->flow_of, key[k]->a, tl_idmap_tag(key[k]), &created);
            const tl_side_flow *g = &s2->flows[k];
            if (created) {
                s->flows[s->nflows] = *g;
                *ix = (uint32_t)s->nflows++;
                continue;
            }
            tl_side_flow *f = &s->flows[*ix];
            f->has_s |= g->has_s;
            if (g->has_f) {
                f->has_f = 1;
                f->numeric = g->numeric;
                f->pid = g->pid;
                f->tid = g->tid;
            }
        }
        free(key);
    }
}

/* The second half's link ids, its events now from `off` on.  The linking key is known
 * once either half has seen a launch (the first half's decision comes first): then both
 * halves' listed ids go into the aux records, as the build would put them, and nothing
 * is copied; else the second's are listed after the first's for the build. */
static void merge_link_ids(loader *L, loader *L2, size_t off)
{
    tl_trace_side *s = &L->side, *s2 = &L2->side;
    if (s->key_decided) {
        tl_side_keys_resolve(L->t, s, s->keys, s->nkeys, 0);
        tl_side_keys_resolve(L->t, s, s2->keys, s2->nkeys, off);
        s->nkeys = 0;
        return;
    }
    TL_GROW(s->keys, s->keycap, s->nkeys + s2->nkeys);
    for (size_t k = 0; k < s2->nkeys; k++) {
        s->keys[s->nkeys] = s2->keys[k];
        s->keys[s->nkeys++].ev += (uint32_t)off;
    }
}

/* The second half's events, links, flows and names after the first half's, as the first
 * loader would have read them itself. */
static void split_merge(loader *L, loader *L2)
{
    tl_trace *t = L->t, *t2 = L2->t;
    tl_trace_side *s = &L->side, *s2 = &L2->side;
    size_t off = t->nev, need = t->nev + t2->nev;
    uint32_t uoff = L->uid;

    /* the second half's records are copied in whole: their pages mapped in one call */
    if (t2->nev) {
        TL_GROW(t->ev, L->evcap, need);
        tl_populate(t->ev + off, t2->nev * sizeof *t->ev);
        side_grow(L, need);
    }
    if (t2->naux) {
        TL_GROW(t->aux, L->auxcap, t->naux + t2->naux);
        tl_populate(t->aux + t->naux, t2->naux * sizeof *t->aux);
    }
    for (size_t i = 0; i < t2->nev; i++) {
        tl_tev e = t2->ev[i];
        e.name = merge_str(L, e.name);
        e.uid += uoff;
        /* the thread as the first half numbers them (in order of first appearance, as a
         * single reader would), the aux record after the first half's */
        const tl_pid_tid *th2 = &t2->threads[tl_tev_thread(t2, &t2->ev[i])];
        uint32_t th = thread_index(L, th2->pid, th2->tid);
        if (tl_tev_has_aux(&e)) {
            tl_tev_aux x = *tl_tev_x(t2, &t2->ev[i]);
            x.args = merge_args(L, x.args);
            x.kernel_arg = merge_str(L, x.kernel_arg);
            x.thread = th;
            t->aux[t->naux] = x;
            e.ref = TL_TEV_REF_AUX | (uint32_t)t->naux++;
        } else {
            e.ref = th;
        }
        t->ev[off + i] = e;
        s->evflags[off + i] = s2->evflags[i];
    }
    t->nev = need;
    if (t2->ncoll)
        TL_GROW(t->coll, L->collcap, t->ncoll + t2->ncoll);
    for (size_t i = 0; i < t2->ncoll; i++) {
        tl_coll_meta m = t2->coll[i];
        m.ev += (uint32_t)off;
        for (int k = 0; k < TL_COLL_NKEYS; k++)
            if (m.v[k].kind == TL_CV_STR || m.v[k].kind == TL_CV_REPR)
                m.v[k].s = merge_str(L, m.v[k].s);
        t->coll[t->ncoll++] = m;
    }
    t->ncpu_ops += t2->ncpu_ops;
    if (t2->nnonfinite) {
        if (!t->nnonfinite)
            t->first_nonfinite = t2->first_nonfinite + uoff;
        t->nnonfinite += t2->nnonfinite;
    }
    if (t2->nsteps) {
        TL_GROW(t->steps, L->stepcap, t->nsteps + t2->nsteps);
        memcpy(t->steps + t->nsteps, t2->steps, t2->nsteps * sizeof *t->steps);
        t->nsteps += t2->nsteps;
    }
    if (t2->nnegative) {
        if (!t->nnegative)
            t->first_negative = t2->first_negative + uoff;
        t->nnegative += t2->nnegative;
    }
    /* the (pid, tid, link id) entries the serial read would have kept: those of the
     * linking key once it is decided, by the first half or by the second */
    const uint8_t both = TL_SIDE_CORR | TL_SIDE_EXT;
    if (s2->nins) {
        TL_GROW(s->ins, s->inscap, s->nins + s2->nins);
        tl_populate(s->ins + s->nins, s2->nins * sizeof *s->ins);
    }
    for (size_t k = 0; k < s2->nins; k++) {
        uint32_t in = s2->ins[k];
        uint8_t wanted = s->key_decided                           ? (s->key_is_corr ? TL_SIDE_CORR : TL_SIDE_EXT)
                         : s2->key_decided && k >= L2->ins_decided_at ? (s2->key_is_corr ? TL_SIDE_CORR : TL_SIDE_EXT)
                                                                      : both;
        uint8_t flags = in & TL_SIDE_INS_OTHER ? s2->others[in & ~TL_SIDE_INS_OTHER].flags : s2->evflags[in];
        if (!(flags & wanted))
            continue;
        if (in & TL_SIDE_INS_OTHER) {
            TL_GROW(s->others, s->othercap, s->nothers + 1);
            s->others[s->nothers] = s2->others[in & ~TL_SIDE_INS_OTHER];
            in = TL_SIDE_INS_OTHER | (uint32_t)s->nothers++;
        } else {
            in += (uint32_t)off;
        }
        s->ins[s->nins++] = in;
    }
    if (!s->key_decided && s2->key_decided) {
        s->key_decided = 1;
        s->key_is_corr = s2->key_is_corr;
    }
    merge_link_ids(L, L2, off);
    merge_flows(s, s2);
    /* the census: counts added, the second half's other categories by the first's names */
    const tl_trace_census *c2 = &t2->census;
    for (int k = 0; k < TL_CAT_N; k++)
        if (k != TL_CAT_OTHER)
            t->census.n[k] += c2->n[k];
    uint64_t unnamed = c2->n[TL_CAT_OTHER];
    for (size_t k = 0; k < c2->nnamed; k++) {
        census_add_other(&t->census, merge_str(L, c2->named[k].cat), c2->named[k].n);
        unnamed -= c2->named[k].n;
    }
    t->census.n[TL_CAT_OTHER] += unnamed;
    /* process and thread names: the second half's last word on each */
    tl_trace_names *n2 = L2->names;
    if (n2->n) {
        const tl_kmap_slot **key = tl_xmalloc(n2->n * sizeof *key);
        for (size_t k = 0; k < n2->map.cap; k++)
            if (n2->map.slots[k].used)
                key[n2->map.slots[k].val] = &n2->map.slots[k];
        for (size_t k = 0; k < n2->n; k++)
            names_set(L->names, key[k]->a, key[k]->b, (int)key[k]->c, merge_str(L, n2->vals[k]));
        free(key);
    }
    L->uid += L2->uid;
}

/* The first loader is at byte `at` of the second half's start, or past it.  1 when the
 * second half is merged and the text is read on after traceEvents' ']'; 0 when the
 * split did not hold (read on from here); -1 on an error. */
static int split_meet(loader *L)
{
    split *sp = L->split;
    J *j = &L->j;
    uint64_t at = atomic_load(&sp->at);
    int here = j_offset(j, j->p) == at;
    split_join(sp, !here);
    loader *L2 = sp->L2;
    int ok = here && sp->rc == 0 && (uint64_t)L->t->nev + L2->t->nev < TL_TEV_REF_AUX - 1 &&
             (uint64_t)L->uid + L2->uid < UINT32_MAX && (uint64_t)L->side.nothers + L2->side.nothers < TL_SIDE_INS_OTHER - 1;
    if (ok) {
        split_merge(L, L2);
        L->t->read_split = at;
    }
    int rc = ok;
    if (!ok)
        tl_instream_set_ahead(j->in, 1); /* the first reader reads on alone */
    else if (sp->gzip)
        tl_j_go_on_in(j, sp->tail.data, sp->tail.len, sp->end); /* gzip data cannot be skipped */
    else if (tl_j_seek(j, sp->end) < 0)
        rc = -1;
    split_free(sp);
    L->split = NULL;
    return rc;
}

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static int same_args(const tl_op_args *a, const tl_op_args *b)
{
    return same_str(a->input_dims, b->input_dims) && same_str(a->input_type, b->input_type) &&
           same_str(a->input_strides, b->input_strides) && same_str(a->concrete_inputs, b->concrete_inputs) &&
           same_str(a->output_type, b->output_type);
}

int tl_trace_same(const tl_trace *a, const tl_trace *b, char *why, size_t cap)
{
    if (a->nev != b->nev || a->nuid != b->nuid || a->nuids != b->nuids || a->ncpu_ops != b->ncpu_ops ||
        a->nnegative != b->nnegative || (a->nnegative && a->first_negative != b->first_negative) ||
        a->nnonfinite != b->nnonfinite || (a->nnonfinite && a->first_nonfinite != b->first_nonfinite) ||
        a->nidx != b->nidx || a->nroots != b->nroots) {
        snprintf(why, cap, "counts differ: events %zu/%zu, uids %u/%u, negative %zu/%zu (first %u/%u), roots %zu/%zu",
                 a->nev, b->nev, a->nuid, b->nuid, a->nnegative, b->nnegative, a->first_negative, b->first_negative,
                 a->nroots, b->nroots);
        return -1;
    }
    if (a->link_flows != b->link_flows || memcmp(a->census.n, b->census.n, sizeof a->census.n) != 0 ||
        a->census.nnamed != b->census.nnamed) {
        snprintf(why, cap, "the census or the launch flows differ");
        return -1;
    }
    for (size_t k = 0; k < a->census.nnamed; k++) {
        if (strcmp(a->census.named[k].cat, b->census.named[k].cat) != 0 || a->census.named[k].n != b->census.named[k].n) {
            snprintf(why, cap, "the census's category '%s' differs", a->census.named[k].cat);
            return -1;
        }
    }
    if ((a->nidx && memcmp(a->idx, b->idx, a->nidx * sizeof *a->idx) != 0) ||
        (a->nroots && memcmp(a->roots, b->roots, a->nroots * sizeof *a->roots) != 0)) {
        snprintf(why, cap, "the tree's index arrays differ");
        return -1;
    }
    if (a->ncoll != b->ncoll || a->ndevices != b->ndevices) {
        snprintf(why, cap, "collective kernels %zu/%zu, devices %ld/%ld", a->ncoll, b->ncoll, a->ndevices, b->ndevices);
        return -1;
    }
    for (size_t i = 0; i < a->ncoll; i++) {
        const tl_coll_meta *x = &a->coll[i], *y = &b->coll[i];
        int same = x->ev == y->ev;
        for (int k = 0; k < TL_COLL_NKEYS && same; k++)
            same = x->v[k].kind == y->v[k].kind &&
                   (x->v[k].kind == TL_CV_INT     ? x->v[k].i == y->v[k].i
                    : x->v[k].kind == TL_CV_FLOAT ? memcmp(&x->v[k].f, &y->v[k].f, sizeof x->v[k].f) == 0
                    : x->v[k].kind == TL_CV_NONE  ? 1
                                                  : same_str(x->v[k].s, y->v[k].s));
        if (!same) {
            snprintf(why, cap, "collective kernel %zu (event %u) differs", i, x->ev);
            return -1;
        }
    }
    for (size_t i = 0; i < a->nev; i++) {
        const tl_tev *x = &a->ev[i], *y = &b->ev[i];
        const tl_tev_aux *p = tl_tev_x(a, x), *q = tl_tev_x(b, y);
        int64_t xpid = tl_tev_pid(a, x), xtid = tl_tev_tid(a, x), ypid = tl_tev_pid(b, y), ytid = tl_tev_tid(b, y);
        /* the same record layout too: the same aux and thread indexes */
        int same = same_str(x->name, y->name) && x->ref == y->ref && p->thread == q->thread &&
                   same_args(p->args, q->args) && same_str(p->kernel_arg, q->kernel_arg) && memcmp(&x->ts, &y->ts, sizeof x->ts) == 0 &&
                   memcmp(&x->dur, &y->dur, sizeof x->dur) == 0 && x->uid == y->uid && x->kind == y->kind &&
                   x->flags == y->flags && xpid == ypid && xtid == ytid && p->stream == q->stream &&
                   p->corr == q->corr && x->parent == y->parent && x->child0 == y->child0 &&
                   x->nchild == y->nchild && x->gpu0 == y->gpu0 && x->ngpu == y->ngpu && p->seq == q->seq &&
                   p->has_args == q->has_args && p->is_driver == q->is_driver;
        /* interned: equal strings, and equal shape args, are one pointer on both sides */
        if (i > 0)
            same = same && (x->name == a->ev[i - 1].name) == (y->name == b->ev[i - 1].name) &&
                   (p->args == tl_tev_x(a, x - 1)->args) == (q->args == tl_tev_x(b, y - 1)->args);
        same = same && same_str(tl_trace_process_name(a, xpid), tl_trace_process_name(b, ypid)) &&
               same_str(tl_trace_process_label(a, xpid), tl_trace_process_label(b, ypid)) &&
               same_str(tl_trace_thread_name(a, xpid, xtid), tl_trace_thread_name(b, ypid, ytid));
        if (!same) {
            snprintf(why, cap, "event %zu differs: uid %u '%.60s' against uid %u '%.60s'", i, y->uid, y->name, x->uid,
                     x->name);
            return -1;
        }
    }
    return 0;
}

/* The events of traceEvents from the one at p through the array's closing ']' (p after
 * it).  A second half's reader stops early, failing, once *cancel is set. */
static int read_event_list(loader *L, atomic_int *cancel)
{
    J *j = &L->j;
    int c = j_peek(j);
    for (;;) {
        j->event = (long)L->uid;
        if (c != '{') {
            if (c < 0) {
                if (!j->failed)
                    tl_j_fail(j, j->p, "the text ends inside traceEvents");
            } else if (!j->failed) {
                tl_j_fail(j, j->p, "an event that is not an object");
            }
            return -1;
        }
        if (L->split && j_offset(j, j->p) >= L->split->from && j_offset(j, j->p) >= split_watch(L->split)) {
            int met = split_meet(L);
            if (met < 0)
                return -1;
            if (met > 0) {
                j->event = -1;
                return 0;
            }
        }
        if (read_event(L) < 0)
            return -1;
        if (L->uid == UINT32_MAX) {
            tl_j_fail(j, j->p, "more than %u events", UINT32_MAX);
            return -1;
        }
        if (L->side.nothers == TL_SIDE_INS_OTHER - 1) {
            tl_j_fail(j, j->p, "more than %u events with link ids that are not kept", TL_SIDE_INS_OTHER - 1);
            return -1;
        }
        L->uid++;
        if (L->ahead_held && L->uid % AHEAD_LOOK == 0)
            ahead_release(L);
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return -1;
        if (tl_cancelled(L->cancel)) {
            if (!j->failed)
                tl_j_fail(j, j->p, "cancelled");
            return -1;
        }
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            c = j_peek(j);
            continue;
        }
        if (c == ']') {
            j->p++;
            j->event = -1;
            return 0;
        }
        if (!j->failed)
            tl_j_fail(j, j->p, c < 0 ? "the text ends inside traceEvents" : "expected ',' or ']' after an event");
        return -1;
    }
}

static int read_events(loader *L)
{
    J *j = &L->j;
    if (j_peek(j) != '[') {
        if (!j->failed)
            tl_error_set(j->err, "%s: not a valid trace: traceEvents is not an array (byte %llu of the JSON text)",
                         j->path, (unsigned long long)j_offset(j, j->p));
        j->failed = 1;
        return -1;
    }
    j->p++;
    if (j_peek(j) == ']') {
        j->p++;
        return 0;
    }
    return read_event_list(L, NULL);
}

/* An object whose few wanted keys are read and the rest skipped: what a key is (0: a
 * key whose value is skipped), and how a wanted key's value is read (p at the value). */
typedef struct object_walk {
    const char *where; /* what messages call the object */
    int (*key)(const char *k, size_t kn);
    int (*value)(loader *L, int key);
} object_walk;

/* Walk the object at p (its '{') through its '}'. */
static int walk_object(loader *L, const object_walk *w)
{
    J *j = &L->j;
    j->p++;
    int c = j_peek(j);
    if (c == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        const char *k;
        size_t kn;
        if (c != '"') {
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside %s" : "expected a key string", w->where);
            return -1;
        }
        if (tl_j_string(j, &k, &kn) < 0)
            return -1;
        int key = w->key(k, kn); /* before the next scanner call invalidates k */
        if (tl_j_expect_here(j, ':', "':'") < 0)
            return -1;
        if ((key ? w->value(L, key) : tl_j_skip(j)) < 0)
            return -1;
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            c = j_peek(j);
            continue;
        }
        if (c == '}') {
            j->p++;
            return 0;
        }
        if (!j->failed)
            tl_j_fail(j, j->p, c < 0 ? "the text ends inside %s" : "expected ',' or '}'", w->where);
        return -1;
    }
}

/* The first device's "name" in deviceProperties: any other key is skipped (the GPU name
 * only labels a comparison). */
static int device_key(const char *k, size_t kn) { return key_is(k, kn, "name"); }

static int device_value(loader *L, int key)
{
    J *j = &L->j;
    (void)key;
    if (j_peek(j) != '"')
        return tl_j_skip(j);
    const char *v;
    size_t vn;
    if (tl_j_string(j, &v, &vn) < 0)
        return -1;
    L->t->gpu_name = intern_get(&L->in, v, vn);
    return 0;
}

static const object_walk first_device = {"deviceProperties", device_key, device_value};

/* The top-level deviceProperties (p at its value): how many entries, when it is a
 * non-empty array (the GPUs of a node: MULTIRANK.md §1.5), and the first one's name; the
 * last such key wins. */
static int read_devices(loader *L)
{
    J *j = &L->j;
    L->t->ndevices = -1;
    L->t->gpu_name = NULL;
    if (j_peek(j) != '[')
        return tl_j_skip(j);
    j->p++;
    long n = 0;
    int c = j_peek(j);
    while (c != ']') {
        if (n == 0 && c == '{' ? walk_object(L, &first_device) < 0 : tl_j_skip(j) < 0)
            return -1;
        n++;
        c = j_peek(j);
        if (c == ',') {
            j->p++;
            c = j_peek(j);
            if (c == ']') {
                if (!j->failed)
                    tl_j_fail(j, j->p, "deviceProperties: expected a value");
                return -1;
            }
        } else if (c != ']') {
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside deviceProperties" : "deviceProperties: expected ',' or ']'");
            return -1;
        }
    }
    j->p++;
    if (n)
        L->t->ndevices = n;
    return 0;
}

/* The top-level distributedInfo (p at its value): its integer rank and world_size, which
 * say which job and rank wrote the trace (a many-rank run compares them with the rank
 * set's, MULTIRANK.md §1.4); anything else in it is skipped. */
enum { DIST_RANK = 1, DIST_WORLD };

static int dist_key(const char *k, size_t kn) { return key_is(k, kn, "rank") ? DIST_RANK : key_is(k, kn, "world_size") ? DIST_WORLD : 0; }

static int dist_value(loader *L, int key)
{
    J *j = &L->j;
    int v = j_peek(j);
    if (v != '-' && !(v >= '0' && v <= '9'))
        return tl_j_skip(j);
    jnum num;
    if (tl_j_number(j, &num) < 0)
        return -1;
    *(key == DIST_RANK ? &L->t->dist_rank : &L->t->dist_world) = num.is_int && num.i >= 0 && num.i <= 1L << 40 ? (long)num.i : -1;
    return 0;
}

static int read_dist(loader *L)
{
    static const object_walk dist = {"distributedInfo", dist_key, dist_value};
    L->t->dist_rank = L->t->dist_world = -1;
    if (j_peek(&L->j) != '{')
        return tl_j_skip(&L->j);
    return walk_object(L, &dist);
}

static int read_top(loader *L)
{
    J *j = &L->j;
    int seen = 0;
    int c = j_peek(j);
    if (c != '{') {
        /* the wrong starts a user meets, named (the window holds the first bytes) */
        const unsigned char *b = j->p;
        size_t avail = (size_t)(j->end - j->p);
        const char *why = "the JSON text does not start with an object";
        if (c < 0 && j_offset(j, j->p) == 0)
            why = "the file is empty";
        else if (c < 0)
            why = "the file holds only white space";
        else if (avail >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
            why = "the text starts with a UTF-8 byte-order mark, which JSON does not allow (remove the first 3 bytes)";
        else if (avail >= 2 && b[0] == 0x78 && (b[1] == 0x01 || b[1] == 0x5e || b[1] == 0x9c || b[1] == 0xda))
            why = "the file is a zlib stream, not gzip (compress it with gzip)";
        else if (avail >= 4 && memcmp(b, "PK\x03\x04", 4) == 0)
            why = "the file is a zip archive (a workbook?), not JSON";
        if (!j->failed)
            tl_error_set(j->err, "%s: not a trace: %s", j->path, why);
        j->failed = 1;
        return -1;
    }
    j->p++;
    c = j_peek(j);
    if (c != '}') {
        for (;;) {
            const char *k;
            size_t kn;
            if (c != '"') {
                if (!j->failed)
                    tl_j_fail(j, j->p, c < 0 ? "the text ends inside the top-level object" : "expected a key string");
                return -1;
            }
            if (tl_j_string(j, &k, &kn) < 0)
                return -1;
            int is_events = key_is(k, kn, "traceEvents"), is_devices = key_is(k, kn, "deviceProperties");
            int is_dist = key_is(k, kn, "distributedInfo");
            if (tl_j_expect_here(j, ':', "':'") < 0)
                return -1;
            if (is_devices) {
                if (read_devices(L) < 0)
                    return -1;
                goto next_key;
            }
            if (is_dist) {
                if (read_dist(L) < 0)
                    return -1;
                goto next_key;
            }
            if (is_events) {
                if (seen) {
                    /* Python's json keeps the last of duplicate keys */
                    L->t->nev = 0;
                    L->t->naux = 0;
                    L->t->ncpu_ops = 0;
                    L->t->ncoll = 0;
                    L->t->nnegative = 0;
                    L->t->nnonfinite = 0;
                    L->t->nsteps = 0;
                    memset(&L->t->census, 0, sizeof L->t->census);
                    L->side.nins = 0;
                    L->side.nothers = 0;
                    L->side.nkeys = 0;
                    L->side.nflows = 0;
                    tl_idmap_free(&L->side.flow_of);
                    L->side.key_decided = L->side.key_is_corr = 0;
                    tl_kmap_free(&L->names->map);
                    L->names->n = 0;
                    L->uid = 0;
                }
                seen = 1;
                if (read_events(L) < 0)
                    return -1;
            } else if (tl_j_skip(j) < 0) {
                return -1;
            }
        next_key:
            c = j_peek(j);
            if (c == ',') {
                j->p++;
                c = j_peek(j);
                continue;
            }
            if (c == '}')
                break;
            if (!j->failed)
                tl_j_fail(j, j->p, c < 0 ? "the text ends inside the top-level object" : "expected ',' or '}'");
            return -1;
        }
    }
    j->p++;
    c = j_peek(j);
    if (j->failed)
        return -1;
    if (c >= 0) {
        tl_j_fail(j, j->p, "text after the top-level object");
        return -1;
    }
    if (!seen) {
        tl_error_set(j->err, "%s: not a trace: no traceEvents array", j->path);
        return -1;
    }
    return 0;
}

static int step_cmp(const void *a, const void *b)
{
    const tl_trace_step *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : (x->number > y->number) - (x->number < y->number);
}

/* The steps in ts order (the second half's came after the first's, each in file order). */
static void sort_steps(tl_trace *t)
{
    if (t->nsteps > 1)
        qsort(t->steps, t->nsteps, sizeof *t->steps, step_cmp);
}

/* Read the trace from `in` (closed here, before the tree is built) and build its tree. */
static tl_trace *load(tl_instream *in, const char *path, unsigned flags, tl_cancel *cancel, tl_error *err)
{
    loader *L = loader_new(path, flags);
    L->cancel = cancel;
    tl_trace *t = L->t;
    J *j = &L->j;
    tl_j_open(j, in, path, err);
    presize(L, tl_instream_size_hint(in));
    int counted = flags & TL_LOAD_COUNTED;
    if (!counted)
        atomic_fetch_add(&readers, 1);
    split_start(L, in, path);
    ahead_hold(L, in);

    int rc = read_top(L);
    split_end(L); /* a split that was never met (or the read failed first) */
    if (!counted)
        atomic_fetch_sub(&readers, 1);
    t->nuid = L->uid;
    t->load_flags = flags & ~(unsigned)TL_LOAD_COUNTED;
    if (rc == 0 && t->ncoll)
        t->coll = tl_xrealloc(t->coll, t->ncoll * sizeof *t->coll);
    if (rc == 0 && t->nev) {
        t->ev = tl_xrealloc(t->ev, t->nev * sizeof *t->ev);
        if (t->naux)
            t->aux = tl_xrealloc(t->aux, t->naux * sizeof *t->aux);
    }
    t->nuids = L->uid;
    sort_steps(t);
    /* the text is read: its buffers (the window, the stream's) go before the tree's
     * scratch is made */
    tl_j_close(j);
    t->read_ahead_from = tl_instream_ahead_from(in);
    tl_instream_close(in);
    tl_kmap_free(&L->thread_of);
    t->cancel = cancel;
    if (rc == 0 && tl_trace_cancelled(t, err))
        rc = -1;
    if (rc == 0 && !(flags & TL_LOAD_KERNELS_ONLY))
        rc = tl_trace_build(t, &L->side, err);

    loader_free(L);
    if (rc < 0) {
        tl_trace_free(t);
        return NULL;
    }
    /* A negative duration makes no sense, but the reference takes the numbers as they
     * are, and so do the sheets: say so, so that a busy time below zero is explained. */
    if (t->nnegative)
        tl_warn("%s: %zu event%s with a negative duration (the first is event %u); used as %s",
                path, t->nnegative, t->nnegative == 1 ? "" : "s", t->first_negative,
                t->nnegative == 1 ? "it is" : "they are");
    /* JSON has no NaN or Infinity, but Python's json module writes them, and a number
     * beyond a double reads as one: such a time places nothing, and the event is left
     * out, with a word */
    if (t->nnonfinite)
        tl_warn("%s: %zu event%s with a ts or dur of NaN, Infinity or beyond a double (the first is event %u); left out", path,
                t->nnonfinite, t->nnonfinite == 1 ? "" : "s", t->first_nonfinite);
    return t;
}

tl_trace *tl_trace_load_flags(const char *path, unsigned flags, tl_error *err)
{
    return tl_trace_load_cancel(path, flags, NULL, err);
}

tl_trace *tl_trace_load_cancel(const char *path, unsigned flags, tl_cancel *cancel, tl_error *err)
{
    tl_instream *in = tl_instream_open(path, err);
    if (!in)
        return NULL;
    const char *was = tl_reading(path);
    tl_trace *t = load(in, path, flags, cancel, err);
    tl_reading(was);
    return t;
}

tl_trace *tl_trace_load_mem_flags(const void *data, size_t n, const char *name, unsigned flags, tl_error *err)
{
    tl_instream *in = tl_instream_open_mem(data, n, name);
    const char *was = tl_reading(name);
    tl_trace *t = load(in, name, flags, NULL, err);
    tl_reading(was);
    return t;
}

tl_trace *tl_trace_load(const char *path, tl_error *err) { return tl_trace_load_flags(path, 0, err); }

tl_trace *tl_trace_load_mem(const void *data, size_t n, const char *name, tl_error *err)
{
    return tl_trace_load_mem_flags(data, n, name, 0, err);
}

int tl_trace_sniff(const char *path)
{
    struct stat st;
    unsigned char b[4096];
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int verdict = 0, first = 1;
    /* the first non-space byte, however much space comes first (up to 1 MiB) */
    for (size_t total = 0; total < (1u << 20);) {
        ssize_t n = read(fd, b, sizeof b);
        if (n <= 0)
            break;
        if (first && n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
            verdict = 1;
            break;
        }
        first = 0;
        ssize_t i = 0;
        /* a UTF-8 byte-order mark is not JSON (Python's json refuses it): not skipped */
        while (i < n && j_ws(b[i]))
            i++;
        if (i < n) {
            verdict = b[i] == '{';
            break;
        }
        total += (size_t)n;
    }
    close(fd);
    return verdict;
}

int tl_trace_claims(const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISFIFO(st.st_mode))
        return !(n >= 5 && strcmp(path + n - 5, ".xlsx") == 0);
    if (!S_ISREG(st.st_mode))
        return 0;
    if (tl_trace_sniff(path))
        return 1;
    static const char *const names[] = {".json", ".json.gz"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t k = strlen(names[i]);
        if (n > k && strcmp(path + n - k, names[i]) == 0)
            return 1;
    }
    return 0;
}

void tl_trace_keep_strings(tl_trace *t)
{
    free(t->coll);
    t->coll = NULL;
    t->ncoll = 0;
    free(t->ev);
    free(t->aux);
    free(t->threads);
    free(t->idx);
    free(t->roots);
    t->ev = NULL;
    t->aux = NULL;
    t->threads = NULL;
    t->naux = t->nthreads = 0;
    t->idx = NULL;
    t->roots = NULL;
    t->nev = t->nidx = t->nroots = t->ncpu_ops = 0;
}

void tl_trace_free(tl_trace *t)
{
    if (!t)
        return;
    tl_trace_names *nm = t->names;
    if (nm) {
        tl_kmap_free(&nm->map);
        free(nm->vals);
        free(nm);
    }
    tl_trace_keep_strings(t); /* the event arrays */
    free(t->steps);
    for (size_t i = 0; i < t->nowned; i++)
        tl_trace_free(t->owned[i]);
    free(t->owned);
    tl_arena_free(&t->arena);
    free(t->path);
    free(t);
}

/* n with thousands separators ("34,142"): counts in messages are read at a glance. */
static void add_count(tl_buf *b, uint64_t n)
{
    char d[24];
    int len = snprintf(d, sizeof d, "%llu", (unsigned long long)n);
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            tl_buf_addc(b, ',');
        tl_buf_addc(b, d[i]);
    }
}

void tl_trace_census_text(const tl_trace *t, tl_buf *b, size_t max)
{
    /* the known categories and the named others, largest first (ties: known first) */
    struct item {
        const char *cat;
        uint64_t n;
    } it[TL_CAT_N + TL_CENSUS_NAMED];
    size_t n = 0;
    const tl_trace_census *c = &t->census;
    uint64_t unnamed = c->n[TL_CAT_OTHER];
    for (int k = 0; k < TL_CAT_N; k++)
        if (k != TL_CAT_OTHER && c->n[k])
            it[n++] = (struct item){tl_trace_cat_names[k], c->n[k]};
    for (size_t k = 0; k < c->nnamed; k++) {
        it[n++] = (struct item){c->named[k].cat, c->named[k].n};
        unnamed -= c->named[k].n;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && it[j].n > it[j - 1].n; j--) {
            struct item x = it[j];
            it[j] = it[j - 1];
            it[j - 1] = x;
        }
    if (n == 0 && unnamed == 0) {
        tl_buf_adds(b, "none");
        return;
    }
    uint64_t rest = unnamed;
    size_t ncats_rest = unnamed ? 1 : 0, shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (shown == max) {
            rest += it[i].n;
            ncats_rest++;
            continue;
        }
        if (shown)
            tl_buf_adds(b, ", ");
        add_count(b, it[i].n);
        tl_buf_addc(b, ' ');
        tl_buf_adds(b, *it[i].cat ? it[i].cat : "\"\"");
        shown++;
    }
    if (rest) {
        tl_buf_adds(b, shown ? ", " : "");
        add_count(b, rest);
        tl_buf_adds(b, ncats_rest == 1 && unnamed == 0 ? " of one more category" : " of other categories");
    }
}

static const char *name_of(const tl_trace *t, int64_t pid, int64_t tid, int kind)
{
    const tl_trace_names *nm = t->names;
    if (!nm)
        return "Unknown";
    uint32_t i = tl_kmap_get(&nm->map, pid, tid, kind, UINT32_MAX);
    return i == UINT32_MAX ? "Unknown" : nm->vals[i];
}

const char *tl_trace_process_name(const tl_trace *t, int64_t pid) { return name_of(t, pid, 0, TL_NAME_PROCESS); }
const char *tl_trace_process_label(const tl_trace *t, int64_t pid) { return name_of(t, pid, 0, TL_NAME_LABELS); }
const char *tl_trace_thread_name(const tl_trace *t, int64_t pid, int64_t tid) { return name_of(t, pid, tid, TL_NAME_THREAD); }
