/*
 * test_infer.c - inference traces (INFERENCE.md): the capture folder (§1), the iteration
 * annotations and their batch sizes (§2.2-§2.3), the choice of capture (§2.4), capture
 * roots (§2.5), pairing (§2.6), the four alignment paths (§2.7), grafting (§2.8), pseudo
 * ops (§2.10), the inference sheets (§3) and the rules §7 lists as not exercised by the
 * data, each on a small trace built here.
 */
#include "testutil.h"

#include <math.h>

#include "perf/perf.h"
#include "table/result.h"
#include "trace/capture.h"
#include "trace/infer.h"
#include "trace/trace_report.h"

#define X(cat, name, pid, tid, ts, dur, args) \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" #pid ",\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":" #dur args "}"
#define CORR(c) ",\"args\":{\"correlation\":" #c "}"
#define KARG(k, c) ",\"args\":{\"kernel\":\"" k "\",\"correlation\":" #c "}"
#define KERN(c, s) ",\"args\":{\"correlation\":" #c ",\"stream\":" #s "}"
/* the ac2g flow linking launch `id` (pid 1, tid 1, at ts a) to its kernel (pid 2, tid 7, at ts k) */
#define FLOW(id, a, k)                                                                                      \
    "{\"ph\":\"s\",\"id\":" #id ",\"pid\":1,\"tid\":1,\"ts\":" #a ",\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n" \
    "{\"ph\":\"f\",\"id\":" #id ",\"pid\":2,\"tid\":7,\"ts\":" #k ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}"

static const char *DETAILED = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk64sqsq32sqsk64)";

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct fixture {
    char *dir;     /* a temporary directory */
    char *cap;     /* dir/capture */
    char *exec;    /* dir/exec.json */
} fixture;

static void fx_init(fixture *f)
{
    f->dir = tt_tmpdir();
    f->cap = malloc(strlen(f->dir) + 16);
    sprintf(f->cap, "%s/capture", f->dir);
    f->exec = malloc(strlen(f->dir) + 16);
    sprintf(f->exec, "%s/exec.json", f->dir);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", f->cap);
    assert_int_equal(system(cmd), 0);
}

static void fx_free(fixture *f)
{
    tt_rmrf(f->dir);
    free(f->dir);
    free(f->cap);
    free(f->exec);
}

static void fx_file(fixture *f, const char *name, const char *text)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", f->cap, name);
    tt_write_file(p, text, strlen(text));
}

/* The execution trace: one step annotation `ann` around one graph launch (correlation 5)
 * and the replay kernels `kernels` (events, comma-joined). */
static void fx_exec(fixture *f, const char *text) { tt_write_file(f->exec, text, strlen(text)); }

/* A capture trace: a begin/end pair around Net's forward: aten::mm launching kA,
 * aten::relu launching kB, and a bare launch of kC straight under the module frame. */
static const char CAPTURE1[] =
    "{\"traceEvents\":[\n"
    X("python_function", "runner.py(1): capture", 1, 1, 0, 200, "") ",\n"
    X("cuda_runtime", "hipStreamBeginCapture", 1, 1, 10, 2, "") ",\n"
    X("python_function", "nn.Module: Net_0", 1, 1, 15, 50, "") ",\n"
    X("cpu_op", "aten::mm", 1, 1, 16, 10, ",\"args\":{\"Input Dims\":[[32,64],[64,64]]}") ",\n"
    X("cuda_runtime", "hipLaunchKernel", 1, 1, 17, 2, KARG("kA", 90)) ",\n"
    X("cpu_op", "aten::relu", 1, 1, 30, 10, ",\"args\":{\"Input Dims\":[[32,64]]}") ",\n"
    X("cuda_runtime", "hipModuleLaunchKernel", 1, 1, 31, 2, KARG("kB", 91)) ",\n"
    X("cuda_runtime", "hipLaunchKernel", 1, 1, 45, 1, KARG("kC", 92)) ",\n"
    X("cuda_runtime", "hipStreamEndCapture", 1, 1, 80, 2, "") "\n"
    "]}";

#define EXEC_HEAD(ann)                                                                  \
    "{\"traceEvents\":[\n"                                                              \
    X("user_annotation", ann, 1, 1, 100, 100, "") ",\n"                                 \
    X("cpu_op", "execute_model", 1, 1, 101, 90, "") ",\n"                               \
    X("cuda_runtime", "hipGraphLaunch", 1, 1, 110, 10, CORR(5)) ",\n"

#define DETAILED_ANN "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk64sqsq32sqsk64)"

static const char EXEC1[] = EXEC_HEAD(DETAILED_ANN)
    X("kernel", "kA", 2, 7, 130, 5, KERN(5, 7)) ",\n"
    X("kernel", "kB", 2, 7, 140, 6, KERN(5, 7)) ",\n"
    X("kernel", "kC", 2, 7, 150, 4, KERN(5, 7)) ",\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":160,\"s\":\"t\"}\n"
    "]}";

static const char DETAILS32[] = "[{\"file\": \"c.json\", \"batch_size\": 32, \"mode\": \"FULL\"}]";

static tl_trace *attribute(fixture *f, tl_infer_stats *st, tl_error *err)
{
    tl_infer_opts o = {f->cap, 1, 0, 0, NULL, 0};
    memset(err, 0, sizeof *err);
    tl_quiet = 1;
    tl_trace *t = tl_infer_load(f->exec, &o, st, err);
    tl_quiet = 0;
    return t;
}

static uint32_t by_uid(const tl_trace *t, uint32_t uid)
{
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].uid == uid)
            return (uint32_t)i;
    fail_msg("no event with uid %u", uid);
    return 0;
}

static uint32_t by_name(const tl_trace *t, const char *name, int nth)
{
    for (size_t i = 0; i < t->nev; i++)
        if (strcmp(t->ev[i].name, name) == 0 && nth-- == 0)
            return (uint32_t)i;
    fail_msg("no event '%s'", name);
    return 0;
}

/* One cell of a result sheet as text. */
static const char *cell(const tl_results *r, const char *sheet, size_t row, const char *col, char *buf)
{
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->items[i].name, sheet) != 0)
            continue;
        const tl_table *t = r->items[i].table;
        for (size_t c = 0; c < t->ncols; c++) {
            if (strcmp(t->cols[c].name, col) != 0)
                continue;
            assert_true(row < t->nrows);
            const tl_cell *x = &t->cols[c].cells[row];
            if (x->kind == TL_STR)
                snprintf(buf, 512, "%.*s", (int)tl_cell_len(x), x->v.s);
            else if (x->kind == TL_INT)
                snprintf(buf, 512, "%lld", (long long)x->v.i);
            else if (x->kind == TL_FLOAT)
                snprintf(buf, 512, "%g", x->v.f);
            else
                snprintf(buf, 512, "<missing>");
            return buf;
        }
        fail_msg("no column %s in %s", col, sheet);
    }
    fail_msg("no sheet %s", sheet);
    return NULL;
}

static size_t nrows(const tl_results *r, const char *sheet)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].name, sheet) == 0)
            return r->items[i].table->nrows;
    return 0;
}

/* ---- §2.2, §2.3 --------------------------------------------------------------------------- */

