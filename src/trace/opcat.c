/*
 * opcat.c - the communication kernels' name rule (see opcat.h), which the reader (to keep
 * a collective's flow links) and the report sheets both ask.
 */
#include "trace/opcat.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

/* Whether the 'c' at s[i] (n bytes in all) starts or carries one of the patterns:
 * "nccl" or "rccl" with it as their first 'c', or "cross_device_reduce". */
static int comm_at(const unsigned char *s, size_t i, size_t n)
{
    if (i >= 1 && i + 2 < n && (s[i + 1] | 0x20u) == 'c' && (s[i + 2] | 0x20u) == 'l') {
        unsigned p = s[i - 1] | 0x20u;
        if (p == 'n' || p == 'r')
            return 1;
    }
    return n - i >= 19 && (s[i + 1] | 0x20u) == 'r' && strncasecmp((const char *)s + i, "cross_device_reduce", 19) == 0;
}

/* A communication kernel (TraceLens' nccl / rccl / custom collective patterns: a
 * case-insensitive search anywhere in the name).  Kernel names are long, and every GPU
 * event is asked, several times: the name is read 8 bytes at a time for the bytes that
 * are 'c' or 'C' (every pattern has one at a known place), and only those are looked at. */
int tl_trace_is_comm(const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t n = strlen(name);
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, s + i, n - i < 8 ? n - i : 8); /* the bytes past the end: 0, never a 'c' */
        /* a zero byte where the byte is 'c' or 'C' (only they are 'c' once 0x20 is set);
         * the test for zero bytes may also flag a byte above a true one: each is checked */
        uint64_t x = (w | 0x2020202020202020ULL) ^ 0x6363636363636363ULL;
        for (uint64_t hit = (x - ones) & ~x & highs; hit; hit &= hit - 1) {
            size_t k = i + (size_t)__builtin_ctzll(hit) / 8;
            if (k < n && (s[k] | 0x20u) == 'c' && comm_at(s, k, n))
                return 1;
        }
    }
    return 0;
}
