#!/bin/bash
# preload.readme_walkthrough: what the README tells a user to do, step by step:
# copy the example allocator as myalloc.c, build it with heaphook as a CMake
# subproject (heaphook_add_allocator), preload it into sort (alone, and as a
# plug-in of libheaphook.so), and ask hh_allocator_of who owns a block.
# usage: readme_walkthrough.sh REPO_ROOT HEAPHOOK_LIB CMAKE C_COMPILER
set -u
repo=$1 heaphook=$2 cmake=$3 cc=$4
. "$(dirname "$0")/checks.sh"
unset HEAPHOOK_ALLOCATOR HEAPHOOK_RECORD HEAPHOOK_STATS HEAPHOOK_LOG INITIAL_MEMPOOL_SIZE ADDITIONAL_MEMPOOL_SIZE
export LC_ALL=C

cd "$work" || exit 1
mkdir myalloc && cd myalloc || exit 1
cp "$repo/examples/simple_allocator/simple_allocator.c" myalloc.c
cat >CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(myalloc C CXX)
add_subdirectory("$repo" heaphook)
heaphook_add_allocator(myalloc SOURCES myalloc.c)
CMAKE

start=$SECONDS
if "$cmake" -S . -B build -DBUILD_TESTING=OFF >configure.log 2>&1; then
  ok "configure with heaphook as a subproject ($((SECONDS - start)) s)"
else
  fail "configure with heaphook as a subproject (add_subdirectory($repo heaphook)) failed:"
  grep -v '^--' configure.log | head -30 | sed 's/^/  | /'
  finish
fi
start=$SECONDS
if "$cmake" --build build --target myalloc -j 2 >build.log 2>&1; then
  ok "cmake --build build --target myalloc ($((SECONDS - start)) s)"
else
  fail "cmake --build build --target myalloc failed:"
  grep -E 'error|Error' build.log | head -20 | sed 's/^/  | /'
  finish
fi
cd build || exit 1
if [ -f libmyalloc.so ]; then
  ok "libmyalloc.so built"
else
  fail "no libmyalloc.so in the build directory: $(ls)"
  finish
fi
if nm -D --defined-only libmyalloc.so | grep -q ' T hh_allocator_get$'; then
  ok "libmyalloc.so exports hh_allocator_get"
else
  fail "libmyalloc.so does not export hh_allocator_get"
fi

# sort, as is and under the allocator: byte-identical output.
seq 1 200000 | awk '{ printf "%08x %d %s\n", ($1 * 2654435761) % 4294967296, $1, ($1 % 3 ? "x" : "yy") }' >input.txt
sort -k3,3 -k1,1 input.txt >plain.out
plain_rc=$?
compare() { # NAME VAR=VALUE...
  local name=$1
  shift
  env "$@" sort -k3,3 -k1,1 input.txt >hooked.out 2>hooked.err
  local rc=$?
  if [ $rc = $plain_rc ] && [ $rc = 0 ] && cmp -s plain.out hooked.out && [ ! -s hooked.err ]; then
    ok "$name: sort output identical ($(wc -l <plain.out) lines)"
  else
    fail "$name: sort status $rc (plain $plain_rc), stderr '$(head -c 300 hooked.err)', output $(cmp plain.out hooked.out 2>&1)"
  fi
}
compare "LD_PRELOAD=./libmyalloc.so" LD_PRELOAD=./libmyalloc.so
compare "LD_PRELOAD=libheaphook.so HEAPHOOK_ALLOCATOR=\$PWD/libmyalloc.so" \
  LD_PRELOAD="$heaphook" HEAPHOOK_ALLOCATOR="$PWD/libmyalloc.so"

# Who owns a block: a tiny program using the public API.
cat >owner.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <heaphook/heaphook.h>
int main(void) {
  size_t sizes[] = {16, 5000, 3 << 20};
  for (int i = 0; i < 3; i++) {
    void *p = malloc(sizes[i]);
    printf("%s\n", hh_allocator_of ? hh_allocator_of(p) : "no heaphook");
    free(p);
  }
  return 0;
}
C
if ! "$cc" -O2 -I"$repo/include" -o owner owner.c 2>cc.log; then
  fail "compiling owner.c with -I$repo/include: $(head -5 cc.log)"
  finish
fi
expect_owner() { # NAME WANT VAR=VALUE...
  local name=$1 want=$2
  shift 2
  local got
  got=$(env "$@" ./owner 2>&1 | tr '\n' ' ')
  if [ "$got" = "$want" ]; then
    ok "$name: hh_allocator_of says: $got"
  else
    fail "$name: hh_allocator_of says '$got', expected '$want'"
  fi
}
expect_owner "without preload" "no heaphook no heaphook no heaphook "
expect_owner "LD_PRELOAD=./libmyalloc.so" "simple simple simple " LD_PRELOAD=./libmyalloc.so
expect_owner "HEAPHOOK_ALLOCATOR=\$PWD/libmyalloc.so" "simple simple simple " \
  LD_PRELOAD="$heaphook" HEAPHOOK_ALLOCATOR="$PWD/libmyalloc.so"
finish
