/*
 * test_steps.c - a training trace's steps as repeated measurements: the loader keeps the
 * ProfilerStep#N annotations and the GPU's name; tl_trace_steps gives each step its GPU
 * events by their launch (a step's busy time and each op's time, exactly, on a small
 * trace); and end to end, on generated pairs of 10 steps whose steps vary by 3% as a whole
 * (and whose first step is warm-up, slower by up to 80% op by op): a planted 4% regression of
 * aten::gelu is found in at least 95 of 100 seeds, and without it at most 8 of 100 pairs flag
 * any op, and the same holds for the lowest common ops (each kind's time per step), on a known
 * answer too; --steps chooses the steps of both.  Keeping the warm-up step loses the
 * regression (the power test fails).
 */
#include "testutil.h"

#include "base/stats.h"
#include "diff/diff.h"
#include "read/xlsx_read.h"
#include "summary/lca.h"
#include "summary/verdict.h"
#include "trace/steps.h"
#include "trace/trace.h"

#include <math.h>

static char tool_dir[4096]; /* where tlcompare and tools/gentrace are */

/* Two steps (CPU spans [0, 100] and [100, 200]); aten::mm launches a kernel in each, which
 * runs after its step has closed (the launch decides the step); aten::add launches one in
 * step 2; a cpu_op outside both steps launches one more (in no step). */
static const char small_trace[] =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\", \"totalGlobalMem\": 1}],\n"
    " \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 100},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#8\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 100},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#x\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 300},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 20, \"args\": {\"External id\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 12, \"dur\": 5, \"args\": {\"correlation\": 11, \"External id\": 1}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 150, \"dur\": 30, \"args\": {\"correlation\": 11, \"External id\": 1, \"stream\": 7}},\n"
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 11, \"pid\": 1, \"tid\": 1, \"ts\": 12},\n"
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 11, \"pid\": 0, \"tid\": 7, \"ts\": 150, \"bp\": \"e\"},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 110, \"dur\": 20, \"args\": {\"External id\": 2}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 112, \"dur\": 5, \"args\": {\"correlation\": 12, \"External id\": 2}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 300, \"dur\": 10, \"args\": {\"correlation\": 12, \"External id\": 2, \"stream\": 7}},\n"
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 12, \"pid\": 1, \"tid\": 1, \"ts\": 112},\n"
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 12, \"pid\": 0, \"tid\": 7, \"ts\": 300, \"bp\": \"e\"},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 140, \"dur\": 20, \"args\": {\"External id\": 3}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 141, \"dur\": 5, \"args\": {\"correlation\": 13, \"External id\": 3}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"add\", \"pid\": 0, \"tid\": 7, \"ts\": 305, \"dur\": 10, \"args\": {\"correlation\": 13, \"External id\": 3, \"stream\": 7}},\n"
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 13, \"pid\": 1, \"tid\": 1, \"ts\": 141},\n"
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 13, \"pid\": 0, \"tid\": 7, \"ts\": 305, \"bp\": \"e\"},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 400, \"dur\": 20, \"args\": {\"External id\": 4}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 402, \"dur\": 5, \"args\": {\"correlation\": 14, \"External id\": 4}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 450, \"dur\": 50, \"args\": {\"correlation\": 14, \"External id\": 4, \"stream\": 7}},\n"
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 14, \"pid\": 1, \"tid\": 1, \"ts\": 402},\n"
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 14, \"pid\": 0, \"tid\": 7, \"ts\": 450, \"bp\": \"e\"}\n"
    "]}\n";

static long op_at(const tl_steps *s, const char *name)
{
    for (size_t k = 0; k < s->nops; k++)
        if (strcmp(s->op[k], name) == 0)
            return (long)k;
    return -1;
}

