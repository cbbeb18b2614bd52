/*
 * test_summary.c - the summary: its numbers, the gate, the Markdown / JSON /
 * terminal renderings, and the command line around them.
 *
 * The reports are the hand-written fixtures in tests/fixtures/summary/ (see its README for
 * the construction: every answer below follows from those tables).  The library tests read
 * them with tl_report_open / tl_run_groups, exactly as the command does; the CLI tests run
 * $TLCOMPARE (skipped when it is not set).  TL_TOP is the repository root.
 */
#include "testutil.h"

#include "compare/groups.h"
#include "read/open.h"
#include "summary/summary.h"
#include "read/xlsx_read.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- helpers -------------------------------------------------------------------------- */

static const char *top_dir(void)
{
    const char *t = getenv("TL_TOP");
    return t && *t ? t : ".";
}

/* tests/fixtures/summary/<rel> (static buffer, rotating so that a few can be alive). */
static const char *fixture(const char *rel)
{
    static char buf[8][4096];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%s/tests/fixtures/summary/%s", top_dir(), rel);
    return b;
}

/* The whole file, NUL-terminated (NULL when it cannot be read). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (;;) {
        if (n + 1024 > cap) {
            cap *= 2;
            s = realloc(s, cap);
            assert_non_null(s);
        }
        size_t got = fread(s + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A number equal to the expected one, NaN meaning "absent". */
#define assert_num(got, want) assert_num_at((got), (want), #got, __FILE__, __LINE__)
static void assert_num_at(double got, double want, const char *what, const char *file, int line)
{
    int ok = isnan(want) ? isnan(got) : got == want;
    if (!ok) {
        print_error("%s:%d: %s is %.17g, want %.17g\n", file, line, what, got, want);
        fail();
    }
}

static void assert_delta(tl_delta d, double base, double var)
{
    assert_num(d.base, base);
    assert_num(d.var, var);
}

/* An item: name, time base -> var (ms), count base -> var. */
static void assert_item(const tl_summary_item *it, const char *name, double b, double v, double cb, double cv)
{
    if (strcmp(it->name, name) != 0)
        print_error("item is '%s', want '%s'\n", it->name, name);
    assert_string_equal(it->name, name);
    assert_num(it->time_ms.base, b);
    assert_num(it->time_ms.var, v);
    assert_num(it->count.base, cb);
    assert_num(it->count.var, cv);
}

/* Byte-for-byte against tests/fixtures/summary/expected/<name>; on a mismatch, the first
 * differing line and where the whole output was put for `diff -u`. */
static void assert_golden(const char *got, size_t len, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "expected/%s", name);
    const char *path = fixture(rel);
    size_t wlen = 0;
    char *want = slurp(path, &wlen);
    if (!want) {
        print_error("cannot read the expected file %s: %s\n", path, strerror(errno));
        fail();
    }
    if (wlen == len && memcmp(want, got, len) == 0) {
        free(want);
        return;
    }
    size_t i = 0, line = 1, bol = 0;
    while (i < len && i < wlen && got[i] == want[i]) {
        if (got[i] == '\n') {
            line++;
            bol = i + 1;
        }
        i++;
    }
    const char *we = memchr(want + bol, '\n', wlen - bol), *ge = memchr(got + bol, '\n', len - bol);
    int wl = (int)((we ? (size_t)(we - want) : wlen) - bol), gl = (int)((ge ? (size_t)(ge - got) : len) - bol);
    char out[512];
    snprintf(out, sizeof out, "/tmp/tlcompare-summary-%s.got", name);
    FILE *f = fopen(out, "wb");
    if (f) {
        fwrite(got, 1, len, f);
        fclose(f);
    }
    print_error("output differs from %s at line %zu:\n  want: %.*s\n  got:  %.*s\n"
                "(%zu bytes expected, %zu got; the whole output is in %s: diff -u %s %s)\n",
                path, line, wl, want + bol, gl, got + bol, wlen, len, out, path, out);
    free(want);
    fail();
}

/* ---- running the library on fixtures -------------------------------------------------- */

typedef struct run {
    tl_report reports[4];
    const char *tags[4];
    size_t n;
    tl_arena arena;
    tl_results results;
    tl_summary s;
} run;

/* Compare the fixture reports dirs[0..n) (tags[i], or the directory name) and build the
 * summary with the gate (pct < 0: none). */
static run *run_new(size_t n, const char *const *dirs, const char *const *tags, double pct, double min_ms)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    tl_arena_init(&r->arena);
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        tl_error err = {0};
        const char *path = dirs[i][0] == '/' ? dirs[i] : fixture(dirs[i]);
        if (tl_report_open(&r->reports[i], path, &err) != 0) {
            print_error("%s\n", err.msg);
            fail();
        }
        r->reports[i].tag = strdup(tags ? tags[i] : dirs[i][0] == '/' ? strrchr(dirs[i], '/') + 1 : dirs[i]);
        r->tags[i] = r->reports[i].tag;
    }
    tl_error err = {0};
    tl_sink sink = tl_results_sink(&r->results);
    if (tl_run_groups(r->reports, n, TL_GROUP_ALL, 0, &sink, &r->arena, &err) != 0) {
        print_error("%s\n", err.msg);
        fail();
    }
    tl_gate gate = {pct, min_ms, 0, 0, 0, NULL, 0, 0};
    tl_summary_build(&r->s, &r->results, r->tags, n, &gate, &r->arena);
    return r;
}

static run *run2(const char *base, const char *var, double pct, double min_ms)
{
    const char *dirs[] = {base, var};
    return run_new(2, dirs, NULL, pct, min_ms);
}

static void run_free(run *r)
{
    tl_summary_free(&r->s);
    tl_results_free(&r->results);
    for (size_t i = 0; i < r->n; i++)
        tl_report_close(&r->reports[i]);
    tl_arena_free(&r->arena);
    free(r);
}

