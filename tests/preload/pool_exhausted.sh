#!/bin/bash
# preload.pool_exhausted: the first request a TLSF pool cannot serve (a
# fixed pool, ADDITIONAL_MEMPOOL_SIZE=0, or a growth that failed) is said
# in one line on stderr, once, with the request, the pool, the bytes in use
# and the peak in pools; a program that does not run out says nothing.
# Before, such a program got NULL, or died of std::bad_alloc, unsaid.
# usage: pool_exhausted.sh HEAPHOOK_LIB TLSF_LIB PROBE NEW_UNTIL_BAD_ALLOC
set -u
heaphook=$1 tlsf=$2 probe=$3 newer=$4
. "$(dirname "$0")/checks.sh"
. "$(dirname "$0")/run_clean.sh"

# run PROGRAM LIBRARY VAR=VALUE... -- ARGS...: run_clean.sh's run_clean.
run() { run_clean "$@"; }

# quiet NAME: the last run exited 0 with nothing on stderr.
quiet() {
  if [ "$(cat "$work/rc")" = 0 ] && [ ! -s "$work/err" ]; then
    ok "$1: status 0, nothing said"
  else
    fail "$1: status $(cat "$work/rc"), stderr: $(head -c 600 "$work/err")"
  fi
}

advice='set INITIAL_MEMPOOL_SIZE above the `peak in pools` that HEAPHOOK_STATS=1 reports on a run with a pool large enough'
fixed="ADDITIONAL_MEMPOOL_SIZE=0 never grows it: $advice (said once)"

# A 1 MiB pool that never grows, filled with 4096-byte blocks (4104 usable
# each) until malloc gives NULL, then 100 more failures: the program goes
# on and exits normally; one line for the 101 failures. Nothing allocates
# before main in the probe, so the line's bytes in use are the probe's own
# and the peak in pools is those blocks with their 8-byte headers and the
# pool's 48 bytes.
for setup in "libpreloaded_tlsf|$tlsf|" "libheaphook HEAPHOOK_ALLOCATOR=tlsf|$heaphook|HEAPHOOK_ALLOCATOR=tlsf"; do
  IFS='|' read -r label lib extra <<<"$setup"
  run "$probe" "$lib" $extra INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=0 -- exhaust 4096
  read -r n usable <<<"$(sed -n 's/^\([0-9]*\) blocks of \([0-9]*\) usable bytes in all, then NULL with ENOMEM; 100 more NULL with ENOMEM$/\1 \2/p' "$work/out")"
  if [ "$(cat "$work/rc")" != 0 ] || [ -z "${n:-}" ] || [ "$n" = 0 ]; then
    fail "$label, fixed 1M pool: status $(cat "$work/rc"), stdout '$(cat "$work/out")'"
    continue
  fi
  want="heaphook: tlsf: pool exhausted: a request of 4096 bytes failed (ENOMEM) with 1048576 pool bytes in 1 pool, $usable in use, peak in pools $((usable + 8 * n + 48)); $fixed"
  if [ "$(cat "$work/err")" = "$want" ] && [ "$usable" = $((n * 4104)) ]; then
    ok "$label, fixed 1M pool: $n blocks, then NULL with ENOMEM 101 times; the program goes on; one line"
  else
    fail "$label, fixed 1M pool ($n blocks, $usable bytes): expected stderr
  $want
got
$(sed 's/^/  /' "$work/err")"
  fi
done

# A realloc the fixed pool cannot serve: the same line, with its size; the
# block is kept. (malloc(1000) takes a block of 1024 + 8 usable bytes: the
# per-thread cache's class, docs/tlsf.md.)
run "$probe" "$tlsf" INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=0 -- exhaust-realloc 2097152
want="heaphook: tlsf: pool exhausted: a request of 2097152 bytes failed (ENOMEM) with 1048576 pool bytes in 1 pool, 1032 in use, peak in pools 1088; $fixed"
if [ "$(cat "$work/rc") $(cat "$work/out")" = "0 realloc NULL with ENOMEM; block kept" ] &&
  [ "$(cat "$work/err")" = "$want" ]; then
  ok "realloc past a fixed pool: NULL with ENOMEM, the block kept, one line"