static void test_root_kinds(void **state)
{
    (void)state;
    assert_int_equal(tl_infer_root_kind(DETAILED), 2);
    assert_int_equal(tl_infer_root_kind("execute_context_2(14721)_generation_0(0)"), 1);
    assert_int_equal(tl_infer_root_kind("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]"), 2);
    assert_int_equal(tl_infer_root_kind("step[DECODE bs=64]"), 1);
    assert_int_equal(tl_infer_root_kind("step[DECODER bs=64]"), 0); /* \b after the mode */
    assert_int_equal(tl_infer_root_kind("decode[bs=32 tok=128 sqsq=512 sqsk=2]"), 2);
    assert_int_equal(tl_infer_root_kind("prefill[bs=2 tok=14721 ctx=[7803, 6918]]"), 1);
    assert_int_equal(tl_infer_root_kind("execute_diffusion_1_1024x1024"), 1);
    assert_int_equal(tl_infer_root_kind("xexecute_diffusion_1_1024x1024"), 0); /* at the start only */
    assert_int_equal(tl_infer_root_kind("capture_32_FULL"), 0);
}

static void test_step_batch(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t batch; /* -99: none */
    } cases[] = {
        {"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)", 32},
        {"execute_46_context_9(sq8155sk8155sqsq1sqsk1)_generation_37(sq37sk99sqsq37sqsk9)", 8192},
        {"execute_context_2(14721)_generation_0(0)", 14721},
        {"execute_context_0(0)_generation_64(64)", 64},
        {"step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]", 128},
        {"step[EXTEND bs=2 toks=14721 c_sqsq=108745533 c_sqsk=1]", 14721},
        {"step[MIXED bs=3 sqsq=5]", 3},
        {"step[DECODE bs=64]", 64},
        {"step[EXTEND bs=2 toks=14721]", 14721},
        {"step[EXTEND bs=2]", 2},
        {"step[EXTEND bs=2 toks=0]", 2},
        {"step[MIXED bs=2 other]", -99}, /* no batch from the native rule, no `_` field */
        {"decode[bs=117/128 tok=117 d=117]", 117},
        {"prefill[bs=2 ctx=[7803, 6918]]", 0},
        {"decode[bs=2 tok=x1]", 0},
        {"execute_diffusion_4_1024x1024", 4},
        {"foo_12_bar", 12},
        {"foo_-3", -3},
        {"foo_bar", -99},
        {"nothing", -99},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t b = -12345;
        int rc = tl_infer_step_batch(cases[i].name, &b);
        if (cases[i].batch == -99) {
            if (rc != -1)
                fail_msg("%s: batch %lld, want none", cases[i].name, (long long)b);
        } else if (rc != 0 || b != cases[i].batch) {
            fail_msg("%s: rc %d batch %lld, want %lld", cases[i].name, rc, (long long)b, (long long)cases[i].batch);
        }
    }
}

/* ---- §2.7 --------------------------------------------------------------------------------- */

static int align(const char **rn, const int64_t *rstream, size_t nr, const char **cn, const char **ck, size_t nc,
                 char *got, size_t gotn)
{
    tl_infer_side r = {rn, NULL, rstream, nr}, c = {cn, ck, NULL, nc};
    tl_infer_pair p[64];
    size_t np = 0;
    char why[400] = "";
    int rc = tl_infer_align(&r, &c, p, &np, why, sizeof why);
    size_t k = 0;
    got[0] = 0;
    for (size_t i = 0; i < np; i++)
        k += (size_t)snprintf(got + k, gotn - k, "%s%u-%u", i ? "," : "", p[i].k, p[i].c);
    if (rc == 1)
        snprintf(got, gotn, "fail: %s", why);
    return rc;
}

static const int64_t S0[8] = {0, 0, 0, 0, 0, 0, 0, 0};

static void test_align_equal(void **state)
{
    (void)state;
    char got[512];
    const char *rn[] = {"kA", "kB", "kA"};
    const char *cn[] = {"hipLaunchKernel", "hipLaunchKernel", "hipLaunchKernel"};
    const char *ck[] = {"kA", "kB", "kA"};
    assert_int_equal(align(rn, S0, 3, cn, ck, 3, got, sizeof got), 0);
    assert_string_equal(got, "0-0,1-1,2-2");
    /* CUDA: no args.kernel, paired by position, unverified */
    const char *cn2[] = {"cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernel"};
    const char *none[] = {NULL, NULL, NULL};
    const char *rn2[] = {"x", "y", "z"};
    assert_int_equal(align(rn2, S0, 3, cn2, none, 3, got, sizeof got), 0);
    assert_string_equal(got, "0-0,1-1,2-2");
}

static void test_align_group(void **state)
{
    (void)state;
    char got[512];
    /* two neighbours swapped in time: the j-th of a name pairs with the j-th, in capture order */
    const char *rn[] = {"kA", "kC", "kB", "kA"};
    const char *cn[] = {"L", "L", "L", "L"};
    const char *ck[] = {"kA", "kB", "kC", "kA"};
    assert_int_equal(align(rn, S0, 4, cn, ck, 4, got, sizeof got), 0);
    assert_string_equal(got, "0-0,2-1,1-2,3-3");
    /* a name with different counts on the two sides fails the pair */
    const char *rn2[] = {"kA", "kC", "kB", "kB"};
    assert_int_equal(align(rn2, S0, 4, cn, ck, 4, got, sizeof got), 1);
    assert_non_null(strstr(got, "first disagreement at position 1: kB vs kC"));
    /* memcpy: its names differ across the sides, so grouping always fails on it */
    const char *rn3[] = {"Memcpy DtoD", "kB", "kA"};
    const char *cn3[] = {"hipMemcpyAsync", "L", "L"};
    const char *ck3[] = {NULL, "kA", "kB"};
    assert_int_equal(align(rn3, S0, 3, cn3, ck3, 3, got, sizeof got), 1);
}

static void test_align_greedy(void **state)
{
    (void)state;
    char got[512];
    /* counts differ: each kernel takes the next agreeing launch; surplus stays unmatched */
    const char *rn[] = {"kA", "Memset (Device)", "kB", "fillBufferAligned"};
    const char *cn[] = {"L", "L", "hipMemsetAsync", "L", "hipMemsetD32", "L"};
    const char *ck[] = {"kX", "kA", NULL, "kB", NULL, "kA"};
    assert_int_equal(align(rn, S0, 4, cn, ck, 6, got, sizeof got), 0);
    assert_string_equal(got, "0-1,1-2,2-3,3-4");
    /* never going back: kA after kB finds no launch */
    const char *rn2[] = {"kB", "kA"};
    const char *cn2[] = {"L", "L", "L"};
    const char *ck2[] = {"kA", "kB", "kC"};
    assert_int_equal(align(rn2, S0, 2, cn2, ck2, 3, got, sizeof got), 1);
    assert_non_null(strstr(got, "3 capture launches for 2 replay kernels, first disagreement at position 0: kA vs kB"));
}

