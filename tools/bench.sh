#!/usr/bin/env bash
# bench.sh - time tlcompare end to end on large synthetic reports (run by `make bench`).
#
# Inputs are generated once by build/tools/genreport and cached under $BENCH_DIR
# (default build/bench; `rm -rf build/bench` to regenerate):
#   $BENCH_DIR/r20000/{baseline,candidate}/      20k rows per sheet, CSV  (~272 MB each)
#   $BENCH_DIR/r20000/{baseline,candidate}.xlsx  the same, as workbooks   (~71 MB each)
#   $BENCH_DIR/r{1000,5000,80000}/...            scaling inputs, CSV only (80k: ~1.1 GB each)
#
# Environment:
#   BENCH_RUNS=5        runs per main case (median, min, max are over these)
#   BENCH_LXW_RUNS=3    runs of build/tools/lxw_compare, the comparison with the workbook
#                       written by libxlsxwriter (bench/; slow; 0 skips)
#   BENCH_SMALL_RUNS=20 runs of the bundled examples
#   BENCH_SCALING=1     0 skips the 1k/5k/20k/80k scaling run
#   BENCH_SCALING_RUNS=3
#   BENCH_REPORTS=1     0 skips the report comparisons (the 20k, examples and scaling cases)
#   BENCH_TRACES=1      0 skips the trace section
#   BENCH_TRACE_RUNS=3  runs of each generated-trace case; BENCH_TRACE_SMALL_RUNS=20 of the timesformer ones
#   BENCH_DIR, BUILD    where the inputs/outputs and the binaries live
#   CONFORMANCE         the conformance suite (default ../shared/conformance) for the timesformer traces
#   BENCH_PERF=1        0 skips the runs without the perf sheets (TL_PERF_SHEETS=0: their cost)
#   BENCH_OWL_RUNS=10   runs of tlreport on TraceLens' owlv2 H100 test trace (each way)
# TraceLens itself, side by side in the same run (its generator on the same traces, its
# comparison tool on the same reports):
#   TRACELENS_DIR       a TraceLens checkout (holding TraceLens/ and tests/traces/); or
#   TRACELENS_GIT       a git directory of TraceLens: its HEAD's TraceLens/ and the two test
#                       traces are extracted into $BENCH_DIR/TraceLens (once per commit)
#   TRACELENS_PYTHON    the Python that runs it unmodified (default /usr/bin/python3; it needs
#                       pandas, openpyxl and tqdm: Debian's python3-pandas python3-openpyxl
#                       python3-tqdm)
#   BENCH_INFER=1       0 skips tools/bench_infer.sh (inference traces vs TraceLens' inference generator)
#   BENCH_RANKS=1       0 skips tools/bench_ranks.sh (rank sets vs TraceLens' multi-rank collective report)
#   BENCH_DISTRIBUTED=1 0 skips tools/bench_runs.sh (two 64-rank runs compared vs reading them, vs TraceLens' workflow)
#   BENCH_SUMMARY=1     0 skips tools/bench_summary.sh (the summary phase < 5% of the big20k comparison and
#                       of the owlv2 pair; BENCH_SUMMARY_RUNS=3 runs each)
#   BENCH_PYTHON=1      0 skips tools/bench_python.sh (report()/compare() vs tlreport/tlcompare/TraceLens)
#   BENCH_TRACELENS=1   0 skips TraceLens' runs; BENCH_TL_RUNS=3 runs of its generator per trace
#   BENCH_TL_COMPARE_ROWS="1000 5000"  report sizes for its comparison tool (one run each;
#                       it takes minutes at 20k rows); "" skips them
# Without TraceLens (neither variable, or no pandas) those cases are skipped with a line
# saying so, and so is the owlv2 trace, which comes from TraceLens' tests.
#
# The trace section runs when $BUILD/tlreport exists (it notes the skip otherwise):
#   tlreport on conformance/traces/timesformer_h100.json.gz and on generated traces of 1 GB and
#   250 MB (tools/gentrace, cached in $BENCH_DIR/traces/, ~2.3 GB; regenerated when
#   tools/gentrace.c changes), workbook + CSVs written; tlcompare on the timesformer MI300 vs H100
#   pair and on a generated 1 GB rocm vs cuda pair, with --tracediff-dir when tlcompare --help
#   mentions it; the CPU time per event at 1 GB against 250 MB.  Beside them, the floor: the
#   owlv2 and 1 GB JSON parsed by simdjson on one core (bench/json_floor.cpp; skipped with a
#   note without g++ and libsimdjson-dev).
#
# Medians of wall time (fork to wait4), per-phase medians from `tlcompare --timings`, and the
# peak RSS (max ru_maxrss over the runs, from build/tools/benchrun).  Prints PASS/MISS per
# performance target (BENCHMARKS.md).  Exits 0 whatever the figures are; 1 only if a run failed or crashed.
set -u
cd "$(dirname "$0")/.." || exit 1   # the repository root: examples/, tools/, build/

BUILD=${BUILD:-build}
TL=$BUILD/tlcompare
GEN=$BUILD/tools/genreport
RUN=$BUILD/tools/benchrun
LXW=$BUILD/tools/lxw_compare
DIR=${BENCH_DIR:-$BUILD/bench}
RUNS=${BENCH_RUNS:-5}
LXW_RUNS=${BENCH_LXW_RUNS:-3}
SMALL_RUNS=${BENCH_SMALL_RUNS:-20}
SCALING=${BENCH_SCALING:-1}
SCALING_RUNS=${BENCH_SCALING_RUNS:-3}
REPORTS=${BENCH_REPORTS:-1}
TRACES=${BENCH_TRACES:-1}
PERF=${BENCH_PERF:-1}
OWL_RUNS=${BENCH_OWL_RUNS:-10}
SEED=1

for b in "$TL" "$GEN" "$RUN" "$LXW"; do
    [ -x "$b" ] || { echo "bench: $b is missing (run 'make bench')" >&2; exit 1; }
done
mkdir -p "$DIR/out" || exit 1
# Time one binary throughout, even if the tree is rebuilt while the bench runs.
cp "$TL" "$DIR/tlcompare" && cp "$LXW" "$DIR/lxw_compare" || exit 1
TL=$DIR/tlcompare LXW=$DIR/lxw_compare
DATA=$DIR/results.tsv       # one line per run: case wall rss_kb cpu read compare format workbook csv total user
: >"$DATA"
failed=0

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }
size_bytes() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# ---- inputs -------------------------------------------------------------------------------

