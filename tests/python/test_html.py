"""The --html page in a real browser (headless Chromium, driven by tools/pagecheck.py):
pages of real comparisons load without a request leaving the file and without a console
error, hold the JSON summary's numbers, draw something, keep names inert, and open fast.
Skipped, with a line saying so, where chromium is not installed (make deps)."""
import base64
import csv
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from conftest import CONFORMANCE, TLCOMPARE, TLREPORT, TOP

sys.path.insert(0, os.path.join(TOP, "tools"))
import pagecheck  # noqa: E402

pytestmark = [
    pytest.mark.skipif(pagecheck.find_chromium() is None,
                       reason="chromium not found: the browser tests need it (make deps)"),
    # they run the programs, not the module: once is enough (python-test, not its sanitizer rerun)
    pytest.mark.skipif(bool(os.environ.get("TLCOMPARE_SANITIZED")), reason="browser tests run once, in python-test"),
]

EVIL = "</script><script>alert(1)</script>"
QWEN = [os.path.join(CONFORMANCE, "traces", t) for t in ("qwen_h100.json.gz", "qwen_mi300.json.gz")]


@pytest.fixture(scope="module")
def browser():
    with pagecheck.Browser(width=1100, height=900) as b:
        yield b


def compare(args, out_dir, cwd=None, extra=()):
    """Run tlcompare with --html and --summary-json into out_dir: (page, summary, stderr)."""
    page, summary = os.path.join(out_dir, "page.html"), os.path.join(out_dir, "summary.json")
    cmd = [TLCOMPARE] + list(args) + ["-o", os.path.join(out_dir, "out.xlsx"), "--html", page,
                                      "--summary-json", summary, "-q"] + list(extra)
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert r.returncode in (0, 3), f"{shlex.join(cmd)}: {r.stderr}"
    with open(summary) as f:
        return page, json.load(f), r.stderr


def rows(page, table):
    return page.evaluate("Array.prototype.map.call(document.querySelectorAll('#%s tr.move'), function(r){"
                         "return [r.getAttribute('data-name'), +r.getAttribute('data-delta'),"
                         " +r.getAttribute('data-ci-lo'), +r.getAttribute('data-ci-hi'),"
                         " r.getAttribute('data-verdict'), r.cells[0].textContent, r.cells[5].textContent];})" % table)


def check_item(row, item, where):
    """The page's row of a listed change equals the JSON summary's item exactly."""
    name, delta, lo, hi, verdict, text, interval = row
    json_delta = item["time_ms"]["delta"] if "time_ms" in item else item["delta_ms"]
    assert name == text, where
    assert name == (item.get("name") or item.get("lca")), where
    assert delta == json_delta, f"{where}: delta {delta} != {json_delta}"
    if item.get("ci_low") is not None:
        assert (lo, hi) == (item["ci_low"], item["ci_high"]), where
        assert verdict == item["verdict"], where
        assert interval == "[%+.3f, %+.3f]" % (lo, hi), where


def check_page(browser, path, summary):
    """No problem in the browser, the summary's first listed changes on the page, a picture."""
    page = pagecheck.Page(browser, pagecheck.file_url(path))
    assert page.problems() == [], path
    for vi, v in enumerate(summary["variants"]):
        items = v["regressions"] + v["improvements"]
        if not items or summary["source"] is None:
            continue
        got = rows(page, "moves-%d" % vi)
        assert len(got) == len(items)
        check_item(got[0], items[0], f"{path}: {v['tag']}'s top change")
        check_item(got[-1], items[-1], f"{path}: {v['tag']}'s last change")
    if summary.get("lca") and summary["lca"]["top"]:
        n = sum(1 for v in summary["variants"] if summary["source"] is not None)
        got = rows(page, "moves-%d" % n)
        check_item(got[0], summary["lca"]["top"][0], f"{path}: the top lowest common op")
    inked, colours = pagecheck.png_stats(page.screenshot())
    assert inked > 0.03 and colours > 8, f"{path}: the screenshot looks blank ({inked:.3f} inked, {colours} colours)"
    return page


