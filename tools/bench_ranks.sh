#!/usr/bin/env bash
# bench_ranks.sh - the multi-rank collective report (MULTIRANK.md) side by side with
# TraceLens' generate_multi_rank_collective_report_pytorch (run by hand or from
# tools/bench.sh).  Rank sets from tools/gentrace --ranks, cached under $DIR:
#   r16:  16 ranks of ~20 MB (allreduce, allgather, reducescatter, all_to_allv; a straggler,
#         a late arrival, jitter): tlreport (best of RUNS) against the reference, sequential
#         and --use_multiprocessing (one run each); the CSVs compared byte for byte.
#         Target: >= 100x of wall time (the CPU-time ratio beside it: a loaded machine
#         disturbs it less).
#   r256: 256 ranks of ~10 MB (~2.6 GB): tlreport against 256 x one rank's time / cores.
#         Target: <= 1.2x.  Peak RSS with -j 2 on all 256 against on the first 8.
#         Target: <= 1.2x.
# Environment: BUILD=build, PYTHON=/usr/bin/python3 (pandas, openpyxl, tqdm),
#   TRACELENS (a checkout; default one made from TRACELENS_MIRROR=/work/.mirror/AMD-AGI+TraceLens/repo),
#   BENCH_RANKS_RUNS=3, BENCH_RANKS_DIR=$BUILD/bench_ranks, BENCH_RANKS_REF=1 (0: no reference runs).
# Exits 1 when a run fails or a target is missed, 0 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
RUNS=${BENCH_RANKS_RUNS:-3}
DIR=${BENCH_RANKS_DIR:-$BUILD/bench_ranks}
MIRROR=${TRACELENS_MIRROR:-/work/.mirror/AMD-AGI+TraceLens/repo}
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd) || exit 1
make --no-print-directory -s "$BUILD/tlreport" "$BUILD/tools/benchrun" "$BUILD/tools/gentrace" >/dev/null || exit 1
TLR=$(cd "$BUILD" && pwd)/tlreport
RUN=$(cd "$BUILD" && pwd)/tools/benchrun
GEN=$(cd "$BUILD" && pwd)/tools/gentrace
CORES=$(nproc)
fail=0

. tools/bench_lib.sh # field, best_of, ratio, verdict

