#!/usr/bin/env bash
# bench_infer.sh - the inference path side by side with TraceLens' inference generator
# (INFERENCE.md; run by hand or from tools/bench.sh).
#
# For every case of conformance/inference-cases (the cases' own arguments: a graph-replay
# trace with its capture folder, or --inference), runs
#   ours:       $BUILD/tlreport ARGS --output_csvs_dir OUT            (best of BENCH_INFER_RUNS)
#   reference:  python3 generate_perf_report_pytorch_inference.py --profile_json_path T
#               [--capture_folder COPY] FLAGS --enable_kernel_summary --output_csvs_dir OUT
#                                                                      (best of BENCH_INFER_REF_RUNS)
# both writing the same sheets as CSVs (no workbook), and prints the wall times and their
# ratio against the target (>= 50x; the CPU-time ratio beside it, which a busy machine
# disturbs less).  The reference writes execution_details.json into a
# capture folder that lacks one, so it gets a fresh copy of the folder each run (the copy is
# not timed).  It also prints the peak RSS of the inference run against the eager path on
# the capture trace itself (`tlreport CAPTURE_TRACE`; target <= 2x).
#
# Environment:
#   BUILD=build                 where tlreport and tools/benchrun are (made when missing)
#   CONFORMANCE=../shared/conformance
#   TRACELENS                   a TraceLens checkout (default: one made from the mirror below
#                               under $BENCH_INFER_DIR)
#   TRACELENS_MIRROR=/work/.mirror/AMD-AGI+TraceLens/repo
#   PYTHON=/usr/bin/python3     a python with pandas (and openpyxl)
#   BENCH_INFER_RUNS=5, BENCH_INFER_REF_RUNS=1, BENCH_INFER_DIR=$BUILD/bench_infer
# Exits 1 when a run fails or a target is missed, 0 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
CONF=${CONFORMANCE:-../shared/conformance}
PY=${PYTHON:-/usr/bin/python3}
RUNS=${BENCH_INFER_RUNS:-5}
REF_RUNS=${BENCH_INFER_REF_RUNS:-1}
DIR=${BENCH_INFER_DIR:-$BUILD/bench_infer}
MIRROR=${TRACELENS_MIRROR:-/work/.mirror/AMD-AGI+TraceLens/repo}
SPEED_TARGET=50
RSS_TARGET=2

mkdir -p "$DIR" || exit 1
DIR=$(cd "$DIR" && pwd)
CONF=$(cd "$CONF" && pwd) || { echo "bench_infer: no conformance suite at $CONF"; exit 1; }
make --no-print-directory -s "$BUILD/tlreport" "$BUILD/tools/benchrun" >/dev/null || exit 1
TLR=$(cd "$BUILD" && pwd)/tlreport
RUN=$(cd "$BUILD" && pwd)/tools/benchrun

if [ -z "${TRACELENS:-}" ]; then
  TRACELENS=$DIR/tracelens
  if [ ! -f "$TRACELENS/TraceLens/Reporting/generate_perf_report_pytorch_inference.py" ]; then
    rm -rf "$TRACELENS" && mkdir -p "$TRACELENS" &&
      git -C "$MIRROR" archive HEAD TraceLens 2>/dev/null | tar -x -C "$TRACELENS" ||
      { echo "bench_infer: cannot make a TraceLens checkout from $MIRROR (set TRACELENS)"; exit 1; }
  fi
fi
GEN=$TRACELENS/TraceLens/Reporting/generate_perf_report_pytorch_inference.py
[ -f "$GEN" ] || { echo "bench_infer: $GEN not found"; exit 1; }
PYTHONPATH=$TRACELENS "$PY" -c 'import pandas, openpyxl, tqdm, TraceLens' 2>/dev/null ||
  { echo "bench_infer: $PY cannot import pandas, openpyxl, tqdm and TraceLens" \
         "(apt-get install python3-pandas python3-openpyxl python3-tqdm)"; exit 1; }

