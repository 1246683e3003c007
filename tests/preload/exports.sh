#!/bin/bash
# preload.exports: a preload library exports exactly the hooked malloc family
# (C++ operator new and delete among them, src/hook/cxx.c),
# the exec family, _exit, daemon, kill, raise and abort (recorders write what they hold before the
# program image goes), dlclose (the tracer looks at the modules at once),
# the longjmp family (a jump out of a signal handler gives the recursion
# guard back: src/hook/jump.c), the calls that close or replace descriptors and pipe2 (heaphook's
# own descriptors stay open: src/hook/fds.c) and
# heaphook's public API (a plug-in also hh_allocator_get), nothing else.
# usage: exports.sh NAME=LIBRARY[:plugin] ...
set -u
hooked="malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc
pvalloc malloc_usable_size free_sized free_aligned_sized
execve execv execvp execvpe execl execlp execle fexecve execveat _exit _Exit daemon kill raise abort dlopen dlclose dl_iterate_phdr
longjmp _longjmp siglongjmp __longjmp_chk
close close_range closefrom dup2 dup3 pipe2
_Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t _ZnwmSt11align_val_t _ZnamSt11align_val_t
_ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t
_ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t
_ZdlPvSt11align_val_t _ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t
_ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t"
api="hh_allocator_of hh_thread_counts hh_marker"
passed=0
failed=0
for arg in "$@"; do
  name=${arg%%=*}
  spec=${arg#*=}
  lib=${spec%:plugin}
  expected=$(printf '%s\n' $hooked $api | sort)
  [ "$spec" != "$lib" ] && expected=$(printf '%s\n' $expected hh_allocator_get | sort)
  if ! out=$(nm -D --defined-only "$lib" 2>&1); then
    echo "FAIL $name: nm -D --defined-only $lib failed: $out"
    failed=$((failed + 1))
    continue
  fi
  # Third column is the name (possibly name@@VERSION); version-definition
  # symbols (type A, e.g. a version node) are not functions and are ignored.
  actual=$(awk 'NF == 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' <<<"$out" | sort)
  if [ "$actual" = "$expected" ]; then
    echo "ok $name ($(wc -l <<<"$actual") symbols)"
    passed=$((passed + 1))
  else
    echo "FAIL $name: exported symbols of $lib differ (< expected, > actual):"
    diff <(echo "$expected") <(echo "$actual") | grep '^[<>]'
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ] && [ $passed -gt 0 ]
