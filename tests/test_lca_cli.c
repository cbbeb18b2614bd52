/*
 * test_lca_cli.c - the summary's comparison by lowest common op, from the command line,
 * on trace pairs that tools/gentrace makes (build/tools/gentrace next to $TLCOMPARE):
 * what the lines cover and where the rest is, graph replay, a capture run, the one-sided
 * LCAs of one name, LCAs named by their CPU op, a self-comparison.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tlcompare;
static char gentrace[4096];

typedef struct fx {
    char *dir;
} fx;

static void sh(fx *f, const char *cmd)
{
    char c[12000];
    snprintf(c, sizeof c, "cd '%s' && %s", f->dir, cmd);
    assert_int_equal(system(c), 0);
}

/* gentrace into the fixture's directory */
static void gen(fx *f, const char *args, const char *out)
{
    char c[6000];
    snprintf(c, sizeof c, "'%s' --layers 2 %s -o %s", gentrace, args, out);
    sh(f, c);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tt_tmpdir();
    *state = f;
    gen(f, "--flavour rocm --shape graph-replay", "replay_mi300.json.gz");
    gen(f, "--flavour cuda --shape graph-replay", "replay_h100.json.gz");
    gen(f, "--flavour cuda --shape capture-only", "capture.json.gz");
    gen(f, "--flavour rocm --shape one-sided-lca", "moved_mi300.json.gz");
    gen(f, "--flavour cuda --shape one-sided-lca", "moved_h100.json.gz");
    gen(f, "--flavour cuda --seed 1", "run1.json.gz");
    gen(f, "--flavour cuda --seed 2 --slow aten::mm=20", "run2.json.gz"); /* a change to list */
    gen(f, "--flavour cuda --seed 3", "run3.json.gz");                    /* the same, another run */
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    tt_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static int run(fx *f, const char *args)
{ return tt_run_in(f->dir, tlcompare, args); }

static char *slurp(fx *f, const char *name)
{
    char *s = tt_slurp_in(f->dir, name);
    assert_non_null(s);
    return s;
}

/* The LCA section of the terminal summary (from its heading to the next blank line). */
static char *lca_section(char *out)
{
    char *s = strstr(out, " by lowest common op");
    assert_non_null(s);
    while (s > out && s[-1] != '\n')
        s--;
    char *e = strstr(s, "\n\n");
    if (e)
        e[1] = '\0';
    return s;
}

static void test_graph_replay_says_what_is_covered(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "replay_mi300.json.gz replay_h100.json.gz -o g.xlsx --summary-md g.md "
                            "--summary-json g.json"), 0);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    assert_non_null(strstr(s, "replay_mi300 -> replay_h100 by lowest common op (2 aligned, 2 distinct"));
    /* the two small LCAs cover about 1% of each side; the graph launch holds the rest */
    assert_non_null(strstr(s, "\n  GPU time under these ops: replay_mi300 0.008 of 0.399 ms (1.9%), replay_h100 0.007 of 0.326 ms (2.2%)\n"));
    assert_non_null(strstr(s, "\n  not under them: replay_mi300: 0.391 ms under graph launches; replay_h100: 0.318 ms under graph launches\n"));
    assert_non_null(strstr(s, "\n  low coverage: the lines below account for 1.9% of replay_mi300's GPU time and 2.2% of replay_h100's"));
    assert_non_null(strstr(s, "\n  graph replay: 98.1% of replay_mi300's and 97.8% of replay_h100's GPU time"));
    assert_non_null(strstr(s, "GPU time is under graph launches (cudaGraphLaunch / hipGraphLaunch), which no CPU op "
                              "attributes: give the trace's capture folder (TRACE@CAPTURE_DIR)"));
    /* the column labels: baseline -> variant, as on every line */
    assert_non_null(strstr(s, "lowest common op                                             "
                              "replay_mi300 -> replay_h100 (ms), kernels\n"));
    free(out);
    char *md = slurp(f, "g.md");
    assert_non_null(strstr(md, "- **low coverage**: the lines below account for 1.9% of `replay_mi300`"));
    assert_non_null(strstr(md, "- **graph replay**: 98.1% of `replay_mi300`"));
    assert_non_null(strstr(md, "| lowest common op | `replay_mi300` (ms) | `replay_h100` (ms) |"));
    free(md);
    char *js = slurp(f, "g.json");
    assert_non_null(strstr(js, "\"coverage\": {\"baseline\": {\"busy_ms\": 0.399"));
    assert_non_null(strstr(js, "\"graph_replay\": true}"));
    assert_non_null(strstr(js, "\"low\": true}"));
    free(js);
}

