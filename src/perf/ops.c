/*
 * ops.c - the perf-model op tables (PERF.md appendices A-C, generated into the .inc
 * files beside this one) and the model families that have formulas (§4).
 */
#include "perf/perf_impl.h"

#include <stdlib.h>
#include <string.h>

static const pm_op ops[] = {
#include "perf/perf_ops.inc"
};

typedef struct bwdcat {
    const char *model, *cat;
} bwdcat;

static const bwdcat bwdcats[] = {
#include "perf/perf_bwdcat.inc"
};

static const char *const aten_names[] = {
#include "perf/aten_names.inc"
};

/* Families with formulas, sorted by name.  The others of appendix A are tier 3: they
 * have a perf model but no estimate (PERF.md §10). */
static const pm_family families[] = {
    {"BatchNorm", tl_pm_norm, "vector", 1},
    {"BatchNormBwd", tl_pm_norm, "vector", 1},
    {"GroupNorm", tl_pm_norm, "vector", 1},
    {"GroupNormBwd", tl_pm_norm, "vector", 1},
    {"InstanceNorm", tl_pm_norm, "vector", 1},
    {"InstanceNormBwd", tl_pm_norm, "vector", 1},
    {"LayerNorm", tl_pm_norm, "vector", 1},
    {"LayerNormBwd", tl_pm_norm, "vector", 1},
    {"RMSNorm", tl_pm_norm, "vector", 1},
    {"RMSNormBwd", tl_pm_norm, "vector", 1},
    {"TritonCompiled", tl_pm_triton, "vector", 1},
    {"aiter_fmha_v3_varlen_fwd", tl_pm_inference_attention, "matrix", 0},
    {"aiter_mha_batch_prefill", tl_pm_inference_attention, "matrix", 0},
    {"aiter_paged_attention_ragged", tl_pm_inference_attention, "matrix", 0},
    {"aiter_rms_norm", tl_pm_rmsnorm, "vector", 0},
    {"aiter_rmsnorm", tl_pm_rmsnorm, "vector", 0},
    {"aiter_rmsnorm2d_fwd_with_add_ck", tl_pm_rmsnorm, "vector", 0},
    {"aiter_silu_and_mul", tl_pm_unary, "vector", 0},
    {"aten__scaled_dot_product_cudnn_attention", tl_pm_sdpa, "matrix", 1},
    {"aten__scaled_dot_product_efficient_attention", tl_pm_sdpa, "matrix", 1},
    {"aten__scaled_dot_product_flash_attention", tl_pm_sdpa, "matrix", 1},
    {"aten_addmm", tl_pm_gemm, "matrix", 0},
    {"aten_baddbmm", tl_pm_gemm, "matrix", 0},
    {"aten_binary_elementwise", tl_pm_binary, "vector", 0},
    {"aten_bmm", tl_pm_gemm, "matrix", 0},
    {"aten_conv", tl_pm_conv, "matrix", 1},
    {"aten_conv_bwd", tl_pm_conv, "matrix", 1},
    {"aten_mm", tl_pm_gemm, "matrix", 0},
    {"aten_reduce", tl_pm_reduce, "vector", 1},
    {"aten_replication_pad", tl_pm_unary, "vector", 1},
    {"aten_scaled_mm", tl_pm_gemm, "matrix", 0},
    {"aten_unary_elementwise", tl_pm_unary, "vector", 0},
    {"aten_upsample_nearest", tl_pm_unary, "vector", 1},
    {"flash_attention", tl_pm_sdpa, "matrix", 1},
    {"flash_attention_backward", tl_pm_sdpa, "matrix", 1},
    {"gemm_a16w16", tl_pm_gemm, "matrix", 0},
    {"mha_varlen_fwd", tl_pm_inference_attention, "matrix", 0},
    {"mla_decode_fwd", tl_pm_inference_attention, "matrix", 0},
    {"moe_triton_unfused_down", tl_pm_moe_unfused, "matrix", 0},
    {"moe_triton_unfused_up", tl_pm_moe_unfused, "matrix", 0},
    {"pseudo_mla_prefill_fwd", tl_pm_inference_attention, "matrix", 0},
    {"sgl_kernel_rotary_embedding", tl_pm_rope, "vector", 1},
    {"sgl_kernel_silu_and_mul", tl_pm_unary, "vector", 0},
    {"sglang_store_cache", tl_pm_store_cache, "vector", 0},
    {"vllm_rocm_unquantized_gemm", tl_pm_gemm, "matrix", 0},
    {"vllm_unified_attention_with_output", tl_pm_inference_attention, "matrix", 0},
};

static int op_cmp(const void *k, const void *e) { return strcmp(k, ((const pm_op *)e)->name); }
static int fam_cmp(const void *k, const void *e) { return strcmp(k, ((const pm_family *)e)->name); }
static int bwd_cmp(const void *k, const void *e) { return strcmp(k, ((const bwdcat *)e)->model); }

const pm_op *tl_pm_op_find(const char *name) { return bsearch(name, ops, sizeof ops / sizeof *ops, sizeof *ops, op_cmp); }

const pm_family *tl_pm_family_find(const char *name)
{
    return bsearch(name, families, sizeof families / sizeof *families, sizeof *families, fam_cmp);
}

const char *tl_pm_family_key_kernel(const pm_family *fam, const tl_trace *t, const uint32_t *kern, size_t n)
{
    return fam->eval == tl_pm_gemm ? tl_pm_gemm_transpose_kernel(t, kern, n) : NULL;
}

const char *tl_pm_bwd_category(const char *model)
{
    const bwdcat *b = bsearch(model, bwdcats, sizeof bwdcats / sizeof *bwdcats, sizeof *bwdcats, bwd_cmp);
    return b ? b->cat : NULL;
}

int tl_pm_aten_known(const char *name, size_t n)
{
    size_t lo = 0, hi = sizeof aten_names / sizeof *aten_names;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *s = aten_names[mid];
        int c = strncmp(s, name, n);
        if (c == 0)
            c = s[n] ? 1 : 0;
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}
