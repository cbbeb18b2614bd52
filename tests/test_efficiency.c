/*
 * test_efficiency.c - the perf group (--sheets perf) and the summary's efficiency lines
 * (achieved TFLOPS/s and TB/s, % of peak), on the hand-written reports of
 * tests/fixtures/perf/ (its README works every expected number out).
 *
 * The library tests read the fixtures with tl_report_open / tl_run_groups, as the command
 * does; the CLI test runs $TLCOMPARE (skipped when it is not set).  TL_TOP is the
 * repository root.
 */
#include "testutil.h"

#include "compare/groups.h"
#include "read/open.h"
#include "summary/efficiency.h"
#include "summary/summary.h"

#include <math.h>
#include <sys/wait.h>

static const char *top_dir(void)
{
    const char *t = getenv("TL_TOP");
    return t && *t ? t : ".";
}

static const char *fixture(const char *rel)
{
    static char buf[8][4096];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%s/tests/fixtures/%s", top_dir(), rel);
    return b;
}

/* Equal to 1e-12 relative (the sums are exact; the divisions round). */
#define assert_close(got, want) assert_close_at((got), (want), #got, __FILE__, __LINE__)
static void assert_close_at(double got, double want, const char *what, const char *file, int line)
{
    int ok = isnan(want) ? isnan(got) : fabs(got - want) <= 1e-12 * fabs(want);
    if (!ok) {
        print_error("%s:%d: %s is %.17g, want %.17g\n", file, line, what, got, want);
        _fail(file, line);
    }
}

/* Every report's reads of unified_perf_summary are counted: the efficiency lines must not
 * read again a sheet the comparison read. */
static const tl_report_ops *real_ops[2];
static tl_report_ops counting_ops[2];
static int unified_reads[2];

static tl_table *counting_read0(tl_report *r, const char *sheet, tl_arena *a, tl_error *e)
{
    unified_reads[0] += strcmp(sheet, "unified_perf_summary") == 0;
    return real_ops[0]->read_sheet(r, sheet, a, e);
}

static tl_table *counting_read1(tl_report *r, const char *sheet, tl_arena *a, tl_error *e)
{
    unified_reads[1] += strcmp(sheet, "unified_perf_summary") == 0;
    return real_ops[1]->read_sheet(r, sheet, a, e);
}

typedef struct run {
    tl_report reports[2];
    const char *tags[2];
    tl_arena arena;
    tl_results results;
    tl_summary s;
    tl_efficiency e;
    tl_eff_cache *cache;
    int rc;
    tl_error err;
} run;

/* Compare fixture reports `base` and `var` (tags base, new) with groups `groups` (named
 * when `named`), build the summary and its efficiency lines against `arch` (or none). */
static run *run_new_with(const char *base, const char *var, unsigned groups, int named, const tl_gpu_arch *arch,
                         int use_cache)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    tl_arena_init(&r->arena);
    const char *dirs[2] = {base, var}, *tags[2] = {"base", "new"};
    for (size_t i = 0; i < 2; i++) {
        tl_error err = {0};
        if (tl_report_open(&r->reports[i], fixture(dirs[i]), &err) != 0) {
            print_error("%s\n", err.msg);
            fail();
        }
        r->reports[i].tag = strdup(tags[i]);
        r->tags[i] = r->reports[i].tag;
        real_ops[i] = r->reports[i].ops;
        counting_ops[i] = *real_ops[i];
        counting_ops[i].read_sheet = i ? counting_read1 : counting_read0;
        r->reports[i].ops = &counting_ops[i];
        unified_reads[i] = 0;
    }
    tl_sink sink = tl_results_sink(&r->results);
    r->cache = use_cache ? tl_eff_cache_new(arch) : NULL;
    r->rc = tl_run_groups_observed(r->reports, 2, groups, named ? groups : 0, 0, use_cache ? tl_eff_cache_observe : NULL,
                                   r->cache, &sink, &r->arena, &r->err);
    tl_gate gate = {.pct = -1, .min_ms = 1};
    tl_summary_build(&r->s, &r->results, r->tags, 2, &gate, &r->arena);
    tl_eff_options opt = {.gpu_arch = arch, .cache = r->cache};
    tl_efficiency_build(&r->e, &r->s, r->reports, 2, &opt, &r->arena);
    r->s.eff = &r->e;
    return r;
}

static run *run_new(const char *base, const char *var, unsigned groups, int named, const tl_gpu_arch *arch)
{
    return run_new_with(base, var, groups, named, arch, 0);
}