static void test_align_streams(void **state)
{
    (void)state;
    char got[512];
    /* replay in GPU order over two streams; capture in CPU order */
    const char *rn[] = {"kA", "kB", "kA", "kC"};
    const int64_t rs[] = {0, 7, 7, 0};
    const char *cn[] = {"L", "L", "L", "L"};
    const char *ck[] = {"kA", "kA", "kC", "kB"};
    /* launch 0 (kA): both heads agree (stream 0 kA, stream 7 kB? no: 7's head is kB) -> stream 0;
     * launch 1 (kA): stream 0's head is kC, stream 7's kB: none -> unmatched ... */
    int rc = align(rn, rs, 4, cn, ck, 4, got, sizeof got);
    assert_int_equal(rc, 1);
    /* a tie between two streams goes to the longer run */
    const char *rn2[] = {"kA", "kA", "kB", "kC"};
    const int64_t rs2[] = {0, 7, 0, 7};
    const char *ck2[] = {"kA", "kC", "kA", "kB"};
    /* launch 0 kA: heads kA (0) and kA (7); run on 0: kA? then kB vs kC: 1; run on 7: kA, kC==kC: 2 -> 7 */
    assert_int_equal(align(rn2, rs2, 4, cn, ck2, 4, got, sizeof got), 0);
    assert_string_equal(got, "0-2,1-0,2-3,3-1");
    /* equal runs: the first stream */
    const char *ck3[] = {"kA", "kA", "kB", "kC"};
    assert_int_equal(align(rn2, rs2, 4, cn, ck3, 4, got, sizeof got), 0);
    assert_string_equal(got, "0-0,1-1,2-2,3-3");
    /* a missing stream is a stream of its own */
    const int64_t rs3[] = {0, TL_TEV_NO_STREAM, 0, TL_TEV_NO_STREAM};
    assert_int_equal(align(rn2, rs3, 4, cn, ck3, 4, got, sizeof got), 0);
    /* several streams need kernel names (memcpy and memset launches excepted) */
    const char *cn4[] = {"hipMemcpyAsync", "L", "L", "L"};
    const char *ck4[] = {NULL, "kA", "kB", NULL};
    assert_int_equal(align(rn2, rs2, 4, cn4, ck4, 4, got, sizeof got), 2);
    const char *ck5[] = {NULL, "kA", "kB", "kC"};
    assert_int_equal(align(rn2, rs2, 4, cn4, ck5, 4, got, sizeof got), 1);
}

/* ---- §1 ------------------------------------------------------------------------------------ */

static void test_details(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    fx_file(&f, "a.json", "{\"traceEvents\":[]}");
    fx_file(&f, "b.json", "{\"traceEvents\":[]}");
    tl_capture c;
    tl_error err = {0};
    static const char text[] =
        "[{\"file\": \"a.json\", \"batch_size\": 32, \"mode\": \"FULL\"},\n"
        " {\"file\": \"b.json\", \"batch_size\": true, \"mode\": \"FULL\"},\n"
        " {\"file\": \"b.json\", \"batch_size\": 8.0, \"mode\": \"FULL\"},\n"
        " {\"file\": \"b.json\", \"batch_size\": 8, \"mode\": \"DECODE\"},\n"
        " {\"file\": \"gone.json\", \"batch_size\": 16, \"mode\": \"FULL\"},\n"
        " {\"file\": \"b.json\", \"batch_size\": 64, \"mode\": \"PIECEWISE\", \"extra\": [1]},\n"
        " {\"file\": \"a.json\", \"batch_size\": 64, \"mode\": \"FULL\"},\n"
        " {\"file\": \"b.json\", \"batch_size\": 64, \"mode\": \"FULL\"}]";
    tl_quiet = 1;
    assert_int_equal(tl_capture_parse_details(&c, f.cap, text, strlen(text), &err), 0);
    tl_quiet = 0;
    assert_int_equal(c.n, 5); /* three skipped: a boolean, a float, a mode */
    assert_int_equal(c.e[0].batch, 32);
    assert_false(c.e[1].exists);
    int64_t size = 0;
    /* the missing bs-16 file still takes part in the round-up */
    assert_int_equal(tl_capture_choose(&c, 9, 1, &size), -2);
    assert_int_equal(size, 16);
    assert_int_equal(tl_capture_choose(&c, 33, 1, &size), 4); /* 64: FULL, the later of two */
    assert_string_equal(c.e[4].file, "b.json");
    assert_int_equal(tl_capture_choose(&c, 33, 3, &size), 2); /* 64: PIECEWISE for 3 launches */
    assert_int_equal(tl_capture_choose(&c, 65, 1, &size), -1);
    assert_int_equal(tl_capture_choose(&c, 32, 1, &size), 0);
    tl_capture_close(&c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"file\": 1}", "not a JSON array"},
        {"[1]", "entry 0 is not an object"},
        {"[{\"file\": \"a.json\", \"mode\": \"FULL\"}]", "entry 0 lacks \"batch_size\""},
        {"[{\"file\": 3, \"batch_size\": 1, \"mode\": \"FULL\"}]", "\"file\" is not a string"},
        {"[{\"file\": \"a.json\", \"batch_size\": 32,", "not valid JSON"},
        {"[] x", "not valid JSON: text after the array"},
        {"", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(tl_capture_parse_details(&c, f.cap, bad[i].text, strlen(bad[i].text), &err), -1);
        if (!strstr(err.msg, bad[i].want) || !strstr(err.msg, "execution_details.json"))
            fail_msg("%s: '%s', want '%s'", bad[i].text, err.msg, bad[i].want);
        tl_capture_close(&c);
    }
    fx_free(&f);
}

static void test_folder_errors(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    tl_capture c;
    tl_error err = {0};
    assert_int_equal(tl_capture_open(&c, f.exec, &err), -1);
    assert_non_null(strstr(err.msg, "not a directory"));
    tl_capture_close(&c);
    memset(&err, 0, sizeof err);
    fx_file(&f, "README.txt", "no traces here");
    assert_int_equal(tl_capture_open(&c, f.cap, &err), -1);
    assert_non_null(strstr(err.msg, "no capture traces"));
    assert_non_null(strstr(err.msg, f.cap));
    tl_capture_close(&c);
    memset(&err, 0, sizeof err);
    fx_file(&f, TL_CAPTURE_DETAILS, "[{\"file\": \"gone.json\", \"batch_size\": 1, \"mode\": \"FULL\"}]");
    tl_quiet = 1;
    assert_int_equal(tl_capture_open(&c, f.cap, &err), -1);
    tl_quiet = 0;
    assert_non_null(strstr(err.msg, "no usable capture trace"));
    tl_capture_close(&c);
    fx_free(&f);
}