static void test_small_trace_steps(void **state)
{
    (void)state;
    tl_error err = {0};
    tl_trace *t = tl_trace_load_mem(small_trace, strlen(small_trace), "small.json", &err);
    assert_non_null(t);
    /* ProfilerStep#x is no step */
    assert_int_equal(t->nsteps, 2);
    assert_int_equal(t->steps[0].number, 7);
    assert_int_equal(t->steps[1].number, 8);
    assert_non_null(t->gpu_name);
    assert_string_equal(t->gpu_name, "NVIDIA A100-SXM4-40GB");
    tl_steps s;
    tl_trace_steps(t, &s);
    assert_int_equal(s.n, 2);
    /* step 7: the 30 µs gemm; step 8: the gemm (300-310) and add (305-315): busy 15 */
    assert_true(fabs(s.tl[0 * TL_TIMELINE_N + 3] - 30) < 1e-9);
    assert_true(fabs(s.tl[1 * TL_TIMELINE_N + 3] - 15) < 1e-9);
    assert_true(fabs(s.tl[1 * TL_TIMELINE_N + 5] - 15) < 1e-9); /* total: 300 to 315 */
    long mm = op_at(&s, "aten::mm"), add = op_at(&s, "aten::add");
    assert_true(mm >= 0 && add >= 0);
    assert_true(fabs(s.us[mm * 2 + 0] - 30) < 1e-9 && fabs(s.us[mm * 2 + 1] - 10) < 1e-9);
    assert_true(fabs(s.us[add * 2 + 0]) < 1e-9 && fabs(s.us[add * 2 + 1] - 10) < 1e-9);
    /* mm's largest call is the one outside every step */
    assert_true(fabs(s.peak[mm].us - 50) < 1e-9 && fabs(s.peak[mm].ts - 400) < 1e-9);
    assert_int_equal(s.peak[mm].step, -1);
    assert_int_equal(s.peak[add].step, 8);
    tl_steps_free(&s);
    tl_trace_free(t);
}

/* deviceProperties of any shape: the first device's "name" when it is a string; invalid JSON
 * in it is an error, as anywhere in a trace. */
static void test_gpu_name_shapes(void **state)
{
    (void)state;
    static const struct {
        const char *props, *name; /* name: NULL none; "!" an error */
    } cases[] = {
        {"5", NULL},
        {"[]", NULL},
        {"[1, {\"name\": \"second\"}]", NULL},
        {"[{\"name\": 3}]", NULL},
        {"[{}, {\"name\": \"B\"}]", NULL},
        {"[{\"x\": {\"name\": \"inner\"}, \"name\": \"outer\"}, {\"name\": \"Y\"}]", "outer"},
        {"[{\"name\": \"A\",}]", "!"},
        {"[{\"name\": \"A\"},]", "!"},
        {"[{\"name\" \"A\"}]", "!"},
        {"[{\"name\": \"A\"} {\"name\": \"B\"}]", "!"},
    };
    const char *events = strstr(small_trace, "\"traceEvents\"");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t cap = strlen(cases[i].props) + strlen(events) + 32;
        char *text = malloc(cap);
        assert_non_null(text);
        snprintf(text, cap, "{\"deviceProperties\": %s, %s", cases[i].props, events);
        tl_error err = {0};
        tl_trace *t = tl_trace_load_mem(text, strlen(text), "p.json", &err);
        if (cases[i].name && !strcmp(cases[i].name, "!")) {
            assert_null(t);
            assert_non_null(strstr(err.msg, "p.json: not a valid trace: "));
        } else {
            assert_non_null(t);
            if (cases[i].name)
                assert_string_equal(t->gpu_name, cases[i].name);
            else
                assert_null(t->gpu_name);
            assert_int_equal(t->nsteps, 2);
        }
        tl_trace_free(t);
        free(text);
    }
}

/*
 * The lowest common ops on steps, a known answer: two kinds (aten::gelu, two LCAs a step,
 * and aten::mm, one) on each side, 5 steps each; each LCA's time goes to its kind in its step.
 * gelu per step 1, 1.1, 0.9, 1, 1 ms against 1.2, 1.3, 1.1, 1.2, 1.2 (+20%); mm the same
 * on both sides.  The variant's busy time varies more than gelu does, so gelu's time as it
 * is (not its share of the step) carries its verdict: the kept steps' means 1 and 1.2 apply
 * to the baseline's 5 ms, 5 -> 6, each side's variance (5 / 1)^2 * 0.005 / 5 = 0.025 on 4
 * df, at half the level (two tests), the p value doubled.
 */
