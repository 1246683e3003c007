#!/bin/sh
# `heaphook report` against heaptrack_print on the same program: bench/report_bench.sh <build dir>
#
# The program is the churn benchmark (hh_bench_overhead: 8192 live blocks,
# one free + one malloc per step). It runs once under `heaphook run` (the
# tracer, with stacks) and once under `heaptrack`; then `heaphook report`
# reads the first trace and `heaptrack_print` the second, each REPORT_REPS
# times (median wall time) with their peak RSS (/usr/bin/time -v's maximum
# resident set size). Prints a Markdown table. The target (issue 5): the
# report in at most a third of heaptrack_print's time, its memory bounded by
# the live blocks and distinct stacks (plus the merge's read-ahead window).
#
# Knobs: REPORT_ITERS (5000000 steps: 10M events after the 8192 + 200000
# warm-up ones), REPORT_REPS (5), REPORT_WORK (<build>/bench/report).
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 <build dir>" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
HH=$BUILD/src/cli/heaphook
PROG=$BUILD/bench/hh_bench_overhead
ITERS=${REPORT_ITERS:-5000000}
REPS=${REPORT_REPS:-5}
WORK=${REPORT_WORK:-$BUILD/bench/report}
log() { echo "report bench: $*" >&2; }

cmake --build "$BUILD" --target heaphook_cli heaphook hh_bench_overhead >/dev/null
for tool in heaptrack heaptrack_print; do
  command -v $tool >/dev/null || { log "$tool not found (scripts/deps.sh bench installs heaptrack)"; exit 1; }
done
[ -x /usr/bin/time ] || { log "/usr/bin/time not found (Debian package: time)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"

log "tracing $ITERS churn steps with heaphook run"
"$HH" run -o "$WORK/churn.hhtrace" -- "$PROG" --iters "$ITERS" >/dev/null 2>"$WORK/run.err"
log "tracing the same with heaptrack"
heaptrack -o "$WORK/churn.heaptrack" "$PROG" --iters "$ITERS" >"$WORK/heaptrack.out" 2>&1
HT=$(ls "$WORK"/churn.heaptrack.* 2>/dev/null | head -n 1)
[ -n "$HT" ] || { log "heaptrack wrote no trace (see $WORK/heaptrack.out)"; exit 1; }
EVENTS=$("$HH" report --json "$WORK/churn.hhtrace" 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["events"])')

# one_run NAME CMD...: wall seconds, max RSS (KiB), user and sys seconds on
# one line. The wall time is taken with date +%s%N around the run (to the
# millisecond; /usr/bin/time's %e has 10 ms steps, 3% of a 0.3 s run).
one_run() {
  name=$1
  shift
  t0=$(date +%s%N)
  /usr/bin/time -f '%e %M %U %S' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    log "$name failed (see $WORK/$name.err)"
    exit 1
  }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" '{printf "%.3f %s %s %s\n", (b - a) / 1e9, $2, $3, $4}' "$WORK/$name.time"
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

: >"$WORK/hh.runs"
: >"$WORK/ht.runs"
i=1
while [ "$i" -le "$REPS" ]; do
  log "round $i/$REPS"
  one_run report "$HH" report "$WORK/churn.hhtrace" >>"$WORK/hh.runs"
  one_run print heaptrack_print "$HT" >>"$WORK/ht.runs"
  i=$((i + 1))
done
hh_t=$(cut -d' ' -f1 "$WORK/hh.runs" | median)
ht_t=$(cut -d' ' -f1 "$WORK/ht.runs" | median)
hh_m=$(cut -d' ' -f2 "$WORK/hh.runs" | median)
ht_m=$(cut -d' ' -f2 "$WORK/ht.runs" | median)
hh_size=$(wc -c <"$WORK/churn.hhtrace")
ht_size=$(wc -c <"$HT")
hh_c=$(awk '{print $3 + $4}' "$WORK/hh.runs" | median)
ht_c=$(awk '{print $3 + $4}' "$WORK/ht.runs" | median)
ratio=$(awk -v a="$hh_t" -v b="$ht_t" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
# the median of each round's ratio (the two runs of a round are back to back,
# which cancels the shared machine's slower drifts)
round_ratio=$(paste -d' ' "$WORK/hh.runs" "$WORK/ht.runs" | awk '{printf "%.3f\n", ($5 > 0) ? $1 / $5 : 0}' | median)
round_all=$(paste -d' ' "$WORK/hh.runs" "$WORK/ht.runs" | awk '{printf "%s%.3f", (NR > 1) ? " " : "", ($5 > 0) ? $1 / $5 : 0}')

cratio=$(awk -v a="$hh_c" -v b="$ht_c" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
echo "| analyser | trace | trace size | wall time (median of $REPS) | CPU time (user+sys) | peak RSS |"
echo "|---|---|---|---|---|---|"
echo "| \`heaphook report\` | $EVENTS events ($ITERS churn steps) | $(mib $((hh_size / 1024))) MiB | $hh_t s | $hh_c s | $(mib "$hh_m") MiB |"
echo "| \`heaptrack_print\` | same program under heaptrack | $(mib $((ht_size / 1024))) MiB | $ht_t s | $ht_c s | $(mib "$ht_m") MiB |"
echo
echo "heaphook report / heaptrack_print: wall time $ratio (medians), $round_ratio (median of the rounds' ratios: $round_all), CPU time $cratio (target: at most 0.33)"
