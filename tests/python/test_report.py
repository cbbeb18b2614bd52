"""tlcompare.report(): the sheets tlreport writes, as the DataFrames pandas reads from them."""
import os
import subprocess
import sys

import pandas as pd
import pytest

import tlcompare
from conftest import CONFORMANCE
from helpers import case_args, frames_equal, in_dir, read_csvs, run

FLAGS = {"--inference": "inference", "--group_by_parent_module": "group_by_parent_module",
         "--group_by_num_kernels": "group_by_num_kernels", "--include_call_stack": "include_call_stack",
         "--enable_pseudo_ops": "enable_pseudo_ops"}


def report_kwargs(args):
    """tlreport's arguments as report()'s: (trace, kwargs)."""
    trace, kw, i = None, {}, 0
    while i < len(args):
        a = args[i]
        if a in ("--capture-folder", "--capture_folder"):
            kw["capture_folder"] = args[i + 1]
            i += 1
        elif a == "--profile_json_path":
            trace = args[i + 1]
            i += 1
        elif a in FLAGS:
            kw[FLAGS[a]] = True
        elif a.startswith("-"):
            raise ValueError(f"no report() argument for {a}")
        else:
            trace = a
        i += 1
    return trace, kw


def cases(kind):
    d = os.path.join(CONFORMANCE, kind)
    return sorted(c for c in os.listdir(d)) if os.path.isdir(d) else []


def pending(kind):
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = os.path.join(top, "tests", "pending", kind.replace("-cases", "") + ".txt")
    if not os.path.exists(p):
        return set()
    with open(p) as f:
        return {l.split("#")[0].strip() for l in f if l.split("#")[0].strip()}


PARAMS = [(k, c) for k in ("report-cases", "inference-cases", "inference-perf-cases") for c in cases(k)
          if c not in pending(k)]


@pytest.mark.parametrize("kind,case", PARAMS)
def test_report_is_tlreports_csvs(kind, case, tools, tmp_path, conformance):
    """Every sheet equals tlreport's CSV read by pandas: columns, order, dtypes, values."""
    case_dir = os.path.join(conformance, kind, case)
    args = case_args(case_dir)
    out = tmp_path / "csvs"
    r = run([tools[1], *args, "-q", "--output_csvs_dir", str(out)], cwd=case_dir)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(case_dir, "expected", "order.txt")) as f:
        order = [l.strip() for l in f if l.strip()]
    trace, kw = report_kwargs(args)
    got = in_dir(case_dir, lambda: tlcompare.report(trace, quiet=True, **kw))
    # every sheet tlreport wrote, in the workbook's order; the expected sheets among them in
    # their order (a case whose expected/ holds `subset` lists only some of them)
    written = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".csv"))
    assert sorted(got) == written
    if os.path.exists(os.path.join(case_dir, "expected", "subset")):
        assert [n for n in got if n in order] == order
    else:
        assert list(got) == order
    want = read_csvs(str(out), list(got))
    for name in got:
        frames_equal(got[name], want[name], f"{case}/{name}")


def csvdiff_frames(got, want_dir, tmp_path, conformance):
    """csvdiff (the conformance suite's rules) between frames `got` and the expected CSVs of
    want_dir, both seen through pandas: each expected CSV read with read_csv, both written
    back with DataFrame.to_csv (a text the reader takes as missing is missing on both sides)."""
    g, w = tmp_path / "got", tmp_path / "want"
    g.mkdir()
    w.mkdir()
    for name, df in got.items():
        df.to_csv(g / f"{name}.csv", index=False)
    for f in os.listdir(want_dir):
        src = os.path.join(want_dir, f)
        if f.endswith(".csv"):
            try:
                pd.read_csv(src).to_csv(w / f, index=False)
            except pd.errors.EmptyDataError:
                (w / f).write_text("")
        else:
            (w / f).write_bytes(open(src, "rb").read())
    return run([sys.executable, os.path.join(conformance, "csvdiff.py"), str(g), str(w)])


@pytest.mark.parametrize("kind,case", PARAMS)
def test_report_matches_the_reference(kind, case, tmp_path, conformance):
    """The frames match TraceLens' own CSVs by the conformance suite's csvdiff."""
    case_dir = os.path.join(conformance, kind, case)
    trace, kw = report_kwargs(case_args(case_dir))
    got = in_dir(case_dir, lambda: tlcompare.report(trace, quiet=True, **kw))
    r = csvdiff_frames(got, os.path.join(case_dir, "expected"), tmp_path, conformance)
    assert r.returncode == 0, r.stdout + r.stderr