static void test_lca_steps_known_answer(void **state)
{
    (void)state;
    enum { NS = 5, NL = 3 * NS };
    static const double gelu[2][NS] = {{1, 1.1, 0.9, 1, 1}, {1.2, 1.3, 1.1, 1.2, 1.2}};
    static const double mm[NS] = {3, 3.3, 2.7, 3.1, 2.9};
    tl_lca_summary s;
    memset(&s, 0, sizeof s);
    s.tag1 = "a";
    s.tag2 = "b";
    s.nlcas = NL;
    s.ngroups = 2;
    s.max_top = 10;
    s.groups = calloc(2, sizeof *s.groups);
    s.group_of = malloc(NL * sizeof *s.group_of);
    s.lca_ms = malloc(2 * NL * sizeof *s.lca_ms);
    assert_true(s.groups && s.group_of && s.lca_ms);
    long step[2][NL];
    /* three LCAs a step, listed out of step order: two gelus (30% and 70% of the step's
     * gelu time) and an mm, on both sides */
    for (size_t i = 0; i < NL; i++) {
        size_t k = i % 3 == 2, st = NS - 1 - i / 3;
        double part = k ? 1 : i % 3 ? 0.7 : 0.3;
        s.group_of[i] = k;
        step[0][i] = step[1][i] = (long)st;
        s.lca_ms[2 * i] = part * (k ? mm[st] : gelu[0][st]);
        s.lca_ms[2 * i + 1] = part * (k ? mm[st] : gelu[1][st]);
        tl_lca_item *g = &s.groups[k];
        g->lca = k ? "aten::mm" : "aten::gelu";
        g->ops1 = g->ops2 = g->lca;
        g->ms1 += s.lca_ms[2 * i];
        g->ms2 += s.lca_ms[2 * i + 1];
        g->count++;
        g->npairs++;
    }
    for (size_t k = 0; k < 2; k++) {
        s.groups[k].delta_ms = s.groups[k].ms2 - s.groups[k].ms1;
        s.groups[k].pct = 100 * s.groups[k].delta_ms / s.groups[k].ms1;
    }
    static const double busy_a[NS] = {10, 10, 10, 10, 10}, busy_b[NS] = {10, 9, 11, 10, 10.5};
    const long *const cstep[2] = {step[0], step[1]};
    const size_t kept[2] = {NS, NS};
    const double *const busy[2] = {busy_a, busy_b};
    tl_lca_summary_steps(&s, cstep, kept, busy, "5 vs 5 steps");
    tl_lca_summary_judge(&s, 0.95, 0);
    tl_interval want = tl_welch((tl_estimate){5, 0.025, 4}, (tl_estimate){6, 0.025, 4}, 0.975);
    const tl_lca_item *g = &s.groups[0];
    print_message("gelu on steps: [%g, %g] p %g (want [%g, %g] p %g)\n", g->ci_lo, g->ci_hi, g->p, want.lo, want.hi,
                  2 * want.p);
    assert_true(fabs(g->ci_lo - want.lo) < 1e-9 && fabs(g->ci_hi - want.hi) < 1e-9);
    assert_true(fabs(g->p - 2 * want.p) < 1e-9);
    assert_int_equal(g->verdict, TL_VERDICT_SLOWER);
    assert_int_equal(s.groups[1].verdict, TL_VERDICT_WITHIN_NOISE);
    assert_int_equal(s.tested, 2);
    assert_int_equal(s.tested_by_steps, 2);
    char line[512];
    tl_lca_summary_verdict_line(&s, line, sizeof line);
    assert_string_equal(line, "verdicts: between-step spread, 5 vs 5 steps (each kind's time and its share of the "
                              "step); 95% intervals, family-wise error 5% over 2 kinds tested");
    tl_lca_summary_free(&s);
}

/* The kinds of LCA listed in the JSON summary's lca part (only changes beyond the noise
 * are): adds 1 to *found when aten::gelu is listed slower, to *flagged when another is. */
