/*
 * hash.c - hashing, the string map and the byte-key map (see hash.h).
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

void tl_bytemap_init(tl_bytemap *m, size_t key_size)
{
    memset(m, 0, sizeof *m);
    m->size = key_size;
}

static const unsigned char *bytemap_key(const tl_bytemap *m, uint32_t slot)
{
    return m->keys + (size_t)(slot - 1) * m->size;
}

static uint32_t *bytemap_slot(const tl_bytemap *m, const void *k)
{
    size_t i = (size_t)tl_hash_bytes(k, m->size) & (m->cap - 1);
    while (m->slots[i] && memcmp(bytemap_key(m, m->slots[i]), k, m->size) != 0)
        i = (i + 1) & (m->cap - 1);
    return &m->slots[i];
}

uint32_t *tl_bytemap_put(tl_bytemap *m, const void *k, int *created)
{
    if (2 * (m->n + 1) > m->cap) {
        tl_bytemap bigger = *m;
        bigger.cap = m->cap ? 2 * m->cap : 64;
        bigger.slots = tl_xcalloc_dense(bigger.cap, sizeof *bigger.slots);
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i])
                *bytemap_slot(&bigger, bytemap_key(m, m->slots[i])) = m->slots[i];
        free(m->slots);
        *m = bigger;
    }
    uint32_t *s = bytemap_slot(m, k);
    *created = *s == 0;
    if (*s == 0) {
        if (m->n == m->kcap) {
            m->kcap = m->kcap ? 2 * m->kcap : 16;
            m->keys = tl_xrealloc(m->keys, m->kcap * m->size);
            m->vals = tl_xrealloc(m->vals, m->kcap * sizeof *m->vals);
        }
        memcpy(m->keys + m->n * m->size, k, m->size);
        m->vals[m->n] = 0;
        *s = (uint32_t)++m->n;
    }
    return &m->vals[*s - 1];
}

void tl_bytemap_free(tl_bytemap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->slots);
    tl_bytemap_init(m, m->size);
}
