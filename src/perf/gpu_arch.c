/*
 * gpu_arch.c - GPU descriptions for the roofline columns (gpu_arch.h, PERF.md §8): the
 * bundled ones, and a TraceLens-style JSON file read with the trace layer's scanner.
 *
 * Sources of the bundled figures (dense peaks; TraceLens' own MI300X and MI325X files
 * hold "max achievable" figures, which PERF.md §8 gives and which are used as is):
 *  - H100 (SXM5): NVIDIA H100 Tensor Core GPU datasheet (2023) and the NVIDIA H100
 *    Tensor Core GPU Architecture whitepaper (non-tensor FP16/BF16): the datasheet's
 *    "with sparsity" tensor figures halved.  3.35 TB/s HBM3, 80 GB.
 *  - H200 (SXM): NVIDIA H200 Tensor Core GPU datasheet (2024): the same compute as H100
 *    SXM, 4.8 TB/s HBM3e, 141 GB.
 *  - B200: NVIDIA DGX/HGX B200 datasheet (2024): the 8-GPU table divided by 8, sparse
 *    tensor figures halved.  8 TB/s HBM3e, 180 GB.
 *  - MI300X, MI325X: TraceLens' bundled files, as PERF.md §8 lists them.
 *  - MI355X: AMD Instinct MI355X GPU data sheet (2025): peak dense matrix and vector
 *    figures, 8 TB/s HBM3E, 288 GB.
 */
#include "perf/gpu_arch.h"

#include "io/gzip_stream.h"
#include "trace/jscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

typedef struct bundled {
    const char *name;
    double memory_gb, mem_bw_gbps;
    const char *specs; /* "spec=tflops ..." */
} bundled;

static const bundled gpus[] = {
    {"H100", 80, 3350,
     "matrix_fp64=67 matrix_fp32=494.5 matrix_fp16=989.5 matrix_bf16=989.5 matrix_fp8=1979 matrix_int8=1979 "
     "vector_fp64=34 vector_fp32=67 vector_fp16=133.8 vector_bf16=133.8"},
    {"H200", 141, 4800,
     "matrix_fp64=67 matrix_fp32=494.5 matrix_fp16=989.5 matrix_bf16=989.5 matrix_fp8=1979 matrix_int8=1979 "
     "vector_fp64=34 vector_fp32=67 vector_fp16=133.8 vector_bf16=133.8"},
    {"B200", 180, 8000,
     "matrix_fp64=37 matrix_fp32=1125 matrix_fp16=2250 matrix_bf16=2250 matrix_fp8=4500 matrix_int8=4500 "
     "matrix_fp4=9000 vector_fp64=37 vector_fp32=75"},
    {"MI300X", 192, 5300,
     "matrix_fp16=654 matrix_bf16=708 matrix_fp32=163 matrix_fp64=81 matrix_fp8=1273 matrix_int8=2600 "
     "vector_fp16=163 vector_bf16=163 vector_fp32=81 vector_fp64=40"},
    {"MI325X", 256, 6000,
     "matrix_fp16=794 matrix_bf16=843 matrix_fp32=194 matrix_fp64=97 matrix_fp8=1519 matrix_int8=3094 "
     "vector_fp16=194 vector_bf16=194 vector_fp32=97 vector_fp64=48"},
    {"MI355X", 288, 8000,
     "matrix_fp64=78.6 matrix_fp32=157.3 matrix_fp16=2516.6 matrix_bf16=2516.6 matrix_fp8=5033.2 "
     "matrix_int8=5033.2 matrix_fp4=10066.3 vector_fp64=78.6 vector_fp32=157.3"},
};

static void from_bundled(const bundled *b, tl_gpu_arch *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", b->name);
    out->memory_gb = b->memory_gb;
    out->mem_bw_gbps = b->mem_bw_gbps;
    const char *p = b->specs;
    while (*p && out->npeaks < TL_GPU_ARCH_MAX_PEAKS) {
        const char *eq = strchr(p, '='), *sp = strchr(p, ' ');
        if (!eq)
            break;
        tl_gpu_peak *k = &out->peak[out->npeaks++];
        snprintf(k->spec, sizeof k->spec, "%.*s", (int)(eq - p), p);
        k->tflops = strtod(eq + 1, NULL);
        if (!sp)
            break;
        p = sp + 1;
    }
}

double tl_gpu_arch_peak(const tl_gpu_arch *a, const char *compute_spec)
{
    for (size_t i = 0; i < a->npeaks; i++)
        if (strcmp(a->peak[i].spec, compute_spec) == 0)
            return a->peak[i].tflops;
    return NAN;
}

/* A JSON number value (p at it), or NaN for anything else (skipped). */
static int number_or_skip(J *j, double *out)
{
    int c = j_peek(j);
    *out = NAN;
    if (c == '-' || (c >= '0' && c <= '9')) {
        jnum n;
        if (tl_j_number(j, &n) < 0)
            return -1;
        *out = n.d;
        return 0;
    }
    return tl_j_skip(j);
}