/* §1.2: the entries inferred from the traces when execution_details.json is missing. */
static void test_classify(void **state)
{
    (void)state;
    tl_error err = {0};
    /* rule 2: as many capture annotations as vLLM dummy runs: the first annotation */
    static const char vllm[] = "{\"traceEvents\":[\n"
        X("user_annotation", "capture_64_PIECEWISE", 1, 1, 50, 1, "") ",\n"
        X("user_annotation", "capture_32_FULL", 1, 1, 10, 1, "") ",\n"
        X("python_function", "vllm/v1/worker/gpu_model_runner.py(2911): _dummy_run", 1, 1, 5, 1, "") ",\n"
        X("python_function", "vllm/v1/worker/gpu_model_runner.py(2911): _dummy_run", 1, 1, 45, 1, "") "\n"
        "]}";
    tl_trace *t = tl_trace_load_mem_flags(vllm, strlen(vllm), "v.json", TL_LOAD_PYTHON | TL_LOAD_ANNOT, &err);
    assert_non_null(t);
    int64_t b;
    int mode;
    const char *mt;
    tl_capture_classify(t, &b, &mode, &mt);
    assert_int_equal(b, 32);
    assert_int_equal(mode, 0);
    tl_trace_free(t);
    /* rule 3: no dummy run: begin-capture count and the commonest first dimension (ties: first seen) */
    static const char sgl[] = "{\"traceEvents\":[\n"
        X("user_annotation", "capture_32_DECODE", 1, 1, 1, 1, "") ",\n"
        X("cpu_op", "a", 1, 1, 10, 1, ",\"args\":{\"Input Dims\":[[8,2],[16],[],[\"x\"]]}") ",\n"
        X("cpu_op", "b", 1, 1, 12, 1, ",\"args\":{\"Input Dims\":[[16,2],[8]]}") ",\n"
        X("cuda_runtime", "hipStreamBeginCapture", 1, 1, 20, 1, "") ",\n"
        X("cuda_runtime", "hipStreamBeginCapture", 1, 1, 30, 1, "") "\n"
        "]}";
    t = tl_trace_load_mem_flags(sgl, strlen(sgl), "s.json", TL_LOAD_PYTHON | TL_LOAD_ANNOT, &err);
    assert_non_null(t);
    tl_capture_classify(t, &b, &mode, &mt);
    assert_int_equal(b, 8);
    assert_int_equal(mode, 1);
    tl_trace_free(t);
}

/* ---- §2.5, §2.8, §3 -------------------------------------------------------------------------- */

static void test_graft(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    fx_file(&f, "c.json", CAPTURE1);
    fx_file(&f, TL_CAPTURE_DETAILS, DETAILS32);
    fx_exec(&f, EXEC1);
    tl_infer_stats st;
    tl_error err;
    tl_trace *t = attribute(&f, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nlaunch, 1);
    assert_int_equal(st.nattributed, 1);
    assert_int_equal(st.nreplay_attributed, 3);
    assert_int_equal(t->nuid, 7); /* the instant event counts, though it is not kept */
    /* the capture trace grafted from stays for its strings (the copies' names), not its events */
    assert_int_equal(t->nowned, 1);
    assert_int_equal(t->owned[0]->nev, 0);
    assert_null(t->owned[0]->ev);
    assert_null(t->owned[0]->aux);
    /* the subtree: capture root, Net, mm, launch kA, relu, launch kB, launch kC -> uids 7.. */
    uint32_t root = by_uid(t, 7), net = by_uid(t, 8), mm = by_uid(t, 9), la = by_uid(t, 10), lc = by_uid(t, 13);
    assert_string_equal(t->ev[root].name, "CaptureRoot");
    assert_int_equal(t->ev[root].kind, TL_TEV_RUNTIME);
    assert_string_equal(t->ev[net].name, "nn.Module: Net_0");
    assert_string_equal(t->ev[mm].name, "aten::mm");
    assert_string_equal(t->ev[by_uid(t, 11)].name, "aten::relu");
    assert_string_equal(tl_tev_x(t, &t->ev[lc])->kernel_arg, "kC");
    assert_true(tl_infer_is_copy(t, mm) && !tl_infer_is_copy(t, by_name(t, "hipGraphLaunch", 0)));
    uint32_t g = by_name(t, "hipGraphLaunch", 0);
    /* the copies have the graph launch's times; the root hangs under it */
    assert_true(t->ev[mm].ts == 110 && t->ev[mm].dur == 10);
    assert_int_equal(t->ev[root].parent, g);
    assert_int_equal(t->ev[g].nchild, 1);
    assert_int_equal(tl_tev_children(t, g)[0], root);
    assert_int_equal(t->ev[net].parent, root);
    uint32_t ka = by_name(t, "kA", 0);
    assert_int_equal(t->ev[ka].parent, la);
    assert_int_equal(t->ev[la].nchild, 1);
    assert_int_equal(t->ev[root].ngpu, 3);
    assert_int_equal(t->ev[mm].ngpu, 1);
    assert_int_equal(t->ev[g].ngpu, 3);
    /* the sheets: the launch without a cpu_op between it and the capture root is its own launcher */
    tl_arena a;
    tl_arena_init(&a);
    tl_results r = {0};
    tl_sheet_opts so = {.inference = 1, .parent_module = 1, .num_kernels = 1};
    assert_int_equal(tl_trace_sheets_opts(t, &so, &a, &r, &err), 0);
    char b[512];
    assert_int_equal(nrows(&r, "ops_summary"), 3);
    assert_string_equal(cell(&r, "ops_summary", 0, "name", b), "aten::relu");
    assert_string_equal(cell(&r, "ops_summary", 1, "name", b), "aten::mm");
    assert_string_equal(cell(&r, "ops_summary", 2, "name", b), "hipLaunchKernel");
    assert_string_equal(cell(&r, "ops_summary", 1, "parent_module", b), "nn.Module: Net");
    assert_string_equal(cell(&r, "ops_summary", 1, "call_stack_first", b), "['aten::mm', 'nn.Module: Net_0']");
    assert_string_equal(cell(&r, "ops_summary", 2, "parent_module", b), "nn.Module: Net");
    assert_string_equal(cell(&r, "ops_summary", 0, "total_subtree_kernel_time_count", b), "1");
    /* ops_unique_args: ex_UID is the copy's grafted UID, num_kernels the direct count */
    assert_string_equal(cell(&r, "ops_unique_args", 1, "name", b), "aten::mm");
    assert_string_equal(cell(&r, "ops_unique_args", 1, "ex_UID", b), "9");
    assert_string_equal(cell(&r, "ops_unique_args", 1, "num_kernels", b), "1");
    assert_string_equal(cell(&r, "ops_unique_args", 1, "Input Dims", b), "((32, 64), (64, 64))");
    /* kernel_summary: the launcher is the capture launch, the parent op the capture op */
    int found = 0;
    for (size_t i = 0; i < nrows(&r, "kernel_summary"); i++) {
        if (strcmp(cell(&r, "kernel_summary", i, "Kernel name", b), "kC") == 0) {
            /* no cpu_op in the capture subtree: the op above the graph launch */
            assert_string_equal(cell(&r, "kernel_summary", i, "Parent cpu_op", b), "execute_model");
            found = 1;
        }
    }
    assert_true(found);
    tl_results_free(&r);
    tl_arena_free(&a);
    tl_trace_free(t);
    fx_free(&f);
}

