#!/bin/sh
# Two configurations of the churn run at the same time, one on each of two
# CPUs, then again with the CPUs swapped:
#   bench/pair_ab.sh <build dir> ROUNDS 'ENV_A' 'ENV_B' ['ENV_B' ...]
# ENV_A and each ENV_B are environment assignments for one run, e.g.
# 'X=1' (nothing: the untraced program) or
# 'LD_PRELOAD=build/src/libheaphook.so HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K'.
# The program is <build dir>'s hh_bench_overhead (PAIR_ITERS steps, default
# 10M); the time is its loop time (wall_s). Prints, per ENV_B, the median and
# quartiles of the 2 x ROUNDS ratios B / A of runs made side by side.
#
# Why side by side: on a shared 2-vCPU machine the neighbours' load moves a
# run's time by several percent from one second to the next, so runs made
# one after the other (bench/sample_ab.sh) need many rounds and still
# differ by 1-2 points between two sets of rounds of the same builds. Two
# runs at the same time see the same neighbours; an A/A pair (the same
# configuration on both sides) gives ratios of 0.996-1.004 (docs/benchmarks.md).
# Each run then shares the memory system with the other one: the ratios
# are those of a loaded machine, for comparing configurations, and the
# CPUs named by PAIR_CPUS (default "0 1") must be otherwise idle.
set -eu
[ $# -ge 4 ] || { echo "usage: $0 <build dir> ROUNDS 'ENV_A' 'ENV_B' ['ENV_B' ...]" >&2; exit 2; }
PROG=$(cd "$1" && pwd)/bench/hh_bench_overhead
ROUNDS=$2
A=$3
shift 3
ITERS=${PAIR_ITERS:-10000000}
COUNT=$#
CPU0=$(echo "${PAIR_CPUS:-0 1}" | cut -d' ' -f1)
CPU1=$(echo "${PAIR_CPUS:-0 1}" | cut -d' ' -f2)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# one CPU ENV TAG: one run on CPU; its loop time goes to $WORK/TAG
one() {
  # shellcheck disable=SC2086 # ENV is a list of assignments
  env $2 HEAPHOOK_OUTPUT="$WORK/t.$3" taskset -c "$1" "$PROG" --iters "$ITERS" |
    sed -n 's/.* wall_s=\([0-9.]*\) .*/\1/p' >"$WORK/$3"
  rm -f "$WORK"/t."$3"*
  [ -s "$WORK/$3" ] || { echo "pair_ab: the run with '$2' failed" >&2; exit 1; }
}

n=0
for B in "$@"; do
  n=$((n + 1))
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    echo "pair_ab: configuration $n of $COUNT, round $r/$ROUNDS" >&2
    for swap in 0 1; do
      ca=$CPU0 cb=$CPU1
      [ "$swap" = 0 ] || ca=$CPU1 cb=$CPU0
      one "$ca" "$A" a &
      pa=$!
      one "$cb" "$B" b &
      pb=$!
      wait "$pa" && wait "$pb" || exit 1
      echo "$(cat "$WORK/b") $(cat "$WORK/a")" >>"$WORK/runs.$n"
    done
    r=$((r + 1))
  done
done

echo "| B | median B/A | quartiles |"
echo "|---|---|---|"
n=0
for B in "$@"; do
  n=$((n + 1))
  awk '{ printf "%.4f\n", $1 / $2 }' "$WORK/runs.$n" | sort -n |
    awk -v b="$B" '{ v[NR] = $1 } END { m = (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2; printf "| %s | %.4f | %.4f-%.4f |\n", b, m, v[int(NR / 4) + 1], v[int((3 * NR + 3) / 4)] }'
done
echo
echo "A: $A; $ITERS churn steps per run; 2 x $ROUNDS pairs per row (CPUs swapped every other pair)."
