/*
 * fuzz_capture.c - the capture folder and the attribution (INFERENCE.md §1-§2) on
 * arbitrary bytes: execution_details.json, a capture trace and an execution trace.
 *
 * Input: the three texts separated by NUL bytes (a missing one is empty).  The details
 * are parsed as the folder's index (every error one line naming the file); then the
 * capture trace, loaded as a capture folder's trace is, stands in for every entry (or
 * one of batch size 1 when no entry is valid), and the execution trace is attributed
 * through it.  Either the attribution fails with one line, or the merged tree is well
 * formed - every index in range, each copy after the execution trace's own events with a
 * larger UID, each attributed kernel the only child of its launch, every root in range -
 * and its inference sheets, the perf sheets among them, are well-formed tables.
 */
#include "fuzz.h"

#include "perf/perf.h"
#include "table/result.h"
#include "trace/capture.h"
#include "trace/infer.h"
#include "trace/trace_report.h"

#include <string.h>

static void cpfz_check_tree(const tl_trace *t, size_t nexec)
{
    for (size_t i = 0; i < t->nev; i++) {
        const tl_tev *e = &t->ev[i];
        TL_FUZZ_CHECK(e->kind >= TL_TEV_CPU_OP && e->kind <= TL_TEV_ANNOT);
        TL_FUZZ_CHECK(e->name != NULL);
        TL_FUZZ_CHECK(!tl_tev_has_aux(e) || (e->ref & ~TL_TEV_REF_AUX) < t->naux);
        TL_FUZZ_CHECK(tl_tev_thread(t, e) < t->nthreads);
        TL_FUZZ_CHECK(tl_tev_has_aux(e) || e->kind == TL_TEV_PYTHON || !strcmp(e->name, "CaptureRoot"));
        TL_FUZZ_CHECK(e->parent == TL_TEV_NONE || e->parent < t->nev);
        TL_FUZZ_CHECK((size_t)e->child0 + e->nchild <= t->nidx);
        TL_FUZZ_CHECK((size_t)e->gpu0 + e->ngpu <= t->nidx);
        TL_FUZZ_CHECK((i < nexec) == !tl_infer_is_copy(t, (uint32_t)i));
        if (i >= nexec)
            TL_FUZZ_CHECK(e->uid >= t->nuid && !tl_tev_is_gpu(e) && e->parent != TL_TEV_NONE);
        for (uint32_t k = 0; k < e->nchild; k++)
            TL_FUZZ_CHECK(tl_tev_children(t, (uint32_t)i)[k] < t->nev);
        for (uint32_t k = 0; k < e->ngpu; k++) {
            uint32_t g = tl_tev_gpu(t, (uint32_t)i)[k];
            TL_FUZZ_CHECK(g < nexec && tl_tev_is_gpu(&t->ev[g]));
        }
        /* a kernel grafted under a copy is that copy's only child */
        if (tl_tev_is_gpu(e) && e->parent != TL_TEV_NONE && e->parent >= nexec) {
            const tl_tev *c = &t->ev[e->parent];
            TL_FUZZ_CHECK(c->nchild == 1 && tl_tev_children(t, e->parent)[0] == i);
        }
    }
}

static void cpfz_check_roots(const tl_trace *t)
{
    for (size_t r = 0; r < t->nroots; r++)
        TL_FUZZ_CHECK(t->roots[r] < t->nev && t->ev[t->roots[r]].kind == TL_TEV_CPU_OP);
}

static int one_line(const tl_error *err) { return err->set && strchr(err->msg, '\n') == NULL; }

