/*
 * gentrace - write a synthetic PyTorch profiler trace (Chrome-trace JSON, as
 * torch.profiler's export_chrome_trace writes it), plain or gzip-compressed.
 *
 * tlcompare reads traces; it needs inputs the project makes itself: small example traces,
 * and benchmark inputs of any size (a few KB to several GB).  The output models one
 * training step of a ViT-style transformer per ProfilerStep, in the text layout of
 * kineto's writer: the top-level keys, `M` metadata, user annotations, nested `cpu_op`
 * trees with their shape args, the Python stack (`python_function`, the bulk of the
 * events, as in real traces), runtime launches with their `ac2g` flows, and the GPU
 * events on the device's pid and stream tids.  TRACES.md §1 lists what real traces hold;
 * tools/README.md says which of those this models.  Two flavours, `cuda` and `rocm`,
 * whose call trees differ where real ones do (convolution, attention, the optimizer,
 * runtime names, kernel names, the GPU pid).
 *
 * Streaming: the events of a step are built in a small per-step table and written out;
 * memory depends on the number of layers, never on the number of steps.  kineto writes
 * the events grouped by kind (CPU ops, then instants, Python frames, runtime calls, GPU
 * activity, metadata), so the whole run is generated once per group ("pass") and each
 * pass writes only its kind.  Generation is a pure function of the options, so every
 * pass sees the same events.
 *
 * Determinism: every duration comes from one splitmix64 stream seeded by (seed, flavour);
 * no clock, address or locale is read.  Same options, same bytes (gzip included: zlib
 * with no file name and mtime 0).
 *
 * This file is longer than the project's usual ~1,200 lines because the workload model
 * (ops, their shapes and kernels, per flavour) and the writer belong together here.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <zlib.h>

#include "base/numfmt.h"

/* ---- errors and memory ------------------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("gentrace: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A growable text buffer, for the texts made once at start-up. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_puts(sbuf_t *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        die("internal: text too long");
    sb_add(b, tmp, (size_t)n);
}

/* Noise and a planted change, for the verdicts' tests (all off by default: the bytes stay as
 * they were): every kernel's time varies by gpu_cv (a coefficient of variation, drawn
 * from the seed's stream), every op's kernels in the whole run are off by one factor of
 * 1 + run_cv * z (z from run_seed and the op's name: the run-to-run noise), and the kernels
 * of the op named slow_op take slow_pct percent longer. */
static double gpu_cv = -1, run_cv = 0, slow_pct = 0;
static uint64_t run_seed = 1;
static const char *slow_op = NULL;
/* The step-to-step noise: every kernel of a step is off by that step's factor 1 + step_cv * z
 * (z from run_seed and the step: what clocks, thermals or a neighbour do to a whole step). */
static double step_cv = 0, step_factor = 1;
/* the first step's kernels take longer, each op's by its own share of this (a fraction, from
 * 0 to twice it by the op's name): warm-up (autotuning, caches, compilation) hits ops unevenly */
static double warmup = 0;
static int cur_step = -1;
/* deviceProperties' name, when given (another GPU of the same workload) */
static const char *gpu_name = NULL;

/* A rank of a distributed job (--world N --rank R; world 0: a single-GPU trace, the bytes as
 * before): the all-reduce kernels carry the collective's metadata (process group, dtype,
 * message size) as PyTorch's NCCL recorder writes it, and take exactly their modelled time
 * (no jitter: every rank arrives together unless planted otherwise).  late_us (--arrive-late): this rank
 * starts every collective that much later (a planted straggler); coll_slow_pct: the last
 * gradient bucket's all-reduce (a size of its own) takes that much longer (a bandwidth drop). */
static long world = 0, rank_id = 0;
static double late_us = 0, coll_slow_pct = 0;

/* ---- random numbers ---------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A duration of about base_ns, within ±pct percent; never below 1 ns. */
static int64_t jitter(int64_t base_ns, int pct)
{
    int64_t span = base_ns * pct / 100;
    int64_t d = base_ns;
    if (span > 0)
        d += (int64_t)(rng_next() % (uint64_t)(2 * span + 1)) - span;
    return d > 0 ? d : 1;
}

