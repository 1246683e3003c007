#!/bin/sh
# Two builds of the tracer against each other on the churn, interleaved:
#   bench/trace_ab.sh <build dir> OLD_LIB NEW_LIB [ROUNDS]
# OLD_LIB and NEW_LIB are libheaphook.so files (e.g. a worktree of an older
# commit built with `make build`); the program is <build dir>'s
# hh_bench_overhead (TRACE_ITERS steps, default 5M). Each round runs the
# untraced program, OLD, NEW, NEW, OLD (full mode, HEAPHOOK_RECORD=trace), so
# that a drift of the machine falls on both alike; prints, per
# configuration, the median and the minimum wall time (date +%s%N around the
# run, process start included) and the median CPU time (user + sys, the
# tracer's writer thread included), in ms. docs/benchmarks.md quotes it
# where it compares builds.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 <build dir> OLD_LIB NEW_LIB [ROUNDS]" >&2; exit 2; }
PROG=$(cd "$1" && pwd)/bench/hh_bench_overhead
OLD=$2 NEW=$3 ROUNDS=${4:-9}
ITERS=${TRACE_ITERS:-5000000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# one NAME [LIB]: a run, appended to $WORK/NAME as "wall_ms cpu_ms"
one() {
  name=$1
  rm -f "$WORK"/t.*
  t0=$(date +%s%N)
  if [ $# -ge 2 ]; then
    /usr/bin/time -f "%U %S" -o "$WORK/time" env LD_PRELOAD="$2" HEAPHOOK_RECORD=trace \
      HEAPHOOK_OUTPUT="$WORK/t.%p" "$PROG" --iters "$ITERS" >/dev/null
  else
    /usr/bin/time -f "%U %S" -o "$WORK/time" "$PROG" --iters "$ITERS" >/dev/null
  fi
  t1=$(date +%s%N)
  awk -v w=$(((t1 - t0) / 1000000)) '{ printf "%d %d\n", w, ($1 + $2) * 1000 }' "$WORK/time" >>"$WORK/$name"
}

for r in $(seq "$ROUNDS"); do
  one untraced
  one old "$OLD"
  one new "$NEW"
  one new "$NEW"
  one old "$OLD"
done
for name in untraced old new; do
  sort -n -k1 "$WORK/$name" | awk -v n="$name" '{ w[NR] = $1 } END { printf "%s wall median %d ms, min %d ms; ", n, w[int((NR + 1) / 2)], w[1] }'
  sort -n -k2 "$WORK/$name" | awk '{ c[NR] = $2 } END { printf "CPU median %d ms\n", c[int((NR + 1) / 2)] }'
done
