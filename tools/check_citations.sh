#!/bin/sh
# check_citations.sh - fail when src/ cites a section of a contract that docs/ does not tell.
#
# Comments in src/ cite the contracts the code was written against by section
# ("TRACES.md §4.6", "PERF §3.3, §3.4", "MULTIRANK.md §5-§6").  The contracts live outside
# the repository, so each cited section must be a heading of the docs/ file that tells that
# contract's rules in the project's words: a heading line ("## ...") carrying "§<section>",
# alone or in a list ("### Integers (§4.6)", "## The sheets (§3.0, §3.1)").
#
# A section written without its contract ("§2.7") belongs to the contract named last on its
# line or the line before (a list, "INFERENCE.md §1.3, §2.1", or a wrapped comment), else to
# the file's own contract: the one the table `homes` below gives the file, or the first one
# the file names, or the one the table gives its folder.
# Ranges ("§3.2-§3.5") cite every section between their ends, at the depth of their ends.
#
# usage: tools/check_citations.sh [-l] [SRC_DIR [DOCS_DIR]]
#   -l  list every cited (contract, section) with the files citing it, and check
list=0
[ "$1" = "-l" ] && { list=1; shift; }
src=${1:-src}
docs=${2:-docs}

# The docs/ file that tells each contract's rules.
doc_of() {
    case $1 in
    SPEC) echo "$docs/comparing.md" ;;
    TRACES) echo "$docs/traces.md" ;;
    PERF) echo "$docs/perf.md" ;;
    INFERENCE) echo "$docs/inference.md" ;;
    MULTIRANK) echo "$docs/ranks.md" ;;
    esac
}

[ -d "$src" ] || { echo "check_citations: no source folder $src"; exit 2; }
cited=$(mktemp) || exit 2
trap 'rm -f "$cited"' EXIT INT TERM

# The files whose sections written alone belong to another contract than the first they name,
# and the folders whose files cite sections without naming any contract.
homes="src/trace/trace_report.h=INFERENCE src/trace/collective.h=MULTIRANK src/ranks/=MULTIRANK"

# 1. The tokens, in file order: contract names and sections (with an optional range).
grep -rnoE '\b(SPEC|TRACES|PERF|INFERENCE|MULTIRANK)(\.md)?\b|§+ ?[0-9]([0-9.]*[0-9])?( ?[-–] ?§?[0-9]([0-9.]*[0-9])?)?' "$src" |
# 2. Each section with its contract, one "CONTRACT SECTION FILE:LINE" per cited section.
awk -F: -v near=1 -v homes_list="$homes" '
BEGIN {
    nh = split(homes_list, h, " ")
    for (i = 1; i <= nh; i++) { split(h[i], kv, "="); homes[kv[1]] = kv[2] }
}
function add(c, s, where) { print c, s, where }
function expand(c, tok, where,   a, b, pa, pb, na, nb, i, pre) {
    gsub(/§| /, "", tok)
    if (tok !~ /[-–]/) { add(c, tok, where); return }
    split(tok, r, /[-–]/); a = r[1]; b = r[2]
    na = split(a, pa, "."); nb = split(b, pb, ".")
    if (na != nb) { add(c, a, where); add(c, b, where); return }
    pre = ""
    for (i = 1; i < na; i++) pre = pre pa[i] "."
    for (i = pa[na] + 0; i <= pb[nb] + 0; i++) add(c, pre i, where)
}
{
    f = $1; t = $0; sub(/^[^:]*:[^:]*:/, "", t)
    n[f]++; tok[f, n[f]] = t; ln[f, n[f]] = $2 + 0
    if (!(f in order)) { order[f] = ++nf; files[nf] = f }
}
END {
    for (k = 1; k <= nf; k++) {
        f = files[k]; cur = ""; curln = -1000
        home = f in homes ? homes[f] : ""
        for (i = 1; home == "" && i <= n[f]; i++) if (tok[f, i] !~ /^§/) home = tok[f, i]
        if (home == "") { d = f; sub(/[^\/]*$/, "", d); if (d in homes) home = homes[d] }
        sub(/\.md$/, "", home)
        for (i = 1; i <= n[f]; i++) {
            t = tok[f, i]
            if (t !~ /^§/) { cur = t; sub(/\.md$/, "", cur); curln = ln[f, i]; continue }
            c = ln[f, i] - curln <= near ? cur : home
            if (c == "") { print "?", t, f ":" ln[f, i]; continue }
            expand(c, t, f ":" ln[f, i])
        }
    }
}' | sort -u > "$cited"
[ -s "$cited" ] || { echo "check_citations: found no citation in $src (or the scan failed)"; exit 2; }

# 3. Every cited section must be a heading of its contract's docs/ file.
bad=0
if grep -q '^?' "$cited"; then
    grep '^?' "$cited" | while read -r _ s where; do
        echo "$where: $s names no contract (write it as e.g. TRACES.md $s, or give the file a home in tools/check_citations.sh)"
    done
    bad=1
fi
pairs=$(awk '$1 != "?" { print $1 "|" $2 }' "$cited" | sort -u)
for p in $pairs; do
    c=${p%%|*}; s=${p#*|}
    doc=$(doc_of "$c")
    where=$(awk -v c="$c" -v s="$s" '$1 == c && $2 == s { printf "%s%s", sep, $3; sep = " " }' "$cited")
    [ $list -eq 1 ] && echo "$c §$s -> $doc: $where"
    # a heading carrying the section, not followed by a digit or a deeper level (§4.6 is not §4.60 or §4.6.1)
    pat=$(printf '%s' "$s" | sed 's/\./\\./g')
    if ! grep -qE "^#+ .*§$pat([^0-9.]|\.[^0-9]|\.?\$)" "$doc" 2>/dev/null; then
        echo "$doc: no heading for $c §$s (cited by $where)"; bad=1
    fi
done
n=$(printf '%s\n' "$pairs" | grep -c .)
[ $bad -eq 0 ] && echo "citations: the $n sections $src/ cites are all told in $docs/"
exit $bad