static void lca_count(const char *lca, int *found, int *flagged)
{
    const char *top = strstr(lca, "\"top\": ["), *end = top ? strstr(top, "\"violations\"") : NULL;
    assert_non_null(top);
    int gelu = 0, other = 0;
    for (const char *p = top; (p = strstr(p, "{\"lca\": \"")) != NULL && (!end || p < end);) {
        p += 9;
        const char *v = strstr(p, "\"verdict\": \"");
        int slower = v && strncmp(v + 12, "slower", 6) == 0, faster = v && strncmp(v + 12, "faster", 6) == 0;
        if (strncmp(p, "aten::gelu\"", 11) == 0)
            gelu |= slower;
        else
            other |= slower || faster;
    }
    *found += gelu;
    *flagged += other;
}

/* Each LCA's kind (what its time per step is added to) is the kind that holds it, also after
 * a baseline-only and a variant-only kind of one name became one line: a CUDA and a ROCm
 * trace whose aten::sub launches on one flavour each, 8 steps. */
static void test_lca_groups_hold_their_lcas(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char cmd[12000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s/tools/gentrace' --flavour cuda --shape one-sided-lca --layers 2 --steps 8 -o c.json && "
             "'%s/tools/gentrace' --flavour rocm --shape one-sided-lca --layers 2 --steps 8 -o r.json",
             dir, tool_dir, tool_dir);
    assert_int_equal(system(cmd), 0);
    char pc[4200], pr[4200];
    snprintf(pc, sizeof pc, "%s/c.json", dir);
    snprintf(pr, sizeof pr, "%s/r.json", dir);
    tl_error err = {0};
    tl_trace *a = tl_trace_load(pc, &err), *b = tl_trace_load(pr, &err);
    assert_true(a && b);
    tl_diff *d = tl_diff_run(a, b, NULL, &err);
    assert_non_null(d);
    tl_arena ar;
    tl_arena_init(&ar);
    tl_lca_summary s;
    tl_lca_summary_build(&s, d, "cuda", "rocm", 10, -1, 1, &ar);
    double *ms = calloc(2 * s.ngroups + 1, sizeof *ms);
    assert_non_null(ms);
    size_t unaligned = 0;
    for (size_t i = 0; i < s.nlcas; i++) {
        assert_true(s.group_of[i] < s.ngroups);
        ms[2 * s.group_of[i]] += s.lca_ms[2 * i];
        ms[2 * s.group_of[i] + 1] += s.lca_ms[2 * i + 1];
    }
    for (size_t g = 0; g < s.ngroups; g++) {
        unaligned += s.groups[g].unaligned;
        assert_true(fabs(ms[2 * g] - s.groups[g].ms1) < 1e-9 && fabs(ms[2 * g + 1] - s.groups[g].ms2) < 1e-9);
    }
    assert_int_equal(unaligned, 1); /* aten::sub, moved */
    free(ms);
    tl_lca_summary_free(&s);
    tl_arena_free(&ar);
    tl_diff_free(d);
    tl_trace_free(a);
    tl_trace_free(b);
    tt_rmrf(dir);
    free(dir);
}

/* Seeds i = 1..n: a pair of generated traces (10 steps, 3% step-to-step noise, a warm-up
 * first step), aten::gelu `slow` percent slower on the variant; counts the pairs where
 * gelu is found slower and those where another op is flagged. */
