#!/bin/sh
# make demo: the bundled example program (a word counter) under heaphook.
#  1. libheaphook.so with the counts recorder: how often each malloc-family
#     function was called;
#  2. the tracer: every allocation with its stack, then the report.
set -eu
build=${1:-build}
lib="$build/src/libheaphook.so"
hh="$build/src/cli/heaphook"
demo="$build/examples/heaphook_demo"

echo "\$ HEAPHOOK_RECORD=counts LD_PRELOAD=$lib $demo"
HEAPHOOK_RECORD=counts LD_PRELOAD="$lib" "$demo"
echo
trace="$build/demo.hhtrace"
rm -f "$trace"
echo "\$ $hh run -o $trace -- $demo"
"$hh" run -o "$trace" -- "$demo"
echo
echo "\$ $hh report --top 3 $trace"
"$hh" report --top 3 "$trace"
echo
echo "Next: $hh html $trace -o $build/demo.html  (one page: timeline, flame graph, call sites)"