GEN_HASH=$(cksum <tools/genreport.c | cut -d' ' -f1)

# gen ROWS [xlsx]: make $DIR/rROWS/{baseline,candidate} (and .xlsx) unless already there.
gen() {
    local rows=$1 want_xlsx=${2:-} d=$DIR/r$1 role t0 t1
    mkdir -p "$d"
    for role in baseline candidate; do
        if [ ! -f "$d/$role.csv.done" ]; then
            echo "bench: generating $rows-row $role report (CSV) in $d/$role/ ..."
            t0=$(date +%s.%N)
            rm -rf "${d:?}/$role"
            "$GEN" --rows "$rows" --seed $SEED --role $role --csv "$d/$role" || return 1
            echo "$GEN_HASH" >"$d/$role.csv.done"
            t1=$(date +%s.%N)
            awk -v a="$t0" -v b="$t1" -v s="$(size_bytes "$d/$role")" \
                'BEGIN { printf "bench:   %.0f MB in %.1f s\n", s / 1e6, b - a }'
        elif [ "$(cat "$d/$role.csv.done")" != "$GEN_HASH" ]; then
            echo "bench: note: $d/$role/ was made by another version of tools/genreport.c;" \
                 "rm -rf $d to regenerate"
        fi
        if [ -n "$want_xlsx" ] && [ ! -f "$d/$role.xlsx.done" ]; then
            echo "bench: generating $rows-row $role report (xlsx) as $d/$role.xlsx ..."
            t0=$(date +%s.%N)
            rm -f "$d/$role.xlsx"
            "$GEN" --rows "$rows" --seed $SEED --role $role --xlsx "$d/$role.xlsx" || return 1
            echo "$GEN_HASH" >"$d/$role.xlsx.done"
            t1=$(date +%s.%N)
            awk -v a="$t0" -v b="$t1" -v s="$(size_bytes "$d/$role.xlsx")" \
                'BEGIN { printf "bench:   %.0f MB in %.1f s\n", s / 1e6, b - a }'
        fi
    done
}

# ---- measuring ----------------------------------------------------------------------------

# measure CASE RUNS ENV BASELINE CANDIDATE [small]: run tlcompare ($MEASURE_TL if set) RUNS
# times (workbook + CSVs out), one line per run into $DATA; "small" shows the runs in
# milliseconds.
measure() {
    local name=$1 runs=$2 envs=$3 a=$4 b=$5 small=${6:-} i line t status
    local out=$DIR/out/cmp.xlsx csvs=$DIR/out/cmp_csvs err=$DIR/out/stderr.txt
    printf 'bench: %-22s' "$name"
    for ((i = 1; i <= runs; i++)); do
        rm -rf "$out" "$csvs"
        # shellcheck disable=SC2086
        line=$(env $envs "$RUN" -e "$err" -- "${MEASURE_TL:-$TL}" "$a" "$b" -o "$out" --output_csvs_dir "$csvs" -q --timings)
        status=$?
        t=$(sed -n 's/^timings: //p' "$err")
        if [ "$status" -ne 0 ] || [ -z "$t" ]; then
            echo
            echo "bench: $name run $i FAILED (status $status): $line" >&2
            sed 's/^/bench:   | /' "$err" >&2
            failed=1
            return 1
        fi
        # wall=W rss_kb=K ...  +  read R s, compare C s, format F s, summary S s, workbook X s, csv V s,
        # total T s (the summary phase, a few ms, is left out of the tables)
        echo "$line" "$t" | awk -v c="$name" '
            { for (i = 1; i <= NF; i++) {
                  if ($i ~ /^[a-z_]+=/) { split($i, kv, "="); v[kv[1]] = kv[2] }
                  else if ($i ~ /^(read|compare|format|workbook|csv|total)$/) v[$i] = $(i + 1)
              }
              printf "%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c, v["wall"], v["rss_kb"], v["user"] + v["sys"],
                     v["read"], v["compare"], v["format"], v["workbook"], v["csv"], v["total"], v["user"] }' >>"$DATA"
        tail -n 1 "$DATA" | awk -F '\t' -v ms="$small" '{ printf(ms ? " %.1f" : " %.2f", ms ? $2 * 1000 : $2) }'
    done
    echo
    OUT_XLSX_BYTES=$(size_bytes "$out")
    OUT_CSV_BYTES=$(size_bytes "$csvs")
}

# stats CASE: "median min max read compare format workbook csv peak_rss_kb runs cpu user" (medians but
# for min, max and the peak RSS)
stats() {
    awk -F '\t' -v c="$1" '
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $1 == c { n++; for (k = 2; k <= 11; k++) col[k, n] = $k + 0; if ($3 + 0 > rss) rss = $3 + 0 }
        END {
            if (!n) exit 1
            for (k = 2; k <= 11; k++) { for (i = 1; i <= n; i++) a[i] = col[k, i]; med[k] = median(a, n) }
            lo = hi = col[2, 1]; for (i = 2; i <= n; i++) { if (col[2, i] < lo) lo = col[2, i]; if (col[2, i] > hi) hi = col[2, i] }
            printf "%.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %d %d %.4f %.4f\n", med[2], lo, hi, med[5], med[6], med[7], med[8],
                   med[9], rss, n, med[4], med[11]
        }' "$DATA"
}

ROWS_TABLE=""
row() {  # row CASE: one line of the main table
    local s
    s=$(stats "$1") || { ROWS_TABLE+=$(printf '%-24s  (failed)' "$1")$'\n'; return; }
    ROWS_TABLE+=$(echo "$s" | awk -v c="$1" -v small="${2:-}" '{
        f = small ? "%9.1f" : "%9.2f"; m = small ? 1000 : 1
        printf "%-24s" f f f f f f f f f "  %6.0f MB %5d\n", c, $1 * m, $2 * m, $3 * m, $11 * m, $4 * m, $5 * m, $6 * m,
               $7 * m, $8 * m, $9 * 1024 / 1e6, $10 }')$'\n'
}