static void run_pairs(const char *dir, int n, double slow, const char *extra, int *found, int *flagged,
                      int *lca_found, int *lca_flagged)
{
    *found = *flagged = *lca_found = *lca_flagged = 0;
    char cmd[20000];
    for (int i = 1; i <= n; i++) {
        const char *gen = "--layers 4 --steps 10 --gpu-cv 2 --step-cv 3 --warmup 40";
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && '%s/tools/gentrace' %s --seed %d --run-seed %d -o a.json && "
                 "'%s/tools/gentrace' %s --seed %d --run-seed %d --slow aten::gelu=%g -o b.json && "
                 "'%s/tlcompare' a.json b.json -q --sheets gpu_timeline ops_summary --summary-json s.json %s "
                 "2>/dev/null",
                 dir, tool_dir, gen, 2 * i + 1, 2 * i + 1, tool_dir, gen, 2 * i + 2, 2 * i + 2, slow, tool_dir, extra);
        assert_int_equal(system(cmd), 0);
        char *js = tt_slurp_in(dir, "s.json");
        assert_non_null(strstr(js, "\"basis\": \"between-step spread, "));
        if (i == 1) /* the default: the first step left out */
            print_message("%.120s\n", strstr(js, "\"basis\": "));
        /* the lowest common ops: their kinds listed (a change beyond the noise), on steps too */
        char *lca = strstr(js, "\"lca\"");
        assert_non_null(lca);
        assert_non_null(strstr(lca, "\"basis\": \"between-step spread, "));
        lca_count(lca, lca_found, lca_flagged);
        /* the listed ops with a verdict of slower or faster (the op part) */
        *lca = '\0';
        const char *p = js;
        int other = 0, gelu = 0;
        while ((p = strstr(p, "\"name\": \"")) != NULL) {
            p += 9;
            const char *end = strchr(p, '"'), *next = strstr(p, "\"name\": \"");
            const char *v = strstr(p, "\"verdict\": \"");
            if (!end || !v || (next && v > next))
                continue;
            int slower = strncmp(v + 12, "slower", 6) == 0, faster = strncmp(v + 12, "faster", 6) == 0;
            if (end - p == 10 && strncmp(p, "aten::gelu", 10) == 0)
                gelu |= slower;
            else
                other |= slower || faster;
        }
        *found += gelu;
        *flagged += other;
        free(js);
    }
}

static void test_steps_power_and_null(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    int found, flagged, lfound, lflagged;
    run_pairs(dir, 100, 4, "", &found, &flagged, &lfound, &lflagged);
    print_message("planted 4%%: found in %d of 100 (another op flagged in %d); the gelu LCAs in %d (another kind "
                  "in %d)\n", found, flagged, lfound, lflagged);
    assert_true(found >= 95);
    assert_true(lfound >= 95);
    run_pairs(dir, 100, 0, "", &found, &flagged, &lfound, &lflagged);
    print_message("null: flagged in %d of 100; a kind of LCA in %d\n", flagged, lflagged);
    assert_true(flagged <= 8);
    assert_true(lflagged <= 8);
    tt_rmrf(dir);
    free(dir);
}

/* ---- the comparability guard ---------------------------------------------------------------- */

