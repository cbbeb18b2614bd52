/*
 * test_perf.c - the perf models (PERF.md) on hand-made one-op traces: each family's
 * parameters, flops and bytes (worked out by hand in the comments), the parameter text
 * rules of §5.2, the fwd/bwd split, unified_perf_summary's traversal and synthetic ops,
 * the GPU descriptions and roofline columns, and hostile shapes (no row, no crash).
 *
 * Every op's kernel runs 10 µs, so TFLOPS/s = GFLOPS / 1e3 / 1e-5 and TB/s = bytes /
 * 1e12 / 1e-5.
 */
#include "testutil.h"

#include "perf/gpu_arch.h"
#include "perf/perf.h"
#include "perf/pyval.h"
#include "trace/trace.h"

#include <math.h>

typedef struct rep {
    tl_trace *t;
    tl_results r;
    tl_arena arena;
} rep;

/* A trace of `ops` (a JSON fragment of cpu_op events, single quotes for double) and one
 * kernel of 10 µs launched at ts 10 from within the first op (which spans 0..100). */
static void build_arch(rep *s, const char *ops, const char *kernel, const tl_gpu_arch *arch)
{
    static char buf[1 << 16], frag[1 << 15];
    size_t n = strlen(ops);
    assert_true(n < sizeof frag);
    for (size_t i = 0; i <= n; i++)
        frag[i] = ops[i] == '\'' ? '"' : ops[i];
    snprintf(buf, sizeof buf,
             "{\"traceEvents\":[%s,"
             "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
             "\"args\":{\"correlation\":1}},"
             "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":10},"
             "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":20,\"bp\":\"e\"},"
             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":20.0,\"dur\":10,"
             "\"args\":{\"correlation\":1,\"stream\":7}}]}",
             frag, kernel);
    tl_error err = {0};
    memset(s, 0, sizeof *s);
    tl_arena_init(&s->arena);
    s->t = tl_trace_load_mem(buf, strlen(buf), "t.json", &err);
    if (!s->t)
        fail_msg("%s", err.msg);
    assert_int_equal(tl_perf_sheets(s->t, arch, &s->arena, &s->r, &err), 0);
}

static void build(rep *s, const char *ops) { build_arch(s, ops, "void at::native::elementwise_kernel<4>", NULL); }

/* One op named `name` with args `args` spanning 0..100 on thread (1, 1). */
#define OP(name, args) "{'ph':'X','cat':'cpu_op','name':'" name "','pid':1,'tid':1,'ts':0,'dur':100,'args':" args "}"

static void drop(rep *s)
{
    tl_results_free(&s->r);
    tl_arena_free(&s->arena);
    tl_trace_free(s->t);
}

static const tl_table *sheet(const rep *s, const char *name)
{
    for (size_t i = 0; i < s->r.n; i++)
        if (strcmp(s->r.items[i].name, name) == 0)
            return s->r.items[i].table;
    return NULL;
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    if (c < 0)
        fail_msg("no column '%s'", col);
    assert_true(row < t->nrows);
    return &t->cols[c].cells[row];
}

static double num(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *x = cell(t, col, row);
    return x->kind == TL_FLOAT ? x->v.f : x->kind == TL_INT ? (double)x->v.i : NAN;
}

static const char *txt(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *x = cell(t, col, row);
    return x->kind == TL_STR ? x->v.s : x->kind == TL_BOOL ? (x->v.b ? "True" : "False") : "";
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want) + 1e-15))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* ---- GEMM ------------------------------------------------------------------------------ */

static void test_gemm_mm(void **state)
{
    (void)state;
    rep s;
    /* M=64, K=128, N=32: flops = 2·64·32·128 = 524288; bytes = (64·128 + 128·32 + 64·32)·2
     * = (8192 + 4096 + 2048)·2 = 28672 */
    build(&s, OP("aten::mm", "{'Input Dims':[[64,128],[128,32]],'Input type':['c10::BFloat16','c10::BFloat16'],"
                             "'Input Strides':[[128,1],[32,1]],'Concrete Inputs':['','']}"));
    const tl_table *g = sheet(&s, "GEMM");
    assert_non_null(g);
    assert_int_equal(g->nrows, 1);
    near(num(g, "param: M", 0), 64);
    near(num(g, "param: N", 0), 32);
    near(num(g, "param: K", 0), 128);
    assert_string_equal(txt(g, "param: bias", 0), "False");
    assert_string_equal(txt(g, "param: stride_A", 0), "(128, 1)");
    assert_string_equal(txt(g, "param: dtype_A_B", 0), "('c10::BFloat16', 'c10::BFloat16')");
    near(num(g, "param: B", 0), 1);
    near(num(g, "GFLOPS_first", 0), 524288 / 1e9);
    near(num(g, "Data Moved (MB)_first", 0), 28672 / 1048576.0);
    near(num(g, "FLOPS/Byte_first", 0), 524288.0 / 28672);
    near(num(g, "TFLOPS/s_mean", 0), 524288 / 1e9 / 1e3 / 1e-5);
    near(num(g, "TB/s_mean", 0), 28672 / 1e12 / 1e-5);
    near(num(g, "Kernel Time (µs)_sum", 0), 10);
    assert_string_equal(txt(g, "Compute Spec", 0), "matrix_bf16");
    assert_string_equal(txt(g, "Input Dims_first", 0), "[[64, 128], [128, 32]]");
    drop(&s);
}

