#!/bin/sh
# The tracer against heaptrack on the same allocation-heavy program, in one
# run: bench/trace_bench.sh <build dir>
#
# The program is the churn benchmark (hh_bench_overhead: random sizes, 8192
# live blocks, one free + one malloc per step, TRACE_ITERS steps). Each
# configuration runs TRACE_REPS times, interleaved (ABCD ABCD ...), timed
# with date +%s%N around /usr/bin/time (which gives the peak RSS), and the
# table gives the median wall time, its ratio to the untraced run, the trace
# size per event (events = the allocations and frees the program made,
# counted by heaphook report) and the peak RSS of the traced process (the
# tracer's memory plus the program's). heaptrack's own cost includes its
# interpreter process (heaptrack runs it beside the program); its trace size
# is its zstd-compressed file.
set -eu
. "$(dirname "$0")/paths.sh"
ITERS=${TRACE_ITERS:-5000000}
REPS=${TRACE_REPS:-5}
WORK=${TRACE_WORK:-$BUILD/bench/trace}
log() { echo "trace bench: $*" >&2; }
configs="untraced heaptrack full sampled nostacks"
# (make bench installs heaptrack; run by hand where it cannot be installed,
# the table has the tracer's rows alone)
command -v heaptrack >/dev/null || {
  log "heaptrack not found (scripts/deps.sh bench installs it): its row is left out"
  configs="untraced full sampled nostacks"
}
rm -rf "$WORK" && mkdir -p "$WORK"

# run NAME: one run of configuration NAME; appends "wall_s rss_kib bytes" to $WORK/NAME.runs
run() {
  name=$1
  out=$WORK/$name.trace
  rm -rf "$out" "$out".* "$WORK"/ht.*
  case $name in
    untraced) set -- "$PROG" --iters "$ITERS" ;;
    heaptrack) set -- heaptrack -o "$WORK/ht" "$PROG" --iters "$ITERS" ;;
    full) set -- env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$out" "$PROG" --iters "$ITERS" ;;
    sampled) set -- env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$out" HEAPHOOK_TRACE_SAMPLE=512K "$PROG" --iters "$ITERS" ;;
    nostacks) set -- env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$out" HEAPHOOK_TRACE_STACKS=0 "$PROG" --iters "$ITERS" ;;
  esac
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$WORK/time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    log "$name failed (see $WORK/$name.err)"; exit 1; }
  t1=$(date +%s%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
  bytes=0
  case $name in
    heaptrack) f=$(ls "$WORK"/ht.* | head -n 1); bytes=$(stat -c %s "$f") ;;
    untraced) ;;
    *) bytes=$(stat -c %s "$out"); cp "$out" "$WORK/$name.keep" ;;
  esac
  echo "$wall $(tail -n 1 "$WORK/time") $bytes" >>"$WORK/$name.runs"
}

i=1
while [ "$i" -le "$REPS" ]; do
  log "round $i/$REPS"
  for c in $configs; do run "$c"; done
  i=$((i + 1))
done

EVENTS=$("$HH" report --json "$WORK/full.keep" 2>/dev/null |
  python3 -c 'import json,sys; t=json.load(sys.stdin)["totals"]; print(t["allocations"] + t["frees"])')
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
base=$(awk '{print $1}' "$WORK/untraced.runs" | median)
echo "| configuration | wall s (median of $REPS) | ratio to untraced | trace bytes per event | peak RSS MiB |"
echo "|---|---|---|---|---|"
for c in $configs; do
  wall=$(awk '{print $1}' "$WORK/$c.runs" | median)
  rss=$(awk '{print $2}' "$WORK/$c.runs" | median)
  bytes=$(awk '{print $3}' "$WORK/$c.runs" | median)
  awk -v n="$c" -v w="$wall" -v b="$base" -v r="$rss" -v by="$bytes" -v e="$EVENTS" 'BEGIN {
    per = (by > 0) ? sprintf("%.2f", by / e) : "-";
    printf "| %s | %.3f | %.2fx | %s | %.1f |\n", n, w, w / b, per, r / 1024 }'
done
echo
echo "$EVENTS events (allocations + frees, from heaphook report); $ITERS churn steps; \`bench/trace_bench.sh\`."
