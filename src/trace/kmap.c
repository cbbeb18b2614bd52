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

/* The capacity for n keys at most half full, from cap (0: none yet) on. */
static size_t cap_for(size_t cap, size_t n)
{
    cap = cap ? cap : 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    return cap;
}

void tl_kmap_reserve(tl_kmap *m, size_t n)
{
    size_t cap = cap_for(m->cap, n);
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

/* ---- tl_idmap ---- */

void tl_idmap_init(tl_idmap *m) { memset(m, 0, sizeof *m); }

void tl_idmap_free(tl_idmap *m)
{
    free(m->slots);
    tl_idmap_init(m);
}

/* The slot of key (a, stored tag): the one holding it, or the empty one it would take. */
static tl_idmap_slot *idmap_slot(const tl_idmap *m, int64_t a, uint32_t stored)
{
    const size_t mask = m->cap - 1;
    for (size_t j = khash(a, stored, 0) & mask;; j = (j + 1) & mask) {
        tl_idmap_slot *s = &m->slots[j];
        if (!s->tag || (s->a == a && s->tag == stored))
            return s;
    }
}

static void idmap_grow_to(tl_idmap *m, size_t ncap)
{
    tl_idmap old = *m;
    m->slots = tl_xcalloc_dense(ncap, sizeof *m->slots);
    m->cap = ncap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].tag)
            *idmap_slot(m, old.slots[i].a, old.slots[i].tag) = old.slots[i];
    free(old.slots);
}

void tl_idmap_reserve(tl_idmap *m, size_t n)
{
    size_t cap = cap_for(m->cap, n);
    if (cap > m->cap)
        idmap_grow_to(m, cap);
}

uint32_t *tl_idmap_put(tl_idmap *m, int64_t a, uint32_t tag, int *created)
{
    if ((m->n + 1) * 2 > m->cap)
        idmap_grow_to(m, cap_for(m->cap, m->n + 1));
    tl_idmap_slot *s = idmap_slot(m, a, tag + 1);
    int fresh = s->tag == 0;
    if (fresh) {
        s->a = a;
        s->tag = tag + 1;
        s->val = 0;
        m->n++;
    }
    if (created)
        *created = fresh;
    return &s->val;
}

uint32_t tl_idmap_get(const tl_idmap *m, int64_t a, uint32_t tag, uint32_t dflt)
{
    if (!m->cap)
        return dflt;
    const tl_idmap_slot *s = idmap_slot(m, a, tag + 1);
    return s->tag ? s->val : dflt;
}

size_t tl_idmap_max_probe(const tl_idmap *m)
{
    size_t worst = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].tag)
            continue;
        size_t d = (i - (khash(m->slots[i].a, m->slots[i].tag, 0) & (m->cap - 1))) & (m->cap - 1);
        worst = d + 1 > worst ? d + 1 : worst;
    }
    return worst;
}
