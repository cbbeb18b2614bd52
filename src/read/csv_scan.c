/*
 * csv_scan.c - a CSV block's structural bytes as bit masks (see csv_scan.h).
 */
#include "read/csv_scan.h"

#include <stddef.h>

/* The portable scan: a table of what each byte is, a byte at a time. */
enum { IS_PLAIN = 1, IS_QUOTED = 2 };
static const unsigned char byte_class[256] = {
    [','] = IS_PLAIN, ['\r'] = IS_PLAIN, ['"'] = IS_QUOTED,
    ['\n'] = IS_PLAIN | IS_QUOTED, [0] = IS_PLAIN | IS_QUOTED,
};

static void mask_portable(const unsigned char *s, tl_csv_masks *m)
{
    uint64_t plain = 0, quoted = 0;
    for (unsigned i = 0; i < TL_CSV_BLOCK; i++) {
        unsigned c = byte_class[s[i]];
        plain |= (uint64_t)(c & IS_PLAIN) << i;
        quoted |= (uint64_t)(c >> 1) << i;
    }
    m->plain = plain;
    m->quoted = quoted;
}

#if defined(__x86_64__) && !defined(TL_NO_SIMD)
#include <immintrin.h>
#define HAVE_X86 1

/* 16 bytes' flags as the low 16 bits, per kind. */
static inline void sse2_part(const unsigned char *s, uint64_t *plain, uint64_t *quoted, unsigned shift)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
    __m128i nul = _mm_cmpeq_epi8(v, _mm_setzero_si128());
    __m128i both = _mm_or_si128(nl, nul);
    __m128i p = _mm_or_si128(both, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
    __m128i q = _mm_or_si128(both, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    *plain |= (uint64_t)(unsigned)_mm_movemask_epi8(p) << shift;
    *quoted |= (uint64_t)(unsigned)_mm_movemask_epi8(q) << shift;
}

static void mask_sse2(const unsigned char *s, tl_csv_masks *m)
{
    uint64_t plain = 0, quoted = 0;
    for (unsigned i = 0; i < TL_CSV_BLOCK; i += 16)
        sse2_part(s + i, &plain, &quoted, i);
    m->plain = plain;
    m->quoted = quoted;
}

__attribute__((target("avx2"))) static inline void avx2_part(const unsigned char *s, uint64_t *plain,
                                                             uint64_t *quoted, unsigned shift)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i nl = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'));
    __m256i nul = _mm256_cmpeq_epi8(v, _mm256_setzero_si256());
    __m256i both = _mm256_or_si256(nl, nul);
    __m256i p = _mm256_or_si256(both, _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(',')),
                                                      _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r'))));
    __m256i q = _mm256_or_si256(both, _mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')));
    *plain |= (uint64_t)(uint32_t)_mm256_movemask_epi8(p) << shift;
    *quoted |= (uint64_t)(uint32_t)_mm256_movemask_epi8(q) << shift;
}

__attribute__((target("avx2"))) static void mask_avx2(const unsigned char *s, tl_csv_masks *m)
{
    uint64_t plain = 0, quoted = 0;
    avx2_part(s, &plain, &quoted, 0);
    avx2_part(s + 32, &plain, &quoted, 32);
    m->plain = plain;
    m->quoted = quoted;
}
#else
#define HAVE_X86 0
#endif

tl_csv_mask_fn tl_csv_mask_fn_for(tl_csv_simd level, tl_csv_simd *used)
{
    tl_csv_simd got = TL_CSV_SIMD_PORTABLE;
    tl_csv_mask_fn fn = mask_portable;
#if HAVE_X86
    if (level == TL_CSV_SIMD_BEST || level == TL_CSV_SIMD_AVX2) {
        if (__builtin_cpu_supports("avx2")) {
            got = TL_CSV_SIMD_AVX2;
            fn = mask_avx2;
        } else {
            level = TL_CSV_SIMD_SSE2;
        }
    }
    if (level == TL_CSV_SIMD_SSE2) { /* every x86-64 has SSE2 */
        got = TL_CSV_SIMD_SSE2;
        fn = mask_sse2;
    }
#else
    (void)level;
#endif
    if (used)
        *used = got;
    return fn;
}

const char *tl_csv_simd_name(tl_csv_simd level)
{
    switch (level) {
    case TL_CSV_SIMD_SSE2: return "sse2";
    case TL_CSV_SIMD_AVX2: return "avx2";
    case TL_CSV_SIMD_PORTABLE: return "portable";
    default: return "best";
    }
}