static void test_gemm_addmm_baddbmm(void **state)
{
    (void)state;
    rep s;
    /* addmm (float): flops = 2·64·32·128 + 64·32 = 526336; bytes = (8192 + 4096 + 2048 + 32)·4
     * = 57472.  baddbmm (half, B = 4): 4·526336 = 2105344 flops, 4·(14368·2) = 114944 bytes */
    build(&s, OP("aten::addmm", "{'Input Dims':[[32],[64,128],[128,32]],'Input type':['float','float','float'],"
                                "'Input Strides':[[1],[128,1],[32,1]],'Concrete Inputs':['','','']}") ","
              "{'ph':'X','cat':'cpu_op','name':'aten::baddbmm','pid':1,'tid':1,'ts':200,'dur':10,'args':"
              "{'Input Dims':[[4,64,32],[4,64,128],[4,128,32]],'Input type':['c10::Half','c10::Half','c10::Half'],"
              "'Input Strides':[[0,32,1],[8192,128,1],[4096,32,1]],'Concrete Inputs':['','','','1','1']}}");
    const tl_table *g = sheet(&s, "GEMM");
    assert_non_null(g);
    assert_int_equal(g->nrows, 2);
    /* row 0 has the kernel time; the baddbmm has none (0 µs, NaN rates) */
    assert_string_equal(txt(g, "name", 0), "aten::addmm");
    near(num(g, "GFLOPS_first", 0), 526336 / 1e9);
    near(num(g, "Data Moved (MB)_first", 0), 57472 / 1048576.0);
    assert_string_equal(txt(g, "Compute Spec", 0), "matrix_fp32");
    assert_string_equal(txt(g, "name", 1), "aten::baddbmm");
    near(num(g, "GFLOPS_first", 1), 2105344 / 1e9);
    near(num(g, "Data Moved (MB)_first", 1), 114944 / 1048576.0);
    assert_true(isnan(num(g, "TFLOPS/s_mean", 1)));
    assert_string_equal(txt(g, "Compute Spec", 1), "matrix_fp16");
    /* the baddbmm's B comes first, the mm-like B = 1 is appended: B is a column of both */
    near(num(g, "param: B", 1), 4);
    drop(&s);
}

static void test_gemm_scaled_fp8(void **state)
{
    (void)state;
    rep s;
    /* fp8 in (1 byte), 2-byte out: bytes = 64·128 + 128·32 + 64·32·2 = 16384; four Dims
     * entries: no bias */
    build(&s, OP("aten::_scaled_mm",
                 "{'Input Dims':[[64,128],[128,32],[],[]],'Input type':['c10::Float8_e4m3fn','c10::Float8_e4m3fn','float','float'],"
                 "'Input Strides':[[128,1],[1,128],[],[]],'Concrete Inputs':['','','','']}"));
    const tl_table *g = sheet(&s, "GEMM");
    assert_non_null(g);
    near(num(g, "Data Moved (MB)_first", 0), 16384 / 1048576.0);
    near(num(g, "GFLOPS_first", 0), 524288 / 1e9);
    assert_string_equal(txt(g, "Compute Spec", 0), "matrix_fp8");
    drop(&s);
}

static void test_gemm_transpose(void **state)
{
    (void)state;
    rep s;
    /* an nvjet kernel's last piece "TN": (True, False) */
    build_arch(&s, OP("aten::mm", "{'Input Dims':[[8,8],[8,8]],'Input type':['float','float'],"
                                  "'Input Strides':[[8,1],[8,1]],'Concrete Inputs':['','']}"),
               "nvjet_tst_64x8_64x16_4x1_v_bz_TN", NULL);
    const tl_table *g = sheet(&s, "GEMM");
    assert_non_null(g);
    assert_string_equal(txt(g, "param: transpose", 0), "(True, False)");
    drop(&s);
    build_arch(&s, OP("aten::mm", "{'Input Dims':[[8,8],[8,8]],'Input type':['float','float'],"
                                  "'Input Strides':[[8,1],[8,1]],'Concrete Inputs':['','']}"),
               "Cijk_Alik_Bljk_HHS_BH_MT64", NULL);
    g = sheet(&s, "GEMM");
    assert_string_equal(txt(g, "param: transpose", 0), "(True, False)");
    drop(&s);
}

/* ---- elementwise ------------------------------------------------------------------------- */

static void test_binary(void **state)
{
    (void)state;
    rep s;
    /* add with a Python scalar: n_out = n1 = 512, n2 = prod(()) = 1 at 4 bytes (Scalar);
     * out bytes = b1 (shape 2 is empty): 512·2 + 1·4 + 512·2 = 2052 */
    build(&s, OP("aten::add", "{'Input Dims':[[16,32],[],[]],'Input type':['c10::BFloat16','Scalar','Scalar'],"
                              "'Input Strides':[[32,1],[],[]],'Concrete Inputs':['','1','1']}"));
    const tl_table *b = sheet(&s, "BinaryElementwise");
    assert_non_null(b);
    near(num(b, "GFLOPS_first", 0), 512 / 1e9);
    near(num(b, "Data Moved (MB)_first", 0), 2052 / 1048576.0);
    assert_string_equal(txt(b, "param: shape_in2", 0), "()");
    assert_string_equal(txt(b, "param: dtype_in1_in2_out", 0), "('c10::BFloat16', 'Scalar', None)");
    assert_string_equal(txt(b, "Compute Spec", 0), "vector_bf16");
    drop(&s);
    /* mul_ broadcasting (8,1,4) with (3,1) -> (8,3,4): 96 out; 32·4 + 3·4 + 96·4 = 524 */
    build(&s, OP("aten::mul_", "{'Input Dims':[[8,1,4],[3,1]],'Input type':['float','float'],"
                               "'Input Strides':[[4,4,1],[1,1]],'Concrete Inputs':['','']}"));
    b = sheet(&s, "BinaryElementwise");
    assert_non_null(b);
    near(num(b, "GFLOPS_first", 0), 96 / 1e9);
    near(num(b, "Data Moved (MB)_first", 0), 524 / 1048576.0);
    drop(&s);
    /* shapes that do not broadcast: no row */
    build(&s, OP("aten::div", "{'Input Dims':[[2,3],[4,3]],'Input type':['float','float'],"
                              "'Input Strides':[[3,1],[3,1]],'Concrete Inputs':['','']}"));
    assert_null(sheet(&s, "BinaryElementwise"));
    drop(&s);
}

