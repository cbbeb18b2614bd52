/*
 * test_strata.c - verdicts on two reports: an op's rows in ops_unique_args (one per
 * argument set) are strata, each with its own mean and spread, and the op's change and its
 * variance are combined over them, never across shapes.
 *
 *  - Seeded synthetic ops of three shapes (10 µs x 40 calls, 200 µs x 12, 3 ms x 8; the
 *    shapes differ far more than the calls of one shape, CV 2%): 100 null pairs of 50 ops
 *    flag at most 8; a planted 5% regression of one op is found in at least 95 of 100.
 *  - A uniform 10% slowdown end to end: a trace from tools/gentrace and a copy with every GPU
 *    event's dur (and ts) stretched by 1.1, each made a report by tlreport (a CSV directory
 *    and a workbook), then compared as reports: every op of 1 ms and 10 calls or more is
 *    `slower` with an interval holding +10%, the verdict line says "per-shape strata", and
 *    the gate fails.
 * Both fail when the variance is pooled across shapes (the spread between argument sets
 * counted as noise).
 */
#include "testutil.h"

#include "base/stats.h"
#include "read/csv_read.h"
#include "summary/verdict.h"

#include <math.h>

static char tool_dir[4096]; /* where tlcompare, tlreport and tools/gentrace are */
static tl_arena arena;

/* ---- seeded noise -------------------------------------------------------------------------- */

static uint64_t rng;

static uint64_t next_u64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(void) { return ((double)(next_u64() >> 11) + 0.5) / 9007199254740992.0; }

static double gauss(void) { return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01()); }

/* ---- synthetic strata ---------------------------------------------------------------------- */

static const char *const tags2[] = {"base", "new"};

enum { NOPS = 50, NPAIRS = 100, NSHAPES = 3 };
static const double shape_us[NSHAPES] = {10, 200, 3000};
static const int shape_calls[NSHAPES] = {40, 12, 8};

static int null_put(void *ctx, const tl_result *r, tl_error *err)
{
    (void)ctx;
    (void)err;
    tl_table_free(r->table);
    return 0;
}

/* One side's calls of one shape: appends "count,mean,std" to b, returns their total (µs). */
static double one_shape(tl_buf *b, double mean_us, double cv, int n)
{
    tl_moments m = {0, 0, 0};
    double total = 0;
    for (int i = 0; i < n; i++) {
        double x = mean_us * (1 + cv * gauss());
        tl_moments_add(&m, x);
        total += x;
    }
    tl_buf_printf(b, "%d,%.17g,%.17g", n, m.mean, sqrt(tl_moments_var(&m)));
    return total;
}

/*
 * One comparison of NOPS ops of NSHAPES shapes each (each op's sizes scaled by its own
 * factor), per-call CV `cv` on both sides, op 0 `planted` times slower in the variant; the
 * rows pass through the noise tap as ops_unique_args' intersect result.  Returns a bit mask:
 * 1 op 0 found slower, 2 another op flagged.
 */
static int one_pair(double planted, double cv)
{
    tl_buf ua = {0};
    tl_buf_adds(&ua, "name,arg,base::operation_count,base::total_direct_kernel_time_mean,"
                     "base::total_direct_kernel_time_std,new::operation_count,new::total_direct_kernel_time_mean,"
                     "new::total_direct_kernel_time_std\n");
    tl_summary_item items[NOPS];
    memset(items, 0, sizeof items);
    for (int op = 0; op < NOPS; op++) {
        double size = 0.2 + 4 * uniform01(), tb = 0, tv = 0;
        int calls = 0;
        for (int s = 0; s < NSHAPES; s++) {
            tl_buf_printf(&ua, "op%d,%d,", op, s);
            tb += one_shape(&ua, shape_us[s] * size, cv, shape_calls[s]);
            tl_buf_adds(&ua, ",");
            tv += one_shape(&ua, shape_us[s] * size * (op == 0 ? planted : 1), cv, shape_calls[s]);
            tl_buf_adds(&ua, "\n");
            calls += shape_calls[s];
        }
        items[op].name = tl_arena_printf(&arena, "op%d", op);
        items[op].time_ms = (tl_delta){tb / 1000, tv / 1000};
        items[op].count = (tl_delta){calls, calls};
        items[op].per_call_ms = (tl_delta){tb / 1000 / calls, tv / 1000 / calls};
    }
    tl_noise *nz = tl_noise_new(tags2, 2);
    tl_error err = {0};
    tl_table *t = tl_csv_parse(ua.data, ua.len, "ua.csv", &arena, &err);
    assert_non_null(t);
    tl_sink next = {null_put, NULL, NULL};
    tl_sink tap = tl_noise_tap(nz, &next);
    tl_result r = {"ops_unique_args_intersect_new", t, NULL, t->nrows, t->ncols, NULL};
    assert_int_equal(tap.put(tap.ctx, &r, &err), 0);
    tl_buf_free(&ua);
    assert_int_equal(tl_verdicts_judge(nz, 1, items, NOPS, 0, 0.95, 0), NOPS);
    char basis[192];
    tl_verdict_basis(nz, 1, items, NOPS, basis, sizeof basis);
    assert_string_equal(basis, "per-shape strata (each op's calls within their argument sets), 1 run per side");
    int found = 0;
    for (int op = 0; op < NOPS; op++) {
        if (op == 0 && items[op].verdict == TL_VERDICT_SLOWER)
            found |= 1;
        else if (op != 0 && items[op].verdict != TL_VERDICT_WITHIN_NOISE)
            found |= 2;
    }
    tl_noise_free(nz);
    return found;
}

