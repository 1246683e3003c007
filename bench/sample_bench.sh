#!/bin/sh
# Sampled mode's cost by sampling period, on the churn of the tracer bench:
#   bench/sample_bench.sh <build dir>
#
# Each round runs, interleaved: the untraced program, the preload library
# with no recorder (glibc straight through: what interposing alone costs),
# and the tracer in sampled mode at each period of SAMPLE_PERIODS (default
# 512K 2M 8M 32M 1G; at 1G next to nothing is sampled, so that row is the
# cost of the sampler's inline tests). The time is hh_bench_overhead's own
# loop time (wall_s: the TRACE_ITERS churn steps, process start and exit
# left out), the median of SAMPLE_REPS rounds (default 9); the ratio is to
# the untraced median; samples are the sampled allocations in the last
# round's trace.
set -eu
. "$(dirname "$0")/paths.sh"
ITERS=${TRACE_ITERS:-5000000}
REPS=${SAMPLE_REPS:-9}
PERIODS=${SAMPLE_PERIODS:-512K 2M 8M 32M 1G}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run NAME [ENV...]: one run; appends the loop's wall_s to $WORK/NAME
run() {
  name=$1
  shift
  rm -f "$WORK/t"
  line=$(env "$@" "$PROG" --iters "$ITERS") || { echo "sample bench: $name failed" >&2; exit 1; }
  echo "$line" | sed -n 's/.* wall_s=\([0-9.]*\) .*/\1/p' >>"$WORK/$name"
}

i=1
while [ "$i" -le "$REPS" ]; do
  echo "sample bench: round $i/$REPS" >&2
  run untraced
  run preload LD_PRELOAD="$LIB"
  for p in $PERIODS; do
    run "s$p" LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t" HEAPHOOK_TRACE_SAMPLE="$p"
  done
  i=$((i + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(median "$WORK/untraced")
# The samples of one more run per period (the timed runs' traces are gone).
samples() {
  rm -f "$WORK/t"
  env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t" HEAPHOOK_TRACE_SAMPLE="$1" "$PROG" \
    --iters "$ITERS" >/dev/null
  "$HH" dump "$WORK/t" | grep -c '^alloc ' || true
  rm -f "$WORK/t"
}
echo "### Sampled mode by period (\`bench/sample_bench.sh\`)"
echo
echo "| configuration | loop s (median of $REPS) | ratio to untraced | samples |"
echo "|---|---|---|---|"
echo "| untraced | $base | 1.00x | - |"
m=$(median "$WORK/preload")
echo "| preload, no recorder | $m | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3fx", a / b }') | - |"
for p in $PERIODS; do
  m=$(median "$WORK/s$p")
  echo "| sampled, $p | $m | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3fx", a / b }') | $(samples "$p") |"
done
echo
echo "$ITERS churn steps per run; one round: untraced, preload, then the periods in the order above."
