/*
 * test_trace_comm.c - the communication kernels' name rule (tl_trace_is_comm): TraceLens'
 * patterns, "nccl", "rccl" and "cross_device_reduce" anywhere in the name, any case,
 * against a plain search written here, on real kernel names and on random names over a
 * small alphabet (fixed seed) where the patterns and near misses are common, at every
 * length and offset (the rule reads 8 bytes at a time).
 */
#include "testutil.h"

#include "trace/opcat.h"

#include <ctype.h>
#include <string.h>

static int reference(const char *s)
{
    static const char *const pats[] = {"nccl", "rccl", "cross_device_reduce"};
    size_t n = strlen(s);
    for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
        size_t m = strlen(pats[p]);
        for (size_t i = 0; i + m <= n; i++) {
            size_t k = 0;
            while (k < m && tolower((unsigned char)s[i + k]) == pats[p][k])
                k++;
            if (k == m)
                return 1;
        }
    }
    return 0;
}

static void test_real_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int comm;
    } cases[] = {
        {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1},
        {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", 1},
        {"void rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)", 1},
        {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)", 1},
        {"CROSS_DEVICE_REDUCE", 1},
        {"NCCL", 1},
        {"xRcCl", 1},
        {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)", 0},
        {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", 0},
        {"cross_device_reduc", 0},
        {"ncc", 0},
        {"ccl", 0},
        {"n ccl", 0},
        {"", 0},
        {"c", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (tl_trace_is_comm(cases[i].name) != cases[i].comm)
            fail_msg("%s: expected %d", cases[i].name, cases[i].comm);
        assert_int_equal(reference(cases[i].name), cases[i].comm);
    }
}

static void test_random_names(void **state)
{
    (void)state;
    static const char alphabet[] = "nNrRcClLx_ossdevieduR";
    static const char *const seeds[] = {"nccl", "RcCl", "cross_device_reduce", "Cross_Device_Reduc", "ncc", "rcc"};
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    char buf[80];
    int hits = 0, misses = 0;
    for (int it = 0; it < 200000; it++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545f4914f6cdd1dULL;
        size_t n = (size_t)(r % 40);
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            buf[i] = alphabet[(r >> 33) % (sizeof alphabet - 1)];
        }
        buf[n] = 0;
        if ((r >> 20) % 3 == 0) { /* a pattern or a near miss at a random place */
            const char *sd = seeds[(r >> 40) % (sizeof seeds / sizeof *seeds)];
            size_t at = n ? (size_t)((r >> 8) % (n + 1)) : 0, m = strlen(sd);
            memcpy(buf + at, sd, m);
            if (at + m > n)
                buf[at + m] = 0;
        }
        int want = reference(buf);
        if (tl_trace_is_comm(buf) != want)
            fail_msg("\"%s\": expected %d", buf, want);
        hits += want;
        misses += !want;
    }
    assert_true(hits > 10000 && misses > 10000); /* both answers were asked for */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_names),
        cmocka_unit_test(test_random_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