static void test_unary(void **state)
{
    (void)state;
    rep s;
    /* copy_ float -> bf16 of 32 elements: 32·4 + 32·2 = 192 bytes, 32 flops */
    build(&s, OP("aten::copy_", "{'Input Dims':[[4,8],[4,8],[]],'Input type':['c10::BFloat16','float','Scalar'],"
                                "'Input Strides':[[8,1],[8,1],[]],'Concrete Inputs':['','','False']}"));
    const tl_table *u = sheet(&s, "UnaryElementwise");
    assert_non_null(u);
    near(num(u, "GFLOPS_first", 0), 32 / 1e9);
    near(num(u, "Data Moved (MB)_first", 0), 192 / 1048576.0);
    drop(&s);
    /* aten::copy without a second input: the out dtype is none, b_out = b_in: 32·4·2 = 256 */
    build(&s, OP("aten::copy", "{'Input Dims':[[4,8]],'Input type':['float'],'Input Strides':[[8,1]],"
                               "'Concrete Inputs':['']}"));
    u = sheet(&s, "UnaryElementwise");
    assert_non_null(u);
    near(num(u, "Data Moved (MB)_first", 0), 256 / 1048576.0);
    assert_string_equal(txt(u, "param: dtype_in_out", 0), "('float', None)");
    assert_string_equal(txt(u, "param: stride_output", 0), "None");
    drop(&s);
    /* replication_pad2d of (1, 2, 4, 4) by [1, 1, 2, 2]: out (1, 2, 8, 6) = 96 elements;
     * bytes = 32·2 + 96·2 = 256 */
    build(&s, OP("aten::replication_pad2d", "{'Input Dims':[[1,2,4,4],[]],'Input type':['c10::BFloat16',''],"
                                            "'Input Strides':[[32,16,4,1],[]],'Concrete Inputs':['','[1, 1, 2, 2]']}"));
    u = sheet(&s, "UnaryElementwise");
    assert_non_null(u);
    assert_string_equal(txt(u, "param: output_shape", 0), "(1, 2, 8, 6)");
    assert_string_equal(txt(u, "param: padding", 0), "[1, 1, 2, 2]");
    near(num(u, "GFLOPS_first", 0), 96 / 1e9);
    near(num(u, "Data Moved (MB)_first", 0), 256 / 1048576.0);
    drop(&s);
    /* upsample_nearest3d (1, 2, 2, 2, 2) to [4, 4, 4]: 128 out, 16·4 + 128·4 = 576 bytes */
    build(&s, OP("aten::upsample_nearest3d", "{'Input Dims':[[1,2,2,2,2],[],[]],'Input type':['float','',''],"
                                             "'Input Strides':[[16,8,4,2,1],[],[]],'Concrete Inputs':['','[4, 4, 4]','']}"));
    u = sheet(&s, "UnaryElementwise");
    assert_non_null(u);
    assert_string_equal(txt(u, "param: output_shape", 0), "(1, 2, 4, 4, 4)");
    near(num(u, "Data Moved (MB)_first", 0), 576 / 1048576.0);
    drop(&s);
    /* an empty output size fails */
    build(&s, OP("aten::upsample_nearest1d", "{'Input Dims':[[1,2,2],[],[]],'Input type':['float','',''],"
                                             "'Input Strides':[[4,2,1],[],[]],'Concrete Inputs':['','','']}"));
    assert_null(sheet(&s, "UnaryElementwise"));
    drop(&s);
}

/* ---- normalization ----------------------------------------------------------------------- */

static void test_layer_norm(void **state)
{
    (void)state;
    rep s;
    /* N = 2·8·768 = 12288, Ch = 768, affine and bias present, training:
     * flops = 3·768 + 3·12288 + 3·768 + 2·12288 = 66048;
     * W = 2 + (1 + 1) + 2 = 6: bytes = 12288·2·2 + 6·768·2 = 58368 */
    build(&s, OP("aten::native_layer_norm", "{'Input Dims':[[2,8,768],[],[768],[768],[]],"
                                            "'Input type':['c10::BFloat16','','c10::BFloat16','c10::BFloat16','Scalar'],"
                                            "'Input Strides':[[6144,768,1],[],[1],[1],[]],"
                                            "'Concrete Inputs':['','[768]','','','1e-05']}"));
    const tl_table *n = sheet(&s, "Normalization");
    assert_non_null(n);
    near(num(n, "GFLOPS_first", 0), 66048 / 1e9);
    near(num(n, "Data Moved (MB)_first", 0), 58368 / 1048576.0);
    near(num(n, "param: num_channels", 0), 768);
    assert_int_equal(cell(n, "param: num_channels", 0)->kind, TL_INT);
    drop(&s);
}

/* LayerNormBwd reads its input at index 1, its channels from C[2] and affine and bias
 * from the output mask C[7]: [True, True, False] is affine without bias.  N = 12288,
 * Ch = 768, e = 16, training, mask[0]: per channel = 4·16 + 5·16 = 144, flops = 110592;
 * bytes = 12288·2 + 12288·2·2 + 768·2 + (768·2 + 768·2·1) = 78336 */
static void test_layer_norm_backward(void **state)
{
    (void)state;
    rep s;
    build(&s, OP("aten::native_layer_norm_backward",
                 "{'Input Dims':[[2,8,768],[2,8,768],[],[2,8,1],[2,8,1],[768],[768],[]],"
                 "'Input type':['c10::BFloat16','c10::BFloat16','','float','float','c10::BFloat16','c10::BFloat16',''],"
                 "'Input Strides':[[768,1536,1],[6144,768,1],[],[8,1,1],[8,1,1],[1],[1],[]],"
                 "'Concrete Inputs':['','','[768]','','','','','[True, True, False]']}"));
    const tl_table *n = sheet(&s, "Normalization");
    assert_non_null(n);
    assert_int_equal(n->nrows, 1);
    near(num(n, "GFLOPS_first", 0), 110592 / 1e9);
    near(num(n, "Data Moved (MB)_first", 0), 78336 / 1048576.0);
    near(num(n, "param: num_channels", 0), 768);
    assert_string_equal(txt(n, "param: has_bias", 0), "False");
    assert_string_equal(txt(n, "param: is_affine", 0), "True");
    assert_string_equal(txt(n, "param: output_mask", 0), "[True, True, False]");
    /* the input's strides, not the gradient's (a transposed view here) */
    assert_string_equal(txt(n, "param: stride_input", 0), "(6144, 768, 1)");
    drop(&s);
}

