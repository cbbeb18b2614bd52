"""tlcompare.compare(): the CLI's result sheets, summary and gate, as Python objects."""
import json
import os

import pandas as pd
import pytest

import tlcompare
from conftest import CONFORMANCE
from helpers import case_args, frames_equal, in_dir, read_csvs, run


def compare_kwargs(args):
    """tlcompare's arguments as compare()'s: (inputs, kwargs)."""
    inputs, kw, i = [], {}, 0
    while i < len(args):
        a = args[i]
        if a in ("--names", "--sheets"):
            vals = []
            while i + 1 < len(args) and not args[i + 1].startswith("-"):
                vals.append(args[i + 1])
                i += 1
            kw[a[2:]] = vals
        elif a == "--tracelens-keys":
            kw["tracelens_keys"] = True
        elif a.startswith("-"):
            raise ValueError(f"no compare() argument for {a}")
        else:
            inputs.append(a)
        i += 1
    return inputs, kw


def cases():
    out = []
    for kind in ("cases", "tracediff-cases"):
        d = os.path.join(CONFORMANCE, kind)
        if os.path.isdir(d):
            out += [(kind, c) for c in sorted(os.listdir(d))]
    return out


def cli_run(tools, case_dir, args, tmp_path, extra=()):
    out = tmp_path / "cli"
    r = run([tools[0], *args, "-q", "-o", str(tmp_path / "cli.xlsx"), "--output_csvs_dir", str(out),
             "--summary-json", str(tmp_path / "cli.json"), *extra], cwd=case_dir)
    return r, out


@pytest.mark.parametrize("kind,case", cases())
def test_compare_is_the_clis(kind, case, tools, tmp_path, conformance):
    """Every result sheet equals the CLI's CSV read by pandas, in the CLI's order; the
    summary is its --summary-json; to_csvs writes the CLI's CSVs byte for byte."""
    case_dir = os.path.join(conformance, kind, case)
    args = case_args(case_dir)
    r, out = cli_run(tools, case_dir, args, tmp_path)
    assert r.returncode == 0, r.stderr
    inputs, kw = compare_kwargs(args)
    cmp = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **kw))
    want = read_csvs(str(out))
    assert sorted(cmp.sheets) == sorted(want)
    order_file = os.path.join(case_dir, "expected", "order.txt")
    if os.path.exists(order_file):
        with open(order_file) as f:
            order = [l.strip() for l in f if l.strip()]
        assert [s for s in cmp.sheets if s in order] == order
    for name, df in cmp.sheets.items():
        frames_equal(df, want[name], f"{case}/{name}")
    with open(tmp_path / "cli.json") as f:
        assert cmp.summary == json.load(f)
    cmp.to_csvs(tmp_path / "mine")
    for name in want:
        assert (tmp_path / "mine" / f"{name}.csv").read_bytes() == (out / f"{name}.csv").read_bytes(), name
    assert cmp.tags == (kw.get("names") or cmp.tags)


def test_to_excel_passes_the_suite(tools, tmp_path, conformance):
    case_dir = os.path.join(conformance, "cases", "qwen_h100_mi300")
    inputs, kw = compare_kwargs(case_args(case_dir))
    cmp = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **kw))
    cmp.to_excel(tmp_path / "c.xlsx", csvs_dir=tmp_path / "csvs")
    import sys
    r = run([sys.executable, os.path.join(conformance, "csvdiff.py"), str(tmp_path / "csvs"),
             os.path.join(case_dir, "expected"), "--xlsx", str(tmp_path / "c.xlsx")])
    assert r.returncode == 0, r.stdout + r.stderr
    # the workbook's first sheet is the summary, as the CLI's
    import zipfile
    with zipfile.ZipFile(tmp_path / "c.xlsx") as z, zipfile.ZipFile(_cli_xlsx(tools, case_dir, tmp_path)) as y:
        assert z.read("xl/workbook.xml") == y.read("xl/workbook.xml")


def _cli_xlsx(tools, case_dir, tmp_path):
    r, _ = cli_run(tools, case_dir, case_args(case_dir), tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / "cli.xlsx"


def test_dict_inputs_compare_as_their_files(conformance, tmp_path):
    """Reports given as dict[str, DataFrame] (read with pandas) compare as the CSV
    directories they were read from."""
    case_dir = os.path.join(conformance, "cases", "qwen_h100_mi300")
    inputs, kw = compare_kwargs(case_args(case_dir))
    paths = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **kw))
    frames = [read_csvs(os.path.join(case_dir, p)) for p in inputs]
    mem = tlcompare.compare(frames, quiet=True, **kw)
    assert list(mem.sheets) == list(paths.sheets)
    for name in paths.sheets:
        frames_equal(mem.sheets[name], paths.sheets[name], name)
    # mixed: a path and a dict; default tags for dicts are report1, report2, ...
    mixed = in_dir(case_dir, lambda: tlcompare.compare([inputs[0], frames[1]], quiet=True))
    assert mixed.tags == ["h100", "report2"]