. tools/bench_lib.sh # field, best_of

fail=0
printf '%-38s %9s %9s %8s %8s %9s %9s %6s\n' case ours_s ref_s speedup cpu_x infer_MB eager_MB rss_x
for c in "$CONF"/inference-cases/*/; do
  name=$(basename "$c")
  read -r -a args < "$c/args"
  # the reference's arguments from ours
  trace="" cap="" flags=()
  for ((k = 0; k < ${#args[@]}; k++)); do
    a=${args[$k]}
    case "$a" in
      --capture-folder|--capture_folder) cap=${args[$((k + 1))]}; k=$((k + 1)) ;;
      --profile_json_path) trace=${args[$((k + 1))]}; k=$((k + 1)) ;;
      --inference) ;;
      --*) flags+=("$a") ;;
      *@*) if [ -e "$c/$a" ]; then trace=$a; else trace=${a%@*}; cap=${a##*@}; fi ;;
      *) trace=$a ;;
    esac
  done
  out=$DIR/$name; rm -rf "$out"; mkdir -p "$out"
  read -r ours ours_rss ours_cpu < <(best_of -C "$c" -p "rm -rf '$out/ours'" "$RUNS" "$TLR" "${args[@]}" -q --output_csvs_dir "$out/ours") ||
    { echo "$name: tlreport failed ($(tail -n 1 "$DIR/err.log"))"; fail=1; continue; }
  ref_args=(--profile_json_path "$trace")
  pre="rm -rf '$out/ref'"
  if [ -n "$cap" ]; then
    pre="$pre; rm -rf '$out/cap' && cp -r '$c/$cap' '$out/cap'"
    ref_args+=(--capture_folder "$out/cap")
  fi
  read -r ref _ ref_cpu < <(PYTHONPATH=$TRACELENS best_of -C "$c" -p "$pre" "$REF_RUNS" "$PY" "$GEN" "${ref_args[@]}" "${flags[@]}" \
                     --enable_kernel_summary --output_csvs_dir "$out/ref") ||
    { echo "$name: the reference failed ($(tail -n 1 "$DIR/err.log"))"; fail=1; continue; }
  speed=$(awk -v a="$ref" -v b="$ours" 'BEGIN { printf "%.1f", a / b }')
  cpux=$(awk -v a="$ref_cpu" -v b="$ours_cpu" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
  awk -v s="$speed" -v t="$SPEED_TARGET" 'BEGIN { exit !(s < t) }' && fail=1
  # memory: the eager path on the capture trace the case uses (the largest of its folder)
  rssx="-" eager_mb="-"
  if [ -n "$cap" ]; then
    ct=$(ls -S "$c/$cap"/*.json* 2>/dev/null | grep -v execution_details | head -n 1)
    if [ -n "$ct" ]; then
      read -r _ eager_rss _ < <(best_of -C "$c" 1 "$TLR" "$ct" -q --output_csvs_dir "$out/eager")
      rm -rf "$out/eager"
      rssx=$(awk -v a="$ours_rss" -v b="$eager_rss" 'BEGIN { printf "%.2f", a / b }')
      eager_mb=$(awk -v a="$eager_rss" 'BEGIN { printf "%.1f", a / 1024 }')
      awk -v s="$rssx" -v t="$RSS_TARGET" 'BEGIN { exit !(s > t) }' && fail=1
    fi
  fi
  printf '%-38s %9s %9s %7sx %7sx %9s %9s %6s\n' "$name" "$ours" "$ref" "$speed" "$cpux" \
    "$(awk -v a="$ours_rss" 'BEGIN { printf "%.1f", a / 1024 }')" "$eager_mb" "$rssx"
done
echo "targets: speedup >= ${SPEED_TARGET}x, peak RSS <= ${RSS_TARGET}x the eager path on the capture trace"
[ "$fail" -eq 0 ] && echo "bench_infer: all targets met" || echo "bench_infer: MISS (see above)"
exit "$fail"
