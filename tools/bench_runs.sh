#!/usr/bin/env bash
# bench_runs.sh - comparing two distributed runs (tlcompare RUN_A RUN_B) side by side with
# reading their traces and with the TraceLens workflow (run by hand or from tools/bench.sh).
# Runs from tools/gentrace --world N --rank R --size 10M, cached under $DIR:
#   a64, b64: two 64-rank runs (b: the last all-reduce bucket 20% slower on every rank, rank
#     5's ops 8% slower).  tlcompare a64 b64 against tlreport reading the same 128 traces
#     whole: its report of each rank (tlreport RANK --output_csvs_dir, as many at a time as
#     there are cores), what a comparison must do of every rank (its gpu_timeline and
#     ops_summary come from the event tree).  Target: <= 1.3x.  Printed beside it, as
#     information only: tlreport's collective report of each run (--trace_pattern), which
#     reads only the collective kernels.
#   TraceLens on 8 of those ranks a run: generate_perf_report_pytorch on each (16 workbooks),
#     compare_perf_reports_pytorch on rank 0's two, generate_multi_rank_collective_report_
#     pytorch on each run's 8 ranks; its time per rank against tlcompare's per rank.
#     Target: >= 100x.
#   a512: a 512-rank run (~5 GB, deleted afterwards unless BENCH_RUNS_KEEP=1): peak RSS of
#     tlcompare -j 2 a512 a512 against tlcompare -j 2 a64 a64.  Target: <= 1.2x.
# Environment: BUILD=build, PYTHON=/usr/bin/python3 (pandas, openpyxl, tqdm),
#   TRACELENS (a checkout; default one made from TRACELENS_MIRROR=/work/.mirror/AMD-AGI+TraceLens/repo),
#   BENCH_RUNS_RUNS=3, BENCH_RUNS_DIR=$BUILD/bench_runs, BENCH_RUNS_REF=1 (0: no TraceLens runs),
#   BENCH_RUNS_BIG=512 (0: no memory run).
# Exits 1 when a run fails or a target is missed, 0 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
RUNS=${BENCH_RUNS_RUNS:-3}
BIG=${BENCH_RUNS_BIG:-512}
DIR=${BENCH_RUNS_DIR:-$BUILD/bench_runs}
MIRROR=${TRACELENS_MIRROR:-/work/.mirror/AMD-AGI+TraceLens/repo}
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd) || exit 1
make --no-print-directory -s "$BUILD/tlreport" "$BUILD/tlcompare" "$BUILD/tools/benchrun" "$BUILD/tools/gentrace" \
    >/dev/null || exit 1
TLR=$(cd "$BUILD" && pwd)/tlreport
TLC=$(cd "$BUILD" && pwd)/tlcompare
RUN=$(cd "$BUILD" && pwd)/tools/benchrun
GEN=$(cd "$BUILD" && pwd)/tools/gentrace
CORES=$(nproc)
fail=0

. tools/bench_lib.sh # field, best_of, ratio, verdict
mb() { awk -v r="$1" 'BEGIN { printf "%.0f", r / 1024 }'; }
# got WHAT VALUE: stop when a timed run failed (best_of's FAILED is read as a value)
got() { case ${2:-FAILED} in FAILED) echo "bench_runs: $1 failed: $(tail -n 1 "$DIR/err.log")"; exit 1 ;; esac; }

# gen_run DIR N [extra options of every rank]: rank 5 of run b also --slow '*=8'
gen_run() {
    local dir=$1 n=$2 r slow; shift 2
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    for ((r = 0; r < n; r++)); do
        slow=(); [ "$(basename "$dir")" = b64 ] && [ "$r" = 5 ] && slow=(--slow '*=8')
        "$GEN" --world "$n" --rank "$r" --size 10M "$@" "${slow[@]}" -o "$dir/rank${r}_trace.json" || return 1
    done
}

