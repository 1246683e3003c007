#!/bin/bash
# preload.real_allocators: jemalloc, tcmalloc and mimalloc (Debian's
# packages, where installed) preloaded after heaphook, as a program linked
# with one has them: real_alloc_prog.cpp's checks pass with nothing
# recorded, with counts and usage, traced in full and sampled, and the
# usage recorder's peak is a number of this program's size. A library
# that is not installed is said not to be run (preload.own_allocator
# covers the same paths with an allocator of the tests' own).
# usage: real_allocators.sh HEAPHOOK_LIB CLI PROG LIB...  (LIB: a path, or NAME-NOTFOUND)
set -u
heaphook=$1 cli=$2 prog=$3
shift 3
. "$(dirname "$0")/checks.sh"

ran=0
for lib in "$@"; do
  case $lib in
    *NOTFOUND | "")
      name=${lib%-NOTFOUND}
      name=${name#HH_REAL_}
      echo "not run: ${name,,} is not installed"
      continue
      ;;
  esac
  name=$(basename "$lib")
  ran=$((ran + 1))
  for mode in none usage full sampled; do
    d=$work/$name.$mode
    mkdir -p "$d"
    vars=() args=()
    case $mode in
      none) args=(own-new) ;;
      usage) vars=(HEAPHOOK_RECORD=counts,usage HEAPHOOK_LOG="$d/log") ;;
      full) vars=(HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$d/t.hhtrace") ;;
      sampled) vars=(HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$d/t.hhtrace" HEAPHOOK_TRACE_SAMPLE=4K) ;;
    esac
    env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG -u HEAPHOOK_OUTPUT \
      -u HEAPHOOK_TRACE_SAMPLE LD_PRELOAD="$heaphook $lib" "${vars[@]}" "$prog" "${args[@]}" >"$d/out" 2>"$d/err"
    rc=$?
    if [ $rc = 0 ] && grep -qx '[0-9]* passed, 0 failed' "$d/out" && [ ! -s "$d/err" ]; then
      ok "$name $mode: $(tail -n 1 "$d/out")"
    else
      fail "$name $mode: status $rc; out: $(head -c 2000 "$d/out"); err: $(head -c 2000 "$d/err")"
    fi
    if [ $mode = usage ]; then
      peak=$(sed -n 's/.*heap usage (pid [0-9]*): peak \([0-9]*\) bytes.*/\1/p' "$d/log")
      # (the program's largest block is 8 MiB; garbage was 2^64 less a little)
      if [ -n "$peak" ] && [ "${#peak}" -le 9 ]; then ok "$name usage: peak $peak bytes"; else fail "$name usage: $(cat "$d/log")"; fi
    fi
    if [ -f "$d/t.hhtrace" ]; then
      if "$cli" report "$d/t.hhtrace" >/dev/null 2>"$d/report-err"; then
        ok "$name $mode: trace reads"
      else
        fail "$name $mode: report: $(cat "$d/report-err")"
      fi
    fi
  done
done
[ $ran = 0 ] && echo "not run: none of jemalloc, tcmalloc, mimalloc is installed"
finish
