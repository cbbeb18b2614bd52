/*
 * textblock.h - text looked at a block of bytes at a time, for the hot loops of the writers
 * (XML escaping in xlsx_write.c, CSV quoting in csv_write.c) and of the xlsx reader (its
 * scanner's text runs and copies, the search for _xHHHH_ escapes).
 *
 * A block is 16 bytes in an SSE2 register (every x86-64), else 8 in a uint64_t (SWAR).
 * Each user builds its own flag mask (the bytes it must look at) from these parts;
 * TL_BLK_INDEX gives the first flagged byte and TL_BLK_DROP(m, d) the flags of bytes d
 * onwards.  SWAR flags are exact up to the first flagged byte but may include bytes after
 * it (a borrow carries into the next byte), so a flagged byte is to be looked at again.
 * Defining TL_NO_SIMD takes the SWAR path on x86-64 too (to test it).
 */
#ifndef TL_TEXTBLOCK_H
#define TL_TEXTBLOCK_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && !defined(TL_NO_SIMD)
#include <emmintrin.h>
#define TL_BLK_SSE2 1
#define TL_BLK 16
typedef __m128i tl_blk;
typedef unsigned tl_blk_mask;

static inline tl_blk tl_blk_load(const unsigned char *s) { return _mm_loadu_si128((const __m128i *)(const void *)s); }
static inline void tl_blk_store(char *p, tl_blk v) { _mm_storeu_si128((__m128i *)(void *)p, v); }

/* The bytes of v equal to c. */
static inline tl_blk_mask tl_blk_eq(tl_blk v, char c)
{
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}

/* The bytes of v below 0x20 or above 0x7F: control characters and non-ASCII. */
static inline tl_blk_mask tl_blk_ctl_or_high(tl_blk v)
{
    return (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
}

#define TL_BLK_INDEX(m) ((size_t)__builtin_ctz(m)) /* the first flagged byte */
#define TL_BLK_DROP(m, d) ((m) >> (d))              /* the flags of bytes d.. */
#else
#define TL_BLK_SSE2 0
#define TL_BLK 8
typedef uint64_t tl_blk;
typedef uint64_t tl_blk_mask;
#define TL_SW_ONES 0x0101010101010101u
#define TL_SW_HIGH (TL_SW_ONES * 0x80)

static inline tl_blk tl_blk_load(const unsigned char *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}
static inline void tl_blk_store(char *p, tl_blk w) { memcpy(p, &w, 8); }

/* The block with byte k of the text in bits 8k..8k+7, whatever the byte order. */
static inline uint64_t tl_sw_order(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The high bit of each byte of v that is 0 (and perhaps of bytes after one). */
static inline uint64_t tl_sw_zero(uint64_t v) { return (v - TL_SW_ONES) & ~v & TL_SW_HIGH; }

/* The bytes of (ordered) w equal to c. */
static inline uint64_t tl_sw_eq(uint64_t w, unsigned char c) { return tl_sw_zero(w ^ TL_SW_ONES * c); }

/* The bytes of (ordered) w below 0x20 (as tl_sw_zero flags zeros) or above 0x7F. */
static inline uint64_t tl_sw_ctl_or_high(uint64_t w)
{
    return ((w - TL_SW_ONES * 0x20) & ~w & TL_SW_HIGH) | (w & TL_SW_HIGH);
}

#define TL_BLK_INDEX(m) ((size_t)__builtin_ctzll(m) >> 3)
#define TL_BLK_DROP(m, d) ((m) >> 8 * (d))
#endif

#endif
