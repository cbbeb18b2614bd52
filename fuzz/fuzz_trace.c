/*
 * fuzz_trace.c - the trace reader (the streaming JSON scanner, the event reader, the tree
 * and links) and the report sheets, on arbitrary bytes.
 *
 * Any input either loads into a trace whose tree is well formed - every parent, child,
 * gpu-list entry and root an index of a kept event, each tree child's parent its parent,
 * each gpu-list entry a linked GPU event - and whose sheets are well-formed tables, or
 * fails with one line that names the file.  The sheets are the full report, the perf
 * models' sheets included (their shape arguments are the input's: any list, any
 * number), once without and once with a GPU description for the roofline columns.
 * Gzip input goes through the same entry
 * (the stream switches on the magic bytes), so the inflate path is fuzzed too.
 * Every input is read once more by each way of passing over unwanted values - token by
 * token, and the structural skip on each block scan (portable, SSE4.2, AVX2) - and each
 * must give the same trace, or fail with the same message; so must a kernels-only load
 * read token by token and through the skip, and the input gzipped, read by one thread and
 * split between two (the second inflating its way to the split).
 */
#include "fuzz.h"

#include "perf/gpu_arch.h"
#include "perf/perf.h"
#include "table/result.h"
#include "trace/trace.h"
#include "trace/trace_impl.h"
#include "trace/trace_report.h"
#include "trace/jscan.h"

#include <zlib.h>

static void trfz_check_tree(const tl_trace *t)
{
    size_t ncpu = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        TL_FUZZ_CHECK(e->kind >= TL_TEV_CPU_OP && e->kind <= TL_TEV_MEMSET);
        TL_FUZZ_CHECK(e->name != NULL);
        TL_FUZZ_CHECK(i == 0 || t->ev[i - 1].uid < e->uid); /* array order */
        /* only Python frames may have no aux record */
        TL_FUZZ_CHECK(tl_tev_has_aux(e) && (e->ref & ~TL_TEV_REF_AUX) < t->naux);
        TL_FUZZ_CHECK(tl_tev_thread(t, e) < t->nthreads);
        TL_FUZZ_CHECK(e->parent == TL_TEV_NONE || e->parent < t->nev);
        TL_FUZZ_CHECK((size_t)e->child0 + e->nchild <= t->nidx);
        TL_FUZZ_CHECK((size_t)e->gpu0 + e->ngpu <= t->nidx);
        ncpu += e->kind == TL_TEV_CPU_OP;
        for (uint32_t k = 0; k < e->nchild; k++) {
            uint32_t c = tl_tev_children(t, (uint32_t)i)[k];
            TL_FUZZ_CHECK(c < t->nev);
            /* a GPU child may have been linked again by a later launch: its parent is that one */
            TL_FUZZ_CHECK(t->ev[c].parent == i || tl_tev_is_gpu(&t->ev[c]));
        }
        for (uint32_t k = 0; k < e->ngpu; k++) {
            uint32_t g = tl_tev_gpu(t, (uint32_t)i)[k];
            TL_FUZZ_CHECK(g < t->nev && tl_tev_is_gpu(&t->ev[g]) && (t->ev[g].flags & TL_TEV_LINKED));
        }
        if (tl_tev_is_gpu(e))
            TL_FUZZ_CHECK(!(e->flags & TL_TEV_NON_GPU_PATH));
        else
            TL_FUZZ_CHECK(!!(e->flags & TL_TEV_NON_GPU_PATH) == (e->ngpu == 0));
    }
    TL_FUZZ_CHECK(ncpu == t->ncpu_ops);
    for (size_t r = 0; r < t->nroots; r++) {
        TL_FUZZ_CHECK(t->roots[r] < t->nev);
        TL_FUZZ_CHECK(t->ev[t->roots[r]].kind == TL_TEV_CPU_OP && (t->ev[t->roots[r]].flags & TL_TEV_CPU_ROOT));
        TL_FUZZ_CHECK(r == 0 || t->ev[t->roots[r - 1]].ts <= t->ev[t->roots[r]].ts);
    }
}

/* Where the split read starts its second reader: from the input, so that every place is tried. */
static unsigned trfz_split_at(const uint8_t *data, size_t size)
{
    unsigned h = 0;
    for (size_t i = 0; i < size && i < 64; i++)
        h = h * 31 + data[i];
    return h % 1001;
}

/* The same input read by two threads (the second from a guessed event) is the same trace. */
static void trfz_check_split(const uint8_t *data, size_t size, const tl_trace *one)
{
    tl_error err = {0};
    tl_trace_split_tune(0, trfz_split_at(data, size));
    tl_trace *two = tl_trace_load_mem(data, size, "fuzz.json", &err);
    tl_trace_split_tune(UINT64_MAX, 500);
    TL_FUZZ_CHECK(two != NULL);
    char why[512];
    TL_FUZZ_CHECK(tl_trace_same(one, two, why, sizeof why) == 0);
    tl_trace_free(two);
}

/* ... and fails with the same message. */
static void trfz_check_split_error(const uint8_t *data, size_t size, const char *msg)
{
    tl_error err = {0};
    tl_trace_split_tune(0, trfz_split_at(data, size));
    tl_trace *two = tl_trace_load_mem(data, size, "fuzz.json", &err);
    tl_trace_split_tune(UINT64_MAX, 500);
    TL_FUZZ_CHECK(two == NULL && strcmp(err.msg, msg) == 0);
}

