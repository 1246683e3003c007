#!/bin/sh
# Sampled mode's cost by sampling period, each run side by side with an
# untraced run (bench/pair_ab.sh, which says what such ratios are and are
# not):
#   bench/sample_pair_bench.sh <build dir>
# Rows: the untraced program against itself (the method's own spread), a
# forwarding-only preloaded library (bench/shim.c: the floor of LD_PRELOAD
# interposition), the same with sampled mode's two tests and no more
# (bench/shim_tests.c: the floor of this sampler's design), the preload
# library with no recorder, and the tracer in
# sampled mode at 65536T (nothing is sampled: the per-call tests alone),
# 8M, 2M and 512K.
# SAMPLE_PAIR_ROUNDS (default 8) rounds of 2 pairs per row. Needs two CPUs.
set -eu
. "$(dirname "$0")/paths.sh"
ROUNDS=${SAMPLE_PAIR_ROUNDS:-8}
if [ "$(nproc)" -lt 2 ]; then
  echo "sample_pair_bench: needs two CPUs; this machine has $(nproc): skipped" >&2
  exit 0
fi
# (a library ld.so cannot find is ignored with a warning: the row would
# be the untraced program's)
for lib in "$LIB" "$SHIM" "$SHIM_TESTS"; do
  [ -f "$lib" ] || { echo "sample_pair_bench: $lib is not built (make build)" >&2 && exit 1; }
done
T="LD_PRELOAD=$LIB HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE"
echo "### Sampled mode side by side with the untraced churn (\`bench/sample_pair_bench.sh\`)"
echo
"$(dirname "$0")/pair_ab.sh" "$BUILD" "$ROUNDS" "UNTRACED=1" "UNTRACED=2" "LD_PRELOAD=$SHIM" "LD_PRELOAD=$SHIM_TESTS" "LD_PRELOAD=$LIB" \
  "$T=65536T" "$T=8M" "$T=2M" "$T=512K" >"$BUILD/bench/pair.md"
# (the libraries' names without the build directory)
awk -v a="$BUILD/src/" -v b="$BUILD/bench/" '
  function cut(s, d, i) { while ((i = index(s, d)) > 0) s = substr(s, 1, i - 1) substr(s, i + length(d)); return s }
  { print cut(cut($0, a), b) }' \
  "$BUILD/bench/pair.md"