def test_qwen_traces_page(browser, tmp_path, conformance):
    path, summary, _ = compare(QWEN + ["--names", "h100", "mi300", "--gpu-arch", "MI300X"], str(tmp_path))
    page = check_page(browser, path, summary)
    # every section is there, the roofline has its peak lines, the tree its nodes
    for sec in ("summary", "time", "moved", "roofline", "tree"):
        assert page.evaluate("!!document.getElementById('%s')" % sec), sec
    assert page.evaluate("document.querySelectorAll('#roofline line.peak').length") >= 2
    assert page.evaluate("document.querySelectorAll('g.icicle g.n').length") > 5
    # the headline carries the busy time's verdict as the JSON has it
    busy = summary["variants"][0]["busy_time"]
    assert busy["verdict"] in page.evaluate("document.querySelector('.headline').textContent")
    # the script works: a node zooms, the filter hides rows
    page.evaluate("document.querySelectorAll('g.icicle g.n')[1].dispatchEvent(new MouseEvent('click',{bubbles:true}))")
    assert page.evaluate("document.querySelector('g.icicle').getAttribute('data-zoom')")
    shown = page.evaluate("(function(){var i=document.querySelector('input[data-filter=\"moves-0\"]');"
                          "i.value='aten::mm';i.dispatchEvent(new Event('input'));return +i.getAttribute('data-shown');})()")
    assert 1 <= shown < len(summary["variants"][0]["regressions"] + summary["variants"][0]["improvements"])


CASES = ["qwen_h100_mi300", "ops_threads_all", "threeway_mixed", "trace_vs_report_bert", "traces_qwen_h100_mi300",
         "rocprof_threads"]


@pytest.mark.parametrize("case", CASES)
def test_conformance_pair_pages(browser, tmp_path, conformance, case):
    d = os.path.join(conformance, "cases", case)
    with open(os.path.join(d, "args")) as f:
        args = shlex.split(f.read())
    path, summary, _ = compare(args, str(tmp_path), cwd=d)
    check_page(browser, path, summary)


def test_example_trace_pair_page(browser, tmp_path):
    traces = [os.path.join(TOP, "examples", "traces", t) for t in ("vit_mi300x.pt.trace.json.gz",
                                                                   "vit_h100.pt.trace.json.gz")]
    path, summary, _ = compare(traces + ["--gpu-arch", "H100"], str(tmp_path))
    page = check_page(browser, path, summary)
    assert page.evaluate("document.querySelectorAll('g.icicle g.n').length") > 5


def script_and_hash(html):
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    csp = re.search(r"script-src 'sha256-([^']+)'", html).group(1)
    return script, csp


def test_script_hash_matches(tmp_path):
    """The page's policy lets exactly its script run: write/html.c's TL_HTML_SCRIPT_HASH is
    the SHA-256 of the script (change both together)."""
    path, _, _ = compare([os.path.join(TOP, "examples", d) for d in ("baseline", "candidate")], str(tmp_path))
    with open(path, encoding="utf-8") as f:
        script, csp = script_and_hash(f.read())
    assert base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() == csp, \
        "TL_HTML_SCRIPT_HASH in src/write/html.c is not the script's SHA-256"