static void run_free(run *r)
{
    tl_efficiency_free(&r->e);
    tl_eff_cache_free(r->cache);
    tl_summary_free(&r->s);
    tl_results_free(&r->results);
    for (size_t i = 0; i < 2; i++)
        tl_report_close(&r->reports[i]);
    tl_arena_free(&r->arena);
    free(r);
}

static const tl_result *result(const run *r, const char *name)
{
    for (size_t i = 0; i < r->results.n; i++)
        if (strcmp(r->results.items[i].name, name) == 0)
            return &r->results.items[i];
    print_error("no result '%s'\n", name);
    fail();
    return NULL;
}

static const tl_cell *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_find(t, col);
    if (c < 0) {
        print_error("no column '%s'\n", col);
        fail();
    }
    assert_true(row < t->nrows);
    return &t->cols[c].cells[row];
}

static void assert_str_cell(const tl_table *t, const char *col, size_t row, const char *want)
{
    const tl_cell *c = cell(t, col, row);
    assert_int_equal(c->kind, TL_STR);
    assert_string_equal(c->v.s, want);
}

static double num_cell(const tl_table *t, const char *col, size_t row)
{
    const tl_cell *c = cell(t, col, row);
    assert_true(tl_cell_is_number(c));
    return tl_cell_number(c);
}

/* The H100-like description of the README: bf16 1000, fp32 500 TFLOPS/s, 2000 GB/s. */
static tl_gpu_arch test_arch(void)
{
    tl_gpu_arch a = {.memory_gb = 80, .mem_bw_gbps = 2000, .npeaks = 3};
    strcpy(a.name, "TESTGPU");
    a.peak[0] = (tl_gpu_peak){"matrix_bf16", 1000};
    a.peak[1] = (tl_gpu_peak){"matrix_fp32", 500};
    a.peak[2] = (tl_gpu_peak){"vector_bf16", 250};
    return a;
}

static const tl_eff_item *item(const tl_eff_list *l, size_t i, const char *name)
{
    assert_true(i < l->n);
    assert_string_equal(l->items[i].name, name);
    return &l->items[i];
}

static int setup(void **state)
{
    (void)state;
    tl_quiet = 1; /* the expected warnings (pnew has no Reduce_fwd) */
    return 0;
}

/* ---- --sheets perf -------------------------------------------------------------------- */

static void test_perf_group_splits_the_shared_sheets(void **state)
{
    (void)state;
    run *r = run_new("perf/pbase", "perf/pnew", TL_GROUP_PERF, 1, NULL);
    assert_int_equal(r->rc, 0);
    /* Normalization only: GEMM is the roofline group's, Reduce_fwd is in pbase alone */
    assert_int_equal(r->results.n, 3);
    assert_string_equal(r->results.items[0].name, "Normalization_intersect_new");
    assert_string_equal(r->results.items[1].name, "Normalization_only_baseline_new");
    assert_string_equal(r->results.items[2].name, "Normalization_only_variant_new");

    const tl_table *t = result(r, "Normalization_intersect_new")->table;
    assert_int_equal(t->nrows, 1);
    /* keys: name, then the param: columns both reports have, by code point */
    assert_string_equal(t->cols[0].name, "name");
    assert_string_equal(t->cols[1].name, "param: dtype");
    assert_string_equal(t->cols[2].name, "param: op_shape");
    assert_string_equal(t->cols[3].name, "Kernel Time (µs)_sum__new_diff");
    assert_str_cell(t, "param: op_shape", 0, "(1024, 768)");
    assert_close(num_cell(t, "Kernel Time (µs)_sum__new_diff", 0), 250);
    assert_close(num_cell(t, "Kernel Time (µs)_sum__new_pct", 0), 25);
    assert_close(num_cell(t, "TB/s_mean__new_pct", 0), 100 * ((0.84 - 1.05) / 1.05));
    /* a param: column one report lacks is an ordinary column; variants lose GFLOPS_first */
    assert_true(tl_table_find(t, "new::param: is_affine") >= 0);
    assert_true(tl_table_find(t, "base::GFLOPS_first") >= 0);
    assert_true(tl_table_find(t, "new::GFLOPS_first") < 0);

    t = result(r, "Normalization_only_baseline_new")->table;
    assert_int_equal(t->nrows, 1);
    assert_str_cell(t, "param: op_shape", 0, "(512, 768)");
    assert_close(num_cell(t, "base::Kernel Time (µs)_sum", 0), 50);
    t = result(r, "Normalization_only_variant_new")->table;
    assert_int_equal(t->nrows, 1);
    assert_str_cell(t, "param: op_shape", 0, "(2048, 768)");
    assert_close(num_cell(t, "new::Kernel Time (µs)_sum", 0), 300);
    /* the workbook hides them as the roofline sheets */
    assert_true(tl_result_hides(result(r, "Normalization_intersect_new"), "base::TB/s_std"));
    run_free(r);
}

