#!/bin/sh
# The heaphook command on large traces: wall time, CPU time and peak RSS of
# each command that reads a trace, and the size of what it writes:
#   bench/scale_bench.sh <build dir> [N DIGITS THREADS LEAK_PER_MILLE WINDOW]
# Traces <build dir>'s hh_bench_scale with those arguments (default
# 2000000 5 4 10 1000: 4M events, ~100,000 call stacks; see bench/scale.c)
# under `heaphook run`, then runs report, report --json, dump, html, plot,
# flame (collapsed and SVG), export (massif, pprof, speedscope) and diff
# (the trace against itself) once each. Needs /usr/bin/time. The trace and
# the outputs go to a temporary directory ($TMPDIR), removed at the end:
# 100M events make a ~200 MB trace, and dump ~8 GB of text.
set -eu
. "$(dirname "$0")/paths.sh"
shift
[ $# -eq 5 ] || set -- 2000000 5 4 10 1000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
T=$WORK/scale.hhtrace
/usr/bin/time -f "%e %M" -o "$WORK/time" "$HH" run -o "$T" -- "$BUILD/bench/hh_bench_scale" "$@" 2>"$WORK/run"
read -r wall rss <"$WORK/time"
echo "hh_bench_scale $*: traced in $wall s, peak RSS $rss KB; trace $(stat -c %s "$T") bytes"
grep -E "allocations|leaked" "$WORK/run" || true
printf '| command | wall s | CPU s | peak RSS MB | output bytes |\n|---|---|---|---|---|\n'
# one NAME OUTPUT COMMAND...: a row of the table (OUTPUT "-": standard output)
one() {
  name=$1 out=$2
  shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >"$WORK/stdout" 2>/dev/null || true
  read -r wall user sys rss <"$WORK/time"
  [ "$out" = - ] && out=$WORK/stdout
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$wall" "$(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')" \
    "$((rss / 1024))" "$(stat -c %s "$out")"
  rm -f "$WORK/stdout" "$out"
}
one report - "$HH" report "$T"
one "report --json" - "$HH" report --json "$T"
one dump - "$HH" dump "$T"
one html "$WORK/o.html" "$HH" html -o "$WORK/o.html" "$T"
one "plot (SVG)" "$WORK/o.svg" "$HH" plot -o "$WORK/o.svg" "$T"
one flame - "$HH" flame "$T"
one "flame (SVG)" "$WORK/f.svg" "$HH" flame -o "$WORK/f.svg" "$T"
one "export massif" "$WORK/o.massif" "$HH" export --format massif -o "$WORK/o.massif" "$T"
one "export pprof" "$WORK/o.pb.gz" "$HH" export --format pprof -o "$WORK/o.pb.gz" "$T"
one "export speedscope" "$WORK/o.json" "$HH" export --format speedscope -o "$WORK/o.json" "$T"
one "diff (itself)" - "$HH" diff "$T" "$T"
