# bench_lib.sh - what the bench scripts (bench_ranks.sh, bench_runs.sh, bench_infer.sh)
# share; sourced by them, never run.  Bash.  The caller sets, before calling:
#   RUN   the benchrun program (build/tools/benchrun: one run, one line of wall=, rss_kb=,
#         user=, sys=, status=)
#   DIR   where each timed run's stdout and stderr go: $DIR/out.log, $DIR/err.log (the last
#         run's; a caller quotes err.log's last line when a run failed)
#
# field NAME
#     reads a benchrun line on stdin; prints the number after NAME= (wall: seconds, rss_kb:
#     KiB, user and sys: CPU seconds, status: the exit status), or nothing.
# best_of [-C WHERE] [-p PRE] N COMMAND [ARG ...]
#     runs COMMAND N times through benchrun (in directory WHERE when given; PRE, shell code,
#     eval'd before each run and not timed); prints one line "WALL RSS CPU": the least wall
#     time (s), the largest peak RSS (KiB) and the least CPU time, user + sys (s), of the N
#     runs.  A run that fails (benchrun or the command exits non-zero) stops it: it prints
#     FAILED and returns 1.  N = 0 prints " 0 " (no time, RSS 0, no CPU time).
# ratio A B
#     prints A / B with two decimals (0.00 when B is not above 0).
# verdict VALUE TARGET min|max
#     prints PASS when VALUE >= TARGET (min) or VALUE <= TARGET (max), else MISS (and
#     returns 1).

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

best_of() {
    local where=. pre=""
    while :; do
        case $1 in
        -C) where=$2; shift 2 ;;
        -p) pre=$2; shift 2 ;;
        *) break ;;
        esac
    done
    local n=$1 best="" rss=0 cpu="" i line w r c
    shift
    for ((i = 0; i < n; i++)); do
        [ -n "$pre" ] && eval "$pre"
        line=$(cd "$where" && "$RUN" -o "$DIR/out.log" -e "$DIR/err.log" -- "$@") || { echo "FAILED"; return 1; }
        case "$line" in *status=0*) ;; *) echo "FAILED"; return 1 ;; esac
        w=$(echo "$line" | field wall); r=$(echo "$line" | field rss_kb)
        c=$(awk -v u="$(echo "$line" | field user)" -v s="$(echo "$line" | field sys)" 'BEGIN { print u + s }')
        if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; fi
        if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
        [ "$r" -gt "$rss" ] && rss=$r
    done
    echo "$best $rss $cpu"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == "min" ? v >= t : v <= t; print ok ? "PASS" : "MISS"; exit !ok }'; }