/* A standard normal deviate from two uniforms (Box-Muller). */
static double normal_from(uint64_t a, uint64_t b)
{
    double u = ((double)(a >> 11) + 0.5) / 9007199254740992.0, v = (double)(b >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* A GPU time of about base_ns with a coefficient of variation cv; never below 1 ns. */
static int64_t gauss_dur(double base_ns, double cv)
{
    uint64_t a = rng_next(), b = rng_next();
    double d = base_ns * (1 + cv * normal_from(a, b));
    return d >= 1 ? (int64_t)d : 1;
}

/* The factor of an op's kernels in this run: the run-to-run noise and the planted change. */
static double op_factor(const char *op)
{
    double f = 1;
    if (run_cv > 0) {
        uint64_t h = 1469598103934665603ULL ^ run_seed * 0x9e3779b97f4a7c15ULL;
        for (const char *c = op; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        uint64_t save = rng_state;
        rng_state = h;
        uint64_t a = rng_next(), b = rng_next();
        rng_state = save;
        f *= 1 + run_cv * normal_from(a, b);
    }
    if (slow_op && (strcmp(op, slow_op) == 0 || (strcmp(slow_op, "*") == 0 && strcmp(op, "record_param_comms") != 0)))
        f *= 1 + slow_pct / 100;
    return f;
}

/* Step s's factor (--step-cv), from its own stream: the other draws stay as they were. */
static double step_noise(int s)
{
    uint64_t save = rng_state;
    rng_state = (run_seed + 0x51ed27ULL) * 0xd1b54a32d192ed03ULL ^ (uint64_t)s * 0x9e3779b97f4a7c15ULL;
    uint64_t a = rng_next(), b = rng_next();
    rng_state = save;
    double f = 1 + step_cv * normal_from(a, b);
    return f > 0.05 ? f : 0.05;
}

/* A uniform integer in [lo, hi]. */
static int64_t uniform(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1)); }

/* ---- output: a 1 MiB buffer, to a file or through zlib's gzip deflate --------------------- */

typedef struct {
    FILE *f;
    const char *path;
    int gz, count_only;
    z_stream z;
    unsigned char *zbuf;
    char *buf;
    size_t n;
    uint64_t bytes; /* JSON bytes produced (before compression) */
} out_t;

#define OUTBUF (1u << 20)

static out_t O;

static void out_flush(int finish)
{
    if (O.count_only) {
        O.n = 0;
        return;
    }
    if (!O.gz) {
        if (O.n && fwrite(O.buf, 1, O.n, O.f) != O.n)
            die("%s: write failed: %s", O.path, strerror(errno));
        O.n = 0;
        return;
    }
    O.z.next_in = (unsigned char *)O.buf;
    O.z.avail_in = (uInt)O.n;
    int rc;
    do {
        O.z.next_out = O.zbuf;
        O.z.avail_out = OUTBUF;
        rc = deflate(&O.z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR)
            die("%s: deflate failed", O.path);
        size_t have = OUTBUF - O.z.avail_out;
        if (have && fwrite(O.zbuf, 1, have, O.f) != have)
            die("%s: write failed: %s", O.path, strerror(errno));
    } while (O.z.avail_out == 0 || (finish && rc != Z_STREAM_END));
    O.n = 0;
}

static inline void put(const char *s, size_t n)
{
    O.bytes += n;
    if (O.n + n > OUTBUF) {
        out_flush(0);
        while (n > OUTBUF) { /* only the start-up texts could be this long */
            memcpy(O.buf, s, OUTBUF);
            O.n = OUTBUF;
            out_flush(0);
            s += OUTBUF;
            n -= OUTBUF;
        }
    }
    memcpy(O.buf + O.n, s, n);
    O.n += n;
}

#define PUTL(lit) put("" lit, sizeof(lit) - 1) /* literals only: "" lit does not compile otherwise */

static inline void puts_(const char *s) { put(s, strlen(s)); }

static inline void put_int(int64_t v)
{
    char tmp[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    put(tmp + i, (size_t)(24 - i));
}

/* A time in ns as kineto prints µs: "1419247333430.849" (three decimals, always). */
static inline void put_us(int64_t ns)
{
    put_int(ns / 1000);
    char d[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
    put(d, 4);
}

static inline void put_double(double d)
{
    char tmp[TL_NUMFMT_MAX];
    put(tmp, tl_fmt_double(d, tmp));
}

/* A JSON string; the names written here need escaping only for '"' and '\\'. */
static inline void put_str(const char *s)
{
    PUTL("\"");
    puts_(s);
    PUTL("\"");
}

/* ---- the workload model: flavour, shapes, kernels ---------------------------------------- */

enum { CUDA, ROCM };

static int flavour = CUDA;
static int foreach_optim; /* the optimizer as seven foreach ops instead of one fused op */
/* What a step is (--shape): a training step; an inference decode step replayed from a CUDA /
 * HIP graph (most GPU time under the graph launch, no cpu_op above it); the capture run
 * that records such a graph (host work, almost no GPU work); a training step with two
 * aten::sub ops that launch their kernel on one flavour each (two one-sided LCAs of one name). */
enum { SH_TRAIN, SH_GRAPH_REPLAY, SH_CAPTURE_ONLY, SH_ONE_SIDED_LCA };
static int shape = SH_TRAIN;
static int n_layers = 12;
static uint64_t seed = 1;

/* ViT-B/16 at 224x224, batch 32, bf16. */
enum { BATCH = 32, TOK = 197, HID = 768, HEADS = 12, HDIM = 64, MLP = 3072, CLASSES = 1000, IMG = 224, PATCH = 16 };
#define ROWS (BATCH * TOK)

static int host_pid, main_tid, bwd_tid, gpu_pid, stream_comp, stream_comm;
static int64_t t0_ns; /* first timestamp */

/* A kernel: its name, launch geometry and the fixed tail of its args text. */
typedef struct {
    const char *name;
    char *args_tail; /* after "correlation": N, (flavour-specific) */
    char *rt_kernel; /* ROCm runtime args: "kernel": ..., made once */
    int grid[3], block[3];
} kern_t;

enum { K_MAX = 96 };
static kern_t kerns[K_MAX];
static int n_kerns;

static int kern(const char *name, int gx, int gy, int gz, int bx, int regs, int smem)
{
    if (n_kerns == K_MAX)
        die("internal: too many kernels");
    kern_t *k = &kerns[n_kerns];
    k->name = name;
    k->grid[0] = gx, k->grid[1] = gy, k->grid[2] = gz;
    k->block[0] = bx, k->block[1] = 1, k->block[2] = 1;
    sbuf_t b = {0};
    if (flavour == CUDA) {
        double blocks = (double)gx * gy * gz / 132.0, warps = blocks * bx / 32.0;
        int occ = regs > 128 ? 0 : (int)(100 - regs / 4);
        sb_printf(&b, "\n      \"registers per thread\": %d, \"shared memory\": %d,"
                      "\n      \"blocks per SM\": %.6f, \"warps per SM\": %.6f,"
                      "\n      \"grid\": [%d, %d, %d], \"block\": [%d, 1, 1],"
                      "\n      \"est. achieved occupancy %%\": %d",
                  regs, smem, blocks, warps, gx, gy, gz, bx, occ);
    } else {
        sb_printf(&b, " \"kind\": \"Dispatch Kernel\", \"grid\": [%d, %d, %d], \"block\": [%d, 1, 1]", gx, gy, gz, bx);
        sbuf_t r = {0};
        sb_puts(&r, "\"kernel\": \"");
        sb_puts(&r, name);
        sb_puts(&r, "\"");
        k->rt_kernel = r.p;
    }
    k->args_tail = b.p;
    return n_kerns++;
}

/* Op signatures: the four shape args of a cpu_op, as one text made once. */
typedef struct {
    sbuf_t dims, strides, types, concrete;
    int n;
} sigb_t;

static void sig_sep(sigb_t *s)
{
    if (s->n++) {
        sb_puts(&s->dims, ", ");
        sb_puts(&s->strides, ", ");
        sb_puts(&s->types, ", ");
        sb_puts(&s->concrete, ", ");
    }
}

/* dims/strides of one contiguous tensor, as "[a, b, c]" */
static void sig_shape(sbuf_t *dims, sbuf_t *strides, const int *d, int nd)
{
    long st[8];
    long acc = 1;
    for (int i = nd - 1; i >= 0; i--) {
        st[i] = acc;
        acc *= d[i];
    }
    sb_puts(dims, "[");
    sb_puts(strides, "[");
    for (int i = 0; i < nd; i++) {
        sb_printf(dims, "%s%d", i ? ", " : "", d[i]);
        sb_printf(strides, "%s%ld", i ? ", " : "", st[i]);
    }
    sb_puts(dims, "]");
    sb_puts(strides, "]");
}

/* Arguments of sig(): "T:type:d0,d1,..", "L:type:count:d0,d1" (a TensorList of count equal
 * tensors), "S:concrete" (a Scalar), "SL:concrete" (a ScalarList), "N" (none, ""). */
static char *sig(const char *spec, ...)
{
    sigb_t s = {0};
    sb_puts(&s.dims, "");
    sb_puts(&s.strides, "");
    sb_puts(&s.types, "");
    sb_puts(&s.concrete, "");
    va_list ap;
    va_start(ap, spec);
    for (const char *item = spec; item; item = va_arg(ap, const char *)) {
        sig_sep(&s);
        if (item[0] == 'T' || item[0] == 'L') {
            char type[64];
            int d[8], nd = 0, count = 1;
            /* the type may hold "::"; the dims (and a list's count) come after the last colons */
            const char *p = item + 2, *c = strrchr(item, ':'), *tend = c;
            if (item[0] == 'L') {
                tend = c - 1;
                while (tend > p && *tend != ':')
                    tend--;
                count = atoi(tend + 1);
            }
            memcpy(type, p, (size_t)(tend - p));
            type[tend - p] = 0;
            for (p = c + 1; *p && nd < 8;) {
                char *next;
                d[nd++] = (int)strtol(p, &next, 10);
                p = *next == ',' ? next + 1 : next;
                if (next == p && *p)
                    die("internal: bad signature '%s'", item);
            }
            if (item[0] == 'L') {
                sb_puts(&s.dims, "[");
                sb_puts(&s.strides, "[");
                for (int i = 0; i < count; i++) {
                    if (i) {
                        sb_puts(&s.dims, ", ");
                        sb_puts(&s.strides, ", ");
                    }
                    sig_shape(&s.dims, &s.strides, d, nd);
                }
                sb_puts(&s.dims, "]");
                sb_puts(&s.strides, "]");
                sb_puts(&s.types, "\"TensorList\"");
            } else {
                sig_shape(&s.dims, &s.strides, d, nd);
                sb_printf(&s.types, "\"%s\"", type);
            }
            sb_puts(&s.concrete, "\"\"");
        } else if (item[0] == 'S') {
            int list = item[1] == 'L';
            sb_puts(&s.dims, "[]");
            sb_puts(&s.strides, "[]");
            sb_puts(&s.types, list ? "\"ScalarList\"" : "\"Scalar\"");
            sb_printf(&s.concrete, "\"%s\"", item + (list ? 3 : 2));
        } else {
            sb_puts(&s.dims, "[]");
            sb_puts(&s.strides, "[]");
            sb_puts(&s.types, "\"\"");
            sb_puts(&s.concrete, "\"\"");
        }
    }
    va_end(ap);
    sbuf_t out = {0};
    sb_puts(&out, "\"Concrete Inputs\": [");
    sb_add(&out, s.concrete.p, s.concrete.n);
    sb_puts(&out, "], \"Input type\": [");
    sb_add(&out, s.types.p, s.types.n);
    sb_puts(&out, "], \"Input Strides\": [");
    sb_add(&out, s.strides.p, s.strides.n);
    sb_puts(&out, "], \"Input Dims\": [");
    sb_add(&out, s.dims.p, s.dims.n);
    sb_puts(&out, "]");
    free(s.dims.p), free(s.strides.p), free(s.types.p), free(s.concrete.p);
    return out.p;
}

/* One nn.Linear: the shape args of its forward and backward ops, and its GEMM kernel. */
typedef struct {
    char *linear, *t, *transpose, *asstr, *addmm, *mm_dgrad, *mm_wgrad, *sum_bias;
    int kern;
    double m, n, k;
} lin_t;

static lin_t lin_qkv, lin_proj, lin_fc1, lin_fc2, lin_head;

/* x [m, k] (as [32, 197, k], or [32, k] for the head) times W [n, k] transposed, plus a bias. */
static void lin_make(lin_t *L, int m, int n, int k, int kern_id)
{
    char x[64], w[64], bias[64], wt[64], g[64], gt[64], x2[64], asz[64], ast[64];
    if (m == BATCH)
        snprintf(x, sizeof x, "T:c10::BFloat16:%d,%d", BATCH, k);
    else
        snprintf(x, sizeof x, "T:c10::BFloat16:%d,%d,%d", BATCH, TOK, k);
    snprintf(w, sizeof w, "T:c10::BFloat16:%d,%d", n, k);
    snprintf(bias, sizeof bias, "T:c10::BFloat16:%d", n);
    snprintf(wt, sizeof wt, "T:c10::BFloat16:%d,%d", k, n);
    snprintf(x2, sizeof x2, "T:c10::BFloat16:%d,%d", m, k);
    snprintf(g, sizeof g, "T:c10::BFloat16:%d,%d", m, n);
    snprintf(gt, sizeof gt, "T:c10::BFloat16:%d,%d", n, m);
    snprintf(asz, sizeof asz, "SL:[%d, %d]", k, n);
    snprintf(ast, sizeof ast, "SL:[1, %d]", k);
    L->linear = sig(x, w, bias, NULL);
    L->t = sig(w, NULL);
    L->transpose = sig(w, "S:0", "S:1", NULL);
    L->asstr = sig(w, asz, ast, "N", NULL);
    L->addmm = sig(bias, x2, wt, "S:1", "S:1", NULL);
    L->mm_dgrad = sig(g, w, NULL);
    L->mm_wgrad = sig(gt, x2, NULL);
    L->sum_bias = sig(g, "SL:[0]", "S:True", "N", NULL);
    L->kern = kern_id;
    L->m = m, L->n = n, L->k = k;
}

/* The signature texts and kernels the step uses, made once per run. */
static struct {
    char *to, *copy_img, *conv, *conv_, *cudnn_conv, *miopen_conv, *resize_w, *resize_in, *reshape_b, *view_b,
        *add_bias, *flatten, *transpose_pe, *cat, *add_pos, *ln, *nln,
        *view_qkv, *permute_qkv, *unbind, *sdpa, *sdpa_flash, *sdpa_eff, *sdpa_eff_fwd, *sdpa_eff_bwd, *empty_o,
        *add_res, *gelu, *select_cls,
        *ce, *logsm, *logsm_, *nll_nd, *nll, *nll_fwd, *gelu_bwd,
        *ln_bwd, *sdpa_bwd, *conv_bwd, *nll_bwd, *logsm_bwd, *fused_adamw, *foreach1, *foreach2, *foreach3,
        *comms, *empty_ws, *triton, *fill, *zero, *ones_like, *empty_strided;
    int k_nchw, k_conv, k_nhwc, k_miopen[5], k_add_bias, k_cat, k_add, k_ln, k_gemm_qkv, k_gemm_proj, k_gemm_fc1,
        k_gemm_fc2, k_gemm_head, k_sdpa, k_gelu, k_logsm, k_nll, k_mm_d, k_mm_w, k_sum, k_gelu_bwd, k_ln_bwd[2],
        k_sdpa_bwd[3], k_conv_bwd[4], k_nll_bwd, k_logsm_bwd, k_adamw, k_foreach, k_nccl, k_triton, k_graph[6], k_fill;
} W;

/* Bytes of the bf16 parameters (per layer: qkv, proj, fc1, fc2 weights and the small ones). */
static double param_bytes(void) { return (double)n_layers * (4.0 * HID * HID + 2.0 * HID * MLP + 13.0 * HID) * 2; }

/* Number of parameter tensors: per layer 2 LN x 2 + qkv, proj, fc1, fc2 weights and biases. */
static int n_params(void) { return n_layers * 12 + 4 + 2; }

static void model_init(void)
{
    char b[256];
#define BF "c10::BFloat16"
    W.to = sig("T:float:32,3,224,224", "S:15", "S:False", "S:False", "N", NULL);
    W.copy_img = sig("T:" BF ":32,3,224,224", "T:float:32,3,224,224", "S:False", NULL);
    W.conv = sig("T:" BF ":32,3,224,224", "T:" BF ":768,3,16,16", "T:" BF ":768", "SL:[16, 16]", "SL:[0, 0]",
                 "SL:[1, 1]", "S:False", "SL:[0, 0]", "S:1", NULL);
    W.conv_ = sig("T:" BF ":32,3,224,224", "T:" BF ":768,3,16,16", "T:" BF ":768", "SL:[16, 16]", "SL:[0, 0]",
                  "SL:[1, 1]", "S:False", "SL:[0, 0]", "S:1", "S:False", "S:False", "S:True", "S:True", NULL);
    W.cudnn_conv = sig("T:" BF ":32,3,224,224", "T:" BF ":768,3,16,16", "SL:[0, 0]", "SL:[16, 16]", "SL:[1, 1]",
                       "S:1", "S:False", "S:False", "S:True", NULL);
    W.miopen_conv = sig("T:" BF ":32,3,224,224", "T:" BF ":768,3,16,16", "T:" BF ":768", "SL:[0, 0]", "SL:[16, 16]",
                        "SL:[1, 1]", "S:1", "S:False", "S:False", NULL);
    W.resize_w = sig("T:" BF ":768,3,16,16", "SL:[768, 3, 16, 16]", "S:0", NULL);
    W.resize_in = sig("T:" BF ":32,3,224,224", "SL:[32, 3, 224, 224]", "S:0", NULL);
    W.reshape_b = sig("T:" BF ":768", "SL:[1, -1, 1, 1]", NULL);
    W.view_b = sig("T:" BF ":768", "SL:[1, -1, 1, 1]", NULL);
    W.add_bias = sig("T:" BF ":32,768,14,14", "T:" BF ":1,768,1,1", "S:1", NULL);
    W.flatten = sig("T:" BF ":32,768,14,14", "S:2", "S:-1", NULL);
    W.transpose_pe = sig("T:" BF ":32,768,196", "S:1", "S:2", NULL);
    /* torch.cat((cls_token, patches), dim=1): a TensorList input, nested one level deeper */
    W.cat = sig("L:" BF ":2:32,196,768", "S:1", NULL);
    W.add_pos = sig("T:" BF ":32,197,768", "T:" BF ":1,197,768", "S:1", NULL);
    W.ln = sig("T:" BF ":32,197,768", "SL:[768]", "T:" BF ":768", "T:" BF ":768", "S:1e-06", "S:True", NULL);
    W.nln = sig("T:" BF ":32,197,768", "SL:[768]", "T:" BF ":768", "T:" BF ":768", "S:1e-06", NULL);
    W.view_qkv = sig("T:" BF ":32,197,2304", "SL:[32, 197, 3, 12, 64]", NULL);
    W.permute_qkv = sig("T:" BF ":32,197,3,12,64", "SL:[2, 0, 3, 1, 4]", NULL);
    W.unbind = sig("T:" BF ":3,32,12,197,64", "S:0", NULL);
    W.sdpa = sig("T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "N", "S:0.0",
                 "S:False", "N", "S:False", NULL);
    W.sdpa_flash = sig("T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "S:0.0",
                       "S:False", "S:False", "N", NULL);
    W.sdpa_eff = sig("T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "N", "S:True",
                     "S:0.0", "S:False", "N", NULL);
    W.sdpa_eff_fwd = sig("T:" BF ":32,197,12,64", "T:" BF ":32,197,12,64", "T:" BF ":32,197,12,64", "N", "N", "N",
                         "S:197", "S:197", "S:0.0", "S:0", "S:True", "N", "N", "N", NULL);
    W.sdpa_eff_bwd = sig("T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64",
                         "T:" BF ":32,12,197,64", "N", "T:" BF ":32,12,197,64", "T:float:32,12,224",
                         "T:long int:", "T:long int:", "S:0.0", "SL:[True, True, True, False]", "S:False", "N", NULL);
    W.empty_o = sig("SL:[32, 12, 197, 64]", "S:15", "S:0", "N", "S:False", "N", NULL);
    W.add_res = sig("T:" BF ":32,197,768", "T:" BF ":32,197,768", "S:1", NULL);
    W.gelu = sig("T:" BF ":32,197,3072", "S:none", NULL);
    W.select_cls = sig("T:" BF ":32,197,768", "S:1", "S:0", NULL);
    W.ce = sig("T:" BF ":32,1000", "T:long int:32", "N", "S:1", "S:-100", "S:0.0", NULL);
    W.logsm = sig("T:" BF ":32,1000", "S:1", "N", NULL);
    W.logsm_ = sig("T:" BF ":32,1000", "S:1", "S:False", NULL);
    W.nll_nd = sig("T:" BF ":32,1000", "T:long int:32", "N", "S:1", "S:-100", NULL);
    W.nll = sig("T:" BF ":32,1000", "T:long int:32", "N", "S:1", "S:-100", NULL);
    W.nll_fwd = sig("T:" BF ":32,1000", "T:long int:32", "N", "S:1", "S:-100", NULL);
    W.gelu_bwd = sig("T:" BF ":32,197,3072", "T:" BF ":32,197,3072", "S:none", NULL);
    W.ln_bwd = sig("T:" BF ":32,197,768", "T:" BF ":32,197,768", "SL:[768]", "T:float:32,197,1", "T:float:32,197,1",
                   "T:" BF ":768", "T:" BF ":768", "SL:[True, True, True]", NULL);
    W.sdpa_bwd = sig("T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64",
                     "T:" BF ":32,12,197,64", "T:" BF ":32,12,197,64", "T:float:32,12,197", "N", "N", "S:197",
                     "S:197", "S:0.0", "S:False", "T:long int:2", "T:long int:", "N", NULL);
    W.conv_bwd = sig("T:" BF ":32,768,14,14", "T:" BF ":32,3,224,224", "T:" BF ":768,3,16,16", "SL:[768]",
                     "SL:[16, 16]", "SL:[0, 0]", "SL:[1, 1]", "S:False", "SL:[0, 0]", "S:1",
                     "SL:[False, True, True]", NULL);
    W.nll_bwd = sig("T:" BF ":", "T:" BF ":32,1000", "T:long int:32", "N", "S:1", "S:-100", "T:" BF ":", NULL);
    W.logsm_bwd = sig("T:" BF ":32,1000", "T:" BF ":32,1000", "S:1", "S:15", NULL);
    snprintf(b, sizeof b, "L:" BF ":%d:768", n_params());
    char lst[64];
    snprintf(lst, sizeof lst, "L:float:%d:768", n_params());
    W.fused_adamw = sig(b, b, b, b, lst, "S:0.0001", "S:0.9", "S:0.999", "S:0.05", "S:1e-08", "S:False",
                        "S:False", "N", "N", NULL);
    W.foreach1 = sig(b, "S:0.9", NULL);
    W.foreach2 = sig(b, b, "S:0.1", NULL);
    W.foreach3 = sig(b, b, b, "S:-0.0001", NULL);
    W.comms = sig("L:" BF ":1:7087872", "N", "N", "S:0", "N", "SL:[]", "SL:[]", "S:0", "S:1", "S:8", NULL);
    W.empty_ws = sig("SL:[4194304]", "S:0", "N", "N", "S:False", "N", NULL);
    W.triton = sig("T:float:", "T:" BF ":32,1000", "T:long int:32", NULL);
    W.fill = sig("T:float:", "S:0", NULL);
    W.zero = sig("T:float:", NULL);
    W.ones_like = sig("T:" BF ":", "N", "N", "N", "N", "S:1", NULL);
    W.empty_strided = sig("SL:[32, 3, 224, 224]", "SL:[150528, 50176, 224, 1]", "S:15", "S:0", "N", "S:False", NULL);

    /* kernels */
    if (flavour == CUDA) {
        W.k_nchw = kern("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)", 1568, 1, 32, 256, 32, 2112);
        W.k_conv = kern("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)", 392, 3, 1, 128, 246, 81920);
        W.k_nhwc = kern("void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)", 7, 24, 32, 256, 36, 2112);
        W.k_add_bias = kern("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})", 9408, 1, 1, 128, 30, 0);
        W.k_add = kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", 4728, 1, 1, 128, 24, 0);
        W.k_gemm_qkv = kern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 18, 50, 1, 128, 168, 213248);
        W.k_gemm_proj = kern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 6, 99, 1, 128, 168, 180480);
        W.k_gemm_fc1 = kern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 12, 50, 1, 384, 168, 213248);
        W.k_gemm_fc2 = W.k_gemm_proj;
        W.k_gemm_head = kern("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_nn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_nn_align8::Params)", 63, 2, 1, 32, 64, 4096);
        W.k_sdpa = kern("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", 2, 32, 12, 128, 255, 49152);
        W.k_sdpa_bwd[0] = kern("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)", 4, 32, 12, 256, 40, 0);
        W.k_sdpa_bwd[1] = kern("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)", 2, 32, 12, 256, 255, 98304);
        W.k_sdpa_bwd[2] = kern("void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)", 4, 32, 12, 256, 48, 32768);
        W.k_conv_bwd[0] = W.k_nchw;
        W.k_conv_bwd[1] = kern("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816wgrad_optimized_bf16_128x128_32x3_nhwc_align8>(cutlass_tensorop_bf16_s16816wgrad_optimized_bf16_128x128_32x3_nhwc_align8::Params)", 6, 6, 16, 128, 232, 61440);
        W.k_conv_bwd[2] = kern("void cudnn::bn_bw_1C11_singleread_specialized<__nv_bfloat16, 512, 1, 2, 0>(cudnnTensorStruct, __nv_bfloat16 const*, cudnnTensorStruct, __nv_bfloat16*, float, float)", 768, 1, 1, 512, 32, 4096);
        W.k_conv_bwd[3] = -1;
        W.k_nccl = kern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 4, 1, 1, 640, 96, 8192);
        W.k_adamw = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<5>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 5, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::TensorListMetadata<5>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 5, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float const*, float const*)", 320, 1, 1, 512, 72, 0);
        W.k_foreach = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<c10::BFloat16, 3, 2, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<c10::BFloat16, 3, 2, 0>, std::multiplies<float>, float)", 320, 1, 1, 512, 72, 0);
    } else {
        W.k_miopen[0] = kern("SubTensorOpWithScalar1d", 65536, 1, 1, 256, 0, 0);
        W.k_miopen[1] = kern("batched_transpose_256x4_half", 1605632, 1, 1, 256, 0, 0);
        W.k_miopen[2] = kern("batched_transpose_128x4_half", 393216, 1, 1, 256, 0, 0);
        W.k_miopen[3] = kern("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32_tb1x1x2x1_1x8x1x32_me", 75264, 1, 1, 256, 0, 0);
        W.k_miopen[4] = kern("batched_transpose_32x16_half", 2555904, 1, 1, 256, 0, 0);
        W.k_add_bias = kern("void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int, bool)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int, bool)#1})", 4704, 1, 1, 128, 0, 0);
        W.k_add = kern("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", 2364, 1, 1, 128, 0, 0);
        W.k_gemm_qkv = kern("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB1024_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_6_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1", 300, 1, 1, 256, 0, 0);
        W.k_gemm_proj = kern("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB1024_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1", 304, 1, 1, 256, 0, 0);
        W.k_gemm_fc1 = kern("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x224x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB1024_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_7_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1", 304, 1, 1, 256, 0, 0);
        W.k_gemm_fc2 = W.k_gemm_proj;
        W.k_gemm_head = kern("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB1024_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1", 126, 1, 1, 256, 0, 0);
        W.k_sdpa = kern("attn_fwd", 2, 12, 32, 256, 0, 0);
        W.k_sdpa_bwd[0] = kern("bwd_preprocess", 2, 12, 32, 128, 0, 0);
        W.k_sdpa_bwd[1] = kern("bwd_kernel_dk_dv", 4, 12, 32, 256, 0, 0);
        W.k_sdpa_bwd[2] = kern("bwd_kernel_dq", 4, 12, 32, 256, 0, 0);
        W.k_conv_bwd[0] = kern("batched_transpose_64x32_half", 301056, 1, 1, 256, 0, 0);
        W.k_conv_bwd[1] = kern("igemm_wrw_gtcx3_nhwc_bf16_bx0_ex0_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x4x1_1x4x1x64_tb1x4x2x1_1x4x1x64_gkgs", 120, 1, 1, 256, 0, 0);
        W.k_conv_bwd[2] = kern("batched_transpose_16x32_half", 2304, 1, 1, 256, 0, 0);
        W.k_conv_bwd[3] = kern("MIOpenConvBwdBias", 768, 1, 1, 256, 0, 0);
        W.k_nccl = kern("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 4, 1, 1, 256, 0, 0);
        W.k_adamw = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<5>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 5, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::TensorListMetadata<5>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 5, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float const*, float const*)", 304, 1, 1, 512, 0, 0);
        W.k_foreach = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<c10::BFloat16, 3, 2, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::TernaryOpScalarFunctor<c10::BFloat16, 3, 2, 0>, std::multiplies<float>, float)", 320, 1, 1, 512, 0, 0);
    }
    const char *vec = flavour == CUDA ? "4" : "8";
    W.k_cat = kern(xasprintf("void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"), 1, 2, 1, 512, 32, 0);
    W.k_ln = kern("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", ROWS, 1, 1, 128, 40, 0);
    W.k_gelu = kern(xasprintf("void at::native::vectorized_elementwise_kernel<%s, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)", vec), 9456, 1, 1, 128, 28, 0);
    W.k_gelu_bwd = kern(xasprintf("void at::native::vectorized_elementwise_kernel<%s, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul>)", vec), 9456, 1, 1, 128, 30, 0);
    W.k_logsm = kern("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)", 32, 1, 1, 256, 38, 0);
    W.k_nll = kern("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, long, long, long)", 1, 1, 1, 32, 30, 0);
    W.k_nll_bwd = kern("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, long>(c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, int, int, long, long)", 1, 1, 1, 32, 30, 0);
    W.k_logsm_bwd = kern("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, long)", 32, 1, 1, 256, 40, 0);
    if (flavour == CUDA) {
        W.k_mm_d = kern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 6, 50, 1, 128, 168, 213248);
        W.k_mm_w = kern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 24, 6, 1, 128, 168, 213248);
        W.k_ln_bwd[0] = kern("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)", ROWS, 1, 1, 128, 40, 0);
        W.k_ln_bwd[1] = kern("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)", 24, 1, 1, 1024, 64, 8448);
        W.k_sum = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)", 48, 16, 1, 512, 38, 16);
        W.k_triton = kern("triton_per_fused__log_softmax_nll_loss_forward_0", 32, 1, 1, 128, 24, 64);
        W.k_fill = kern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", 1, 1, 1, 64, 16, 0);
    } else {
        W.k_mm_d = kern("Cijk_Ailk_Bljk_B_BS_BH_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA1024_LBSPPB2048_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_8_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1", 304, 1, 1, 256, 0, 0);
        W.k_mm_w = kern("Cijk_Alik_Bjlk_B_BS_BH_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA2048_LBSPPB1024_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PK0_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK3_SKFTR0_SKXCCM8_SGROB0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1", 72, 1, 1, 256, 0, 0);
        W.k_ln_bwd[0] = kern("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)", ROWS, 1, 1, 256, 0, 0);
        W.k_ln_bwd[1] = kern("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 64u, 16u, 128u, false, true>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)", 12, 50, 1, 1024, 0, 0);
        W.k_sum = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)", 48, 16, 1, 512, 0, 0);
        W.k_triton = kern("triton_per_fused__log_softmax_nll_loss_forward_0", 32, 1, 1, 256, 0, 0);
        W.k_fill = kern("void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", 1, 1, 1, 64, 0, 0);
    }
    lin_make(&lin_qkv, ROWS, HID * 3, HID, W.k_gemm_qkv);
    lin_make(&lin_proj, ROWS, HID, HID, W.k_gemm_proj);
    lin_make(&lin_fc1, ROWS, MLP, HID, W.k_gemm_fc1);
    lin_make(&lin_fc2, ROWS, HID, MLP, W.k_gemm_fc2);
    lin_make(&lin_head, BATCH, CLASSES, HID, W.k_gemm_head);
    static const char *graph_names[6] = {
        "triton_poi_fused_add_mul_0", "triton_red_fused_mean_1", "triton_poi_fused_div_2",
        "triton_red_fused_sum_3", "triton_poi_fused_clone_4", "triton_per_fused_argmax_eq_5"};
    for (int i = 0; i < 6; i++)
        W.k_graph[i] = kern(graph_names[i], 1 + i, 1, 1, 128, flavour == CUDA ? 24 : 0, 0);
#undef BF
}

/* ---- the per-step event table ------------------------------------------------------------ */

enum kind {
    E_ANNOT,     /* user_annotation on the host */
    E_CPUOP,     /* cpu_op */
    E_FWDBWD_F,  /* fwdbwd flow end at a backward node (the start is written with its forward op) */
    E_INSTANT,   /* cpu_instant_event [memory] */
    E_PY,        /* python_function */
    E_RT,        /* cuda_runtime */
    E_DRV,       /* cuda_driver */
    E_GPU,       /* kernel / gpu_memcpy / gpu_memset */
    E_GPU_ANNOT, /* gpu_user_annotation */
};

enum { G_KERNEL, G_MEMCPY, G_MEMSET };
enum { FL_NONE, FL_S, FL_HOST_F, FL_GPU_F };