# ---- the sets (regenerated when gentrace changes) ----
stamp=$(cksum < tools/gentrace.c | cut -d' ' -f1)
if [ "$(cat "$DIR/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$DIR/r16" "$DIR/r256"
    echo "generating the rank sets (16 x 20 MB, 256 x 10 MB) ..."
    "$GEN" --ranks 16 -o "$DIR/r16" --rank-size 20M --straggler 5:400 --late 9:7:1500 --jitter 30 --rounds 40 \
        --collectives allreduce,allgather:BFloat16:524288,reducescatter:BFloat16:524288,alltoallv:Float:65536 >/dev/null &&
    "$GEN" --ranks 256 -o "$DIR/r256" --rank-size 10M --straggler 100:300 --jitter 20 --rounds 20 >/dev/null ||
        { echo "bench_ranks: gentrace failed"; exit 1; }
    echo "$stamp" > "$DIR/.stamp"
fi
echo "machine: $CORES cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 16 ranks against TraceLens ----
P16="$DIR/r16/rank*_trace.json"
read -r ours ours_rss ours_cpu < <(best_of "$RUNS" "$TLR" -q --trace_pattern "$P16" --world_size 16 --output_csvs_dir "$DIR/ours16") ||
    { echo "bench_ranks: tlreport failed: $(tail -n 1 "$DIR/err.log")"; exit 1; }
printf '%-44s %8ss %8ss cpu %7.0f MB\n' "16 x 20 MB: tlreport (-j $CORES)" "$ours" "$ours_cpu" "$(awk -v r="$ours_rss" 'BEGIN { print r / 1024 }')"
if [ "${BENCH_RANKS_REF:-1}" != 0 ]; then
    TL=${TRACELENS:-$DIR/tracelens}
    if [ ! -f "$TL/TraceLens/Reporting/generate_multi_rank_collective_report_pytorch.py" ]; then
        # the TraceLens tree alone (a mirror may lack the blobs of the repository's other folders)
        rm -rf "$TL" && mkdir -p "$TL" && git --git-dir="$MIRROR" archive --prefix=TraceLens/ HEAD:TraceLens | tar -x -C "$TL" ||
            { echo "bench_ranks: no TraceLens checkout (set TRACELENS)"; exit 1; }
    fi
    REF=$TL/TraceLens/Reporting/generate_multi_rank_collective_report_pytorch.py
    for mode in sequential multiprocessing; do
        extra=(); [ $mode = multiprocessing ] && extra=(--use_multiprocessing)
        rm -rf "$DIR/ref16"
        read -r ref ref_rss ref_cpu < <(PYTHONPATH=$TL best_of 1 "$PY" "$REF" --trace_pattern "$P16" --world_size 16 \
                                         "${extra[@]}" --output_csvs_dir "$DIR/ref16") ||
            { echo "bench_ranks: the reference failed: $(tail -n 1 "$DIR/err.log")"; fail=1; continue; }
        same=yes
        for f in "$DIR"/ref16/*.csv; do cmp -s "$f" "$DIR/ours16/$(basename "$f")" || same="NO ($(basename "$f"))"; done
        x=$(ratio "$ref" "$ours"); cx=$(ratio "$ref_cpu" "$ours_cpu")
        v=$(verdict "$x" 100 min) || fail=1
        printf '%-44s %8ss %8ss cpu %7.0f MB  %sx wall (%sx cpu), target >= 100x: %s; CSVs the same: %s\n' \
            "16 x 20 MB: TraceLens, $mode" "$ref" "$ref_cpu" "$(awk -v r="$ref_rss" 'BEGIN { print r / 1024 }')" "$x" "$cx" "$v" "$same"
    done
fi

# ---- 256 ranks: scaling and memory ----
P256="$DIR/r256/rank*_trace.json"
read -r one _ one_cpu < <(best_of "$RUNS" "$TLR" -q -j 1 --trace_pattern "$P256" --world_size 1 --output_csvs_dir "$DIR/o1") || exit 1
read -r all all_rss all_cpu < <(best_of 1 "$TLR" -q --trace_pattern "$P256" --world_size 256 --output_csvs_dir "$DIR/o256") || exit 1
ideal=$(awk -v t="$one" -v c="$CORES" 'BEGIN { printf "%.3f", 256 * t / c }')
x=$(ratio "$all" "$ideal"); v=$(verdict "$x" 1.2 max) || fail=1
printf '%-44s %8ss  one rank %ss; (256 x one) / %d cores = %ss: %sx, target <= 1.2x: %s\n' \
    "256 x 10 MB: tlreport (-j $CORES)" "$all" "$one" "$CORES" "$ideal" "$x" "$v"
# CPU time beside it: on a loaded machine the workers wait for a core, which the CPU time does not count
cideal=$(awk -v t="$one_cpu" 'BEGIN { printf "%.3f", 256 * t }')
printf '%-44s %8ss cpu  one rank %ss cpu; 256 x one = %ss: %sx (not a target)\n' \
    "256 x 10 MB: tlreport CPU time" "$all_cpu" "$one_cpu" "$cideal" "$(ratio "$all_cpu" "$cideal")"
read -r _ r8 _ < <(best_of 1 "$TLR" -q -j 2 --trace_pattern "$P256" --world_size 8 --output_csvs_dir "$DIR/o8") || exit 1
read -r _ r256 _ < <(best_of 1 "$TLR" -q -j 2 --trace_pattern "$P256" --world_size 256 --output_csvs_dir "$DIR/o256") || exit 1
x=$(ratio "$r256" "$r8"); v=$(verdict "$x" 1.2 max) || fail=1
printf '%-44s %6.0f MB on 256 ranks, %6.0f MB on 8: %sx, target <= 1.2x: %s\n' "peak RSS, -j 2" \
    "$(awk -v r="$r256" 'BEGIN { print r / 1024 }')" "$(awk -v r="$r8" 'BEGIN { print r / 1024 }')" "$x" "$v"
[ "$fail" -eq 0 ] && echo "bench_ranks: all targets met" || echo "bench_ranks: MISS (see above)"
exit "$fail"
