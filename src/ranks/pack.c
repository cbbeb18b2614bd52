/*
 * pack.c - a rank's facts as bytes and back (ranks.h): what travels between the
 * processes of a distributed run, so the root builds the same sheets as a one-machine
 * run.  Numbers are copied bit for bit (a double's 8 bytes, native byte order: the
 * processes of one job run the same build on the same architecture); strings with their
 * length.  The unpacker checks every length against what is left, so a short or damaged
 * message is an error, never a read past its end.
 */
#include "ranks/ranks.h"
#include "ranks/ranks_impl.h"

#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC 0x544c524bu /* "TLRK" */
#define PACK_VERSION 1u

/* ---- writing ----------------------------------------------------------------------------- */

static void put_u64(tl_buf *b, uint64_t v) { tl_buf_add(b, (const char *)&v, sizeof v); }
static void put_f64(tl_buf *b, double v) { tl_buf_add(b, (const char *)&v, sizeof v); }
static void put_u8(tl_buf *b, uint8_t v) { tl_buf_add(b, (const char *)&v, 1); }

/* A string with its length; NULL as the length UINT64_MAX. */
static void put_str(tl_buf *b, const char *s, size_t n)
{
    put_u64(b, s ? n : UINT64_MAX);
    if (s)
        tl_buf_add(b, s, n);
}

static void put_cval(tl_buf *b, const tl_cval *v)
{
    put_u8(b, v->kind);
    if (v->kind == TL_CV_INT)
        put_u64(b, (uint64_t)v->i);
    else if (v->kind == TL_CV_FLOAT)
        put_f64(b, v->f);
    else if (v->kind == TL_CV_STR || v->kind == TL_CV_REPR)
        put_str(b, v->s, strlen(v->s));
}

static void put_table(tl_buf *b, const tl_table *t)
{
    put_u8(b, t != NULL);
    if (!t)
        return;
    put_u64(b, t->nrows);
    put_u64(b, t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        put_str(b, col->name, col->name ? strlen(col->name) : 0);
        put_u8(b, col->type);
        put_u8(b, col->role);
        put_u64(b, (uint64_t)(int64_t)col->tag);
        for (size_t r = 0; r < t->nrows; r++) {
            const tl_cell *x = &col->cells[r];
            put_u8(b, x->kind);
            if (x->kind == TL_INT)
                put_u64(b, (uint64_t)x->v.i);
            else if (x->kind == TL_FLOAT)
                put_f64(b, x->v.f);
            else if (x->kind == TL_BOOL)
                put_u8(b, (uint8_t)x->v.b);
            else if (x->kind == TL_STR)
                put_str(b, x->v.s, tl_cell_len(x));
        }
    }
}

void tl_rank_facts_pack(const tl_rank_facts *f, tl_buf *b)
{
    put_u64(b, PACK_MAGIC);
    put_u64(b, PACK_VERSION);
    put_u8(b, (uint8_t)f->failed);
    put_str(b, f->err ? f->err : "", f->err ? strlen(f->err) : 0);
    put_u64(b, (uint64_t)(int64_t)f->ndevices);
    put_u64(b, (uint64_t)(int64_t)f->dist_rank);
    put_u64(b, (uint64_t)(int64_t)f->dist_world);
    size_t nrows = tl_rank_facts_nrows(f);
    put_u64(b, nrows);
    for (size_t i = 0; i < nrows; i++) {
        tl_coll_row row;
        const tl_coll_row *r = &row;
        tl_rank_facts_row(f, i, &row);
        put_u64(b, (uint64_t)r->rank);
        for (int k = 0; k < TL_COLL_NKEYS; k++)
            put_cval(b, &r->v[k]);
        put_f64(b, r->ts);
        put_f64(b, r->dur);
        put_u8(b, r->ts_int);
        put_u8(b, r->dur_int);
        put_f64(b, r->in_mb);
        put_f64(b, r->out_mb);
    }
    put_table(b, f->gpu_timeline);
    put_table(b, f->ops_summary);
}

/* ---- reading ----------------------------------------------------------------------------- */

typedef struct rd {
    const unsigned char *p, *end;
    int bad;
} rd;

static int take(rd *r, void *out, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        memset(out, 0, n);
        return -1;
    }
    memcpy(out, r->p, n);
    r->p += n;
    return 0;
}

static uint64_t get_u64(rd *r)
{
    uint64_t v;
    take(r, &v, sizeof v);
    return v;
}

static double get_f64(rd *r)
{
    double v;
    take(r, &v, sizeof v);
    return v;
}

static uint8_t get_u8(rd *r)
{
    uint8_t v;
    take(r, &v, 1);
    return v;
}

/* A string copied into `a` (NUL-terminated); *n its length.  NULL when it was NULL or
 * the message is short. */
static const char *get_str(rd *r, tl_arena *a, size_t *n)
{
    uint64_t len = get_u64(r);
    *n = 0;
    if (r->bad || len == UINT64_MAX)
        return NULL;
    if ((uint64_t)(r->end - r->p) < len) {
        r->bad = 1;
        return NULL;
    }
    const char *s = tl_arena_strndup(a, (const char *)r->p, (size_t)len);
    r->p += len;
    *n = (size_t)len;
    return s;
}

