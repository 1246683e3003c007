# Sourced by the tracer's bench scripts (`. bench/paths.sh` with the
# script's arguments): the build directory given as $1, and the programs
# in it they run.
[ $# -ge 1 ] || { echo "usage: $0 <build dir>" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
HH=$BUILD/src/cli/heaphook
LIB=$BUILD/src/libheaphook.so
PROG=$BUILD/bench/hh_bench_overhead
SHIM=$BUILD/bench/libhh_bench_shim.so
SHIM_TESTS=$BUILD/bench/libhh_bench_shim_tests.so
