/*
 * test_paired.c - verdicts on two traces from the ops' calls paired through the alignment
 * (tl_noise_add_calls, tl_noise_pair_calls): a uniform 10% slowdown of every GPU event (ts
 * and dur stretched, or dur only) is found on every op of 1 ms and 10 calls or more, with
 * an interval that holds +10%, and fails the gate, where calls that vary 40% would hide it
 * from an unpaired test; on seeded synthetic calls, 100 null pairs flag at most 8 and a
 * planted 5% regression of one op is found in at least 95 of 100.
 */
#include "testutil.h"

#include "base/stats.h"
#include "summary/verdict.h"

#include <math.h>

static char tool_dir[4096]; /* where tlcompare and tools/gentrace are */

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

/* ---- synthetic paired calls ------------------------------------------------------------------ */

static const char *const tags2[] = {"base", "new"};

enum { NOPS = 10, NSHAPES = 3, PER_SHAPE = 8 };
static const char *const op_names[NOPS] = {"op0", "op1", "op2", "op3", "op4", "op5", "op6", "op7", "op8", "op9"};

/*
 * One pair of runs: NOPS ops of NSHAPES argument sets (10, 60 and 300 µs a call: the shapes
 * differ far more than the noise), PER_SHAPE calls each, every call off by its own factor
 * of CV `cv` on each side; op0 `planted` slower on the variant.  Returns a bit mask: 1 op0
 * found slower, 2 another op flagged.
 */
static int one_pair(double planted, double cv)
{
    enum { NCALLS = NOPS * NSHAPES * PER_SHAPE };
    tl_diff_call *c = calloc(NCALLS, sizeof *c);
    tl_summary_item items[NOPS];
    memset(items, 0, sizeof items);
    size_t k = 0;
    for (int op = 0; op < NOPS; op++) {
        double tb = 0, tv = 0;
        for (int s = 0; s < NSHAPES; s++) {
            double mean = s == 0 ? 10 : s == 1 ? 60 : 300;
            for (int i = 0; i < PER_SHAPE; i++) {
                double a = mean * (1 + cv * gauss()), b = mean * (1 + cv * gauss()) * (op == 0 ? 1 + planted : 1);
                tb += a, tv += b;
                c[k++] = (tl_diff_call){op_names[op], (uint64_t)s, a, b, 0, 0};
            }
        }
        items[op].name = op_names[op];
        items[op].time_ms = (tl_delta){tb / 1e3, tv / 1e3};
        items[op].count = (tl_delta){NSHAPES * PER_SHAPE, NSHAPES * PER_SHAPE};
    }
    tl_noise *nz = tl_noise_new(tags2, 2);
    tl_noise_add_calls(nz, c, k);
    size_t tested = tl_verdicts_judge(nz, 1, items, NOPS, 0, 0.95, 0);
    assert_int_equal(tested, NOPS);
    int found = 0;
    for (int op = 0; op < NOPS; op++) {
        if (op == 0 && items[op].verdict == TL_VERDICT_SLOWER)
            found |= 1;
        else if (op != 0 && items[op].verdict != TL_VERDICT_WITHIN_NOISE)
            found |= 2;
    }
    char basis[192];
    tl_verdict_basis(nz, 1, items, NOPS, basis, sizeof basis);
    assert_string_equal(basis, "paired calls (the same op at the same place of both call trees), 1 run per side");
    tl_noise_free(nz);
    free(c);
    return found;
}

/* The error rates are measured on NPAIRS pairs, ten times the 100 of the claims, so that
 * the check tests the rate (at most 8%, found in 95%) rather than one seed's luck: of 100
 * pairs at a true 5%, 10 flag something about 3% of the time. */
enum { NPAIRS = 1000 };

/* Null pairs (per-call CV 2%): at most 8% flag any op. */
static void test_paired_null_flags_at_most_8_of_100(void **state)
{
    (void)state;
    rng = 2801;
    int flagged = 0;
    for (int i = 0; i < NPAIRS; i++)
        flagged += one_pair(0, 0.02) != 0;
    print_message("paired calls, null: %d of %d pairs flag an op\n", flagged, NPAIRS);
    assert_true(flagged <= NPAIRS * 8 / 100);
}

/* A planted +5% on one op (24 calls of 3 shapes, per-call CV 2%): found in at least 95%
 * of the pairs, another op flagged in at most 8%. */
static void test_paired_planted_5pct_found_in_95_of_100(void **state)
{
    (void)state;
    rng = 2802;
    int found = 0, other = 0;
    for (int i = 0; i < NPAIRS; i++) {
        int r = one_pair(0.05, 0.02);
        found += r & 1;
        other += (r & 2) != 0;
    }
    print_message("paired calls, +5%%: found in %d of %d, another op in %d\n", found, NPAIRS, other);
    assert_true(found >= NPAIRS * 95 / 100);
    assert_true(other <= NPAIRS * 8 / 100);
}

/* Calls on one side only are no pairs: no paired verdict (and here no other noise known:
 * untested); paired calls that do not add up to the op's times are not its calls. */
