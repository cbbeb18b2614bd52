/*
 * kmap.h - hash maps from integer keys to a 32-bit value, for the trace's lookups: a
 * tl_kmap by three 64-bit integers ((pid, tid), names by (pid, tid, kind)), a tl_idmap
 * by a 64-bit id and a 32-bit tag in half the bytes (flows by (id, kind), GPU events by
 * (link id, place): the maps of millions of entries).  Open addressing, linear probing,
 * doubled at half full, so every operation is expected constant time whatever keys a
 * hostile trace brings (the hash mixes every bit of the key but the low three of `a`,
 * which keep consecutive values of `a` in neighbouring slots: put the part of a key that
 * counts up, an id, first).
 */
#ifndef TL_TRACE_KMAP_H
#define TL_TRACE_KMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_kmap_slot {
    int64_t a, b, c;
    uint32_t val;
    uint32_t used;
} tl_kmap_slot;

typedef struct tl_kmap {
    tl_kmap_slot *slots;
    size_t cap, n; /* cap: a power of two, or 0 */
} tl_kmap;

void tl_kmap_init(tl_kmap *m);
void tl_kmap_free(tl_kmap *m);

/* Room for n keys without growing. */
void tl_kmap_reserve(tl_kmap *m, size_t n);

/* The slot of key (a, b, c), created (used = 1, val = 0) when absent; *created says
 * which.  The pointer is valid until the next insertion. */
tl_kmap_slot *tl_kmap_put(tl_kmap *m, int64_t a, int64_t b, int64_t c, int *created);

/* The value of key (a, b, c), or `dflt` when absent. */
uint32_t tl_kmap_get(const tl_kmap *m, int64_t a, int64_t b, int64_t c, uint32_t dflt);

/* The most slots a lookup of a key in m reads (its home slot counted): what the hash's
 * spread bounds, whatever the keys. */
size_t tl_kmap_max_probe(const tl_kmap *m);

/* ---- (id, tag) -> value ---- */

typedef struct tl_idmap_slot {
    int64_t a;
    uint32_t tag; /* the key's tag + 1; 0: an empty slot */
    uint32_t val;
} tl_idmap_slot;

typedef struct tl_idmap {
    tl_idmap_slot *slots;
    size_t cap, n; /* cap: a power of two, or 0 */
} tl_idmap;

void tl_idmap_init(tl_idmap *m);
void tl_idmap_free(tl_idmap *m);

/* Room for n keys without growing. */
void tl_idmap_reserve(tl_idmap *m, size_t n);

/* The value of key (a, tag), created as 0 when absent (*created says which); tag is
 * below UINT32_MAX.  The pointer is valid until the next insertion. */
uint32_t *tl_idmap_put(tl_idmap *m, int64_t a, uint32_t tag, int *created);

/* The value of key (a, tag), or `dflt` when absent. */
uint32_t tl_idmap_get(const tl_idmap *m, int64_t a, uint32_t tag, uint32_t dflt);

/* The key of a used slot (slots[i].tag != 0). */
static inline uint32_t tl_idmap_tag(const tl_idmap_slot *s) { return s->tag - 1; }

/* As tl_kmap_max_probe. */
size_t tl_idmap_max_probe(const tl_idmap *m);

#endif