static int setup(void **state)
{
    (void)state;
    tl_quiet = 1; /* the expected warnings and notes */
    return 0;
}

/* ---- base -> new: the numbers --------------------------------------------------------- */

static void test_timeline_deltas(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    const tl_summary *s = &r->s;
    assert_string_equal(s->baseline, "base");
    assert_string_equal(s->source, "ops_summary");
    assert_string_equal(s->item, "op");
    assert_int_equal(s->nvariants, 1);
    const tl_variant_summary *v = &s->variants[0];
    assert_string_equal(v->tag, "new");
    assert_true(v->has_timeline);
    assert_delta(v->timeline[TL_TL_TOTAL], 1000, 1100);
    assert_delta(v->timeline[TL_TL_BUSY], 800, 920);
    assert_delta(v->timeline[TL_TL_COMPUTE], 600, 690);
    assert_delta(v->timeline[TL_TL_EXPOSED_COMM], 150, 180);
    assert_delta(v->timeline[TL_TL_EXPOSED_MEMCPY], 50, 50);
    assert_delta(v->timeline[TL_TL_IDLE], 200, 180);
    /* no gate: nothing judged */
    assert_false(s->gate_on);
    assert_false(s->gate_failed);
    assert_int_equal(v->nviolations, 0);
    run_free(r);
}

static void test_regressions_top10_ties_duplicates(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    const tl_variant_summary *v = &r->s.variants[0];
    /* 15 ops got slower; the 10 largest by ms, ties (convolution, _softmax: +20) by the
     * baseline's time; aten::sum is two rows in each report, one op of 15 -> 22 ms */
    assert_int_equal(v->nregressions, TL_SUMMARY_TOP);
    const tl_summary_item *g = v->regressions;
    assert_item(&g[0], "aten::mm", 100, 150, 10, 10);
    assert_item(&g[1], "aten::bmm", 200, 240, 20, 20);
    assert_item(&g[2], "aten::addmm", 40, 70, 5, 6);
    assert_item(&g[3], "aten::convolution", 80, 100, 8, 8);
    assert_item(&g[4], "aten::_softmax", 20, 40, 4, 4);
    assert_item(&g[5], "aten::gelu", 30, 45, 6, 6);
    assert_item(&g[6], "aten::layer_norm", 60, 72, 12, 12);
    assert_item(&g[7], "aten::add", 50, 60, 40, 40);
    assert_item(&g[8], "aten::mul", 25, 33, 30, 30);
    assert_item(&g[9], "aten::sum", 15, 22, 5, 5);
    /* every name once (the merge pairs the duplicate rows four ways) */
    for (size_t i = 0; i < v->nregressions; i++)
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(g[i].name, g[j].name);
    run_free(r);
}

static void test_improvements(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    const tl_variant_summary *v = &r->s.variants[0];
    assert_int_equal(v->nimprovements, 3);
    assert_item(&v->improvements[0], "aten::linear", 300, 240, 24, 24);
    assert_item(&v->improvements[1], "aten::embedding", 15, 5, 2, 2);
    assert_item(&v->improvements[2], "aten::relu", 12, 9, 12, 9);
    run_free(r);
}

static void test_only_in_one_report(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    const tl_variant_summary *v = &r->s.variants[0];
    assert_int_equal(v->only_base_count, 2);
    assert_int_equal(v->nonly_base, 2);
    assert_item(&v->only_base[0], "aten::dropout", 35, NAN, 7, NAN);
    assert_item(&v->only_base[1], "aten::clone", 4, NAN, 8, NAN);
    assert_int_equal(v->only_var_count, 2);
    assert_int_equal(v->nonly_var, 2);
    assert_item(&v->only_var[0], "aten::_flash_attention_forward", NAN, 90, NAN, 12);
    assert_item(&v->only_var[1], "aten::empty", NAN, 0.25, NAN, 50);
    run_free(r);
}

static void test_chart(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    const tl_summary *s = &r->s;
    static const char *names[] = {"aten::linear", "aten::bmm", "aten::mm", "aten::convolution",
                                  "aten::layer_norm", "aten::add", "aten::addmm", "aten::dropout",
                                  "aten::gelu", "aten::mul", "aten::_softmax", "aten::embedding",
                                  "aten::sum", "aten::relu", "aten::copy_"};
    static const double base[] = {300, 200, 100, 80, 60, 50, 40, 35, 30, 25, 20, 15, 15, 12, 10};
    const double var[] = {240, 240, 150, 100, 72, 60, 70, NAN, 45, 33, 40, 5, 22, 9, 16};
    assert_int_equal(s->nchart, TL_SUMMARY_CHART_TOP);
    for (size_t i = 0; i < s->nchart; i++) {
        assert_string_equal(s->chart_names[i], names[i]);
        /* report-major, a row of TL_SUMMARY_CHART_TOP per report (as the sheet's series) */
        assert_num(s->chart_ms[0 * TL_SUMMARY_CHART_TOP + i], base[i]);
        assert_num(s->chart_ms[1 * TL_SUMMARY_CHART_TOP + i], var[i]);
    }
    run_free(r);
}

/* ---- the gate ------------------------------------------------------------------------- */

typedef struct gate_case {
    double pct, min_ms;
    const char *violations[16]; /* "busy_time" or the op; NULL-terminated */
} gate_case;

