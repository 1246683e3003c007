#!/bin/bash
# preload.thread_exit_frees: blocks freed while a thread exits (by the
# program's key destructors, in the first or the last round, and by glibc's
# __libc_thread_freeres) reach the pools under libpreloaded_tlsf with its
# per-thread cache: HEAPHOOK_STATS' "current used" after 10 threads and
# after 300 is the same, exactly (before, every thread left blocks behind in
# its dead cache). HEAPHOOK_TLSF_CACHE=0 is the control.
# usage: thread_exit_frees.sh TLSF_LIB PROGRAM
set -u
tlsf=$1 program=$2
passed=0
failed=0

# used MODE THREADS [VAR=VALUE...]: "current used" of one run, or "failed".
used() {
  local mode=$1 threads=$2
  shift 2
  local err
  err=$(env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_LOG -u INITIAL_MEMPOOL_SIZE \
    -u ADDITIONAL_MEMPOOL_SIZE -u HEAPHOOK_TLSF_CACHE "$@" LD_PRELOAD="$tlsf" HEAPHOOK_STATS=1 \
    "$program" "$mode" "$threads" 2>&1 >/dev/null) || { echo failed; return; }
  sed -n 's/^  current used: \([0-9]*\)$/\1/p' <<<"$err"
}

for cache in 1 0; do
  for mode in key late freeres; do
    few=$(used $mode 10 HEAPHOOK_TLSF_CACHE=$cache)
    many=$(used $mode 300 HEAPHOOK_TLSF_CACHE=$cache)
    if [ -n "$few" ] && [ "$few" != failed ] && [ "$few" = "$many" ]; then
      echo "ok $mode, cache $cache: current used $few after 10 threads and after 300"
      passed=$((passed + 1))
    else
      echo "FAIL $mode, cache $cache: current used '$few' after 10 threads, '$many' after 300"
      failed=$((failed + 1))
    fi
  done
done

echo "$passed passed, $failed failed"
[ $failed = 0 ]