int tl_fuzz_capture(const uint8_t *data, size_t size)
{
    const uint8_t *part[3] = {data, NULL, NULL};
    size_t len[3] = {size, 0, 0};
    for (int p = 0; p < 2 && part[p]; p++) {
        const uint8_t *z = memchr(part[p], 0, len[p]);
        if (!z)
            break;
        part[p + 1] = z + 1;
        len[p + 1] = len[p] - (size_t)(z + 1 - part[p]);
        len[p] = (size_t)(z - part[p]);
    }
    static const uint8_t empty[1] = {0};
    for (int p = 0; p < 3; p++)
        if (!part[p])
            part[p] = empty;
    tl_quiet = 1;
    tl_error err = {0};
    tl_capture cap;
    /* "/nonexistent" keeps every listed file missing: the entries are parsed, not opened */
    if (tl_capture_parse_details(&cap, "/nonexistent", part[0], len[0], &err) != 0) {
        TL_FUZZ_CHECK(one_line(&err) && strstr(err.msg, "/nonexistent/execution_details.json") == err.msg);
        tl_capture_close(&cap);
        memset(&err, 0, sizeof err);
        memset(&cap, 0, sizeof cap);
        cap.dir = strdup("/nonexistent");
    }
    for (size_t i = 0; i < cap.n; i++)
        TL_FUZZ_CHECK(!cap.e[i].exists && cap.e[i].piecewise >= 0 && cap.e[i].piecewise <= 1);
    tl_trace *ct = tl_trace_load_mem_flags(part[1], len[1], "capture.json",
                                           TL_LOAD_PYTHON | TL_LOAD_ANNOT | TL_LOAD_KERNEL_ARG, &err);
    if (!ct) {
        TL_FUZZ_CHECK(one_line(&err) && strncmp(err.msg, "capture.json", 12) == 0);
        tl_capture_close(&cap);
        return 0;
    }
    int64_t b;
    int mode;
    const char *mt;
    tl_capture_classify(ct, &b, &mode, &mt);
    TL_FUZZ_CHECK(mode >= -1 && mode <= 1);
    if (cap.n == 0) {
        cap.e = calloc(1, sizeof *cap.e);
        TL_FUZZ_CHECK(cap.e != NULL);
        cap.e[0].file = strdup("capture.json");
        cap.e[0].path = strdup("capture.json");
        cap.e[0].batch = 1;
        cap.n = 1;
    }
    /* the first entry holds the trace; the others are missing files, their batch sizes
     * raised to the first's so that a round-up lands on it or on nothing */
    for (size_t i = 0; i < cap.n; i++) {
        cap.e[i].exists = i == 0;
        if (cap.e[i].batch < cap.e[0].batch)
            cap.e[i].batch = cap.e[0].batch;
    }
    cap.e[0].trace = ct;
    memset(&err, 0, sizeof err);
    tl_trace *t = tl_trace_load_mem_flags(part[2], len[2], "exec.json", TL_LOAD_PYTHON | TL_LOAD_ANNOT, &err);
    if (!t) {
        TL_FUZZ_CHECK(one_line(&err) && strncmp(err.msg, "exec.json", 9) == 0);
        tl_capture_close(&cap);
        return 0;
    }
    size_t nexec = t->nev;
    tl_infer_stats st;
    if (tl_infer_attribute(t, &cap, (int)(len[2] & 1), &st, &err) != 0) {
        TL_FUZZ_CHECK(one_line(&err));
        TL_FUZZ_CHECK(t->nev == nexec); /* a refusal leaves the trace as it was */
    } else {
        TL_FUZZ_CHECK(st.nattributed <= st.nlaunch && st.nreplay_attributed <= st.nreplay);
        cpfz_check_tree(t, nexec);
        cpfz_check_roots(t);
        tl_infer_pseudo_ops(t);
        tl_arena arena;
        tl_arena_init(&arena);
        tl_results res = {0};
        tl_sheet_opts so = {.inference = 1, .parent_module = 1, .num_kernels = 1};
        tl_infer_opts io = {.python = 1, .pseudo_ops = 1, .call_stack = (int)(len[2] & 1)};
        if (tl_perf_infer_report_sheets(t, &so, &io, &arena, &res, &err) == 0)
            for (size_t i = 0; i < res.n; i++)
                tl_fuzz_check_table(res.items[i].table, 0);
        else
            TL_FUZZ_CHECK(one_line(&err) && res.n == 0);
        tl_results_free(&res);
        tl_arena_free(&arena);
    }
    tl_trace_free(t);
    tl_capture_close(&cap);
    return 0;
}

TL_FUZZ_ENTRY(tl_fuzz_capture)
