/*
 * kmap.c - the (a, b, c) -> value hash map of kmap.h.
 */
#include "trace/kmap.h"
#include "base/hash.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/*
 * The low KMAP_RUN_BITS bits of `a` are added to the hash of the rest of the key, not
 * mixed into it: the ids a trace counts up (flow and correlation ids, as `a`) land in
 * runs of 8 neighbouring slots, and a map of millions of them is read a few cache lines
 * at a time instead of at a random place per key (the flows' and the links' lookups of a
 * 1 GB trace: 7% of its samples, 3% with runs of 8).  A run's place is as random as any
 * key's was and at most 8 keys share one: no choice of keys makes the probes longer than
 * a few runs beyond those of a fully mixed hash (longer runs made them much longer: the
 * longest probe over 200k ids counting up, 18 slots mixed, 110 in runs of 8, 600 in
 * runs of 64).
 */
#define KMAP_RUN_BITS 3

static inline uint64_t khash(int64_t a, int64_t b, int64_t c)
{
    uint64_t h = tl_hash_mix(((uint64_t)a >> KMAP_RUN_BITS) + 0x9e3779b97f4a7c15ULL);
    h = tl_hash_mix(h ^ ((uint64_t)b + 0x632be59bd9b4e019ULL));
    h = tl_hash_mix(h ^ ((uint64_t)c + 0x85ebca77c2b2ae63ULL));
    return h + ((uint64_t)a & ((1u << KMAP_RUN_BITS) - 1));
}

void tl_kmap_init(tl_kmap *m) { memset(m, 0, sizeof *m); }

void tl_kmap_free(tl_kmap *m)
{
    free(m->slots);
    tl_kmap_init(m);
}

static void grow_to(tl_kmap *m, size_t ncap)
{
    tl_kmap_slot *ns = tl_xcalloc_dense(ncap, sizeof *ns);
    for (size_t i = 0; i < m->cap; i++) {
        tl_kmap_slot *s = &m->slots[i];
        if (!s->used)
            continue;
        size_t j = khash(s->a, s->b, s->c) & (ncap - 1);
        while (ns[j].used)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
}

static void grow(tl_kmap *m) { grow_to(m, m->cap ? m->cap * 2 : 64); }

void tl_kmap_reserve(tl_kmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    if (cap > m->cap)
        grow_to(m, cap);
}

tl_kmap_slot *tl_kmap_put(tl_kmap *m, int64_t a, int64_t b, int64_t c, int *created)
{
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    size_t j = khash(a, b, c) & (m->cap - 1);
    for (;;) {
        tl_kmap_slot *s = &m->slots[j];
        if (!s->used) {
            s->a = a;
            s->b = b;
            s->c = c;
            s->val = 0;
            s->used = 1;
            m->n++;
            if (created)
                *created = 1;
            return s;
        }
        if (s->a == a && s->b == b && s->c == c) {
            if (created)
                *created = 0;
            return s;
        }
        j = (j + 1) & (m->cap - 1);
    }
}

uint32_t tl_kmap_get(const tl_kmap *m, int64_t a, int64_t b, int64_t c, uint32_t dflt)
{
    if (!m->cap)
        return dflt;
    size_t j = khash(a, b, c) & (m->cap - 1);
    for (;;) {
        const tl_kmap_slot *s = &m->slots[j];
        if (!s->used)
            return dflt;
        if (s->a == a && s->b == b && s->c == c)
            return s->val;
        j = (j + 1) & (m->cap - 1);
    }
}

size_t tl_kmap_max_probe(const tl_kmap *m)
{
    size_t worst = 0;
    for (size_t i = 0; i < m->cap; i++) {
        const tl_kmap_slot *s = &m->slots[i];
        if (!s->used)
            continue;
        size_t home = khash(s->a, s->b, s->c) & (m->cap - 1);
        size_t d = (i - home) & (m->cap - 1);
        if (d + 1 > worst)
            worst = d + 1;
    }
    return worst;
}
