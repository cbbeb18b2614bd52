"""Ctrl-C during a run: KeyboardInterrupt soon after, and no output left behind."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import TOP

GENTRACE = os.path.join(TOP, "build", "tools", "gentrace")
CHILD = r"""
import sys, time, tlcompare
print("ready", flush=True)
try:
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
    """A 1 GB trace (40 MB under the sanitizers, which read twenty times slower): its load
    lasts past every delay below on any machine, so the signal lands inside the reader."""
    if not os.access(GENTRACE, os.X_OK):
        pytest.skip(f"{GENTRACE} not built (make build/tools/gentrace)")
    sanitized = os.environ.get("TLCOMPARE_SANITIZED")
    path = tmp_path_factory.mktemp("big") / "big.json"
    subprocess.run([GENTRACE, "--size", "40M" if sanitized else "1G", "--plain", "-o", str(path)], check=True)
    yield str(path)
    os.unlink(path)


@pytest.mark.parametrize("what,delay", [("report", 0.3), ("report", 0.9), ("compare", 0.5), ("compare", 1.5)])
def test_ctrl_c(what, delay, big_trace, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.environ.get("TLCOMPARE_PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-c", CHILD, what, big_trace, str(tmp_path / "out.xlsx"),
                          str(tmp_path / "csvs")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
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
    # the cancel flag reaches the trace reader's threads, which check it between events:
    # the run stops within milliseconds; the bound leaves room for a loaded machine, and
    # for the sanitizers' twentyfold slowdown
    limit = 0.5 if not os.environ.get("TLCOMPARE_SANITIZED") else 10.0
    assert took < limit, f"KeyboardInterrupt {took:.2f} s after SIGINT"
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)  # nothing written, no temporaries
