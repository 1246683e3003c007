#!/bin/sh
# C++ new[]/delete[] under heaphook (bench/cxx.cpp), since heaphook exports
# operator new and delete (src/hook/cxx.c): on to libstdc++'s for a
# program on glibc, served through heaphook's malloc family for one linked
# with tcmalloc (whose operators bypass malloc).
#   bench/cxx_bench.sh <build dir> [OLD_LIB]
# Interleaved rounds (CXX_ROUNDS, default 7) of: the glibc program
# untraced, under libheaphook.so with no recorder (and under OLD_LIB, a
# libheaphook.so of another build, when given), in full and sampled (512K)
# tracing; the tcmalloc program (built where libtcmalloc_minimal.so.4 is
# installed) untraced, and under libheaphook.so with no recorder, traced
# in full and sampled (and under OLD_LIB with no recorder and sampled). Prints a Markdown table of the loop's median time (ms)
# and its ratio to the same program untraced.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 <build dir> [OLD_LIB]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
OLD=${2:-}
HH=$BUILD/src/libheaphook.so
PROG=$BUILD/bench/hh_bench_cxx
TCM=$BUILD/bench/hh_bench_cxx_tcmalloc
ROUNDS=${CXX_ROUNDS:-7}
STEPS=${CXX_STEPS:-10000000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# one NAME PROGRAM [VAR=VALUE...]: the loop's time appended to $WORK/NAME
one() {
  name=$1 prog=$2
  shift 2
  rm -f "$WORK"/t.*
  env "$@" HEAPHOOK_OUTPUT="$WORK/t.%p" "$prog" "$STEPS" >>"$WORK/$name"
}

for r in $(seq "$ROUNDS"); do
  one glibc "$PROG"
  one glibc_hh "$PROG" LD_PRELOAD="$HH"
  [ -z "$OLD" ] || one glibc_old "$PROG" LD_PRELOAD="$OLD"
  one glibc_full "$PROG" LD_PRELOAD="$HH" HEAPHOOK_RECORD=trace
  one glibc_sampled "$PROG" LD_PRELOAD="$HH" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K
  if [ -x "$TCM" ]; then
    one tcm "$TCM"
    one tcm_hh "$TCM" LD_PRELOAD="$HH"
    [ -z "$OLD" ] || one tcm_old "$TCM" LD_PRELOAD="$OLD"
    [ -z "$OLD" ] || one tcm_old_sampled "$TCM" LD_PRELOAD="$OLD" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K
    one tcm_full "$TCM" LD_PRELOAD="$HH" HEAPHOOK_RECORD=trace
    one tcm_sampled "$TCM" LD_PRELOAD="$HH" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=512K
  fi
done

median() { sort -n "$WORK/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
row() { # row NAME BASE LABEL
  [ -s "$WORK/$1" ] || return 0
  m=$(median "$1") b=$(median "$2")
  awk -v l="$3" -v m="$m" -v b="$b" 'BEGIN { printf "| %s | %.1f | %.3fx |\n", l, m, m / b }'
}
echo "### C++ new[]/delete[] (\`bench/cxx_bench.sh\`)"
echo
echo "| configuration | loop ms (median of $ROUNDS) | to the same program untraced |"
echo "|---|---|---|"
row glibc glibc "libstdc++ on glibc, untraced"
row glibc_hh glibc "+ libheaphook.so, no recorder"
row glibc_old glibc "+ OLD_LIB ($OLD), no recorder"
row glibc_full glibc "+ libheaphook.so, full trace"
row glibc_sampled glibc "+ libheaphook.so, sampled 512K"
row tcm tcm "linked with tcmalloc, untraced"
row tcm_hh tcm "+ libheaphook.so, no recorder (straight on to tcmalloc, new/delete included)"
row tcm_old tcm "+ OLD_LIB, no recorder"
row tcm_full tcm "+ libheaphook.so, full trace (heaphook serves new/delete through tcmalloc)"
row tcm_sampled tcm "+ libheaphook.so, sampled 512K"
row tcm_old_sampled tcm "+ OLD_LIB, sampled 512K"
echo
echo "$STEPS steps a run; \`bench/cxx_bench.sh $*\`, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')."
