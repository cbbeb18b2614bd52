/*
 * diff_int.h - what the files of the diff layer share: the diff's state, the name
 * tables, and small growable arrays.  Not for use outside src/diff/.
 */
#ifndef TL_DIFF_INT_H
#define TL_DIFF_INT_H

#include "diff/diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growable array of uint32. */
typedef struct dvec {
    uint32_t *v;
    size_t n, cap;
} dvec;

static inline void dv_push(dvec *d, uint32_t x)
{
    if (d->n == d->cap)
        TL_GROW(d->v, d->cap, d->n + 1);
    d->v[d->n++] = x;
}
static inline void dv_reserve(dvec *d, size_t need) { TL_GROW(d->v, d->cap, need); }
static inline void dv_free(dvec *d) { free(d->v); memset(d, 0, sizeof *d); }

/* Interned strings: content -> dense id. */
typedef struct dstr {
    const char *s;
    size_t len;
    uint64_t hash;
} dstr;
typedef struct dstrtab {
    uint32_t *slots; /* id + 1, 0 empty */
    size_t mask;
    dstr *e;
    size_t n, cap;
} dstrtab;

uint32_t tl_dst_intern(dstrtab *t, const char *s, size_t len, tl_arena *arena);
/* The id of s, or UINT32_MAX when it is not in the table. */
uint32_t tl_dst_find(const dstrtab *t, const char *s, size_t len);
void tl_dst_free(dstrtab *t);

/* A distinct event name (by content), with what the diff derives from it. */
typedef struct dname {
    const char *s;     /* the raw name */
    uint32_t norm;     /* id of the normalised name in tl_diff.norm; 0: none (empty name) */
    uint32_t strip;    /* id of the "strip details" normalised name */
    const char *lca;   /* the name with "(digits)" removed, made when first needed */
} dname;

/* One trace's side of the diff. */
typedef struct dside {
    const tl_trace *t;
    uint32_t *nm;          /* per event: index into tl_diff.names */
    uint32_t *pos_stamp;   /* per event: scratch position maps */
    uint32_t *pos_val;
} dside;

/* An entry of the unique-args summary (a group of diff_stats rows). */
typedef struct dgroup {
    size_t first;      /* its first row */
    size_t count;
    double sum, mean;  /* kernel_time, as pandas' groupby sums (Kahan) */
    double comp;       /* the sum's compensation */
    const char *cpu_op_name; /* after the cpu_op map's renaming */
} dgroup;

struct tl_diff {
    dside s[2];
    tl_arena arena;
    tl_diff_opts opts;
    /* names */
    dname *names;
    size_t nnames, capnames;
    dstrtab raw;   /* raw name content -> names index */
    dstrtab norm;  /* normalised names (both kinds) -> id; id 0 is reserved for "none" */
    /* the merged tree */
    tl_diff_node *nodes;
    size_t nnodes, capnodes;
    dvec kids;
    dvec roots;
    uint32_t *partner[2];
    tl_diff_stats st;
    /* diff_stats and what is made from it */
    tl_diff_row *rows;
    size_t nrows, caprows;
    size_t rows_mapped; /* how much of rows has its pages mapped ahead (tl_populate_ahead) */
    int identical;
    int lca_missing;   /* some row has no LCA (the id column is then float, as pandas makes it) */
    tl_diff_lca *lcas;
    size_t nlcas;
    dgroup *groups;    /* the unique-args summary, in its written order */
    size_t ngroups;
    /* the cpu_op maps: per side, cpu_op name -> sorted distinct kernel names (JSON text) */
    tl_buf map_json[3];
};

/* The raw name, normalised id and event of event e of side k. */
static inline const dname *dname_of(const tl_diff *d, int k, uint32_t e) { return &d->names[d->s[k].nm[e]]; }
static inline const char *ev_name(const tl_diff *d, int k, uint32_t e) { return d->s[k].t->ev[e].name; }

/* 1 when event e is on the GPU path (not marked non_gpu_path). */
static inline int ev_gpu_path(const tl_trace *t, uint32_t e)
{
    return e != TL_TEV_NONE && !(t->ev[e].flags & TL_TEV_NON_GPU_PATH);
}
/* A runtime event that is not a graph launch (the reference's "cuda_runtime" test). */
static inline int ev_is_launch(const tl_tev *e)
{
    return e->kind == TL_TEV_RUNTIME && !(e->flags & TL_TEV_GRAPH_LAUNCH);
}
/* A kernel or memcpy (the reference's _is_kernel: memsets do not count). */
static inline int ev_is_kernel(const tl_tev *e) { return e->kind == TL_TEV_KERNEL || e->kind == TL_TEV_MEMCPY; }

/* The name shown for an event: its name, or its UID in decimal when the name is empty. */
const char *tl_diff_op_name(tl_diff *d, int k, uint32_t e);
/* The LCA form of an event's name ("(digits)" removed). */
const char *tl_diff_lca_name(tl_diff *d, int k, uint32_t e);

/* Give every event its name index (names.c). */
/* Whether the traces' run is cancelled (tl_trace.cancel): the phases stop early, and
 * tl_diff_run drops the unfinished diff. */
static inline int diff_cancelled(const tl_diff *d)
{
    return tl_cancelled(d->s[0].t->cancel) || tl_cancelled(d->s[1].t->cancel);
}

void tl_diff_names(tl_diff *d);
/* Build the merged tree (align.c). */
void tl_diff_align(tl_diff *d);
/* diff_stats' rows and the LCAs (stats.c).  -1 when the run was cancelled before they
 * were all made, else 0. */
int tl_diff_stats_sheet(tl_diff *d);
/* The unique-args summary's groups and the cpu_op renames (stats.c), from the rows: -1
 * when the run was cancelled before they were all made, else 0. */
int tl_diff_group_rows(tl_diff *d);

/* The cpu_op map JSON texts, from what diff_stats made (emit.c). */
void tl_diff_cpu_op_maps(tl_diff *d);

/* Busy time (length of the union) of the GPU events ev[0..n) of trace t. */
double tl_diff_busy(const tl_trace *t, const uint32_t *ev, size_t n);

#endif
