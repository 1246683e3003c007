#!/bin/sh
# The tracer's cost per distinct deep stack (its table of stacks, stacks.c):
#   bench/deep_stacks_bench.sh <build dir> [LIB...]
# Runs <build dir>'s hh_trace_deep_stacks N 60 (N allocations, each under a
# stack of its own, ~62 frames: ~42 trie nodes per stack) untraced and
# traced in full mode by each LIB (default: the build's libheaphook.so;
# e.g. an older commit's build against this one), for N in DEEP_NS (default
# "200000 800000"), DEEP_REPS times interleaved (default 3); prints, per N
# and configuration, the median wall time (/usr/bin/time %e) and the median
# peak RSS (%M). 800,000 stacks need ~0.64 GB (2.3 GB before the trie's
# nodes went into an array with a compact index).
set -eu
. "$(dirname "$0")/paths.sh"
shift
[ $# -ge 1 ] || set -- "$LIB"
PROG=$BUILD/tests/trace/hh_trace_deep_stacks
NS=${DEEP_NS:-200000 800000}
REPS=${DEEP_REPS:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# one NAME N [LIB]: a run, "wall_s rss_kb" appended to $WORK/NAME.N
one() {
  name=$1 n=$2
  rm -f "$WORK"/t.*
  if [ $# -ge 3 ]; then
    /usr/bin/time -f "%e %M" -o "$WORK/time" env LD_PRELOAD="$3" HEAPHOOK_RECORD=trace \
      HEAPHOOK_OUTPUT="$WORK/t.%p" "$PROG" "$n" 60 >/dev/null
  else
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$PROG" "$n" 60 >/dev/null
  fi
  cat "$WORK/time" >>"$WORK/$name.$n"
}

for n in $NS; do
  for r in $(seq "$REPS"); do
    one untraced "$n"
    i=0
    for lib in "$@"; do
      i=$((i + 1))
      one "lib$i" "$n" "$lib"
    done
  done
  i=0
  for name in untraced "$@"; do
    f=$WORK/untraced.$n
    if [ "$name" != untraced ]; then
      i=$((i + 1))
      f=$WORK/lib$i.$n
    fi
    w=$(sort -n -k1 "$f" | awk '{ w[NR] = $1 } END { print w[int((NR + 1) / 2)] }')
    m=$(sort -n -k2 "$f" | awk '{ m[NR] = $2 } END { printf "%.0f", m[int((NR + 1) / 2)] / 1024 }')
    echo "N=$n $name: wall median $w s, peak RSS median $m MB"
  done
done
