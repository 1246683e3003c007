#!/bin/sh
# The tracer as threads are added: does one writer and no global lock on
# the hot path keep up when many threads allocate at once?
#   bench/tracer_threads_bench.sh <build dir>
# <build dir>'s hh_bench_threads T N (T threads, each N malloc/free pairs of
# 16-115 bytes at once; its own wall time) untraced, in full mode, in
# no-stacks mode and in sampled mode (512K), for T in TT_THREADS (default
# 1 2 4 ... up to nproc, at most 16), N = TT_N (default 1000000), TT_REPS
# rounds (default 3), interleaved. Prints per T: the median wall times,
# their ratio to the untraced median, events per second traced in full
# mode (2 x T x N in the median time) and the full trace's bytes per event
# (its size over 2 x T x N: the few hundred start-up events left out).
# Needs nothing but the build: no CLI, no peers.
set -eu
. "$(dirname "$0")/paths.sh"
PROG_T=$BUILD/bench/hh_bench_threads
[ -x "$PROG_T" ] || { echo "tracer_threads_bench: $PROG_T is not built (make build)" >&2 && exit 1; }
N=${TT_N:-1000000}
REPS=${TT_REPS:-3}
NPROC=$(nproc 2>/dev/null || echo 1)
if [ -z "${TT_THREADS:-}" ]; then
  TT_THREADS=""
  for t in 1 2 4 8 16; do [ "$t" -le "$NPROC" ] && TT_THREADS="$TT_THREADS $t"; done
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run NAME T [ENV...]: one run; appends its wall time to $WORK/NAME.T
run() {
  name=$1 t=$2
  shift 2
  rm -f "$WORK/t"
  s=$(env "$@" "$PROG_T" "$t" "$N") || { echo "tracer_threads_bench: $name with $t threads failed" >&2 && exit 1; }
  echo "$s" >>"$WORK/$name.$t"
  if [ "$name" = full ]; then stat -c %s "$WORK/t" >>"$WORK/bytes.$t"; fi
}
T="LD_PRELOAD=$LIB HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT=$WORK/t"
i=1
while [ "$i" -le "$REPS" ]; do
  for t in $TT_THREADS; do
    echo "tracer_threads_bench: round $i/$REPS, $t thread(s)" >&2
    run untraced "$t"
    # shellcheck disable=SC2086 # words
    run full "$t" $T
    # shellcheck disable=SC2086
    run nostacks "$t" $T HEAPHOOK_TRACE_STACKS=0
    # shellcheck disable=SC2086
    run sampled "$t" $T HEAPHOOK_TRACE_SAMPLE=512K
  done
  i=$((i + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo "### The tracer as threads are added (\`bench/tracer_threads_bench.sh\`)"
echo
echo "| threads | untraced s | full s | full: time vs 1 thread | full: ns per event in a thread | no-stacks s | sampled 512K s | full: M events/s, all threads | full: bytes/event |"
echo "|---|---|---|---|---|---|---|---|---|"
f1=""
for t in $TT_THREADS; do
  u=$(median "$WORK/untraced.$t") f=$(median "$WORK/full.$t")
  n=$(median "$WORK/nostacks.$t") s=$(median "$WORK/sampled.$t") b=$(median "$WORK/bytes.$t")
  [ -n "$f1" ] || f1=$f
  echo "| $t | $u | $f | $(ratio "$f" "$f1") |" \
    "$(awk -v n="$N" -v f="$f" 'BEGIN { printf "%.0f", f * 1e9 / (2 * n) }') | $n | $s |" \
    "$(awk -v t="$t" -v n="$N" -v f="$f" 'BEGIN { printf "%.1f", 2 * t * n / f / 1e6 }') |" \
    "$(awk -v t="$t" -v n="$N" -v b="$b" 'BEGIN { printf "%.3f", b / (2 * t * n) }') |"
done
echo
echo "$N malloc/free pairs of 16-115 bytes per thread, median of $REPS interleaved rounds (the untraced loop is glibc's tcache fast path, ~5 ns a pair: the ratios to it are not the churn's); machine: nproc $NPROC, $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), kernel $(uname -r)."
