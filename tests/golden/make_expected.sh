#!/bin/sh
# make_expected.sh TLCOMPARE [CASE ...] - (re)write tests/golden/<case>/expected/ from what
# TLCOMPARE makes of the case.  Only for a deliberate change of the output: check the new
# files by hand and with the conformance suite's checker (README.md says how) before
# committing them.
set -eu
tl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- */
for c in "$@"; do
    c=${c%/}
    [ -f "$c/args" ] || continue
    rm -rf "$c/expected" && mkdir -p "$c/expected"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2046
    if (cd "$c" && "$tl" $(cat args) -o "$tmp/out.xlsx" --output_csvs_dir "$tmp/csvs" -q 2>"$tmp/err"); then
        cp "$tmp"/csvs/*.csv "$c/expected/"
        # the result order, which is the order of the workbook's sheets after the summary
        (cd "$c" && "$tl" $(cat args) -o "$tmp/out2.xlsx" --no-summary -v) |
            sed -n "s/^Wrote sheet '\(.*\)' with .*/\1/p" >"$c/expected/order.txt"
    else
        echo $? >"$c/expected/status"
        cp "$tmp/err" "$c/expected/stderr"
    fi
    rm -rf "$tmp"
    echo "$c: $(ls "$c/expected" | wc -l) files"
done