else
  fail "realloc past a fixed pool: status $(cat "$work/rc"), stdout '$(cat "$work/out")', expected stderr
  $want
got
$(sed 's/^/  /' "$work/err")"
fi

# A C++ program that dies of std::bad_alloc: the line, then libstdc++'s
# terminate message, status 134 (SIGABRT). The bytes in use include
# libstdc++'s own blocks: any number.
run "$newer" "$tlsf" INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=0 -- 4096
re="^heaphook: tlsf: pool exhausted: a request of 4096 bytes failed \(ENOMEM\) with 1048576 pool bytes in 1 pool, [0-9]+ in use, peak in pools [0-9]+; ADDITIONAL_MEMPOOL_SIZE=0 never grows it: set INITIAL_MEMPOOL_SIZE above the \`peak in pools\` that HEAPHOOK_STATS=1 reports on a run with a pool large enough \(said once\)
terminate called after throwing an instance of 'std::bad_alloc'
  what\(\):  std::bad_alloc$"
if [ "$(cat "$work/rc")" = 134 ] && [[ "$(cat "$work/err")" =~ $re ]]; then
  ok "C++ new until std::bad_alloc on a fixed pool: the line before terminate's message, status 134"
else
  fail "C++ new until std::bad_alloc: status $(cat "$work/rc") (expected 134), stderr:
$(sed 's/^/  /' "$work/err")"
fi

# A growth that fails: an address-space limit with room for 4 MiB, and
# 8 MiB additions. The probe read /proc with stdio before: any bytes in use.
run "$probe" "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=8M -- aslimit 4194304 3000000
re="^heaphook: tlsf: pool exhausted: a request of 3000000 bytes failed \(ENOMEM\) with 65536 pool bytes in 1 pool, [0-9]+ in use, peak in pools [0-9]+; adding a pool of 8388608 bytes failed \(Cannot allocate memory\): set INITIAL_MEMPOOL_SIZE above the \`peak in pools\` that HEAPHOOK_STATS=1 reports on a run with a pool large enough, or a smaller ADDITIONAL_MEMPOOL_SIZE \(said once\)$"
if [ "$(cat "$work/rc") $(cat "$work/out")" = "0 malloc failed" ] && [[ "$(cat "$work/err")" =~ $re ]]; then
  ok "growth failed (ulimit -v): one line naming the addition and the reason"
else
  fail "growth failed (ulimit -v): status $(cat "$work/rc"), stdout '$(cat "$work/out")', stderr:
$(sed 's/^/  /' "$work/err")"
fi

# Programs that do not run out say nothing: a fixed pool that holds them,
# a pool that grows, and a request no machine can hold (it fails under any
# allocator: the conformance suite's 2^56 bytes), fixed pool or not.
run "$probe" "$tlsf" INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=0 -- blocks4k 524288
quiet "fixed 1M pool holding 512 KiB"
run "$probe" "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=64K -- blocks4k 1048576
quiet "64K pools growing to 1 MiB"
for add in 0 1M; do
  run "$probe" "$tlsf" INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=$add -- aslimit 1099511627776 72057594037927936
  if [ "$(cat "$work/rc") $(cat "$work/out")" = "0 malloc failed" ] && [ ! -s "$work/err" ]; then
    ok "malloc(2^56), ADDITIONAL_MEMPOOL_SIZE=$add: NULL, nothing said"
  else
    fail "malloc(2^56), ADDITIONAL_MEMPOOL_SIZE=$add: status $(cat "$work/rc"), stdout '$(cat "$work/out")', stderr: $(cat "$work/err")"
  fi
done

finish
