/*
 * hash.c - hashing and the string map (see hash.h).
 */
#include "base/hash.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

uint64_t tl_hash_bytes(const void *p, size_t n)
{
    const char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w = 0;

    if (n >= 8) {
        const char *last = s + n - 8;
        for (; s < last; s += 8) {
            memcpy(&w, s, 8);
            h = (h ^ w) * 0x100000001b3ULL;
            h ^= h >> 29;
        }
        memcpy(&w, last, 8); /* the last 8 bytes, maybe again some of the ones above */
    } else if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        w = (uint64_t)hi << 32 | lo;
    } else if (n > 0) {
        w = (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n / 2] << 8 |
            (unsigned char)s[n - 1];
    }
    return tl_hash_mix(h ^ w);
}

static tl_strmap_slot *strmap_slot(const tl_strmap *m, const char *key)
{
    size_t i = (size_t)tl_hash_bytes(key, strlen(key)) & (m->cap - 1);
    while (m->slots[i].key && strcmp(m->slots[i].key, key) != 0)
        i = (i + 1) & (m->cap - 1);
    return &m->slots[i];
}

tl_strmap_slot *tl_strmap_get(tl_strmap *m, const char *key)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        tl_strmap bigger = {tl_xcalloc_dense(cap, sizeof(tl_strmap_slot)), cap, m->n};
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key)
                *strmap_slot(&bigger, m->slots[i].key) = m->slots[i];
        free(m->slots);
        *m = bigger;
    }
    tl_strmap_slot *s = strmap_slot(m, key);
    if (!s->key) {
        s->key = key;
        m->n++;
    }
    return s;
}

const tl_strmap_slot *tl_strmap_find(const tl_strmap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    const tl_strmap_slot *s = strmap_slot(m, key);
    return s->key ? s : NULL;
}

void tl_strmap_clear(tl_strmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