def test_broken_script_is_caught(browser, tmp_path):
    """The checks fail on a page whose script breaks: a syntax error (with its hash made to
    match), and a script the policy does not allow."""
    path, summary, _ = compare([os.path.join(TOP, "examples", d) for d in ("baseline", "candidate")], str(tmp_path))
    with open(path, encoding="utf-8") as f:
        html = f.read()
    assert pagecheck.Page(browser, pagecheck.file_url(path)).problems() == []
    script, csp = script_and_hash(html)
    broken = script.replace('"use strict";', '"use strict";(', 1)
    digest = base64.b64encode(hashlib.sha256(broken.encode()).digest()).decode()
    bad = tmp_path / "syntax.html"
    bad.write_text(html.replace(script, broken).replace(csp, digest), encoding="utf-8")
    problems = pagecheck.Page(browser, pagecheck.file_url(str(bad))).problems()
    assert any("exception" in p for p in problems) and any("data-ready" in p for p in problems), problems
    bad = tmp_path / "policy.html"
    bad.write_text(html.replace(script, script.replace("data-ready", "data-readyy")), encoding="utf-8")
    problems = pagecheck.Page(browser, pagecheck.file_url(str(bad))).problems()
    assert problems, "a script the page's policy refuses went unnoticed"


def rename_in_report(src, dst, renames):
    """Copy a CSV report directory, every cell equal to a key of `renames` renamed."""
    os.makedirs(dst)
    for name in os.listdir(src):
        with open(os.path.join(src, name), newline="") as f:
            table = [[renames.get(c, c) for c in row] for row in csv.reader(f)]
        with open(os.path.join(dst, name), "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(table)


def test_names_stay_inert(browser, tmp_path):
    """Op names with markup, quotes and a script are shown as text: nothing runs, one script."""
    other = "a&b <\"q\"> 'it's' <img src=x onerror=alert(2)>"
    renames = {"aten::mm": EVIL, "aten::addmm": other}
    for side in ("baseline", "candidate"):
        rename_in_report(os.path.join(TOP, "examples", side), str(tmp_path / side), renames)
    path, summary, _ = compare([str(tmp_path / "baseline"), str(tmp_path / "candidate")], str(tmp_path))
    listed = [i["name"] for v in summary["variants"] for i in v["regressions"] + v["improvements"]]
    assert EVIL in listed and other in listed, listed
    with open(path, encoding="utf-8") as f:
        html = f.read()
    assert html.count("<script") == 1 and EVIL not in html and "<img" not in html
    page = check_page(browser, path, summary)
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.images.length") == 0
    names = [r[5] for r in rows(page, "moves-0")]
    assert EVIL in names and other in names


def test_big20k_page_fast_and_small(browser, tmp_path):
    """The big20k comparison (tools/bench.sh's 20k-row reports): its page is written in under
    10% of the comparison's time, is small, and opens in Chromium in under 2 s."""
    gen = os.path.join(TOP, "build", "tools", "genreport")
    if not os.access(gen, os.X_OK):
        pytest.skip(f"{gen} not built (make {os.path.relpath(gen, TOP)})")
    for role in ("baseline", "candidate"):
        subprocess.run([gen, "--rows", "20000", "--seed", "1", "--role", role, "--csv", str(tmp_path / role)],
                       check=True, capture_output=True)
    path, summary, err = compare([str(tmp_path / "baseline"), str(tmp_path / "candidate")], str(tmp_path),
                                 extra=["--timings"])
    t = dict((k, float(v)) for k, v in re.findall(r"(\w+) ([0-9.]+) s", err.split("timings:")[1]))
    assert t["html"] < 0.1 * t["total"], t
    assert os.path.getsize(path) < 4e6
    check_page(browser, path, summary)
    # the best of three loads: the machine may be busy
    best = min(pagecheck.Page(browser, pagecheck.file_url(path)).load_s for _ in range(3))
    assert best < 2.0, f"the big20k page took {best:.2f} s to open"


def test_tlreport_page(browser, tmp_path, conformance):
    """tlreport --html: one report's page, its largest ops as its ops_summary has them."""
    trace = os.path.join(conformance, "traces", "qwen_h100.json.gz")
    page_path, csvs = str(tmp_path / "r.html"), str(tmp_path / "csvs")
    subprocess.run([TLREPORT, trace, "--output_csvs_dir", csvs, "--html", page_path, "--gpu-arch", "H100", "-q"],
                   check=True)
    page = pagecheck.Page(browser, pagecheck.file_url(page_path))
    assert page.problems() == []
    with open(os.path.join(csvs, "ops_summary.csv"), newline="") as f:
        first = next(csv.DictReader(f))
    top = page.evaluate("(function(){var r=document.querySelector('#ops-table tbody tr');"
                        "return [r.cells[0].textContent, r.cells[1].textContent];})()")
    assert top == [first["name"], "%.3f" % float(first["total_direct_kernel_time_ms"])]
    assert page.evaluate("document.querySelectorAll('#roofline g.pt').length") > 3
    inked, colours = pagecheck.png_stats(page.screenshot())
    assert inked > 0.03 and colours > 8


GENTRACE = os.path.join(TOP, "build", "tools", "gentrace")


def gen_run(directory, n, extra=None, common=()):
    """An n-rank run in `directory` by tools/gentrace; extra: {rank: [options]}."""
    os.makedirs(directory)
    for r in range(n):
        subprocess.run([GENTRACE, "--world", str(n), "--rank", str(r), "--layers", "2"] + list(common)
                       + list((extra or {}).get(r, [])) + ["-o", os.path.join(directory, "rank%d_trace.json" % r)],
                       check=True, capture_output=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two 4-rank runs: in the variant rank 2 starts every collective 3 ms late and the last
    bucket's all-reduce is 30% slower on every rank."""
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built")
    d = tmp_path_factory.mktemp("runs")
    gen_run(str(d / "a"), 4)
    gen_run(str(d / "b"), 4, {2: ["--arrive-late", "3000"]}, common=["--coll-slow", "30"])
    return d


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def heat_cells(page):
    """The heatmap's cells: {(panel, row, col): value} from their data-v."""
    got = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#ranks g.hm'), function(g){"
                        "return [+g.getAttribute('data-panel'), +g.getAttribute('data-row'), +g.getAttribute('data-col'),"
                        " g.getAttribute('data-v')];})")
    return {(p, r, c): float(v) for p, r, c, v in got}


def test_rank_set_page(browser, tmp_path, runs):
    """Two runs: the rank x metric heatmap holds the comparison's numbers (the CSV sheets',
    exactly, and the JSON's slowest rank), each rank has its bars, nothing leaves the page."""
    csvs = str(tmp_path / "csvs")
    path, summary, _ = compare([str(runs / "a"), str(runs / "b")], str(tmp_path), extra=["--output_csvs_dir", csvs])
    page = check_page(browser, path, summary)
    cells = heat_cells(page)
    ranks = csv_rows(os.path.join(csvs, "ranks_gpu_timeline.csv"))
    waits = {int(r["rank"]): r for r in csv_rows(os.path.join(csvs, "stragglers.csv"))}
    assert len(cells) == 4 * 3 * 3
    for i, row in enumerate(ranks):
        for c, col in enumerate(("busy_time_ms", "exposed_comm_time_ms")):
            assert cells[(0, i, c)] == float(row[col + "::a"]), (i, col)
            assert cells[(1, i, c)] == float(row[col + "::b"]), (i, col)
            assert cells[(2, i, c)] == float(row[col + "__b_diff"]), (i, col)
        w = waits[int(row["rank"])]
        assert (cells[(0, i, 2)], cells[(1, i, 2)], cells[(2, i, 2)]) == (
            float(w["a::mean_wait_time_us"]), float(w["b::mean_wait_time_us"]), float(w["mean_wait_time_us__b_diff"]))
    lead = summary["runs"][0]
    assert lead["slowest_rank"] == [0, 2]
    assert cells[(0, 0, 0)] == lead["slowest_busy_ms"][0] and cells[(1, 2, 0)] == lead["slowest_busy_ms"][1]
    # the late rank waits least: its wait is the variant's smallest, the others' the largest
    assert cells[(1, 2, 2)] < min(cells[(1, r, 2)] for r in (0, 1, 3))
    # a grey print keeps the difference's direction: the larger cells are hatched, no smaller one
    hatched = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#ranks g.hm[data-panel=\"2\"]'),"
                            " function(g){return [+g.getAttribute('data-v'), !!g.querySelector('rect[fill=\"url(#hatch)\"]')];})")
    assert any(h for v, h in hatched) and all(h == (v > 0) for v, h in hatched), hatched
    # the text equivalent: the chart's title, the table's rows, one per rank
    assert page.evaluate("document.querySelector('#ranks svg.heatmap > title').textContent").startswith("a -> b")
    assert page.evaluate("document.querySelectorAll('#heat-0 tbody tr').length") == 4
    # where the time went, per rank: both sides of every rank, as ranks_gpu_timeline has them
    bars = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#bars-0 tbody tr'), function(r){"
                         "return Array.prototype.map.call(r.cells, function(c){return c.textContent;});})")
    assert [b[0] for b in bars] == ["%s rank %d" % (s, r) for r in range(4) for s in "ab"]
    assert bars[5][1:] == ["%.3f" % float(ranks[2][k + "_ms::b"]) for k in
                           ("computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time", "total_time")]
    # every bar's part has a pattern of its own, not its hue alone
    fills = page.evaluate("Array.from(new Set(Array.prototype.map.call("
                          "document.querySelectorAll('#time svg.bars rect.mark'), function(r){return r.getAttribute('fill');})))")
    assert set(fills) <= {"url(#p0)", "url(#p1)", "url(#p2)", "url(#p3)"} and len(fills) >= 3


