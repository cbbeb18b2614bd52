#!/bin/sh
# longfuncs.sh - the functions of src/ longer than a limit, longest first:
#   lines  file:line  name
#
#   tools/longfuncs.sh [LIMIT [DIR]]     (default: 150 src)
#
# The project's C style makes this a line scan: a function's body opens with "{" alone at
# the start of a line and closes with "}" alone there (a struct or a table closes "};"),
# and its name is the identifier before the first "(" of the lines since the previous
# function.  The length counts the body's lines, braces included.
set -eu
limit=${1:-150}
dir=${2:-src}
find "$dir" -name '*.c' | LC_ALL=C sort | while read -r f; do
  awk -v limit="$limit" -v file="$f" '
    /^[A-Za-z_].*\(/ && !inbody { sig = $0 }
    /^\{$/ && !inbody { inbody = 1; start = NR; name = sig; next }
    /^\}$/ && inbody {
      inbody = 0
      n = NR - start + 1
      sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
      if (n > limit) printf "%d\t%s:%d\t%s\n", n, file, start, name
    }' "$f"
done | sort -rn
