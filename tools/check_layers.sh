#!/bin/sh
# check_layers.sh - fail when a source file includes a header of a layer it may not use.
#
# The layers of src/, each with the layers it may include (its own always allowed).
# Data flows one way: read -> table -> compare / trace -> perf -> ranks -> diff -> write -> summary -> run
# (one run of a comparison or a report, for every front end) -> CLI.
# usage: tools/check_layers.sh [SRC_DIR]
src=${1:-src}
allowed() {
    case $1 in
    base) echo "" ;;
    io) echo "base" ;;
    table) echo "base" ;;
    read) echo "base io table" ;;
    trace) echo "base io table" ;;
    perf) echo "base io table trace" ;;
    ranks) echo "base io table trace perf" ;;
    diff) echo "base table trace" ;;
    compare) echo "base table" ;;
    write) echo "base io table" ;;
    summary) echo "base io table compare write diff perf" ;;
    run) echo "base io table read trace perf ranks diff compare write summary" ;;
    cli) echo "base io table read trace perf ranks diff compare write summary run" ;;
    *) echo "?" ;;
    esac
}
bad=0
for f in "$src"/*/*.[ch]; do
    layer=$(basename "$(dirname "$f")")
    ok=$(allowed "$layer")
    if [ "$ok" = "?" ]; then
        echo "$f: '$layer' is not a layer (add it to tools/check_layers.sh)"; bad=1; continue
    fi
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case $inc in */*) ;; *) echo "$f: includes \"$inc\" without its layer folder"; bad=1; continue ;; esac
        to=${inc%%/*}
        [ "$to" = "$layer" ] && continue
        case " $ok " in *" $to "*) ;; *) echo "$f: layer '$layer' may not include \"$inc\" (it may use: ${ok:-libc only})"; bad=1 ;; esac
    done
done
for f in "$src"/*.[ch]; do
    [ -e "$f" ] && { echo "$f: every source file belongs in a layer folder"; bad=1; }
done
[ $bad -eq 0 ] && echo "layers: every include goes down"
exit $bad
