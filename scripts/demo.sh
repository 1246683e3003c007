#!/bin/sh
# make demo: the bundled example program under libheaphook.so with the counts
# recorder, which prints how often each malloc-family function was called.
set -eu
build=${1:-build}
lib="$build/src/libheaphook.so"
echo "\$ HEAPHOOK_RECORD=counts LD_PRELOAD=$lib $build/examples/heaphook_demo"
HEAPHOOK_RECORD=counts LD_PRELOAD="$lib" "$build/examples/heaphook_demo"