static void check_gate(const gate_case *c)
{
    run *r = run2("base", "new", c->pct, c->min_ms);
    const tl_summary *s = &r->s;
    const tl_variant_summary *v = &s->variants[0];
    size_t n = 0;
    while (c->violations[n])
        n++;
    assert_true(s->gate_on);
    assert_num(s->gate_pct, c->pct);
    assert_num(s->gate_min_ms, c->min_ms);
    if (v->nviolations != n) {
        print_error("gate %g%% / %g ms: %zu violations, want %zu:\n", c->pct, c->min_ms, v->nviolations, n);
        for (size_t i = 0; i < v->nviolations; i++)
            print_error("  %s (%g -> %g, %g%%)\n", v->violations[i].what, v->violations[i].base_ms,
                        v->violations[i].var_ms, v->violations[i].pct);
    }
    assert_int_equal(v->nviolations, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(v->violations[i].what, c->violations[i]);
        assert_int_equal(v->violations[i].is_op, strcmp(c->violations[i], "busy_time") != 0);
    }
    assert_int_equal(s->gate_failed, n > 0);
    run_free(r);
}

/* 10%: busy time (+15%) and every op over 10% of at least 1 ms, in the sheet's order
 * (the baseline's time, largest first); not aten::fill_ (2 -> 2.2 ms is exactly +10%,
 * though the division gives 10.000000000000009), not aten::slice (+200%, but 0.5 ms),
 * not aten::zero_ (0 ms in the baseline) */
static void test_gate_10(void **state)
{
    (void)state;
    static const gate_case c = {10, 1, {"busy_time", "aten::bmm", "aten::mm", "aten::convolution",
                                        "aten::layer_norm", "aten::add", "aten::addmm", "aten::gelu",
                                        "aten::mul", "aten::_softmax", "aten::copy_", "aten::sum",
                                        "aten::cat", NULL}};
    check_gate(&c);
}

/* 50%: mm, gelu and cat are exactly +50%: not violations ("more than PCT") */
static void test_gate_50_at_limit(void **state)
{
    (void)state;
    static const gate_case c = {50, 1, {"aten::addmm", "aten::_softmax", "aten::copy_", NULL}};
    check_gate(&c);
    run *r = run2("base", "new", 50, 1);
    const tl_violation *x = r->s.variants[0].violations;
    assert_num(x[0].base_ms, 40);
    assert_num(x[0].var_ms, 70);
    assert_num(x[0].pct, 75);
    assert_num(x[1].pct, 100);
    assert_num(x[2].base_ms, 10);
    assert_num(x[2].var_ms, 16);
    assert_num(x[2].pct, 60);
    run_free(r);
}

/* --min-time-ms 0.25 lets aten::slice (0.5 ms, +200%) in; 0 lets aten::zero_ in too: a time
 * that grows from 0 grew by more than any percentage */
static void test_gate_min_time(void **state)
{
    (void)state;
    static const gate_case c1 = {50, 0.25, {"aten::addmm", "aten::_softmax", "aten::copy_", "aten::slice", NULL}};
    check_gate(&c1);
    static const gate_case c2 = {50, 0, {"aten::addmm", "aten::_softmax", "aten::copy_", "aten::slice",
                                         "aten::zero_", NULL}};
    check_gate(&c2);
    run *r = run2("base", "new", 50, 0);
    const tl_violation *z = &r->s.variants[0].violations[4];
    assert_num(z->base_ms, 0);
    assert_num(z->var_ms, 3);
    assert_true(isinf(z->pct) && z->pct > 0);
    run_free(r);
    /* an op over the limit but under --min-time-ms is no violation: only the largest here */
    static const gate_case c3 = {10, 150, {"busy_time", "aten::bmm", NULL}};
    check_gate(&c3);
}

/* 100%: _softmax is exactly +100%, busy time +15%: the gate passes */
static void test_gate_passes(void **state)
{
    (void)state;
    static const gate_case c = {100, 1, {NULL}};
    check_gate(&c);
}

/* busy time alone: exactly at 15% passes, 14.9% fails */
static void test_gate_busy_time(void **state)
{
    (void)state;
    static const gate_case at = {15, 1000, {NULL}};
    check_gate(&at);
    static const gate_case over = {14.9, 1000, {"busy_time", NULL}};
    check_gate(&over);
    run *r = run2("base", "new", 14.9, 1000);
    const tl_violation *x = &r->s.variants[0].violations[0];
    assert_false(x->is_op);
    assert_num(x->base_ms, 800);
    assert_num(x->var_ms, 920);
    assert_num(x->pct, 15);
    run_free(r);
}

/* ---- three reports --------------------------------------------------------------------- */

static run *run_tri(double pct)
{
    static const char *dirs[] = {"tri_a", "tri_b", "tri_c"};
    static const char *tags[] = {"a", "b", "c"};
    return run_new(3, dirs, tags, pct, 1);
}