static void test_group_norm_text_rule(void **state)
{
    (void)state;
    rep s;
    /* GroupNorm: Ch = 32 (an int); GroupNormBwd: Ch = 32 / int('8') = 4.0 (a double): the
     * column is then all doubles (§5.2).  GroupNormBwd with N = 1024, Ch = 4.0, e = 256,
     * mask [True, True, True], training: per channel = 4·256 + 5·256 = 2304, flops = 9216;
     * bytes = 1024·2 + 1024·2·2 + 4·2 + (4·2 + 4·2·2) = 6176 */
    build(&s, OP("aten::group_norm", "{'Input Dims':[[2,32,4,4],[],[32],[32],[]],"
                                     "'Input type':['c10::BFloat16','','c10::BFloat16','c10::BFloat16','Scalar'],"
                                     "'Input Strides':[[512,16,4,1],[],[1],[1],[]],"
                                     "'Concrete Inputs':['','8','','','1e-05']}") ","
              "{'ph':'X','cat':'cpu_op','name':'aten::native_group_norm_backward','pid':1,'tid':1,'ts':200,'dur':10,"
              "'args':{'Input Dims':[[2,32,4,4],[2,32,4,4],[2,8],[2,8],[32],[32],[],[],[],[]],"
              "'Input type':['c10::BFloat16','c10::BFloat16','float','float','c10::BFloat16','c10::BFloat16','','','',''],"
              "'Input Strides':[[512,16,4,1],[512,16,4,1],[8,1],[8,1],[1],[1],[],[],[],[]],"
              "'Concrete Inputs':['','','','','','','2','32','8','[True, True, True]']}}");
    const tl_table *n = sheet(&s, "Normalization");
    assert_non_null(n);
    assert_int_equal(n->nrows, 2);
    assert_string_equal(txt(n, "name", 1), "aten::native_group_norm_backward");
    assert_int_equal(cell(n, "param: num_channels", 0)->kind, TL_FLOAT);
    near(num(n, "param: num_channels", 0), 32);
    near(num(n, "param: num_channels", 1), 4);
    near(num(n, "GFLOPS_first", 1), 9216 / 1e9);
    near(num(n, "Data Moved (MB)_first", 1), 6176 / 1048576.0);
    /* output_mask: only the backward row has it; the forward row reads nan */
    assert_string_equal(txt(n, "param: output_mask", 0), "nan");
    assert_string_equal(txt(n, "param: output_mask", 1), "[True, True, True]");
    /* the forward row's Kernel Time is a double: its GPU event's ts is written as one
     * (TRACES.md §4.6; written as integers, the column would be int64) */
    assert_int_equal(cell(n, "Kernel Time (µs)_sum", 1)->kind, TL_FLOAT);
    drop(&s);
}

static void test_batch_norm_and_instance_bwd(void **state)
{
    (void)state;
    rep s;
    /* batch_norm (10, 4, 2, 2), training ('True' is non-empty): N = 160, Ch = 4;
     * flops = 12 + 480 + 12 + 320 = 824; W = 2 + 2 + 2 = 6: bytes = 160·4·2 + 6·4·4 = 1376.
     * instance_norm_backward is not modelled: no row */
    build(&s, OP("aten::native_batch_norm", "{'Input Dims':[[10,4,2,2],[4],[4],[4],[4],[],[],[]],"
                                            "'Input type':['float','float','float','float','float','Scalar','Scalar','Scalar'],"
                                            "'Input Strides':[[16,4,2,1],[1],[1],[1],[1],[],[],[]],"
                                            "'Concrete Inputs':['','','','','','True','0.1','1e-05']}") ","
              "{'ph':'X','cat':'cpu_op','name':'aten::native_instance_norm_backward','pid':1,'tid':1,'ts':200,'dur':10,"
              "'args':{'Input Dims':[[1]],'Input type':['float'],'Input Strides':[[1]],'Concrete Inputs':['']}}");
    const tl_table *n = sheet(&s, "Normalization");
    assert_non_null(n);
    assert_int_equal(n->nrows, 1);
    near(num(n, "GFLOPS_first", 0), 824 / 1e9);
    near(num(n, "Data Moved (MB)_first", 0), 1376 / 1048576.0);
    assert_string_equal(txt(n, "Compute Spec", 0), "vector_fp32");
    drop(&s);
}

/* ---- reduce, SDPA, CONV ------------------------------------------------------------------------ */

static void test_reduce(void **state)
{
    (void)state;
    rep s;
    /* sum of 32 floats to one: 32 flops, 32·4 + 4 = 132 bytes; amax -> max; cumsum keeps
     * the element count (32·4·2 = 256 bytes) */
    build(&s, OP("aten::sum", "{'Input Dims':[[4,8],[]],'Input type':['float','Scalar'],'Input Strides':[[8,1],[]],"
                              "'Concrete Inputs':['','']}") ","
              "{'ph':'X','cat':'cpu_op','name':'aten::amax','pid':1,'tid':1,'ts':200,'dur':10,"
              "'args':{'Input Dims':[[4,8]],'Input type':['float'],'Input Strides':[[8,1]],'Concrete Inputs':['']}},"
              "{'ph':'X','cat':'cpu_op','name':'aten::cumsum','pid':1,'tid':1,'ts':300,'dur':10,"
              "'args':{'Input Dims':[[4,8]],'Input type':['float'],'Input Strides':[[8,1]],'Concrete Inputs':['']}}");
    const tl_table *r = sheet(&s, "Reduce_fwd");
    assert_non_null(r);
    assert_int_equal(r->nrows, 3);
    assert_string_equal(txt(r, "name", 0), "aten::sum");
    near(num(r, "Data Moved (MB)_first", 0), 132 / 1048576.0);
    assert_string_equal(txt(r, "param: reduce_type", 0), "sum");
    assert_string_equal(txt(r, "param: dtype_in_out", 0), "('float', None)");
    assert_string_equal(txt(r, "param: reduce_type", 1), "max");
    near(num(r, "param: num_output_elems", 2), 32);
    near(num(r, "Data Moved (MB)_first", 2), 256 / 1048576.0);
    assert_null(sheet(&s, "Reduce_bwd"));
    drop(&s);
}

