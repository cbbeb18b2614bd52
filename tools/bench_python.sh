#!/usr/bin/env bash
# bench_python.sh - the Python module against the programs and TraceLens, side by side:
#
#   report:   tlcompare.report(timesformer_h100) returning its DataFrames, against
#             `tlreport TRACE -o X.xlsx` (the same sheets, written) and against TraceLens'
#             generate_perf_report_pytorch(TRACE, kernel_summary=True) returning the same sheets
#   compare:  tlcompare.compare(big20k baseline, candidate) with its .sheets as DataFrames,
#             against `tlcompare A B -o X.xlsx --output_csvs_dir D`
#
# Each is timed BENCH_PY_RUNS times (default 5; TraceLens BENCH_TL_RUNS, default 3), wall
# clock, the median shown; the programs as processes, the Python calls in one warm
# interpreter (module and pandas imported).  Prints the table and the ratios.
#
# Environment: BUILD (build), PYTHON (/usr/bin/python3), BENCH_DIR ($BUILD/bench: the 20k
# reports, made by build/tools/genreport as tools/bench.sh makes them, and shared with it),
# CONFORMANCE (../shared/conformance: the trace), TRACELENS (a directory holding the TraceLens
# package; default: extracted from ../.mirror/AMD-AGI+TraceLens/repo into $BUILD/tracelens;
# none: its column is left out).  A measurement: exits 0 unless a run fails.
set -u
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
DIR=${BENCH_DIR:-$BUILD/bench}
CONF=${CONFORMANCE:-../shared/conformance}
TRACE=$CONF/traces/timesformer_h100.json.gz
RUNS=${BENCH_PY_RUNS:-5}
TL_RUNS=${BENCH_TL_RUNS:-3}
MIRROR=${TRACELENS_MIRROR:-../.mirror/AMD-AGI+TraceLens/repo}

make --no-print-directory BUILD="$BUILD" PYTHON="$PY" python "$BUILD/tlcompare" "$BUILD/tlreport" \
    "$BUILD/tools/genreport" >/dev/null || { echo "bench_python: the build failed" >&2; exit 1; }
[ -f "$TRACE" ] || { echo "bench_python: $TRACE not found (CONFORMANCE=DIR)" >&2; exit 1; }

if [ -z "${TRACELENS+x}" ]; then
    TRACELENS=
    if [ -d "$BUILD/tracelens/TraceLens" ]; then
        TRACELENS=$BUILD/tracelens
    elif [ -d "$MIRROR" ]; then
        mkdir -p "$BUILD/tracelens" &&
            git --git-dir="$MIRROR" archive HEAD TraceLens | tar -x -C "$BUILD/tracelens" && TRACELENS=$BUILD/tracelens
    fi
fi

# the 20k-row reports, as tools/bench.sh makes and caches them
GEN_HASH=$(cksum <tools/genreport.c | cut -d' ' -f1)
D=$DIR/r20000
mkdir -p "$D" "$DIR/out"
for role in baseline candidate; do
    if [ ! -f "$D/$role.csv.done" ]; then
        echo "bench_python: generating the 20000-row $role report in $D/$role/ ..."
        rm -rf "${D:?}/$role"
        "$BUILD/tools/genreport" --rows 20000 --seed 1 --role $role --csv "$D/$role" || exit 1
        echo "$GEN_HASH" >"$D/$role.csv.done"
    fi
done

echo "bench_python: load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs each (median wall time)"
TLCOMPARE_PYTHONPATH=$(cd "$BUILD/python" && pwd) "$PY" - "$BUILD" "$TRACE" "$D" "$DIR/out" "$RUNS" "$TL_RUNS" \
    "$TRACELENS" <<'PYEOF'
import os, statistics, subprocess, sys, time
build, trace, d20k, out, runs, tl_runs, tracelens = sys.argv[1:8]
runs, tl_runs = int(runs), int(tl_runs)
sys.path.insert(0, os.environ["TLCOMPARE_PYTHONPATH"])
import pandas  # noqa: F401  (warm: the import is not the work)
import tlcompare

def timed(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)

def proc(cmd):
    def go():
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"bench_python: {' '.join(cmd)} failed: {r.stderr}")
    return go

rows = []
tlreport = timed(proc([f"{build}/tlreport", trace, "-q", "-o", f"{out}/py_report.xlsx"]), runs)
tlcompare.report(trace, quiet=True)
rep = timed(lambda: tlcompare.report(trace, quiet=True), runs)
rows.append(("tlreport timesformer_h100 (-o xlsx)", tlreport, None))
rows.append(("report() -> DataFrames", rep, f"{rep / tlreport:.2f}x tlreport"))
if tracelens:
    script = ("import sys, time, tempfile\n"
              "from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch\n"
              "d = tempfile.mkdtemp()\n"
              "t0 = time.perf_counter()\n"
              "r = generate_perf_report_pytorch(sys.argv[1], output_csvs_dir=d, kernel_summary=True)\n"
              "print(time.perf_counter() - t0)\n")
    ts = []
    for _ in range(tl_runs):
        r = subprocess.run(["/usr/bin/python3", "-c", script, trace], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=tracelens))
        if r.returncode != 0:
            sys.exit(f"bench_python: TraceLens failed: {r.stderr[-2000:]}")
        ts.append(float(r.stdout.strip().splitlines()[-1]))
    tl = statistics.median(ts)
    rows.append(("TraceLens generate_perf_report_pytorch", tl, f"report() is 1/{tl / rep:.0f} of it"))
base, cand = f"{d20k}/baseline", f"{d20k}/candidate"
cli = timed(proc([f"{build}/tlcompare", base, cand, "-q", "-o", f"{out}/py_cmp.xlsx", "--output_csvs_dir",
                  f"{out}/py_cmp_csvs"]), runs)
def cmp_frames():
    c = tlcompare.compare([base, cand], quiet=True)
    c.sheets
cmp_only = timed(lambda: tlcompare.compare([base, cand], quiet=True), runs)
cmp = timed(cmp_frames, runs)
rows.append(("tlcompare big20k (-o xlsx + CSVs)", cli, None))
rows.append(("compare() (results kept in C)", cmp_only, f"{cmp_only / cli:.2f}x CLI"))
rows.append(("compare() + .sheets -> DataFrames", cmp, f"{cmp / cli:.2f}x CLI"))
w = max(len(r[0]) for r in rows)
for name, t, note in rows:
    print(f"  {name:<{w}}  {t:8.3f} s  {note or ''}")
PYEOF