static void test_all_is_the_references_set(void **state)
{
    (void)state;
    run *r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, NULL);
    assert_int_equal(r->rc, 0);
    for (size_t i = 0; i < r->results.n; i++) {
        const char *n = r->results.items[i].name;
        assert_true(strncmp(n, "Normalization", 13) != 0 && strncmp(n, "Reduce", 6) != 0);
    }
    result(r, "GEMM_intersect_new");
    assert_int_equal(tl_group_from_name("perf"), TL_GROUP_PERF);
    assert_int_equal(TL_GROUP_ALL & TL_GROUP_PERF, 0);
    run_free(r);
}

static void test_perf_named_without_sheets_is_an_error(void **state)
{
    (void)state;
    run *r = run_new("summary/base", "perf/pnew", TL_GROUP_PERF, 1, NULL);
    assert_int_equal(r->rc, -1);
    assert_non_null(strstr(r->err.msg, "perf: none of its sheets"));
    assert_non_null(strstr(r->err.msg, "summary/base"));
    run_free(r);
}

/* ---- the efficiency lines ------------------------------------------------------------- */

/* The three modelled ops listed (aten::cat has no model), with the README's figures. */
static void check_lines(const tl_efficiency *e, int with_arch, int family_variant)
{
    const tl_eff_list *l = &e->variants[0];
    assert_int_equal(l->n, 3);
    const tl_eff_item *it = item(l, 0, "aten::layer_norm"); /* regression 1 */
    assert_int_equal(it->memory_bound, 1);
    assert_close(it->rate.base, 1.048576);
    assert_close(it->rate.var, 0.8388608);
    assert_close(it->side[0].mb, 1000);
    assert_close(it->side[0].bytes_us, 1000);
    assert_close(it->pct_of_peak.base, with_arch ? 52.4288 : NAN);
    assert_close(it->pct_of_peak.var, with_arch ? 41.94304 : NAN);

    it = item(l, 1, "aten::mm"); /* improvement 1: two shapes, two Compute Specs */
    assert_int_equal(it->memory_bound, 0);
    assert_int_equal(it->side[0].rows, 2);
    assert_close(it->side[0].gflops, 800);
    assert_close(it->side[0].flops_us, 2000);
    assert_close(it->side[1].flops_us, 1600);
    assert_close(it->rate.base, 400);
    assert_close(it->rate.var, 500);
    assert_close(tl_delta_pct(it->rate), 25);
    assert_close(it->pct_of_peak.base, with_arch ? 50 : NAN);
    assert_close(it->pct_of_peak.var, with_arch ? 62.5 : NAN);

    it = item(l, 2, "aten::sum"); /* improvement 2: the unmodelled row left out */
    assert_int_equal(it->memory_bound, 1);
    assert_int_equal(it->side[0].rows, 1);
    assert_int_equal(it->side[1].rows, 1); /* the Reduce_bwd row is not aten::sum's forward work */
    assert_close(it->side[0].bytes_us, 500);
    assert_close(it->rate.base, 0.08388608);
    assert_close(it->rate.var, 0.1048576);
    /* vector_fp32 has no peak in the description; the bandwidth is all it needs */
    assert_close(it->pct_of_peak.base, with_arch ? 4.194304 : NAN);
    assert_close(it->pct_of_peak.var, with_arch ? 5.24288 : NAN);

    assert_string_equal(e->source[0], "unified_perf_summary");
    assert_string_equal(e->source[1], family_variant ? "perf sheets" : "unified_perf_summary");
}

static void test_efficiency_from_unified(void **state)
{
    (void)state;
    tl_gpu_arch a = test_arch();
    run *r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, &a);
    check_lines(&r->e, 1, 0);
    assert_string_equal(r->e.gpu, "TESTGPU");
    run_free(r);
    r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, NULL);
    check_lines(&r->e, 0, 0);
    assert_null(r->e.gpu);
    run_free(r);
}

/* With the comparison's figures (as tlcompare runs): the same lines, and every sheet read
 * once; without them (or when ops_all did not run), read for the lines. */