/* §2.5: ties in ts inside a capture subtree: breadth-first order, then a stable sort. */
static void test_subtree_ties(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    static const char cap[] = "{\"traceEvents\":[\n"
        X("python_function", "outer", 1, 1, 0, 200, "") ",\n"
        X("cuda_runtime", "cudaStreamBeginCapture", 1, 1, 10, 2, "") ",\n"
        X("cpu_op", "op1", 1, 1, 20, 10, "") ",\n"
        X("cpu_op", "inner", 1, 1, 20, 5, "") ",\n"
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 20, 1, CORR(1)) ",\n"
        X("cpu_op", "op2", 1, 1, 40, 10, "") ",\n"
        X("cuda_runtime", "cudaLaunchKernel", 1, 1, 41, 1, CORR(2)) ",\n"
        X("cuda_runtime", "cudaStreamEndCapture", 1, 1, 80, 2, "") "\n"
        "]}";
    fx_file(&f, "c.json", cap);
    fx_file(&f, TL_CAPTURE_DETAILS, DETAILS32);
    fx_exec(&f, EXEC_HEAD(DETAILED_ANN)
            X("kernel", "k1", 2, 7, 130, 5, KERN(5, 7)) ",\n"
            X("kernel", "k2", 2, 7, 140, 6, KERN(5, 7)) "\n"
            "]}");
    tl_infer_stats st;
    tl_error err;
    tl_trace *t = attribute(&f, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    /* BFS: root, op1, op2, inner, launch2, launch1; by ts (stable): root, op1, inner, launch1, op2, launch2 */
    static const char *const want[] = {"CaptureRoot", "op1", "inner", "cudaLaunchKernel", "op2", "cudaLaunchKernel"};
    for (uint32_t u = 0; u < 6; u++)
        assert_string_equal(t->ev[by_uid(t, 5 + u)].name, want[u]);
    /* CUDA: no args.kernel, positional: k1 under inner's launch, k2 under op2's */
    assert_int_equal(t->ev[by_name(t, "k1", 0)].parent, by_uid(t, 8));
    assert_int_equal(t->ev[by_name(t, "k2", 0)].parent, by_uid(t, 10));
    tl_trace_free(t);
    fx_free(&f);
}

/* §2.8/§7: GPU events inside a capture window are not copied; §2.6: one capture root for
 * two graph launches, each grafted with its own copies; §7: two execution roots. */
static void test_two_roots_gpu_in_window(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    static const char cap[] = "{\"traceEvents\":[\n"
        X("python_function", "outer", 1, 1, 0, 200, "") ",\n"
        X("cuda_runtime", "hipStreamBeginCapture", 1, 1, 10, 2, "") ",\n"
        X("cpu_op", "op1", 1, 1, 20, 10, "") ",\n"
        X("python_function", "helper.py(9): f", 1, 1, 20.5, 3, "") ",\n"
        X("cuda_runtime", "hipLaunchKernel", 1, 1, 21, 1, KARG("k1", 1)) ",\n"
        X("python_function", "idle.py(3): g", 1, 1, 40, 2, "") ",\n"
        "{\"ph\":\"s\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":21,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
        "{\"ph\":\"f\",\"id\":1,\"pid\":2,\"tid\":7,\"ts\":25,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
        X("kernel", "k1", 2, 7, 25, 1, KERN(1, 7)) ",\n"
        X("cuda_runtime", "hipStreamEndCapture", 1, 1, 80, 2, "") "\n"
        "]}";
    fx_file(&f, "c.json", cap);
    fx_file(&f, TL_CAPTURE_DETAILS, "[{\"file\": \"c.json\", \"batch_size\": 8, \"mode\": \"FULL\"},"
                                    " {\"file\": \"c.json\", \"batch_size\": 8, \"mode\": \"PIECEWISE\"}]");
    fx_exec(&f, "{\"traceEvents\":[\n"
            X("user_annotation", "step[DECODE bs=4]", 1, 1, 100, 50, "") ",\n"
            X("cuda_runtime", "hipGraphLaunch", 1, 1, 110, 10, CORR(5)) ",\n"
            X("kernel", "k1", 2, 7, 130, 5, KERN(5, 7)) ",\n"
            X("user_annotation", "step[DECODE bs=8]", 1, 1, 200, 50, "") ",\n"
            X("cuda_runtime", "hipGraphLaunch", 1, 1, 210, 10, CORR(6)) ",\n"
            X("kernel", "k1", 2, 7, 230, 5, KERN(6, 7)) "\n"
            "]}");
    tl_infer_stats st;
    tl_error err;
    tl_trace *t = attribute(&f, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nroots, 2);
    assert_int_equal(st.nattributed, 2);
    /* the subtree is root, op1, the frame f, the launch, k1, the frame g (6 events: UIDs
     * count them all); k1 (a GPU event) is not copied, nor g (no launch below it), but f
     * (above the launch: the call stacks go through it) is */
    assert_int_equal(st.ncopies, 8);
    assert_string_equal(t->ev[by_uid(t, 6)].name, "CaptureRoot");
    assert_string_equal(t->ev[by_uid(t, 12)].name, "CaptureRoot");
    for (size_t i = 0; i < t->nev; i++)
        assert_true(t->ev[i].uid != 10 && t->ev[i].uid != 11 && t->ev[i].uid != 16 && t->ev[i].uid != 17);
    assert_string_equal(t->ev[by_uid(t, 8)].name, "helper.py(9): f");
    assert_int_equal(t->ev[by_uid(t, 9)].parent, by_uid(t, 8));
    assert_int_equal(t->ev[by_uid(t, 8)].parent, by_uid(t, 7));
    assert_int_equal(t->ev[by_name(t, "k1", 1)].parent, by_uid(t, 15));
    assert_true(t->ev[by_uid(t, 15)].ts == 210);
    /* the UIDs taken: the execution trace's 6 and the two subtrees' 6 each */
    assert_int_equal(t->nuids, 18);
    tl_trace_free(t);
    /* asked for every frame, g is copied too (same UIDs) */
    tl_capture folder;
    assert_int_equal(tl_capture_open(&folder, f.cap, &err), 0);
    t = tl_trace_load_flags(f.exec, TL_LOAD_ANNOT | TL_LOAD_PYTHON, &err);
    assert_non_null(t);
    tl_quiet = 1;
    assert_int_equal(tl_infer_attribute(t, &folder, 1, &st, &err), 0);
    tl_quiet = 0;
    assert_int_equal(st.ncopies, 10);
    assert_string_equal(t->ev[by_uid(t, 11)].name, "idle.py(3): g");
    assert_int_equal(t->nuids, 18);
    tl_capture_close(&folder);
    tl_trace_free(t);
    fx_free(&f);
}

/* The attention models' per-step aggregates (the reference's IterationAnnotation.chunk_stats),
 * checked against the reference on each family: only the detailed annotations carry them. */
static void test_chunk_stats(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int ok;
        int64_t st[8];
    } cases[] = {
        {"execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)", 1,
         {6144, 7144, 20971520, 23019520, 3, 6144, 3, 6144}},
        {"execute_context_2(14721)_generation_0(0)", 0, {0}},
        {"step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]", 1,
         {5, 8, 25, 40, 1, 12, 1, 12}},
        {"step[DECODE bs=64]", 0, {0}},
        {"decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]", 1, {0, 0, 0, 0, 128, 65536, 512, 262144}},
        {"prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", 1,
         {14721, 14721, 108745533, 108745533, 0, 0, 0, 0}},
        {"decode[bs=64 tok=64 d=64]", 0, {0}},
        {"NA", 0, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t st[8];
        assert_int_equal(tl_infer_chunk_stats(cases[i].name, st), cases[i].ok);
        for (int k = 0; k < 8; k++)
            assert_int_equal(st[k], cases[i].st[k]);
    }
}

