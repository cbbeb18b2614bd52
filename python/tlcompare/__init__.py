"""tlcompare: TraceLens performance reports and their comparison, as pandas objects.

    import tlcompare
    sheets = tlcompare.report("rank0.pt.trace.json.gz")      # dict[str, DataFrame]
    cmp = tlcompare.compare(["h100.json.gz", "mi300.json.gz"], names=["h100", "mi300"])
    cmp.sheets["ops_summary_intersect"], cmp.summary, cmp.to_excel("cmp.xlsx")

The work is done by tlcompare's C library (the same runs as the tlcompare and tlreport
programs), with the GIL released; Ctrl-C stops it with KeyboardInterrupt and leaves no
file, whole or half-written; a Ctrl-C after a run's outputs are committed (its last step)
leaves them: the call returns, and Python raises the KeyboardInterrupt right after it.
Errors are tlcompare.Error (InputError, UsageError, OutputError, OutOfMemoryError) carrying
the command line's one-line message; OutOfMemoryError is also a builtin MemoryError (the
run's outputs are removed, the memory it had taken is not given back).
"""
import json as _json
import math as _math
import os as _os
from collections import namedtuple as _namedtuple

from . import _core
from ._core import Error, InputError, OutOfMemoryError, OutputError, UsageError

__all__ = ["report", "compare", "Comparison", "Gate", "Error", "InputError", "UsageError", "OutputError",
           "OutOfMemoryError"]
__version__ = _core.version()

# A fork while another thread runs a comparison (multiprocessing's "fork" start method)
# copies the run lock held by a thread the child does not have: reset it in the child.
_os.register_at_fork(after_in_child=_core._after_fork)

_DTYPES = {"i": "<i8", "f": "<f8", "b": "?"}


def _mangle(names):
    """Repeated column names as pandas.read_csv gives them: x, x.1, x.2, ..."""
    seen, out = {}, []
    taken = set(names)
    for n in names:
        k = seen.get(n, 0)
        if k == 0:
            seen[n] = 1
            out.append(n)
            continue
        new = f"{n}.{k}"
        while new in taken:
            k += 1
            new = f"{n}.{k}"
        seen[n] = k + 1
        taken.add(new)
        out.append(new)
    return out


def _frame(names, columns):
    import numpy as np
    import pandas as pd

    if not columns:
        return pd.DataFrame()  # an empty result: what read_csv cannot read, an empty frame
    data = {}
    for i, (kind, values) in enumerate(columns):
        if kind == "o":
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
        else:
            arr = np.frombuffer(values, dtype=_DTYPES[kind])
        data[i] = arr
    if len(set(names)) != len(names):
        names = _mangle(names)
    df = pd.DataFrame(data, copy=True)
    df.columns = pd.Index(names, dtype=object)
    if len(df) == 0:
        df.index = pd.Index([], dtype=object)  # what read_csv gives for a header alone
    return df


_NA_READY = []


def _pandas_na():
    """Tell the extension whether this pandas reads the text None as NaN (pandas 2 does)."""
    if not _NA_READY:
        try:
            from pandas._libs.parsers import STR_NA_VALUES
            _core.set_none_is_missing("None" in STR_NA_VALUES)
        except ImportError:
            pass
        _NA_READY.append(True)


def _frames(raw):
    return {name: _frame(names, cols) for name, (names, cols) in raw}


def _path(p, what):
    """A path argument as str (bytes decoded as os.fsdecode does: the extension encodes it
    back to the same bytes); TypeError for anything else."""
    if not isinstance(p, (str, bytes, _os.PathLike)):
        raise TypeError(f"{what}: a path (str, bytes or os.PathLike) is needed, not {type(p).__name__}")
    return _os.fsdecode(p)


def report(trace, *, sheets=None, capture_folder=None, gpu_arch=None, include_unlinked_kernels=False,
           topk_ops=None, inference=False, group_by_parent_module=False, group_by_num_kernels=False,
           include_call_stack=False, enable_pseudo_ops=False, output_xlsx=None, output_csvs_dir=None,
           html=None, quiet=False, _drop=None):
    """The TraceLens report of a PyTorch profiler trace, as tlreport writes it.

    Returns {sheet name: DataFrame} in workbook order, every sheet with the columns and
    values of its CSV and the dtypes pandas.read_csv gives for it (int64, float64, bool,
    object; missing values NaN).  `sheets` keeps only the sheets named.  The options are
    tlreport's (--capture-folder, --gpu-arch, --include_unlinked_kernels, --topk_ops,
    --inference, ...); output_xlsx / output_csvs_dir also write the report (whole or not
    at all; only the sheets kept); html writes its page (the --html page: GPU
    time, the largest ops, the roofline).  A trace written TRACE@DIR takes DIR as its capture folder.
    The keywords, their ranges and the rules between them are tlreport's option table's
    (src/run/report_args.c); None means the option's default.
    """
    options = dict(locals())
    del options["trace"]
    _pandas_na()
    raw, line = _core.report(_path(trace, "trace"), options)
    return _frames(raw)