static int next_member(J *j, const char *what)
{
    int c = j_peek(j);
    if (c == ',') {
        j->p++;
        return 1;
    }
    if (c == '}') {
        j->p++;
        return 0;
    }
    if (!j->failed)
        tl_j_fail(j, j->p, "%s", what);
    return -1;
}

static int load_file(const char *path, tl_gpu_arch *out, tl_error *err)
{
    tl_instream *in = tl_instream_open(path, err);
    if (!in)
        return -1;
    J j;
    tl_j_open(&j, in, path, err);
    memset(out, 0, sizeof *out);
    out->memory_gb = out->mem_bw_gbps = NAN;
    int rc = -1;
    if (j_peek(&j) != '{') {
        tl_error_set(err, "%s: not a GPU description: the JSON text is not an object", path);
        goto done;
    }
    j.p++;
    if (j_peek(&j) == '}') {
        j.p++;
    } else {
        for (;;) {
            const char *k;
            size_t kn;
            if (j_peek(&j) != '"') {
                tl_j_fail(&j, j.p, "expected a key string");
                goto done;
            }
            if (tl_j_string(&j, &k, &kn) < 0)
                goto done;
            int which = kn == 4 && !memcmp(k, "name", 4)            ? 1
                        : kn == 9 && !memcmp(k, "memory_gb", 9)     ? 2
                        : kn == 11 && !memcmp(k, "mem_bw_gbps", 11) ? 3
                        : kn == 21 && !memcmp(k, "max_achievable_tflops", 21) ? 4
                                                                    : 0;
            if (tl_j_expect_here(&j, ':', "':'") < 0)
                goto done;
            if (which == 1 && j_peek(&j) == '"') {
                const char *s;
                size_t sn;
                if (tl_j_string(&j, &s, &sn) < 0)
                    goto done;
                snprintf(out->name, sizeof out->name, "%.*s", (int)(sn < 63 ? sn : 63), s);
            } else if (which == 2 || which == 3) {
                if (number_or_skip(&j, which == 2 ? &out->memory_gb : &out->mem_bw_gbps) < 0)
                    goto done;
            } else if (which == 4 && j_peek(&j) == '{') {
                j.p++;
                if (j_peek(&j) == '}') {
                    j.p++;
                } else {
                    for (;;) {
                        const char *s;
                        size_t sn;
                        if (j_peek(&j) != '"') {
                            tl_j_fail(&j, j.p, "expected a key string");
                            goto done;
                        }
                        if (tl_j_string(&j, &s, &sn) < 0)
                            goto done;
                        char spec[32];
                        int fits = sn < sizeof spec;
                        snprintf(spec, sizeof spec, "%.*s", (int)(fits ? sn : 0), s);
                        double v;
                        if (tl_j_expect_here(&j, ':', "':'") < 0 || number_or_skip(&j, &v) < 0)
                            goto done;
                        if (fits && !isnan(v)) {
                            if (out->npeaks == TL_GPU_ARCH_MAX_PEAKS) {
                                tl_error_set(err, "%s: more than %d peaks in max_achievable_tflops", path,
                                             TL_GPU_ARCH_MAX_PEAKS);
                                goto done;
                            }
                            tl_gpu_peak *p = &out->peak[out->npeaks++];
                            memcpy(p->spec, spec, sizeof spec);
                            p->tflops = v;
                        }
                        int r = next_member(&j, "expected ',' or '}'");
                        if (r < 0)
                            goto done;
                        if (r == 0)
                            break;
                    }
                }
            } else if (tl_j_skip(&j) < 0) {
                goto done;
            }
            int r = next_member(&j, "expected ',' or '}'");
            if (r < 0)
                goto done;
            if (r == 0)
                break;
        }
    }
    if (j_peek(&j) >= 0) {
        tl_j_fail(&j, j.p, "text after the object");
        goto done;
    }
    if (j.failed)
        goto done;
    rc = 0;
done:
    if (rc != 0 && !err->set)
        tl_error_set(err, "%s: not a valid GPU description", path);
    tl_j_close(&j);
    tl_instream_close(in);
    return rc;
}

int tl_gpu_arch_load(const char *name_or_path, tl_gpu_arch *out, tl_error *err)
{
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
        if (strcasecmp(name_or_path, gpus[i].name) == 0) {
            from_bundled(&gpus[i], out);
            return 0;
        }
    struct stat st;
    if (stat(name_or_path, &st) == 0 && S_ISREG(st.st_mode))
        return load_file(name_or_path, out, err);
    tl_error_set(err, "'%s' is neither a bundled GPU (H100, H200, B200, MI300X, MI325X, MI355X) nor a readable file",
                 name_or_path);
    return -1;
}
