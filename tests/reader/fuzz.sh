#!/bin/sh
# Runs the reader's fuzzer briefly:
#   fuzz.sh FUZZER MAKE_SEEDS WORKDIR SECONDS LIB PROGRAM [ANALYSIS_FUZZER]
# Seeds: the builder's hand-made traces (format version 1) and traces of
# PROGRAM recorded by the tracer in LIB (the current version: full, sampled,
# without stacks). ANALYSIS_FUZZER (fuzz_analysis.c) then runs on the seeds
# and what the reader's fuzzer found, for 5 of the SECONDS.
set -eu
fuzzer=$1 make_seeds=$2 work=$3 seconds=$4 lib=$5 prog=$6 analysis=${7:-}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds"
"$make_seeds" "$work/seeds"
for mode in full sampled nostacks; do
  case $mode in
    full) set -- ;;
    sampled) set -- HEAPHOOK_TRACE_SAMPLE=64 ;;
    nostacks) set -- HEAPHOOK_TRACE_STACKS=0 ;;
  esac
  env LD_PRELOAD="$lib" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/seeds/tracer-$mode.hhtrace" "$@" "$prog" >/dev/null
  [ -s "$work/seeds/tracer-$mode.hhtrace" ] || { echo "FAIL: no $mode trace of $prog"; exit 1; }
done
cd "$work"
[ -z "$analysis" ] || seconds=$((seconds > 10 ? seconds - 5 : 5))
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 corpus seeds
[ -n "$analysis" ] || exit 0
mkdir corpus_analysis
exec "$analysis" -max_total_time=5 -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 corpus_analysis seeds corpus
