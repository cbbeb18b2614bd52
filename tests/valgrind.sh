#!/bin/sh
# Run tlcompare under valgrind on every conformance case (the TraceDiff ones with
# --tracediff-dir), the golden cases (tests/golden) and the bundled examples, and
# tlreport (beside it) on every trace -> report case (also with --gpu-arch: the perf sheets'
# roofline columns), inference case and rank set (the multi-rank collective report): any
# memory error or leak fails.
# usage: tests/valgrind.sh TLCOMPARE [CONFORMANCE_DIR]
set -u
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
conf=${2:-../shared/conformance}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible"
fail=0; n=0
run() { # name dir args...
  name=$1; dir=$2; shift 2
  n=$((n + 1))
  if (cd "$dir" && $vg "$tool" "$@" -o "$tmp/$name.xlsx" --output_csvs_dir "$tmp/$name" -q) >"$tmp/$name.log" 2>&1; then
    echo "valgrind clean: $name"
  else
    echo "valgrind FAILED: $name"; tail -n 20 "$tmp/$name.log"; fail=$((fail + 1))
  fi
}
if [ -d "$conf/cases" ]; then
  for c in "$conf"/cases/*/; do
    # shellcheck disable=SC2046
    run "$(basename "$c")" "$c" $(cat "$c/args")
  done
fi
if [ -d "$conf/tracediff-cases" ]; then
  for c in "$conf"/tracediff-cases/*/; do
    # shellcheck disable=SC2046
    run "td_$(basename "$c")" "$c" $(cat "$c/args") --tracediff-dir "$tmp/td_$(basename "$c")_dir"
  done
fi
reject() { # name dir status args...: a refusal, with that exit status and no error of valgrind's
  name=$1; dir=$2; want=$3; shift 3
  n=$((n + 1))
  (cd "$dir" && $vg "$tool" "$@" -o "$tmp/$name.xlsx" --output_csvs_dir "$tmp/$name" -q) >"$tmp/$name.log" 2>&1
  got=$?
  if [ "$got" -eq "$want" ]; then
    echo "valgrind clean: $name"
  else
    echo "valgrind FAILED: $name (exit $got, want $want)"; tail -n 20 "$tmp/$name.log"; fail=$((fail + 1))
  fi
}
report_tool=$(dirname "$tool")/tlreport
if [ -d "$conf/report-cases" ] && [ -x "$report_tool" ]; then
  compare_tool=$tool; tool=$report_tool
  for c in "$conf"/report-cases/*/; do
    # shellcheck disable=SC2046
    run "report_$(basename "$c")" "$c" $(cat "$c/args")
    # the perf sheets' roofline columns too
    # shellcheck disable=SC2046
    run "report_$(basename "$c")_roofline" "$c" $(cat "$c/args") --gpu-arch MI300X
  done
  # the perf sheets of graph-replay traces
  for c in "$conf"/inference-perf-cases/*/; do
    [ -f "$c/args" ] || continue
    # shellcheck disable=SC2046
    run "inference_perf_$(basename "$c")" "$c" $(cat "$c/args")
  done
  # graph-replay traces with their capture folders (INFERENCE.md), and their refusals
  for c in "$conf"/inference-cases/*/; do
    [ -f "$c/args" ] || continue
    # shellcheck disable=SC2046
    run "inference_$(basename "$c")" "$c" $(cat "$c/args")
  done
  for c in "$conf"/inference-reject-cases/*/; do
    [ -f "$c/args" ] || continue
    # shellcheck disable=SC2046
    reject "reject_$(basename "$c")" "$c" "$(head -n 1 "$c/expected/reject")" $(cat "$c/args")
  done
  # rank sets (the multi-rank collective report): their patterns reach the tool as they are
  for c in "$conf"/rank-cases/*/; do
    [ -f "$c/args" ] || continue
    set -f
    if [ -f "$c/expected/reject" ]; then
      # shellcheck disable=SC2046
      reject "rank_$(basename "$c")" "$c" "$(head -n 1 "$c/expected/reject")" $(cat "$c/args")
    else
      # shellcheck disable=SC2046
      run "rank_$(basename "$c")" "$c" $(cat "$c/args")
    fi
    set +f
  done
  tool=$compare_tool
fi
# the project's own end-to-end cases (tests/golden), but those that must fail
for c in "$top"/tests/golden/*/; do
  [ -f "$c/args" ] && [ ! -f "$c/expected/status" ] || continue
  # shellcheck disable=SC2046
  run "golden_$(basename "$c")" "$c" $(cat "$c/args")
done
run examples "$top" examples/baseline examples/candidate
run examples_xlsx "$top" examples/baseline.xlsx examples/candidate.xlsx
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
