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

/*
 * tl_bytemap maps keys of one fixed size, compared as bytes, to a 32-bit value: the memo
 * of what was made for a combination of pointers and numbers (a struct without padding
 * bytes), so that it is made once however often the combination comes.  Open addressing
 * as tl_strmap; the map keeps copies of its keys.
 */
typedef struct tl_bytemap {
    size_t size;         /* a key's bytes */
    unsigned char *keys; /* the keys, in order of insertion */
    uint32_t *vals;      /* their values */
    size_t n, kcap;
    uint32_t *slots;     /* a key's index + 1; 0: an empty slot */
    size_t cap;          /* 0 or a power of two, at least twice n */
} tl_bytemap;

/* An empty map of keys of key_size bytes. */
void tl_bytemap_init(tl_bytemap *m, size_t key_size);

/* The value of the key at k, added as 0 when new (*created says which).  The pointer is
 * valid until the next tl_bytemap_put. */
uint32_t *tl_bytemap_put(tl_bytemap *m, const void *k, int *created);

/* Free the map; it is then empty, for keys of the same size. */
void tl_bytemap_free(tl_bytemap *m);

#endif