def test_report_sheets_and_options(conformance, tools, tmp_path):
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    got = tlcompare.report(trace, sheets=["ops_summary", "gpu_timeline"], quiet=True)
    assert list(got) == ["gpu_timeline", "ops_summary"]  # the workbook's order
    top = tlcompare.report(trace, topk_ops=3, quiet=True)["ops_unique_args"]
    assert len(top) == 3
    r = run([tools[1], trace, "-q", "--topk_ops", "3", "--include_unlinked_kernels", "--output_csvs_dir",
             str(tmp_path / "c")])
    assert r.returncode == 0, r.stderr
    got = tlcompare.report(trace, topk_ops=3, include_unlinked_kernels=True, quiet=True)
    want = read_csvs(str(tmp_path / "c"))
    for name in ("gpu_timeline", "ops_unique_args"):
        frames_equal(got[name], want[name], name)


def test_report_writes_outputs_whole(conformance, tmp_path):
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    xlsx, csvs = tmp_path / "r.xlsx", tmp_path / "csvs"
    got = tlcompare.report(trace, output_xlsx=xlsx, output_csvs_dir=csvs, quiet=True)
    assert xlsx.stat().st_size > 1000
    back = read_csvs(str(csvs), list(got))
    for name in got:
        frames_equal(got[name], back[name], name)
    with pytest.raises(tlcompare.InputError, match="no sheet 'nope'"):
        tlcompare.report(trace, sheets=["nope"], quiet=True)


def test_report_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(tlcompare.InputError) as e:
        tlcompare.report(bad, quiet=True)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(tlcompare.InputError, match="cannot open|No such file"):
        tlcompare.report(tmp_path / "missing.json.gz", quiet=True)
    with pytest.raises(tlcompare.UsageError):
        tlcompare.report(bad, capture_folder=str(tmp_path), topk_ops=2)
    with pytest.raises(TypeError):
        tlcompare.report(12)
    assert issubclass(tlcompare.InputError, tlcompare.Error)
    assert issubclass(tlcompare.UsageError, tlcompare.Error)
    assert issubclass(tlcompare.OutputError, tlcompare.Error)


def test_report_output_error(conformance, tmp_path):
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    (tmp_path / "file").write_text("x")
    with pytest.raises(tlcompare.OutputError, match="file"):
        tlcompare.report(trace, output_xlsx=tmp_path / "file" / "r.xlsx", quiet=True)
    with pytest.raises(tlcompare.OutputError):
        tlcompare.report(trace, output_csvs_dir=tmp_path / "file", quiet=True)
    assert sorted(os.listdir(tmp_path)) == ["file"]  # nothing else left behind


@pytest.mark.parametrize("case", [c for c in cases("report-cases") if c not in pending("report-cases")])
def test_report_dtypes_are_the_references(case, conformance):
    """A numeric column is int64 exactly where read_csv of the reference's CSV makes it
    int64 (TRACES.md §4.6: integer times stay integers; one float makes the column float)."""
    case_dir = os.path.join(conformance, "report-cases", case)
    trace, kw = report_kwargs(case_args(case_dir))
    got = in_dir(case_dir, lambda: tlcompare.report(trace, quiet=True, **kw))
    want_dir = os.path.join(case_dir, "expected")
    for f in sorted(os.listdir(want_dir)):
        if not f.endswith(".csv"):
            continue
        want = pd.read_csv(os.path.join(want_dir, f))
        df = got[f[:-4]]
        for col in want.columns:
            w = str(want[col].dtype)
            if w in ("int64", "float64") and want[col].notna().any():
                assert str(df[col].dtype) == w, f"{case}/{f} '{col}': {df[col].dtype}, the reference's {w}"


def test_report_html_is_the_command_lines(conformance, tools, tmp_path):
    """html= writes the page tlreport --html writes, byte for byte, whether or not sheets are written."""
    trace = os.path.join(conformance, "traces", "qwen_h100.json.gz")
    py, py2, cli = tmp_path / "py.html", tmp_path / "py2.html", tmp_path / "cli.html"
    tlcompare.report(trace, html=py, gpu_arch="H100", quiet=True)
    tlcompare.report(trace, html=str(py2), gpu_arch="H100", output_csvs_dir=str(tmp_path / "csvs"), quiet=True)
    subprocess.run([tools[1], trace, "-o", str(tmp_path / "r.xlsx"), "--html", str(cli), "--gpu-arch", "H100", "-q"],
                   check=True)
    html = cli.read_text(encoding="utf-8")
    assert py.read_text(encoding="utf-8") == html == py2.read_text(encoding="utf-8")
    assert 'id="roofline"' in html and 'id="ops-table"' in html