def test_rank_set_names_stay_inert(browser, tmp_path, runs):
    """Runs tagged with markup: the heatmap's titles and labels are text, nothing runs."""
    path, summary, _ = compare([str(runs / "a"), str(runs / "b"), "--names", EVIL, "b&<i>"], str(tmp_path))
    with open(path, encoding="utf-8") as f:
        html = f.read()
    assert html.count("<script") == 1 and EVIL not in html and "<i>" not in html
    page = pagecheck.Page(browser, pagecheck.file_url(path))
    assert page.problems() == []
    assert page.evaluate("document.scripts.length") == 1
    assert EVIL in page.evaluate("document.querySelector('#ranks h3').textContent")
    assert page.evaluate("document.querySelector('#heat-0 thead th:nth-child(2)').textContent") == "busy (ms): " + EVIL
    # a run directory named as markup: its name, the default tag, is text too
    img = "<img src=x onerror=alert(2)>"
    shutil.copytree(str(runs / "b"), str(tmp_path / img))
    d = tmp_path / "dir"
    d.mkdir()
    path, summary, _ = compare([str(runs / "a"), str(tmp_path / img)], str(d))
    with open(path, encoding="utf-8") as f:
        html = f.read()
    assert "<img" not in html and html.count("<script") == 1
    page = pagecheck.Page(browser, pagecheck.file_url(path))
    assert page.problems() == [] and page.evaluate("document.images.length") == 0
    assert page.evaluate("document.querySelector('#ranks h3').textContent") == \
        "a -> %s: busy time, exposed communication and wait per collective, per rank" % img