static int run_status(const char *dir, const char *args)
{
    char cmd[12000];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tlcompare' %s > out.txt 2> err.txt", dir, tool_dir, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void gen(const char *dir, const char *args, const char *out)
{
    char cmd[12000];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/gentrace' %s -o %s", dir, tool_dir, args, out);
    assert_int_equal(system(cmd), 0);
}

/* The steps the verdicts rest on, ops and lowest common ops alike: by default the first
 * left out as warm-up; --steps 3:9 keeps steps 3 to 9 of each trace. */
static void test_steps_range_for_ops_and_lcas(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "--layers 1 --steps 10 --seed 3 --step-cv 3", "a.json");
    gen(dir, "--layers 1 --steps 10 --seed 4 --step-cv 3", "b.json");
    static const struct {
        const char *opt, *steps;
    } cases[] = {
        {"", "9 vs 9 steps, the first left out as warm-up"},
        {"--steps 3:9", "7 vs 7 steps (of 10 and 10, from step 3 and 3)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[512];
        snprintf(args, sizeof args, "a.json b.json -q -o o.xlsx --sheets gpu_timeline ops_summary --summary-json s.json %s",
                 cases[i].opt);
        assert_int_equal(run_status(dir, args), 0);
        char *js = tt_slurp_in(dir, "s.json");
        char want[256];
        snprintf(want, sizeof want, "\"basis\": \"between-step spread, %s (each op's time", cases[i].steps);
        assert_non_null(strstr(js, want));
        const char *lca = strstr(js, "\"lca\"");
        assert_non_null(lca);
        snprintf(want, sizeof want, "\"basis\": \"between-step spread, %s\"", cases[i].steps);
        assert_non_null(strstr(lca, want));
        free(js);
    }
    tt_rmrf(dir);
    free(dir);
}

/* The index of sheet `name` in the workbook's order, or -1. */
static long sheet_index(const tl_xlsx *x, const char *name)
{
    for (size_t i = 0; i < tl_xlsx_sheet_count(x); i++)
        if (strcmp(tl_xlsx_sheet_name(x, i), name) == 0)
            return (long)i;
    return -1;
}

/* The steps are measured while the alignment runs, but their sheet still follows the
 * diff's in the workbook: lca_summary, diff_stats, then steps. */
static void test_steps_sheet_after_the_diff_sheets(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "--layers 1 --steps 6 --seed 3", "a.json");
    gen(dir, "--layers 1 --steps 6 --seed 4", "b.json");
    assert_int_equal(run_status(dir, "a.json b.json -q -o o.xlsx"), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/o.xlsx", dir);
    tl_error err = {0};
    tl_xlsx *x = tl_xlsx_open(path, &err);
    assert_non_null(x);
    long lca = sheet_index(x, "lca_summary"), stats = sheet_index(x, "diff_stats"), steps = sheet_index(x, "steps");
    if (lca < 0 || stats < 0 || steps < 0)
        fail_msg("sheets lca_summary %ld, diff_stats %ld, steps %ld: one is missing", lca, stats, steps);
    if (!(lca < stats && stats < steps))
        fail_msg("sheet order: lca_summary %ld, diff_stats %ld, steps %ld", lca, stats, steps);
    tl_xlsx_close(x);
    tt_rmrf(dir);
    free(dir);
}

static void test_unrelated_workloads_not_comparable(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    /* a training step against a decode step replayed from a graph */
    gen(dir, "--layers 2 --steps 6 --seed 3", "train.json");
    gen(dir, "--shape graph-replay --steps 6 --seed 4", "decode.json");
    assert_int_equal(run_status(dir, "train.json decode.json --summary-md s.md --summary-json s.json"), 0);
    char *md = tt_slurp_in(dir, "s.md");
    /* the decode step's graph replays are left out of its whole: no alignment sees into them */
    assert_true(strncmp(md, "**NOT COMPARABLE: only ", 23) == 0);
    assert_non_null(strstr(md, "% of train's GPU time aligns with the other's; 80 vs 2 calls per step"));
    char *js = tt_slurp_in(dir, "s.json");
    assert_non_null(strstr(js, "\"comparability\": {\"comparable\": false"));
    /* the gate refuses, naming why; --force-compare judges */
    assert_int_equal(run_status(dir, "train.json decode.json --fail-on-regression 5 -q"), 1);
    char *err = tt_slurp_in(dir, "err.txt");
    assert_non_null(strstr(err, "--fail-on-regression: the runs are not comparable: only "));
    assert_non_null(strstr(err, "% of train's GPU time aligns with the other's; 80 vs 2 calls per step; --force-compare"));
    int st = run_status(dir, "train.json decode.json --fail-on-regression 5 -q --force-compare");
    assert_true(st == 0 || st == 3);
    free(md);
    free(js);
    free(err);
    tt_rmrf(dir);
    free(dir);
}

static void test_same_workload_two_gpus_compares(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "--layers 2 --steps 6 --seed 3", "h100.json");
    gen(dir, "--layers 2 --steps 6 --seed 4 --slow aten::gelu=30 --gpu-name 'NVIDIA A100-SXM4-80GB'", "a100.json");
    assert_int_equal(run_status(dir, "h100.json a100.json --summary-md s.md --summary-json s.json --fail-on-regression 50 -q"), 0);
    char *md = tt_slurp_in(dir, "s.md");
    assert_true(strncmp(md, "comparable: NVIDIA H100 80GB HBM3 vs NVIDIA A100-SXM4-80GB; 100% and 100% of the GPU "
                            "time aligned; 6 vs 6 steps, ", 105) == 0);
    /* 6 steps each: the first left out as warm-up, the verdicts on the other 5 */
    char *js = tt_slurp_in(dir, "s.json");
    assert_non_null(strstr(js, "\"basis\": \"between-step spread, 5 vs 5 steps, the first left out as warm-up"));
    free(js);
    /* where the listed change happened: its largest call's step and trace time, each side */
    assert_non_null(strstr(md, "| largest call (step @ trace time) |"));
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && python3 -c \"\n"
             "import json\n"
             "v = json.load(open('s.json'))['variants'][0]\n"
             "g = [r for r in v['regressions'] if r['name'] == 'aten::gelu']\n"
             "assert g and g[0]['verdict'] == 'slower', v['regressions']\n"
             "steps = {e['name']: e['ts'] for e in json.load(open('a100.json'))['traceEvents'] if e.get('cat') == 'user_annotation'}\n"
             "w = g[0]['where']\n"
             "assert len(w) == 2 and all(5 <= x['step'] <= 10 for x in w), w\n"
             "assert steps['ProfilerStep#%%d' %% w[1]['step']] <= w[1]['ts_us'], (w, steps)\n"
             "\"",
             dir);
    assert_int_equal(system(cmd), 0);
    free(md);
    /* another vendor: other kernel and library op names (miopen, cudnn), the same workload */
    gen(dir, "--layers 2 --steps 6 --seed 5 --flavour rocm", "mi300.json");
    assert_int_equal(run_status(dir, "mi300.json h100.json --summary-md s.md --fail-on-regression 50 -q"), 0);
    md = tt_slurp_in(dir, "s.md");
    assert_true(strncmp(md, "comparable: AMD Instinct MI300X vs NVIDIA H100 80GB HBM3; 100% and 100% of the GPU time "
                            "aligned", 92) == 0);
    free(md);
    tt_rmrf(dir);
    free(dir);
}

