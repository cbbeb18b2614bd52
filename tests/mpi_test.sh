#!/bin/sh
# mpi_test.sh - tlreport-mpi against tlreport -j 1, on every rank case of the conformance
# suite and on a generated 256-rank set: the same exit status, the same error line, the
# same CSVs byte for byte, the same workbook parts byte for byte (a workbook's zip holds
# its parts in the order the writer's threads finish them, so the parts are compared, not
# the zip); and tlcompare-mpi against tlcompare -j 1 on two generated 8-rank runs (the
# CSVs, the summary's JSON and Markdown, the workbook's parts; a rank missing or damaged:
# the same error).  SOURCE_DATE_EPOCH fixes the workbooks' dates.
# usage: tests/mpi_test.sh BUILD CONFORMANCE MPIRUN NP
set -u
build=$(cd "$1" && pwd); conf=$2; mpirun=$3; np=$4
one="$build/tlreport"; mpi="$build/tlreport-mpi"; gen="$build/tools/gentrace"
tmp=$(mktemp -d /tmp/tlmpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export SOURCE_DATE_EPOCH=1700000000 TZ=UTC
fails=0; n=0

same_book() {
    python3 - "$1" "$2" <<'PY'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
na, nb = sorted(a.namelist()), sorted(b.namelist())
if na != nb:
    sys.exit("parts differ: %s vs %s" % (na, nb))
for name in na:
    if a.read(name) != b.read(name):
        sys.exit("part %s differs" % name)
PY
}

# compare NAME DIR NP ARGS...: run both in DIR, compare everything.
compare() {
    name=$1; dir=$2; procs=$3; shift 3
    n=$((n + 1))
    rm -rf "$tmp/one" "$tmp/mpi" "$tmp/one.xlsx" "$tmp/mpi.xlsx"
    (cd "$dir" && "$one" -j 1 -q "$@" --output_csvs_dir "$tmp/one" -o "$tmp/one.xlsx" 2>"$tmp/one.err"); rc1=$?
    (cd "$dir" && $mpirun --allow-run-as-root --oversubscribe -np "$procs" "$mpi" -q "$@" \
        --output_csvs_dir "$tmp/mpi" -o "$tmp/mpi.xlsx" 2>"$tmp/mpi.err"); rc2=$?
    why=""
    if [ $rc1 -ne $rc2 ]; then why="exit $rc1 vs $rc2"
    elif [ $rc1 -ne 0 ]; then
        sed 's/^tlreport: //' "$tmp/one.err" >"$tmp/e1"; grep '^tlreport-mpi: ' "$tmp/mpi.err" | sed 's/^tlreport-mpi: //' >"$tmp/e2" # not mpirun's own lines
        cmp -s "$tmp/e1" "$tmp/e2" || why="stderr: $(cat "$tmp/e1") vs $(cat "$tmp/e2")"
        [ -e "$tmp/mpi" ] || [ -e "$tmp/mpi.xlsx" ] && why="$why; wrote output after an error"
    else
        diff -r "$tmp/one" "$tmp/mpi" >"$tmp/diff" 2>&1 || why="CSVs differ: $(head -3 "$tmp/diff")"
        [ -z "$why" ] && { same_book "$tmp/one.xlsx" "$tmp/mpi.xlsx" >"$tmp/book" 2>&1 || why="workbooks differ: $(cat "$tmp/book")"; }
    fi
    if [ -n "$why" ]; then echo "FAIL $name (-np $procs): $why"; fails=$((fails + 1))
    else echo "PASS $name (-np $procs)"; fi
}

for c in "$conf"/rank-cases/*/; do
    [ -f "$c/args" ] || continue
    set -f  # the patterns reach the tools, as the conformance runner passes them
    # shellcheck disable=SC2046
    compare "$(basename "$c")" "$c" "$np" $(cat "$c/args")
    set +f
done

"$gen" --ranks 256 -o "$tmp/g256" --straggler 17:200 --late 100:5:900 --jitter 20 --seed 3 \
    --collectives allreduce,allgather:BFloat16:524288,alltoallv:Float:65536 --rounds 2 >/dev/null || { echo "FAIL gentrace"; exit 1; }
compare generated_256r "$tmp/g256" 4 --trace_pattern 'rank*_trace.json' --world_size 256 --all2allv_heatmap

# ---- tlcompare-mpi against tlcompare -j 1: two generated 8-rank runs ----
cmpone="$build/tlcompare"; cmpmpi="$build/tlcompare-mpi"
gen_run() { # DIR OPTIONS-OF-EVERY-RANK... (rank 5 of run b also 8% slower, rank 2 of a late)
    d=$1; shift; mkdir -p "$d"
    for r in 0 1 2 3 4 5 6 7; do
        x=""; [ "$(basename "$d")" = b ] && [ $r = 5 ] && x="--slow *=8"
        [ "$(basename "$d")" = a ] && [ $r = 2 ] && x="--arrive-late 2000"
        # shellcheck disable=SC2086
        "$gen" --world 8 --rank $r --layers 13 "$@" $x -o "$d/rank${r}_trace.json" || return 1
    done
}
gen_run "$tmp/runs/a" && gen_run "$tmp/runs/b" --coll-slow 25 || { echo "FAIL gentrace (runs)"; exit 1; }
# compare_runs NAME NP ARGS...: run both in $tmp/runs, compare every output.
compare_runs() {
    name=$1; procs=$2; shift 2
    n=$((n + 1))
    rm -rf "$tmp/one" "$tmp/mpi" && mkdir -p "$tmp/one" "$tmp/mpi"
    (cd "$tmp/runs" && "$cmpone" -j 1 -q "$@" --output_csvs_dir "$tmp/one/csv" -o "$tmp/one/w.xlsx" \
        --summary-json "$tmp/one/s.json" --summary-md "$tmp/one/s.md" 2>"$tmp/one.err"); rc1=$?
    (cd "$tmp/runs" && $mpirun --allow-run-as-root --oversubscribe -np "$procs" "$cmpmpi" -j 1 -q "$@" \
        --output_csvs_dir "$tmp/mpi/csv" -o "$tmp/mpi/w.xlsx" --summary-json "$tmp/mpi/s.json" \
        --summary-md "$tmp/mpi/s.md" 2>"$tmp/mpi.err"); rc2=$?
    why=""
    sed 's/^tlcompare: //' "$tmp/one.err" | grep -v '^1 result sheet' >"$tmp/e1"
    grep '^tlcompare-mpi: \|^tlcompare: regression' "$tmp/mpi.err" | sed 's/^tlcompare-mpi: //; s/^tlcompare: //' >"$tmp/e2"
    if [ $rc1 -ne $rc2 ]; then why="exit $rc1 vs $rc2"
    elif ! cmp -s "$tmp/e1" "$tmp/e2"; then why="stderr: $(cat "$tmp/e1") vs $(cat "$tmp/e2")"
    elif [ $rc1 -eq 0 ] || [ $rc1 -eq 3 ]; then
        diff -r "$tmp/one/csv" "$tmp/mpi/csv" >"$tmp/diff" 2>&1 || why="CSVs differ: $(head -3 "$tmp/diff")"
        for f in s.json s.md; do cmp -s "$tmp/one/$f" "$tmp/mpi/$f" || why="$why $f differs"; done
        [ -z "$why" ] && { same_book "$tmp/one/w.xlsx" "$tmp/mpi/w.xlsx" >"$tmp/book" 2>&1 || why="workbooks differ: $(cat "$tmp/book")"; }
    fi
    if [ -n "$why" ]; then echo "FAIL $name (-np $procs): $why"; fails=$((fails + 1))
    else echo "PASS $name (-np $procs)"; fi
}
compare_runs runs_8r 3 a b
compare_runs runs_8r_gate 4 a b --fail-on-regression 5
compare_runs runs_8r_pattern 2 'a/rank*_trace.json' 'b/rank*_trace.json' --names a b
rm "$tmp/runs/b/rank6_trace.json"
compare_runs runs_rank_missing 3 a b
echo "not a trace" > "$tmp/runs/b/rank6_trace.json"
compare_runs runs_rank_damaged 3 a b

echo "mpi: $((n - fails)) of $n the same as tlreport -j 1 / tlcompare -j 1"
[ $fails -eq 0 ]
