#!/bin/sh
# preload.deepbind: libraries opened with RTLD_DEEPBIND (deepbind_lib.c,
# lazily bound and with full RELRO) take heaphook's malloc family, as
# without the flag: blocks go both ways between them and the program under
# TLSF, a recorder's prefix (usage), sampling, counts and the tracer, which
# sees the library's allocations. Before, glibc's realloc or free got
# heaphook's blocks and aborted, and counts missed the library's 2000
# mallocs. A library with an allocator of its own keeps it. The libraries
# are found through the program's RUNPATH (and by $ORIGIN in the name),
# with and without the flag, which the dlopen wrapper must not change;
# the library opens another with the flag through its own RUNPATH and its
# dlopen reference, rebound to heaphook's, and that one is bound too.
# A plug-in allocator without owns() is never handed glibc's blocks: the
# constructor's, which the library frees itself, would be; such a library
# is bound only when a prefix tells glibc's blocks. A pointer in read-only
# data (a text relocation) is left as it is.
# Usage: deepbind.sh LIBHEAPHOOK LIBPRELOADED_TLSF HEAPHOOK_CLI PROGRAM LIBSIMPLE_ALLOCATOR
lib=$1 tlsf=$2 cli=$3 prog=$4 simple=$5
. "$(dirname "$0")/checks.sh"
rounds="1000 rounds: blocks both ways"
expect() { # WHAT WANT COMMAND...
  what=$1 want=$2
  shift 2
  got=$("$@" 2>&1)
  if [ "$got" = "$want" ]; then ok "$what"; else fail "$what: got '$got', expected '$want'"; fi
}
for name in libhh_deep_lazy.so libhh_deep_now.so; do
  expect "$name without heaphook" "$rounds
the library's blocks: (no heaphook)
its own library's blocks: (no heaphook)" "$prog" "$name" deep
  expect "$name, libpreloaded_tlsf.so" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$tlsf" "$prog" "$name" deep
  expect "$name, HEAPHOOK_ALLOCATOR=tlsf with usage" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$lib" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_RECORD=usage \
    HEAPHOOK_LOG=/dev/null "$prog" "$name" deep
  expect "$name, usage" "$rounds
the library's blocks: libc
its own library's blocks: libc" env LD_PRELOAD="$lib" HEAPHOOK_RECORD=usage HEAPHOOK_LOG=/dev/null "$prog" "$name" deep
  expect "$name, sampled trace" "$rounds
the library's blocks: libc
its own library's blocks: libc" env LD_PRELOAD="$lib" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K \
    HEAPHOOK_OUTPUT="$work/sampled.%p.hhtrace" HEAPHOOK_LOG=/dev/null "$prog" "$name" deep
  # 4 mallocs a round: 2 of the program's, 2 of the library's
  expect "$name, counts" "$rounds
the library's blocks: libc
its own library's blocks: libc
counted: malloc 4000" env LD_PRELOAD="$lib" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null "$prog" "$name" deep
  # The tracer: 1000 allocations at each of the 6 call sites in the loop
  # (deepbind_prog.c: 3 of them the library's malloc and realloc, its own
  # frames folded as an allocator's)
  trace=$work/$name.hhtrace
  expect "$name, traced" "$rounds
the library's blocks: libc
its own library's blocks: libc" sh -c '"$0" run -o "$1" -- "$2" "$3" deep 2>/dev/null' "$cli" "$trace" "$prog" "$name"
  sites=$("$cli" report --top 0 --frames 1 "$trace" | sed -n '/^call sites by number of allocations/,/^$/p' |
    grep -A1 '^  #[0-9]* 1000 allocations' | grep -c '^ *main (deepbind_prog.c:[0-9]*)$')
  if [ "$sites" = 6 ]; then
    ok "$name: the trace has the 6 call sites of 1000 allocations"
  else
    fail "$name: $sites call sites of 1000 allocations in main in the trace, expected 6"
  fi
done
# Found as the program finds it, with and without the flag
expect "without RTLD_DEEPBIND, found through RUNPATH" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$tlsf" "$prog" libhh_deep_lazy.so plain
expect "\$ORIGIN in the name, the program's directory" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$tlsf" "$prog" '$ORIGIN/deepbind/libhh_deep_now.so' deep
# A pointer to malloc in read-only data (a text relocation): left as it
# is, where writing it killed the program (SIGSEGV)
expect "a library with a text relocation" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$tlsf" "$prog" libhh_deep_textrel.so deep
# Opened by a library with no _fini to return through: heaphook calls
# glibc's dlopen itself (a path: the search is then not the caller's)
expect "opened by a library with no _fini" "$rounds
the library's blocks: tlsf
its own library's blocks: tlsf" env LD_PRELOAD="$tlsf" "$prog" "$(dirname "$prog")/deepbind/libhh_deep_now.so" deep \
  libhh_deep_nocrt.so
# The library frees its own blocks, its constructor's (glibc's) among them
expect "the library's own blocks, TLSF" "1000 rounds: the library's blocks freed by the library
counted: malloc 1000" env LD_PRELOAD="$tlsf" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null "$prog" libhh_deep_lazy.so keep
expect "the library's own blocks, a plug-in without owns(): not bound" "1000 rounds: the library's blocks freed by the library
counted: malloc 0" env LD_PRELOAD="$simple" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null "$prog" libhh_deep_lazy.so keep
expect "a plug-in without owns() under a prefix (usage): bound" "$rounds
the library's blocks: simple
its own library's blocks: simple" env LD_PRELOAD="$simple" HEAPHOOK_RECORD=usage HEAPHOOK_LOG=/dev/null \
  "$prog" libhh_deep_now.so deep
# A library that brings its own malloc and opens it with RTLD_DEEPBIND
for env in "LD_PRELOAD=$tlsf" "LD_PRELOAD=$lib HEAPHOOK_RECORD=counts"; do
  expect "a bundled allocator is kept ($env)" "bundled allocator: its own" \
    env $env HEAPHOOK_LOG=/dev/null "$prog" libhh_deep_bundled.so deep
done
# ... and when a library's constructor opens it (inside the outer dlopen,
# whose rebinding took its lazy PLT slot for malloc to heaphook's)
for env in "LD_PRELOAD=$tlsf" "LD_PRELOAD=$lib HEAPHOOK_RECORD=counts"; do
  expect "a bundled allocator opened in a constructor is kept ($env)" \
    "bundled allocator, opened in a constructor: its own" \
    env $env HEAPHOOK_LOG=/dev/null "$prog" libhh_deep_outer.so nested
done
finish