static void test_three_reports(void **state)
{
    (void)state;
    run *r = run_tri(10);
    const tl_summary *s = &r->s;
    assert_int_equal(s->nvariants, 2);
    const tl_variant_summary *b = &s->variants[0], *c = &s->variants[1];
    assert_string_equal(b->tag, "b");
    assert_string_equal(c->tag, "c");

    assert_delta(b->timeline[TL_TL_TOTAL], 100, 110);
    assert_delta(b->timeline[TL_TL_BUSY], 80, 88);
    assert_delta(b->timeline[TL_TL_COMPUTE], 60, 66);
    assert_delta(b->timeline[TL_TL_EXPOSED_COMM], 10, 12);
    assert_delta(b->timeline[TL_TL_EXPOSED_MEMCPY], 5, 5);
    assert_delta(b->timeline[TL_TL_IDLE], 20, 22);
    assert_delta(c->timeline[TL_TL_TOTAL], 100, 90);
    assert_delta(c->timeline[TL_TL_BUSY], 80, 72);
    assert_delta(c->timeline[TL_TL_EXPOSED_COMM], 10, 8);
    assert_delta(c->timeline[TL_TL_EXPOSED_MEMCPY], 5, NAN); /* c has no such row */
    assert_delta(c->timeline[TL_TL_IDLE], 20, 18);

    /* b: op_d is 1.5 ms twice in b (calls 1 and 2), once (2 ms) in a and c */
    assert_int_equal(b->nregressions, 2);
    assert_item(&b->regressions[0], "op_x", 10, 12, 1, 1);
    assert_item(&b->regressions[1], "op_d", 2, 3, 1, 3);
    assert_int_equal(b->nimprovements, 0);
    assert_int_equal(b->only_base_count, 1);
    assert_item(&b->only_base[0], "op_y", 5, NAN, 2, NAN);
    assert_int_equal(b->only_var_count, 1); /* "fused|op" is in c only: not b's */
    assert_item(&b->only_var[0], "z \"quoted\", op", NAN, 3, NAN, 1);

    /* c: op_d's two merged rows are one row of c (2 ms), not two */
    assert_int_equal(c->nregressions, 1);
    assert_item(&c->regressions[0], "op_y", 5, 6, 2, 2);
    assert_int_equal(c->nimprovements, 1);
    assert_item(&c->improvements[0], "op_x", 10, 8, 1, 1);
    assert_int_equal(c->only_base_count, 1);
    assert_item(&c->only_base[0], "op_w", 4, NAN, 1, NAN);
    assert_int_equal(c->only_var_count, 1);
    assert_item(&c->only_var[0], "fused|op", NAN, 7, NAN, 3);

    /* the gate per variant: busy +10% exactly is not over 10% */
    assert_int_equal(b->nviolations, 2);
    assert_string_equal(b->violations[0].what, "op_x");
    assert_string_equal(b->violations[1].what, "op_d");
    assert_num(b->violations[1].pct, 50);
    assert_int_equal(c->nviolations, 1);
    assert_string_equal(c->violations[0].what, "op_y");
    assert_true(s->gate_failed);

    /* the chart: a's ops, in a, b and c */
    static const char *names[] = {"op_x", "op_y", "op_w", "op_d"};
    const double want[3][4] = {{10, 5, 4, 2}, {12, NAN, 4, 3}, {8, 6, NAN, 2}};
    assert_int_equal(s->nchart, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(s->chart_names[i], names[i]);
        for (size_t rep = 0; rep < 3; rep++)
            assert_num(s->chart_ms[rep * TL_SUMMARY_CHART_TOP + i], want[rep][i]);
    }
    run_free(r);
}

/* ---- kernel_summary as the source ------------------------------------------------------ */

static void test_rocprof_legacy_kernels(void **state)
{
    (void)state;
    run *r = run2("roc_base", "roc_new", 20, 1);
    const tl_summary *s = &r->s;
    assert_string_equal(s->source, "kernel_summary");
    assert_string_equal(s->item, "kernel");
    const tl_variant_summary *v = &s->variants[0];
    assert_false(v->has_timeline);
    assert_int_equal(v->nregressions, 2);
    assert_item(&v->regressions[0], "Cijk_gemm_A", 50, 60, 100, 100);
    assert_item(&v->regressions[1], "reduce_kernel", 5, 6.25, 200, 250);
    assert_int_equal(v->nimprovements, 1);
    assert_item(&v->improvements[0], "elementwise_kernel", 20, 15, 1000, 1000);
    assert_int_equal(v->only_base_count, 1);
    assert_item(&v->only_base[0], "old_kernel", 4, NAN, 10, NAN);
    assert_int_equal(v->only_var_count, 1);
    assert_item(&v->only_var[0], "new_kernel", NAN, 2.5, NAN, 5);
    /* 20%: Cijk_gemm_A is exactly +20%; reduce_kernel +25% */
    assert_int_equal(v->nviolations, 1);
    assert_string_equal(v->violations[0].what, "reduce_kernel");
    assert_num(v->violations[0].pct, 25);
    assert_true(s->gate_failed);
    run_free(r);
}

static void test_current_layout_kernels(void **state)
{
    (void)state;
    run *r = run2("kern_base", "kern_new", 10, 1);
    const tl_summary *s = &r->s;
    assert_string_equal(s->source, "kernel_summary");
    assert_string_equal(s->item, "kernel");
    const tl_variant_summary *v = &s->variants[0];
    /* µs -> ms exactly (2300 µs is 2.3 ms, not 2.3000000000000003); a kernel under two
     * parent ops is one kernel: Cijk_gemm 3.5 -> 3.5 ms is no change at all, although the
     * merge pairs its aten::mm row (2.3 ms) with its aten::addmm row (1.2 ms) */
    assert_int_equal(v->nregressions, 2);
    assert_item(&v->regressions[0], "reduce_kernel", 0.7, 2.3, 7, 7);
    assert_item(&v->regressions[1], "elementwise_kernel", 1.5, 1.8, 50, 50);
    assert_int_equal(v->nimprovements, 0);
    assert_int_equal(v->only_base_count, 1);
    assert_item(&v->only_base[0], "copy_kernel", 0.5, NAN, 5, NAN);
    assert_int_equal(v->only_var_count, 1);
    assert_item(&v->only_var[0], "flash_fwd_kernel", NAN, 3.1, NAN, 2);
    /* 10%, 1 ms: elementwise_kernel (+20%); reduce_kernel is 0.7 ms in the baseline */
    assert_int_equal(v->nviolations, 1);
    assert_string_equal(v->violations[0].what, "elementwise_kernel");
    assert_int_equal(s->nchart, 4);
    assert_string_equal(s->chart_names[0], "Cijk_gemm");
    assert_num(s->chart_ms[0], 3.5);
    assert_num(s->chart_ms[TL_SUMMARY_CHART_TOP], 3.5);
    run_free(r);
}

/* ---- edge cases written on the fly ------------------------------------------------------ */

static void write_report(const char *dir, const char *timeline, const char *ops)
{
    char path[4096];
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/gpu_timeline.csv", dir);
    tt_write_file(path, timeline, strlen(timeline));
    snprintf(path, sizeof path, "%s/ops_summary.csv", dir);
    tt_write_file(path, ops, strlen(ops));
}