static void test_sdpa(void **state)
{
    (void)state;
    rep s;
    /* B=2, H=4, N=128, d=64, causal: flops = 2·(2·4·2·128·128·64) / 2 = 16777216 (halved
     * from 33554432); bytes = 2·(4 tensors · 2·128·4·64) = 524288 */
    build(&s, OP("aten::_scaled_dot_product_flash_attention",
                 "{'Input Dims':[[2,4,128,64],[2,4,128,64],[2,4,128,64],[],[],[],[]],"
                 "'Input type':['c10::BFloat16','c10::BFloat16','c10::BFloat16','Scalar','Scalar','',''],"
                 "'Input Strides':[[32768,8192,64,1],[32768,8192,64,1],[32768,8192,64,1],[],[],[],[]],"
                 "'Concrete Inputs':['','','','0.0','True','False','']}"));
    const tl_table *t = sheet(&s, "SDPA_fwd");
    assert_non_null(t);
    near(num(t, "GFLOPS_first", 0), 33554432 / 2 / 1e9);
    near(num(t, "Data Moved (MB)_first", 0), 524288 / 1048576.0);
    assert_string_equal(txt(t, "param: causal", 0), "True");
    assert_string_equal(txt(t, "param: flash_impl", 0), "True");
    near(num(t, "param: dropout", 0), 0.0);
    drop(&s);
    /* efficient attention, not causal, N_Q != N_KV: B=1,H=2,NQ=16,NKV=32,d=8:
     * flops = 1·2·2·16·32·8·2 = 32768; bytes = 2·(256 + 512 + 512 + 256) = 3072 */
    build(&s, OP("aten::_scaled_dot_product_efficient_attention",
                 "{'Input Dims':[[1,2,16,8],[1,2,32,8],[1,2,32,8],[],[],[],[]],"
                 "'Input type':['float','float','float','','','',''],"
                 "'Input Strides':[[256,128,8,1],[512,256,8,1],[512,256,8,1],[],[],[],[]],"
                 "'Concrete Inputs':['','','','','','0.1','False']}"));
    t = sheet(&s, "SDPA_fwd");
    assert_non_null(t);
    near(num(t, "GFLOPS_first", 0), 32768 / 1e9);
    near(num(t, "Data Moved (MB)_first", 0), 3072 / 1048576.0);
    near(num(t, "param: dropout", 0), 0.1);
    assert_string_equal(txt(t, "param: flash_impl", 0), "False");
    drop(&s);
}

static void test_conv(void **state)
{
    (void)state;
    rep s;
    /* resnet's 3x3 conv: x = out = (10,64,56,56), w = (64,64,3,3): flops = 2007040·2·576 =
     * 2312110080; bytes = (2007040 + 36864 + 2007040)·2 = 8101888 */
    build(&s, OP("aten::convolution", "{'Input Dims':[[10,64,56,56],[64,64,3,3],[],[],[],[],[],[],[]],"
                                      "'Input type':['c10::BFloat16','c10::BFloat16','','','','','','',''],"
                                      "'Input Strides':[[200704,3136,56,1],[576,9,3,1],[],[],[],[],[],[],[]],"
                                      "'Concrete Inputs':['','','','[1, 1]','[1, 1]','[1, 1]','False','[0, 0]','1']}"));
    const tl_table *c = sheet(&s, "CONV_fwd");
    assert_non_null(c);
    near(num(c, "GFLOPS_first", 0), 2.31211008);
    near(num(c, "Data Moved (MB)_first", 0), 7.7265625);
    assert_string_equal(txt(c, "param: stride", 0), "(1, 1)");
    assert_string_equal(txt(c, "param: convNd", 0), "conv2d");
    drop(&s);
    /* a transposed 1-d conv: x = (1,4,10), w = (4,2,3), stride 2, padding 1, output_padding 1:
     * o = 9·2 − 2 + 2 + 1 + 1 = 20, out = (1,2,20); flops = prod(x)·2·prod(w[1:]) = 40·2·6 =
     * 480; bytes = (40 + 24 + 40)·2 = 208 */
    build(&s, OP("aten::convolution", "{'Input Dims':[[1,4,10],[4,2,3],[],[],[],[],[],[],[]],"
                                      "'Input type':['c10::BFloat16','c10::BFloat16','','','','','','',''],"
                                      "'Input Strides':[[40,10,1],[6,3,1],[],[],[],[],[],[],[]],"
                                      "'Concrete Inputs':['','','','[2]','[1]','[1]','True','[1]','1']}"));
    c = sheet(&s, "CONV_fwd");
    assert_non_null(c);
    near(num(c, "GFLOPS_first", 0), 480 / 1e9);
    near(num(c, "Data Moved (MB)_first", 0), 208 / 1048576.0);
    assert_string_equal(txt(c, "param: convNd", 0), "conv1d");
    drop(&s);
    /* convolution_backward lands in CONV_bwd (§6): resnet's check, 4.62422016 GFLOPS,
     * 15.453125 MB; bias [] prints as [] */
    build(&s, OP("aten::convolution_backward",
                 "{'Input Dims':[[10,64,56,56],[10,64,56,56],[64,64,3,3],[],[],[],[],[],[],[],[]],"
                 "'Input type':['c10::BFloat16','c10::BFloat16','c10::BFloat16','','','','','','','',''],"
                 "'Input Strides':[[200704,3136,56,1],[200704,3136,56,1],[576,9,3,1],[],[],[],[],[],[],[],[]],"
                 "'Concrete Inputs':['','','','[0]','[1, 1]','[1, 1]','[1, 1]','False','[0, 0]','1','[True, True, False]']}"));
    assert_null(sheet(&s, "CONV_fwd"));
    c = sheet(&s, "CONV_bwd");
    assert_non_null(c);
    near(num(c, "GFLOPS_first", 0), 4.62422016);
    near(num(c, "Data Moved (MB)_first", 0), 15.453125);
    assert_string_equal(txt(c, "param: bias", 0), "[]");
    drop(&s);
}

/* ---- unified_perf_summary ------------------------------------------------------------------- */