check() {  # check LABEL VALUE LIMIT UNIT
    awk -v l="$1" -v v="$2" -v lim="$3" -v u="$4" 'BEGIN {
        if (v == "") { printf "  %-4s %-46s %8s %-2s (target <= %g %s)\n", "n/a", l, "-", u, lim, u; exit }
        printf "  %-4s %-46s %8.2f %-2s (target <= %g %s)\n", v + 0 <= lim + 0 ? "PASS" : "MISS", l, v, u, lim, u }'
}

# ---- run ----------------------------------------------------------------------------------

echo "bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)),"\
     "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average $(loadavg)"
LOAD_START=$(loadavg)
echo "bench: tlcompare built $(date -u -r "$BUILD/tlcompare" '+%Y-%m-%d %H:%M UTC') from commit" \
     "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src 2>/dev/null || echo ' + uncommitted changes in src/')"

# ---- TraceLens, the reference, when it can be had -------------------------------------------

TLPY=${TRACELENS_PYTHON:-/usr/bin/python3}
TL_RUNS=${BENCH_TL_RUNS:-3}
TL_COMPARE_ROWS=${BENCH_TL_COMPARE_ROWS-1000 5000}
HAVE_TRACELENS=0
TLENS=""
TLENS_NOTE=""
OWL_REL=tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz
TS_REL=tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz
if [ "${BENCH_TRACELENS:-1}" = 0 ]; then
    TLENS_NOTE="skipped (BENCH_TRACELENS=0)"
elif [ -n "${TRACELENS_DIR:-}" ]; then
    TLENS=$TRACELENS_DIR
    [ -d "$TLENS/TraceLens" ] || { TLENS_NOTE="skipped: TRACELENS_DIR=$TLENS holds no TraceLens/ package"; TLENS=""; }
elif [ -n "${TRACELENS_GIT:-}" ]; then
    TLENS=$DIR/TraceLens
    head=$(git --git-dir="$TRACELENS_GIT" rev-parse HEAD 2>/dev/null)
    if [ -z "$head" ]; then
        TLENS_NOTE="skipped: TRACELENS_GIT=$TRACELENS_GIT is not a git directory"; TLENS=""
    elif [ "$(cat "$TLENS/.commit" 2>/dev/null)" != "$head" ]; then
        rm -rf "$TLENS" && mkdir -p "$TLENS/tests/traces/h100"
        # the package and the two traces only (a mirror may lack other large files)
        if git --git-dir="$TRACELENS_GIT" archive --prefix=TraceLens/ HEAD:TraceLens | tar -x -C "$TLENS" \
           && git --git-dir="$TRACELENS_GIT" cat-file blob "HEAD:$OWL_REL" >"$TLENS/$OWL_REL" \
           && git --git-dir="$TRACELENS_GIT" cat-file blob "HEAD:$TS_REL" >"$TLENS/$TS_REL"; then
            echo "$head" >"$TLENS/.commit"
        else
            TLENS_NOTE="skipped: extracting TraceLens from $TRACELENS_GIT failed"; TLENS=""
        fi
    fi
else
    TLENS_NOTE="skipped: set TRACELENS_DIR to a TraceLens checkout (or TRACELENS_GIT to its git directory)"
fi
if [ -n "$TLENS" ]; then
    if ! PYTHONPATH=$TLENS "$TLPY" -c 'import pandas, openpyxl, tqdm, TraceLens' 2>/dev/null; then
        TLENS_NOTE="skipped: $TLPY cannot import pandas, openpyxl, tqdm and TraceLens (apt-get install python3-pandas python3-openpyxl python3-tqdm)"
    else
        HAVE_TRACELENS=1
        TLENS_NOTE="TraceLens $(cat "$TLENS/.commit" 2>/dev/null | cut -c1-8)${TRACELENS_DIR:+ in $TRACELENS_DIR}, under $TLPY ($("$TLPY" -c 'import sys, pandas; print("Python %d.%d, pandas %s" % (sys.version_info[0], sys.version_info[1], pandas.__version__))'))"
    fi
fi
echo "bench: TraceLens side by side: $TLENS_NOTE"

# tl_py MODULE ARG...: the command line of a TraceLens tool, unmodified, from its source tree
tl_py() { local m=$1; shift; echo env "PYTHONPATH=$TLENS" "$TLPY" -m "TraceLens.Reporting.$m" "$@"; }

