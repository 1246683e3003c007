#!/bin/bash
# preload.counts_match_trace: HEAPHOOK_RECORD=counts,trace on a C++
# program whose allocations all succeed: the allocation calls counted by
# function are the trace's events (frees are not compared: a free(NULL)
# is a call and no event), the first call of the process included (libstdc++'s constructor allocates
# its emergency pool before heaphook's constructor runs, and that call
# starts the hook: counts missed it, malloc one short of the trace).
# With one writer thread and with four (the writer and three helpers): the
# tracer's own threads are made under the hook's recursion guard, so the
# callocs of their DTVs are no program's calls (counts had one calloc more
# than the trace when the writer started at a thread's exit, in about 2
# runs of 5, and three more with the helpers, in every run).
# usage: counts_match_trace.sh HEAPHOOK_LIB CLI PROG ARGS...
set -u
heaphook=$1 cli=$2
shift 2
. "$(dirname "$0")/checks.sh"

for writers in 1 4; do
  rm -f "$work/t.hhtrace" "$work/log"
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS -u HEAPHOOK_TRACE_SAMPLE LD_PRELOAD="$heaphook" \
    HEAPHOOK_RECORD=counts,trace HEAPHOOK_TRACE_WRITERS=$writers HEAPHOOK_OUTPUT="$work/t.hhtrace" \
    HEAPHOOK_LOG="$work/log" "$@" >/dev/null 2>&1
  "$cli" dump --no-symbols "$work/t.hhtrace" >"$work/dump" 2>"$work/dump-err" || fail "dump: $(cat "$work/dump-err")"
  for fn in malloc calloc aligned_alloc posix_memalign memalign; do
    counted=$(sed -n "s/^  $fn  *\([0-9]*\)$/\1/p" "$work/log")
    traced=$(grep -c "^\(alloc\|realloc\) .* fn=$fn " "$work/dump")
    if [ -n "$counted" ] && [ "$counted" = "$traced" ]; then
      ok "$fn ($writers writers): counted $counted, traced $traced"
    else
      fail "$fn ($writers writers): counted '$counted', traced $traced"
    fi
  done
done
finish