static void test_unpaired_calls_are_not_paired(void **state)
{
    (void)state;
    rng = 2803;
    enum { N = 4 };
    tl_diff_call c[2 * N];
    for (int i = 0; i < N; i++) {
        c[2 * i] = (tl_diff_call){"x", 1, 100, NAN, 0, NAN};
        c[2 * i + 1] = (tl_diff_call){"x", 1, NAN, 110, NAN, 0};
    }
    tl_summary_item it = {.name = "x", .time_ms = {0.4, 0.44}, .count = {N, N}};
    tl_noise *nz = tl_noise_new(tags2, 2);
    tl_noise_add_calls(nz, c, 2 * N);
    tl_verdicts_judge(nz, 1, &it, 1, 0, 0.95, 0);
    assert_false(it.paired);
    assert_int_equal(it.verdict, TL_VERDICT_NONE);
    tl_noise_free(nz);
    /* paired calls whose times do not add up to the item's (another attribution): unpaired */
    tl_diff_call p[N];
    for (int i = 0; i < N; i++)
        p[i] = (tl_diff_call){"y", 1, 100 + i, 110 + i, 0, 0};
    tl_summary_item y = {.name = "y", .time_ms = {0.406, 0.5}, .count = {N, N}};
    nz = tl_noise_new(tags2, 2);
    tl_noise_add_calls(nz, p, N);
    tl_verdicts_judge(nz, 1, &y, 1, 0, 0.95, 0);
    assert_false(y.paired);
    tl_noise_free(nz);
    /* the same calls, consistent: paired; the differences (10, 10, 10, 10) relative to a
     * 101.5 µs call have no spread: +10% exactly */
    y.time_ms = (tl_delta){0.406, 0.446};
    nz = tl_noise_new(tags2, 2);
    tl_noise_add_calls(nz, p, N);
    tl_verdicts_judge(nz, 1, &y, 1, 0, 0.95, 0);
    assert_true(y.paired && y.verdict == TL_VERDICT_SLOWER);
    assert_true(fabs(y.ci_lo - 0.04) < 1e-9 && fabs(y.ci_hi - 0.04) < 1e-9);
    tl_noise_free(nz);
}

/* ---- a uniform 10% slowdown, end to end ------------------------------------------------------ */

/* The JSON summary's check, in Python: every listed op of >= 1 ms and >= 10 calls is slower
 * with an interval holding +10%; at least `want` of them; the basis is the pairs'. */
static const char check_py[] =
    "import json, sys\n"
    "j = json.load(open(sys.argv[1])); v = j['variants'][0]; want = int(sys.argv[2])\n"
    "big = [r for r in v['regressions'] + v['improvements'] if r['time_ms']['baseline'] >= 1 and r['count']['baseline'] >= 10]\n"
    "bad = []\n"
    "if not v['verdicts']['basis'].startswith('paired calls'): bad.append('basis ' + v['verdicts']['basis'])\n"
    "if len(big) < want: bad.append('only %d ops of 1 ms and 10 calls listed' % len(big))\n"
    "for r in big:\n"
    "    d = 0.1 * r['time_ms']['baseline']\n"
    "    if r['verdict'] != 'slower' or not (r['ci_low'] <= d <= r['ci_high']): bad.append('%s: %s [%g, %g] for %g' % (r['name'], r['verdict'], r['ci_low'], r['ci_high'], d))\n"
    "if bad: sys.exit('; '.join(bad))\n";

static void test_uniform_10pct_slowdown(void **state)
{
    (void)state;
    char *dir = tt_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/check.py", dir);
    tt_write_file(path, check_py, strlen(check_py));
    char cmd[8192];
    /* calls that vary 40%: an unpaired test finds none of these ops slower */
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/gentrace' --layers 2 --steps 4 --seed 5 --gpu-cv 40 -o a.json", dir,
             tool_dir);
    assert_int_equal(system(cmd), 0);
    for (int ts = 0; ts < 2; ts++) {
        tt_stretch_gpu(dir, "a.json", "b.json", ts);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && '%s/tlcompare' a.json b.json --names a b -q -o o.xlsx --summary-json s.json "
                 "--fail-on-regression 5 2>/dev/null",
                 dir, tool_dir);
        int st = system(cmd);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3); /* the gate fails */
        snprintf(cmd, sizeof cmd, "cd '%s' && python3 check.py s.json 3", dir);
        assert_int_equal(system(cmd), 0);
    }
    tt_rmrf(dir);
    free(dir);
}

int main(void)
{
    tt_tool_dir(tool_dir, sizeof tool_dir, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paired_null_flags_at_most_8_of_100),
        cmocka_unit_test(test_paired_planted_5pct_found_in_95_of_100),
        cmocka_unit_test(test_unpaired_calls_are_not_paired),
        cmocka_unit_test(test_uniform_10pct_slowdown),
    };
    return cmocka_run_group_tests_name("paired", tests, NULL, NULL);
}
