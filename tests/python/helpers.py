"""What the tests share: running the programs, reading CSVs as pandas does."""
import os
import shlex
import subprocess

import pandas as pd


def read_csvs(directory, names=None):
    """{sheet: DataFrame} of DIRECTORY/<sheet>.csv, as a user reads the CSVs (exact floats)."""
    out = {}
    names = names or sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".csv"))
    for n in names:
        try:
            out[n] = pd.read_csv(os.path.join(directory, n + ".csv"), float_precision="round_trip")
        except pd.errors.EmptyDataError:  # an empty result: no header at all
            out[n] = pd.DataFrame()
    return out


def frames_equal(got, want, where):
    """Frame `got` is `want`: names, order, dtypes and values exactly (NaN equal to NaN)."""
    assert list(got.columns) == list(want.columns), f"{where}: columns differ"
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    for c in range(got.shape[1]):
        name = got.columns[c]
        assert got.dtypes.iloc[c] == want.dtypes.iloc[c], \
            f"{where}: column {name!r} is {got.dtypes.iloc[c]}, read_csv gives {want.dtypes.iloc[c]}"
    pd.testing.assert_frame_equal(got, want, check_exact=True, obj=where)


def run(cmd, cwd=None, env=None):
    """Run a program; its CompletedProcess (text)."""
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


def case_args(case_dir):
    with open(os.path.join(case_dir, "args")) as f:
        return shlex.split(f.read())


def in_dir(d, fn):
    """fn() run with D as the working directory (a case's arguments are relative to it)."""
    cwd = os.getcwd()
    os.chdir(d)
    try:
        return fn()
    finally:
        os.chdir(cwd)
