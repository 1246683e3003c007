#!/bin/sh
# A thread with a 16 KiB stack under heaphook: the depth it reaches alone
# (small_stack.c) less a few levels of ~128 bytes must still run, with no
# recorder (glibc, TLSF) and, less more, under the tracer. glibc
# carves static TLS out of each thread's stack; heaphook's held TLSF's
# per-thread bins (5.6 KiB) there, whatever the allocator, and such a
# thread overflowed at a third of its own depth (the tracer's at none).
# The tracer's unwinds kept libunwind's context and cursor and the frames
# found (3.5 KiB) on the stack: 38 levels less than alone, 30 now
# (libunwind's own frames, unw_backtrace's 3 KiB among them, stay).
# Usage: small_stack.sh LIBHEAPHOOK LIBPRELOADED_TLSF PROGRAM LIBRARY_TO_DLOPEN
lib=$1 tlsf=$2 prog=$3 dl_lib=$4
. "$(dirname "$0")/checks.sh"
# Every function bound at the start: a call bound lazily at the bottom of
# the dive runs glibc's resolver there, whose frame (the CPU's extended
# state, 2.5 KiB on AVX-512) is deeper than most of what is measured, and
# its size is the CPU's.
export LD_BIND_NOW=1
# The deepest even depth the program reaches alone (at least 24: below,
# 16 KiB stacks leave too little to tell anything), with the program's
# further arguments ($extra).
extra=
deepest_alone() {
  alone=0
  local d=24
  while [ $d -le 200 ] && "$prog" $d $extra >/dev/null 2>&1; do
    alone=$d
    d=$((d + 2))
  done
  if [ $alone = 0 ]; then
    fail "the program alone ($extra) does not reach depth 24 on a 16 KiB stack: nothing to compare"
    finish
  fi
  echo "alone${extra:+, $extra}: depth $alone"
}
expect_depth() { # WHAT DEPTH VAR=VALUE...
  local what=$1 d=$2
  shift 2
  if out=$(env "$@" "$prog" $d $extra 2>&1) && [ "$out" = "depth $d ok" ]; then
    ok "$what: depth $d (alone $alone)"
  else
    fail "$what: depth $d (alone $alone) failed: status $?, '$(echo "$out" | head -c 200)'"
  fi
}
deepest_alone
expect_depth "libheaphook.so, no recorder" $((alone - 8)) LD_PRELOAD="$lib"
expect_depth "libpreloaded_tlsf.so" $((alone - 8)) LD_PRELOAD="$tlsf"
expect_depth "libheaphook.so, HEAPHOOK_ALLOCATOR=tlsf" $((alone - 8)) LD_PRELOAD="$lib" HEAPHOOK_ALLOCATOR=tlsf
expect_depth "libheaphook.so, counts and usage" $((alone - 8)) LD_PRELOAD="$lib" HEAPHOOK_RECORD=counts,usage \
  HEAPHOOK_LOG=/dev/null
expect_depth "the tracer" $((alone - 34)) LD_PRELOAD="$lib" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/t.%p.hh"
# A library dlopen()ed first (from a dl_iterate_phdr callback, where the
# tracer takes no stack): the tracer's first allocation after it, at the
# bottom, scans the modules there, and the scan's callback kept a 4 KiB
# buffer on the stack: 36 levels where 65 ran alone (29 with the unwinds'
# 3.5 KiB too), 53 now.
extra=$dl_lib
deepest_alone
expect_depth "the tracer, the first allocation after a dlopen" $((alone - 16)) LD_PRELOAD="$lib" \
  HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/t.%p.hh"
finish
