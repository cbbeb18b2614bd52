/*
 * csv_scan.h - where a CSV text's structure is: its delimiters, quotes and line ends
 * found 64 bytes at a time, as bit masks.
 *
 * The reader walks fields by jumping from one flagged byte to the next instead of
 * looking at every byte.  A block's masks are made by one of several equivalent
 * functions: AVX2 or SSE2 where the CPU has them (chosen at run time), or a portable
 * byte loop, which a TL_NO_SIMD build always takes and which tests and the fuzz target
 * set against the others on the same input (they must find the same bytes).
 */
#ifndef TL_CSV_SCAN_H
#define TL_CSV_SCAN_H

#include <stdint.h>

#define TL_CSV_BLOCK 64

/* The bytes of one block a field scan stops at, bit k for byte k. */
typedef struct tl_csv_masks {
    uint64_t plain;  /* ',' '\n' '\r' NUL: the end of an unquoted field (or an error) */
    uint64_t quoted; /* '"' '\n' NUL: what a quoted field's scan must look at */
} tl_csv_masks;

typedef void (*tl_csv_mask_fn)(const unsigned char *block, tl_csv_masks *m);

/* How a block is scanned.  BEST is the fastest the CPU has. */
typedef enum tl_csv_simd {
    TL_CSV_SIMD_BEST = 0,
    TL_CSV_SIMD_PORTABLE,
    TL_CSV_SIMD_SSE2,
    TL_CSV_SIMD_AVX2,
} tl_csv_simd;

/* The scan of `level`, or the best one below it when this CPU or build lacks it;
 * *used (may be NULL) is told which one that is. */
tl_csv_mask_fn tl_csv_mask_fn_for(tl_csv_simd level, tl_csv_simd *used);

/* "portable", "sse2", "avx2" ("best" never: it names the one it stands for). */
const char *tl_csv_simd_name(tl_csv_simd level);

#endif