# ---- the runs (regenerated when gentrace changes) ----
stamp=$(cksum < tools/gentrace.c | cut -d' ' -f1)
if [ "$(cat "$DIR/.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "generating two 64-rank runs of ~10 MB a rank ..."
    gen_run "$DIR/a64" 64 && gen_run "$DIR/b64" 64 --coll-slow 25 || { echo "bench_runs: gentrace failed"; exit 1; }
    echo "$stamp" > "$DIR/.stamp"
fi
echo "machine: $CORES cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 64 vs 64 ranks: the comparison against reading the traces ----
# The baseline: every rank's report, CORES at a time (as tlcompare -j CORES reads them).
cat > "$DIR/perrank.sh" <<EOF
rm -rf "$DIR/pr" && mkdir -p "$DIR/pr" || exit 1
ls "$DIR"/a64/rank*_trace.json "$DIR"/b64/rank*_trace.json | xargs -P $CORES -I{} sh -c \\
    'r=\$1; exec "$TLR" -q "\$r" --output_csvs_dir "$DIR/pr/\$(basename "\$(dirname "\$r")")_\$(basename "\$r" .json)"' _ {}
EOF
read -r read_s _ < <(best_of "$RUNS" sh "$DIR/perrank.sh"); got "tlreport per rank" "$read_s"
read -r ra _ < <(best_of "$RUNS" "$TLR" -q --trace_pattern "$DIR/a64/rank*_trace.json" --world_size 64 \
                 --output_csvs_dir "$DIR/ra"); got tlreport "$ra"
read -r rb _ < <(best_of "$RUNS" "$TLR" -q --trace_pattern "$DIR/b64/rank*_trace.json" --world_size 64 \
                 --output_csvs_dir "$DIR/rb"); got tlreport "$rb"
coll_s=$(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.3f", a + b }')
read -r ours ours_rss _ < <(best_of "$RUNS" "$TLC" -q "$DIR/a64" "$DIR/b64" -o "$DIR/cmp64.xlsx"); got tlcompare "$ours"
x=$(ratio "$ours" "$read_s"); v=$(verdict "$x" 1.3 max) || fail=1
printf '%-52s %8ss %6s MB  tlreport reading the 128 traces whole (a report per rank, %d at a time) %ss: %sx, target <= 1.3x: %s\n' \
    "64 vs 64 x 10 MB: tlcompare (-j $CORES)" "$ours" "$(mb "$ours_rss")" "$CORES" "$read_s" "$x" "$v"
printf '%-52s %8ss  (information only: it reads the collective kernels alone, which no comparison can; %sx)\n' \
    "  tlreport --trace_pattern: each run's collective report" "$coll_s" "$(ratio "$ours" "$coll_s")"

# ---- TraceLens' workflow on 8 ranks a run ----
if [ "${BENCH_RUNS_REF:-1}" != 0 ]; then
    TL=${TRACELENS:-$DIR/tracelens}
    if [ ! -f "$TL/TraceLens/Reporting/compare_perf_reports_pytorch.py" ]; then
        rm -rf "$TL" && mkdir -p "$TL" && git --git-dir="$MIRROR" archive --prefix=TraceLens/ HEAD:TraceLens | tar -x -C "$TL" ||
            { echo "bench_runs: no TraceLens checkout (set TRACELENS)"; exit 1; }
    fi
    R=$TL/TraceLens/Reporting
    cat > "$DIR/tracelens.sh" <<EOF
set -e
rm -rf "$DIR/ref" && mkdir -p "$DIR/ref/a64" "$DIR/ref/b64"
for s in a64 b64; do
    for r in 0 1 2 3 4 5 6 7; do
        "$PY" "$R/generate_perf_report_pytorch.py" --profile_json_path "$DIR/\$s/rank\${r}_trace.json" \
            --enable_kernel_summary --output_xlsx_path "$DIR/ref/\$s/rank\${r}.xlsx" >/dev/null
    done
    "$PY" "$R/generate_multi_rank_collective_report_pytorch.py" --trace_pattern "$DIR/\$s/rank*_trace.json" \
        --world_size 8 --output_csvs_dir "$DIR/ref/\$s/collective" >/dev/null
done
"$PY" "$R/compare_perf_reports_pytorch.py" "$DIR/ref/a64/rank0.xlsx" "$DIR/ref/b64/rank0.xlsx" --names a b \
    -o "$DIR/ref/comparison.xlsx" >/dev/null
EOF
    read -r ref _ < <(PYTHONPATH=$TL best_of 1 bash "$DIR/tracelens.sh")
    case ${ref:-FAILED} in
    FAILED) echo "bench_runs: the TraceLens workflow failed: $(tail -n 3 "$DIR/err.log")"; fail=1; ref="" ;;
    esac
    if [ -n "$ref" ]; then
        per_ref=$(awk -v t="$ref" 'BEGIN { printf "%.3f", t / 16 }')
        per_ours=$(awk -v t="$ours" 'BEGIN { printf "%.4f", t / 128 }')
        x=$(ratio "$per_ref" "$per_ours"); v=$(verdict "$x" 100 min) || fail=1
        printf '%-52s %8ss  %ss a rank against tlcompare'"'"'s %ss a rank: %sx, target >= 100x: %s\n' \
            "8 + 8 ranks: TraceLens (reports, compare, collectives)" "$ref" "$per_ref" "$per_ours" "$x" "$v"
    fi
fi

# ---- memory: 512 ranks against 64 ----
if [ "$BIG" -gt 0 ]; then
    if [ ! -f "$DIR/a$BIG/rank$((BIG - 1))_trace.json" ]; then # (kept by BENCH_RUNS_KEEP=1)
        echo "generating a $BIG-rank run (~$((BIG * 10)) MB; deleted afterwards) ..."
        gen_run "$DIR/a$BIG" "$BIG" || { echo "bench_runs: gentrace failed"; exit 1; }
    fi
    read -r t64 r64 _ < <(best_of 1 "$TLC" -q -j 2 "$DIR/a64" "$DIR/a64" --names a b -o "$DIR/m64.xlsx"); got tlcompare "$t64"
    read -r tbig rbig _ < <(best_of 1 "$TLC" -q -j 2 "$DIR/a$BIG" "$DIR/a$BIG" --names a b -o "$DIR/mbig.xlsx")
    [ "${BENCH_RUNS_KEEP:-0}" = 1 ] || [ "${tbig:-FAILED}" != FAILED ] || rm -rf "$DIR/a$BIG"
    got "tlcompare on $BIG ranks" "$tbig"
    [ "${BENCH_RUNS_KEEP:-0}" = 1 ] || rm -rf "$DIR/a$BIG"
    x=$(ratio "$rbig" "$r64"); v=$(verdict "$x" 1.2 max) || fail=1
    printf '%-52s %6s MB on %d vs %d ranks, %6s MB on 64 vs 64 (%ss): %sx, target <= 1.2x: %s\n' \
        "peak RSS, tlcompare -j 2" "$(mb "$rbig")" "$BIG" "$BIG" "$(mb "$r64")" "$tbig" "$x" "$v"
fi
[ "$fail" -eq 0 ] && echo "bench_runs: all targets met" || echo "bench_runs: MISS (see above)"
exit "$fail"
