#!/bin/sh
# Sampled mode's cost by sampling period, each run side by side with an
# untraced run (bench/pair_ab.sh):
#   bench/sample_pair_bench.sh <build dir>
# Rows: the untraced program against itself (the method's own spread), the
# preload library with no recorder, and the tracer in sampled mode at
# 65536T (nothing is sampled: the per-call tests alone), 8M, 2M and 512K.
# SAMPLE_PAIR_ROUNDS (default 8) rounds of 2 pairs per row.
set -eu
. "$(dirname "$0")/paths.sh"
ROUNDS=${SAMPLE_PAIR_ROUNDS:-8}
T="LD_PRELOAD=$LIB HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE"
echo "### Sampled mode side by side with the untraced churn (\`bench/sample_pair_bench.sh\`)"
echo
"$(dirname "$0")/pair_ab.sh" "$BUILD" "$ROUNDS" "UNTRACED=1" "UNTRACED=2" "LD_PRELOAD=$LIB" \
  "$T=65536T" "$T=8M" "$T=2M" "$T=512K" | sed "s|$BUILD/src/||g"
