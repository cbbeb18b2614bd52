"""compare() on distributed runs: rank sets written by gentrace, the sheets of runs as
DataFrames (Comparison.ranks, .collectives) and the summary's runs object."""
import os
import subprocess

import pytest

import tlcompare
from conftest import TOP

GENTRACE = os.path.join(TOP, "build", "tools", "gentrace")


def _run(directory, n, extra_rank=None, extra=(), common=()):
    os.makedirs(directory)
    for r in range(n):
        args = [GENTRACE, "--world", str(n), "--rank", str(r), "--layers", "13", *common]
        if r == extra_rank:
            args += list(extra)
        subprocess.run(args + ["-o", os.path.join(directory, f"rank{r}_trace.json")], check=True)
    return str(directory)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built (make build/tools/gentrace)")
    d = tmp_path_factory.mktemp("runs")
    a = _run(d / "before", 4, 1, ["--arrive-late", "2000"])
    b = _run(d / "after", 4, 2, ["--slow", "*=8"], ["--coll-slow", "25"])
    return a, b


def test_compare_runs(runs):
    c = tlcompare.compare(list(runs), jobs=2, quiet=True)
    ranks = c.ranks
    assert list(ranks["rank"]) == [0, 1, 2, 3]
    pct = ranks["busy_time_ms__after_pct"]
    assert pct[2] > 5 and (pct.drop(index=2).abs() < 2).all()
    coll = c.collectives
    assert set(["Collective name", "Process Group Name", "dtype", "In msg nelems"]) <= set(coll.columns)
    ratio = coll["after::bus bw (GB/s)_mean"] / coll["before::bus bw (GB/s)_mean"]
    assert ((ratio - 0.8).abs() < 0.008).sum() == 1 and ((ratio - 1).abs() < 1e-9).sum() == len(coll) - 1
    run = c.summary["runs"][0]
    assert run["paired"] and run["world_size"] == [4, 4]
    assert run["ranks_moved_alone"] == [2]
    assert run["straggler"] == {"baseline": 1, "variant": -1, "change": "vanished"}
    assert "rank-to-rank spread" in c.summary_text()
    # the usual sheets keep their names, of the ranks' mean
    assert "gpu_timeline" in c.sheets and "ops_summary" in c.sheets


def test_run_against_trace_refused(runs):
    with pytest.raises(tlcompare.UsageError, match="is a run"):
        tlcompare.compare([runs[0], os.path.join(runs[1], "rank0_trace.json")], quiet=True)


def test_compare_html_is_the_command_lines(runs, tmp_path):
    """html= writes the page tlcompare --html writes, byte for byte: the rank heatmap and all."""
    page = tmp_path / "py.html"
    tlcompare.compare(list(runs), html=str(page), jobs=2, quiet=True)
    cli = tmp_path / "cli.html"
    subprocess.run([os.path.join(TOP, "build", "tlcompare"), *runs, "-o", str(tmp_path / "c.xlsx"), "--html", str(cli),
                    "-q"], check=True)
    html = page.read_text(encoding="utf-8")
    assert html == cli.read_text(encoding="utf-8")
    assert 'id="ranks"' in html and html.count('class="hm mark"') == 4 * 3 * 3
