/*
 * hash.h - hashing and the string map the layers above share (base: libc only).
 *
 * tl_strmap maps strings to a number: open addressing with linear probing, grown to stay at
 * most half full, so a lookup is constant time even for a hostile number of keys (a header
 * of tens of thousands of names, each made unique).  The keys are the caller's: a key must
 * outlive the map.
 */
#ifndef TL_HASH_H
#define TL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit hash of s[0..n): 8 bytes at a time, finished by tl_hash_mix. */
uint64_t tl_hash_bytes(const void *s, size_t n);

/* The bits of h mixed (MurmurHash3's finalizer): for hashing numbers. */
static inline uint64_t tl_hash_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

typedef struct tl_strmap_slot {
    const char *key; /* NULL: an empty slot */
    size_t value;
} tl_strmap_slot;

typedef struct tl_strmap {
    tl_strmap_slot *slots;
    size_t cap, n; /* cap is 0 or a power of two, at least twice n */
} tl_strmap;

/* The slot of `key`, added with value 0 when new.  The pointer is valid until the next
 * tl_strmap_get. */
tl_strmap_slot *tl_strmap_get(tl_strmap *m, const char *key);

/* The slot of `key`, or NULL when it is not in the map. */
const tl_strmap_slot *tl_strmap_find(const tl_strmap *m, const char *key);

/* Free the map's slots (not the keys); the map is then empty. */
void tl_strmap_clear(tl_strmap *m);

#endif