/* The input as a gzip member (NULL when zlib fails: nothing to check). */
static unsigned char *trfz_gzip(const uint8_t *data, size_t size, size_t *zn)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)size) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int ok = out && deflate(&z, Z_FINISH) == Z_STREAM_END;
    *zn = cap - z.avail_out;
    deflateEnd(&z);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

/* The input gzipped: split between two readers as read by one, the same trace or the
 * same error. */
static void trfz_check_gzip_split(const uint8_t *data, size_t size)
{
    size_t zn;
    unsigned char *z = trfz_gzip(data, size, &zn);
    if (!z)
        return;
    tl_error e1 = {0}, e2 = {0};
    tl_trace *a = tl_trace_load_mem(z, zn, "fuzz.json", &e1);
    tl_trace_split_tune(0, trfz_split_at(data, size));
    tl_trace *b = tl_trace_load_mem(z, zn, "fuzz.json", &e2);
    tl_trace_split_tune(UINT64_MAX, 500);
    TL_FUZZ_CHECK(!a == !b);
    char why[512];
    TL_FUZZ_CHECK(a ? tl_trace_same(a, b, why, sizeof why) == 0 : strcmp(e1.msg, e2.msg) == 0);
    tl_trace_free(a);
    tl_trace_free(b);
    free(z);
}

/* The same input through every skip: the same trace (one: the default's), or the same
 * error (msg: the default's). */
static void trfz_check_scans(const uint8_t *data, size_t size, const tl_trace *one, const char *msg)
{
    static const int scans[] = {-1, TL_JSON_SIMD_PORTABLE, TL_JSON_SIMD_SSE42, TL_JSON_SIMD_AVX2};
    for (size_t i = 0; i < sizeof scans / sizeof *scans; i++) {
        tl_error err = {0};
        tl_j_scan_tune(scans[i]);
        tl_trace *t = tl_trace_load_mem(data, size, "fuzz.json", &err);
        tl_j_scan_tune(TL_JSON_SIMD_BEST);
        if (one) {
            char why[512];
            TL_FUZZ_CHECK(t != NULL && tl_trace_same(one, t, why, sizeof why) == 0);
        } else {
            TL_FUZZ_CHECK(t == NULL && strcmp(err.msg, msg) == 0);
        }
        tl_trace_free(t);
    }
}

/* A kernels-only load (the collective report's, which passes nearly everything over)
 * gives the same trace, or the same error, token by token as through the skip. */
static void trfz_check_kernels_only(const uint8_t *data, size_t size)
{
    tl_error e1 = {0}, e2 = {0};
    tl_j_scan_tune(-1);
    tl_trace *a = tl_trace_load_mem_flags(data, size, "fuzz.json", TL_LOAD_KERNELS_ONLY, &e1);
    tl_j_scan_tune(TL_JSON_SIMD_BEST);
    tl_trace *b = tl_trace_load_mem_flags(data, size, "fuzz.json", TL_LOAD_KERNELS_ONLY, &e2);
    TL_FUZZ_CHECK(!a == !b);
    if (a) {
        char why[512];
        TL_FUZZ_CHECK(tl_trace_same(a, b, why, sizeof why) == 0);
    } else {
        TL_FUZZ_CHECK(strcmp(e1.msg, e2.msg) == 0);
    }
    tl_trace_free(a);
    tl_trace_free(b);
}

int tl_fuzz_trace(const uint8_t *data, size_t size)
{
    tl_error err = {0};
    trfz_check_kernels_only(data, size);
    trfz_check_gzip_split(data, size);
    tl_trace *t = tl_trace_load_mem(data, size, "fuzz.json", &err);
    if (!t) {
        trfz_check_scans(data, size, NULL, err.msg);
        trfz_check_split_error(data, size, err.msg);
        TL_FUZZ_CHECK(err.set);
        TL_FUZZ_CHECK(strncmp(err.msg, "fuzz.json", 9) == 0);
        TL_FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
        return 0;
    }
    TL_FUZZ_CHECK(!err.set);
    trfz_check_tree(t);
    trfz_check_scans(data, size, t, NULL);
    trfz_check_split(data, size, t);
    tl_gpu_arch arch;
    tl_error aerr = {0};
    TL_FUZZ_CHECK(tl_gpu_arch_load("MI300X", &arch, &aerr) == 0);
    for (int with_arch = 0; with_arch < 2; with_arch++) {
        tl_arena arena;
        tl_arena_init(&arena);
        tl_results res = {0};
        if (tl_perf_report_sheets(t, with_arch ? &arch : NULL, &arena, &res, &err) == 0) {
            TL_FUZZ_CHECK(res.n >= 1 && strcmp(res.items[0].name, "gpu_timeline") == 0);
            for (size_t i = 0; i < res.n; i++) {
                tl_fuzz_check_table(res.items[i].table, 0);
                TL_FUZZ_CHECK(res.items[i].nrows == res.items[i].table->nrows && res.items[i].nrows > 0);
            }
        } else {
            TL_FUZZ_CHECK(err.set && strncmp(err.msg, "fuzz.json", 9) == 0 && res.n == 0);
        }
        tl_results_free(&res);
        tl_arena_free(&arena);
        memset(&err, 0, sizeof err);
    }
    tl_trace_free(t);
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_trace)
