#!/bin/sh
# longfuncs.sh - the functions of src/ longer than a limit, longest first:
#   lines  file:line  name
#
#   tools/longfuncs.sh [LIMIT [DIR]]     (default: 150 src)
#   tools/longfuncs.sh --check ALLOW     (make check-longfuncs): fails on a function over
#                                        150 lines that ALLOW does not list, or that has
#                                        grown past the length ALLOW gives it
#
# The project's C style makes this a line scan: a function's body opens with "{" alone at
# the start of a line and closes with "}" alone there (a struct or a table closes "};"),
# and its name is the identifier before the first "(" of the lines since the previous
# function.  The length counts the body's lines, braces included.
set -eu
if [ "${1:-}" = --check ]; then
  allow=$2
  bad=$("$0" 150 src | awk -F '\t' -v allow="$allow" '
    BEGIN { while ((getline l < allow) > 0) if (l !~ /^#/ && l != "") { split(l, a, "\t"); max[a[1] "\t" a[2]] = a[3] } }
    { split($2, w, ":"); k = w[1] "\t" $3
      if (!(k in max)) print "  " $2 " " $3 ": " $1 " lines (at most 150: split it along its phases)"
      else if ($1 + 0 > max[k] + 0) print "  " $2 " " $3 ": " $1 " lines, grown past " max[k] }')
  if [ -n "$bad" ]; then
    echo "functions too long:"; echo "$bad"; exit 1
  fi
  n=$(grep -vc '^#' "$allow" || true)
  if [ "$n" = 0 ]; then echo "functions: none over 150 lines"
  else echo "functions: none over 150 lines but the $n listed in $allow"; fi
  exit 0
fi
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