/* A zero baseline (busy time and an op), a present row with no time, NaN spellings. */
static void test_zero_baseline_and_missing(void **state)
{
    (void)state;
    char *tmp = tt_tmpdir(), b[4096], v[4096];
    snprintf(b, sizeof b, "%s/zb", tmp);
    snprintf(v, sizeof v, "%s/zv", tmp);
    static const char head[] =
        "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)\n";
    char ops_b[512], ops_v[512];
    snprintf(ops_b, sizeof ops_b, "%sgrow,0,1,0,0,0\ngone,3000,2,3,50,50\nsame,3000,1,3,50,100\n", head);
    snprintf(ops_v, sizeof ops_v, "%sgrow,2000,1,2,40,40\ngone,,2,NaN,,\nsame,3000,1,3,60,100\n", head);
    write_report(b, "type,time ms,percent\nbusy_time,0,0\ntotal_time,10,100\nidle_time,NaN,\n", ops_b);
    write_report(v, "type,time ms,percent\nbusy_time,5,50\ntotal_time,10,100\nidle_time,5,50\n", ops_v);
    const char *dirs[] = {b, v};
    run *r = run_new(2, dirs, NULL, 10, 0);
    const tl_variant_summary *x = &r->s.variants[0];
    assert_delta(x->timeline[TL_TL_BUSY], 0, 5);
    assert_delta(x->timeline[TL_TL_TOTAL], 10, 10);
    assert_delta(x->timeline[TL_TL_IDLE], NAN, 5);
    assert_delta(x->timeline[TL_TL_COMPUTE], NAN, NAN); /* no such row */
    assert_int_equal(x->nregressions, 1);
    assert_item(&x->regressions[0], "grow", 0, 2, 1, 1);
    /* a row with no time is not there, for the summary as for the split sheets */
    assert_int_equal(x->only_base_count, 1);
    assert_item(&x->only_base[0], "gone", 3, NAN, 2, NAN);
    assert_int_equal(x->nviolations, 2);
    assert_string_equal(x->violations[0].what, "busy_time");
    assert_true(isinf(x->violations[0].pct));
    assert_string_equal(x->violations[1].what, "grow");
    assert_true(isinf(x->violations[1].pct));

    /* pct with a zero baseline is missing: "-" in Markdown, null in JSON */
    tl_buf md = {0}, js = {0};
    tl_summary_markdown(&r->s, &md);
    tl_summary_json(&r->s, &js);
    const char *m = tl_buf_cstr(&md), *j = tl_buf_cstr(&js);
    if (!strstr(m, "| `grow` | 0.000 | 2.000 | +2.000 | - | 1 call | 0 -> 2.000 ms per call (+2.000 ms) |\n"))
        print_error("markdown:\n%s\n", m);
    assert_non_null(strstr(m, "| `grow` | 0.000 | 2.000 | +2.000 | - | 1 call | 0 -> 2.000 ms per call (+2.000 ms) |\n"));
    assert_non_null(strstr(m, "| busy_time | 0.000 | 5.000 | +5.000 | - |\n"));
    assert_non_null(strstr(m, "| idle_time | - | 5.000 | - | - |\n"));
    assert_non_null(strstr(j, "\"busy_time\": {\"baseline\": 0.0, \"variant\": 5.0, \"delta\": 5.0, \"pct\": null}"));
    assert_non_null(strstr(j, "{\"what\": \"busy_time\", \"name\": \"busy_time\", \"baseline_ms\": 0.0, "
                              "\"variant_ms\": 5.0, \"pct\": null}"));
    assert_null(strstr(j, "nan"));
    assert_null(strstr(j, "inf"));
    tl_buf_free(&md);
    tl_buf_free(&js);
    run_free(r);
    tt_rmrf(tmp);
    free(tmp);
}

/* ---- renderings ------------------------------------------------------------------------ */

/* Markdown lists the first TL_SUMMARY_TOP violations (a pull request comment has a size
 * limit); the JSON and stderr list all. */
static void test_markdown_caps_violations(void **state)
{
    (void)state;
    run *r = run2("base", "new", 10, 1);
    assert_int_equal(r->s.variants[0].nviolations, 13);
    tl_buf md = {0}, js = {0};
    tl_summary_markdown(&r->s, &md);
    tl_summary_json(&r->s, &js);
    const char *m = tl_buf_cstr(&md);
    size_t lines = 0;
    for (const char *p = strstr(m, "\n- gate: "); p; p = strstr(p + 1, "\n- gate: "))
        lines++;
    assert_int_equal(lines, TL_SUMMARY_TOP + 1);
    assert_non_null(strstr(m, "\n- gate: `busy_time` is +15.0% slower (limit 10%)\n"));
    assert_non_null(strstr(m, "- gate: op `aten::_softmax` is +100.0% slower (limit 10%)\n"
                              "- gate: and 3 more\n\nGate: **failed** (limit 10%, ops of at least 1 ms).\n"));
    size_t n = 0;
    for (const char *p = strstr(js.data, "{\"what\": "); p; p = strstr(p + 1, "{\"what\": "))
        n++;
    assert_int_equal(n, 13);
    tl_buf_free(&md);
    tl_buf_free(&js);
    run_free(r);
}

static void test_golden_markdown_json(void **state)
{
    (void)state;
    run *r = run2("base", "new", 50, 1);
    tl_buf md = {0}, js = {0};
    tl_summary_markdown(&r->s, &md);
    tl_summary_json(&r->s, &js);
    assert_golden(tl_buf_cstr(&md), md.len, "base_vs_new.md");
    assert_golden(tl_buf_cstr(&js), js.len, "base_vs_new.json");
    tl_buf_free(&md);
    tl_buf_free(&js);
    run_free(r);

    r = run_tri(-1);
    tl_summary_markdown(&r->s, &md);
    tl_summary_json(&r->s, &js);
    assert_golden(tl_buf_cstr(&md), md.len, "tri.md");
    assert_golden(tl_buf_cstr(&js), js.len, "tri.json");
    tl_buf_free(&md);
    tl_buf_free(&js);
    run_free(r);
}

