#!/bin/sh
# Two configurations of the churn run at the same time, one on each of two
# CPUs, then again with the CPUs swapped:
#   bench/pair_ab.sh <build dir> ROUNDS 'ENV_A' 'ENV_B' ['ENV_B' ...]
# ENV_A and each ENV_B are environment assignments for one run, e.g.
# 'X=1' (nothing: the untraced program) or
# 'LD_PRELOAD=build/src/libheaphook.so HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K'.
# The program is <build dir>'s hh_bench_overhead (PAIR_ITERS steps, default
# 10M); the time is its loop time (wall_s). Prints, per ENV_B, the median
# and quartiles (the 25th and 75th percentile values, nearest rank) of the
# 2 x ROUNDS ratios B / A of runs made side by side. PAIR_CPUS (default
# "0 1"): the two CPUs, which should be otherwise idle.
#
# Why side by side: on a shared 2-vCPU machine the neighbours' load moves a
# run's time by several percent from one second to the next, so runs made
# one after the other (bench/sample_ab.sh) need many rounds and still
# differ by 1-2 points between two sets of rounds of the same builds. Two
# runs at the same time see the same neighbours: an A/A pair (the same
# configuration on both sides) gave quartiles of 0.996-1.004, 0.997-1.010
# and 0.958-1.019 in three runs (docs/benchmarks.md): mostly tighter than
# runs one after the other, not always.
#
# What the ratios are not: each run shares the memory system (and, if the
# host put the two vCPUs on one core's two hardware threads, which a guest
# cannot see, the core) with the other one; the two loops start a few
# milliseconds apart (the tracer's start-up), and the faster run ends first,
# so the slower one's last part runs alone. The ratios are those of a
# loaded machine and somewhat closer to 1 than the true ones: for comparing
# configurations with each other, not with bench/sample_bench.sh's ratios
# of runs made one after the other.
set -euf
usage() {
  echo "usage: $0 <build dir> ROUNDS 'ENV_A' 'ENV_B' ['ENV_B' ...]" >&2
  exit 2
}
[ $# -ge 4 ] || usage
PROG=$(cd "$1" && pwd)/bench/hh_bench_overhead
ROUNDS=$2
case $ROUNDS in '' | *[!0-9]* | 0) echo "pair_ab: ROUNDS must be a number > 0, not '$ROUNDS'" >&2 && exit 2 ;; esac
A=$3
shift 3
COUNT=$#
ITERS=${PAIR_ITERS:-10000000}
# shellcheck disable=SC2086 # two words
CPUS=$(set -- ${PAIR_CPUS:-0 1} && [ $# -eq 2 ] && [ "$1" != "$2" ] && echo "$1 $2") ||
  { echo "pair_ab: PAIR_CPUS must name two different CPUs, not '${PAIR_CPUS:-}'" >&2 && exit 2; }
CPU0=${CPUS% *}
CPU1=${CPUS#* }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# one CPU ENV TAG: one run on CPU (10 minutes at most); its loop time goes
# to $WORK/TAG; fails when the run does
one() {
  rm -f "$WORK/$3"
  # shellcheck disable=SC2086 # ENV is a list of assignments
  if ! env $2 HEAPHOOK_OUTPUT="$WORK/t.$3" timeout 600 taskset -c "$1" "$PROG" --iters "$ITERS" >"$WORK/out.$3"; then
    echo "pair_ab: the run with '$2' failed" >&2
    return 1
  fi
  set +f
  rm -f "$WORK"/t."$3"*
  set -f
  sed -n 's/.* wall_s=\([0-9.]*\) .*/\1/p' "$WORK/out.$3" >"$WORK/$3"
  [ -s "$WORK/$3" ] || { echo "pair_ab: the run with '$2' printed no wall_s" >&2 && return 1; }
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
      failed=0
      wait "$pa" || failed=1
      wait "$pb" || failed=1
      [ "$failed" = 0 ] || exit 1
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
