#!/bin/sh
# Two builds' sampled mode against each other on the churn, interleaved:
#   bench/sample_ab.sh <build dir> OLD_LIB NEW_LIB [ROUNDS]
# OLD_LIB and NEW_LIB are libheaphook.so files (e.g. a worktree of an older
# commit built with `make build`); the program is <build dir>'s
# hh_bench_overhead (TRACE_ITERS steps, default 5M). Each round runs the
# untraced program, NEW with no recorder, then OLD and NEW in sampled mode at
# each period of SAMPLE_PERIODS (default 512K 2M 8M 1G). Prints, per
# configuration, the median of the rounds' ratios of the loop time
# (hh_bench_overhead's wall_s: start-up left out) to the same round's
# untraced run. docs/benchmarks.md quotes it where it compares samplers.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 <build dir> OLD_LIB NEW_LIB [ROUNDS]" >&2; exit 2; }
PROG=$(cd "$1" && pwd)/bench/hh_bench_overhead
OLD=$2 NEW=$3 ROUNDS=${4:-25}
ITERS=${TRACE_ITERS:-5000000}
PERIODS=${SAMPLE_PERIODS:-512K 2M 8M 1G}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# loop [ENV...]: the loop time of one run
loop() {
  rm -f "$WORK/t"
  env "$@" "$PROG" --iters "$ITERS" | sed -n 's/.* wall_s=\([0-9.]*\) .*/\1/p'
}

i=1
while [ "$i" -le "$ROUNDS" ]; do
  echo "sample a/b: round $i/$ROUNDS" >&2
  base=$(loop)
  echo "preload $(loop LD_PRELOAD="$NEW") $base" >>"$WORK/runs"
  for p in $PERIODS; do
    for side in old new; do
      lib=$OLD
      [ $side = new ] && lib=$NEW
      t=$(loop LD_PRELOAD="$lib" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t" HEAPHOOK_TRACE_SAMPLE="$p")
      echo "$side.$p $t $base" >>"$WORK/runs"
    done
  done
  i=$((i + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v n="$1" '$1 == n { printf "%.4f\n", $2 / $3 }' "$WORK/runs" | median; }
echo "| period | old | new |"
echo "|---|---|---|"
for p in $PERIODS; do echo "| $p | $(ratio "old.$p")x | $(ratio "new.$p")x |"; done
echo
echo "preload alone (NEW, no recorder): $(ratio preload)x; medians of $ROUNDS rounds' ratios to the untraced run."