# same_csvs DIR_A DIR_B: "identical" when every CSV of A is byte for byte the one of B and
# they hold the same files, else the list of those that differ
same_csvs() {
    local a=$1 b=$2 f d=""
    [ "$(ls "$a" | sort)" = "$(ls "$b" | sort)" ] || { echo "different sheets: $(ls "$a" | tr '\n' ' ')/ $(ls "$b" | tr '\n' ' ')"; return; }
    for f in "$a"/*.csv; do cmp -s "$f" "$b/$(basename "$f")" || d+=" $(basename "$f")"; done
    [ -z "$d" ] && echo "identical ($(ls "$a" | wc -l) CSVs, byte for byte)" || echo "differ:$d"
}

# tone CASE SMALL CMD ARG...: run CMD once under benchrun (its outputs removed first), one
# line into $DATA (wall, RSS, CPU; no phases) and its wall time printed (SMALL: in ms).
tone() {
    local name=$1 small=$2 line status err=$DIR/out/stderr.txt
    shift 2
    rm -rf "$DIR/out/trace.xlsx" "$DIR/out/trace_csvs" "$DIR/out/trace_diff" "$DIR/out/ref.xlsx" "$DIR/out/ref_csvs"
    line=$("$RUN" -e "$err" -o "$DIR/out/stdout.txt" -- "$@")
    status=$?
    if [ "$status" -ne 0 ]; then
        echo
        echo "bench: $name FAILED (status $status): $line" >&2
        sed 's/^/bench:   | /' "$err" | head -n 20 >&2
        failed=1
        return 1
    fi
    echo "$line" | awk -v c="$name" '
        { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          printf "%s\t%s\t%s\t%.3f\t0\t0\t0\t0\t0\t0\t%s\n", c, v["wall"], v["rss_kb"], v["user"] + v["sys"], v["user"] }' >>"$DATA"
    tail -n 1 "$DATA" | awk -F '\t' -v ms="$small" '{ printf(ms ? " %.1f" : " %.2f", ms ? $2 * 1000 : $2) }'
}

# tmeasure CASE RUNS SMALL CMD ARG...: tone RUNS times.
tmeasure() {
    local name=$1 runs=$2 small=$3 i
    shift 3
    printf 'bench: %-26s' "$name"
    for ((i = 1; i <= runs; i++)); do
        tone "$name" "$small" "$@" || return 1
    done
    echo
}

# tpair CASE RUNS SMALL CMD ARG...: CMD with the perf sheets (case CASE) and without them
# (TL_PERF_SHEETS=0, case "CASE, no perf"), alternately, RUNS times each; only the first
# with BENCH_PERF=0.
tpair() {
    local name=$1 runs=$2 small=$3 i
    shift 3
    if [ "$PERF" = 0 ]; then
        tmeasure "$name" "$runs" "$small" "$@"
        return
    fi
    printf 'bench: %-26s' "$name (with / without perf)"
    for ((i = 1; i <= runs; i++)); do
        tone "$name" "$small" "$@" || return 1
        printf ' /'
        tone "$name, no perf" "$small" env TL_PERF_SHEETS=0 "$@" || return 1
        printf ' '
    done
    echo
}

check_min() {  # check_min LABEL VALUE LIMIT UNIT: PASS when VALUE >= LIMIT
    awk -v l="$1" -v v="$2" -v lim="$3" -v u="$4" 'BEGIN {
        if (v == "") { printf "  %-4s %-46s %8s %-2s (target >= %g %s)\n", "n/a", l, "-", u, lim, u; exit }
        printf "  %-4s %-46s %8.2f %-2s (target >= %g %s)\n", (v + 0 >= lim + 0) ? "PASS" : "MISS", l, v, u, lim, u }'
}


if [ "$REPORTS" != 0 ]; then
    gen 20000 xlsx || { echo "bench: generating the inputs failed" >&2; exit 1; }
    R=$DIR/r20000
    IN_CSV=$(size_bytes "$R/baseline" "$R/candidate")
    IN_XLSX=$(size_bytes "$R/baseline.xlsx" "$R/candidate.xlsx")

    measure "20k csv in" "$RUNS" "" "$R/baseline" "$R/candidate"
    OUT1_XLSX=${OUT_XLSX_BYTES:-0} OUT1_CSV=${OUT_CSV_BYTES:-0}
    measure "20k xlsx in" "$RUNS" "" "$R/baseline.xlsx" "$R/candidate.xlsx"
    if [ "$LXW_RUNS" -gt 0 ]; then
        MEASURE_TL=$LXW measure "20k csv in, lxw writer" "$LXW_RUNS" "" "$R/baseline" "$R/candidate"
    fi
    measure "examples (ms)" "$SMALL_RUNS" "" examples/baseline examples/candidate small

    SCALE_ROWS="1000 5000 20000 80000"
    if [ "$SCALING" != 0 ]; then
        for n in $SCALE_ROWS; do
            gen "$n" || { echo "bench: generating the $n-row inputs failed" >&2; failed=1; continue; }
            measure "scale $n" "$SCALING_RUNS" "" "$DIR/r$n/baseline" "$DIR/r$n/candidate"
        done
    fi
    # TraceLens' comparison tool on the same CSV reports, side by side; at smaller sizes than
    # the 20k case, which takes it minutes (BENCH_TL_COMPARE_ROWS)
    if [ "$HAVE_TRACELENS" = 1 ] && [ -n "$TL_COMPARE_ROWS" ]; then
        for n in $TL_COMPARE_ROWS; do
            gen "$n" || { echo "bench: generating the $n-row inputs failed" >&2; failed=1; continue; }
            measure "tlcompare $n" "$SCALING_RUNS" "" "$DIR/r$n/baseline" "$DIR/r$n/candidate"
            # shellcheck disable=SC2046
            tmeasure "TraceLens compare $n" 1 "" $(tl_py compare_perf_reports_pytorch "$DIR/r$n/baseline" \
                "$DIR/r$n/candidate" -o "$DIR/out/ref.xlsx" --output_csvs_dir "$DIR/out/ref_csvs")
        done
        rm -rf "$DIR/out/ref.xlsx" "$DIR/out/ref_csvs"
    fi
    rm -rf "$DIR/out/cmp.xlsx" "$DIR/out/cmp_csvs"

    # ---- report -------------------------------------------------------------------------------

    echo
    echo "inputs (20k rows per sheet): CSV $(mb "$IN_CSV") MB, xlsx $(mb "$IN_XLSX") MB (baseline + candidate);" \
         "outputs: workbook $(mb "$OUT1_XLSX") MB, CSVs $(mb "$OUT1_CSV") MB"
    echo
    echo "wall times in seconds (examples: milliseconds): median, min, max over the runs; cpu = user + sys (median);"
    echo "phases: medians of tlcompare --timings (wall); peak RSS: max ru_maxrss over the runs (MB = 10^6 bytes)"
    printf '%-24s%9s%9s%9s%9s%9s%9s%9s%9s%9s  %9s %5s\n' case median min max cpu read compare format workbook csv \
        "peak RSS" runs
    row "20k csv in"
    row "20k xlsx in"
    [ "$LXW_RUNS" -gt 0 ] && row "20k csv in, lxw writer"
    row "examples (ms)" small
    printf '%s' "$ROWS_TABLE"

    if [ "$SCALING" != 0 ]; then
        echo
        echo "scaling (CSV in, workbook + CSVs out; median of $SCALING_RUNS)"
        printf '%-10s%9s%9s%9s%9s%9s%9s%9s%9s%12s\n' rows/sheet median "us/row" cpu "us/row" read compare \
            workbook csv "peak RSS"
        for n in $SCALE_ROWS; do
            s=$(stats "scale $n") || { printf '%-10s  (failed)\n' "$n"; continue; }
            echo "$s" | awk -v n="$n" '{ printf "%-10d%9.2f%9.1f%9.2f%9.1f%9.2f%9.2f%9.2f%9.2f%9.0f MB\n",
                                         n, $1, $1 / n * 1e6, $11, $11 / n * 1e6, $4, $5, $7, $8, $9 * 1024 / 1e6 }'
        done
        echo "(us/row: microseconds per row of each sheet; both reports, all sheets, workbook + CSVs)"
    fi

    if [ "$HAVE_TRACELENS" = 1 ] && [ -n "$TL_COMPARE_ROWS" ]; then
        echo
        echo "TraceLens' comparison tool on the same reports (CSV in, workbook + CSVs out), in this run:"
        printf '%-10s%14s%14s%9s%16s%16s\n' rows/sheet "TraceLens s" "tlcompare s" ratio "TraceLens RSS" "tlcompare RSS"
        for n in $TL_COMPARE_ROWS; do
            a=$(stats "TraceLens compare $n") b=$(stats "tlcompare $n") || { printf '%-10s  (failed)\n' "$n"; continue; }
            [ -n "$a" ] || { printf '%-10s  (failed)\n' "$n"; continue; }
            awk -v n="$n" -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
                printf "%-10d%14.2f%14.3f%8.0fx%13.0f MB%13.0f MB\n", n, x[1], y[1], x[1] / y[1], x[9] * 1024 / 1e6, y[9] * 1024 / 1e6 }'
        done
        echo "(TraceLens: one run, wall; tlcompare: median of $SCALING_RUNS)"
    fi

    echo
    echo "targets:"
    S1=$(stats "20k csv in") S2=$(stats "20k xlsx in") S3=$(stats "examples (ms)")
    check "20k rows, CSV in -> workbook + CSVs (median)" "$(echo "$S1" | cut -d' ' -f1)" 3 s
    check "20k rows, CSV in: read phase (median)" "$(echo "$S1" | cut -d' ' -f4)" 0.5 s
    # TraceLens' tool on the 20k reports only when BENCH_TL_COMPARE_ROWS names 20000 (minutes)
    if [ "$HAVE_TRACELENS" = 1 ] && [ -n "$(stats "TraceLens compare 20000" 2>/dev/null)" ]; then
        check_min "20k rows: TraceLens compare / tlcompare (wall)" \
            "$(awk -v a="$(stats "TraceLens compare 20000" | cut -d' ' -f1)" -v b="$(echo "$S1" | cut -d' ' -f1)" \
               'BEGIN { if (a > 0 && b > 0) printf "%.1f", a / b }')" 100 x
    fi
    check "20k rows, xlsx in -> workbook + CSVs (median)" "$(echo "$S2" | cut -d' ' -f1)" 5 s
    check "peak RSS, CSV in" "$(echo "$S1" | awk '{ printf "%.1f", $9 * 1024 / 1e6 }')" 600 MB
    check "peak RSS, xlsx in" "$(echo "$S2" | awk '{ printf "%.1f", $9 * 1024 / 1e6 }')" 600 MB
    check "bundled examples (median)" "$(echo "$S3" | awk '{ printf "%.1f", $1 * 1000 }')" 30 ms
    if [ "$SCALING" != 0 ]; then
        # Linear growth: CPU time per row at 80k within 1.25x of that at 20k.  CPU time, because
        # on a shared machine the wall time of the long 80k runs moves with the load.
        ratio() {  # ratio FIELD: (FIELD per row at 80k) / (FIELD per row at 20k)
            awk -v a="$(stats "scale 20000" | cut -d' ' -f"$1")" -v b="$(stats "scale 80000" | cut -d' ' -f"$1")" \
                'BEGIN { if (a > 0 && b > 0) printf "%.2f", (b / 80000) / (a / 20000) }'
        }
        check "linear: cpu/row at 80k / cpu/row at 20k" "$(ratio 11)" 1.25 x
        echo "       (the same ratio of wall times: $(ratio 1)x; of user CPU alone, without the kernel's"
        echo "       page-cache work for the outputs: $(ratio 12)x)"
    fi
fi
# ---- traces: tlreport and tlcompare on PyTorch traces (when build/tlreport exists) ---------

GENT=$BUILD/tools/gentrace
GENT_HASH=$(cksum <tools/gentrace.c 2>/dev/null | cut -d' ' -f1)

# tgen NAME GENTRACE-ARGS...: make $DIR/traces/NAME.json once per version of tools/gentrace.c,
# with NAME.json.events holding its number of events (from gentrace --stats).
tgen() {
    local name=$1 f=$DIR/traces/$1.json t0 t1
    shift
    mkdir -p "$DIR/traces" || return 1
    if [ -f "$f.done" ] && [ "$(cat "$f.done")" = "$GENT_HASH" ] && [ -f "$f" ]; then
        return 0
    fi
    echo "bench: generating $f (gentrace $*) ..."
    rm -f "$f" "$f.done" "$f.events"
    t0=$(date +%s.%N)
    "$GENT" "$@" --plain --stats -o "$f" 2>"$f.stats" || { cat "$f.stats" >&2; return 1; }
    t1=$(date +%s.%N)
    sed -n 's/^gentrace: \([0-9]*\) events.*/\1/p' "$f.stats" >"$f.events"
    echo "$GENT_HASH" >"$f.done"
    awk -v a="$t0" -v b="$t1" -v s="$(size_bytes "$f")" -v e="$(cat "$f.events")" \
        'BEGIN { printf "bench:   %.0f MB, %d events, in %.1f s\n", s / 1e6, e, b - a }'
}