def test_report_frames_round_trip(conformance):
    """report()'s frames, given back to compare(), compare as the traces themselves."""
    t = [os.path.join(conformance, "traces", f) for f in ("bert_h100.json.gz", "bert_mi300.json.gz")]
    direct = tlcompare.compare(t, names=["h100", "mi300"], quiet=True)
    frames = [tlcompare.report(x, quiet=True) for x in t]
    mem = tlcompare.compare(frames, names=["h100", "mi300"], quiet=True)
    for name in mem.sheets:
        frames_equal(mem.sheets[name], direct.sheets[name], name)
    assert direct.lca is not None and mem.lca is None  # the call trees are the traces' own


def test_gate_is_the_clis(tools, tmp_path, conformance):
    case_dir = os.path.join(conformance, "cases", "qwen_h100_mi300")
    args = case_args(case_dir)
    inputs, kw = compare_kwargs(args)
    cmp = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **kw))
    for pct in (0, 5, 1000):
        r, _ = cli_run(tools, case_dir, args, tmp_path, ("--fail-on-regression", str(pct)))
        g = cmp.gate(pct)
        assert g.failed == (r.returncode == 3), (pct, r.returncode, r.stderr)
        assert g.violations == [l for l in r.stderr.splitlines() if l.startswith("tlcompare: regression")]
    gated = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, fail_on_regression=0, **kw))
    assert gated.gate_failed == cmp.gate(0).failed


def cli_error(tools, args, cwd):
    r = run([tools[0], *args, "-q", "-o", "/dev/null"], cwd=cwd)
    assert r.returncode in (1, 2), r
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("tlcompare: ")
    return r.returncode, line[len("tlcompare: "):]


def test_errors_carry_the_clis_message(tools, tmp_path, conformance):
    case_dir = os.path.join(conformance, "cases", "ops_threads")
    (tmp_path / "empty").mkdir()
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    for args, exc in ((["inputs/256thread", "inputs/nope"], tlcompare.InputError),
                      (["inputs/256thread", str(tmp_path / "empty")], tlcompare.InputError),
                      (["inputs/256thread", "inputs/512thread", "--names", "a", "a", "b"], tlcompare.UsageError),
                      ([trace, "inputs/512thread", "--tracediff-dir", str(tmp_path / "td")], tlcompare.UsageError)):
        code, msg = cli_error(tools, args, case_dir)
        inputs, kw = compare_kwargs([a for a in args if a not in ("--tracediff-dir", str(tmp_path / "td"))])
        if "--tracediff-dir" in args:
            kw["tracediff_dir"] = str(tmp_path / "td")
        with pytest.raises(exc) as e:
            in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **kw))
        assert str(e.value) in (msg, msg.replace(" (see 'tlcompare --help')", "")), (str(e.value), msg)
        assert isinstance(e.value, tlcompare.Error)
    with pytest.raises(tlcompare.UsageError, match="at least two"):
        tlcompare.compare([trace], quiet=True)
    with pytest.raises(tlcompare.UsageError, match="unknown group 'nope'"):
        tlcompare.compare([trace, trace], sheets=["nope"], quiet=True)
    with pytest.raises(tlcompare.UsageError):
        tlcompare.compare(trace)
    with pytest.raises(TypeError):
        tlcompare.compare([trace, 3])
    cmp = in_dir(case_dir, lambda: tlcompare.compare(["inputs/256thread", "inputs/512thread"], quiet=True))
    (tmp_path / "f").write_text("x")
    with pytest.raises(tlcompare.OutputError):
        cmp.to_csvs(tmp_path / "f")
    with pytest.raises(tlcompare.OutputError):
        cmp.to_excel(tmp_path / "f" / "c.xlsx")
    assert sorted(os.listdir(tmp_path)) == ["empty", "f"]


def test_bad_dict_inputs(conformance):
    ok = {"gpu_timeline": pd.DataFrame({"type": ["busy_time"], "time ms": [1.0], "percent": [100.0]})}
    with pytest.raises(tlcompare.UsageError):
        tlcompare.compare([ok, {"gpu_timeline": 3}], quiet=True)
    with pytest.raises(tlcompare.InputError, match="no TraceLens sheet"):
        tlcompare.compare([ok, {"x": pd.DataFrame({"a": [1]})}], quiet=True)
    odd = {"gpu_timeline": pd.DataFrame({"type": ["busy_time", None, object()], "time ms": [1.0, float("nan"), 2**70],
                                         "percent": [True, "x\udcff", 1]})}
    cmp = tlcompare.compare([ok, odd], quiet=True)
    assert "gpu_timeline" in cmp.sheets


