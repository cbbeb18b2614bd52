/*
 * pyval.h - the Python values of a cpu_op's shape arguments, for the perf models.
 *
 * The trace keeps `Input Dims`, `Input type`, `Input Strides`, `Concrete Inputs` as the
 * Python tuple repr TraceLens groups on (trace.h); the models need the values, and the
 * perf sheets print them again as lists (PERF.md §5.3) or tuples.  A value is parsed
 * from that text into a pool that is reset per event.  The arguments are the trace's,
 * so attacker-controlled: a list longer than TL_PV_MAX_ITEMS or nested deeper than
 * TL_PV_MAX_DEPTH, an integer beyond int64, a dict, anything unreadable, parses to a
 * TL_PV_BAD value, which every model rejects (the row fails, PERF.md §3.3).
 */
#ifndef TL_PERF_PYVAL_H
#define TL_PERF_PYVAL_H

#include "base/util.h"

#include <stddef.h>
#include <stdint.h>

#define TL_PV_MAX_ITEMS 65536
#define TL_PV_MAX_DEPTH 16

typedef enum tl_pv_kind {
    TL_PV_NONE = 0,
    TL_PV_BOOL,
    TL_PV_INT,
    TL_PV_FLOAT,
    TL_PV_STR,
    TL_PV_TUPLE,
    TL_PV_LIST,
    TL_PV_BAD, /* present but unusable (see above) */
} tl_pv_kind;

typedef struct tl_pv tl_pv;
struct tl_pv {
    uint8_t kind;
    uint32_t n; /* TUPLE / LIST: items; STR: length of s */
    union {
        int64_t i; /* INT, BOOL */
        double f;
        const char *s; /* STR: the decoded text (not NUL-terminated) */
        tl_pv *items;
    } u;
    const char *repr; /* STR: its Python repr as written (quotes included); a TUPLE parsed
                       * from text: that text (NULL for one made here) */
    uint32_t rlen;
};

/* A bump allocator for values, reset (not freed) between events. */
typedef struct tl_pv_pool {
    struct pvchunk *first, *cur;
} tl_pv_pool;

void tl_pv_pool_reset(tl_pv_pool *p);
void tl_pv_pool_free(tl_pv_pool *p);
void *tl_pv_alloc(tl_pv_pool *p, size_t n);

/* Parse the Python repr `text` (NULL: returns NULL, a missing argument). */
const tl_pv *tl_pv_parse(tl_pv_pool *p, const char *text);

/* Constructors (values live in the pool). */
tl_pv *tl_pv_new(tl_pv_pool *p, int kind);
tl_pv *tl_pv_int(tl_pv_pool *p, int64_t i);
tl_pv *tl_pv_float(tl_pv_pool *p, double f);
tl_pv *tl_pv_bool(tl_pv_pool *p, int b);
tl_pv *tl_pv_none(tl_pv_pool *p);
tl_pv *tl_pv_seq(tl_pv_pool *p, int kind, size_t n); /* items zeroed (None) */
tl_pv *tl_pv_str(tl_pv_pool *p, const char *s, size_t n); /* its repr made here */
/* v as a tuple / list of the same items (a copy when the kind differs). */
const tl_pv *tl_pv_as(tl_pv_pool *p, const tl_pv *v, int kind);

/* Python's repr of v (None for NULL), appended to b. */
void tl_pv_repr(tl_buf *b, const tl_pv *v);

/* The tuple repr `text` with every tuple written as a list (Python's repr of the JSON
 * value as json.load gives it), appended to b. */
void tl_pv_tuple_text_as_list(tl_buf *b, const char *text);

/* Accessors that make the models' "fails" checks short: each returns NULL (or 0) when v
 * is not of the kind asked. */
const tl_pv *tl_pv_at(const tl_pv *v, size_t i); /* item i of a tuple/list, or NULL */
int tl_pv_is_seq(const tl_pv *v);
int tl_pv_is_int(const tl_pv *v); /* an INT (not BOOL) */
/* 1 and *out when v is a sequence of n INTs; their product, checked: 0 on overflow, on a
 * negative factor, on anything not an INT. */
int tl_pv_prod(const tl_pv *v, int64_t *out);
/* A string value equal to lit. */
int tl_pv_str_is(const tl_pv *v, const char *lit);

#endif