static char *print_to_string(const tl_summary *s, int color, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    tl_summary_print(s, f, color);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_terminal_text(void **state)
{
    (void)state;
    run *r = run2("base", "new", 50, 1);
    size_t len;
    char *plain = print_to_string(&r->s, 0, &len);
    assert_golden(plain, len, "base_vs_new.txt");
    assert_null(strchr(plain, '\033'));
    char *colour = print_to_string(&r->s, 1, &len);
    assert_non_null(strstr(colour, "\033[31m")); /* red: slower */
    assert_non_null(strstr(colour, "\033[32m")); /* green: faster */
    free(plain);
    free(colour);

    /* the gate's lines for stderr */
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    tl_summary_print_violations(&r->s, f);
    fclose(f);
    assert_string_equal(text,
                        "tlcompare: regression: new op aten::addmm: 40.000 ms -> 70.000 ms (+75.0%, limit 50%)\n"
                        "tlcompare: regression: new op aten::_softmax: 20.000 ms -> 40.000 ms (+100.0%, limit 50%)\n"
                        "tlcompare: regression: new op aten::copy_: 10.000 ms -> 16.000 ms (+60.0%, limit 50%)\n");
    free(text);
    run_free(r);
}

/* A name is data: no control character of it reaches the terminal. */
static void test_terminal_names_are_sanitised(void **state)
{
    (void)state;
    char *tmp = tt_tmpdir(), b[4096], v[4096];
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(v, sizeof v, "%s/v", tmp);
    static const char tl[] = "type,time ms,percent\nbusy_time,1,1\n";
    write_report(b, tl, "name,Count,total_direct_kernel_time_ms\n\"evil\033[2Jop\",1,1\n");
    write_report(v, tl, "name,Count,total_direct_kernel_time_ms\n\"evil\033[2Jop\",1,2\n");
    const char *dirs[] = {b, v};
    run *r = run_new(2, dirs, NULL, 10, 1);
    assert_int_equal(r->s.variants[0].nregressions, 1);
    size_t len;
    char *plain = print_to_string(&r->s, 0, &len);
    assert_null(strchr(plain, '\033'));
    assert_non_null(strstr(plain, "evil?[2Jop"));
    free(plain);
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    tl_summary_print_violations(&r->s, f);
    fclose(f);
    assert_string_equal(text, "tlcompare: regression: v op evil?[2Jop: 1.000 ms -> 2.000 ms (+100.0%, limit 10%)\n");
    free(text);
    run_free(r);
    tt_rmrf(tmp);
    free(tmp);
}

static void test_summary_sheet(void **state)
{
    (void)state;
    run *r = run2("base", "new", -1, 1);
    tl_summary_sheet *sh = tl_summary_sheet_build(&r->s, &r->arena);
    assert_string_equal(sh->name, "summary");
    /* GPU time, top regressions, top improvements, only in base, only in new */
    assert_int_equal(sh->nblocks, 5);
    assert_int_equal(sh->blocks[0].table->nrows, 6);
    assert_int_equal(sh->blocks[1].table->nrows, 10);
    assert_int_equal(sh->blocks[2].table->nrows, 3);
    assert_string_equal(sh->blocks[3].title, "only in base (2 in all)");
    assert_non_null(sh->chart);
    assert_int_equal(sh->chart->ncategories, 15);
    assert_int_equal(sh->chart->nseries, 2);
    assert_string_equal(sh->chart->series[1].name, "new");
    assert_num(sh->chart->series[1].values[12], 22); /* aten::sum, both rows */
    tl_summary_sheet_free(sh);
    run_free(r);
}

/* ---- the command line ------------------------------------------------------------------ */

typedef struct cli {
    int status;
    char *out, *err;
} cli;

static const char *tlcompare_bin(void)
{
    const char *b = getenv("TLCOMPARE");
    return b && *b ? b : NULL;
}

/*
 * Run $TLCOMPARE args... in the fixtures directory (so that report paths are short and
 * tags are the directory names), stdout and stderr into files of `tmp` (never a terminal).
 * no_color: the NO_COLOR value, or NULL for unset.
 */
static cli run_cli(const char *tmp, const char *no_color, const char *const *args)
{
    const char *bin = tlcompare_bin();
    char out[4096], err[4096];
    snprintf(out, sizeof out, "%s/stdout.txt", tmp);
    snprintf(err, sizeof err, "%s/stderr.txt", tmp);
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    assert_non_null(argv);
    argv[0] = (char *)bin;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || chdir(fixture(".")) != 0)
            _exit(126);
        if (no_color)
            setenv("NO_COLOR", no_color, 1);
        else
            unsetenv("NO_COLOR");
        execv(bin, argv);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    free(argv);
    cli c = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(out, NULL), slurp(err, NULL)};
    assert_non_null(c.out);
    assert_non_null(c.err);
    return c;
}

static void cli_free(cli *c)
{
    free(c->out);
    free(c->err);
}