# trow CASE [small] [EVENTS]: one line of the trace table (EVENTS: µs of CPU per event)
trow() {
    local s
    s=$(stats "$1") || { printf '%-28s  (failed)\n' "$1"; return; }
    echo "$s" | awk -v c="$1" -v small="${2:-}" -v ev="${3:-0}" '{
        f = small ? "%9.1f" : "%9.2f"; m = small ? 1000 : 1
        printf "%-28s" f f f f "  %7.0f MB %5d", c, $1 * m, $2 * m, $3 * m, $11 * m, $9 * 1024 / 1e6, $10
        if (ev > 0) printf "  %10d %8.3f", ev, $11 / ev * 1e6
        printf "\n" }'
}

TLR=$BUILD/tlreport
TRACE_RUNS=${BENCH_TRACE_RUNS:-3}
TRACE_SMALL_RUNS=${BENCH_TRACE_SMALL_RUNS:-20}
CONFORMANCE=${CONFORMANCE:-../shared/conformance}
TS_H100=$CONFORMANCE/traces/timesformer_h100.json.gz
TS_MI300=$CONFORMANCE/traces/timesformer_mi300.json.gz
if [ "$TRACES" = 0 ]; then
    echo
    echo "traces: skipped (BENCH_TRACES=0)"
elif [ ! -x "$TLR" ]; then
    echo
    echo "traces: skipped: $TLR is not built (the trace reader provides it; then 'make bench' runs this part)"