static void test_capture_run_is_warned_about(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "capture.json.gz replay_h100.json.gz -o c.xlsx"), 0);
    char *err = slurp(f, "err.txt");
    assert_non_null(strstr(err, "tlcompare: warning: 'capture' has almost no GPU work (busy_time 0.011 ms): a graph "
                                "capture trace"));
    assert_null(strstr(err, "'replay_h100' has almost no GPU work"));
    free(err);
}

static void test_one_sided_pair_is_one_line(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "moved_mi300.json.gz moved_h100.json.gz -o m.xlsx --top 100"), 0);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    /* the kernel of aten::sub moved from one aten::sub to the other: one line, labelled */
    assert_non_null(strstr(s, "    -0.003 ms    -24.4%          aten::sub (not aligned: under different ops on each side)"
                              "    0.012 -> 0.009, 1 -> 1 kernel\n"));
    assert_null(strstr(s, "-100.0%  aten::sub"));
    assert_null(strstr(s, "new  aten::sub"));
    free(out);
}

static void test_lcas_named_by_their_cpu_op(void **state)
{
    fx *f = *state;
    /* two runs of one flavour: their kernels match, so the diff's LCAs are kernel nodes */
    assert_int_equal(run(f, "run1.json.gz run2.json.gz -o r.xlsx --summary-json r.json --top 100"), 0);
    char *js = slurp(f, "r.json");
    assert_non_null(strstr(js, "{\"lca\": \"aten::mm\", \"node\": \"sm90_xmma_gemm_"));
    free(js);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    assert_non_null(strstr(s, "  aten::mm (x"));
    assert_null(strstr(s, "sm90_xmma"));
    assert_null(strstr(s, "void at::native"));
    assert_null(strstr(s, "Memcpy"));
    assert_null(strstr(s, "LaunchKernel"));
    /* and every line is one a terminal shows whole */
    for (char *l = s; *l;) {
        char *e = strchr(l, '\n');
        assert_non_null(e);
        assert_true(e - l < 240);
        l = e + 1;
    }
    free(out);
}

static void test_self_comparison_says_no_changes(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "run1.json.gz run1.json.gz -o s.xlsx"), 0);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    assert_non_null(strstr(s, "\n  no changes: every lowest common op takes the same time on both sides\n"));
    assert_null(strstr(s, "+0.000 ms"));
    free(out);
}

/* The workbook's summary sheet: kernel and call counts as whole numbers, per-call times
 * in µs with their format (read back from the sheet's XML with Python's zipfile). */
static void test_summary_sheet_numbers(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "moved_mi300.json.gz moved_h100.json.gz -q -o w.xlsx"), 0);
    static const char py[] =
        "import re, sys, zipfile\n"
        "x = zipfile.ZipFile('w.xlsx').read('xl/worksheets/sheet1.xml').decode()\n"
        "head, style = {}, {}\n"
        "for col, row, s, body in re.findall(r'<c r=\"([A-Z]+)([0-9]+)\"(?: s=\"([0-9]+)\")?[^>]*>(.*?)</c>', x):\n"
        "    t = re.search(r'<t[^>]*>(.*?)</t>', body)\n"
        "    if t: head.setdefault(t.group(1), []).append((col, int(row)))\n"
        "    elif '<v>' in body: style[(col, int(row))] = s or '0'\n"
        "def below(name, want):\n"
        "    (col, row), = head[name][:1]\n"
        "    got = [style[(col, r)] for r in range(row + 1, row + 3) if (col, r) in style]\n"
        "    if not got or set(got) != {want}: sys.exit('%s: styles %s, want %s' % (name, got, want))\n"
        "below('moved_mi300 kernels', '5')\n"
        "below('moved_h100 kernels', '5')\n"
        "below('moved_mi300 per call (\\u00b5s)', '4')\n"
        "below('per call delta (\\u00b5s)', '4')\n"
        "below('moved_mi300 calls', '5')\n";
    char path[4096];
    snprintf(path, sizeof path, "%s/sheet.py", f->dir);
    tt_write_file(path, py, strlen(py));
    sh(f, "python3 sheet.py");
}

/* Each kind of LCA gets an interval and a verdict from its pairs: two runs of one
 * configuration show no change and pass a 0% gate (their raw deltas do not); aten::mm made
 * 20% slower is listed as slower, with its interval, in every rendering. */
