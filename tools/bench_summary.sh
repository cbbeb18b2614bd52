#!/usr/bin/env bash
# bench_summary.sh - what the summary costs (run by tools/bench.sh; runs on its own too).
#
# The summary phase of `tlcompare --timings` (the verdicts: the noise taken from the results,
# the calls paired through the alignment, the steps measured and judged, the lowest common
# ops, the efficiency lines, and the summary rendered as the worksheet, Markdown and JSON)
# against the whole run, on:
#   - the big20k comparison: $BENCH_DIR/r20000/{baseline,candidate} (20k rows per sheet, CSV;
#     made by tools/bench.sh, or here with build/tools/genreport when missing);
#   - the owlv2 pair: TraceLens' owlv2 H100 test trace against a copy of it with every GPU
#     event 10% longer (a comparison of two traces: alignment, pairing, lowest common ops);
#     skipped without TraceLens' test traces ($TRACELENS: a TraceLens checkout, as
#     tools/bench.sh extracts it, holding tests/traces/h100/).
# Medians over BENCH_SUMMARY_RUNS runs (default 3) each; PASS when the summary costs under
# 5% of the run (BENCHMARKS.md).  Exits 0 whatever the figures are; 1 only if a run failed.
set -u
cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
DIR=${BENCH_DIR:-$BUILD/bench}
TL=$BUILD/tlcompare
GEN=$BUILD/tools/genreport
RUNS=${BENCH_SUMMARY_RUNS:-3}
TRACELENS=${TRACELENS:-}
OWL_REL=tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz
LIMIT=5
failed=0

[ -x "$TL" ] || { echo "bench_summary: $TL is missing (make $TL)" >&2; exit 1; }
mkdir -p "$DIR/out" || exit 1
OUT=$DIR/out/summary_cost

# run_case NAME A B: RUNS runs; prints the medians of the summary phase and of the total (s),
# and the share
run_case() {
    local name=$1 a=$2 b=$3 i t s tot
    local -a sums=() tots=()
    for ((i = 1; i <= RUNS; i++)); do
        rm -rf "$OUT" && mkdir -p "$OUT" || return 1
        if ! "$TL" "$a" "$b" -o "$OUT/cmp.xlsx" --output_csvs_dir "$OUT/csvs" --summary-json "$OUT/s.json" \
            --summary-md "$OUT/s.md" -q --timings >/dev/null 2>"$OUT/err.txt"; then
            echo "bench_summary: $name run $i FAILED:" >&2
            sed 's/^/bench_summary:   | /' "$OUT/err.txt" >&2
            failed=1
            return 1
        fi
        t=$(sed -n 's/^timings: //p' "$OUT/err.txt")
        s=$(echo "$t" | sed -n 's/.*summary \([0-9.]*\) s.*/\1/p')
        tot=$(echo "$t" | sed -n 's/.*total \([0-9.]*\) s.*/\1/p')
        sums+=("$s")
        tots+=("$tot")
    done
    median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
    s=$(median "${sums[@]}")
    tot=$(median "${tots[@]}")
    awk -v c="$name" -v s="$s" -v t="$tot" -v lim="$LIMIT" -v n="$RUNS" 'BEGIN {
        share = t > 0 ? 100 * s / t : 0
        printf "  %-4s %-34s summary %7.3f s of %7.3f s: %5.2f %% (target < %g %%; median of %d)\n",
               share < lim ? "PASS" : "MISS", c, s, t, share, lim, n }'
}

echo "== the summary's cost (tlcompare --timings: the summary phase against the whole run)"
echo "bench_summary: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

R=$DIR/r20000
if [ ! -d "$R/baseline" ] || [ ! -d "$R/candidate" ]; then
    if [ -x "$GEN" ]; then
        echo "bench_summary: generating the 20k-row reports in $R ..."
        mkdir -p "$R"
        for role in baseline candidate; do
            rm -rf "${R:?}/$role"
            "$GEN" --rows 20000 --seed 1 --role $role --csv "$R/$role" || { failed=1; break; }
        done
    fi
fi
if [ -d "$R/baseline" ] && [ -d "$R/candidate" ]; then
    run_case "big20k comparison (CSV)" "$R/baseline" "$R/candidate"
else
    echo "  n/a  big20k comparison: no inputs ($R; make bench makes them)"
fi

OWL=${TRACELENS:+$TRACELENS/$OWL_REL}
if [ -n "$OWL" ] && [ -f "$OWL" ]; then
    # the variant: every GPU event 10% longer (a real slowdown for the verdicts to find)
    SLOW=$DIR/traces/owlv2_slow10.json
    if [ ! -f "$SLOW" ] || [ "$SLOW" -ot "$OWL" ]; then
        mkdir -p "$DIR/traces"
        python3 - "$OWL" "$SLOW" <<'EOF' || failed=1
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
for e in t['traceEvents']:
    if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset') and 'dur' in e:
        e['dur'] = e['dur'] * 1.1
json.dump(t, open(sys.argv[2], 'w'))
EOF
    fi
    [ -f "$SLOW" ] && run_case "owlv2 pair (trace, +10% GPU)" "$OWL" "$SLOW"
else
    echo "  n/a  owlv2 pair: TraceLens' test trace not found (set TRACELENS to a TraceLens checkout)"
fi
echo "bench_summary: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
exit $failed
