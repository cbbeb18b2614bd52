/*
 * gpu_arch.h - a GPU's peaks, for the roofline columns of the perf sheets (PERF.md §8) and
 * the summaries' "% of peak".
 *
 * The description is TraceLens' JSON shape, so a user's own file works too:
 *   { "name": "MI300X", "memory_gb": 192, "mem_bw_gbps": 5300,
 *     "max_achievable_tflops": { "matrix_bf16": 708, "vector_fp32": 81, ... } }
 * The keys of max_achievable_tflops are Compute Specs (PERF.md §3.5: `<maf>_<precision>`).
 * The struct is plain data: a caller (a test) may fill one in by hand.
 */
#ifndef TL_GPU_ARCH_H
#define TL_GPU_ARCH_H

#include "base/util.h"

#include <stddef.h>

#define TL_GPU_ARCH_MAX_PEAKS 32

typedef struct tl_gpu_peak {
    char spec[32];  /* a Compute Spec: "matrix_bf16" */
    double tflops;  /* max achievable dense TFLOPS/s */
} tl_gpu_peak;

typedef struct tl_gpu_arch {
    char name[64];
    double memory_gb;   /* NaN when absent */
    double mem_bw_gbps; /* NaN when absent */
    size_t npeaks;
    tl_gpu_peak peak[TL_GPU_ARCH_MAX_PEAKS];
} tl_gpu_arch;

/* Load `name_or_path`: a bundled GPU by name (case-insensitive: "MI300X", "H100", ...) or,
 * when it names a file, that JSON file.  0 on success; -1 with *err set (one line naming
 * the file or listing the bundled names). */
int tl_gpu_arch_load(const char *name_or_path, tl_gpu_arch *out, tl_error *err);

/* The peak TFLOPS/s for a Compute Spec, or NaN when the description has none. */
double tl_gpu_arch_peak(const tl_gpu_arch *a, const char *compute_spec);

#endif