static void test_unified(void **state)
{
    (void)state;
    rep s;
    /* aten::linear (no model) holds aten::matmul (no model) which holds aten::addmm (a
     * model) launching "gemm": the addmm is collected (linear has a perf-model descendant,
     * so it is not collected as a leaf although it launches "bias" itself, which becomes a
     * synthetic op of its launcher);  "lonely", launched with no cpu_op above, a
     * synthetic op named after its runtime event.  15 events: the synthetic UIDs are
     * 15 (the runtime bucket first) and 16. */
    static const char json[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::matmul\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":60,\"args\":{}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":50,\"args\":"
        "{\"Input Dims\":[[32],[64,128],[128,32]],\"Input type\":[\"float\",\"float\",\"float\"],"
        "\"Input Strides\":[[1],[128,1],[32,1]],\"Concrete Inputs\":[\"\",\"\",\"\"]}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
        "\"args\":{\"correlation\":1}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":10},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":20,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":10,"
        "\"args\":{\"correlation\":1,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":5,"
        "\"args\":{\"correlation\":3}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":3,\"pid\":1,\"tid\":1,\"ts\":70},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":3,\"pid\":0,\"tid\":7,\"ts\":80,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bias\",\"pid\":0,\"tid\":7,\"ts\":80,\"dur\":6,"
        "\"args\":{\"correlation\":3,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":5,"
        "\"args\":{\"correlation\":2}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":1,\"tid\":1,\"ts\":200},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":0,\"tid\":7,\"ts\":210,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"lonely\",\"pid\":0,\"tid\":7,\"ts\":210,\"dur\":4,"
        "\"args\":{\"correlation\":2,\"stream\":7}}]}";
    tl_error err = {0};
    memset(&s, 0, sizeof s);
    tl_arena_init(&s.arena);
    s.t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    assert_non_null(s.t);
    assert_int_equal(tl_perf_sheets(s.t, NULL, &s.arena, &s.r, &err), 0);
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_non_null(u);
    assert_int_equal(u->nrows, 3);
    assert_string_equal(txt(u, "name", 0), "aten::addmm");
    assert_string_equal(txt(u, "op category", 0), "GEMM");
    assert_string_equal(txt(u, "has_perf_model", 0), "True");
    near(num(u, "GFLOPS", 0), 526336 / 1e9);
    assert_string_equal(txt(u, "perf_params", 0),
                        "{'M': 64, 'N': 32, 'K': 128, 'bias': True, 'stride_A': (128, 1), 'stride_B': (32, 1), "
                        "'dtype_A_B': ('float', 'float'), 'B': 1}");
    assert_string_equal(txt(u, "name", 1), "aten::linear->bias (Synthetic Op)");
    near(num(u, "ex_UID", 1), 16);
    assert_string_equal(txt(u, "name", 2), "cudaLaunchKernel->lonely (Synthetic Op)");
    near(num(u, "ex_UID", 2), 15);
    assert_string_equal(txt(u, "has_perf_model", 2), "False");
    near(num(u, "Kernel Time (µs)_sum", 2), 4);
    near(num(u, "Percentage (%)", 0), 10.0 / 20 * 100);
    drop(&s);
}

/* An addmm on thread tid at ts, launching its gemm (correlation c) at t1, the kernel at tk. */
#define ADDMM_ON(tid, ts, t1, tk, c)                                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts            \
    ",\"dur\":50,\"args\":{\"Input Dims\":[[32],[64,128],[128,32]],\"Input type\":[\"float\",\"float\",\"float\"],"   \
    "\"Input Strides\":[[1],[128,1],[32,1]],\"Concrete Inputs\":[\"\",\"\",\"\"]}},"                                 \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #t1 \
    ",\"dur\":5,\"args\":{\"correlation\":" #c "}},"                                                                  \
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":" #c ",\"pid\":1,\"tid\":" #tid ",\"ts\":" #t1 "}," \
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":" #c ",\"pid\":0,\"tid\":7,\"ts\":" #tk            \
    ",\"bp\":\"e\"},"                                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":" #tk ",\"dur\":10,"          \
    "\"args\":{\"correlation\":" #c ",\"stream\":7}}"
#define THREAD_NAME(tid, nm) \
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" #tid ",\"args\":{\"name\":\"" nm "\"}}"

/* unified_perf_summary groups by the thread's name, not by the thread: the same op on
 * two threads of one name is one row, on a thread of another name a row of its own. */
static void test_unified_threads(void **state)
{
    (void)state;
    static const char json[] = "{\"traceEvents\":[" THREAD_NAME(1, "main") "," THREAD_NAME(2, "main") ","
        THREAD_NAME(3, "worker") "," ADDMM_ON(1, 100, 110, 120, 1) "," ADDMM_ON(3, 200, 210, 220, 2) ","
        ADDMM_ON(2, 300, 310, 320, 3) "," ADDMM_ON(1, 400, 410, 420, 4) "]}";
    rep s;
    tl_error err = {0};
    memset(&s, 0, sizeof s);
    tl_arena_init(&s.arena);
    s.t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    if (!s.t)
        fail_msg("%s", err.msg);
    assert_int_equal(tl_perf_sheets(s.t, NULL, &s.arena, &s.r, &err), 0);
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_non_null(u);
    assert_int_equal(u->nrows, 2);
    assert_string_equal(txt(u, "thread_name", 0), "main");
    near(num(u, "operation_count", 0), 3);
    assert_string_equal(txt(u, "thread_name", 1), "worker");
    near(num(u, "operation_count", 1), 1);
    drop(&s);
}

static void test_triton(void **state)
{
    (void)state;
    rep s;
    /* triton_poi_fused_add_mul_0 with xnumel 1024: ops aten.add, aten.mul (1 flop each):
     * flops = 2·1024; bytes = 1024·2 + 1024·2 + 2·1024 (the pointwise output) = 6144 */
    build(&s, OP("triton_poi_fused_add_mul_0", "{'Input Dims':[[1024],[1024],[]],"
                                               "'Input type':['c10::BFloat16','c10::BFloat16','Scalar'],"
                                               "'Input Strides':[[1],[1],[]],'Concrete Inputs':['','','1024']}"));
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_non_null(u);
    assert_string_equal(txt(u, "op category", 0), "triton");
    near(num(u, "GFLOPS", 0), 2048 / 1e9);
    near(num(u, "Data Moved (MB)", 0), 6144 / 1048576.0);
    assert_string_equal(txt(u, "Compute Spec", 0), "vector_bfloat16");
    assert_string_equal(txt(u, "perf_params", 0), "{'fused_ops': 'aten.add, aten.mul', 'xnumel': 1024, 'rnumel': 1}");
    drop(&s);
}

