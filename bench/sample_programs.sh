#!/bin/sh
# Sampled mode on real programs, next to the churn's figures: the wall time
# of each program untraced, under the preload library with no recorder,
# and traced at each period, interleaved,
# SAMPLE_REPS rounds (default 11); the medians of each round's ratios.
#   bench/sample_programs.sh <build dir>
#   cc1     gcc's compiler proper, -O2, on heaphook's own src/analyze/analysis.c
#           (preprocessed once)
#   python  /usr/bin/python3 building a dict of 300,000 lists keyed by strings
#           (not a PATH lookup: a pyenv shim is a shell script that runs
#           a dozen processes, each traced)
#   sqlite  sqlite3 inserting 200,000 rows into an indexed in-memory table
# Timed with date +%s%N around each run (process start included).
set -eu
. "$(dirname "$0")/paths.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
REPS=${SAMPLE_REPS:-11}
PERIODS=${SAMPLE_PERIODS:-512K 2M}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CC1=$(gcc -print-prog-name=cc1)
gcc -E -I"$SRC/src" -I"$SRC/include" "$SRC/src/analyze/analysis.c" -o "$WORK/analysis.i"
cat >"$WORK/rows.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
CREATE INDEX ta ON t(b);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO t SELECT i, hex(randomblob(16)) FROM n;
SELECT count(*) FROM t;
SQL

# one PROGRAM [ENV...]: runs it once, prints its wall seconds
one() {
  prog=$1
  shift
  rm -f "$WORK/t"
  t0=$(date +%s%N)
  case $prog in
    cc1) env "$@" "$CC1" -quiet -O2 "$WORK/analysis.i" -o "$WORK/analysis.s" ;;
    python) env "$@" /usr/bin/python3 -c 'd = {str(i): [i] * 3 for i in range(300000)}' ;;
    sqlite) env "$@" /usr/bin/sqlite3 :memory: <"$WORK/rows.sql" >/dev/null ;;
  esac
  t1=$(date +%s%N)
  echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
}

programs="cc1 python sqlite"
i=1
while [ "$i" -le "$REPS" ]; do
  echo "sample programs: round $i/$REPS" >&2
  for prog in $programs; do
    base=$(one "$prog")
    echo "$base" >>"$WORK/$prog.untraced"
    t=$(one "$prog" LD_PRELOAD="$LIB")
    awk -v a="$t" -v b="$base" 'BEGIN { printf "%.4f\n", a / b }' >>"$WORK/$prog.preload"
    for p in $PERIODS; do
      t=$(one "$prog" LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/t" HEAPHOOK_TRACE_SAMPLE="$p")
      awk -v a="$t" -v b="$base" 'BEGIN { printf "%.4f\n", a / b }' >>"$WORK/$prog.$p"
    done
  done
  i=$((i + 1))
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "### Sampled mode on real programs (\`bench/sample_programs.sh\`)"
echo
printf '| program | untraced s | preload, no recorder |'
for p in $PERIODS; do printf ' sampled %s |' "$p"; done
echo
printf '|---|---|---|'
for p in $PERIODS; do printf -- '---|'; done
echo
for prog in $programs; do
  printf '| %s | %s | %sx |' "$prog" "$(median "$WORK/$prog.untraced")" "$(median "$WORK/$prog.preload")"
  for p in $PERIODS; do printf ' %sx |' "$(median "$WORK/$prog.$p")"; done
  echo
done
echo
echo "Untraced: the median wall time; sampled: the median of the $REPS rounds' ratios to the same round's"
echo "untraced run (process start included)."
