#!/bin/sh
# Two builds' sampled mode against each other on the churn, interleaved:
#   bench/sample_ab.sh <build dir> OLD_LIB NEW_LIB [ROUNDS]
# OLD_LIB and NEW_LIB are libheaphook.so files (e.g. a worktree of an older
# commit built with `make build`); the program is <build dir>'s
# hh_bench_overhead (TRACE_ITERS steps, default 5M). Each round runs the
# untraced program, NEW with no recorder, then OLD and NEW in sampled mode at
# each period of SAMPLE_PERIODS (default 512K 2M 8M 1G), OLD first in odd
# rounds and NEW first in even ones. Prints, per configuration, the median
# of the rounds' ratios of the loop time (hh_bench_overhead's wall_s:
# start-up left out) to the same round's untraced run, and their quartiles;
# then per period the median (quartiles) of the rounds' NEW / OLD, which
# leaves the untraced run's own noise out. docs/benchmarks.md quotes it
# where it compares samplers.
# METRIC=cpu_s takes the loop's processor time (user and system) instead
# of its wall time: on a machine shared with other work, the wall time also
# counts the waits for a processor.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 <build dir> OLD_LIB NEW_LIB [ROUNDS]" >&2; exit 2; }
PROG=$(cd "$1" && pwd)/bench/hh_bench_overhead
OLD=$2 NEW=$3 ROUNDS=${4:-25}
ITERS=${TRACE_ITERS:-5000000}
METRIC=${METRIC:-wall_s}
PERIODS=${SAMPLE_PERIODS:-512K 2M 8M 1G}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# loop [ENV...]: the loop time of one run
loop() {
  rm -f "$WORK/t"
  v=$(env "$@" "$PROG" --iters "$ITERS" | sed -n "s/.* $METRIC=\\([0-9.]*\\).*/\\1/p")
  [ -n "$v" ] || { echo "$0: $PROG printed no $METRIC" >&2; exit 1; }
  echo "$v"
}

i=1
while [ "$i" -le "$ROUNDS" ]; do
  echo "sample a/b: round $i/$ROUNDS" >&2
  base=$(loop)
  echo "preload $(loop LD_PRELOAD="$NEW") $base" >>"$WORK/runs"
  for p in $PERIODS; do
    sides="old new"
    [ $((i % 2)) = 0 ] && sides="new old"
    for side in $sides; do
      lib=$OLD
      [ $side = new ] && lib=$NEW
      t=$(loop LD_PRELOAD="$lib" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t" HEAPHOOK_TRACE_SAMPLE="$p")
      echo "$side.$p $t $base $i" >>"$WORK/runs"
    done
  done
  i=$((i + 1))
done

# the median, then the quartiles in parentheses
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%sx (%s-%s)", v[int((NR + 1) / 2)], v[int((NR + 3) / 4)], v[int((3 * NR + 3) / 4)] }'; }
ratio() { awk -v n="$1" '$1 == n { printf "%.4f\n", $2 / $3 }' "$WORK/runs" | median; }
# new / old: the median of the rounds' ratios of NEW's time to OLD's, each
# round's two runs made one after the other (the untraced run left out,
# and with it its own noise)
paired() {
  awk -v o="old.$1" -v n="new.$1" '$1 == o { t[$4] = $2 } $1 == n { u[$4] = $2 }
    END { for (r in u) if (t[r] > 0) printf "%.4f\n", u[r] / t[r] }' "$WORK/runs" | median
}
echo "| period | old | new | new / old |"
echo "|---|---|---|---|"
for p in $PERIODS; do echo "| $p | $(ratio "old.$p") | $(ratio "new.$p") | $(paired "$p") |"; done
echo
echo "preload alone (NEW, no recorder): $(ratio preload); medians (quartiles) of $ROUNDS rounds' ratios of $METRIC to the untraced run."
