/*
 * ranks.h - a set of rank traces (one PyTorch profiler trace per rank of a distributed
 * job) in, the multi-rank collective report out (MULTIRANK.md): finding the rank files,
 * reading them on worker threads (each rank reduced to its facts, its trace freed
 * before the worker takes the next), matching collectives across ranks, the sheets.
 */
#ifndef TL_RANKS_H
#define TL_RANKS_H

#include "base/arena.h"
#include "base/util.h"
#include "table/result.h"
#include "table/table.h"
#include "trace/collective.h"

#include <stddef.h>
#include <stdint.h>

/* How the rank files are named (MULTIRANK.md §1). */
typedef enum tl_ranks_mode {
    TL_RANKS_DIR = 1, /* --trace_dir DIR: DIR/rank<i>_trace.json */
    TL_RANKS_PATTERN, /* --trace_pattern P: P with its one '*' replaced by i */
    TL_RANKS_GLOB,    /* --trace_glob G (+ --rank_regex): ranks from the paths */
    TL_RANKS_SCAN,    /* --ranks DIR: DIR's files named like ranks; world size = ranks found */
} tl_ranks_mode;

#define TL_RANKS_DEFAULT_REGEX "rank[\\[\\-_/]?(?P<rank>\\d+)"
#define TL_RANKS_MAX_AGGS 16

typedef struct tl_ranks_opts {
    int mode;               /* tl_ranks_mode */
    const char *spec;       /* the directory, pattern or glob */
    const char *rank_regex; /* glob / scan: the rank regex (NULL: the default) */
    long world_size;        /* N (scan: ignored, the ranks found) */
    const char *aggs[TL_RANKS_MAX_AGGS]; /* --agg_metrics, in order (none: mean median min max) */
    size_t naggs;
    long gpus_per_node;     /* > 0, or 0: from rank 0's deviceProperties */
    int heatmap;            /* --all2allv_heatmap */
    int jobs;               /* worker threads reading ranks (<= 0: the CPUs available) */
} tl_ranks_opts;

/* What one rank's trace is reduced to as soon as it is read: its collective kernels and
 * the compact facts a comparison of distributed runs needs.  Its strings live in its
 * own arena (ranks are reduced on different threads). */
/* A rank's collective row as the facts keep it once compacted: its times, and which of
 * the rank's distinct metadata it has (a rank repeats a few collectives many times). */
typedef struct tl_rank_row {
    double ts, dur;
    uint32_t meta;           /* an index into the facts' metas */
    uint8_t ts_int, dur_int;
} tl_rank_row;

typedef struct tl_rank_facts {
    tl_coll_rows rows;      /* its collective kernels, event order, until compacted (then empty) */
    tl_rank_row *crows;     /* compacted: the rows, event order */
    size_t ncrows;
    tl_coll_row *metas;     /* compacted: the distinct metadata (rank, v, in_mb, out_mb; no times) */
    size_t nmetas;
    long ndevices;          /* its deviceProperties' length, or -1 */
    long dist_rank, dist_world; /* its distributedInfo's rank and world_size, or -1 */
    tl_table *gpu_timeline; /* its gpu_timeline when the set's want_ops, or NULL (not asked, or no GPU event linked) */
    tl_table *ops_summary;  /* its ops_summary when the set's want_ops (a comparison of runs), else NULL */
    tl_arena arena;         /* its strings while it is made */
    char *strings;          /* then, compacted: its rows' strings in one block of their size */
    size_t strings_len;
    int stored;             /* crows, metas and strings in the set's store, not owned by the facts */
    char *table_strings;    /* and its tables' texts in one block of their size */
    char *err;              /* a failure reading it (malloc'd), or NULL: a message, not a
                               tl_error, as the facts of every rank are held together */
    int failed;
} tl_rank_facts;

typedef struct tl_rank_store tl_rank_store;

typedef struct tl_rank_set {
    size_t n;             /* the world size */
    tl_rank_store *store; /* where the ranks' compacted rows are kept, side by side (read.c) */
    char **paths;         /* rank i's file, as the command line spells it */
    tl_rank_facts *facts; /* per rank, once read */
    int want_ops;         /* set before reading: each rank read whole, its gpu_timeline and ops_summary kept
                             (else only its collective kernels are read: TL_LOAD_KERNELS_ONLY) */
} tl_rank_set;

/* Resolve the rank files (MULTIRANK.md §1, §8.1, §8.4).  Returns 0, or -1 with *err set
 * (one line naming the missing ranks, the pattern or the regex at fault). */
