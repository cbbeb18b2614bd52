#!/usr/bin/env python3
"""Stress the commit of a run's outputs (make stress): signals at random points, and
concurrent runs on one output set.

signals: each run (tlreport on one trace, or tlcompare on two traces with every output:
workbook, CSV directory, both summaries, TraceDiff directory) starts over an existing
output set and gets SIGINT, SIGTERM or SIGHUP after a random delay (0 to --max-delay s,
seeded).  Which files are new is told by their inode (a committed output is renamed into
place: a new inode).  Every run must end one of three ways:
  - exit status 128 + signal: nothing changed, nothing added, no temporary left;
  - killed by the signal, having said "interrupted after the outputs were written":
    every output new;
  - exit status 0 (finished before the signal): every output new.

concurrent: 2 and 4 runs of tlcompare on the bundled workbooks, at once, on one output
set, each with its own --names tags, --rounds times: after each round every file whose
name is the same for all runs (the workbook, the summary, gpu_timeline.csv, ...) holds the
tags of one and the same run.

usage: outputs.py BUILD_DIR [--runs N] [--rounds N] [--seed S] [--max-delay SECONDS]
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def files_under(d):
    """{relative path: inode} of every file and directory under d (a directory's as
    None: an existing output directory stays, its files are replaced)."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = None if n in dirs else os.lstat(p).st_ino
    return out


def signal_runs(build, work, runs, rng, max_delay):
    gentrace = os.path.join(build, "tools", "gentrace")
    # sizes for runs of about 0.5-3 s here, so that the signals fall before, inside and
    # after the commit
    big, a, b = (os.path.join(work, n) for n in ("big.json", "a.json", "b.json"))
    for flavour, size, path in (("cuda", "80M", big), ("cuda", "25M", a), ("rocm", "25M", b)):
        subprocess.run([gentrace, "--flavour", flavour, "--size", size, "--plain", "-o", path], check=True)
    kinds = {
        "report": [os.path.join(build, "tlreport"), big, "-q", "-o", "r.xlsx", "--output_csvs_dir", "r_csvs"],
        "compare": [os.path.join(build, "tlcompare"), a, b, "-q", "-o", "c.xlsx", "--output_csvs_dir", "c_csvs",
                    "--summary-md", "c.md", "--summary-json", "c.json", "--tracediff-dir", "c_td"],
    }
    pristine = {}
    for kind, cmd in kinds.items():
        d = os.path.join(work, "pristine_" + kind)
        os.mkdir(d)
        subprocess.run(cmd, cwd=d, check=True)
        pristine[kind] = d
    tally, bad = {}, []
    tmpdir = os.path.join(work, "tmp")
    os.mkdir(tmpdir)
    for i in range(runs):
        kind = "report" if i % 2 == 0 else "compare"
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(pristine[kind], out)
        before = files_under(out)
        nfiles = sum(v is not None for v in before.values())
        sig, delay = rng.choice(SIGNALS), rng.uniform(0, max_delay)
        p = subprocess.Popen(kinds[kind], cwd=out, stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=tmpdir))
        time.sleep(delay)
        if p.poll() is None:
            p.send_signal(sig)
        err = p.communicate()[1].decode(errors="replace")
        after = files_under(out)
        temps = [n for n in after if ".tmp-" in os.path.basename(n)] + os.listdir(tmpdir)
        changed = [n for n in before if n in after and after[n] != before[n]]
        missing = [n for n in before if n not in after]
        added = [n for n in after if n not in before]
        rc = p.returncode
        if rc == 128 + sig:
            outcome, ok = "exit 128+signal, nothing changed", not changed and not missing and not added and not temps
        elif rc == -sig:
            outcome = "killed after the outputs were written"
            ok = ("interrupted after the outputs were written" in err and len(changed) == nfiles
                  and not missing and not temps)
        elif rc == 0:
            outcome = "finished"
            ok = len(changed) == nfiles and not missing and not temps
        else:
            outcome, ok = f"status {rc}", False
        key = f"{kind}: {outcome}"
        tally[key] = tally.get(key, 0) + 1
        if not ok:
            bad.append(f"run {i} ({kind}, {signal.Signals(sig).name} at {delay:.2f} s): {outcome}; "
                       f"{len(changed)}/{nfiles} changed, missing {missing[:3]}, added {added[:3]}, "
                       f"temporaries {temps[:3]}; stderr: {err.strip()[:200]}")
    return tally, bad


def tags_in(path):
    """The run tags ("rNbase") a file holds: the workbook's parts, or the text."""
    if path.endswith(".xlsx"):
        with zipfile.ZipFile(path) as z:
            data = b"".join(z.read(n) for n in z.namelist())
    else:
        with open(path, "rb") as f:
            data = f.read()
    return {t.decode() for t in re.findall(rb"r\d+base", data)}


def concurrent_rounds(build, work, nproc, rounds):
    tlcompare = os.path.join(build, "tlcompare")
    base = os.path.join(TOP, "examples", "baseline.xlsx")
    cand = os.path.join(TOP, "examples", "candidate.xlsx")
    out = os.path.join(work, f"concurrent{nproc}")
    os.mkdir(out)
    bad = []
    for r in range(rounds):
        ps = [subprocess.Popen([tlcompare, base, cand, "--names", f"r{k}base", f"r{k}cand", "-q", "-o", "c.xlsx",
                                "--output_csvs_dir", "csvs", "--summary-md", "c.md"], cwd=out)
              for k in range(nproc)]
        rcs = [p.wait() for p in ps]
        if any(rcs):
            bad.append(f"{nproc} runs, round {r}: exit statuses {rcs}")
            continue
        shared = ["c.xlsx", "c.md"] + [os.path.join("csvs", n) for n in os.listdir(os.path.join(out, "csvs"))
                                       if "_r" not in n]
        seen = {}
        for n in shared:
            for t in tags_in(os.path.join(out, n)):
                seen.setdefault(t, []).append(n)
        temps = [n for n in files_under(out) if ".tmp-" in n]
        if len(seen) != 1 or temps:
            bad.append(f"{nproc} runs, round {r}: mixed set {sorted((t, len(v)) for t, v in seen.items())}, "
                       f"temporaries {temps[:3]}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-delay", type=float, default=3.0)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="tlstress.") as work:
        t0 = time.time()
        tally, bad = signal_runs(build, work, a.runs, rng, a.max_delay)
        print(f"signals: {a.runs} runs in {time.time() - t0:.0f} s (seed {a.seed}, delays 0-{a.max_delay} s)")
        for k in sorted(tally):
            print(f"  {tally[k]:4d}  {k}")
        for nproc in (2, 4):
            t0 = time.time()
            cbad = concurrent_rounds(build, work, nproc, a.rounds)
            print(f"concurrent: {nproc} runs x {a.rounds} rounds in {time.time() - t0:.0f} s: "
                  f"{a.rounds - len(cbad)} whole sets from one run")
            bad += cbad
    for b in bad:
        print("FAIL:", b)
    print("stress:", "FAILED" if bad else "passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