def _memory_input(name, frames):
    """A dict of DataFrames as the extension's in-memory report: (name, [(sheet, columns, values)])."""
    sheets = []
    for sheet, df in frames.items():
        if not isinstance(sheet, str):
            raise UsageError(f"report '{name}': sheet names are str, got {sheet!r}")
        if not hasattr(df, "columns") or not hasattr(df, "__getitem__"):
            raise UsageError(f"report '{name}': sheet '{sheet}' is not a DataFrame")
        cols = [str(c) for c in df.columns]
        values = []
        for i in range(len(cols)):
            col = df.iloc[:, i]
            values.append(col.tolist())
        sheets.append((sheet, cols, values))
    return (name, sheets)


Gate = _namedtuple("Gate", ["failed", "violations"])
Gate.__doc__ = "The gate's verdict: failed (bool) and the command line's violation lines."


class Comparison:
    """A comparison's results, held by the C library.

    sheets   {result sheet: DataFrame}, in workbook order
    summary  the --summary-json object (dicts and lists)
    lca      the lca_summary sheet of two traces, or None
    ranks    runs: the ranks_gpu_timeline sheet (a row per rank, each side's times and diffs), or None
    collectives  runs: the collectives sheet (paired on collective, group, dtype, size), or None
    tags     the sides' tags
    gate_failed  whether the run's own gate (fail_on_regression) failed
    """

    def __init__(self, core):
        self._core = core
        self._sheets = None
        self._summary = None

    @property
    def sheets(self):
        if self._sheets is None:
            _pandas_na()
            self._sheets = _frames(self._core.sheets())
        return self._sheets

    @property
    def summary(self):
        if self._summary is None:
            text = self._core.summary_json()
            self._summary = _json.loads(text) if text.strip() else {}
        return self._summary

    @property
    def summary_markdown(self):
        return self._core.summary_md()

    def summary_text(self, color=False):
        """The summary as tlcompare prints it."""
        return self._core.summary_text(bool(color))

    @property
    def lca(self):
        return self.sheets.get("lca_summary")

    @property
    def ranks(self):
        return self.sheets.get("ranks_gpu_timeline")

    @property
    def collectives(self):
        return self.sheets.get("collectives")

    @property
    def tags(self):
        return self._core.tags()

    @property
    def gate_failed(self):
        return self._core.status() == 3

    def to_excel(self, path, *, csvs_dir=None):
        """Write the comparison workbook (summary sheet first) and, with csvs_dir, the CSVs."""
        self._core.write(_os.fspath(path), None if csvs_dir is None else _os.fspath(csvs_dir))

    def to_csvs(self, directory):
        """Write every result sheet as DIRECTORY/<sheet>.csv (whole or not at all)."""
        self._core.write(None, _os.fspath(directory))

    def gate(self, pct, *, min_time_ms=1.0, min_delta_ms=0.0, min_delta_pct=0.0, top=0, confidence=0.0, fdr=False):
        """The --fail-on-regression gate at PCT percent: Gate(failed, violations)."""
        failed, text = self._core.gate(float(pct), float(min_time_ms), float(min_delta_ms), float(min_delta_pct),
                                       int(top), float(confidence), bool(fdr))
        return Gate(bool(failed), [l for l in text.splitlines() if l])

    def __repr__(self):
        return f"<tlcompare.Comparison {' vs '.join(self.tags)}: {len(self._core.sheets())} sheets>"


def compare(inputs, *, names=None, sheets=("all",), captures=None, gpu_arch=None, tracelens_keys=False,
            min_delta_ms=0.0, min_delta_pct=0.0, top=None, confidence=None, fdr=False, steps=None,
            force_compare=False, fail_on_regression=None, min_time_ms=1.0, inference=False, group_by_parent_module=False,
            group_by_num_kernels=False, enable_pseudo_ops=False, tracediff_dir=None, summary_md=None,
            summary_json=None, html=None, no_summary=False, jobs=None, quiet=False):
    """Compare reports as tlcompare does: the first input is the baseline.

    An input is a path (a trace .json/.json.gz, an .xlsx workbook, a CSV directory; TRACE@DIR
    for a trace with its capture folder; a run: a directory of rank traces or a pattern with a
    '*', whose ranks are read on `jobs` threads) or an already-loaded report, dict[str, DataFrame].
    The options are the command line's (--names, --sheets, --tracelens-keys, --min-delta-ms,
    --fail-on-regression, ...).  Returns a Comparison; nothing is written unless asked
    (tracediff_dir, summary_md, summary_json, html -- the --html page -- here;
    Comparison.to_excel / to_csvs later).
    The keywords, their ranges and the rules between them are tlcompare's option table's
    (src/run/compare_args.c); None means the option's default.
    """
    options = dict(locals())
    del options["inputs"]
    if isinstance(inputs, (str, bytes, _os.PathLike, dict)):
        raise UsageError("compare() takes a list of inputs (at least two)")
    items = [_memory_input(f"report{k + 1}", x) if isinstance(x, dict) else _path(x, "input")
             for k, x in enumerate(inputs)]
    core = _core.compare(items, options)
    return Comparison(core)