static size_t count_lines_starting(const char *text, const char *prefix)
{
    size_t n = 0, lp = strlen(prefix);
    for (const char *p = text; *p;) {
        n += strncmp(p, prefix, lp) == 0;
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

#define NEED_CLI()                                                                                 \
    do {                                                                                           \
        if (!tlcompare_bin()) {                                                                    \
            print_message("TLCOMPARE not set: skipped\n");                                         \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* The gate fails: exit 3, and every output written, the same as the library renders. */
static void test_cli_gate_fails_after_writing_everything(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096], csv[4096], md[4096], js[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    snprintf(csv, sizeof csv, "%s/csv", tmp);
    snprintf(md, sizeof md, "%s/s.md", tmp);
    snprintf(js, sizeof js, "%s/s.json", tmp);
    const char *args[] = {"base", "new", "-o", x, "--output_csvs_dir", csv, "--summary-md", md,
                          "--summary-json", js, "--fail-on-regression", "50", NULL};
    cli c = run_cli(tmp, "1", args);
    if (c.status != 3)
        print_error("exit %d\nstderr:\n%s\n", c.status, c.err);
    assert_int_equal(c.status, 3);
    assert_true(file_exists(x));
    char p[8192];
    snprintf(p, sizeof p, "%s/ops_summary.csv", csv);
    assert_true(file_exists(p));
    snprintf(p, sizeof p, "%s/gpu_timeline.csv", csv);
    assert_true(file_exists(p));
    snprintf(p, sizeof p, "%s/summary.csv", csv); /* the summary is not a result sheet */
    assert_false(file_exists(p));
    size_t len;
    char *text = slurp(md, &len);
    assert_non_null(text);
    assert_golden(text, len, "base_vs_new.md");
    free(text);
    text = slurp(js, &len);
    assert_non_null(text);
    assert_golden(text, len, "base_vs_new.json");
    free(text);
    /* stderr names each regression, and only those */
    assert_int_equal(count_lines_starting(c.err, "tlcompare: regression: "), 3);
    assert_non_null(strstr(c.err, "tlcompare: regression: new op aten::addmm: 40.000 ms -> 70.000 ms (+75.0%, limit 50%)\n"));
    assert_non_null(strstr(c.err, "tlcompare: regression: new op aten::_softmax: 20.000 ms -> 40.000 ms (+100.0%, limit 50%)\n"));
    assert_non_null(strstr(c.err, "tlcompare: regression: new op aten::copy_: 10.000 ms -> 16.000 ms (+60.0%, limit 50%)\n"));
    cli_free(&c);

    /* 10%: busy time too, and 12 ops */
    const char *args10[] = {"base", "new", "-o", x, "--fail-on-regression=10", NULL};
    c = run_cli(tmp, "1", args10);
    assert_int_equal(c.status, 3);
    assert_int_equal(count_lines_starting(c.err, "tlcompare: regression: "), 13);
    assert_non_null(strstr(c.err, "tlcompare: regression: new busy_time: 800.000 ms -> 920.000 ms (+15.0%, limit 10%)\n"));
    assert_null(strstr(c.err, "aten::fill_")); /* exactly +10% */
    assert_null(strstr(c.err, "aten::slice")); /* under 1 ms */
    cli_free(&c);
    /* ... and with --min-time-ms 0.25, aten::slice is one */
    const char *args_min[] = {"base", "new", "-o", x, "--fail-on-regression", "10", "--min-time-ms", "0.25", NULL};
    c = run_cli(tmp, "1", args_min);
    assert_int_equal(c.status, 3);
    assert_int_equal(count_lines_starting(c.err, "tlcompare: regression: "), 14);
    assert_non_null(strstr(c.err, "tlcompare: regression: new op aten::slice: 0.500 ms -> 1.500 ms (+200.0%, limit 10%)\n"));
    cli_free(&c);
    tt_rmrf(tmp);
    free(tmp);
}

static void test_cli_gate_passes(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    /* _softmax is exactly +100%, the rest less */
    const char *args[] = {"base", "new", "-o", x, "--fail-on-regression", "100", NULL};
    cli c = run_cli(tmp, "1", args);
    if (c.status != 0)
        print_error("exit %d\nstderr:\n%s\n", c.status, c.err);
    assert_int_equal(c.status, 0);
    assert_null(strstr(c.err, "regression"));
    assert_non_null(strstr(c.out, "\ngate: passed (more than 100% slower"));
    assert_true(file_exists(x));
    cli_free(&c);
    /* no gate at all: exit 0 whatever moved */
    const char *nogate[] = {"base", "new", "-o", x, NULL};
    c = run_cli(tmp, "1", nogate);
    assert_int_equal(c.status, 0);
    assert_null(strstr(c.out, "gate:"));
    cli_free(&c);
    tt_rmrf(tmp);
    free(tmp);
}

static void test_cli_bad_numbers(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    static const char *bad[][2] = {
        {"--fail-on-regression", "abc"}, {"--fail-on-regression", "10x"}, {"--fail-on-regression", "-5"},
        {"--fail-on-regression", "nan"}, {"--fail-on-regression", "inf"}, {"--fail-on-regression", ""},
        {"--min-time-ms", "ms"},         {"--min-time-ms", "-1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[] = {"base", "new", "-o", x, bad[i][0], bad[i][1], NULL};
        cli c = run_cli(tmp, "1", args);
        if (c.status != 2)
            print_error("%s '%s': exit %d\n", bad[i][0], bad[i][1], c.status);
        assert_int_equal(c.status, 2);
        assert_non_null(strstr(c.err, bad[i][0]));
        assert_false(file_exists(x));
        cli_free(&c);
    }
    /* no value at all */
    const char *args[] = {"base", "new", "-o", x, "--fail-on-regression", NULL};
    cli c = run_cli(tmp, "1", args);
    assert_int_equal(c.status, 2);
    assert_false(file_exists(x));
    cli_free(&c);
    tt_rmrf(tmp);
    free(tmp);
}

static void test_cli_quiet(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    const char *args[] = {"base", "new", "-o", x, "-q", NULL};
    cli c = run_cli(tmp, NULL, args);
    assert_int_equal(c.status, 0);
    assert_string_equal(c.out, "");
    assert_true(file_exists(x));
    cli_free(&c);
    /* quiet and failing: still exit 3, nothing on stdout, the regressions on stderr */
    const char *args3[] = {"base", "new", "-o", x, "--quiet", "--fail-on-regression", "50", NULL};
    c = run_cli(tmp, NULL, args3);
    assert_int_equal(c.status, 3);
    assert_string_equal(c.out, "");
    assert_int_equal(count_lines_starting(c.err, "tlcompare: regression: "), 3);
    cli_free(&c);
    tt_rmrf(tmp);
    free(tmp);
}

/* Reports compared without ops_unique_args (--sheets ... roofline): the roofline sheets give
 * the per-call spread, so the ops and the busy time still get their verdicts. */
static void test_cli_roofline_sheets_give_the_noise(void **state)
{
    (void)state;
    NEED_CLI();
    const char *top = getenv("TL_TOP");
    char *tmp = tt_tmpdir(), x[4096], js[4096], b[4096], v[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    snprintf(js, sizeof js, "%s/s.json", tmp);
    snprintf(b, sizeof b, "%s/examples/baseline", top ? top : "..");
    snprintf(v, sizeof v, "%s/examples/candidate", top ? top : "..");
    const char *args[] = {b, v, "--sheets", "gpu_timeline", "ops_summary", "roofline", "-o", x, "-q",
                          "--summary-json", js, NULL};
    cli c = run_cli(tmp, NULL, args);
    assert_int_equal(c.status, 0);
    cli_free(&c);
    size_t len;
    char *j = slurp(js, &len);
    assert_non_null(strstr(j, "\"verdicts\": {\"basis\": \"per-shape strata (each op's calls within their argument sets), 1 run per side\""));
    const char *mm = strstr(j, "{\"name\": \"aten::addmm\"");
    assert_non_null(mm);
    assert_true(strstr(mm, "\"verdict\": \"slower\"") < strchr(mm, '\n'));
    assert_non_null(strstr(j, "\"verdict\": \"faster\", \"n\": [")); /* the busy time, among others */
    free(j);
    tt_rmrf(tmp);
    free(tmp);
}

/* Not a terminal, or NO_COLOR: plain text; the summary part is the expected text. */
static void test_cli_plain_text(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    const char *args[] = {"base", "new", "-o", x, "--fail-on-regression", "50", NULL};
    static const char *no_color[] = {"1", NULL};
    for (size_t i = 0; i < 2; i++) {
        cli c = run_cli(tmp, no_color[i], args);
        assert_int_equal(c.status, 3);
        assert_null(strchr(c.out, '\033'));
        assert_null(strchr(c.err, '\033'));
        /* the answer first: the summary, then one line for the outputs (no per-sheet
         * lines without -v) */
        assert_null(strstr(c.out, "Wrote sheet"));
        const char *wrote = strstr(c.out, "\nWrote ");
        assert_non_null(wrote);
        assert_non_null(strstr(wrote, " result sheets"));
        assert_non_null(strstr(wrote, "; -v lists them\n"));
        assert_golden(c.out, (size_t)(wrote - c.out), "base_vs_new.txt");
        cli_free(&c);
    }
    tt_rmrf(tmp);
    free(tmp);
}

static char *first_sheet(const char *path, int *has_summary)
{
    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open(path, &err);
    if (!x)
        print_error("%s\n", err.msg);
    assert_non_null(x);
    assert_true(tl_xlsx_sheet_count(x) > 0);
    char *name = strdup(tl_xlsx_sheet_name(x, 0));
    *has_summary = tl_xlsx_has_sheet(x, "summary");
    tl_xlsx_close(x);
    return name;
}

static void test_cli_summary_sheet(void **state)
{
    (void)state;
    NEED_CLI();
    char *tmp = tt_tmpdir(), x[4096];
    snprintf(x, sizeof x, "%s/cmp.xlsx", tmp);
    const char *with[] = {"base", "new", "-o", x, NULL};
    cli c = run_cli(tmp, "1", with);
    assert_int_equal(c.status, 0);
    cli_free(&c);
    int has = 0;
    char *first = first_sheet(x, &has);
    assert_string_equal(first, "summary");
    assert_true(has);
    free(first);

    const char *without[] = {"base", "new", "-o", x, "--no-summary", NULL};
    c = run_cli(tmp, "1", without);
    assert_int_equal(c.status, 0);
    cli_free(&c);
    first = first_sheet(x, &has);
    assert_string_equal(first, "gpu_timeline");
    assert_false(has);
    free(first);
    tt_rmrf(tmp);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_deltas),
        cmocka_unit_test(test_regressions_top10_ties_duplicates),
        cmocka_unit_test(test_improvements),
        cmocka_unit_test(test_only_in_one_report),
        cmocka_unit_test(test_chart),
        cmocka_unit_test(test_gate_10),
        cmocka_unit_test(test_gate_50_at_limit),
        cmocka_unit_test(test_gate_min_time),
        cmocka_unit_test(test_gate_passes),
        cmocka_unit_test(test_gate_busy_time),
        cmocka_unit_test(test_three_reports),
        cmocka_unit_test(test_rocprof_legacy_kernels),
        cmocka_unit_test(test_current_layout_kernels),
        cmocka_unit_test(test_zero_baseline_and_missing),
        cmocka_unit_test(test_markdown_caps_violations),
        cmocka_unit_test(test_golden_markdown_json),
        cmocka_unit_test(test_terminal_text),
        cmocka_unit_test(test_terminal_names_are_sanitised),
        cmocka_unit_test(test_summary_sheet),
        cmocka_unit_test(test_cli_gate_fails_after_writing_everything),
        cmocka_unit_test(test_cli_gate_passes),
        cmocka_unit_test(test_cli_bad_numbers),
        cmocka_unit_test(test_cli_quiet),
        cmocka_unit_test(test_cli_roofline_sheets_give_the_noise),
        cmocka_unit_test(test_cli_plain_text),
        cmocka_unit_test(test_cli_summary_sheet),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
