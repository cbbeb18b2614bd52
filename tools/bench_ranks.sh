#!/usr/bin/env bash
# bench_ranks.sh - the multi-rank collective report (MULTIRANK.md) side by side with
# TraceLens' generate_multi_rank_collective_report_pytorch (run by hand or from
# tools/bench.sh).  Rank sets from tools/gentrace --ranks, cached under $DIR:
#   r16:  16 ranks of ~20 MB (allreduce, allgather, reducescatter, all_to_allv; a straggler,
#         a late arrival, jitter): tlreport (best of RUNS) against the reference, sequential
#         and --use_multiprocessing (one run each); the CSVs compared byte for byte.
#         Target: >= 100x of wall time (the CPU-time ratio beside it: a loaded machine
#         disturbs it less).
#         Beside it, the floor on one core: the same set read by simdjson (bench/json_floor.cpp,
#         when libsimdjson-dev is installed) and by read(2) alone, against the target's budget.
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
fail=0 ref_seq= ref_mp=

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

# Every timed run reads its files from the page cache: the set is read once before, so
# that the first run does not pay the disk when the runs it is measured against do not.
warm() { cat "$@" > /dev/null; }

# Whether two CSVs hold the same cells once their rows and columns are sorted, numbers to 12
# significant digits.  TraceLens with --use_multiprocessing puts the ranks in the order its
# workers finish (the contract, and its sequential run, have them ascending), and so sums
# over ranks in that order, whose last bits differ.
same_up_to_order() {
    "$PY" - "$1" "$2" <<'PYEOF'
import sys, pandas as pd
def norm(cell):
    try:
        return "%.12g" % float(cell)
    except ValueError:
        return cell
a, b = (pd.read_csv(f, dtype=str, keep_default_na=False) for f in sys.argv[1:3])
if sorted(a.columns) != sorted(b.columns) or len(a) != len(b):
    sys.exit(1)
cols = sorted(a.columns)
a, b = (t[cols].applymap(norm).sort_values(cols).reset_index(drop=True) for t in (a, b))
sys.exit(0 if a.equals(b) else 1)
PYEOF
}

# ---- 16 ranks against TraceLens ----
P16="$DIR/r16/rank*_trace.json"
warm $P16
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
        for f in "$DIR"/ref16/*.csv; do
            cmp -s "$f" "$DIR/ours16/$(basename "$f")" && continue
            if same_up_to_order "$f" "$DIR/ours16/$(basename "$f")"; then
                [ "$same" = yes ] && same="yes, but for the ranks' order (TraceLens' workers' finishing order) and the last digits of sums in it"
            else
                same="NO ($(basename "$f"))"
            fi
        done
        [ $mode = sequential ] && ref_seq=$ref || ref_mp=$ref
        x=$(ratio "$ref" "$ours"); cx=$(ratio "$ref_cpu" "$ours_cpu")
        v=$(verdict "$x" 100 min) || fail=1
        printf '%-44s %8ss %8ss cpu %7.0f MB  %sx wall (%sx cpu), target >= 100x: %s; CSVs the same: %s\n' \
            "16 x 20 MB: TraceLens, $mode" "$ref" "$ref_cpu" "$(awk -v r="$ref_rss" 'BEGIN { print r / 1024 }')" "$x" "$cx" "$v" "$same"
    done
fi

# ---- the floor: the same 16 ranks read by the field's fastest parser, on one core ----
# simdjson (bench/json_floor.cpp, when libsimdjson-dev is installed), checking every token
# as tlreport does, or walking the events without checking what it skips; read(2) of the
# bytes alone beside them.  The 100x target's budget, in CPU seconds on every core, is set
# against them.
if make --no-print-directory -s "$BUILD/tools/json_floor" >/dev/null 2>&1; then
    FLOOR=$(cd "$BUILD" && pwd)/tools/json_floor
    read -r _ _ one16 < <(best_of "$RUNS" "$TLR" -q -j 1 --trace_pattern "$P16" --world_size 16 --output_csvs_dir "$DIR/ours16") || exit 1
    printf '%-44s %8ss cpu  every token checked, the report written\n' "16 x 20 MB, one core: tlreport -j 1" "$one16"
    for mode in dom ondemand read; do
        read -r _ _ c < <(best_of "$RUNS" "$FLOOR" $mode $P16) || { echo "bench_ranks: json_floor failed: $(tail -n 1 "$DIR/err.log")"; exit 1; }
        case $mode in
        dom) what="simdjson DOM"; how="every token checked: $(ratio "$c" "$one16")x tlreport's CPU"; dom16=$c ;;
        ondemand) what="simdjson On Demand"; how="cat and name; what it skips not checked: $(ratio "$c" "$one16")x tlreport's" ;;
        read) what="read(2) alone"; how="the bytes into memory, no parsing"; read16=$c ;;
        esac
        printf '%-44s %8ss cpu  %s\n' "16 x 20 MB, one core: $what" "$c" "$how"
    done
    for r in ${ref_seq:+sequential:$ref_seq} ${ref_mp:+multiprocessing:$ref_mp}; do
        budget=$(awk -v t="${r#*:}" -v c="$CORES" 'BEGIN { printf "%.3f", t / 100 * c }')
        printf '%-44s %8ss cpu  on %d cores at best: the read alone %s of it, simdjson DOM %sx it\n' \
            "100x TraceLens ${r%%:*}: budget" "$budget" "$CORES" "$(ratio "$read16" "$budget")" "$(ratio "$dom16" "$budget")"
    done
else
    echo "bench_ranks: note: no JSON floor (bench/json_floor.cpp needs g++ and libsimdjson-dev)"
fi

# ---- 256 ranks: scaling and memory ----
P256="$DIR/r256/rank*_trace.json"
warm $P256
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