def test_odd_columns_read_as_their_csvs(tmp_path):
    """Columns of every odd kind (integers with missing cells, booleans with and without
    missing, numbers among text, the texts pandas takes as missing or not, infinities, an
    empty sheet) come out as pandas.read_csv reads the CSVs the comparison writes."""
    def report(scale):
        return {
            "gpu_timeline": pd.DataFrame({"type": ["busy_time", "idle_time", "total_time"],
                                          "time ms": [1.0 * scale, 2.0, 3.0 * scale], "percent": [10.0, 20.0, 70.0]}),
            "ops_summary": pd.DataFrame({
                "name": ["a", "b", "c", "d"],
                "total_direct_kernel_time_ms": [1.0 * scale, 2.0, float("inf"), 0.5],
                "total_direct_kernel_time_sum": [1000.0, 2000.0 * scale, 3.0, 500.0],
                "Count": [1, None, 3, 4] if scale == 1 else [1, 2, 3, 4],
                "Categories": ["x", "1", "2.5", None],
                "flag": [True, False, None, True] if scale == 1 else [True, False, True, False],
                "note": ["None", "NA", "", "n/a"],
                "Percentage (%)": [10, 20, 30, 40]}),
            "kernel_summary": pd.DataFrame({"Parent op category": ["GEMM", "GEMM"], "Parent cpu_op": ["mm", "mm"],
                                            "Kernel name": ["k1", "k2"], "Kernel stream": pd.Series([7, None], dtype=object),
                                            "Kernel duration (µs)_sum": [5.0 * scale, 6.0]}),
            "ops_unique_args": pd.DataFrame({"name": pd.Series([], dtype=object),
                                             "total_direct_kernel_time_sum": pd.Series([], dtype=float)}),
        }
    cmp = tlcompare.compare([report(1), report(2)], names=["a", "b"], quiet=True)
    cmp.to_csvs(tmp_path / "c")
    back = read_csvs(str(tmp_path / "c"))
    assert sorted(back) == sorted(cmp.sheets)
    kinds = set()
    for name, df in cmp.sheets.items():
        frames_equal(df, back[name], name)
        kinds |= {str(t) for t in df.dtypes}
    assert {"int64", "float64", "object"} <= kinds
    merged = cmp.sheets["ops_summary"]
    assert merged["a::Count"].isna().any() and merged["a::Count"].dtype == "float64"


@pytest.mark.parametrize("cli,kw", [
    (["--confidence", "90", "--fdr", "--min-delta-ms", "0.01", "--top", "3"],
     {"confidence": 90, "fdr": True, "min_delta_ms": 0.01, "top": 3}),
    (["--min-delta-pct", "2", "--fail-on-regression", "5", "--min-time-ms", "0.5", "--no-summary"],
     {"min_delta_pct": 2, "fail_on_regression": 5, "min_time_ms": 0.5, "no_summary": True}),
])
def test_options_are_the_clis(cli, kw, tools, tmp_path, conformance):
    """The command line's options, given to compare(): the same sheets and summary."""
    case_dir = os.path.join(conformance, "cases", "qwen_h100_mi300")
    args = case_args(case_dir)
    r, out = cli_run(tools, case_dir, args + cli, tmp_path)
    assert r.returncode in (0, 3), r.stderr
    inputs, base = compare_kwargs(args)
    cmp = in_dir(case_dir, lambda: tlcompare.compare(inputs, quiet=True, **base, **kw))
    with open(tmp_path / "cli.json") as f:
        assert cmp.summary == json.load(f)
    assert cmp.gate_failed == (r.returncode == 3)
    want = read_csvs(str(out))
    for name, df in cmp.sheets.items():
        frames_equal(df, want[name], name)


def test_traces_with_a_gpu_are_the_clis(tools, tmp_path, conformance):
    t = [os.path.join(conformance, "traces", f) for f in ("bert_h100.json.gz", "bert_mi300.json.gz")]
    r, out = cli_run(tools, tmp_path, [*t, "--gpu-arch", "H100", "--names", "h", "m"], tmp_path)
    assert r.returncode == 0, r.stderr
    cmp = tlcompare.compare(t, gpu_arch="H100", names=["h", "m"], quiet=True)
    want = read_csvs(str(out))
    assert sorted(cmp.sheets) == sorted(want)
    for name, df in cmp.sheets.items():
        frames_equal(df, want[name], name)
    with open(tmp_path / "cli.json") as f:
        assert cmp.summary == json.load(f)
