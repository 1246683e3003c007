#!/bin/sh
# The tracer against heaptrack where stacks are many: bench/sites_bench.sh <build dir>
#
# Two programs, each untraced, under heaptrack and under heaphook's tracer
# (full mode), SITES_REPS times interleaved, timed with date +%s%N (process
# start included); the table gives median wall times and their ratios.
#   sites  hh_bench_sites: 1200 distinct call stacks in turn (more than the
#          tracer's per-thread stack cache holds), 240,000 allocations
#   cc1    gcc's compiler proper, -O2, on heaphook's own src/analyze/analysis.c
#          (preprocessed once): a real program with deep, varied stacks
set -eu
. "$(dirname "$0")/paths.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
REPS=${SITES_REPS:-5}
WORK=$BUILD/bench/sites
SITES=$BUILD/bench/hh_bench_sites
log() { echo "sites bench: $*" >&2; }
command -v heaptrack >/dev/null || { log "heaptrack not found (scripts/deps.sh bench installs it)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
CC1=$(gcc -print-prog-name=cc1)
gcc -E -I"$SRC/src" -I"$SRC/include" "$SRC/src/analyze/analysis.c" -o "$WORK/analysis.i"

# run PROGRAM CONFIG: one run, its wall seconds appended to $WORK/PROGRAM.CONFIG
run() {
  case $1 in
    sites) set -- "$1" "$2" "$SITES" ;;
    cc1) set -- "$1" "$2" "$CC1" -quiet -O2 "$WORK/analysis.i" -o "$WORK/analysis.s" ;;
  esac
  prog=$1 config=$2
  shift 2
  rm -f "$WORK"/t.* "$WORK"/ht.*
  t0=$(date +%s%N)
  case $config in
    untraced) "$@" ;;
    heaptrack) heaptrack -o "$WORK/ht" "$@" ;;
    heaphook) env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t.%p" "$@" ;;
  esac >"$WORK/out" 2>"$WORK/err" || { log "$prog under $config failed (see $WORK/err)"; exit 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$WORK/$prog.$config"
}

i=1
while [ "$i" -le "$REPS" ]; do
  log "round $i/$REPS"
  for p in sites cc1; do
    for c in untraced heaptrack heaphook; do run $p $c; done
  done
  i=$((i + 1))
done

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "| program | untraced s | heaptrack s | heaphook s | heaptrack / untraced | heaphook / untraced | heaphook / heaptrack |"
echo "|---|---|---|---|---|---|---|"
for p in sites cc1; do
  u=$(median <"$WORK/$p.untraced")
  h=$(median <"$WORK/$p.heaptrack")
  o=$(median <"$WORK/$p.heaphook")
  awk -v p="$p" -v u="$u" -v h="$h" -v o="$o" 'BEGIN {
    printf "| %s | %.3f | %.3f | %.3f | %.1fx | %.1fx | %.2f |\n", p, u, h, o, h / u, o / u, o / h }'
done
echo
echo "Medians of $REPS interleaved runs; \`bench/sites_bench.sh\` (sites: hh_bench_sites, 1200 call stacks; cc1: \`$CC1 -O2\` on src/analyze/analysis.c)."
