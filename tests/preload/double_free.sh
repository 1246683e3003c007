#!/bin/sh
# A double free (and a realloc of a freed block) of a TLSF block is said as
# such and aborts, with and without heaphook's recorders. Under a recorder
# that puts a header in front of every block (usage), the freed block has
# lost its header, and glibc's free took it for its own: "munmap_chunk():
# invalid pointer".
# Usage: double_free.sh LIBHEAPHOOK LIBPRELOADED_TLSF PROGRAM
lib=$1 tlsf=$2 prog=$3
. "$(dirname "$0")/checks.sh"
expect_abort() { # WHAT MODE WANT VAR=VALUE...
  local what=$1 mode=$2 want=$3
  shift 3
  env "$@" "$prog" $mode >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc = 134 ] && [ ! -s "$work/out" ] && grep -q "$want" "$work/err"; then
    ok "$what, $mode: $(head -1 "$work/err" | sed 's/0x[0-9a-f]*/0x.../')"
  else
    fail "$what, $mode: status $rc (want 134), stdout '$(cat "$work/out")', stderr '$(head -c 300 "$work/err")'"
  fi
}
core='^heaphook: tlsf: double free (or realloc of a freed block) of 0x'
hook='^heaphook: MODE of 0x[0-9a-f]*: a block of the tlsf allocator that is not in use (a double free, or a pointer into a block)$'
for mode in free realloc; do
  expect_abort "libpreloaded_tlsf.so" $mode "$core" LD_PRELOAD="$tlsf"
  expect_abort "HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=usage" $mode "$(echo "$hook" | sed "s/MODE/$mode/")" \
    LD_PRELOAD="$lib" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=usage HEAPHOOK_LOG=/dev/null
  expect_abort "HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=counts,usage" $mode "$(echo "$hook" | sed "s/MODE/$mode/")" \
    LD_PRELOAD="$lib" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=counts,usage HEAPHOOK_LOG=/dev/null
  expect_abort "HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=trace" $mode "$core" \
    LD_PRELOAD="$lib" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/t.%p.hh"
done
finish