elif [ ! -x "$GENT" ]; then
    echo "bench: $GENT is missing (run 'make bench')" >&2
    failed=1
else
    echo
    cp "$TLR" "$DIR/tlreport" || exit 1
    TLR=$DIR/tlreport
    TOUT=(-o "$DIR/out/trace.xlsx" --output_csvs_dir "$DIR/out/trace_csvs")
    DIFF_OPT=()
    DIFF_NOTE="without the morphology diff: tlcompare --help does not mention --tracediff-dir"
    if "$TL" --help 2>&1 | grep -q -- '--tracediff-dir'; then
        DIFF_OPT=(--tracediff-dir "$DIR/out/trace_diff")
        DIFF_NOTE="with --tracediff-dir"
    fi
    HAVE_TS=0
    if [ -f "$TS_H100" ]; then
        HAVE_TS=1
        tpair "timesformer report (ms)" "$TRACE_SMALL_RUNS" small "$TLR" "$TS_H100" "${TOUT[@]}"
        if [ -f "$TS_MI300" ]; then
            tmeasure "timesformer diff (ms)" "$TRACE_SMALL_RUNS" small "$TL" "$TS_MI300" "$TS_H100" "${TOUT[@]}" \
                "${DIFF_OPT[@]}" -q
        fi
    else
        echo "bench: note: $TS_H100 not found: the timesformer cases are skipped"
    fi
    # TraceLens' owlv2 H100 test trace (56 MB of JSON), and TraceLens' generator on it and on
    # timesformer: the same full report (it writes kernel_summary only when asked)
    HAVE_OWL=0 OWL_SAME="" TS_SAME=""
    OWL=$TLENS/$OWL_REL
    if [ -n "$TLENS" ] && [ -f "$OWL" ]; then
        HAVE_OWL=1
        tpair "owlv2 report" "$OWL_RUNS" "" "$TLR" "$OWL" "${TOUT[@]}"
    else
        echo "bench: note: the owlv2 case is skipped: it is TraceLens' test trace (TraceLens side by side: $TLENS_NOTE)"
    fi
    if [ "$HAVE_TRACELENS" = 1 ]; then
        for c in owlv2 timesformer; do
            if [ $c = owlv2 ]; then f=$OWL; else f=$TLENS/$TS_REL; fi
            [ -f "$f" ] || continue
            # shellcheck disable=SC2046
            tmeasure "TraceLens $c report" "$TL_RUNS" "" $(tl_py generate_perf_report_pytorch --profile_json_path "$f" \
                --output_xlsx_path "$DIR/out/ref.xlsx" --output_csvs_dir "$DIR/out/ref_csvs" --enable_kernel_summary)
            # the outputs, side by side (tlreport once more, untimed)
            rm -rf "$DIR/out/trace_csvs"
            "$TLR" "$f" --output_csvs_dir "$DIR/out/trace_csvs" -q || failed=1
            if [ $c = owlv2 ]; then OWL_SAME=$(same_csvs "$DIR/out/trace_csvs" "$DIR/out/ref_csvs")
            else TS_SAME=$(same_csvs "$DIR/out/trace_csvs" "$DIR/out/ref_csvs"); fi
        done
    fi
    # The floor: the same JSON read by the field's fastest parser, simdjson (bench/json_floor.cpp,
    # when g++ and libsimdjson-dev are installed), on one core, no report made: whole, every
    # token checked (dom), or its events walked without checking what is skipped (ondemand)
    FLOOR=""
    if make --no-print-directory -s "$BUILD/tools/json_floor" >/dev/null 2>&1; then
        FLOOR=$BUILD/tools/json_floor
        if [ "$HAVE_OWL" = 1 ] && gzip -dc "$OWL" > "$DIR/out/owlv2.json"; then
            tmeasure "owlv2 floor, simdjson DOM" "$OWL_RUNS" "" "$FLOOR" dom "$DIR/out/owlv2.json"
        fi
    else
        echo "bench: note: no JSON floor (bench/json_floor.cpp needs g++ and libsimdjson-dev)"
    fi
    # the generated traces: 1 GB of JSON each, plus 250 MB for the linearity check
    HAVE_GEN=0
    free_kb=$(df -Pk "$DIR" | awk 'NR == 2 { print $4 }')
    if [ -f "$DIR/traces/gen_cuda_1G.json.done" ] && [ -f "$DIR/traces/gen_rocm_1G.json.done" ] \
       && [ -f "$DIR/traces/gen_cuda_250M.json.done" ] || [ "${free_kb:-0}" -gt $((5 * 1024 * 1024)) ]; then
        if tgen gen_cuda_250M --flavour cuda --size 250M && tgen gen_cuda_1G --flavour cuda --size 1G \
           && tgen gen_rocm_1G --flavour rocm --size 1G; then
            HAVE_GEN=1
        else
            echo "bench: generating the traces failed" >&2
            failed=1
        fi
    else
        echo "bench: note: less than 5 GB free under $DIR: the generated-trace cases are skipped"
    fi
    if [ "$HAVE_GEN" = 1 ]; then
        T=$DIR/traces
        tpair "1G trace report" "$TRACE_RUNS" "" "$TLR" "$T/gen_cuda_1G.json" "${TOUT[@]}"
        # the same with one reader thread (TL_TRACE_SPLIT=0): what the second reader gains
        tmeasure "1G trace report, one reader" "$TRACE_RUNS" "" env TL_TRACE_SPLIT=0 "$TLR" "$T/gen_cuda_1G.json" "${TOUT[@]}"
        tmeasure "250M trace report" "$TRACE_RUNS" "" "$TLR" "$T/gen_cuda_250M.json" "${TOUT[@]}"
        # the same trace gzipped (igzip -3, made once), against ISA-L's own igzip inflating it
        # to /dev/null: the yardstick of the gzip read
        HAVE_GZ=0
        if command -v igzip >/dev/null 2>&1; then
            if [ -f "$T/gen_cuda_1G.json.gz.done" ] && [ "$(cat "$T/gen_cuda_1G.json.gz.done")" = "$GENT_HASH" ] \
               || { igzip -3 -c "$T/gen_cuda_1G.json" > "$T/gen_cuda_1G.json.gz" && echo "$GENT_HASH" > "$T/gen_cuda_1G.json.gz.done"; }; then
                HAVE_GZ=1
                tmeasure "1G gzip trace report" "$TRACE_RUNS" "" "$TLR" "$T/gen_cuda_1G.json.gz" "${TOUT[@]}"
                tmeasure "1G gzip, igzip -d" "$TRACE_RUNS" "" sh -c 'exec igzip -d -c "$1" > /dev/null' igzip "$T/gen_cuda_1G.json.gz"
            fi
        else
            echo "bench: note: no igzip (Debian's isal): the 1 GB gzip case is skipped"
        fi
        tmeasure "1G pair diff" "$TRACE_RUNS" "" "$TL" "$T/gen_rocm_1G.json" "$T/gen_cuda_1G.json" "${TOUT[@]}" \
            "${DIFF_OPT[@]}" -q
        if [ -n "$FLOOR" ]; then
            tmeasure "1G floor, simdjson DOM" "$TRACE_RUNS" "" "$FLOOR" dom "$T/gen_cuda_1G.json"
            tmeasure "1G floor, simdjson walk" "$TRACE_RUNS" "" "$FLOOR" ondemand "$T/gen_cuda_1G.json"
        fi
    fi
    rm -rf "$DIR/out/trace.xlsx" "$DIR/out/trace_csvs" "$DIR/out/trace_diff" "$DIR/out/ref.xlsx" "$DIR/out/ref_csvs" \
        "$DIR/out/owlv2.json"

    echo
    echo "traces: tlreport TRACE -o OUT.xlsx --output_csvs_dir DIR; tlcompare A B -o OUT.xlsx --output_csvs_dir DIR -q"
    echo "($DIFF_NOTE); wall times in seconds (timesformer: milliseconds), median, min, max; peak RSS: max ru_maxrss"
    printf '%-28s%9s%9s%9s%9s  %10s %5s  %10s %8s\n' case median min max cpu "peak RSS" runs events "cpu us/ev"
    if [ "$HAVE_TS" = 1 ]; then
        trow "timesformer report (ms)" small
        [ "$PERF" != 0 ] && trow "timesformer report (ms), no perf" small
        [ -f "$TS_MI300" ] && trow "timesformer diff (ms)" small
    fi
    if [ "$HAVE_OWL" = 1 ]; then
        trow "owlv2 report"
        [ "$PERF" != 0 ] && trow "owlv2 report, no perf"
        [ -n "$FLOOR" ] && trow "owlv2 floor, simdjson DOM"
    fi
    if [ "$HAVE_TRACELENS" = 1 ]; then
        trow "TraceLens owlv2 report"
        trow "TraceLens timesformer report"
    fi
    if [ "$HAVE_GEN" = 1 ]; then
        E1=$(cat "$T/gen_cuda_1G.json.events") E4=$(cat "$T/gen_cuda_250M.json.events")
        E2=$(cat "$T/gen_rocm_1G.json.events")
        trow "1G trace report" "" "$E1"
        [ "$PERF" != 0 ] && trow "1G trace report, no perf" "" "$E1"
        trow "1G trace report, one reader" "" "$E1"
        trow "250M trace report" "" "$E4"
        if [ "$HAVE_GZ" = 1 ]; then
            trow "1G gzip trace report" "" "$E1"
            trow "1G gzip, igzip -d"
        fi
        trow "1G pair diff" "" $((E1 + E2))
        if [ -n "$FLOOR" ]; then
            trow "1G floor, simdjson DOM" "" "$E1"
            trow "1G floor, simdjson walk" "" "$E1"
        fi
        echo "inputs: $(mb "$(size_bytes "$T/gen_cuda_1G.json")") MB (cuda), $(mb "$(size_bytes "$T/gen_rocm_1G.json")") MB (rocm),"\
             "$(mb "$(size_bytes "$T/gen_cuda_250M.json")") MB of JSON, made by tools/gentrace (cached in $T)"
    fi

    field() { stats "$1" 2>/dev/null | awk -v f="$2" -v m="$3" '{ printf "%.2f", $f * m }'; }
    rss_mb() { stats "$1" 2>/dev/null | awk '{ printf "%.1f", $9 * 1024 / 1e6 }'; }
    # over CASE_A CASE_B FIELD: median FIELD of A over that of B
    over() {
        awk -v a="$(stats "$1" 2>/dev/null | cut -d' ' -f"$3")" -v b="$(stats "$2" 2>/dev/null | cut -d' ' -f"$3")" \
            'BEGIN { if (a > 0 && b > 0) printf "%.4f", a / b }'
    }
    pct() { awk -v r="$1" 'BEGIN { if (r != "") printf "%.1f", (r - 1) * 100 }'; }
    if [ "$HAVE_TRACELENS" = 1 ]; then
        echo
        echo "TraceLens' generator side by side (TraceLens_generate_perf_report_pytorch --enable_kernel_summary,"
        echo "workbook + CSVs; medians of wall time in this run):"
        [ "$HAVE_OWL" = 1 ] && echo "  owlv2:       TraceLens $(field "TraceLens owlv2 report" 1 1) s, tlreport $(field "owlv2 report" 1 1) s:" \
            "$(over "TraceLens owlv2 report" "owlv2 report" 1 | awk '{ printf "%.1f", $1 }')x (CPU:" \
            "$(over "TraceLens owlv2 report" "owlv2 report" 11 | awk '{ printf "%.1f", $1 }')x); outputs $OWL_SAME"
        [ "$HAVE_TS" = 1 ] && echo "  timesformer: TraceLens $(field "TraceLens timesformer report" 1 1) s, tlreport $(field "timesformer report (ms)" 1 1000) ms:" \
            "$(over "TraceLens timesformer report" "timesformer report (ms)" 1 | awk '{ printf "%.1f", $1 }')x (CPU:" \
            "$(over "TraceLens timesformer report" "timesformer report (ms)" 11 | awk '{ printf "%.1f", $1 }')x); outputs $TS_SAME"
    fi
    if [ -n "$FLOOR" ]; then
        echo
        echo "the floor: the same JSON parsed by simdjson on one core, inflated already, no report made"
        echo "(medians of wall time; tlreport's is the whole report, workbook and CSVs written):"
        if [ "$HAVE_OWL" = 1 ]; then
            goal=""
            [ "$HAVE_TRACELENS" = 1 ] && goal="; 100x TraceLens' generator would be $(field "TraceLens owlv2 report" 1 0.01) s"
            echo "  owlv2: simdjson DOM $(field "owlv2 floor, simdjson DOM" 1 1) s, tlreport $(field "owlv2 report" 1 1) s$goal"
        fi
        [ "$HAVE_GEN" = 1 ] && echo "  1 GB:  simdjson DOM $(field "1G floor, simdjson DOM" 1 1) s, its walk $(field "1G floor, simdjson walk" 1 1) s," \
            "tlreport $(field "1G trace report" 1 1) s"
    fi
    if [ "$PERF" != 0 ]; then
        echo
        echo "the perf sheets' cost: the same binary without them (TL_PERF_SHEETS=0), runs alternated;"
        echo "medians of CPU time (user + sys) and of wall time"
        for c in "timesformer report (ms)" "owlv2 report" "1G trace report"; do
            r=$(over "$c" "$c, no perf" 11)
            [ -n "$r" ] && printf '  %-26s CPU +%5s%%   wall +%5s%%\n' "$c" "$(pct "$r")" "$(pct "$(over "$c" "$c, no perf" 1)")"
        done
    fi

    echo
    echo "targets (traces):"
    if [ "$HAVE_TS" = 1 ]; then
        check "timesformer report (median)" "$(field "timesformer report (ms)" 1 1000)" 50 ms
        check "timesformer report, peak RSS" "$(rss_mb "timesformer report (ms)")" 60 MB
        [ -f "$TS_MI300" ] && check "timesformer diff (median)" "$(field "timesformer diff (ms)" 1 1000)" 60 ms
    fi
    if [ "$HAVE_OWL" = 1 ]; then
        [ "$HAVE_TRACELENS" = 1 ] && check_min "owlv2 report: TraceLens / tlreport (wall)" \
            "$(over "TraceLens owlv2 report" "owlv2 report" 1)" 100 x
        check "owlv2 report, peak RSS" "$(rss_mb "owlv2 report")" 150 MB
    fi
    if [ "$PERF" != 0 ]; then
        for c in "timesformer report (ms)" "owlv2 report" "1G trace report"; do
            r=$(over "$c" "$c, no perf" 11)
            [ -n "$r" ] && check "perf sheets' cost (CPU), ${c% (ms)}" "$(pct "$r")" 15 %
        done
    fi
    if [ "$HAVE_GEN" = 1 ]; then
        check "1 GB trace report (median)" "$(field "1G trace report" 1 1)" 1.0 s
        if [ "$HAVE_GZ" = 1 ]; then
            check "1 GB gzip trace report (median)" "$(field "1G gzip trace report" 1 1)" 1.2 s
            check "1 GB gzip report / igzip -d (median)" "$(over "1G gzip trace report" "1G gzip, igzip -d" 1)" 2.5 x
        fi
        check "1 GB trace report, peak RSS" "$(rss_mb "1G trace report")" 1000 MB
        check "1 GB pair diff (median)" "$(field "1G pair diff" 1 1)" 5 s
        check "1 GB pair diff, peak RSS" "$(rss_mb "1G pair diff")" 1000 MB
        # CPU time per event at 1 GB over that at 250 MB (CPU, as for the report scaling above)
        tratio() {
            awk -v a="$(stats "250M trace report" | cut -d' ' -f"$1")" -v b="$(stats "1G trace report" | cut -d' ' -f"$1")" \
                -v ea="$E4" -v eb="$E1" 'BEGIN { if (a > 0 && b > 0 && ea > 0 && eb > 0) printf "%.2f", (b / eb) / (a / ea) }'
        }
        check "linear: cpu/event at 1 GB / at 250 MB" "$(tratio 11)" 1.25 x
        echo "       (the same ratio of wall times: $(tratio 1)x)"
    fi
