#!/bin/sh
# valgrind.sh PYTHON BUILD CONFORMANCE - the Python module's tests under valgrind (memcheck):
# no memory error anywhere, and no block definitely lost whose allocation passed through
# the extension (the interpreter's and pandas' own are not ours to judge).  The tests of
# Ctrl-C are left out (they time a child process), and the side-by-side with TraceLens.
py=$1 build=$2 conf=$3
log=$build/python-valgrind.log
command -v valgrind >/dev/null || { echo "python-valgrind: valgrind not found (make deps)"; exit 1; }
PYTHONMALLOC=malloc TLCOMPARE_PYTHONPATH=$build/python CONFORMANCE=$conf \
  TLCOMPARE_BIN=$build/tlcompare TLREPORT_BIN=$build/tlreport TRACELENS= \
  valgrind --error-exitcode=99 --errors-for-leak-kinds=none --leak-check=full --show-leak-kinds=definite \
    --num-callers=40 --log-file="$log" \
    "$py" -m pytest -q -p no:cacheprovider tests/python -k "not ctrl_c" >"$build/python-valgrind.out" 2>&1
rc=$?
tail -n 1 "$build/python-valgrind.out"
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -n 1)
# loss records of definitely lost blocks allocated through the extension: a frame in it
# (by its file when it has no symbols, else by its C sources; the interpreter, numpy and
# pandas have none here)
ours=$(sed 's/^==[0-9]*== \{0,1\}//' "$log" |
    awk 'BEGIN{RS=""} /definitely lost in loss record/ && (/_core\.abi3\.so/ || /\.c:[0-9]+\)/) {n++} END{print n+0}')
echo "python-valgrind: ${errors:-?} memory errors, $ours definitely lost records from the extension (log: $log)"
[ "$rc" -ne 99 ] && [ "${errors:-1}" = 0 ] && [ "$ours" = 0 ] && [ "$rc" -eq 0 ]