static void test_lca_verdicts(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "run1.json.gz run3.json.gz -o n.xlsx --fail-on-regression 0 --min-time-ms 0"), 0);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    assert_non_null(strstr(s, " within noise)\n"));
    assert_non_null(strstr(s, "\n  no changes larger than the noise\n"));
    free(out);
    out = slurp(f, "out.txt");
    assert_non_null(strstr(out, "  verdicts: the spread of paired LCAs (the same op at the same place of both traces"));
    free(out);

    assert_int_equal(run(f, "run1.json.gz run2.json.gz -o v.xlsx --summary-json v.json --summary-md v.md"), 0);
    char *js = slurp(f, "v.json");
    char *mm = strstr(js, "{\"lca\": \"aten::mm\"");
    assert_non_null(mm);
    char *end = strchr(mm, '\n');
    assert_non_null(end);
    *end = '\0';
    assert_non_null(strstr(mm, "\"verdict\": \"slower\""));
    char *lo = strstr(mm, "\"ci_low\": ");
    assert_non_null(lo);
    assert_true(strtod(lo + 10, NULL) > 0);
    assert_non_null(strstr(js, "\"verdicts\": {\"basis\": \"paired LCAs, 1 run per side\""));
    free(js);
    out = slurp(f, "out.txt");
    s = lca_section(out);
    char *line = strstr(s, "aten::mm (x");
    assert_non_null(line);
    while (line > s && line[-1] != '\n')
        line--;
    assert_non_null(strstr(line, "% \xc2\xb1"));
    free(out);
    char *md = slurp(f, "v.md");
    char *row = strstr(md, "| `aten::mm` (x");
    assert_non_null(row);
    assert_true(strstr(row, "% \xc2\xb1") < strchr(row, '\n'));
    free(md);
    /* the summary sheet's LCA block carries the verdicts too */
    sh(f, "python3 -c \"import zipfile,sys; x = zipfile.ZipFile('v.xlsx').read('xl/worksheets/sheet1.xml').decode(); "
          "sys.exit(0 if x.count('<t>verdict</t>') >= 2 and '<t>slower</t>' in x else 1)\"");

    /* the LCAs are held to --confidence and --fdr like the ops */
    assert_int_equal(run(f, "run1.json.gz run2.json.gz -o c.xlsx --confidence 0.5 --fdr"), 0);
    out = slurp(f, "out.txt");
    char *v = strstr(out, "  verdicts: the spread of paired LCAs");
    assert_non_null(v);
    assert_non_null(strstr(v, "; 50% intervals, false discovery rate 50% over "));
    free(out);
}

/* The bundled example pair: the ten copies differ in size (different kernels), so their
 * spread is taken within the copies of the same kernels; pooled across sizes it would call
 * their +12% noise. */
static void test_lca_spread_within_same_kernels(void **state)
{
    fx *f = *state;
    char args[2048];
    const char *top = getenv("TL_TOP");
    snprintf(args, sizeof args, "'%s/examples/traces/vit_mi300x.pt.trace.json.gz' "
             "'%s/examples/traces/vit_h100.pt.trace.json.gz' -o x.xlsx", top ? top : ".", top ? top : ".");
    assert_int_equal(run(f, args), 0);
    char *out = slurp(f, "out.txt");
    char *s = lca_section(out);
    assert_non_null(strstr(s, "         +0.171 ms    +12.0% \xc2\xb1" ));
    assert_non_null(strstr(s, "aten::copy_ (x10) "));
    free(out);
}

/* The summary sheet as a reader meets it (its XML read back with Python's zipfile): every
 * number has a format; no text runs over the empty cells to its right (an "only in"
 * block's names over the absent side's columns); the chart's data rows are grouped and
 * hidden under their title (the chart plots them all the same); the changes listed carry
 * their interval and verdict, the busy time too. */