def test_step_trace_pair_page(browser, tmp_path):
    """Two traces with ProfilerStep#N: a bar per step of each, its gpu_timeline as the steps
    sheet has it, the steps the verdicts leave out marked."""
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built")
    a, b = str(tmp_path / "sa.json"), str(tmp_path / "sb.json")
    subprocess.run([GENTRACE, "--steps", "4", "--layers", "2", "-o", a], check=True)
    subprocess.run([GENTRACE, "--steps", "4", "--layers", "2", "--slow", "aten::mm=20", "-o", b], check=True)
    csvs = str(tmp_path / "csvs")
    path, summary, _ = compare([a, b], str(tmp_path), extra=["--output_csvs_dir", csvs])
    page = check_page(browser, path, summary)
    bars = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#bars-0 tbody tr'), function(r){"
                         "return Array.prototype.map.call(r.cells, function(c){return c.textContent;});})")
    steps = csv_rows(os.path.join(csvs, "steps.csv"))
    assert len(bars) == len(steps) == 8
    for bar, st in zip(bars, steps):
        assert bar[0] == "%s step %s%s" % (st["trace"], st["step"], "" if st["kept"] == "yes" else " *")
        assert bar[1:] == ["%.3f" % float(st[k + " ms"]) for k in
                           ("computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time", "total_time")]
    assert page.evaluate("document.querySelectorAll('#time svg.bars').length") == 2
    assert page.evaluate("document.querySelectorAll('#time svg.bars')[1].querySelector('title').textContent") \
        == "Where the time went, per step"
    # tlreport's page of one of them: its steps as the comparison measured them (none left out)
    report = str(tmp_path / "report.html")
    subprocess.run([TLREPORT, a, "-o", str(tmp_path / "r.xlsx"), "--html", report, "-q"], check=True)
    page = pagecheck.Page(browser, pagecheck.file_url(report))
    assert page.problems() == []
    bars = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#bars-0 tbody tr'), function(r){"
                         "return Array.prototype.map.call(r.cells, function(c){return c.textContent;});})")
    mine = [st for st in steps if st["trace"] == "sa"]
    assert len(bars) == len(mine) == 4
    for bar, st in zip(bars, mine):
        assert bar[0] == "sa step %s" % st["step"]
        assert bar[1:] == ["%.3f" % float(st[k + " ms"]) for k in
                           ("computation_time", "exposed_comm_time", "exposed_memcpy_time", "idle_time", "total_time")]