/* A capture holding vLLM's attention op (launching kA) and an aten::mm (kB). */
static const char CAPTURE_ATTN[] =
    "{\"traceEvents\":[\n"
    X("python_function", "runner.py(1): capture", 1, 1, 0, 200, "") ",\n"
    X("cuda_runtime", "hipStreamBeginCapture", 1, 1, 10, 2, "") ",\n"
    X("python_function", "nn.Module: Net_0", 1, 1, 15, 50, "") ",\n"
    X("cpu_op", "vllm::unified_attention_with_output", 1, 1, 16, 10,
      ",\"args\":{\"Input Dims\":[[32,8,64],[32,1,64]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],"
      "\"Sequence number\":7}") ",\n"
    X("python_function", "vllm/attention.py(685): unified_attention_with_output", 1, 1, 16.5, 8, "") ",\n"
    X("cuda_runtime", "hipLaunchKernel", 1, 1, 17, 2, KARG("kA", 90)) ",\n"
    X("cpu_op", "aten::mm", 1, 1, 30, 10,
      ",\"args\":{\"Input Dims\":[[32,64],[64,64]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],"
      "\"Input Strides\":[[64,1],[1,64]]}") ",\n"
    X("cuda_runtime", "hipLaunchKernel", 1, 1, 31, 2, KARG("kB", 91)) ",\n"
    X("python_function", "idle.py(3): g", 1, 1, 50, 2, "") ",\n"
    X("cuda_runtime", "hipStreamEndCapture", 1, 1, 80, 2, "") "\n"
    "]}";

static const char EXEC_ATTN[] = EXEC_HEAD(DETAILED_ANN)
    X("kernel", "kA", 2, 7, 130, 7, KERN(5, 7)) ",\n"
    X("kernel", "kB", 2, 7, 140, 6, KERN(5, 7)) "\n"
    "]}";

static tl_results infer_sheets(tl_trace *t, int num_kernels, int call_stack, tl_arena *a)
{
    tl_results r = {0};
    tl_sheet_opts so = {.inference = 1, .num_kernels = num_kernels};
    tl_infer_opts io = {.python = 1, .call_stack = call_stack};
    tl_error err = {0};
    if (tl_perf_infer_report_sheets(t, &so, &io, a, &r, &err) != 0)
        fail_msg("%s", err.msg);
    return r;
}

/* §3.8: the perf sheets of a merged tree, as the inference generator writes them: the
 * grafted attention op evaluated with its step's annotation (the execution trace's, by the
 * graph launch's time), the kernel count grouped on, no backward sheets, and the call
 * stacks of unified_perf_summary through the grafted frames. */