static void test_efficiency_from_the_comparisons_reads(void **state)
{
    (void)state;
    tl_gpu_arch a = test_arch();
    run *r = run_new_with("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, &a, 1);
    check_lines(&r->e, 1, 0);
    assert_int_equal(unified_reads[0], 1);
    assert_int_equal(unified_reads[1], 1);
    run_free(r);
    r = run_new_with("perf/pbase", "perf/pnew", TL_GROUP_OPS_SUMMARY | TL_GROUP_GPU_TIMELINE, 0, &a, 1);
    check_lines(&r->e, 1, 0);
    assert_int_equal(unified_reads[0], 1);
    assert_int_equal(unified_reads[1], 1);
    run_free(r);
    r = run_new_with("perf/pbase", "perf/fam_new", TL_GROUP_ALL, 0, &a, 1);
    check_lines(&r->e, 1, 1);
    run_free(r);
    r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, &a);
    assert_int_equal(unified_reads[0], 2);
    run_free(r);
}

static void test_efficiency_from_family_sheets(void **state)
{
    (void)state;
    tl_gpu_arch a = test_arch();
    /* fam_new has the perf sheets of pnew but no unified_perf_summary: the same answers */
    run *r = run_new("perf/pbase", "perf/fam_new", TL_GROUP_ALL, 0, &a);
    check_lines(&r->e, 1, 1);
    run_free(r);
}

static void test_efficiency_without_perf_sheets(void **state)
{
    (void)state;
    run *r = run_new("summary/base", "summary/new", TL_GROUP_ALL, 0, NULL);
    assert_int_equal(r->e.any_source, 0);
    assert_int_equal(r->e.variants[0].n, 0);
    tl_buf j = {0};
    tl_summary_json(&r->s, &j);
    assert_null(strstr(tl_buf_cstr(&j), "efficiency"));
    tl_buf_free(&j);
    run_free(r);
}

static void test_efficiency_renderings(void **state)
{
    (void)state;
    tl_gpu_arch a = test_arch();
    run *r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, &a);
    tl_buf md = {0}, js = {0};
    tl_summary_markdown(&r->s, &md);
    const char *m = tl_buf_cstr(&md);
    assert_non_null(strstr(m, "**Achieved** (from unified_perf_summary; % of TESTGPU)\n\n"
                              "| op | base | new | unit | delta % | base % of peak | new % of peak |\n"));
    assert_non_null(strstr(m, "| `aten::layer_norm` | 1.05 | 0.839 | TB/s | -20.0% | 52.4% | 41.9% |\n"
                              "| `aten::mm` | 400.0 | 500.0 | TFLOPS/s | +25.0% | 50.0% | 62.5% |\n"
                              "| `aten::sum` | 0.084 | 0.105 | TB/s | +25.0% | 4.2% | 5.2% |\n"));
    tl_summary_json(&r->s, &js);
    const char *j = tl_buf_cstr(&js);
    assert_non_null(strstr(j, ",\n      \"efficiency\": [\n        {\"name\": \"aten::layer_norm\""));
    assert_non_null(strstr(j, "{\"name\": \"aten::mm\", \"ops\": [\"aten::mm\", \"aten::mm\"], \"unit\": \"TFLOPS/s\", "
                              "\"rate\": {\"baseline\": 400.0, \"variant\": 500.0, \"pct\": 25.0}, "
                              "\"pct_of_peak\": {\"baseline\": 50.0, \"variant\": 62.5, \"pct\": 25.0}, "
                              "\"baseline\": {\"rows\": 2, \"gflops\": 800.0, \"data_moved_mb\": 420.0, "
                              "\"kernel_time_us\": 2000.0}, \"variant\": {\"rows\": 2, \"gflops\": 800.0, "
                              "\"data_moved_mb\": 420.0, \"kernel_time_us\": 1600.0}}"));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tl_summary_print(&r->s, f, 0);
    fclose(f);
    assert_non_null(strstr(text, "  achieved (base -> new, from unified_perf_summary; % of TESTGPU)\n"));
    assert_non_null(strstr(text, "    aten::layer_norm       1.05 -> 0.839     TB/s      -20.0%  52.4% -> 41.9% of peak\n"
                                 "    aten::mm              400.0 -> 500.0     TFLOPS/s  +25.0%  50.0% -> 62.5% of peak\n"
                                 "    aten::sum             0.084 -> 0.105     TB/s      +25.0%  4.2% -> 5.2% of peak\n"));
    free(text);
    tl_summary_sheet *sh = tl_summary_sheet_build(&r->s, &r->arena);
    const tl_table *t = NULL;
    for (size_t i = 0; i < sh->nblocks; i++)
        if (strcmp(sh->blocks[i].title, "new vs base: achieved TFLOPS/s and TB/s") == 0)
            t = sh->blocks[i].table;
    assert_non_null(t);
    assert_int_equal(t->nrows, 3);
    assert_int_equal(t->ncols, 7);
    assert_str_cell(t, "op", 1, "aten::mm");
    assert_str_cell(t, "unit", 1, "TFLOPS/s");
    assert_close(num_cell(t, "base", 1), 400);
    assert_close(num_cell(t, "new % of peak", 1), 62.5);
    tl_summary_sheet_free(sh);
    tl_buf_free(&md);
    tl_buf_free(&js);
    run_free(r);
}