def test_roofline_each_sides_gpu(browser, tmp_path, conformance):
    """--gpu-arch H100,MI300X: the roofline draws each side's own peaks (the variant's dashed,
    both named), and the summary's % of peak is each side's against its own GPU, as a run
    with that GPU alone says."""
    path, summary, _ = compare(QWEN + ["--names", "h100", "mi300", "--gpu-arch", "H100,MI300X"], str(tmp_path))
    page = check_page(browser, path, summary)
    assert page.evaluate("document.querySelectorAll('#roofline line.peak:not(.var)').length") >= 2
    assert page.evaluate("document.querySelectorAll('#roofline line.peak.var').length") >= 2
    titles = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#roofline line.peak > title'),"
                           " function(t){return t.textContent;})")
    assert any(t.startswith("H100 ") for t in titles) and any(t.startswith("MI300X ") for t in titles)
    legend = page.evaluate("document.querySelector('#roofline svg').textContent")
    assert "H100 (h100)" in legend and "MI300X (mi300)" in legend
    assert "traces ran on" not in page.evaluate("document.getElementById('roofline').textContent")
    both = summary["variants"][0]["efficiency"]
    alone = {}
    for gpu in ("H100", "MI300X"):
        d = tmp_path / gpu
        d.mkdir()
        alone[gpu] = compare(QWEN + ["--names", "h100", "mi300", "--gpu-arch", gpu], str(d))[1]["variants"][0]["efficiency"]
    assert both and len(both) == len(alone["H100"])
    for it, h, m in zip(both, alone["H100"], alone["MI300X"]):
        assert it["name"] == h["name"] == m["name"]
        assert it["pct_of_peak"]["baseline"] == h["pct_of_peak"]["baseline"], it["name"]
        assert it["pct_of_peak"]["variant"] == m["pct_of_peak"]["variant"], it["name"]
    # one GPU given for two that differ: the page says so
    d = tmp_path / "one"
    d.mkdir()
    path, summary, _ = compare(QWEN + ["--names", "h100", "mi300", "--gpu-arch", "MI300X"], str(d))
    page = pagecheck.Page(browser, pagecheck.file_url(path))
    assert page.problems() == []
    assert "the lines are MI300X's for both sides" in page.evaluate("document.getElementById('roofline').textContent")
    assert page.evaluate("document.querySelectorAll('#roofline line.peak.var').length") == 0
