#!/bin/sh
# preload.under_valgrind: a program under valgrind with libheaphook.so
# preloaded runs to its end. Until 2026-11-28 the hook looked up
# hh_untraced_process (the heaphook command's mark) with a dlsym that fails
# in every other process, and under valgrind that left glibc's setlocale
# lock taken: cmake --version printed its version, then hung for good at
# exit, in libp11-kit's destructor (freelocale).
# usage: under_valgrind.sh HEAPHOOK_LIB CMAKE
lib=$1 cmake=$2
. "$(dirname "$0")/checks.sh"
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind is not installed (scripts/deps.sh check installs it)"
  fail "no valgrind"
  finish
fi
timeout -s KILL 60 env -u HEAPHOOK_RECORD -u HEAPHOOK_ALLOCATOR LD_PRELOAD="$lib" \
  valgrind -q --tool=none "$cmake" --version >"$work/out" 2>"$work/err"
rc=$?
if [ $rc = 0 ] && head -n 1 "$work/out" | grep -q '^cmake version '; then
  ok "cmake --version under valgrind: status 0, $(head -n 1 "$work/out")"
else
  fail "cmake --version under valgrind: status $rc (137: hung), out: $(cat "$work/out"), err: $(cat "$work/err")"
fi
finish
