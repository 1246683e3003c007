#!/bin/bash
# preload.reports_at_end: a program that ends without exit() (by _exit,
# _Exit or quick_exit, from main or from another thread) gets the same
# reports as one that returns from main: HEAPHOOK_RECORD's usage and
# counts, and HEAPHOOK_STATS's TLSF report. Once: a vfork child's _exit
# prints nothing (it runs in its parent's memory). abort prints none (a
# failing program: the trace alone is finished there).
# usage: reports_at_end.sh HEAPHOOK_LIB TLSF_LIB PROBE [PYTHON]
set -u
heaphook=$1 tlsf=$2 probe=$3 python=${4:-}
. "$(dirname "$0")/checks.sh"
. "$(dirname "$0")/run_clean.sh"

# reports LIBRARY HOW VAR=VALUE...: the probe's "end 10 HOW" under LIBRARY;
# its stderr with the pids taken out in $work/err.HOW, its status in
# $work/rc.HOW.
reports() {
  local lib=$1 how=$2
  shift 2
  run_clean "$probe" "$lib" "$@" -- end 10 "$how"
  sed 's/(pid [0-9]*)/(pid N)/' "$work/err" >"$work/err.$how"
  cp "$work/rc" "$work/rc.$how"
}

# same_as_return NAME LIBRARY VAR=VALUE...: each way of ending prints what
# returning from main prints, exactly, with status 0.
same_as_return() {
  local name=$1 lib=$2
  shift 2
  reports "$lib" return "$@"
  if [ "$(cat "$work/rc.return")" != 0 ] || [ ! -s "$work/err.return" ]; then
    fail "$name: return: status $(cat "$work/rc.return"), stderr: $(head -c 300 "$work/err.return")"
    return
  fi
  for how in exit _exit _Exit quick_exit vfork; do
    reports "$lib" "$how" "$@"
    if [ "$(cat "$work/rc.$how")" = 0 ] && cmp -s "$work/err.return" "$work/err.$how"; then
      ok "$name: $how: the report of a return from main"
    else
      fail "$name: $how: status $(cat "$work/rc.$how"), stderr:"
      sed 's/^/  | /' "$work/err.$how" | head -20
      echo "  expected:"
      sed 's/^/  | /' "$work/err.return" | head -20
    fi
  done
}

same_as_return "usage" "$heaphook" HEAPHOOK_RECORD=usage
same_as_return "usage and counts" "$heaphook" HEAPHOOK_RECORD=usage,counts
same_as_return "HEAPHOOK_STATS, tlsf" "$tlsf" HEAPHOOK_STATS=1 INITIAL_MEMPOOL_SIZE=1M
same_as_return "HEAPHOOK_STATS and usage, libheaphook tlsf" "$heaphook" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_STATS=1 \
  HEAPHOOK_RECORD=usage INITIAL_MEMPOOL_SIZE=1M

# Another thread's _exit while main waits: one report, main's 10 blocks in
# it (the thread's own start-up blocks are glibc's business).
reports "$heaphook" thread HEAPHOOK_RECORD=usage
if [ "$(cat "$work/rc.thread")" = 0 ] && [ "$(wc -l <"$work/err.thread")" = 1 ] &&
  grep -q '^heaphook: heap usage (pid N): peak 10000 bytes; at exit 5[0-9]* bytes in [0-9]* blocks\{0,1\}; 10[0-9]* bytes allocated in 1[0-9] allocations$' "$work/err.thread"; then
  ok "usage: a thread's _exit: one report"
else
  fail "usage: a thread's _exit: status $(cat "$work/rc.thread"), stderr: $(head -c 300 "$work/err.thread")"
fi

# Another thread with a cancel pending (pthread_cancel'd, deferred) ends
# the process by _exit, or by exit with nothing for stdio to write: one
# report, status 0, as without heaphook. The report's write is a
# cancellation point: the thread was cancelled there, and _exit ended no
# process (main's join returned: status 5, after the 10 s wait for a stop
# that never ended), exit hung for good with stdio's list lock held.
for how in cancelled cancelled_exit; do
  timeout -s KILL 60 env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS -u HEAPHOOK_LOG HEAPHOOK_RECORD=usage \
    LD_PRELOAD="$heaphook" "$probe" end 10 "$how" >"$work/out" 2>"$work/err"
  rc=$?
  if [ $rc = 0 ] && [ "$(wc -l <"$work/err")" = 1 ] &&
    grep -q '^heaphook: heap usage (pid [0-9]*): peak 10000 bytes; ' "$work/err"; then
    ok "usage: $how: a thread's end with a cancel pending: one report"
  else
    fail "usage: $how: status $rc, stderr: $(head -c 300 "$work/err")"
  fi
done

# A crash handler's _exit on a damaged heap (a write past a block's end
# over the free block after it, then SIGSEGV): status 0, as without
# heaphook, and HEAPHOOK_STATS's report. The report followed the damaged
# free list's link and faulted, SIGSEGV blocked in the handler: status 139.
# The report says the heap is damaged (it printed "largest free block: 0"
# and a fragmentation of 100%, as if those were the heap's).
reports "$tlsf" crash_handler HEAPHOOK_STATS=1 INITIAL_MEMPOOL_SIZE=1M
if [ "$(cat "$work/rc.crash_handler")" = 0 ] && grep -q '^tlsf allocator' "$work/err.crash_handler" &&
  grep -qx '  largest free block: unknown (the heap is damaged: a free list.s link leads outside the pools or round a cycle)' \
    "$work/err.crash_handler" &&
  grep -qx '  fragmentation: unknown (the heap is damaged)' "$work/err.crash_handler"; then
  ok "HEAPHOOK_STATS, tlsf: a crash handler's _exit on a damaged heap: status 0, the report"
else
  fail "HEAPHOOK_STATS, tlsf: crash_handler: status $(cat "$work/rc.crash_handler"), stderr: $(head -c 300 "$work/err.crash_handler")"
fi

# abort: the program fails with SIGABRT as without heaphook, and no report.
reports "$heaphook" abort HEAPHOOK_RECORD=usage,counts
if [ "$(cat "$work/rc.abort")" = 134 ] && [ ! -s "$work/err.abort" ]; then
  ok "usage and counts: abort: status 134, no report"
else
  fail "usage and counts: abort: status $(cat "$work/rc.abort"), stderr: $(head -c 300 "$work/err.abort")"
fi

# Python's os._exit (multiprocessing's workers end by it): one report.
if [ -n "$python" ]; then
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS -u HEAPHOOK_LOG HEAPHOOK_RECORD=usage LD_PRELOAD="$heaphook" \
    "$python" -c 'import os; os._exit(3)' >"$work/out" 2>"$work/err"
  rc=$?
  if [ $rc = 3 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q '^heaphook: heap usage (pid [0-9]*): peak [1-9]' "$work/err"; then
    ok "python3 os._exit(3): status 3, one report"
  else
    fail "python3 os._exit(3): status $rc, stderr: $(head -c 300 "$work/err")"
  fi
fi
finish
