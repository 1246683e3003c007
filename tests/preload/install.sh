#!/bin/bash
# preload.install: tier4 heaphook's set-up, where the libraries are installed
# into <prefix>/lib (colcon build: install/heaphook/lib, which its setup
# script adds to LD_LIBRARY_PATH) and preloaded by their bare names, as its
# README and ROS 2 launch files do; the heaphook command installed into
# <prefix>/bin finds its tracer library there.
# usage: install.sh BUILD_DIR CMAKE PROBE
set -u
build=$1 cmake=$2 probe=$3
. "$(dirname "$0")/checks.sh"
unset HEAPHOOK_ALLOCATOR HEAPHOOK_RECORD HEAPHOOK_STATS HEAPHOOK_LOG HEAPHOOK_LIBRARY INITIAL_MEMPOOL_SIZE ADDITIONAL_MEMPOOL_SIZE

if "$cmake" --install "$build" --prefix "$work/install" >"$work/install.log" 2>&1; then
  ok "cmake --install $build --prefix PREFIX"
else
  fail "cmake --install failed: $(tail -5 "$work/install.log")"
fi
for f in lib/libheaphook.so lib/libpreloaded_tlsf.so lib/libpreloaded_heaptrack.so lib/liboriginal_allocator.so \
  bin/heaphook include/heaphook/heaphook.h include/heaphook/allocator.h include/heaphook/heaphook.hpp; do
  if [ -f "$work/install/$f" ]; then ok "PREFIX/$f installed"; else fail "PREFIX/$f not installed"; fi
done

lib=$work/install/lib
out=$(LD_LIBRARY_PATH=$lib LD_PRELOAD=libpreloaded_tlsf.so INITIAL_MEMPOOL_SIZE=1000000 ADDITIONAL_MEMPOOL_SIZE=1000000 \
  "$probe" owner 100 2>&1)
[ "$out" = tlsf ] && ok "LD_PRELOAD=libpreloaded_tlsf.so (bare name): blocks from tlsf" ||
  fail "LD_PRELOAD=libpreloaded_tlsf.so (bare name): expected tlsf, got: $out"
out=$(LD_LIBRARY_PATH=$lib LD_PRELOAD=liboriginal_allocator.so "$probe" owner 100 2>&1)
[ "$out" = libc ] && ok "LD_PRELOAD=liboriginal_allocator.so (bare name): blocks from libc" ||
  fail "LD_PRELOAD=liboriginal_allocator.so (bare name): expected libc, got: $out"
mkdir "$work/cwd"
pid=$(cd "$work/cwd" && LD_LIBRARY_PATH=$lib LD_PRELOAD=libpreloaded_heaptrack.so "$probe" blocks4k 65536 |
  sed -n 's/^pid \([0-9]*\)$/\1/p')
files=$(ls "$work/cwd")
[ -n "$pid" ] && [ "$files" = "heaplog.$pid.hhtrace" ] &&
  ok "LD_PRELOAD=libpreloaded_heaptrack.so (bare name): heaplog.$pid.hhtrace in the working directory" ||
  fail "LD_PRELOAD=libpreloaded_heaptrack.so (bare name): expected heaplog.$pid.hhtrace, found: ${files:-nothing}"
if "$work/install/bin/heaphook" run -o "$work/run.hhtrace" -- "$probe" blocks4k 65536 >"$work/run.out" 2>&1 &&
  [ -s "$work/run.hhtrace" ]; then
  ok "PREFIX/bin/heaphook run finds PREFIX/lib/libheaphook.so"
else
  fail "PREFIX/bin/heaphook run: $(cat "$work/run.out")"
fi

finish