fi
# ---- the inference path and the Python module, by their own scripts ---------------------
# Each prints its own figures and targets; a missed target there is a MISS line, not a failure.
if [ "${BENCH_INFER:-1}" != 0 ] && [ -x tools/bench_infer.sh ]; then
    echo
    echo "== inference traces against TraceLens' inference generator (tools/bench_infer.sh)"
    if [ "$HAVE_TRACELENS" = 1 ]; then
        TRACELENS=$TLENS BUILD=$BUILD tools/bench_infer.sh
    else
        echo "  skipped: no TraceLens ($TLENS_NOTE)"
    fi
fi
if [ "${BENCH_SUMMARY:-1}" != 0 ] && [ -x tools/bench_summary.sh ]; then
    echo
    # the big20k inputs made above; the owlv2 pair when TraceLens' test traces are here
    TRACELENS=${TLENS:-} BUILD=$BUILD BENCH_DIR=$DIR tools/bench_summary.sh || failed=1
fi
if [ "${BENCH_RANKS:-1}" != 0 ] && [ -x tools/bench_ranks.sh ]; then
    echo
    echo "== many ranks against TraceLens' multi-rank collective report (tools/bench_ranks.sh)"
    BUILD=$BUILD BENCH_RANKS_REF=$HAVE_TRACELENS TRACELENS=${TLENS:-} tools/bench_ranks.sh || true
fi
if [ "${BENCH_DISTRIBUTED:-1}" != 0 ] && [ -x tools/bench_runs.sh ]; then
    echo
    echo "== comparing distributed runs against reading their traces and TraceLens' workflow (tools/bench_runs.sh)"
    BUILD=$BUILD BENCH_RUNS_REF=$HAVE_TRACELENS TRACELENS=${TLENS:-} tools/bench_runs.sh || true
fi

if [ "${BENCH_PYTHON:-1}" != 0 ] && [ -x tools/bench_python.sh ]; then
    echo
    echo "== the Python module (tools/bench_python.sh)"
    if [ "$HAVE_TRACELENS" = 1 ]; then
        TRACELENS=$TLENS BUILD=$BUILD tools/bench_python.sh
    else
        TRACELENS= BUILD=$BUILD tools/bench_python.sh
    fi
fi
echo
echo "load average: $LOAD_START at the start, $(loadavg) at the end ($(nproc) CPUs; other work on the machine skews the figures)"
echo "raw runs: $DATA"
if [ "$failed" != 0 ]; then
    echo "bench: some runs FAILED (see above)" >&2
    exit 1
fi
exit 0
