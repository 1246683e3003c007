#!/bin/sh
# setup.out_of_tree: the README's walk-through ("Writing an allocator") adds
# heaphook to a project of its own with add_subdirectory and
# -DBUILD_TESTING=OFF, then tests the allocator with the conformance suite's
# CMake functions. Configured (not built: the suite and the hook layer are
# built and run by this tree's own conformance tests), the project must
# register both tests, the one linked directly under ASan and UBSan. Before,
# the functions were known only with heaphook's own tests built ("Unknown
# CMake command"), and then without the sanitizers.
# usage: out_of_tree.sh SOURCE_DIR
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/myalloc"
cp "$src/examples/simple_allocator/simple_allocator.c" "$work/myalloc/myalloc.c"
cat >"$work/myalloc/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.18)
project(myalloc C CXX)
enable_testing()
add_subdirectory("$src" heaphook)
heaphook_add_allocator(myalloc SOURCES myalloc.c)
add_library(myalloc_static STATIC myalloc.c)
target_link_libraries(myalloc_static PUBLIC hh_base)
heaphook_add_conformance_preload(NAME myalloc LIBRARY myalloc)
heaphook_add_conformance(NAME myalloc ALLOCATOR_TARGET myalloc_static TABLE hh_allocator_get)
EOT
failed=0
if ! cmake -S "$work/myalloc" -B "$work/build" -DBUILD_TESTING=OFF >"$work/log" 2>&1; then
  echo "FAIL configure: $(grep -A3 'CMake Error' "$work/log" | head -8)"
  exit 1
fi
tests=$(cd "$work/build" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort | tr '\n' ' ')
if [ "$tests" = "conformance.direct.myalloc conformance.preload.myalloc " ]; then
  echo "ok the project's tests: $tests"
else
  echo "FAIL the project's tests: want conformance.direct.myalloc conformance.preload.myalloc, got '$tests'"
  failed=1
fi
flags=$(cat "$work/build/CMakeFiles/conformance_direct_myalloc.dir/flags.make" 2>/dev/null)
case $flags in
  *-fsanitize=address,undefined*) echo "ok conformance.direct.myalloc under ASan and UBSan" ;;
  *) echo "FAIL conformance.direct.myalloc without the sanitizers: $(echo "$flags" | grep C_FLAGS)"; failed=1 ;;
esac
exit $failed