/* A graph replay's launches wrapped in CompiledFunction ops (torch.compile's training graphs,
 * which ops attribute): no graph-replay hint for that side; the plain replay keeps it. */
static void test_graph_hint_not_for_compiled_function(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    gen(dir, "--shape graph-replay --steps 4 --seed 4", "replay.json");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && python3 -c \"\n"
             "import json\n"
             "t = json.load(open('replay.json'))\n"
             "add = [dict(ph='X', cat='cpu_op', name='CompiledFunction', pid=e['pid'], tid=e['tid'], ts=e['ts'] - 1,\n"
             "            dur=e['dur'] + 2, args={}) for e in t['traceEvents'] if e.get('name') == 'cudaGraphLaunch']\n"
             "t['traceEvents'] += add\n"
             "json.dump(t, open('compiled.json', 'w'))\n\"",
             dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_status(dir, "replay.json compiled.json --summary-json s.json"), 0);
    char *js = tt_slurp_in(dir, "s.json");
    const char *a = strstr(js, "\"graph_replay\": "), *b = a ? strstr(a + 1, "\"graph_replay\": ") : NULL;
    assert_non_null(b);
    assert_true(strncmp(a + 16, "true", 4) == 0);  /* replay.json */
    assert_true(strncmp(b + 16, "false", 5) == 0); /* compiled.json */
    free(js);
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tt_tool_dir(tool_dir, sizeof tool_dir, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_trace_steps),
        cmocka_unit_test(test_lca_steps_known_answer),
        cmocka_unit_test(test_lca_groups_hold_their_lcas),
        cmocka_unit_test(test_steps_range_for_ops_and_lcas),
        cmocka_unit_test(test_steps_sheet_after_the_diff_sheets),
        cmocka_unit_test(test_gpu_name_shapes),
        cmocka_unit_test(test_unrelated_workloads_not_comparable),
        cmocka_unit_test(test_same_workload_two_gpus_compares),
        cmocka_unit_test(test_graph_hint_not_for_compiled_function),
        cmocka_unit_test(test_steps_power_and_null),
    };
    return cmocka_run_group_tests_name("steps", tests, NULL, NULL);
}