/* The LCA lines take each side's op, and the LCA's own name when that op has no figures. */
static void test_efficiency_lca_lines(void **state)
{
    (void)state;
    run *r = run_new("perf/pbase", "perf/pnew", TL_GROUP_ALL, 0, NULL);
    tl_lca_item top[3] = {
        {.lca = "aten::linear", .node = "aten::linear", .ops1 = "aten::mm", .ops2 = "aten::mm"},
        {.lca = "aten::layer_norm", .node = "aten::layer_norm", .ops1 = "aten::native_layer_norm", .ops2 = "aten::layer_norm"},
        {.lca = "aten::dropout", .node = "aten::dropout", .ops1 = "aten::bernoulli_", .ops2 = "aten::mul"},
    };
    tl_lca_summary lca = {.tag1 = "base", .tag2 = "new", .top = top, .ntop = 3};
    r->s.lca = &lca;
    tl_efficiency_free(&r->e);
    tl_efficiency_build(&r->e, &r->s, r->reports, 2, NULL, &r->arena);
    const tl_eff_list *l = &r->e.lca;
    assert_int_equal(l->n, 2); /* dropout: no figures on either side */
    const tl_eff_item *it = item(l, 0, "aten::linear");
    assert_string_equal(it->op1, "aten::mm");
    assert_close(it->rate.base, 400);
    assert_close(it->rate.var, 500);
    it = item(l, 1, "aten::layer_norm");
    assert_string_equal(it->op1, "aten::layer_norm");
    assert_string_equal(it->op2, "aten::layer_norm");
    assert_close(it->rate.base, 1.048576);
    tl_buf js = {0};
    tl_summary_json(&r->s, &js);
    assert_non_null(strstr(tl_buf_cstr(&js), ",\n  \"lca_efficiency\": [\n    {\"name\": \"aten::linear\", \"ops\": "
                                             "[\"aten::mm\", \"aten::mm\"], \"unit\": \"TFLOPS/s\""));
    tl_buf_free(&js);
    r->s.lca = NULL;
    run_free(r);
}

/* ---- the command ---------------------------------------------------------------------- */

static void test_cli_sheets_perf(void **state)
{
    (void)state;
    const char *bin = getenv("TLCOMPARE");
    if (!bin || !*bin) {
        print_message("TLCOMPARE not set: skipped\n");
        return;
    }
    char *tmp = tt_tmpdir();
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' perf/pbase perf/pnew --names base new --sheets gpu_timeline perf -o '%s/o.xlsx' -v "
             ">'%s/out' 2>'%s/err'",
             fixture(""), bin, tmp, tmp, tmp);
    int st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(cmd, sizeof cmd,
             "grep -c \"^Wrote sheet 'Normalization_intersect_new' with 1 row × 30 columns$\" '%s/out' >/dev/null && "
             "grep -c \"^Wrote sheet 'gpu_timeline'\" '%s/out' >/dev/null && "
             "! grep GEMM '%s/out' && "
             "grep -c \"report 'new' (perf/pnew) has no sheet 'Reduce_fwd'; skipping it\" '%s/err' >/dev/null",
             tmp, tmp, tmp, tmp);
    st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    tt_rmrf(tmp);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perf_group_splits_the_shared_sheets),
        cmocka_unit_test(test_all_is_the_references_set),
        cmocka_unit_test(test_perf_named_without_sheets_is_an_error),
        cmocka_unit_test(test_efficiency_from_unified),
        cmocka_unit_test(test_efficiency_from_family_sheets),
        cmocka_unit_test(test_efficiency_from_the_comparisons_reads),
        cmocka_unit_test(test_efficiency_without_perf_sheets),
        cmocka_unit_test(test_efficiency_renderings),
        cmocka_unit_test(test_efficiency_lca_lines),
        cmocka_unit_test(test_cli_sheets_perf),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