/* ---- GPU descriptions and roofline -------------------------------------------------------------- */

static void test_gpu_arch(void **state)
{
    (void)state;
    tl_gpu_arch a;
    tl_error err = {0};
    assert_int_equal(tl_gpu_arch_load("mi300x", &a, &err), 0);
    near(tl_gpu_arch_peak(&a, "matrix_bf16"), 708);
    near(a.mem_bw_gbps, 5300);
    assert_true(isnan(tl_gpu_arch_peak(&a, "matrix_fp4")));
    assert_int_equal(tl_gpu_arch_load("H100", &a, &err), 0);
    near(tl_gpu_arch_peak(&a, "matrix_bf16"), 989.5);
    assert_int_equal(tl_gpu_arch_load("no-such-gpu", &a, &err), -1);
    assert_non_null(strstr(err.msg, "MI355X"));
    char *dir = tt_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/g.json", dir);
    static const char j[] = "{\"name\": \"Mine\", \"memory_gb\": 1, \"mem_bw_gbps\": 1000, "
                            "\"max_achievable_tflops\": {\"matrix_bf16\": 100, \"vector_bf16\": 10}, \"x\": [1]}";
    tt_write_file(path, j, strlen(j));
    assert_int_equal(tl_gpu_arch_load(path, &a, &err), 0);
    assert_string_equal(a.name, "Mine");
    near(tl_gpu_arch_peak(&a, "vector_bf16"), 10);
    tt_write_file(path, "{\"name\": ", 9);
    assert_int_equal(tl_gpu_arch_load(path, &a, &err), -1);
    tt_rmrf(dir);
    free(dir);

    /* the mm of test_gemm_mm against 100 TFLOPS / 1000 GB/s: compute 524288/1e14 s =
     * 0.00524288 µs, memory 28672/1e12 s = 0.028672 µs: memory bound, 0.28672 % of 10 µs */
    tl_gpu_arch mine = {.name = "mine", .memory_gb = 1, .mem_bw_gbps = 1000, .npeaks = 1};
    strcpy(mine.peak[0].spec, "matrix_bf16");
    mine.peak[0].tflops = 100;
    rep s;
    build_arch(&s, OP("aten::mm", "{'Input Dims':[[64,128],[128,32]],'Input type':['c10::BFloat16','c10::BFloat16'],"
                                  "'Input Strides':[[128,1],[32,1]],'Concrete Inputs':['','']}"),
               "k", &mine);
    const tl_table *g = sheet(&s, "GEMM");
    near(num(g, "Roofline Time (µs)_first", 0), 0.028672);
    assert_string_equal(txt(g, "Roofline Bound_first", 0), "MEMORY_BOUND");
    near(num(g, "Pct Roofline_mean", 0), 0.28672);
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_string_equal(txt(u, "Roofline Bound", 0), "MEMORY_BOUND");
    drop(&s);
}

/* ---- hostile shapes and the value parser --------------------------------------------------- */

static void test_hostile(void **state)
{
    (void)state;
    rep s;
    /* an overflowing product, negative dims, a dict, a huge integer: no rows, no crash */
    build(&s, OP("aten::mm", "{'Input Dims':[[9223372036854775807,4],[4,9223372036854775807]],'Input type':['float','float'],"
                             "'Input Strides':[[4,1],[1,4]],'Concrete Inputs':['','']}") ","
              "{'ph':'X','cat':'cpu_op','name':'aten::add','pid':1,'tid':1,'ts':200,'dur':10,"
              "'args':{'Input Dims':[[-4,2],[2]],'Input type':['float','float'],'Input Strides':[[2,1],[1]],'Concrete Inputs':['','']}},"
              "{'ph':'X','cat':'cpu_op','name':'aten::neg','pid':1,'tid':1,'ts':300,'dur':10,"
              "'args':{'Input Dims':[{'a':1}],'Input type':['float'],'Input Strides':[[1]],'Concrete Inputs':['']}},"
              "{'ph':'X','cat':'cpu_op','name':'aten::sum','pid':1,'tid':1,'ts':400,'dur':10,"
              "'args':{'Input Dims':[[123456789012345678901234567890]],'Input type':['float'],'Input Strides':[[1]],'Concrete Inputs':['']}}");
    assert_null(sheet(&s, "GEMM"));
    assert_null(sheet(&s, "BinaryElementwise"));
    assert_null(sheet(&s, "UnaryElementwise"));
    assert_null(sheet(&s, "Reduce_fwd"));
    /* they still stop the traversal and are "has_perf_model" */
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_non_null(u);
    assert_string_equal(txt(u, "name", 0), "aten::mm");
    assert_string_equal(txt(u, "has_perf_model", 0), "True");
    /* no row has metrics: the table has no metric columns (§7.4) */
    assert_int_equal(tl_table_find(u, "GFLOPS"), -1);
    drop(&s);
    /* a 100000-entry Input Dims: beyond the cap, a bad value */
    size_t n = 100000;
    char *big = malloc(n * 4 + 16), *p = big;
    *p++ = '(';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s1", i ? ", " : "");
    strcpy(p, ")");
    tl_pv_pool pool = {0};
    const tl_pv *v = tl_pv_parse(&pool, big);
    assert_int_equal(v->kind, TL_PV_BAD);
    free(big);
    tl_pv_pool_free(&pool);
}

