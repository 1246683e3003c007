#!/bin/sh
# Runs the reader's fuzzer briefly: fuzz.sh FUZZER MAKE_SEEDS WORKDIR SECONDS
set -eu
fuzzer=$1 make_seeds=$2 work=$3 seconds=$4
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds"
"$make_seeds" "$work/seeds"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 corpus seeds
