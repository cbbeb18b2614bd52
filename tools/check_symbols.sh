#!/bin/sh
# check_symbols.sh ARCHIVE... - every symbol the library defines with external linkage
# carries the tl_ prefix: the library links into a Python extension beside others, and a
# plain name (render_job, part_core) could bind to someone else's.  Exits 1 listing the
# others.
bad=$(for a in "$@"; do nm -g --defined-only "$a"; done |
      awk 'NF == 3 && $2 ~ /[TDBRCGS]/ && $3 !~ /^tl_/ {print $3}' | sort -u)
if [ -n "$bad" ]; then
    echo "symbols without the tl_ prefix (make them static, or prefix them):"
    echo "$bad" | sed 's/^/  /'
    exit 1
fi
echo "symbols: every external one carries tl_"