typedef struct {
    int64_t ts, dur;
    const char *name;
    const char *sig; /* cpu_op: shape args text; runtime (ROCm launch): the kernel text */
    int64_t ext, corr, seq, pyid, pyparent, num;
    int32_t tid, kern, bytes, cbid;
    uint8_t kind, gcat, flow, pymod, graph;
} ev_t;

static ev_t *evs;
static size_t n_evs, cap_evs;

static ev_t *ev_new(int kind)
{
    if (n_evs == cap_evs) {
        cap_evs = cap_evs ? cap_evs * 2 : 4096;
        evs = xrealloc(evs, cap_evs * sizeof *evs);
    }
    ev_t *e = &evs[n_evs++];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->ext = e->corr = e->seq = e->pyid = e->pyparent = -1;
    e->kern = -1;
    return e;
}

/* Generation state: the clock, the id counters, the open events. */
static struct {
    int64_t now;
    int tid;
    int64_t ext, corr, pyid, seq, addr;
    int64_t stream_free[2];
    int64_t alloc;                       /* bytes allocated, for the [memory] instants */
    size_t stack[64];                    /* open cpu_op / annotation events (indices) */
    int depth;
    size_t pystack[64];                  /* open python frames */
    int pydepth;
    int64_t cur_ext;                     /* External id of the innermost open cpu_op */
    int64_t fwd_seq[65][10];             /* the forward ops' sequence numbers, per layer (row L: the rest) */
    int step;
    int64_t helper;                      /* cycles through the helper frames */
} G;

static void tick(int64_t lo, int64_t hi) { G.now += uniform(lo, hi); }

static size_t py_open(const char *name, int mod)
{
    ev_t *e = ev_new(E_PY);
    e->name = name;
    e->tid = G.tid;
    e->ts = G.now;
    e->pyid = ++G.pyid;
    e->pyparent = G.pydepth ? evs[G.pystack[G.pydepth - 1]].pyid : -1;
    e->pymod = (uint8_t)mod;
    G.pystack[G.pydepth++] = n_evs - 1;
    tick(300, 1500);
    return n_evs - 1;
}

static void py_close(void)
{
    ev_t *e = &evs[G.pystack[--G.pydepth]];
    tick(200, 900);
    e->dur = G.now - e->ts;
    tick(100, 600);
}

/* A short Python call with no children (a getattr, a hook check). */
static void py_leaf(const char *name)
{
    py_open(name, 0);
    tick(200, 1200);
    py_close();
}

static void op_open(const char *name, const char *sigtext)
{
    ev_t *e = ev_new(E_CPUOP);
    e->name = name;
    e->sig = sigtext;
    e->tid = G.tid;
    e->ts = G.now;
    e->ext = ++G.ext;
    G.stack[G.depth++] = n_evs - 1;
    G.cur_ext = e->ext;
    tick(800, 3500);
}

static void op_close(void)
{
    ev_t *e = &evs[G.stack[--G.depth]];
    tick(500, 2500);
    e->dur = G.now - e->ts;
    G.cur_ext = -1;
    for (int i = G.depth - 1; i >= 0; i--)
        if (evs[G.stack[i]].kind == E_CPUOP) {
            G.cur_ext = evs[G.stack[i]].ext;
            break;
        }
    tick(300, 1500);
}

static void op_leaf(const char *name, const char *sigtext)
{
    op_open(name, sigtext);
    op_close();
}

static ev_t *cur_op(void) { return G.depth ? &evs[G.stack[G.depth - 1]] : NULL; }

/* Sequence number of a forward (autograd) op; the backward op gets the same one. */
static void op_seq(int64_t seq) { cur_op()->seq = seq; }

static void annot_open(const char *name, int64_t num)
{
    ev_t *e = ev_new(E_ANNOT);
    e->name = name;
    e->num = num;
    e->tid = G.tid;
    e->ts = G.now;
    e->ext = ++G.ext;
    G.stack[G.depth++] = n_evs - 1;
    tick(500, 2000);
}

#define annot_close op_close

static void mem_instant(int64_t bytes)
{
    ev_t *e = ev_new(E_INSTANT);
    e->name = "[memory]";
    e->tid = G.tid;
    e->ts = G.now;
    G.alloc += bytes;
    e->num = bytes;
    e->bytes = (int32_t)(bytes > 0 ? 1 : -1);
    e->pyid = G.alloc; /* Total Allocated, after this */
    e->corr = 0x7f3a40000000LL + (G.addr = (G.addr + bytes * 7 + 512) % 0x3ffffff000LL) / 512 * 512;
}

/* A runtime call that launches nothing (with the host-side `f` flow kineto writes). */
static void rt_call(const char *name, int cbid, int64_t dur_ns)
{
    ev_t *e = ev_new(E_RT);
    e->name = name;
    e->tid = G.tid;
    e->ts = G.now;
    e->dur = jitter(dur_ns, 30);
    e->ext = G.cur_ext;
    e->corr = ++G.corr;
    e->cbid = cbid;
    e->flow = FL_HOST_F;
    G.now += e->dur;
    tick(300, 1200);
}

/* Launch GPU work: the runtime event at now, then the GPU event on the stream.  rt_flow is
 * FL_S for a normal launch; FL_NONE gives a launch without its `s` flow (ROCm memsets). */