static void test_perf_sheets_merged(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    fx_file(&f, "c.json", CAPTURE_ATTN);
    fx_file(&f, TL_CAPTURE_DETAILS, DETAILS32);
    fx_exec(&f, EXEC_ATTN);
    tl_infer_stats st;
    tl_error err;
    tl_trace *t = attribute(&f, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    assert_int_equal(st.nattributed, 1);
    /* the copies carry their extras (args present, no link) and the capture's cpu roots */
    uint32_t at = by_name(t, "vllm::unified_attention_with_output", 0);
    assert_true(tl_infer_is_copy(t, at));
    assert_true(tl_tev_x(t, &t->ev[at])->has_args && tl_tev_x(t, &t->ev[at])->seq == TL_SEQ_NONE);
    int rooted = 0;
    for (size_t r = 0; r < t->nroots; r++)
        rooted |= t->roots[r] == at;
    assert_true(rooted);
    tl_arena a;
    tl_arena_init(&a);
    tl_results r = infer_sheets(t, 1, 0, &a);
    char b[512];
    /* flops = H_Q·2·g_sqsk·(d_qk + d_v) = 8·2·64·128; bytes = (32·1152 + 32·128)·2 */
    assert_int_equal(nrows(&r, "InferenceAttention_fwd"), 1);
    assert_string_equal(cell(&r, "InferenceAttention_fwd", 0, "GFLOPS_first", b), "0.000131072");
    assert_string_equal(cell(&r, "InferenceAttention_fwd", 0, "Data Moved (MB)_first", b), "0.078125");
    assert_string_equal(cell(&r, "InferenceAttention_fwd", 0, "param: g_sk", b), "64");
    assert_string_equal(cell(&r, "InferenceAttention_fwd", 0, "num_kernels", b), "1");
    assert_string_equal(cell(&r, "GEMM", 0, "num_kernels", b), "1");
    for (size_t i = 0; i < r.n; i++)
        assert_null(strstr(r.items[i].name, "_bwd"));
    /* kernel_details_summary: the walk's frames down to the op, then the op's own down to
     * the kernel (Python frames are file frames) */
    const char *ks = cell(&r, "unified_perf_summary", 0, "kernel_details_summary", b);
    if (!strstr(ks, "unified_attention_with_output']"))
        fail_msg("%s", ks);
    assert_non_null(strstr(ks, "'call_stack': ['execute_model', 'nn.Module: Net', 'vllm::unified_attention_with_output', "
                               "'vllm/attention.py(685): unified_attention_with_output']"));
    tl_results_free(&r);
    /* --include_call_stack: the chain moves to call_stack_full, the entry point found inward */
    r = infer_sheets(t, 0, 1, &a);
    assert_null(strstr(cell(&r, "unified_perf_summary", 0, "kernel_details_summary", b), "call_stack"));
    assert_string_equal(cell(&r, "unified_perf_summary", 0, "entry_point", b),
                        "vllm/attention.py(685): unified_attention_with_output");
    assert_non_null(strstr(cell(&r, "unified_perf_summary", 0, "call_stack_full", b),
                           "'vllm/attention.py(685): unified_attention_with_output', 'kA']"));
    tl_results_free(&r);
    tl_arena_free(&a);
    tl_trace_free(t);
    /* a trace input of a comparison (TRACE@DIR) carries the same perf sheets */
    tl_report rep;
    tl_trace_infer_spec spec = {f.cap, 0, 1, 0, 0, NULL};
    assert_int_equal(tl_perf_report_open_infer(&rep, f.exec, &spec, &err), 0);
    assert_int_equal(tl_trace_report_wait(&rep, &err), 0);
    assert_true(tl_report_has_sheet(&rep, "InferenceAttention_fwd"));
    assert_true(tl_report_has_sheet(&rep, "GEMM"));
    tl_arena_init(&a);
    tl_table *ia = tl_report_read_sheet(&rep, "InferenceAttention_fwd", &a, &err);
    assert_non_null(ia);
    assert_int_equal(ia->nrows, 1);
    tl_table_free(ia);
    tl_arena_free(&a);
    tl_report_close(&rep);
    fx_free(&f);
    /* the same step without its aggregates: the attention op has no estimate (no row) */
    fx_init(&f);
    fx_file(&f, "c.json", CAPTURE_ATTN);
    fx_file(&f, TL_CAPTURE_DETAILS, DETAILS32);
    fx_exec(&f, EXEC_HEAD("execute_context_0(0)_generation_32(32)") X("kernel", "kA", 2, 7, 130, 5, KERN(5, 7)) ",\n"
            X("kernel", "kB", 2, 7, 140, 6, KERN(5, 7)) "\n]}");
    t = attribute(&f, &st, &err);
    if (!t)
        fail_msg("%s", err.msg);
    tl_arena_init(&a);
    r = infer_sheets(t, 0, 0, &a);
    assert_int_equal(nrows(&r, "InferenceAttention_fwd"), 0);
    tl_results_free(&r);
    tl_arena_free(&a);
    tl_trace_free(t);
    fx_free(&f);
}

/* §2.10: vLLM's unfused Triton MoE: a pseudo op per matmul_ogs kernel (the first by ts
 * "up"), one for the finalize scatter, between each launch and its parent frame; the
 * launches keep their parent; topk from the TopK op below. */
static void test_moe_pseudo_ops(void **state)
{
    (void)state;
    static const char text[] = "{\"traceEvents\":[\n"
        X("cpu_op", "vllm::moe_forward", 1, 1, 10, 100,
          ",\"args\":{\"Input Dims\":[[32,64],[32,8]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}") ",\n"
        X("cpu_op", "TopK", 1, 1, 11, 2, ",\"args\":{\"Concrete Inputs\":[\"\", \"2\"]}") ",\n"
        X("python_function", "triton/runtime/jit.py(574): run", 1, 1, 20, 60, "") ",\n"
        X("cuda_runtime", "hipModuleLaunchKernel", 1, 1, 21, 2, CORR(1)) ",\n"
        X("cuda_runtime", "hipModuleLaunchKernel", 1, 1, 30, 2, CORR(2)) ",\n"
        X("cuda_runtime", "hipModuleLaunchKernel", 1, 1, 40, 2, CORR(3)) ",\n"
        FLOW(1, 21, 200) ",\n" FLOW(2, 30, 210) ",\n" FLOW(3, 40, 220) ",\n"
        X("kernel", "_matmul_ogs_NNT_bf16xbf16xmxfp4_swiglu", 2, 7, 200, 5, KERN(1, 7)) ",\n"
        X("kernel", "_matmul_ogs_NNT_bf16xbf16xmxfp4", 2, 7, 210, 5, KERN(2, 7)) ",\n"
        X("kernel", "_finalize_matmul_scatter_bf16", 2, 7, 220, 1, KERN(3, 7)) "\n"
        "]}";
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(text, strlen(text), "moe.json", TL_LOAD_PYTHON, &err);
    assert_non_null(t);
    size_t nev = t->nev;
    uint32_t nuids = t->nuids, frame = by_name(t, "triton/runtime/jit.py(574): run", 0);
    tl_infer_pseudo_ops(t);
    assert_int_equal(t->nev, nev + 3);
    static const char *const names[3] = {"pseudo_op::moe_triton_unfused_up", "pseudo_op::moe_triton_unfused_down",
                                         "pseudo_op::moe_triton_unfused_finalize_matmul_scatter"};
    for (uint32_t k = 0; k < 3; k++) {
        const tl_tev *e = &t->ev[nev + k];
        assert_string_equal(e->name, names[k]);
        assert_int_equal(e->uid, nuids + k);
        assert_int_equal(e->parent, frame);
        assert_int_equal(e->nchild, 1);
        uint32_t launch = tl_tev_children(t, (uint32_t)(nev + k))[0];
        assert_string_equal(t->ev[launch].name, "hipModuleLaunchKernel");
        assert_int_equal(t->ev[launch].parent, frame); /* the launch keeps its parent */
        assert_int_equal(e->ngpu, 1);
        assert_true(isnan(e->dur));
        assert_ptr_equal(tl_tev_x(t, e)->args->input_dims, tl_tev_x(t, &t->ev[0])->args->input_dims);
    }
    assert_int_equal(tl_tev_x(t, &t->ev[nev])->moe_topk, 2);
    assert_int_equal(tl_tev_x(t, &t->ev[nev])->moe_gated, 1);
    assert_int_equal(tl_tev_x(t, &t->ev[nev + 1])->moe_gated, 0);
    /* the frame's children: the launches out, the pseudo ops in at the end */
    assert_int_equal(t->ev[frame].nchild, 3);
    for (uint32_t k = 0; k < 3; k++)
        assert_int_equal(tl_tev_children(t, frame)[k], nev + k);
    /* their perf rows: 2·M·K·N·topk (·2 gated) = 2·32·64·64·2·2 for the up projection */
    tl_arena a;
    tl_arena_init(&a);
    tl_results r = infer_sheets(t, 0, 0, &a);
    char b[512];
    assert_int_equal(nrows(&r, "MoE_unfused_fwd"), 2);
    int up = strcmp(cell(&r, "MoE_unfused_fwd", 0, "name", b), names[0]) == 0 ? 0 : 1;
    assert_string_equal(cell(&r, "MoE_unfused_fwd", (size_t)up, "GFLOPS_first", b), "0.00104858");
    assert_string_equal(cell(&r, "MoE_unfused_fwd", (size_t)up, "param: weight_dtype", b), "FP4");
    tl_results_free(&r);
    tl_arena_free(&a);
    tl_trace_free(t);
}

/* §5: the refusals, each naming the file or folder; the trace is not changed. */
static void test_refusals(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    fx_file(&f, "c.json", CAPTURE1);
    fx_file(&f, TL_CAPTURE_DETAILS, DETAILS32);
    tl_infer_stats st;
    tl_error err;
    /* no iteration annotation */
    fx_exec(&f, "{\"traceEvents\":[\n" X("cuda_runtime", "hipGraphLaunch", 1, 1, 110, 10, CORR(5)) ",\n"
                X("kernel", "kA", 2, 7, 130, 5, KERN(5, 7)) "]}");
    assert_null(attribute(&f, &st, &err));
    assert_non_null(strstr(err.msg, "1 graph launch but no iteration annotation"));
    assert_non_null(strstr(err.msg, f.exec));
    /* overlapping annotations sharing a graph launch */
    fx_exec(&f, "{\"traceEvents\":[\n"
            X("user_annotation", "step[DECODE bs=4]", 1, 1, 100, 50, "") ",\n"
            X("user_annotation", "step[DECODE bs=4]", 1, 1, 105, 50, "") ",\n"
            X("cuda_runtime", "hipGraphLaunch", 1, 1, 110, 10, CORR(5)) ",\n"
            X("kernel", "kA", 2, 7, 130, 5, KERN(5, 7)) "]}");
    assert_null(attribute(&f, &st, &err));
    assert_non_null(strstr(err.msg, "overlapping iteration annotations"));
    /* nothing attributed: the batch is too large */
    fx_exec(&f, "{\"traceEvents\":[\n"
            X("user_annotation", "step[DECODE bs=40]", 1, 1, 100, 50, "") ",\n"
            X("cuda_runtime", "hipGraphLaunch", 1, 1, 110, 10, CORR(5)) ",\n"
            X("kernel", "kA", 2, 7, 130, 5, KERN(5, 7)) "]}");
    assert_null(attribute(&f, &st, &err));
    assert_non_null(strstr(err.msg, "does not match"));
    assert_non_null(strstr(err.msg, "0 of 1 graph launches attributed (no capture batch size >= 40)"));
    /* nothing attributed: a mismatched capture */
    fx_exec(&f, EXEC_HEAD(DETAILED_ANN) X("kernel", "kZ", 2, 7, 130, 5, KERN(5, 7)) "]}");
    assert_null(attribute(&f, &st, &err));
    assert_non_null(strstr(err.msg, "alignment: 3 capture launches for 1 replay kernels"));
    /* no graph launch at all: the folder is not used, the trace is as it is */
    fx_exec(&f, "{\"traceEvents\":[\n" X("cpu_op", "aten::mm", 1, 1, 110, 10, "") "]}");
    tl_trace *t = attribute(&f, &st, &err);
    assert_non_null(t);
    assert_int_equal(st.nlaunch, 0);
    assert_int_equal(t->nev, 1);
    tl_trace_free(t);
    fx_free(&f);
}

/* §2.10: SGLang's numbered profiler names, renamed when the earliest carrier is a cpu_op. */
static void test_pseudo_ops(void **state)
{
    (void)state;
    static const char text[] = "{\"traceEvents\":[\n"
        X("cpu_op", "sglang_profiler::attention_ragged_100", 1, 1, 10, 5, "") ",\n"
        X("cpu_op", "sglang_profiler::attention_ragged_100", 1, 1, 20, 5, "") ",\n"
        X("user_annotation", "sglang_profiler::note_7", 1, 1, 20, 5, "") ",\n"
        X("cpu_op", "sglang_profiler::note_7", 1, 1, 30, 5, "") ",\n"
        X("cpu_op", "sglang_profiler::x_y", 1, 1, 40, 5, "") ",\n"
        X("cpu_op", "aten::mm_2", 1, 1, 50, 5, "") "]}";
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(text, strlen(text), "p.json", TL_LOAD_ANNOT, &err);
    assert_non_null(t);
    tl_infer_pseudo_ops(t);
    assert_string_equal(t->ev[0].name, "sglang_profiler::attention_ragged");
    assert_string_equal(t->ev[1].name, "sglang_profiler::attention_ragged");
    assert_string_equal(t->ev[3].name, "sglang_profiler::note_7"); /* its earliest event is an annotation */
    assert_string_equal(t->ev[4].name, "sglang_profiler::x_y");
    assert_string_equal(t->ev[5].name, "aten::mm_2");
    const char *what[4];
    assert_int_equal(tl_infer_unapplied_pseudo_ops(t, what, 4), 0);
    tl_trace_free(t);
    /* the re-parenting pseudo ops are not applied, and said so */
    static const char mla[] = "{\"traceEvents\":[\n"
        X("python_function", "aiter/mla.py(211): mla_decode_fwd", 1, 1, 10, 50, "") ",\n"
        X("cpu_op", "aiter::mla_decode_stage1_asm_fwd", 1, 1, 11, 5, "") ",\n"
        X("cpu_op", "aiter::fused_moe_", 1, 1, 20, 5, "") ",\n"
        X("cpu_op", "aiter::mla_prefill_ps_asm_fwd", 1, 1, 30, 5, "") ",\n"
        /* the pattern's text, but not at a word's end: no match */
        X("python_function", "attn.py(9): mla_fp8_prefill_attnx", 1, 1, 40, 5, "") ",\n"
        X("python_function", "ops/paged_decode.py(3): sparse_attn_v4_paged_decode", 1, 1, 50, 5, "") "]}";
    t = tl_trace_load_mem_flags(mla, strlen(mla), "mla.json", TL_LOAD_PYTHON, &err);
    assert_non_null(t);
    assert_int_equal(tl_infer_unapplied_pseudo_ops(t, what, 4), 3); /* no mla_fp8_prefill_attn frame */
    assert_string_equal(what[0], "MLA decode");
    assert_string_equal(what[1], "DeepSeek-V4 paged decode");
    assert_string_equal(what[2], "flydsl MoE");
    tl_trace_free(t);
}

/* §3.2: parent_module loses every `_<digits>`; long module names are cut in the stack. */
static void test_parent_module(void **state)
{
    (void)state;
    char longname[400];
    memset(longname, 'M', sizeof longname);
    memcpy(longname, "nn.Module: ", 11);
    longname[300] = 0;
    char text[4096];
    snprintf(text, sizeof text, "{\"traceEvents\":[\n"
             X("python_function", "%s", 1, 1, 0, 100, "") ",\n"
             X("python_function", "nn.Module: Qwen3_5Model_0", 1, 1, 1, 90, "") ",\n"
             X("cpu_op", "aten::mm", 1, 1, 10, 10, "") ",\n"
             X("python_function", "torch/mm.py(3): helper", 1, 1, 10.5, 5, "") ",\n"
             X("cuda_runtime", "cudaLaunchKernel", 1, 1, 11, 1, CORR(1)) ",\n"
             "{\"ph\":\"s\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":11,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
             "{\"ph\":\"f\",\"id\":1,\"pid\":2,\"tid\":7,\"ts\":20,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
             X("kernel", "k", 2, 7, 20, 3, KERN(1, 7)) "]}", longname);
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem_flags(text, strlen(text), "m.json", TL_LOAD_PYTHON, &err);
    if (!t)
        fail_msg("%s", err.msg);
    tl_arena a;
    tl_arena_init(&a);
    tl_results r = {0};
    tl_sheet_opts so = {.inference = 1, .parent_module = 1};
    assert_int_equal(tl_trace_sheets_opts(t, &so, &a, &r, &err), 0);
    char b[512], want[600];
    assert_string_equal(cell(&r, "ops_summary", 0, "parent_module", b), "nn.Module: Qwen3Model");
    snprintf(want, sizeof want, "['aten::mm', 'nn.Module: Qwen3_5Model_0', '%.256s..']", longname);
    assert_string_equal(cell(&r, "ops_summary", 0, "call_stack_first", b), want);
    assert_string_equal(cell(&r, "ops_summary_by_category", 0, "parent_module", b), "nn.Module: Qwen3Model");
    tl_results_free(&r);
    tl_arena_free(&a);
    tl_trace_free(t);
}

/* §0.1: TRACE@DIR splits only when the text before the last '@' is an existing file and
 * the whole argument is not. */
static void test_split_arg(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    fx_exec(&f, "{}");
    char arg[4300], *trace = NULL;
    const char *dir = NULL;
    snprintf(arg, sizeof arg, "%s@%s", f.exec, f.cap);
    assert_int_equal(tl_capture_split_arg(arg, &trace, &dir), 1);
    assert_string_equal(trace, f.exec);
    assert_string_equal(dir, f.cap);
    free(trace);
    /* a file whose name has an '@' is that file */
    char odd[4300];
    snprintf(odd, sizeof odd, "%s/a@b", f.dir);
    tt_write_file(odd, "{}", 2);
    assert_int_equal(tl_capture_split_arg(odd, &trace, &dir), 0);
    snprintf(arg, sizeof arg, "%s/missing@%s", f.dir, f.cap);
    assert_int_equal(tl_capture_split_arg(arg, &trace, &dir), 0);
    snprintf(arg, sizeof arg, "%s@x@%s", f.exec, f.cap); /* the last '@' */
    assert_int_equal(tl_capture_split_arg(arg, &trace, &dir), 0);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_kinds),
        cmocka_unit_test(test_step_batch),
        cmocka_unit_test(test_align_equal),
        cmocka_unit_test(test_align_group),
        cmocka_unit_test(test_align_greedy),
        cmocka_unit_test(test_align_streams),
        cmocka_unit_test(test_details),
        cmocka_unit_test(test_folder_errors),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_graft),
        cmocka_unit_test(test_subtree_ties),
        cmocka_unit_test(test_two_roots_gpu_in_window),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_pseudo_ops),
        cmocka_unit_test(test_parent_module),
        cmocka_unit_test(test_split_arg),
        cmocka_unit_test(test_chunk_stats),
        cmocka_unit_test(test_perf_sheets_merged),
        cmocka_unit_test(test_moe_pseudo_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
