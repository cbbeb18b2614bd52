"""Ctrl-C during a run: KeyboardInterrupt soon after, and no output left behind; Ctrl-C at
the very end of a run, after its outputs are committed: the call returns, and the outputs
stay, complete."""
import os
import signal
import subprocess
import sys
import time

import pytest
import zipfile

from conftest import TOP

GENTRACE = os.path.join(TOP, "build", "tools", "gentrace")
# pandas is imported before "ready": the call imports it on its first use, and a signal
# landing inside that import is Python's to report (a half-imported module), not the run's
CHILD = r"""
import sys, time, tlcompare, pandas
try:
    print("ready", flush=True)  # inside: a signal sent on "ready" may land before the next line
    if sys.argv[1] == "report":
        tlcompare.report(sys.argv[2], output_xlsx=sys.argv[3], output_csvs_dir=sys.argv[4], quiet=True)
    else:
        c = tlcompare.compare([sys.argv[2], sys.argv[2]], names=["a", "b"], quiet=True)
        c.to_excel(sys.argv[3], csvs_dir=sys.argv[4])
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
    sys.exit(130)
"""


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory):
    """A 1 GB trace (100 MB under the sanitizers, which read twenty times slower): its load
    lasts past every delay below on any machine, so the signal lands inside the reader."""
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built (make build/tools/gentrace)")
    sanitized = os.environ.get("TLCOMPARE_SANITIZED")
    path = tmp_path_factory.mktemp("big") / "big.json"
    subprocess.run([GENTRACE, "--size", "100M" if sanitized else "1G", "--plain", "-o", str(path)], check=True)
    # on disk before the runs: the kernel writing back a gigabyte of dirty pages while a
    # run unwinds can stall its frees and its temporaries' removal for seconds, a delay
    # that is the disk's, not the cancel's
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    yield str(path)
    os.unlink(path)


def default_sigint():
    """A child started from a shell's background job inherits SIGINT ignored, and Python
    then installs no handler for it: the test's own signal would be lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


IDLE_CHILD = r"""
import sys, time
print("ready", flush=True)
try:
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
    sys.exit(130)
"""


@pytest.fixture(scope="module")
def idle_latency():
    """The baseline, on this machine, now: how long SIGINT takes to become a
    KeyboardInterrupt in a child doing nothing else (the machine's scheduling delay)."""
    worst = 0.0
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", IDLE_CHILD], preexec_fn=default_sigint, stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
        worst = max(worst, float(out.split()[-1]) - sent)
    return worst


@pytest.mark.parametrize("what,delay", [("report", 0.3), ("report", 0.9), ("compare", 0.5), ("compare", 1.5)])
def test_ctrl_c(what, delay, big_trace, tmp_path, idle_latency):
    env = dict(os.environ, PYTHONPATH=os.environ.get("TLCOMPARE_PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-c", CHILD, what, big_trace, str(tmp_path / "out.xlsx"),
                          str(tmp_path / "csvs")], preexec_fn=default_sigint, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=str(tmp_path))
    assert p.stdout.readline().strip() == "ready"
    time.sleep(delay)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    if "finished" in out:
        pytest.skip(f"the run finished within {delay} s: nothing to interrupt on this machine")
    assert p.returncode == 130, (out, err)
    took = float(out.split()[-1]) - sent
    # the cancel flag reaches the trace reader's threads, which check it between events,
    # and every step after the reading, which check it between phases and every 64Ki
    # turns of their loops: the run stops within milliseconds.  The bound is 1 s (10 s
    # under the sanitizers' twentyfold slowdown; a run that did not stop would take
    # seconds more) plus ten times the machine's own delay in delivering a signal,
    # measured now: a loaded machine delays both, though not always alike
    limit = (1.0 if not os.environ.get("TLCOMPARE_SANITIZED") else 10.0) + 10 * idle_latency
    assert took < limit, f"KeyboardInterrupt {took:.2f} s after SIGINT (limit {limit:.2f} s)"
    left = sorted(os.listdir(tmp_path))
    if left:
        # the run had committed its outputs when the signal came (a fast machine: the
        # interrupt is raised as the last call returns, before "finished" is printed).
        # Then they must be whole: both outputs, the workbook a valid zip with a sheet for
        # every CSV; never a temporary or a partial file
        assert left == ["csvs", "out.xlsx"], left
        with zipfile.ZipFile(tmp_path / "out.xlsx") as z:
            assert z.testzip() is None
            sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        csvs = sorted(os.listdir(tmp_path / "csvs"))
        assert csvs and all(n.endswith(".csv") for n in csvs), csvs
        assert len(sheets) >= len(csvs), (sheets, csvs)
        pytest.skip(f"the run had written its outputs within {delay} s: nothing to interrupt on this machine")


END_CHILD = r"""
import os, sys, time, tlcompare, pandas
out, csvs = sys.argv[2], sys.argv[3]
r = None
try:
    print("ready", flush=True)  # inside: a signal sent on "ready" may land before the next line
    r = tlcompare.report(sys.argv[1], output_xlsx=out, output_csvs_dir=csvs, quiet=True)
    print("returned", flush=True)
    time.sleep(5)  # the interrupt, delivered again after the call, lands here at the latest
except KeyboardInterrupt:
    print("interrupted", "returned" if r is not None else "in-call", flush=True)
    sys.exit(130)
"""


def test_ctrl_c_at_the_end(tmp_path):
    """SIGINT at every moment of a small run, its end included: the call either raises
    KeyboardInterrupt having written nothing, or returns (its outputs committed and
    complete), the interrupt then raised after it; never a partial output."""
    trace = os.path.join(TOP, "examples", "traces", "vit_h100.pt.trace.json.gz")
    env = dict(os.environ, PYTHONPATH=os.environ.get("TLCOMPARE_PYTHONPATH", ""))

    def start(d):
        d.mkdir()
        return subprocess.Popen([sys.executable, "-c", END_CHILD, trace, str(d / "out.xlsx"), str(d / "csvs")],
                                preexec_fn=default_sigint, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=str(d))

    # the baseline, on this machine, now: the run's time and its complete outputs
    p = start(tmp_path / "base")
    assert p.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    assert p.stdout.readline().strip() == "returned"
    took = time.monotonic() - t0
    p.kill()
    p.communicate()
    want = sorted(os.listdir(tmp_path / "base" / "csvs"))
    assert want and os.path.getsize(tmp_path / "base" / "out.xlsx") > 0
    def interrupt(d, delay):
        """One run signalled `delay` s after it starts: where the signal landed."""
        p = start(d)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, (out, err)
        state = out.split()[-1]
        left = sorted(os.listdir(d))
        if state == "in-call" and left == []:
            return state  # stopped: nothing written, no temporaries
        # the outputs are committed: complete, whatever the interrupt did after
        assert left == ["csvs", "out.xlsx"], (state, left)
        assert sorted(os.listdir(d / "csvs")) == want, state
        with zipfile.ZipFile(d / "out.xlsx") as z:
            assert z.testzip() is None
        return state

    seen = {interrupt(tmp_path / f"run{k}", took * k / 8) for k in range(10)}  # from the start to past the end
    # the signals landed both inside the run and after it.  A loaded machine may hold this
    # process back for the whole of a short run between "ready" and the signal: the run is
    # then signalled again at once, a few times, until one lands inside it
    for k in range(10):
        if "in-call" in seen:
            break
        seen.add(interrupt(tmp_path / f"again{k}", 0))
    assert "in-call" in seen, seen