static void launch_any(int kind, const char *rt, int cbid, int gcat, int k, const char *gname, int64_t gpu_ns,
                       int comm, int bytes, int rt_flow)
{
    ev_t *r = ev_new(kind);
    r->name = rt;
    r->tid = G.tid;
    r->ts = G.now;
    r->dur = jitter(flavour == CUDA ? 4500 : 7000, 40);
    r->ext = G.cur_ext;
    r->corr = ++G.corr;
    r->cbid = cbid;
    r->kern = k;
    r->flow = (uint8_t)rt_flow;
    if (flavour == ROCM && k >= 0 && strstr(rt, "Launch"))
        r->sig = kerns[k].rt_kernel;
    size_t ri = n_evs - 1;
    ev_t *g = ev_new(E_GPU);
    r = &evs[ri]; /* ev_new may have moved the table */
    g->name = k >= 0 ? kerns[k].name : gname;
    g->gcat = (uint8_t)gcat;
    g->kern = k;
    g->bytes = bytes;
    g->ext = G.cur_ext;
    g->corr = r->corr;
    g->tid = comm ? stream_comm : stream_comp;
    g->flow = FL_GPU_F;
    int64_t start = r->ts + jitter(flavour == CUDA ? 6000 : 9000, 50);
    if (comm && world > 0)
        start += (int64_t)(late_us * 1000);
    int64_t *free_at = &G.stream_free[comm];
    if (start < *free_at)
        start = *free_at + uniform(800, 2500);
    g->ts = start;
    /* the innermost cpu_op's noise (annotations are no ops) */
    const char *op = NULL;
    for (int i = G.depth - 1; i >= 0 && !op; i--)
        if (evs[G.stack[i]].kind == E_CPUOP)
            op = evs[G.stack[i]].name;
    double ns = op && (run_cv > 0 || slow_op) ? (double)gpu_ns * op_factor(op) : (double)gpu_ns;
    ns *= step_factor;
    if (cur_step == 0 && warmup > 0 && op) {
        uint64_t h = 1469598103934665603ULL;
        for (const char *c = op; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        ns *= 1 + warmup * 2 * (double)(h >> 11) / 9007199254740992.0;
    }
    g->dur = comm && world > 0 ? (int64_t)ns : gpu_cv >= 0 ? gauss_dur(ns, gpu_cv) : jitter((int64_t)ns, 6);
    *free_at = g->ts + g->dur;
    G.now += r->dur;
    tick(400, 1500);
}

static const char *rt_launch_name(void) { return flavour == CUDA ? "cudaLaunchKernel" : "hipLaunchKernel"; }

/* An elementwise/library kernel launched through the usual runtime call. */
static void rocm_props(void);

static void launch(int k, int64_t gpu_ns)
{
    rocm_props();
    launch_any(E_RT, rt_launch_name(), flavour == CUDA ? 211 : 107, G_KERNEL, k, NULL, gpu_ns, 0, 0, FL_S);
}

/* A GEMM: cuBLAS through cudaLaunchKernelExC (with an attribute query before it);
 * hipBLASLt through hipExtModuleLaunchKernel. */
static void launch_gemm(int k, int64_t gpu_ns)
{
    if (flavour == CUDA) {
        rt_call("cudaFuncGetAttributes", 15, 2500);
        launch_any(E_RT, "cudaLaunchKernelExC", 430, G_KERNEL, k, NULL, gpu_ns, 0, 0, FL_S);
    } else {
        rocm_props();
        launch_any(E_RT, "hipExtModuleLaunchKernel", 65, G_KERNEL, k, NULL, gpu_ns, 0, 0, FL_S);
    }
}

/* ROCm queries the device properties before most library launches. */
static void rocm_props(void)
{
    if (flavour == ROCM)
        rt_call("hipGetDevicePropertiesR0600", 370, 3500);
}

/* GPU time of a GEMM of m x n x k, from a flavour's effective throughput. */
static int64_t gemm_ns(double m, double n, double k)
{
    double tflops = flavour == CUDA ? 520.0 : 450.0;
    return (int64_t)(2.0 * m * n * k / (tflops * 1e3)) + 2500;
}

/* GPU time of a memory-bound kernel moving `bytes`. */
static int64_t mem_ns(double bytes)
{
    double gbps = flavour == CUDA ? 2900.0 : 3600.0;
    return (int64_t)(bytes / gbps) + 1800;
}

/* ---- the step: forward, loss, backward, all-reduce, optimizer ---------------------------- */

static char **mod_block, **mod_attn, **mod_mlp, **mod_ln1, **mod_ln2, **mod_qkv, **mod_proj, **mod_fc1, **mod_fc2,
    **mod_act;

static char *str_addr(const char *fmt, uint64_t salt)
{
    return xasprintf(fmt, (unsigned long long)(0x7f0000000000ULL | ((seed * 0x9e3779b97f4a7c15ULL + salt) & 0xffffffff0ULL)));
}

static const char *S_call_impl, *S_wrapped, *S_getattr, *S_linear_fn, *S_ln_fn, *S_gelu_fn, *S_sdpa_fn, *S_cat_fn,
    *S_run_bwd, *S_add_fn, *S_flatten_fn, *S_transpose_fn, *S_perm_fn, *S_view_fn, *S_unbind_fn;

static void names_init(void)
{
    int L = n_layers;
    char ***tabs[] = {&mod_block, &mod_attn, &mod_mlp, &mod_ln1, &mod_ln2, &mod_qkv, &mod_proj, &mod_fc1, &mod_fc2,
                      &mod_act};
    const char *fmts[] = {"nn.Module: Block_%d", "nn.Module: Attention_%d", "nn.Module: Mlp_%d",
                          "nn.Module: LayerNorm_%d", "nn.Module: LayerNorm_%d", "nn.Module: Linear_%d",
                          "nn.Module: Linear_%d", "nn.Module: Linear_%d", "nn.Module: Linear_%d", "nn.Module: GELU_%d"};
    for (int t = 0; t < 10; t++) {
        *tabs[t] = xrealloc(NULL, (size_t)L * sizeof(char *));
        for (int l = 0; l < L; l++) {
            int idx = l;
            if (t == 3) idx = 2 * l + 1;
            if (t == 4) idx = 2 * l + 2;
            if (t == 5) idx = 4 * l + 1;
            if (t == 6) idx = 4 * l + 2;
            if (t == 7) idx = 4 * l + 3;
            if (t == 8) idx = 4 * l + 4;
            (*tabs[t])[l] = xasprintf(fmts[t], idx);
        }
    }
    S_call_impl = "torch/nn/modules/module.py(1784): _call_impl";
    S_wrapped = "torch/nn/modules/module.py(1773): _wrapped_call_impl";
    S_getattr = "torch/nn/modules/module.py(1928): __getattr__";
    S_linear_fn = "<built-in function linear>";
    S_ln_fn = str_addr("<built-in method layer_norm of type object at 0x%llx>", 1);
    S_gelu_fn = "<built-in function gelu>";
    S_sdpa_fn = "<built-in function scaled_dot_product_attention>";
    S_cat_fn = str_addr("<built-in method cat of type object at 0x%llx>", 1);
    S_run_bwd = str_addr("<built-in method run_backward of torch._C._EngineBase object at 0x%llx>", 2);
    S_add_fn = "<built-in function add>";
    S_flatten_fn = "<method 'flatten' of 'torch._C.TensorBase' objects>";
    S_transpose_fn = "<method 'transpose' of 'torch._C.TensorBase' objects>";
    S_perm_fn = "<method 'permute' of 'torch._C.TensorBase' objects>";
    S_view_fn = "<method 'reshape' of 'torch._C.TensorBase' objects>";
    S_unbind_fn = "<method 'unbind' of 'torch._C.TensorBase' objects>";
}

/* The small calls that make Python frames the bulk of a real trace: attribute lookups,
 * torch-function checks, shape helpers, hooks.  Each may make one nested call. */
static void py_helpers(int n)
{
    static const char *outer[] = {
        "torch/nn/modules/module.py(1928): __getattr__",
        "torch/overrides.py(1798): has_torch_function_variadic",
        "torch/_jit_internal.py(1190): is_scripting",
        "vit/model.py(44): _shape",
        "torch/nn/modules/module.py(1956): _get_backward_hooks",
        "torch/utils/_contextlib.py(116): decorate_context",
    };
    static const char *inner[] = {
        "<built-in function _has_torch_function_unary>",
        "<built-in method size of Tensor object at 0x7f3a1c2e5b30>",
        "<built-in function isinstance>",
        "<built-in method get of dict object at 0x7f3a1c9d0e40>",
    };
    for (int i = 0; i < n; i++) {
        unsigned k = (unsigned)G.helper++;
        py_open(outer[k % 6], 0);
        if (rng_next() & 1)
            py_leaf(inner[k % 4]);
        py_close();
    }
}

/* Enter an nn.Module the way the Python stack shows it. */
static void mod_enter(const char *modname, const char *forward)
{
    py_open(S_wrapped, 0);
    py_open(S_call_impl, 0);
    py_helpers(4);
    py_open(modname, 1);
    py_open(forward, 0);
    py_helpers(8);
}

static void mod_exit(void)
{
    py_close();
    py_close();
    py_close();
    py_close();
}

/* aten::linear -> aten::t -> aten::transpose -> aten::as_strided; aten::addmm -> GEMM */
static void linear(const char *modname, const lin_t *L, int l, int slot)
{
    mod_enter(modname, "torch/nn/modules/linear.py(125): forward");
    py_helpers(2);
    py_open(S_linear_fn, 0);
    op_open("aten::linear", L->linear);
    op_open("aten::t", L->t);
    op_open("aten::transpose", L->transpose);
    op_leaf("aten::as_strided", L->asstr);
    op_close();
    op_close();
    op_open("aten::addmm", L->addmm);
    G.fwd_seq[l][slot] = ++G.seq;
    op_seq(G.fwd_seq[l][slot]);
    mem_instant((int64_t)(L->m * L->n * 2));
    launch_gemm(L->kern, gemm_ns(L->m, L->n, L->k));
    op_close();
    op_close();
    py_close();
    mod_exit();
}

static void layer_norm(const char *modname, int l, int slot)
{
    mod_enter(modname, "torch/nn/modules/normalization.py(217): forward");
    py_leaf(S_getattr);
    py_open("torch/nn/functional.py(2910): layer_norm", 0);
    py_leaf("torch/overrides.py(1798): has_torch_function_variadic");
    py_open(S_ln_fn, 0);
    op_open("aten::layer_norm", W.ln);
    op_open("aten::native_layer_norm", W.nln);
    G.fwd_seq[l][slot] = ++G.seq;
    op_seq(G.fwd_seq[l][slot]);
    op_leaf("aten::empty", W.empty_o);
    op_leaf("aten::empty", W.empty_o);
    op_leaf("aten::empty", W.empty_o);
    mem_instant((int64_t)ROWS * HID * 2);
    launch(W.k_ln, mem_ns((double)ROWS * HID * 4));
    op_close();
    op_close();
    py_close();
    py_close();
    mod_exit();
}

static void residual_add(int l, int slot)
{
    py_open(S_add_fn, 0);
    op_open("aten::add", W.add_res);
    G.fwd_seq[l][slot] = ++G.seq;
    op_seq(G.fwd_seq[l][slot]);
    mem_instant((int64_t)ROWS * HID * 2);
    launch(W.k_add, mem_ns((double)ROWS * HID * 6));
    op_close();
    py_close();
}

static void attention(int l)
{
    mod_enter(mod_attn[l], "vit/model.py(88): forward");
    linear(mod_qkv[l], &lin_qkv, l, 0);
    py_open(S_view_fn, 0);
    op_open("aten::reshape", W.view_qkv);
    op_leaf("aten::view", W.view_qkv);
    op_close();
    py_close();
    py_open(S_perm_fn, 0);
    op_open("aten::permute", W.permute_qkv);
    op_leaf("aten::as_strided", W.permute_qkv);
    op_close();
    py_close();
    py_open(S_unbind_fn, 0);
    op_open("aten::unbind", W.unbind);
    for (int i = 0; i < 3; i++) {
        op_open("aten::select", W.unbind);
        op_leaf("aten::as_strided", W.unbind);
        op_close();
    }
    op_close();
    py_close();
    py_open(S_sdpa_fn, 0);
    op_open("aten::scaled_dot_product_attention", W.sdpa);
    /* CUDA takes the flash kernel; ROCm here the memory-efficient one (AOTriton) */
    if (flavour == CUDA)
        op_open("aten::_scaled_dot_product_flash_attention", W.sdpa_flash);
    else
        op_open("aten::_scaled_dot_product_efficient_attention", W.sdpa_eff);
    G.fwd_seq[l][1] = ++G.seq;
    op_seq(G.fwd_seq[l][1]);
    if (flavour == CUDA)
        op_open("aten::_flash_attention_forward", W.sdpa_flash);
    else
        op_open("aten::_efficient_attention_forward", W.sdpa_eff_fwd);
    op_leaf("aten::empty", W.empty_o);
    op_leaf("aten::empty", W.empty_o);
    mem_instant((int64_t)ROWS * HID * 2);
    double flops = 4.0 * BATCH * HEADS * TOK * TOK * HDIM;
    if (flavour == CUDA)
        launch(W.k_sdpa, (int64_t)(flops / 380e3) + 4000);
    else
        launch_any(E_RT, "hipModuleLaunchKernel", 54, G_KERNEL, W.k_sdpa, NULL, (int64_t)(flops / 300e3) + 6000, 0, 0,
                   FL_S);
    op_close();
    op_close();
    op_close();
    py_close();
    py_open(S_transpose_fn, 0);
    op_open("aten::transpose", W.transpose_pe);
    op_leaf("aten::as_strided", W.transpose_pe);
    op_close();
    py_close();
    py_open(S_view_fn, 0);
    op_open("aten::reshape", W.view_qkv);
    op_open("aten::clone", W.add_res);
    op_leaf("aten::empty_like", W.add_res);
    op_open("aten::copy_", W.add_res);
    launch(W.k_add, mem_ns((double)ROWS * HID * 4));
    op_close();
    op_close();
    op_leaf("aten::_unsafe_view", W.view_qkv);
    op_close();
    py_close();
    linear(mod_proj[l], &lin_proj, l, 2);
    mod_exit();
}

static void mlp(int l)
{
    mod_enter(mod_mlp[l], "vit/model.py(57): forward");
    linear(mod_fc1[l], &lin_fc1, l, 3);
    mod_enter(mod_act[l], "torch/nn/modules/activation.py(734): forward");
    py_open(S_gelu_fn, 0);
    op_open("aten::gelu", W.gelu);
    G.fwd_seq[l][4] = ++G.seq;
    op_seq(G.fwd_seq[l][4]);
    mem_instant((int64_t)ROWS * MLP * 2);
    launch(W.k_gelu, mem_ns((double)ROWS * MLP * 4));
    op_close();
    py_close();
    mod_exit();
    linear(mod_fc2[l], &lin_fc2, l, 5);
    mod_exit();
}

static void conv_bias(void)
{
    op_open("aten::reshape", W.reshape_b);
    op_leaf("aten::view", W.view_b);
    op_close();
    op_open("aten::add_", W.add_bias);
    launch(W.k_add_bias, mem_ns((double)BATCH * HID * 196 * 4));
    op_close();
}

/* Patch embedding: the convolution, whose tree is where the flavours differ most. */
static void patch_embed(void)
{
    mod_enter("nn.Module: PatchEmbed_0", "vit/model.py(31): forward");
    mod_enter("nn.Module: Conv2d_0", "torch/nn/modules/conv.py(548): forward");
    py_open("torch/nn/modules/conv.py(543): _conv_forward", 0);
    py_open("<built-in method conv2d of type object at 0x7f3a2c1e4f60>", 0);
    op_open("aten::conv2d", W.conv);
    op_open("aten::convolution", W.conv);
    G.fwd_seq[n_layers][3] = ++G.seq;
    op_seq(G.fwd_seq[n_layers][3]);
    op_open("aten::_convolution", W.conv_);
    double conv_flops = 2.0 * BATCH * 196 * HID * 3 * PATCH * PATCH;
    if (flavour == CUDA) {
        op_open("aten::cudnn_convolution", W.cudnn_conv);
        op_leaf("aten::empty", W.empty_ws);
        mem_instant(4194304);
        launch_any(E_RT, "cudaMemsetAsync", 51, G_MEMSET, -1, "Memset (Device)", 2400, 0, 4194304, FL_S);
        launch(W.k_nchw, mem_ns((double)BATCH * 3 * IMG * IMG * 4));
        launch(W.k_conv, gemm_ns(conv_flops / 2, 1, 1) * 2);
        op_close();
        conv_bias();
    } else {
        /* MIOpen adds the bias inside miopen_convolution; cuDNN's bias add is its sibling */
        op_open("aten::miopen_convolution", W.miopen_conv);
        op_leaf("aten::resize_", W.resize_w);
        op_leaf("aten::resize_", W.resize_in);
        rocm_props();
        for (int i = 0; i < 5; i++)
            launch_any(E_RT, "hipExtModuleLaunchKernel", 65, G_KERNEL, W.k_miopen[i], NULL,
                       i == 3 ? gemm_ns(conv_flops / 2, 1, 1) * 2 : mem_ns((double)BATCH * 3 * IMG * IMG * 2),
                       0, 0, FL_S);
        conv_bias();
        op_close();
    }
    op_close();
    op_close();
    op_close();
    py_close();
    py_close();
    mod_exit();
    py_open(S_flatten_fn, 0);
    op_open("aten::flatten", W.flatten);
    op_leaf("aten::view", W.flatten);
    op_close();
    py_close();
    py_open(S_transpose_fn, 0);
    op_open("aten::transpose", W.transpose_pe);
    op_leaf("aten::as_strided", W.transpose_pe);
    op_close();
    py_close();
    mod_exit();
    /* cls token + patches: torch.cat over a TensorList */
    py_open(S_cat_fn, 0);
    op_open("aten::cat", W.cat);
    mem_instant((int64_t)ROWS * HID * 2);
    launch(W.k_cat, mem_ns((double)ROWS * HID * 4));
    op_close();
    py_close();
    py_open(S_add_fn, 0);
    op_open("aten::add", W.add_pos);
    launch(W.k_add, mem_ns((double)ROWS * HID * 6));
    op_close();
    py_close();
}

static void loss(void)
{
    py_open("torch/nn/functional.py(3462): cross_entropy", 0);
    py_open("<built-in function cross_entropy_loss>", 0);
    op_open("aten::cross_entropy_loss", W.ce);
    op_open("aten::log_softmax", W.logsm);
    op_open("aten::_log_softmax", W.logsm_);
    G.fwd_seq[n_layers][2] = ++G.seq;
    op_seq(G.fwd_seq[n_layers][2]);
    launch(W.k_logsm, 5200);
    op_close();
    op_close();
    op_open("aten::nll_loss_nd", W.nll_nd);
    G.fwd_seq[n_layers][4] = ++G.seq;
    op_seq(G.fwd_seq[n_layers][4]);
    op_open("aten::nll_loss", W.nll);
    op_open("aten::nll_loss_forward", W.nll_fwd);
    launch(W.k_nll, 3100);
    op_close();
    op_close();
    op_close();
    op_close();
    py_close();
    py_close();
}

/* One backward node: evaluate_function -> XBackward0 -> ops (run on the autograd thread). */
static void bwd_open(const char *node, int64_t seq)
{
    char *full = NULL;
    /* the node names are few and fixed: intern them */
    static struct {
        const char *node;
        char *full;
    } cache[16];
    for (int i = 0; i < 16 && cache[i].node; i++)
        if (cache[i].node == node)
            full = cache[i].full;
    if (!full) {
        int i = 0;
        while (i < 15 && cache[i].node)
            i++;
        cache[i].node = node;
        full = cache[i].full = xasprintf("autograd::engine::evaluate_function: %s", node);
    }
    op_open(full, NULL);
    op_seq(seq);
    ev_t *f = ev_new(E_FWDBWD_F);
    f->tid = G.tid;
    f->ts = G.now;
    f->num = seq;
    op_open(node, NULL);
    op_seq(seq);
}

static void bwd_close(void)
{
    op_close();
    op_close();
}

static void bwd_linear(int l, int slot, const lin_t *L)
{
    bwd_open("AddmmBackward0", G.fwd_seq[l][slot]);
    op_open("aten::t", L->t);
    op_open("aten::transpose", L->transpose);
    op_leaf("aten::as_strided", L->asstr);
    op_close();
    op_close();
    op_open("aten::mm", L->mm_dgrad);
    mem_instant((int64_t)(L->m * L->k * 2));
    launch_gemm(W.k_mm_d, gemm_ns(L->m, L->k, L->n));
    op_close();
    op_open("aten::mm", L->mm_wgrad);
    launch_gemm(W.k_mm_w, gemm_ns(L->n, L->k, L->m));
    op_close();
    op_open("aten::sum", L->sum_bias);
    launch(W.k_sum, mem_ns(L->m * L->n * 2));
    op_close();
    bwd_close();
}

static void bwd_ln(int l, int slot)
{
    bwd_open("NativeLayerNormBackward0", G.fwd_seq[l][slot]);
    op_open("aten::native_layer_norm_backward", W.ln_bwd);
    op_leaf("aten::empty_like", W.add_res);
    op_leaf("aten::empty", W.empty_o);
    op_leaf("aten::empty", W.empty_o);
    launch(W.k_ln_bwd[0], mem_ns((double)ROWS * HID * 6));
    launch(W.k_ln_bwd[1], mem_ns((double)ROWS * HID * 4));
    op_close();
    bwd_close();
}

static void bwd_add(int l, int slot)
{
    /* AddBackward0 passes the gradient through: no kernel, but the accumulation into the
     * residual stream is an aten::add on the autograd thread */
    op_open("autograd::engine::evaluate_function: AddBackward0", NULL);
    op_seq(G.fwd_seq[l][slot]);
    op_leaf("AddBackward0", NULL);
    op_open("aten::add", W.add_res);
    launch(W.k_add, mem_ns((double)ROWS * HID * 6));
    op_close();
    op_close();
}

static void all_reduce(int64_t nbytes, int last_bucket)
{
    op_open("record_param_comms", W.comms);
    annot_open("nccl:all_reduce", 0);
    double ns = (double)nbytes / 180.0 + 9000;
    if (last_bucket && world > 0)
        ns *= 1 + coll_slow_pct / 100;
    launch_any(E_RT, rt_launch_name(), flavour == CUDA ? 211 : 107, G_KERNEL, W.k_nccl, NULL, (int64_t)ns, 1,
               (int)nbytes, FL_S);
    annot_close();
    op_close();
}

static void backward(void)
{
    int L = n_layers;
    int64_t grad_bytes = 0;
    bwd_open("NllLossBackward0", G.fwd_seq[L][4]);
    op_open("aten::nll_loss_backward", W.nll_bwd);
    op_open("aten::zero_", W.zero);
    op_open("aten::fill_", W.fill);
    launch(W.k_fill, 1500);
    op_close();
    op_close();
    launch(W.k_nll_bwd, 2600);
    op_close();
    bwd_close();
    bwd_open("LogSoftmaxBackward0", G.fwd_seq[L][2]);
    op_open("aten::_log_softmax_backward_data", W.logsm_bwd);
    launch(W.k_logsm_bwd, 4100);
    op_close();
    bwd_close();
    bwd_linear(L, 1, &lin_head);
    bwd_ln(L, 0);
    for (int l = L - 1; l >= 0; l--) {
        bwd_add(l, 9);
        bwd_linear(l, 5, &lin_fc2);
        bwd_open("GeluBackward0", G.fwd_seq[l][4]);
        op_open("aten::gelu_backward", W.gelu_bwd);
        launch(W.k_gelu_bwd, mem_ns((double)ROWS * MLP * 6));
        op_close();
        bwd_close();
        bwd_linear(l, 3, &lin_fc1);
        bwd_ln(l, 7);
        bwd_add(l, 8);
        bwd_linear(l, 2, &lin_proj);
        if (flavour == CUDA) {
            bwd_open("ScaledDotProductFlashAttentionBackward0", G.fwd_seq[l][1]);
            op_open("aten::_scaled_dot_product_flash_attention_backward", W.sdpa_bwd);
            op_open("aten::_flash_attention_backward", W.sdpa_bwd);
        } else {
            bwd_open("ScaledDotProductEfficientAttentionBackward0", G.fwd_seq[l][1]);
            op_open("aten::_scaled_dot_product_efficient_attention_backward", W.sdpa_eff_bwd);
            op_open("aten::_efficient_attention_backward", W.sdpa_eff_bwd);
        }
        op_leaf("aten::empty_like", W.add_res);
        op_leaf("aten::empty_like", W.add_res);
        op_leaf("aten::empty_like", W.add_res);
        double flops = 10.0 * BATCH * HEADS * TOK * TOK * HDIM;
        for (int i = 0; i < 3; i++) {
            int64_t ns = i == 1 ? (int64_t)(flops / (flavour == CUDA ? 330e3 : 260e3)) : mem_ns((double)ROWS * HID * 4);
            if (flavour == CUDA)
                launch(W.k_sdpa_bwd[i], ns);
            else
                launch_any(E_RT, "hipModuleLaunchKernel", 54, G_KERNEL, W.k_sdpa_bwd[i], NULL, ns, 0, 0, FL_S);
        }
        op_close();
        op_close();
        bwd_close();
        bwd_linear(l, 0, &lin_qkv);
        bwd_ln(l, 6);
        grad_bytes += (int64_t)(4 * HID * HID + 2 * HID * MLP) * 2;
        /* DDP all-reduces a bucket about every 25 MB of gradients, overlapping the rest */
        if (grad_bytes >= 25 * 1000 * 1000 || l == 0) {
            all_reduce(grad_bytes, l == 0);
            grad_bytes = 0;
        }
    }
    bwd_open("ConvolutionBackward0", G.fwd_seq[L][3]);
    op_open("aten::convolution_backward", W.conv_bwd);
    if (flavour == CUDA) {
        for (int i = 0; i < 3; i++)
            launch(W.k_conv_bwd[i], i == 1 ? gemm_ns(BATCH * 196.0, HID, 3.0 * 256) : mem_ns((double)ROWS * HID * 2));
    } else {
        rocm_props();
        /* MIOpen zeroes its workspace with hipMemsetAsync, which has no `s` flow */
        launch_any(E_RT, "hipMemsetAsync", 159, G_MEMSET, -1, "Memset (Device)", 2100, 0, 1179648, FL_NONE);
        for (int i = 0; i < 4; i++)
            launch_any(E_RT, "hipExtModuleLaunchKernel", 65, G_KERNEL, W.k_conv_bwd[i], NULL,
                       i == 1 ? gemm_ns(BATCH * 196.0, HID, 3.0 * 256) : mem_ns((double)ROWS * HID * 2), 0, 0, FL_S);
    }
    op_close();
    bwd_close();
}

static void optimizer(void)
{
    py_open("torch/optim/optimizer.py(485): wrapper", 0);
    annot_open("Optimizer.step#AdamW.step", 0);
    py_open("torch/optim/adamw.py(209): step", 0);
    if (!foreach_optim) {
        py_open("torch/optim/adam.py(733): _fused_adam", 0);
        op_open("aten::_fused_adamw_", W.fused_adamw);
        for (int i = 0; i < 3; i++)
            launch(W.k_adamw, mem_ns(param_bytes() * 8 / 3));
        op_close();
        py_close();
    } else {
        /* the foreach implementation: one multi-tensor kernel per step of the update */
        static const char *ops[] = {"aten::_foreach_lerp_", "aten::_foreach_mul_", "aten::_foreach_addcmul_",
                                    "aten::_foreach_sqrt", "aten::_foreach_div_", "aten::_foreach_add_",
                                    "aten::_foreach_addcdiv_"};
        py_open("torch/optim/adam.py(542): _multi_tensor_adam", 0);
        for (int i = 0; i < 7; i++) {
            const char *s = i == 2 || i == 6 ? W.foreach3 : i == 0 ? W.foreach2 : W.foreach1;
            op_open(ops[i], s);
            launch(W.k_foreach, mem_ns(param_bytes() * (i == 2 || i == 6 ? 4 : 3)));
            op_close();
        }
        py_close();
    }
    py_close();
    annot_close();
    py_close();
}

/* A graph launch: one runtime event whose n kernels (ks[i], about ns[i] each) all carry
 * its correlation id, back to back on the compute stream. */
static void graph_launch(const int *ks, const int64_t *ns, int n)
{
    ev_t *r = ev_new(E_RT);
    r->name = flavour == CUDA ? "cudaGraphLaunch" : "hipGraphLaunch";
    r->tid = G.tid;
    r->ts = G.now;
    r->dur = jitter(14000, 20);
    r->ext = G.cur_ext;
    r->corr = ++G.corr;
    r->cbid = flavour == CUDA ? 311 : 127;
    r->flow = FL_NONE; /* a graph launch has an `f` on the GPU but no `s` */
    int64_t start = r->ts + jitter(9000, 30);
    if (start < G.stream_free[0])
        start = G.stream_free[0] + 1200;
    size_t ri = n_evs - 1;
    for (int i = 0; i < n; i++) {
        ev_t *g = ev_new(E_GPU);
        r = &evs[ri]; /* ev_new may have moved the table */
        g->name = kerns[ks[i]].name;
        g->gcat = G_KERNEL;
        g->kern = ks[i];
        g->ext = r->ext;
        g->corr = r->corr;
        g->tid = stream_comp;
        g->flow = i == 0 ? FL_GPU_F : FL_NONE;
        g->graph = 1;
        g->ts = start;
        g->dur = jitter(ns[i], 8);
        start = g->ts + g->dur + uniform(600, 1400);
    }
    G.stream_free[0] = start;
    G.now += r->dur;
    tick(500, 1500);
}

/* A compiled region: an inductor triton kernel launched through the driver/module API,
 * then a graph launch whose kernels all carry the launch's correlation id. */
static void compiled_metrics(void)
{
    py_open("torch/_dynamo/eval_frame.py(838): compile_wrapper", 0);
    op_open("Torch-Compiled Region: 0/0", NULL);
    op_open("triton_per_fused__log_softmax_nll_loss_forward_0", W.triton);
    if (flavour == CUDA)
        launch_any(E_DRV, "cuLaunchKernel", 307, G_KERNEL, W.k_triton, NULL, 3300, 0, 0, FL_S);
    else
        launch_any(E_RT, "hipModuleLaunchKernel", 54, G_KERNEL, W.k_triton, NULL, 3900, 0, 0, FL_S);
    op_close();
    static const int64_t graph_ns[6] = {2600, 3300, 4000, 4700, 5400, 6100};
    graph_launch(W.k_graph, graph_ns, 6);
    op_close();
    py_close();
}

/* Two aten::sub ops under their aten::rsub: the first launches its kernel on CUDA only,
 * the second on ROCm only (the work moved from one op to the other). */
static void moved_sub(void)
{
    for (int i = 0; i < 2; i++) {
        op_open("aten::rsub", NULL);
        op_open("aten::sub", NULL);
        if ((i == 0) == (flavour == CUDA))
            launch(W.k_add, 9000 + 3000 * i);
        op_close();
        op_close();
    }
}

/* One training step: the batch in, forward, loss, backward, the optimizer. */
static void train_body(void)
{
    int L = n_layers;
    py_open("train.py(141): train_step", 0);
    /* input batch to the device */
    py_open("<method 'to' of 'torch._C.TensorBase' objects>", 0);
    op_open("aten::to", W.to);
    op_open("aten::_to_copy", W.to);
    op_leaf("aten::empty_strided", W.empty_strided);
    mem_instant((int64_t)BATCH * 3 * IMG * IMG * 2);
    op_open("aten::copy_", W.copy_img);
    if (flavour == CUDA)
        launch_any(E_RT, "cudaMemcpyAsync", 41, G_MEMCPY, -1, "Memcpy HtoD (Pinned -> Device)",
                   (int64_t)(BATCH * 3.0 * IMG * IMG * 4 / 24.0), 0, BATCH * 3 * IMG * IMG * 4, FL_S);
    else
        launch_any(E_RT, "hipMemcpyWithStream", 97, G_MEMCPY, -1, "Memcpy HtoD (Host -> Device)",
                   (int64_t)(BATCH * 3.0 * IMG * IMG * 4 / 28.0), 0, BATCH * 3 * IMG * IMG * 4, FL_S);
    op_close();
    op_close();
    op_close();
    py_close();
    mod_enter("nn.Module: VisionTransformer_0", "vit/model.py(203): forward");
    patch_embed();
    for (int l = 0; l < L; l++) {
        mod_enter(mod_block[l], "vit/model.py(121): forward");
        layer_norm(mod_ln1[l], l, 6);
        attention(l);
        residual_add(l, 8);
        layer_norm(mod_ln2[l], l, 7);
        mlp(l);
        residual_add(l, 9);
        mod_exit();
    }
    layer_norm("nn.Module: LayerNorm_0", L, 0);
    op_open("aten::select", W.select_cls);
    op_leaf("aten::as_strided", W.select_cls);
    op_close();
    linear("nn.Module: Linear_0", &lin_head, L, 1);
    mod_exit();
    loss();
    /* loss.backward(): the main thread waits in run_backward while the autograd thread works */
    py_open("torch/_tensor.py(648): backward", 0);
    py_open("torch/autograd/__init__.py(353): backward", 0);
    py_open("torch/autograd/graph.py(824): _engine_run_backward", 0);
    py_open(S_run_bwd, 0);
    op_open("aten::ones_like", W.ones_like);
    op_open("aten::fill_", W.fill);
    launch(W.k_fill, 1400);
    op_close();
    op_close();
    int saved_depth = G.depth;
    G.tid = bwd_tid;
    tick(8000, 20000);
    backward();
    G.tid = main_tid;
    G.depth = saved_depth;
    tick(5000, 15000);
    py_close();
    py_close();
    py_close();
    py_close();
    optimizer();
    compiled_metrics();
    if (shape == SH_ONE_SIDED_LCA)
        moved_sub();
    py_close(); /* train_step */
}

/* One decode step replayed from a graph, as vLLM runs it: the inputs copied in, the whole
 * model as one graph launch under Python frames only (no cpu_op above it), the sampled
 * token out. */
static void decode_body(void)
{
    py_open("vllm/worker/model_runner.py(1712): execute_model", 0);
    op_open("aten::copy_", W.copy_img);
    if (flavour == CUDA)
        launch_any(E_RT, "cudaMemcpyAsync", 41, G_MEMCPY, -1, "Memcpy HtoD (Pinned -> Device)", 3000, 0, 4096, FL_S);
    else
        launch_any(E_RT, "hipMemcpyWithStream", 97, G_MEMCPY, -1, "Memcpy HtoD (Host -> Device)", 3500, 0, 4096, FL_S);
    op_close();
    py_open("torch/cuda/graphs.py(104): replay", 0);
    int n = n_layers * 6 + 2;
    int *ks = xrealloc(NULL, (size_t)n * sizeof *ks);
    int64_t *ns = xrealloc(NULL, (size_t)n * sizeof *ns);
    for (int i = 0; i < n; i++) {
        int j = i % 6;
        ks[i] = j == 1 ? W.k_gemm_qkv : j == 4 ? W.k_gemm_fc1 : W.k_graph[j];
        ns[i] = (j == 1 || j == 4 ? 42000 : 9000 + 1500 * j) * (flavour == CUDA ? 10 : 12) / 10;
    }
    graph_launch(ks, ns, n);
    free(ks);
    free(ns);
    py_close();
    op_open("aten::argmax", NULL);
    launch(W.k_graph[5], 4200);
    op_close();
    py_close();
}

/* The capture run of a graph: the model's ops are recorded, not run, so the host is busy
 * and the GPU all but idle (one warm-up fill). */
static void capture_body(void)
{
    py_open("vllm/worker/model_runner.py(1402): capture", 0);
    op_open("aten::fill_", W.fill);
    launch(W.k_fill, 11000);
    op_close();
    rt_call(flavour == CUDA ? "cudaStreamBeginCapture" : "hipStreamBeginCapture", 318, 6000);
    for (int l = 0; l < n_layers; l++) {
        op_leaf("aten::mm", NULL);
        op_leaf("aten::add", NULL);
        op_leaf("aten::gelu", NULL);
    }
    rt_call(flavour == CUDA ? "cudaStreamEndCapture" : "hipStreamEndCapture", 319, 9000);
    rt_call(flavour == CUDA ? "cudaGraphInstantiate" : "hipGraphInstantiate", 320, 250000);
    py_close();
}

static void step(int s)
{
    n_evs = 0;
    G.step = s;
    G.alloc = 6LL << 30; /* what the model and optimizer state hold between steps */
    G.tid = main_tid;
    G.pydepth = 0;
    G.depth = 0;
    static char *step_name;
    free(step_name);
    step_name = xasprintf("ProfilerStep#%d", s + 5);
    py_open("torch/profiler/profiler.py(815): step", 0);
    py_leaf("<built-in function perf_counter_ns>");
    py_close();
    annot_open(step_name, s + 5);
    size_t gpu_first = n_evs;
    if (shape == SH_GRAPH_REPLAY)
        decode_body();
    else if (shape == SH_CAPTURE_ONLY)
        capture_body();
    else
        train_body();
    /* the step ends with a synchronisation: the host waits for the GPU */
    int64_t gpu_end = G.stream_free[0] > G.stream_free[1] ? G.stream_free[0] : G.stream_free[1];
    ev_t *sync = ev_new(E_RT);
    sync->name = flavour == CUDA ? "cudaDeviceSynchronize" : "hipDeviceSynchronize";
    sync->tid = G.tid;
    sync->ts = G.now;
    sync->dur = (gpu_end > G.now ? gpu_end - G.now : 0) + jitter(9000, 30);
    sync->corr = ++G.corr;
    sync->cbid = flavour == CUDA ? 165 : 196;
    sync->flow = FL_HOST_F;
    sync->ext = -1;
    G.now += sync->dur;
    tick(2000, 6000);
    annot_close();
    /* the step on the GPU, from its first to its last activity */
    int64_t g0 = INT64_MAX, g1 = 0;
    for (size_t i = gpu_first; i < n_evs; i++)
        if (evs[i].kind == E_GPU && evs[i].tid == stream_comp) {
            if (evs[i].ts < g0)
                g0 = evs[i].ts;
            if (evs[i].ts + evs[i].dur > g1)
                g1 = evs[i].ts + evs[i].dur;
        }
    ev_t *ga = ev_new(E_GPU_ANNOT);
    ga->name = step_name;
    ga->tid = stream_comp;
    ga->ts = g0;
    ga->dur = g1 - g0;
    ga->ext = evs[gpu_first - 1].ext;
    /* the host is idle a little between steps (data loading) */
    tick(30000, 90000);
}

/* GPU work from before the captured CPU window: kernels with no runtime event. */
static void prologue(void)
{
    n_evs = 0;
    int64_t t = t0_ns - 2500000;
    int ks[] = {W.k_gemm_fc2, W.k_add, W.k_ln, W.k_gemm_qkv, W.k_sdpa, W.k_gelu, W.k_add, W.k_sum};
    int64_t corr = G.corr - 400, ext = G.ext - 200;
    for (int i = 0; i < 24; i++) {
        ev_t *g = ev_new(E_GPU);
        int k = ks[i % 8];
        g->name = kerns[k].name;
        g->kern = k;
        g->gcat = G_KERNEL;
        g->ext = ext + i;
        g->corr = corr + i * 3;
        g->tid = stream_comp;
        g->flow = FL_GPU_F;
        g->ts = t;
        g->dur = jitter(30000 + 9000 * (i % 5), 20);
        t += g->dur + uniform(500, 2000);
    }
}

/* ---- writing ----------------------------------------------------------------------------- */

enum pass { P_CPU, P_INSTANT, P_PY, P_RT, P_GPU, N_PASSES };

static int64_t ev_idx; /* "Ev Idx": position among the host events written so far */
static int first_event;
static int64_t n_written; /* traceEvents elements written */

static void ev_begin(void)
{
    n_written++;
    if (first_event) {
        PUTL("\n  {\n");
        first_event = 0;
    } else {
        PUTL(",\n  {\n");
    }
}

static void put_pidtid(int pid, int tid)
{
    PUTL(", \"pid\": ");
    put_int(pid);
    PUTL(", \"tid\": ");
    put_int(tid);
    PUTL(",\n    \"ts\": ");
}

static void put_flow(const char *ph, int64_t id, int pid, int tid, int64_t ts, const char *cat, int end)
{
    ev_begin();
    PUTL("    \"ph\": \"");
    puts_(ph);
    PUTL("\", \"id\": ");
    put_int(id);
    PUTL(", \"pid\": ");
    put_int(pid);
    PUTL(", \"tid\": ");
    put_int(tid);
    PUTL(", \"ts\": ");
    put_us(ts);
    PUTL(",\n    \"cat\": \"");
    puts_(cat);
    PUTL("\", \"name\": \"");
    puts_(cat);
    if (end)
        PUTL("\", \"bp\": \"e\"\n  }");
    else
        PUTL("\"\n  }");
}

static void put_x_head(const char *cat, const char *name, int pid, int tid, int64_t ts, int64_t dur)
{
    ev_begin();
    PUTL("    \"ph\": \"X\", \"cat\": \"");
    puts_(cat);
    PUTL("\", \"name\": ");
    put_str(name);
    put_pidtid(pid, tid);
    put_us(ts);
    PUTL(", \"dur\": ");
    put_us(dur);
    PUTL(",\n    \"args\": {\n      ");
}


/* A rank's all-reduce kernel: the collective's metadata, as PyTorch's NCCL recorder adds it
 * to the kernel's args (bf16 gradients, the default process group of every rank). */
static void put_coll_args(const ev_t *e)
{
    if (world <= 0 || e->kern != W.k_nccl)
        return;
    char b[160];
    PUTL(",\n      \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", "
         "\"Process Group Desc\": \"default_pg\", \"Process Group Ranks\": [");
    for (long r = 0; r < world; r++) {
        snprintf(b, sizeof b, "%s%ld", r ? ", " : "", r);
        puts_(b);
    }
    snprintf(b, sizeof b, "], \"Group size\": %ld, \"dtype\": \"BFloat16\", \"In msg nelems\": %ld, "
             "\"Out msg nelems\": %ld", world, (long)e->bytes / 2, (long)e->bytes / 2);
    puts_(b);
    PUTL(", \"In split size\": [], \"Out split size\": []");
}

static void write_event(const ev_t *e, int pass)
{
    switch (e->kind) {
    case E_ANNOT:
    case E_CPUOP:
        if (pass != P_CPU)
            return;
        put_x_head(e->kind == E_ANNOT ? "user_annotation" : "cpu_op", e->name, host_pid, e->tid, e->ts, e->dur);
        PUTL("\"External id\": ");
        put_int(e->ext);
        if (e->seq >= 0 && !e->sig) {
            /* evaluate_function / XBackward0 nodes */
            PUTL(",\"Record function id\": 0, \"Sequence number\": ");
            put_int(e->seq);
            PUTL(", \"Fwd thread id\": 1");
        } else {
            if (e->seq >= 0) {
                PUTL(",\"Sequence number\": ");
                put_int(e->seq);
                PUTL(", \"Fwd thread id\": ");
                put_int(e->tid == bwd_tid ? 1 : 0);
                PUTL(", \"Record function id\": 0");
            } else {
                PUTL(",\"Record function id\": 0");
            }
            if (e->sig) {
                PUTL(", ");
                puts_(e->sig);
            }
            if (e->kind == E_CPUOP && e->name[0] == 't' && !strncmp(e->name, "triton_", 7))
                PUTL(", \"kernel_backend\": \"triton\", \"kernel_file\": \"/tmp/torchinductor_root/ab/cabxq3r6x5uyqimhqk2k3ue2yqyh5jmk4nrsyxxx3qxu5cemwqt.py\", \"stream\": 0");
        }
        PUTL(", \"Ev Idx\": ");
        put_int(ev_idx++);
        PUTL("\n    }\n  }");
        if (e->kind == E_CPUOP && e->seq >= 0 && e->tid == main_tid && e->sig) {
            /* the forward end of a fwdbwd flow (its id is the sequence number) */
            put_flow("s", e->seq, host_pid, e->tid, e->ts, "fwdbwd", 0);
        }
        return;
    case E_FWDBWD_F:
        if (pass != P_CPU)
            return;
        put_flow("f", e->num, host_pid, e->tid, e->ts, "fwdbwd", 1);
        return;
    case E_INSTANT:
        if (pass != P_INSTANT)
            return;
        ev_begin();
        PUTL("    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
        put_int(host_pid);
        PUTL(", \"tid\": ");
        put_int(e->tid);
        PUTL(",\n    \"ts\": ");
        put_us(e->ts);
        PUTL(",\n    \"args\": {\n      \"Total Reserved\": ");
        put_int((e->pyid / (20 << 20) + 1) * (20 << 20) + 2147483648LL);
        PUTL(", \"Total Allocated\": ");
        put_int(e->pyid);
        PUTL(", \"Bytes\": ");
        put_int(e->num);
        PUTL(", \"Addr\": ");
        put_int(e->corr);
        PUTL(", \"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": ");
        put_int(ev_idx++);
        PUTL("\n    }\n  }");
        return;
    case E_PY:
        if (pass != P_PY)
            return;
        put_x_head("python_function", e->name, host_pid, e->tid, e->ts, e->dur);
        PUTL("\"Python parent id\": ");
        if (e->pyparent < 0)
            PUTL("null");
        else
            put_int(e->pyparent);
        PUTL(", \"Python id\": ");
        put_int(e->pyid);
        if (e->pymod)
            PUTL(", \"Python module id\": 0");
        PUTL(", \"Ev Idx\": ");
        put_int(ev_idx++);
        PUTL("\n    }\n  }");
        return;
    case E_RT:
    case E_DRV:
        if (pass != P_RT)
            return;
        put_x_head(e->kind == E_RT ? "cuda_runtime" : "cuda_driver", e->name, host_pid, e->tid, e->ts, e->dur);
        if (e->ext >= 0) {
            PUTL("\"External id\": ");
            put_int(e->ext);
            PUTL(",      ");
        }
        if (flavour == CUDA) {
            PUTL("\"cbid\": ");
            put_int(e->cbid);
            PUTL(", \"correlation\": ");
            put_int(e->corr);
        } else if (e->sig) {
            puts_(e->sig);
            PUTL(", \"cid\": ");
            put_int(e->cbid);
            PUTL(", \"correlation\": ");
            put_int(e->corr);
            const kern_t *k = &kerns[e->kern];
            PUTL(",      \"grid\": [");
            put_int(k->grid[0]);
            PUTL(", ");
            put_int(k->grid[1]);
            PUTL(", ");
            put_int(k->grid[2]);
            PUTL("],      \"block\": [");
            put_int(k->block[0]);
            PUTL(", 1, 1],      \"shared memory\": 0");
        } else {
            PUTL("\"cid\": ");
            put_int(e->cbid);
            PUTL(", \"correlation\": ");
            put_int(e->corr);
        }
        PUTL("\n    }\n  }");
        if (e->flow == FL_S)
            put_flow("s", e->corr, host_pid, e->tid, e->ts, "ac2g", 0);
        else if (e->flow == FL_HOST_F)
            put_flow("f", e->corr, host_pid, e->tid, e->ts, "ac2g", 1);
        return;
    case E_GPU:
        if (pass != P_GPU)
            return;
        put_x_head(e->gcat == G_KERNEL ? "kernel" : e->gcat == G_MEMCPY ? "gpu_memcpy" : "gpu_memset", e->name, gpu_pid,
                   e->tid, e->ts, e->dur);
        if (e->ext >= 0) {
            PUTL("\"External id\": ");
            put_int(e->ext);
            puts_(flavour == CUDA ? ",\n      " : ",            ");
        }
        if (flavour == CUDA) {
            if (e->gcat == G_KERNEL)
                PUTL("\"queued\": 0, ");
            PUTL("\"device\": 0, \"context\": 1,\n      \"stream\": ");
            put_int(e->tid);
            PUTL(", \"correlation\": ");
            put_int(e->corr);
            if (e->gcat == G_KERNEL) {
                PUTL(",");
                puts_(kerns[e->kern].args_tail);
                put_coll_args(e);
            } else {
                PUTL(",\n      \"bytes\": ");
                put_int(e->bytes);
                PUTL(", \"memory bandwidth (GB/s)\": ");
                put_double((double)e->bytes / (double)e->dur);
            }
        } else {
            PUTL("\"device\": 2, \"stream\": ");
            put_int(e->tid);
            PUTL(",      \"correlation\": ");
            put_int(e->corr);
            PUTL(",");
            if (e->gcat == G_KERNEL) {
                puts_(kerns[e->kern].args_tail);
                put_coll_args(e);
            } else if (e->gcat == G_MEMCPY)
                PUTL(" \"kind\": \"HtoD\"");
            else
                PUTL(" \"kind\": \"Device\"");
        }
        PUTL("\n    }\n  }");
        if (e->flow == FL_GPU_F)
            put_flow("f", e->corr, gpu_pid, e->tid, e->ts, "ac2g", 1);
        return;
    case E_GPU_ANNOT:
        if (pass != P_GPU)
            return;
        put_x_head("gpu_user_annotation", e->name, gpu_pid, e->tid, e->ts, e->dur);
        PUTL("\"External id\": ");
        put_int(e->ext);
        PUTL("\n    }\n  }");
        return;
    }
}

static void write_events(int pass)
{
    for (size_t i = 0; i < n_evs; i++)
        write_event(&evs[i], pass);
}

static void put_meta(const char *name, int pid, int tid, const char *key, const char *sval, int64_t ival)
{
    ev_begin();
    PUTL("    \"name\": \"");
    puts_(name);
    PUTL("\", \"ph\": \"M\", \"ts\": ");
    put_us(t0_ns);
    PUTL(", \"pid\": ");
    put_int(pid);
    PUTL(", \"tid\": ");
    put_int(tid);
    PUTL(",\n    \"args\": {\n      \"");
    puts_(key);
    PUTL("\": ");
    if (sval)
        put_str(sval);
    else
        put_int(ival);
    PUTL("\n    }\n  }");
}

static void write_metadata(void)
{
    char tmp[64];
    put_meta("process_name", host_pid, 0, "name", "python3", 0);
    put_meta("process_labels", host_pid, 0, "labels", "CPU", 0);
    put_meta("process_sort_index", host_pid, 0, "sort_index", NULL, host_pid);
    for (int d = 0; d < 8; d++) {
        snprintf(tmp, sizeof tmp, "GPU %d", d);
        put_meta("process_name", d, 0, "name", "python3", 0);
        put_meta("process_labels", d, 0, "labels", tmp, 0);
        put_meta("process_sort_index", d, 0, "sort_index", NULL, 5000000 + d);
    }
    /* the tqdm monitor thread shows up as pid 0 / tid 0 */
    put_meta("thread_name", 0, 0, "name", "thread 0 (python3)", 0);
    put_meta("thread_sort_index", 0, 0, "sort_index", NULL, 0);
    int streams[2] = {stream_comp, stream_comm};
    for (int i = 0; i < 2; i++) {
        snprintf(tmp, sizeof tmp, "stream %d ", streams[i]);
        put_meta("thread_name", gpu_pid, streams[i], "name", tmp, 0);
        put_meta("thread_sort_index", gpu_pid, streams[i], "sort_index", NULL, streams[i]);
    }
    snprintf(tmp, sizeof tmp, "thread %d (python3)", main_tid);
    put_meta("thread_name", host_pid, main_tid, "name", tmp, 0);
    put_meta("thread_sort_index", host_pid, main_tid, "sort_index", NULL, main_tid);
    /* the autograd thread is named twice; the later name is the one that holds */
    snprintf(tmp, sizeof tmp, "thread %d (python3)", bwd_tid);
    put_meta("thread_name", host_pid, bwd_tid, "name", tmp, 0);
    put_meta("thread_sort_index", host_pid, bwd_tid, "sort_index", NULL, bwd_tid);
    snprintf(tmp, sizeof tmp, "thread %d (python3)", main_tid);
    put_meta("thread_name", host_pid, main_tid, "name", tmp, 0);
    put_meta("thread_sort_index", host_pid, main_tid, "sort_index", NULL, main_tid);
    snprintf(tmp, sizeof tmp, "thread %d (pt_autograd_0)", bwd_tid);
    put_meta("thread_name", host_pid, bwd_tid, "name", tmp, 0);
    put_meta("thread_sort_index", host_pid, bwd_tid, "sort_index", NULL, bwd_tid);
}

static void write_header(void)
{
    PUTL("{\n  \"metadata\": {\n    \"profiler\": {\n      \"wait\": 1,\n      \"warmups\": 4,\n"
         "      \"record_shapes\": true,\n      \"with_stack\": true,\n      \"activities\": [\n        \"CPU\",\n"
         "        \"CUDA\"\n      ]\n    },\n    \"generator\": \"tlcompare tools/gentrace\",\n    \"seed\": ");
    put_int((int64_t)seed);
    PUTL(",\n    \"model\": \"vit_base_patch16_224\",\n    \"layers\": ");
    put_int(n_layers);
    PUTL("\n  },\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    for (int d = 0; d < 8; d++) {
        puts_(d ? ",\n    {\n      \"id\": " : "\n    {\n      \"id\": ");
        put_int(d);
        PUTL(", \"name\": \"");
        puts_(gpu_name ? gpu_name : flavour == CUDA ? "NVIDIA H100 80GB HBM3" : "AMD Instinct MI300X");
        if (flavour == CUDA)
            PUTL("\", \"totalGlobalMem\": 85018279936,\n"
                 "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
                 "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                 "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                 "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
                 "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
                 "\"sharedMemPerMultiprocessor\": 233472\n    }");
        else
            PUTL("\", \"totalGlobalMem\": 206141652992,\n"
                 "      \"computeMajor\": 9, \"computeMinor\": 4,\n"
                 "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                 "      \"regsPerBlock\": 65536, \"warpSize\": 64,\n"
                 "      \"sharedMemPerBlock\": 65536, \"numSms\": 304\n"
                 "    , \"maxSharedMemoryPerMultiProcessor\": 65536\n    }");
    }
    PUTL("\n  ],\n");
    if (flavour == CUDA)
        PUTL("  \"cupti_version\": 22,\n  \"cuda_runtime_version\": 12040,\n  \"cuda_driver_version\": 12090,\n");
    else
        PUTL("  \"roctracer_version\": 4.1,\n  \"hip_runtime_version\": 60443483,\n");
    if (world <= 0) {
        PUTL("  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1, "
             "\"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", "
             "\"pg_size\": 8, \"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]}], \"nccl_version\": \"2.21.5\"},\n");
    } else {
        char b[160];
        snprintf(b, sizeof b, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %ld, \"world_size\": %ld, ",
                 rank_id, world);
        puts_(b);
        snprintf(b, sizeof b, "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
                 "\"backend_config\": \"cuda:nccl\", \"pg_size\": %ld, \"ranks\": [", world);
        puts_(b);
        for (long r = 0; r < world; r++) {
            snprintf(b, sizeof b, "%s%ld", r ? ", " : "", r);
            puts_(b);
        }
        PUTL("]}], \"nccl_version\": \"2.21.5\"},\n");
    }
    PUTL("  \"record_shapes\": 1,\n");
    if (flavour == ROCM)
        PUTL("  \"hip_driver_version\": 60443483,\n");
    PUTL("  \"with_stack\": 1,\n  \"trace_id\": \"");
    char id[33];
    uint64_t h = seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)flavour;
    for (int i = 0; i < 32; i++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        id[i] = "0123456789ABCDEF"[(h >> 59) & 15];
    }
    id[32] = 0;
    puts_(id);
    PUTL("\",\n  \"traceEvents\": [");
    first_event = 1;
}

static void write_trailer(int64_t t_end)
{
    /* the profiler's own span and markers, with string pids and tids */
    ev_begin();
    PUTL("    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    put_us(t0_ns - 120000);
    PUTL(", \"dur\": ");
    put_us(t_end - t0_ns + 120000);
    PUTL(",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
         "    \"args\": {\n      \"Op count\": 0\n    }\n  }");
    ev_begin();
    PUTL("    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
    put_us(t0_ns - 120000);
    PUTL(",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  }");
    ev_begin();
    PUTL("    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
         "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    put_us(t0_ns - 120000);
    PUTL("\n  }");
    ev_begin();
    PUTL("    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    put_us(t_end + 4000);
    PUTL("\n  }\n  ],\n  \"traceName\": \"gentrace_");
    puts_(flavour == CUDA ? "cuda" : "rocm");
    PUTL(".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    put_int(1751410836000000000LL + (int64_t)(seed % 1000) * 1000000000LL);
    PUTL("\n}\n");
}

/* The tqdm monitor thread's frames, spanning the whole window (pid 0, tid 0, as real traces have). */
static void write_monitor_frames(int64_t t_end)
{
    static const char *frames[] = {"threading.py(1032): _bootstrap", "threading.py(1075): _bootstrap_inner",
                                   "tqdm/_monitor.py(60): run", "threading.py(655): wait",
                                   "threading.py(359): wait"};
    for (int i = 0; i < 5; i++) {
        put_x_head("python_function", frames[i], 0, 0, t0_ns - 60000 + i * 1300, t_end - t0_ns + 50000 - i * 2600);
        PUTL("\"Python parent id\": ");
        if (i)
            put_int(i);
        else
            PUTL("null");
        PUTL(", \"Python id\": ");
        put_int(i + 1);
        PUTL(", \"Ev Idx\": ");
        put_int(ev_idx++);
        PUTL("\n    }\n  }");
    }
}

/* Generate the whole run once, writing the events of one pass. */
static int64_t run_pass(int pass, int steps)
{
    memset(&G, 0, sizeof G);
    rng_state = seed * 0x2545f4914f6cdd1dULL + (uint64_t)flavour * 0x9e3779b97f4a7c15ULL + 12345;
    G.now = t0_ns;
    G.ext = 4000;
    G.corr = 121000;
    G.pyid = 5; /* 1..5: the monitor thread's frames */
    G.cur_ext = -1;
    G.stream_free[0] = G.stream_free[1] = t0_ns;
    if (shape != SH_CAPTURE_ONLY)
        prologue();
    write_events(pass);
    for (int s = 0; s < steps; s++) {
        step_factor = step_cv > 0 ? step_noise(s) : 1;
        cur_step = s;
        step(s);
        write_events(pass);
    }
    return G.now;
}

static void generate(int steps)
{
    write_header();
    int64_t t_end = 0;
    for (int p = 0; p < N_PASSES; p++) {
        t_end = run_pass(p, steps);
        if (p == P_PY)
            write_monitor_frames(t_end);
    }
    write_metadata();
    write_trailer(t_end);
}

/* ---- hostile shapes: small traces that drive one resource without bound --------------- */

/*
 * The reliability tests need traces of a few shapes that a broken exporter or a fuzzer
 * produces and the workload model never would: a call chain thousands deep, graph
 * launches sharing one correlation, nested ops over many kernels, strings of escapes, a
 * shape argument of millions of entries, launches written out of their time order.  Each
 * is written straight from its parameters (--count N, --fan M), in the compact layout
 * of a minimal trace: cpu ops and runtime calls on pid 1 tid 1, kernels on pid 0 stream 7.
 */
enum { SH_NONE, SH_CHAIN, SH_GRAPH_FANOUT, SH_NESTED, SH_ESCAPES, SH_DIMS, SH_CPU_ONLY, SH_OUT_OF_ORDER, SH_SIBLINGS, SH_TOP_SIBLINGS };

static const struct {
    const char *name;
    int shape;
    const char *what;
} shapes[] = {
    {"chain", SH_CHAIN, "N cpu_ops nested one in the other, the innermost launching one kernel"},
    {"graph-fanout", SH_GRAPH_FANOUT, "N cudaGraphLaunch calls sharing one correlation with M kernels"},
    {"nested", SH_NESTED, "N nested cpu_ops, the innermost launching M kernels"},
    {"escapes", SH_ESCAPES, "a cpu_op whose name is N \\u00e9 escapes (6N bytes of JSON, 2N decoded)"},
    {"dims", SH_DIMS, "a cpu_op whose Input Dims is one list of N dimensions"},
    {"cpu-only", SH_CPU_ONLY, "N cpu_ops and nothing else"},
    {"out-of-order", SH_OUT_OF_ORDER, "N nested cpu_ops over M launches written in reverse time order"},
    {"siblings", SH_SIBLINGS, "N sibling cpu_ops under one, each launching one kernel, every name distinct\n"
                              "                            and named after M (two traces of another M share none)"},
    {"top-siblings", SH_TOP_SIBLINGS, "the same N cpu_ops at the top level (where they pair by position)"},
};

static int sh_first = 1;

static void sh_sep(void)
{
    puts_(sh_first ? "\n  " : ",\n  ");
    sh_first = 0;
}

static void sh_cpu_op(const char *name, int64_t ts, int64_t dur, int64_t ext)
{
    sh_sep();
    PUTL("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ");
    put_str(name);
    PUTL(", \"pid\": 1, \"tid\": 1, \"ts\": ");
    put_int(ts);
    PUTL(", \"dur\": ");
    put_int(dur);
    PUTL(", \"args\": {\"External id\": ");
    put_int(ext);
    PUTL("}}");
}

/* A runtime call at ts with its correlation; with a flow start unless a graph launch. */
static void sh_runtime(const char *name, int64_t ts, int64_t corr, int flow)
{
    sh_sep();
    PUTL("{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": ");
    put_str(name);
    PUTL(", \"pid\": 1, \"tid\": 1, \"ts\": ");
    put_int(ts);
    PUTL(", \"dur\": 1, \"args\": {\"correlation\": ");
    put_int(corr);
    PUTL("}}");
    if (flow) {
        sh_sep();
        PUTL("{\"ph\": \"s\", \"id\": ");
        put_int(corr);
        PUTL(", \"pid\": 1, \"tid\": 1, \"ts\": ");
        put_int(ts);
        PUTL(", \"cat\": \"ac2g\", \"name\": \"ac2g\"}");
    }
}

static void sh_kernel(const char *name, int64_t ts, int64_t corr, int flow)
{
    sh_sep();
    PUTL("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    put_str(name);
    PUTL(", \"pid\": 0, \"tid\": 7, \"ts\": ");
    put_int(ts);
    PUTL(", \"dur\": 1, \"args\": {\"stream\": 7, \"correlation\": ");
    put_int(corr);
    PUTL("}}");
    if (flow) {
        sh_sep();
        PUTL("{\"ph\": \"f\", \"id\": ");
        put_int(corr);
        PUTL(", \"pid\": 0, \"tid\": 7, \"ts\": ");
        put_int(ts);
        PUTL(", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
    }
}

/* n nested cpu_ops from ts 0, each 2 µs inside its parent, around a span of `inner` µs
 * that starts at n; named name_0, name_1, ... cycling over `names` distinct names. */
static void sh_chain_ops(int64_t n, int64_t inner, const char *name, int64_t names)
{
    char buf[64];
    for (int64_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%s_%lld", name, (long long)(i % names));
        sh_cpu_op(buf, i, 2 * (n - i) + inner, i + 1);
    }
}

static void write_shape(int which, int64_t n, int64_t m)
{
    PUTL("{\n\"schemaVersion\": 1,\n\"traceEvents\": [");
    switch (which) {
    case SH_CHAIN:
        sh_chain_ops(n, 4, "aten::op", 1);
        sh_runtime("cudaLaunchKernel", n + 1, 1, 1);
        sh_kernel("kernel_0", 3 * n + 10, 1, 1);
        break;
    case SH_NESTED:
        sh_chain_ops(n, 2 * m + 2, "aten::op", 7);
        for (int64_t k = 0; k < m; k++)
            sh_runtime("cudaLaunchKernel", n + 1 + 2 * k, k + 1, 1);
        for (int64_t k = 0; k < m; k++)
            sh_kernel("kernel_0", 3 * n + 4 * m + 10 + 2 * k, k + 1, 1);
        break;
    case SH_OUT_OF_ORDER:
        sh_chain_ops(n, 2 * m + 2, "aten::op", 1);
        for (int64_t k = m; k-- > 0;)
            sh_runtime("cudaLaunchKernel", n + 1 + 2 * k, k + 1, 1);
        for (int64_t k = 0; k < m; k++) {
            char kn[32];
            snprintf(kn, sizeof kn, "kernel_%lld", (long long)k);
            sh_kernel(kn, 3 * n + 4 * m + 10 + 2 * k, k + 1, 1);
        }
        break;
    case SH_GRAPH_FANOUT:
        sh_cpu_op("aten::replay", 0, 2 * n + 2, 1);
        for (int64_t k = 0; k < n; k++)
            sh_runtime("cudaGraphLaunch", 1 + 2 * k, 1, 0);
        for (int64_t k = 0; k < m; k++)
            sh_kernel("graph_kernel", 2 * n + 10 + k, 1, 0);
        break;
    case SH_ESCAPES:
        sh_sep();
        PUTL("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"");
        for (int64_t k = 0; k < n; k++)
            PUTL("\\u00e9");
        PUTL("\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 10, \"args\": {\"External id\": 1}}");
        sh_runtime("cudaLaunchKernel", 1, 1, 1);
        sh_kernel("kernel_0", 20, 1, 1);
        break;
    case SH_DIMS:
        sh_sep();
        PUTL("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::big\", \"pid\": 1, \"tid\": 1, \"ts\": 0, "
             "\"dur\": 10, \"args\": {\"External id\": 1, \"Input Dims\": [[");
        for (int64_t k = 0; k < n; k++)
            puts_(k ? ", 1" : "1");
        PUTL("]]}}");
        sh_runtime("cudaLaunchKernel", 1, 1, 1);
        sh_kernel("kernel_0", 20, 1, 1);
        break;
    case SH_CPU_ONLY:
        for (int64_t k = 0; k < n; k++)
            sh_cpu_op("aten::add", 10 * k, 5, k + 1);
        break;
    case SH_SIBLINGS:
    case SH_TOP_SIBLINGS:
        /* a report sheet row per call, and for SH_SIBLINGS the alignment's Wagner-Fischer
         * case at its widest: the calls are the children of one op of the same name on
         * both sides (top-level ops pair by position), beside a launch of its own (lists
         * of equal length without one pair by position too) */
        if (which == SH_SIBLINGS)
            sh_cpu_op("step", 0, 10 * n + 10, n + 2);
        for (int64_t k = 0; k < n; k++) {
            char op[64], kn[64];
            snprintf(op, sizeof op, "op%lld_%lld", (long long)m, (long long)k);
            snprintf(kn, sizeof kn, "kernel%lld_%lld", (long long)m, (long long)k);
            sh_cpu_op(op, 10 * k + 1, 5, k + 1);
            sh_runtime("cudaLaunchKernel", 10 * k + 2, k + 1, 1);
            sh_kernel(kn, 10 * k + 3, k + 1, 1);
        }
        if (which == SH_SIBLINGS) {
            sh_runtime("cudaLaunchKernel", 10 * n + 1, n + 1, 1);
            sh_kernel("step_kernel", 10 * n + 2, n + 1, 1);
        }
        break;
    default:
        break;
    }
    PUTL("\n]\n}\n");
}

/* ---- graph capture / replay pairs (INFERENCE.md) ------------------------------------------ */

/*
 * --graph-dir DIR writes an inference run instead: DIR/exec.json, an execution trace that
 * replays CUDA/HIP graphs inside a vLLM iteration annotation, and DIR/capture_traces/, the
 * capture folder (capture.json and execution_details.json) it was captured in.  The model
 * is a small decoder: per layer an RMSNorm, a GEMM, attention and an activation, each a
 * cpu_op under the layer's nn.Module frame launching one kernel.  FULL captures the whole
 * step as one graph; PIECEWISE captures each layer's norm and GEMM as one graph and runs
 * attention and the activation eagerly between the replays, as vLLM does.  --graph-streams
 * 2 replays every second occurrence of each kernel name on another stream; --graph-mismatch
 * captures one kernel under another name, so that the pair cannot be aligned.
 */
enum { GK_NORM, GK_GEMM, GK_ATTN, GK_ACT, GK_N };
static const char *const graph_ops[GK_N] = {"vllm::rms_norm", "aten::mm", "vllm::unified_attention", "aten::silu"};
static const char *const graph_kernels[GK_N] = {"rms_norm_kernel", "Cijk_Alik_Bljk_BBS_BH_MT128x128", "kernel_unified_attention_2d",
                                                "act_and_mul_kernel"};
static const int64_t graph_kernel_ns[GK_N] = {3100, 14700, 22300, 2900};

typedef struct gfile {
    FILE *f;
    const char *path;
    int n;
} gfile;

static void gopen(gfile *g, const char *path)
{
    g->f = fopen(path, "wb");
    if (!g->f)
        die("%s: cannot create: %s", path, strerror(errno));
    g->path = path;
    g->n = 0;
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", g->f);
}

static void gclose(gfile *g)
{
    fputs("\n]}\n", g->f);
    if (fclose(g->f) != 0)
        die("%s: write failed: %s", g->path, strerror(errno));
}

/* One complete event; `args` is the text of an args object or NULL. */
static void gev(gfile *g, const char *cat, const char *name, int pid, int tid, int64_t ts_ns, int64_t dur_ns,
                const char *args)
{
    fprintf(g->f, "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %lld.%03lld, "
                  "\"dur\": %lld.%03lld%s%s}",
            g->n++ ? ",\n" : "", cat, name, pid, tid, (long long)(ts_ns / 1000), (long long)(ts_ns % 1000),
            (long long)(dur_ns / 1000), (long long)(dur_ns % 1000), args ? ", \"args\": " : "", args ? args : "");
}

static void gflow(gfile *g, int ph, int64_t id, int pid, int tid, int64_t ts_ns)
{
    fprintf(g->f, ",\n{\"ph\": \"%c\", \"id\": %lld, \"pid\": %d, \"tid\": %d, \"ts\": %lld.%03lld, \"cat\": \"ac2g\", "
                  "\"name\": \"ac2g\"%s}",
            ph, (long long)id, pid, tid, (long long)(ts_ns / 1000), (long long)(ts_ns % 1000),
            ph == 'f' ? ", \"bp\": \"e\"" : "");
}

static int graph_captured(int piecewise, int k) { return !piecewise || k == GK_NORM || k == GK_GEMM; }

static void graph_main(const char *dir, int piecewise, int streams, int mismatch)
{
    const int pid = 4242, tid = 4242, gpu = flavour == CUDA ? 0 : 2, s0 = flavour == CUDA ? 7 : 0;
    const char *launch = flavour == CUDA ? "cudaLaunchKernel" : "hipLaunchKernel";
    const char *glaunch = flavour == CUDA ? "cudaGraphLaunch" : "hipGraphLaunch";
    const char *begin = flavour == CUDA ? "cudaStreamBeginCapture" : "hipStreamBeginCapture";
    const char *end = flavour == CUDA ? "cudaStreamEndCapture" : "hipStreamEndCapture";
    const int batch = piecewise ? 4096 : 32;
    char *capdir = xasprintf("%s/capture_traces", dir), *p, args[512];
    char *cmd = xasprintf("mkdir -p '%s'", capdir);
    if (system(cmd) != 0)
        die("%s: cannot create", capdir);
    free(cmd);

    /* the capture folder's index */
    p = xasprintf("%s/execution_details.json", capdir);
    FILE *f = fopen(p, "wb");
    if (!f || fprintf(f, "[{\"file\": \"capture.json\", \"batch_size\": %d, \"mode\": \"%s\"}]\n", batch,
                      piecewise ? "PIECEWISE" : "FULL") < 0 || fclose(f) != 0)
        die("%s: cannot write", p);
    free(p);

    /* the capture trace: the model's forward, captured in one window or one per layer */
    gfile g;
    p = xasprintf("%s/capture.json", capdir);
    gopen(&g, p);
    int64_t t = 1000000, corr = 1;
    gev(&g, "python_function", "vllm/v1/worker/gpu_model_runner.py(3001): capture_model", pid, tid, t,
        (int64_t)n_layers * 400000 + 2000000, NULL);
    t += 100000;
    if (!piecewise) {
        gev(&g, "cuda_runtime", begin, pid, tid, t, 5000, NULL);
        t += 10000;
    }
    gev(&g, "python_function", "nn.Module: DecoderModel_0", pid, tid, t, (int64_t)n_layers * 400000 + 100000, NULL);
    t += 1000;
    for (int l = 0; l < n_layers; l++) {
        if (piecewise) {
            gev(&g, "cuda_runtime", begin, pid, tid, t, 5000, NULL);
            t += 10000;
        }
        char mod[64];
        snprintf(mod, sizeof mod, "nn.Module: DecoderLayer_%d", l);
        int64_t layer_t = t, nk = piecewise ? 2 : GK_N;
        gev(&g, "python_function", mod, pid, tid, t, nk * 80000 + 1000, NULL);
        t += 500;
        for (int k = 0; k < nk; k++) {
            snprintf(args, sizeof args, "{\"Input Dims\": [[%d, 4096], [4096, 4096]], \"Input type\": [\"c10::BFloat16\", "
                                        "\"c10::BFloat16\"]}", batch);
            gev(&g, "cpu_op", graph_ops[k], pid, tid, t, 60000, args);
            const char *kname = mismatch && l == 0 && k == GK_GEMM ? "Cijk_other_gemm" : graph_kernels[k];
            if (flavour == CUDA)
                snprintf(args, sizeof args, "{\"correlation\": %lld}", (long long)corr++);
            else
                snprintf(args, sizeof args, "{\"kernel\": \"%s\", \"correlation\": %lld}", kname, (long long)corr++);
            gev(&g, "cuda_runtime", launch, pid, tid, t + 10000, 8000, args);
            t += 80000;
        }
        (void)layer_t;
        t += 500;
        if (piecewise) {
            gev(&g, "cuda_runtime", end, pid, tid, t, 5000, NULL);
            t += 10000;
        }
    }
    if (!piecewise)
        gev(&g, "cuda_runtime", end, pid, tid, t + 100000, 5000, NULL);
    gclose(&g);
    free(p);

    /* the execution trace: one step, its graphs replayed (and PIECEWISE's eager parts) */
    p = xasprintf("%s/exec.json", dir);
    gopen(&g, p);
    char ann[256];
    if (piecewise)
        snprintf(ann, sizeof ann, "execute_%d_context_2(sq4090sk4090sqsq8363050sqsk8363050)_generation_6(sq6sk3000sqsq6sqsk3000)",
                 batch);
    else
        snprintf(ann, sizeof ann, "execute_%d_context_0(sq0sk0sqsq0sqsk0)_generation_%d(sq%dsk9000sqsq%dsqsk9000)", batch,
                 batch, batch, batch);
    int64_t t0 = 5000000000LL, cpu = t0 + 1000, gpu_t = t0 + 500000;
    int64_t step_dur = (int64_t)n_layers * 2000000 + 3000000;
    gev(&g, "user_annotation", ann, pid, tid, t0, step_dur, NULL);
    gev(&g, "cpu_op", "execute_model", pid, tid, t0 + 100, step_dur - 200, NULL);
    int seen[GK_N] = {0};
    int64_t gcorr = 1000;
    int nlaunch = piecewise ? n_layers : 1;
    for (int gi = 0; gi < nlaunch; gi++) {
        snprintf(args, sizeof args, "{\"correlation\": %lld}", (long long)gcorr);
        gev(&g, "cuda_runtime", glaunch, pid, tid, cpu, 300000, args);
        cpu += 400000;
        int l0 = piecewise ? gi : 0, l1 = piecewise ? gi + 1 : n_layers;
        for (int l = l0; l < l1; l++) {
            for (int k = 0; k < GK_N; k++) {
                if (!graph_captured(piecewise, k))
                    continue;
                int64_t d = jitter(graph_kernel_ns[k], 10);
                int stream = streams > 1 && seen[k]++ % 2 ? s0 + 7 : s0;
                snprintf(args, sizeof args, "{\"correlation\": %lld, \"stream\": %d, \"device\": 0}", (long long)gcorr, stream);
                gev(&g, "kernel", graph_kernels[k], gpu, stream, gpu_t, d, args);
                gpu_t += d + 1000;
            }
        }
        gcorr++;
        if (piecewise) {
            /* the eager part after the piece: attention and the activation, launched one by one */
            for (int k = GK_ATTN; k <= GK_ACT; k++) {
                snprintf(args, sizeof args, "{\"Input Dims\": [[%d, 4096]]}", batch);
                gev(&g, "cpu_op", graph_ops[k], pid, tid, cpu, 50000, args);
                snprintf(args, sizeof args, "{\"correlation\": %lld}", (long long)gcorr);
                gev(&g, "cuda_runtime", launch, pid, tid, cpu + 10000, 20000, args);
                gflow(&g, 's', gcorr, pid, tid, cpu + 10000);
                int64_t d = jitter(graph_kernel_ns[k], 10);
                snprintf(args, sizeof args, "{\"correlation\": %lld, \"stream\": %d, \"device\": 0}", (long long)gcorr, s0);
                gev(&g, "kernel", graph_kernels[k], gpu, s0, gpu_t, d, args);
                gflow(&g, 'f', gcorr, gpu, s0, gpu_t);
                gpu_t += d + 1000;
                gcorr++;
                cpu += 60000;
            }
        }
    }
    gclose(&g);
    free(p);
    free(capdir);
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(int status)
{
    fputs("usage: gentrace [--flavour cuda|rocm] [--seed S] [--layers L] [--steps N | --size SIZE]\n"
          "                [--optimizer fused|foreach] [--shape SHAPE] [--stats]\n"
          "                [--gpu-cv PCT] [--run-cv PCT] [--run-seed S] [--slow OP=PCT]\n"
          "                [--step-cv PCT] [--warmup PCT] [--gpu-name NAME]\n"
          "                [--gzip | --plain] [--level 1-9] [-o FILE]\n"
          "  --flavour   cuda (H100, GPU pid 0, streams 7/20) or rocm (MI300X, GPU pid 2, streams 0/4); default cuda\n"
          "  --seed      random seed (default 1); same options give the same bytes\n"
          "  --layers    transformer blocks per step (default 12, 0-64)\n"
          "  --steps     profiler steps (default 1)\n"
          "  --optimizer fused (one aten::_fused_adamw_, default) or foreach (seven aten::_foreach_* ops)\n"
          "  --shape     what a step is: train (default), graph-replay (a decode step replayed from a graph),\n"
          "              capture-only (the graph's capture: almost no GPU work), one-sided-lca (train, and two\n"
          "              aten::sub ops that launch on one flavour each)\n"
          "  --size      approximate JSON size instead of --steps: 500K, 250M, 1G, 5G (powers of 1000)\n"
          "  --gzip      gzip the output (default when FILE ends in .gz); --plain: never\n"
          "  --level     gzip level (default 6)\n"
          "  --stats     print the number of events, bytes and steps on standard error\n"
          "  --gpu-cv    each kernel's time varies with this coefficient of variation (%; default: uniform +-6%)\n"
          "  --run-cv    each op's kernels are off by one factor per run, of this CV (%; default 0)\n"
          "  --run-seed  the seed of that factor (default 1): another run of the same configuration\n"
          "  --slow      OP=PCT: the kernels of cpu_op OP take PCT% longer (a planted regression)\n"
          "  --world N --rank R   rank R of an N-rank job: the all-reduces carry their collective metadata\n"
          "  --arrive-late US  this rank starts every collective US microseconds late (a planted straggler)\n"
          "  --coll-slow PCT  the last gradient bucket's all-reduce takes PCT% longer (a bandwidth drop)\n"
          "  (--slow '*=PCT' slows the kernels of every op but the collectives: a slower GPU)\n"
          "  --step-cv   every kernel of a step is off by one factor per step, of this CV (%; default 0)\n"
          "  --warmup    the first step's kernels take PCT% longer (default 0)\n"
          "  --gpu-name  deviceProperties' GPU name (default: the flavour's)\n"
          "  -o FILE     output file (default: standard output)\n"
          "or:    gentrace --graph-dir DIR [--graph full|piecewise] [--graph-streams 1|2] [--graph-mismatch]\n"
          "                [--flavour cuda|rocm] [--seed S] [--layers L]\n"
          "  --graph-dir       write a graph replay trace DIR/exec.json and its capture folder\n"
          "                    DIR/capture_traces/ instead (INFERENCE.md)\n"
          "  --graph           FULL (one graph per step, default) or PIECEWISE (one per layer, attention eager)\n"
          "  --graph-streams   replay every second occurrence of a kernel on another stream (2)\n"
          "  --graph-mismatch  capture one kernel under another name (the pair cannot be aligned)\n"
          "or:    gentrace --ranks N -o DIR [--collectives KIND[:DTYPE[:NELEMS]],...] [--rounds K]\n"
          "                [--straggler RANK[:US]] [--late RANK:K:US]... [--jitter US] [--filler F | --rank-size SIZE]\n"
          "                [--seed S] [--gzip]: a rank set, DIR/rank<i>_trace.json, with planted arrivals\n"
          "  --collectives  allreduce allgather reducescatter alltoall alltoallv, repeated --rounds times (default 4)\n"
          "  --straggler    RANK arrives US (default 500) later at every collective; --late: at collective K only\n"
          "  --jitter       each arrival varies by a seeded uniform [0, US]; --filler: small kernels per collective\n"
          "or:    gentrace --shape HOSTILE [--count N] [--fan M] [-o FILE]: a small trace of one shape\n"
          "       that drives one resource (--shape also takes these, instead of the workload):\n",
          status ? stderr : stdout);
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        fprintf(status ? stderr : stdout, "              %-13s %s\n", shapes[i].name, shapes[i].what);
    exit(status);
}

static uint64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v <= 0)
        return 0;
    switch (*end) {
    case 'k': case 'K': v *= 1e3; end++; break;
    case 'm': case 'M': v *= 1e6; end++; break;
    case 'g': case 'G': v *= 1e9; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > 1e14)
        return 0;
    return (uint64_t)v;
}

static long parse_long(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "gentrace: %s: expected an integer in [%ld, %ld], got '%s'\n", opt, lo, hi, s);
        exit(2);
    }
    return v;
}

/* ---- rank sets (--ranks N): one trace per rank of a distributed job ---------------------- */

/*
 * gentrace --ranks N -o DIR writes DIR/rank<i>_trace.json (.gz with --gzip), the traces of
 * the N ranks of one job with one process group of all ranks.  Each rank runs the same
 * collectives (--collectives, repeated --rounds times); before each one it computes (one
 * GEMM, after --filler small kernels), and arrives at the collective when its GEMM ends.
 * Every rank of a collective ends together (NCCL completes a collective when its last rank
 * has arrived), so a rank that arrives early waits inside the kernel: its duration is the
 * wait plus the collective's own time.  What is planted, and so known to a test:
 *
 *   arrival(r, k) = slot(k) + straggler(r) + late(r, k) + jitter(r, k)
 *   end(k)        = max over r of arrival(r, k) + base(k)
 *   dur(r, k)     = end(k) - arrival(r, k)
 *
 * base(k) = 20 µs + (the larger message's bytes) / 200 000 µs (200 GB/s), whole µs;
 * straggler(r) is --straggler's delay on its rank, late(r, k) the --late entries, jitter a
 * uniform [0, --jitter µs] in ns from (seed, r, k).  Times are whole µs without jitter, so
 * the waits are exact.  --rank-size picks --filler so a rank file is about that size.
 */

#define RK_MAX_COLLS 32
#define RK_MAX_LATE 64

typedef struct rk_coll_spec {
    const char *kind; /* allreduce allgather reducescatter alltoall alltoallv */
    const char *dtype;
    int64_t nelems;
} rk_coll_spec;

static struct {
    long n;                        /* world size */
    rk_coll_spec coll[RK_MAX_COLLS];
    int ncoll;
    long rounds;
    long straggler;                /* rank, or -1 */
    int64_t straggler_us;
    struct { long rank, k; int64_t us; } late[RK_MAX_LATE];
    int nlate;
    int64_t jitter_us;
    long filler;
    int64_t gap_ns;                /* from one collective's slot to the next */
    int64_t *end_ns;               /* per collective: when every rank's kernel ends */
} RK;

static const struct {
    const char *kind, *name, *kernel;
} rk_kinds[] = {
    {"allreduce", "allreduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
    {"allgather", "allgather", "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
    {"reducescatter", "reducescatter",
     "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
    {"alltoall", "all_to_all", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"},
    {"alltoallv", "all_to_allv", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"},
};

static const struct {
    const char *name;
    int bytes;
} rk_dtypes[] = {{"Float", 4}, {"BFloat16", 2}, {"Half", 2}, {"Long", 8}, {"Int", 4}, {"Double", 8}, {"Byte", 1}};

static int rk_kind(const char *kind)
{
    for (size_t i = 0; i < sizeof rk_kinds / sizeof *rk_kinds; i++)
        if (!strcmp(kind, rk_kinds[i].kind))
            return (int)i;
    return -1;
}

static int rk_dtype_bytes(const char *dtype)
{
    for (size_t i = 0; i < sizeof rk_dtypes / sizeof *rk_dtypes; i++)
        if (!strcmp(dtype, rk_dtypes[i].name))
            return rk_dtypes[i].bytes;
    return 0;
}

/* --collectives KIND[:DTYPE[:NELEMS]],... */
static void rk_parse_colls(const char *list)
{
    char *copy = xrealloc(NULL, strlen(list) + 1), *save = NULL;
    strcpy(copy, list);
    RK.ncoll = 0;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (RK.ncoll == RK_MAX_COLLS)
            die("--collectives: at most %d", RK_MAX_COLLS);
        char *dt = strchr(item, ':'), *ne = NULL;
        if (dt) {
            *dt++ = 0;
            if ((ne = strchr(dt, ':')))
                *ne++ = 0;
        }
        rk_coll_spec *c = &RK.coll[RK.ncoll++];
        if (rk_kind(item) < 0)
            die("--collectives: unknown kind '%s' (allreduce allgather reducescatter alltoall alltoallv)", item);
        c->kind = item;
        c->dtype = dt ? dt : "Float";
        if (!rk_dtype_bytes(c->dtype))
            die("--collectives: unknown dtype '%s'", c->dtype);
        c->nelems = ne ? parse_long("--collectives", ne, 1, 1L << 40) : 1048576;
    }
    if (!RK.ncoll)
        die("--collectives: empty");
}

/* The collective k's spec, and its message sizes for a rank (alltoallv: the split sizes
 * to each rank j are nelems/N × 1 or 2, (r + j) odd sending twice, so In equals Out). */
static const rk_coll_spec *rk_spec(long k) { return &RK.coll[k % RK.ncoll]; }

static int64_t rk_split(const rk_coll_spec *c, long r, long j) { return c->nelems / RK.n * (1 + (r + j) % 2); }

static void rk_nelems(const rk_coll_spec *c, long r, int64_t *in, int64_t *out)
{
    const char *kind = c->kind;
    *in = *out = c->nelems;
    if (!strcmp(kind, "allgather"))
        *out = c->nelems * RK.n;
    else if (!strcmp(kind, "reducescatter"))
        *in = c->nelems * RK.n;
    else if (!strcmp(kind, "alltoallv")) {
        *in = 0;
        for (long j = 0; j < RK.n; j++)
            *in += rk_split(c, r, j);
        *out = *in;
    }
}

static int64_t rk_base_ns(long k)
{
    const rk_coll_spec *c = rk_spec(k);
    int64_t in, out;
    rk_nelems(c, 0, &in, &out);
    int64_t bytes = (in > out ? in : out) * rk_dtype_bytes(c->dtype);
    return (20 + bytes / 200000) * 1000;
}

/* A rank's arrival at collective k, in ns. */
static int64_t rk_arrival(long r, long k)
{
    int64_t t = t0_ns + (int64_t)k * RK.gap_ns + RK.filler * 3000 + 500000;
    if (r == RK.straggler)
        t += RK.straggler_us * 1000;
    for (int i = 0; i < RK.nlate; i++)
        if (RK.late[i].rank == r && RK.late[i].k == k)
            t += RK.late[i].us * 1000;
    if (RK.jitter_us > 0) {
        uint64_t save = rng_state;
        rng_state = seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)r * 0xc2b2ae3d27d4eb4fULL ^ (uint64_t)k * 0x165667b1ULL;
        t += (int64_t)(rng_next() % (uint64_t)(RK.jitter_us * 1000 + 1));
        rng_state = save;
    }
    return t;
}

static int64_t rk_corr;

/* A host op launching one kernel: the cpu_op, its cudaLaunchKernel and the kernel. */
static void rk_launch(const char *op, const char *kernel, int stream, int64_t kts, int64_t kdur, int64_t ext)
{
    int64_t corr = ++rk_corr;
    ev_begin();
    PUTL("\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ");
    put_str(op);
    put_pidtid(host_pid, main_tid);
    put_us(kts - 30000);
    PUTL(", \"dur\": 10.000, \"args\": {\"External id\": ");
    put_int(ext);
    PUTL(", \"Record function id\": 0, \"Ev Idx\": ");
    put_int(ev_idx++);
    PUTL("}}");
    ev_begin();
    PUTL("\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\"");
    put_pidtid(host_pid, main_tid);
    put_us(kts - 25000);
    PUTL(", \"dur\": 4.000, \"args\": {\"External id\": ");
    put_int(ext);
    PUTL(", \"cbid\": 211, \"correlation\": ");
    put_int(corr);
    PUTL("}}");
    ev_begin();
    PUTL("\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    put_str(kernel);
    put_pidtid(gpu_pid, stream);
    put_us(kts);
    PUTL(", \"dur\": ");
    put_us(kdur);
    PUTL(", \"args\": {\"External id\": ");
    put_int(ext);
    PUTL(", \"device\": 0, \"context\": 1, \"stream\": ");
    put_int(stream);
    PUTL(", \"correlation\": ");
    put_int(corr);
}

/* The collective kernel's metadata args (after the correlation), and the closing braces. */
static void rk_coll_args(const rk_coll_spec *c, long r)
{
    int64_t in, out;
    rk_nelems(c, r, &in, &out);
    PUTL(", \"Collective name\": ");
    put_str(rk_kinds[rk_kind(c->kind)].name);
    PUTL(", \"In msg nelems\": ");
    put_int(in);
    PUTL(", \"Out msg nelems\": ");
    put_int(out);
    PUTL(", \"Group size\": ");
    put_int(RK.n);
    PUTL(", \"dtype\": ");
    put_str(c->dtype);
    for (int dir = 0; dir < 2; dir++) {
        if (dir)
            PUTL(", \"Out split size\": \"[");
        else
            PUTL(", \"In split size\": \"[");
        for (long j = 0; !strcmp(c->kind, "alltoallv") && j < RK.n; j++) {
            if (j)
                PUTL(", ");
            put_int(rk_split(c, r, j));
        }
        PUTL("]\"");
    }
    PUTL(", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
         "\"Process Group Ranks\": \"[");
    for (long j = 0; j < RK.n; j++) {
        if (j)
            PUTL(", ");
        put_int(j);
    }
    PUTL("]\"}}");
}

static void rk_write_rank(long r, long ncolls)
{
    rk_corr = 1000;
    ev_idx = 0;
    first_event = 1;
    n_written = 0;
    int64_t ext = 1;
    PUTL("{\"schemaVersion\": 1, \"deviceProperties\": [");
    for (int d = 0; d < 8; d++) {
        if (d)
            PUTL(", ");
        PUTL("{\"id\": ");
        put_int(d);
        PUTL(", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85045493760, \"computeMajor\": 9, "
             "\"computeMinor\": 0, \"numSms\": 132}");
    }
    PUTL("],\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
    put_int(r);
    PUTL(", \"world_size\": ");
    put_int(RK.n);
    PUTL(", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"pg_size\": ");
    put_int(RK.n);
    PUTL("}], \"nccl_version\": \"2.21.5\"},\n\"traceEvents\": [");
    for (long k = 0; k < ncolls; k++) {
        int64_t slot = t0_ns + (int64_t)k * RK.gap_ns, arrive = rk_arrival(r, k);
        for (long f = 0; f < RK.filler; f++) {
            rk_launch("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >()",
                      stream_comp, slot + f * 3000, 2000, ext++);
            PUTL("}}");
        }
        int64_t gemm = slot + RK.filler * 3000 + 10000;
        rk_launch("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1",
                  stream_comp, gemm, arrive - gemm, ext++);
        PUTL("}}");
        rk_launch("record_param_comms", rk_kinds[rk_kind(rk_spec(k)->kind)].kernel, stream_comm, arrive,
                  RK.end_ns[k] - arrive, ext++);
        rk_coll_args(rk_spec(k), r);
    }
    PUTL("\n],\n\"traceName\": \"rank");
    put_int(r);
    PUTL("_trace.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1751410836000000000}\n");
}

/* Bytes of one rank's file with `filler` small kernels a collective (counted, not written). */
static uint64_t rk_measure(long ncolls)
{
    O.count_only = 1;
    O.bytes = 0;
    rk_write_rank(0, ncolls);
    O.count_only = 0;
    uint64_t b = O.bytes;
    O.bytes = 0;
    O.n = 0;
    return b;
}

static int rk_main(int argc, char **argv)
{
    const char *dir = NULL;
    uint64_t rank_size = 0;
    int gz = 0;
    long level = 6;
    RK.straggler = -1;
    RK.straggler_us = 500;
    RK.rounds = 4;
    rk_parse_colls("allreduce:Float:1048576,allgather:BFloat16:524288,reducescatter:BFloat16:524288");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gzip")) {
            gz = 1;
            continue;
        }
        if (!v)
            die("%s needs a value (see gentrace --help)", a);
        i++;
        if (!strcmp(a, "--ranks"))
            RK.n = parse_long(a, v, 1, 100000);
        else if (!strcmp(a, "-o"))
            dir = v;
        else if (!strcmp(a, "--seed"))
            seed = (uint64_t)parse_long(a, v, 0, LONG_MAX);
        else if (!strcmp(a, "--collectives"))
            rk_parse_colls(v);
        else if (!strcmp(a, "--rounds"))
            RK.rounds = parse_long(a, v, 1, 1000000);
        else if (!strcmp(a, "--straggler")) {
            char *colon = strchr(v, ':');
            RK.straggler = strtol(v, NULL, 10);
            if (colon)
                RK.straggler_us = parse_long(a, colon + 1, 0, 1000000000);
        } else if (!strcmp(a, "--late")) {
            long rr, kk, us;
            if (RK.nlate == RK_MAX_LATE || sscanf(v, "%ld:%ld:%ld", &rr, &kk, &us) != 3 || us < 0)
                die("--late: RANK:COLLECTIVE:US (at most %d), got '%s'", RK_MAX_LATE, v);
            RK.late[RK.nlate].rank = rr;
            RK.late[RK.nlate].k = kk;
            RK.late[RK.nlate++].us = us;
        } else if (!strcmp(a, "--jitter"))
            RK.jitter_us = parse_long(a, v, 0, 1000000);
        else if (!strcmp(a, "--filler"))
            RK.filler = parse_long(a, v, 0, 10000000);
        else if (!strcmp(a, "--rank-size")) {
            if (!(rank_size = parse_size(v)))
                die("--rank-size: expected a size such as 10M, got '%s'", v);
        } else if (!strcmp(a, "--level"))
            level = parse_long(a, v, 1, 9);
        else
            die("%s: not a rank-set option (see gentrace --help)", a);
    }
    if (!RK.n || !dir)
        die("--ranks N needs -o DIR");
    long ncolls = RK.rounds * RK.ncoll;
    host_pid = 20000 + (int)(seed % 10000);
    main_tid = host_pid;
    gpu_pid = 0;
    stream_comp = 7;
    stream_comm = 20;
    t0_ns = 1419247333430000000LL / 1000 + (int64_t)(seed % 1000) * 1000000;
    O.buf = xrealloc(NULL, OUTBUF);
    RK.end_ns = xrealloc(NULL, (size_t)ncolls * sizeof *RK.end_ns);
    int64_t max_late = RK.straggler_us, max_base = 0;
    for (int i = 0; i < RK.nlate; i++)
        max_late = RK.late[i].us > max_late ? RK.late[i].us : max_late;
    for (long k = 0; k < ncolls && k < RK.ncoll; k++)
        max_base = rk_base_ns(k) > max_base ? rk_base_ns(k) : max_base;
    for (int pass = 0; pass < 2; pass++) {
        RK.gap_ns = RK.filler * 3000 + 600000 + (max_late + 2 * RK.jitter_us) * 1000 + max_base;
        for (long k = 0; k < ncolls; k++) {
            int64_t latest = INT64_MIN;
            for (long r = 0; r < RK.n; r++)
                latest = rk_arrival(r, k) > latest ? rk_arrival(r, k) : latest;
            RK.end_ns[k] = latest + rk_base_ns(k);
        }
        if (pass || !rank_size)
            break;
        /* the size with no filler and with one give the size of a filler kernel */
        uint64_t b0 = rk_measure(ncolls);
        RK.filler = 1;
        uint64_t b1 = rk_measure(ncolls), per = b1 > b0 ? b1 - b0 : 1;
        RK.filler = rank_size > b0 ? (long)((rank_size - b0) / per) : 0;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        die("%s: cannot create: %s", dir, strerror(errno));
    char *path = xrealloc(NULL, strlen(dir) + 64);
    for (long r = 0; r < RK.n; r++) {
        sprintf(path, "%s/rank%ld_trace.json%s", dir, r, gz ? ".gz" : "");
        if (!(O.f = fopen(path, "wb")))
            die("%s: cannot create: %s", path, strerror(errno));
        O.path = path;
        O.gz = gz;
        if (gz) {
            if (!O.zbuf)
                O.zbuf = xrealloc(NULL, OUTBUF);
            if (deflateInit2(&O.z, (int)level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                die("deflateInit2 failed");
        }
        rk_write_rank(r, ncolls);
        out_flush(1);
        if (gz)
            deflateEnd(&O.z);
        if (fclose(O.f) != 0)
            die("%s: write failed: %s", path, strerror(errno));
    }
    free(path);
    free(RK.end_ns);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--ranks"))
        return rk_main(argc, argv); /* a rank set: its own options */
    const char *path = NULL;
    long steps = -1, level = 6;
    int stats = 0;
    uint64_t size = 0;
    int gz = -1;
    int hostile = SH_NONE;
    int64_t count = 1, fan = 1;
    const char *graph_dir = NULL;
    int graph_piecewise = 0, graph_streams = 1, graph_mismatch = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() do { if (!v) { fprintf(stderr, "gentrace: %s needs a value\n", a); exit(2); } i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(0);
        } else if (!strcmp(a, "--graph-dir")) {
            NEED_ARG();
            graph_dir = v;
        } else if (!strcmp(a, "--graph")) {
            NEED_ARG();
            if (strcmp(v, "full") && strcmp(v, "piecewise")) {
                fprintf(stderr, "gentrace: --graph: full or piecewise, got '%s'\n", v);
                exit(2);
            }
            graph_piecewise = !strcmp(v, "piecewise");
        } else if (!strcmp(a, "--graph-streams")) {
            NEED_ARG();
            graph_streams = (int)parse_long(a, v, 1, 2);
        } else if (!strcmp(a, "--graph-mismatch")) {
            graph_mismatch = 1;
        } else if (!strcmp(a, "--flavour") || !strcmp(a, "--flavor")) {
            NEED_ARG();
            if (!strcmp(v, "cuda"))
                flavour = CUDA;
            else if (!strcmp(v, "rocm"))
                flavour = ROCM;
            else {
                fprintf(stderr, "gentrace: --flavour: expected cuda or rocm, got '%s'\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--seed")) {
            NEED_ARG();
            seed = (uint64_t)parse_long(a, v, 0, 1000000000L);
        } else if (!strcmp(a, "--layers")) {
            NEED_ARG();
            n_layers = (int)parse_long(a, v, 0, 64);
        } else if (!strcmp(a, "--steps")) {
            NEED_ARG();
            steps = parse_long(a, v, 1, 100000000L);
        } else if (!strcmp(a, "--size")) {
            NEED_ARG();
            if (!(size = parse_size(v))) {
                fprintf(stderr, "gentrace: --size: expected a size such as 500K, 250M or 1G, got '%s'\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--level")) {
            NEED_ARG();
            level = parse_long(a, v, 1, 9);
        } else if (!strcmp(a, "--optimizer")) {
            NEED_ARG();
            if (!strcmp(v, "fused") || !strcmp(v, "foreach"))
                foreach_optim = !strcmp(v, "foreach");
            else {
                fprintf(stderr, "gentrace: --optimizer: expected fused or foreach, got '%s'\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--shape")) {
            NEED_ARG();
            /* what a step of the workload is, or a hostile shape instead of the workload */
            static const char *const steps_of[] = {"train", "graph-replay", "capture-only", "one-sided-lca"};
            int found = 0;
            for (int k = 0; k < (int)(sizeof steps_of / sizeof *steps_of); k++)
                if (!strcmp(v, steps_of[k]))
                    shape = k, found = 1;
            for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
                if (!strcmp(v, shapes[k].name))
                    hostile = shapes[k].shape, found = 1;
            if (!found) {
                fprintf(stderr, "gentrace: --shape: unknown shape '%s' (see --help)\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--gpu-cv") || !strcmp(a, "--run-cv") || !strcmp(a, "--step-cv")) {
            NEED_ARG();
            double x = strtod(v, NULL);
            if (!(x >= 0 && x <= 50)) {
                fprintf(stderr, "gentrace: %s: expected a percentage from 0 to 50, got '%s'\n", a, v);
                exit(2);
            }
            *(a[2] == 'g' ? &gpu_cv : a[2] == 'r' ? &run_cv : &step_cv) = x / 100;
        } else if (!strcmp(a, "--warmup")) {
            NEED_ARG();
            double x = strtod(v, NULL);
            if (!(x >= 0 && x <= 1000)) {
                fprintf(stderr, "gentrace: --warmup: expected a percentage from 0 to 1000, got '%s'\n", v);
                exit(2);
            }
            warmup = x / 100;
        } else if (!strcmp(a, "--gpu-name")) {
            NEED_ARG();
            if (!*v || strpbrk(v, "\"\\") || strlen(v) > 200) {
                fprintf(stderr, "gentrace: --gpu-name: expected a name without quotes or backslashes\n");
                exit(2);
            }
            gpu_name = v;
        } else if (!strcmp(a, "--run-seed")) {
            NEED_ARG();
            run_seed = (uint64_t)parse_long(a, v, 0, 1000000000L);
        } else if (!strcmp(a, "--slow")) {
            NEED_ARG();
            const char *eq = strrchr(v, '=');
            slow_pct = eq ? strtod(eq + 1, NULL) : 0;
            if (!eq || eq == v || !(slow_pct > -90 && slow_pct <= 1000)) {
                fprintf(stderr, "gentrace: --slow: expected OP=PCT (aten::mm=5), got '%s'\n", v);
                exit(2);
            }
            slow_op = xasprintf("%.*s", (int)(eq - v), v);
        } else if (!strcmp(a, "--world")) {
            NEED_ARG();
            world = parse_long(a, v, 1, 65536);
        } else if (!strcmp(a, "--rank")) {
            NEED_ARG();
            rank_id = parse_long(a, v, 0, 65535);
        } else if (!strcmp(a, "--arrive-late")) {
            NEED_ARG();
            late_us = strtod(v, NULL);
            if (!(late_us >= 0 && late_us <= 1e6)) {
                fprintf(stderr, "gentrace: --arrive-late: expected microseconds from 0 to 1e6, got '%s'\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--coll-slow")) {
            NEED_ARG();
            coll_slow_pct = strtod(v, NULL);
            if (!(coll_slow_pct > -90 && coll_slow_pct <= 1000)) {
                fprintf(stderr, "gentrace: --coll-slow: expected a percentage, got '%s'\n", v);
                exit(2);
            }
        } else if (!strcmp(a, "--count")) {
            NEED_ARG();
            count = parse_long(a, v, 1, 4000000000L);
        } else if (!strcmp(a, "--fan")) {
            NEED_ARG();
            fan = parse_long(a, v, 1, 4000000000L);
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strcmp(a, "--gzip")) {
            gz = 1;
        } else if (!strcmp(a, "--plain")) {
            gz = 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEED_ARG();
            path = v;
        } else {
            fprintf(stderr, "gentrace: unknown option '%s' (try --help)\n", a);
            exit(2);
        }
#undef NEED_ARG
    }
    if (world > 0 ? rank_id >= world : rank_id != 0 || late_us > 0 || coll_slow_pct != 0) {
        fputs("gentrace: --rank, --arrive-late and --coll-slow need --world N (and a rank below N)\n", stderr);
        exit(2);
    }
    if (steps > 0 && size) {
        fputs("gentrace: --steps and --size exclude each other\n", stderr);
        exit(2);
    }
    if (gz < 0)
        gz = path && strlen(path) > 3 && !strcmp(path + strlen(path) - 3, ".gz");

    /* identities: a host pid/tid per seed, the GPU pid and streams per flavour */
    host_pid = 10000 + (int)(seed * 7919 % 20000);
    main_tid = host_pid;
    bwd_tid = host_pid + 39;
    gpu_pid = flavour == CUDA ? 0 : 2;
    stream_comp = flavour == CUDA ? 7 : 0;
    stream_comm = flavour == CUDA ? 20 : 4;
    t0_ns = (int64_t)(1419247333430849LL + (int64_t)(seed % 100000) * 1000003LL);
    if (graph_dir) {
        rng_state = seed;
        graph_main(graph_dir, graph_piecewise, graph_streams, graph_mismatch);
        return 0;
    }
    model_init();
    names_init();

    O.buf = xrealloc(NULL, OUTBUF);
    if (size) {
        /* the size of one and of two steps gives the fixed part and the part per step */
        O.count_only = 1;
        O.bytes = 0;
        ev_idx = 0;
        generate(1);
        uint64_t b1 = O.bytes;
        O.bytes = 0;
        ev_idx = 0;
        generate(2);
        uint64_t b2 = O.bytes, per = b2 - b1, fixed = b1 > per ? b1 - per : 0;
        steps = size > fixed ? (long)((size - fixed + per / 2) / per) : 1;
        if (steps < 1)
            steps = 1;
        O.count_only = 0;
        O.bytes = 0;
        O.n = 0;
        n_written = 0;
        ev_idx = 0;
    }
    if (steps < 0)
        steps = 1;

    if (path && strcmp(path, "-")) {
        O.f = fopen(path, "wb");
        if (!O.f)
            die("%s: cannot create: %s", path, strerror(errno));
        O.path = path;
    } else {
        O.f = stdout;
        O.path = "standard output";
    }
    O.gz = gz;
    if (gz) {
        O.zbuf = xrealloc(NULL, OUTBUF);
        /* windowBits 15 + 16: a gzip wrapper with no name and mtime 0, so the bytes are stable */
        if (deflateInit2(&O.z, (int)level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            die("deflateInit2 failed");
    }
    if (hostile != SH_NONE)
        write_shape(hostile, count, fan);
    else
        generate((int)steps);
    out_flush(1);
    if (gz)
        deflateEnd(&O.z);
    if (O.f != stdout ? fclose(O.f) != 0 : fflush(O.f) != 0)
        die("%s: write failed: %s", O.path, strerror(errno));
    if (stats)
        fprintf(stderr, "gentrace: %lld events, %llu bytes of JSON, %ld steps of %d layers\n", (long long)n_written,
                (unsigned long long)O.bytes, steps, n_layers);
    return 0;
}