int tl_ranks_find(const tl_ranks_opts *o, tl_rank_set *s, tl_error *err);

/* Read every rank on `jobs` threads (<= 0: the CPUs available), each trace reduced to
 * its facts and freed at once: at most `jobs` traces are in memory together.  The
 * result does not depend on `jobs`.  Returns 0, or -1 with *err naming the lowest rank
 * that failed and its file. */
int tl_ranks_read(tl_rank_set *s, int jobs, tl_error *err);

/* Read only the ranks i with i % nparts == part (a process's share of a distributed run),
 * on `jobs` threads; every slot of s->facts is made, the others left empty.  A rank that
 * fails is marked in its facts (tl_ranks_read_failed says which). */
void tl_ranks_read_part(tl_rank_set *s, int jobs, size_t part, size_t nparts);

/* -1 with *err naming the lowest rank whose read failed and its file, else 0. */
int tl_ranks_read_failed(const tl_rank_set *s, tl_error *err);

/* A rank's collective rows (compacted or not) and row i whole, in event order. */
size_t tl_rank_facts_nrows(const tl_rank_facts *f);
void tl_rank_facts_row(const tl_rank_facts *f, size_t i, tl_coll_row *out);

/* A rank's facts as bytes, appended to b (what a distributed run sends its root), and back:
 * unpack fills *f (its own arena) and returns 0, or -1 with *err when the bytes are not a
 * whole message of this version.  tl_rank_facts_free frees what unpack or a read made. */
void tl_rank_facts_pack(const tl_rank_facts *f, tl_buf *b);
int tl_rank_facts_unpack(const void *data, size_t n, tl_rank_facts *f, tl_error *err);
void tl_rank_facts_free(tl_rank_facts *f);

/* Where the sheets go as they are made (tl_ranks_sheets_to): sheet() takes each sheet in
 * workbook order (an "empty file" sheet is a table with no rows and no columns; the
 * table is the callee's from then on).  nccl_long, a row per collective and rank, comes
 * in pieces of at most piece_rows rows (0: whole), each typed as the whole sheet is and
 * with the same columns: piece 0 first, `last` set on the last one, `total` the sheet's
 * rows in all; every other sheet is one piece.  sheet() returns 0, or -1 with *err set,
 * which stops the report. */
typedef struct tl_ranks_out {
    int (*sheet)(void *ctx, const char *name, tl_table *t, size_t piece, int last, size_t total, tl_error *err);
    void *ctx;
    size_t piece_rows;
} tl_ranks_out;

/* The sheets of MULTIRANK.md §2-§7, given to `out` as each is made: so no two sheets,
 * nor the whole of nccl_long, need be in memory together.  Returns 0, or -1 with *err
 * set (§8.2, §8.3: refused before any sheet is given; or what out->sheet() said).  The
 * ranks' collective rows are moved into the report as it is made (each rank's rows
 * emptied, so that they are not held twice; their texts stay in the facts): the sheets
 * are made once per rank set. */
int tl_ranks_sheets_to(tl_rank_set *s, const tl_ranks_opts *o, tl_arena *a, const tl_ranks_out *out, tl_error *err);

/* The same, every sheet whole, appended to *out in workbook order. */
int tl_ranks_sheets(tl_rank_set *s, const tl_ranks_opts *o, tl_arena *a, tl_results *out, tl_error *err);

/* Where the reference writes nccl_analysis_report.xlsx when no output is given
 * (MULTIRANK.md §0.2): a malloc'd directory path. */
char *tl_ranks_default_dir(const tl_ranks_opts *o, const tl_rank_set *s);

void tl_rank_set_free(tl_rank_set *s);

/* 1 when `name` is a reducer --agg_metrics takes (mean median min max std var sum count
 * first last). */
int tl_ranks_agg_known(const char *name);

/* Compile a rank regex in Python's syntax (the subset POSIX extended regexes can do:
 * literals, ., [] sets with \d \w \s and escapes, groups, (?P<name>...), (?:...),
 * alternation, * + ? {m,n}, anchors; no lookaround, lazy quantifiers or backreferences)
 * into `re`; *group receives the index of the group named `rank`, else 1.  Returns 0, or
 * -1 with *err saying what is not supported. */
#include <regex.h>
int tl_ranks_regex(const char *py, regex_t *re, size_t *group, tl_error *err);

/* The rank a path names under a compiled rank regex: searched in the base name first,
 * then in the whole path.  -1 when neither matches (or the digits do not fit). */
long tl_ranks_rank_of(const char *path, const regex_t *re, size_t group);

#endif