static void test_pyval(void **state)
{
    (void)state;
    tl_buf b = {0};
    tl_pv_tuple_text_as_list(&b, "((512,), (141, 512), (), 'a,)', \"b'(\")");
    assert_string_equal(tl_buf_cstr(&b), "[[512], [141, 512], [], 'a,)', \"b'(\"]");
    tl_pv_pool pool = {0};
    const tl_pv *v = tl_pv_parse(&pool, "((1, -2), 'x\\'y', None, True, 1.5, nan)");
    assert_int_equal(v->kind, TL_PV_TUPLE);
    assert_int_equal(v->n, 6);
    assert_int_equal(v->u.items[0].u.items[1].u.i, -2);
    assert_int_equal(v->u.items[1].n, 3);
    assert_memory_equal(v->u.items[1].u.s, "x'y", 3);
    assert_int_equal(v->u.items[2].kind, TL_PV_NONE);
    assert_int_equal(v->u.items[3].kind, TL_PV_BOOL);
    tl_buf_clear(&b);
    tl_pv_repr(&b, v);
    assert_string_equal(tl_buf_cstr(&b), "((1, -2), 'x\\'y', None, True, 1.5, nan)");
    assert_int_equal(tl_pv_parse(&pool, "(1, 2")->kind, TL_PV_BAD);
    int64_t pr;
    assert_false(tl_pv_prod(tl_pv_parse(&pool, "(4294967296, 4294967296)"), &pr));
    assert_true(tl_pv_prod(tl_pv_parse(&pool, "(3, 5, 7)"), &pr));
    assert_int_equal(pr, 105);
    tl_pv_pool_free(&pool);
    tl_buf_free(&b);
}

/* ---- backward: SDPA_bwd rows and the sole backward op (§6, §7.2) --------------------------- */

static void test_backward(void **state)
{
    (void)state;
    /* forward SDPA on thread 1 (Sequence number 7, kernel 10 µs); on thread 2 the autograd
     * node "evaluate_function: ScaledDotProductFlashAttentionBackward0" (Sequence number 7:
     * linked to the forward op) holds ScaledDotProductFlashAttentionBackward0, which holds
     * the backward op launching a 20 µs kernel.  B=1, H=2, N=16, d=8, not causal, flash:
     * each product term is B·H·2·N·N·d = 8192, the backward has five (the H_Q/H_KV − 1 terms
     * are 0): 40960 flops; bytes = 2·(7 tensors of B·N·H·d = 256) = 3584. */
    static const char json[] =
        "{\"traceEvents\":["
        /* an earlier forward-thread member of the group: the latest one is the forward op */
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::view\",\"pid\":1,\"tid\":1,\"ts\":-10,\"dur\":1,"
        "\"args\":{\"Sequence number\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::_scaled_dot_product_flash_attention\",\"pid\":1,\"tid\":1,"
        "\"ts\":0,\"dur\":100,\"args\":{\"Input Dims\":[[1,2,16,8],[1,2,16,8],[1,2,16,8],[],[],[],[]],"
        "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"\",\"\"],"
        "\"Input Strides\":[[256,128,8,1],[256,128,8,1],[256,128,8,1],[],[],[],[]],"
        "\"Concrete Inputs\":[\"\",\"\",\"\",\"0.0\",\"False\",\"False\",\"\"],\"Sequence number\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
        "\"args\":{\"correlation\":1}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":10},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":20,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fwd\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":10,"
        "\"args\":{\"correlation\":1,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0\","
        "\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":100,\"args\":{\"Sequence number\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ScaledDotProductFlashAttentionBackward0\",\"pid\":1,\"tid\":2,"
        "\"ts\":205,\"dur\":90,\"args\":{\"Sequence number\":7}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::_scaled_dot_product_flash_attention_backward\",\"pid\":1,\"tid\":2,"
        "\"ts\":210,\"dur\":80,\"args\":{}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":220,\"dur\":5,"
        "\"args\":{\"correlation\":2}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":1,\"tid\":2,\"ts\":220},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":0,\"tid\":7,\"ts\":230,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bwd\",\"pid\":0,\"tid\":7,\"ts\":230,\"dur\":20,"
        "\"args\":{\"correlation\":2,\"stream\":7}}]}";
    rep s;
    tl_error err = {0};
    memset(&s, 0, sizeof s);
    tl_arena_init(&s.arena);
    s.t = tl_trace_load_mem(json, strlen(json), "t.json", &err);
    assert_non_null(s.t);
    assert_int_equal(tl_perf_sheets(s.t, NULL, &s.arena, &s.r, &err), 0);
    const tl_table *b = sheet(&s, "SDPA_bwd");
    assert_non_null(b);
    assert_int_equal(b->nrows, 1);
    assert_string_equal(txt(b, "name", 0), "aten::_scaled_dot_product_flash_attention");
    near(num(b, "GFLOPS_first", 0), 40960 / 1e9);
    near(num(b, "Data Moved (MB)_first", 0), 3584 / 1048576.0);
    near(num(b, "Kernel Time (µs)_sum", 0), 20);
    const tl_table *f = sheet(&s, "SDPA_fwd");
    assert_non_null(f);
    near(num(f, "Kernel Time (µs)_sum", 0), 10);
    /* unified: the forward op, and the autograd node as a sole backward op with the
     * forward op's backward metrics */
    const tl_table *u = sheet(&s, "unified_perf_summary");
    assert_non_null(u);
    assert_int_equal(u->nrows, 2);
    assert_string_equal(txt(u, "name", 0), "ScaledDotProductFlashAttentionBackward0");
    assert_string_equal(txt(u, "op category", 0), "SDPA_bwd");
    assert_string_equal(txt(u, "has_perf_model", 0), "True");
    near(num(u, "GFLOPS", 0), 40960 / 1e9);
    assert_string_equal(txt(u, "name", 1), "aten::_scaled_dot_product_flash_attention");
    drop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_mm),       cmocka_unit_test(test_gemm_addmm_baddbmm),
        cmocka_unit_test(test_gemm_scaled_fp8), cmocka_unit_test(test_gemm_transpose),
        cmocka_unit_test(test_binary),        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_layer_norm),    cmocka_unit_test(test_layer_norm_backward),
        cmocka_unit_test(test_group_norm_text_rule),
        cmocka_unit_test(test_batch_norm_and_instance_bwd), cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_sdpa),          cmocka_unit_test(test_conv),
        cmocka_unit_test(test_unified),       cmocka_unit_test(test_unified_threads), cmocka_unit_test(test_triton),
        cmocka_unit_test(test_gpu_arch),      cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_pyval),         cmocka_unit_test(test_backward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
