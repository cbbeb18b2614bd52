"""tlcompare.tracelens: TraceLens' entry points, same arguments, same return values."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import tlcompare
from tlcompare import tracelens as tl
from helpers import read_csvs, run

TRACELENS = os.environ.get("TRACELENS")  # a directory holding the TraceLens package (for the side-by-side)
REF_SCRIPT = r"""
import json, sys
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
d = generate_perf_report_pytorch(sys.argv[1], output_csvs_dir=sys.argv[2], kernel_summary=True)
json.dump({k: [list(map(str, v.columns)), list(v.shape)] for k, v in d.items()}, open(sys.argv[3], "w"))
"""


def test_generate_perf_report_shapes(conformance, tmp_path):
    """The sheets of the reference report (TraceLens' expected CSVs), in its order, with its
    columns and row counts; kernel_summary only when asked, as TraceLens returns it."""
    case = os.path.join(conformance, "report-cases", "bert_h100")
    with open(os.path.join(case, "expected", "order.txt")) as f:
        order = [l.strip() for l in f if l.strip()]
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    got = tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "c"))
    assert list(got) == [s for s in order if s != "kernel_summary"]
    assert sorted(os.listdir(tmp_path / "c")) == sorted(f"{s}.csv" for s in got)
    want = read_csvs(os.path.join(case, "expected"), order)
    for name, df in got.items():
        assert list(df.columns) == list(want[name].columns), name
        assert df.shape == want[name].shape, name
        assert isinstance(df, pd.DataFrame)
    full = tl.generate_perf_report_pytorch(trace, output_xlsx_path=str(tmp_path / "r.xlsx"), kernel_summary=True)
    assert list(full) == order and (tmp_path / "r.xlsx").stat().st_size > 0


def test_generate_perf_report_default_output(conformance, tmp_path):
    src = os.path.join(conformance, "traces", "bert_h100.json.gz")
    trace = tmp_path / "run.pt.trace.json.gz"
    trace.write_bytes(open(src, "rb").read())
    tl.generate_perf_report_pytorch(str(trace))
    assert (tmp_path / "run.pt.trace_perf_report.xlsx").exists()  # TraceLens' own default name


def test_unsupported_arguments_name_themselves(conformance, tmp_path):
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    for kw in ({"short_kernel_study": True}, {"extension_file": "x.py"}, {"detect_recompute": True},
               {"micro_idle_thresh_us": 5}, {"include_overlap_info": True}, {"enable_origami": True}):
        with pytest.raises(NotImplementedError, match=list(kw)[0]):
            tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "x"), **kw)
    assert not (tmp_path / "x").exists()
    # accepted: what TraceLens ignores, or what is always made
    got = tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "y"), collective_analysis=False,
                                          topk_roofline_ops=3, gpu_arch_platform="H100")
    assert "GEMM" in got


def test_gpu_arch_dict(conformance, tmp_path):
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    by_name = tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "a"), gpu_arch_platform="H100")
    with pytest.raises(tlcompare.UsageError):
        tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "b"), gpu_arch_platform="H100",
                                        gpu_arch={"name": "x"})
    assert by_name["GEMM"].shape[1] >= tl.generate_perf_report_pytorch(
        trace, output_csvs_dir=str(tmp_path / "c"))["GEMM"].shape[1]


@pytest.mark.skipif(not TRACELENS, reason="TRACELENS (a TraceLens checkout) not set: no side-by-side run")
def test_generate_perf_report_is_tracelens(conformance, tmp_path):
    """Side by side with TraceLens' own function: the same sheets, columns and shapes, and
    the values match by the conformance suite's csvdiff."""
    trace = os.path.join(conformance, "traces", "bert_h100.json.gz")
    env = dict(os.environ, PYTHONPATH=TRACELENS)
    r = run(["/usr/bin/python3", "-c", REF_SCRIPT, trace, str(tmp_path / "ref"), str(tmp_path / "ref.json")], env=env)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "ref.json") as f:
        ref = json.load(f)
    got = tl.generate_perf_report_pytorch(trace, output_csvs_dir=str(tmp_path / "mine"), kernel_summary=True)
    assert list(got) == list(ref)
    for name, df in got.items():
        assert [list(map(str, df.columns)), list(df.shape)] == ref[name], name
    r = run([sys.executable, os.path.join(conformance, "csvdiff.py"), str(tmp_path / "mine"), str(tmp_path / "ref")])
    assert r.returncode == 0, r.stdout


def test_compare_perf_reports(conformance, tmp_path):
    case = os.path.join(conformance, "cases", "ops_threads")
    ins = [os.path.join(case, "inputs", d) for d in ("256thread", "512thread")]
    got = tl.generate_compare_perf_reports_pytorch(ins, output=str(tmp_path / "c.xlsx"), names=["256thread", "512thread"],
                                                   sheets=["gpu_timeline", "ops_summary"],
                                                   output_csvs_dir=str(tmp_path / "csvs"))
    with open(os.path.join(case, "expected", "order.txt")) as f:
        order = [l.strip() for l in f if l.strip()]
    assert list(got) == order
    assert (tmp_path / "c.xlsx").exists()
    back = read_csvs(str(tmp_path / "csvs"))
    for name in order:
        assert got[name].shape == back[name].shape
    assert tl.compare_perf_reports_pytorch is tl.generate_compare_perf_reports_pytorch
    none = tl.generate_compare_perf_reports_pytorch(ins, output=None, names=["a", "b"], sheets=["gpu_timeline"])
    assert list(none) == ["gpu_timeline"]