static tl_cval get_cval(rd *r, tl_arena *a)
{
    tl_cval v = {0};
    size_t n;
    v.kind = get_u8(r);
    if (v.kind == TL_CV_INT)
        v.i = (int64_t)get_u64(r);
    else if (v.kind == TL_CV_FLOAT)
        v.f = get_f64(r);
    else if (v.kind == TL_CV_STR || v.kind == TL_CV_REPR) {
        v.s = get_str(r, a, &n);
        if (!v.s)
            r->bad = 1;
    } else if (v.kind != TL_CV_NONE)
        r->bad = 1;
    return v;
}

/* A count of items of at least `min_bytes` each: no more than the bytes left allow. */
static size_t get_count(rd *r, size_t min_bytes)
{
    uint64_t n = get_u64(r);
    if (r->bad || n > (uint64_t)(r->end - r->p) / (min_bytes ? min_bytes : 1)) {
        r->bad = 1;
        return 0;
    }
    return (size_t)n;
}

static tl_table *get_table(rd *r, tl_arena *a)
{
    if (!get_u8(r) || r->bad)
        return NULL;
    size_t nrows = get_count(r, 0), ncols = get_count(r, 8 + 2 + 8 + nrows);
    tl_table *t = tl_table_new();
    t->nrows = nrows;
    for (size_t c = 0; c < ncols && !r->bad; c++) {
        size_t n;
        const char *name = get_str(r, a, &n);
        size_t k = tl_table_add_column(t, name ? name : "");
        t->cols[k].type = get_u8(r);
        t->cols[k].role = get_u8(r);
        t->cols[k].tag = (int)(int64_t)get_u64(r);
        for (size_t i = 0; i < nrows && !r->bad; i++) {
            tl_cell *x = &t->cols[k].cells[i];
            uint8_t kind = get_u8(r);
            if (kind == TL_INT)
                *x = tl_cell_int((int64_t)get_u64(r));
            else if (kind == TL_FLOAT)
                *x = tl_cell_float(get_f64(r));
            else if (kind == TL_BOOL)
                *x = tl_cell_bool(get_u8(r));
            else if (kind == TL_STR) {
                const char *s = get_str(r, a, &n);
                *x = s ? tl_cell_strn(s, n) : tl_cell_missing();
            } else if (kind != TL_MISSING)
                r->bad = 1;
        }
    }
    return t;
}

int tl_rank_facts_unpack(const void *data, size_t n, tl_rank_facts *f, tl_error *err)
{
    memset(f, 0, sizeof *f);
    tl_arena_init(&f->arena);
    f->ndevices = f->dist_rank = f->dist_world = -1;
    rd r = {data, (const unsigned char *)data + n, 0};
    if (get_u64(&r) != PACK_MAGIC || get_u64(&r) != PACK_VERSION) {
        tl_error_set(err, "not the facts of a rank (or of another tlreport version)");
        return -1;
    }
    f->failed = get_u8(&r);
    size_t len;
    const char *msg = get_str(&r, &f->arena, &len);
    if (msg)
        f->err = msg[0] ? tl_xstrdup(msg) : NULL;
    f->ndevices = (long)(int64_t)get_u64(&r);
    f->dist_rank = (long)(int64_t)get_u64(&r);
    f->dist_world = (long)(int64_t)get_u64(&r);
    size_t nrows = get_count(&r, 8 + TL_COLL_NKEYS + 8 * 4 + 2);
    if (nrows) {
        f->rows.v = tl_xcalloc(nrows, sizeof *f->rows.v);
        f->rows.cap = nrows;
    }
    for (size_t i = 0; i < nrows && !r.bad; i++) {
        tl_coll_row *row = &f->rows.v[f->rows.n++];
        row->rank = (int64_t)get_u64(&r);
        for (int k = 0; k < TL_COLL_NKEYS; k++)
            row->v[k] = get_cval(&r, &f->arena);
        row->ts = get_f64(&r);
        row->dur = get_f64(&r);
        row->ts_int = get_u8(&r);
        row->dur_int = get_u8(&r);
        row->in_mb = get_f64(&r);
        row->out_mb = get_f64(&r);
    }
    f->gpu_timeline = get_table(&r, &f->arena);
    f->ops_summary = get_table(&r, &f->arena);
    if (r.bad || r.p != r.end) {
        tl_error_set(err, "the facts of a rank are %s", r.bad ? "cut short or damaged" : "followed by stray bytes");
        tl_rank_facts_free(f);
        return -1;
    }
    tl_rk_facts_compact(f);
    return 0;
}

void tl_rank_facts_free(tl_rank_facts *f)
{
    tl_coll_rows_free(&f->rows);
    if (!f->stored) { /* else the set's store holds them */
        free(f->crows);
        free(f->metas);
        free(f->strings);
    }
    free(f->err);
    tl_table_free(f->gpu_timeline);
    tl_table_free(f->ops_summary);
    tl_arena_free(&f->arena);
    free(f->table_strings);
    memset(f, 0, sizeof *f);
}