static void test_strata_null_flags_at_most_8_of_100(void **state)
{
    (void)state;
    rng = 40;
    int flagged = 0;
    for (int pair = 0; pair < NPAIRS; pair++)
        flagged += (one_pair(1.0, 0.02) & 2) != 0;
    print_message("strata, null pairs: %d of %d flag a change\n", flagged, NPAIRS);
    assert_true(flagged <= 8);
}

static void test_strata_planted_5pct_found_in_95_of_100(void **state)
{
    (void)state;
    rng = 41;
    int found = 0, other = 0;
    for (int pair = 0; pair < NPAIRS; pair++) {
        int f = one_pair(1.05, 0.02);
        found += f & 1;
        other += (f & 2) != 0;
    }
    print_message("strata, planted +5%% (3 shapes, CV 2%%): found in %d of %d, another op flagged in %d\n", found,
                  NPAIRS, other);
    assert_true(found >= 95);
    assert_true(other <= 8);
}

/* ---- a uniform 10% slowdown, compared as reports -------------------------------------------- */

/* The JSON summary's check: every op of >= 1 ms and >= 10 calls in the baseline report's
 * ops_summary (at least `want` of them) is listed slower with an interval holding +10%
 * (`ts`: the whole timeline stretched) or its own change (`dur`: an op whose kernels overlap
 * grows less, as TraceLens merges its kernels' intervals: aten::_flash_attention_backward
 * +7.6%); the basis is the strata's. */
static const char check_py[] =
    "import csv, json, sys\n"
    "j = json.load(open(sys.argv[1])); v = j['variants'][0]; want = int(sys.argv[2])\n"
    "ops = [r['name'] for r in csv.DictReader(open('ra/ops_summary.csv')) if float(r['total_direct_kernel_time_ms']) >= 1 and int(r['Count']) >= 10]\n"
    "listed = {r['name']: r for r in v['regressions'] + v['improvements']}\n"
    "bad = []\n"
    "if not v['verdicts']['basis'].startswith('per-shape strata'): bad.append('basis ' + v['verdicts']['basis'])\n"
    "if len(ops) < want: bad.append('only %d ops of 1 ms and 10 calls' % len(ops))\n"
    "for name in ops:\n"
    "    r = listed.get(name)\n"
    "    if r is None: bad.append(name + ' not listed'); continue\n"
    "    d = 0.1 * r['time_ms']['baseline'] if sys.argv[3] == 'ts' else r['time_ms']['delta']\n"
    "    if r['verdict'] != 'slower' or not (r['ci_low'] <= d <= r['ci_high']): bad.append('%s: %s [%g, %g] for %g' % (name, r['verdict'], r['ci_low'], r['ci_high'], d))\n"
    "if bad: sys.exit('; '.join(bad))\n";

static void test_uniform_10pct_slowdown_of_reports(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/check.py", dir);
    tt_write_file(path, check_py, strlen(check_py));
    char cmd[16384];
    /* the default per-call noise (uniform +-6%), 6 layers: 9 ops of 1 ms and 10 calls, of several shapes each */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s/tools/gentrace' --layers 6 --steps 6 --seed 5 -o a.json && "
             "'%s/tlreport' a.json -q --output_csvs_dir ra -o ra.xlsx",
             dir, tool_dir, tool_dir);
    assert_int_equal(system(cmd), 0);
    for (int ts = 0; ts < 2; ts++) {
        tt_stretch_gpu(dir, "a.json", "b.json", ts);
        snprintf(cmd, sizeof cmd, "cd '%s' && rm -rf rb && '%s/tlreport' b.json -q --output_csvs_dir rb -o rb.xlsx",
                 dir, tool_dir);
        assert_int_equal(system(cmd), 0);
        /* CSV directories, then workbooks */
        for (int xlsx = 0; xlsx < 2; xlsx++) {
            snprintf(cmd, sizeof cmd,
                     "cd '%s' && '%s/tlcompare' %s %s --names a b -q -o o.xlsx --summary-json s.json --top 100 "
                     "--fail-on-regression 5 2>/dev/null",
                     dir, tool_dir, xlsx ? "ra.xlsx" : "ra", xlsx ? "rb.xlsx" : "rb");
            int st = system(cmd);
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3); /* the gate fails */
            snprintf(cmd, sizeof cmd, "cd '%s' && python3 check.py s.json 9 %s", dir, ts ? "ts" : "dur");
            assert_int_equal(system(cmd), 0);
        }
    }
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tt_tool_dir(tool_dir, sizeof tool_dir, NULL);
    tl_arena_init(&arena);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strata_null_flags_at_most_8_of_100),
        cmocka_unit_test(test_strata_planted_5pct_found_in_95_of_100),
        cmocka_unit_test(test_uniform_10pct_slowdown_of_reports),
    };
    int rc = cmocka_run_group_tests_name("strata", tests, NULL, NULL);
    tl_arena_free(&arena);
    return rc;
}