static void test_summary_sheet_layout(void **state)
{
    fx *f = *state;
    assert_int_equal(run(f, "moved_mi300.json.gz moved_h100.json.gz -q -o w.xlsx"), 0);
    static const char py[] =
        "import re, sys, zipfile\n"
        "z = zipfile.ZipFile('w.xlsx')\n"
        "x = z.read('xl/worksheets/sheet1.xml').decode()\n"
        "def col(ref): return sum((ord(c) - 64) * 26 ** i for i, c in enumerate(reversed(ref)))\n"
        "rows = []\n"
        "for attrs, body in re.findall(r'<row ([^>]*)>(.*?)</row>', x):\n"
        "    cells = {}\n"
        "    for ref, a, b in re.findall(r'<c r=\"([A-Z]+)[0-9]+\"([^>]*)>(.*?)</c>', body):\n"
        "        t = re.search(r'<t[^>]*>(.*?)</t>', b)\n"
        "        s = re.search(r's=\"([0-9]+)\"', a)\n"
        "        cells[col(ref)] = (t.group(1) if t else None, s.group(1) if s else '0')\n"
        "    rows.append((attrs, cells))\n"
        "bad = []\n"
        "width = 0\n"
        "for attrs, cells in rows:\n"
        "    if len(cells) > 1 and all(s == '1' for _, s in cells.values()):\n"
        "        width = max(cells)  # a header row: the block's width\n"
        "        continue\n"
        "    if len(cells) == 1 and 1 in cells and cells[1][1] == '1':\n"
        "        width = 0  # a title\n"
        "        continue\n"
        "    for c, (text, s) in cells.items():\n"
        "        if text is None and s == '0': bad.append('number without a format: %s %s' % (attrs, c))\n"
        "        if text and c < width and c + 1 not in cells: bad.append('text spills: %s %s %s' % (attrs, c, text))\n"
        "titles = [(a, c[1][0]) for a, c in rows if 1 in c and c[1][1] == '1' and len(c) == 1]\n"
        "chart = [a for a, t in titles if t == 'chart data']\n"
        "if len(chart) != 1 or 'collapsed=\"1\"' not in chart[0]: bad.append('chart data title: %s' % chart)\n"
        "after = [a for a, _ in rows[[a for a, _ in rows].index(chart[0]) + 1:]]\n"
        "if not after or any('hidden=\"1\" outlineLevel=\"1\"' not in a for a in after): bad.append('chart rows shown')\n"
        "if [a for a, _ in rows[:[a for a, _ in rows].index(chart[0])] if 'hidden' in a]: bad.append('other rows hidden')\n"
        "if 'outlineLevelRow=\"1\"' not in x: bad.append('no outline level')\n"
        "if '<c:plotVisOnly val=\"0\"/>' not in z.read('xl/charts/chart1.xml').decode(): bad.append('hidden data not plotted')\n"
        "heads = [[t for t, _ in c.values()] for a, c in rows if len(c) > 1 and all(s == '1' for _, s in c.values())]\n"
        "if not any('verdict' in h and '\u00b1 % (95% interval)' in h and 'interval low (ms)' in h and h[0] == 'op' for h in heads):\n"
        "    bad.append('no verdict columns in the op blocks')\n"
        "busy = [c for a, c in rows if 1 in c and c[1][0] == 'busy_time']\n"
        "if not busy or not any(t in ('slower', 'faster', 'within noise') for t, _ in busy[0].values()): bad.append('busy time has no verdict')\n"
        "if not any(t.startswith('verdicts: paired calls (the same op at the same place of both call trees)') for _, t in titles): bad.append('no basis line')\n"
        "only = [i for i, (a, c) in enumerate(rows) if 1 in c and (c[1][0] or '').startswith('only in ')]\n"
        "if not only: bad.append('no only-in block')\n"
        "if bad: sys.exit('\\n'.join(bad[:10]))\n";
    char path[4096];
    snprintf(path, sizeof path, "%s/layout.py", f->dir);
    tt_write_file(path, py, strlen(py));
    sh(f, "python3 layout.py");
}

/* The generator with any seed: a launch's runtime event was written through a pointer
 * that growing the event table had moved (a crash with --seed 2 and 12 layers). */
static void test_generator_any_seed(void **state)
{
    fx *f = *state;
    char c[10000];
    snprintf(c, sizeof c, "'%s' --seed 2 -o seed2.json && '%s' --seed 2 --shape graph-replay --layers 40 -o seed2g.json",
             gentrace, gentrace);
    sh(f, c);
}

int main(void)
{
    tlcompare = getenv("TLCOMPARE");
    if (!tlcompare) {
        fprintf(stderr, "test_lca_cli: set TLCOMPARE to the tlcompare binary (make unit-test does)\n");
        return 1;
    }
    const char *slash = strrchr(tlcompare, '/');
    snprintf(gentrace, sizeof gentrace, "%.*s/tools/gentrace", slash ? (int)(slash - tlcompare) : 1,
             slash ? tlcompare : ".");
    if (access(gentrace, X_OK) != 0) {
        fprintf(stderr, "test_lca_cli: %s: not built (make build/tools/gentrace)\n", gentrace);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_replay_says_what_is_covered),
        cmocka_unit_test(test_capture_run_is_warned_about),
        cmocka_unit_test(test_one_sided_pair_is_one_line),
        cmocka_unit_test(test_lcas_named_by_their_cpu_op),
        cmocka_unit_test(test_self_comparison_says_no_changes),
        cmocka_unit_test(test_summary_sheet_numbers),
        cmocka_unit_test(test_summary_sheet_layout),
        cmocka_unit_test(test_lca_verdicts),
        cmocka_unit_test(test_lca_spread_within_same_kernels),
        cmocka_unit_test(test_generator_any_seed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
