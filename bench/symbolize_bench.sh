#!/bin/sh
# Reading a real program's trace, where symbolizing is most of the work:
#   bench/symbolize_bench.sh <build dir> [OLD heaphook CLI]
#
# gcc's cc1 (-O2 on heaphook's own src/analyze/analysis.c, preprocessed
# once; ~29,000 symbols in its table, ~16,000 call sites) is traced once by
# heaphook's tracer and once by heaptrack. Then, SYM_REPS times (5)
# interleaved: `heaphook report --top 0` (every call site named),
# `heaphook html` and `heaphook export --format pprof` on heaphook's
# trace, `heaptrack_print` on heaptrack's (the peer: it names every call
# site too), and, given an OLD CLI (another build's src/cli/heaphook), the
# same three commands with it on the same trace, whose outputs must be
# byte-identical to the new CLI's (the script stops if not). CPU time
# (user + sys) and peak RSS from /usr/bin/time, wall time from date +%s%N;
# the table gives medians. Not part of the churn's figures: the churn has
# a handful of call sites.
set -eu
. "$(dirname "$0")/paths.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
OLD=${2:-}
REPS=${SYM_REPS:-5}
WORK=$BUILD/bench/symbolize
log() { echo "symbolize bench: $*" >&2; }
command -v heaptrack >/dev/null || { log "heaptrack not found (scripts/deps.sh bench installs it)"; exit 1; }
[ -x /usr/bin/time ] || { log "/usr/bin/time not found (Debian package time)"; exit 1; }
[ -z "$OLD" ] || [ -x "$OLD" ] || { log "no program $OLD"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
CC1=$(gcc -print-prog-name=cc1)
gcc -E -I"$SRC/src" -I"$SRC/include" "$SRC/src/analyze/analysis.c" -o "$WORK/analysis.i"

log "tracing cc1 (heaphook, then heaptrack)"
env LD_PRELOAD="$LIB" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$WORK/cc1.hhtrace" \
  "$CC1" -quiet -O2 "$WORK/analysis.i" -o "$WORK/analysis.s"
heaptrack -o "$WORK/ht" "$CC1" -quiet -O2 "$WORK/analysis.i" -o "$WORK/analysis.s" >"$WORK/ht.log" 2>&1 ||
  { log "heaptrack failed (see $WORK/ht.log)"; exit 1; }
HT=$(ls "$WORK"/ht.*zst "$WORK"/ht.*gz 2>/dev/null | head -n 1)
[ -n "$HT" ] || { log "heaptrack wrote no file"; exit 1; }

# one NAME CMD...: one run, "wall cpu rss_kib" appended to $WORK/NAME.t,
# its output in $WORK/NAME.out
one() {
  name=$1
  shift
  t0=$(date +%s%N)
  /usr/bin/time -f '%U %S %M' -o "$WORK/time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    { log "$name failed (see $WORK/$name.err)"; exit 1; }
  t1=$(date +%s%N)
  read -r u s m <"$WORK/time"
  awk -v a="$t0" -v b="$t1" -v u="$u" -v s="$s" -v m="$m" \
    'BEGIN { printf "%.4f %.2f %d\n", (b - a) / 1e9, u + s, m }' >>"$WORK/$name.t"
}

# commands CLI PREFIX: the three commands of one CLI
commands() {
  one "$2report" "$1" report --top 0 "$WORK/cc1.hhtrace"
  one "$2html" "$1" html -o "$WORK/$2cc1.html" "$WORK/cc1.hhtrace"
  one "$2pprof" "$1" export --format pprof -o "$WORK/$2cc1.pb.gz" "$WORK/cc1.hhtrace"
}

i=1
while [ "$i" -le "$REPS" ]; do
  log "round $i/$REPS"
  commands "$HH" new_
  [ -z "$OLD" ] || commands "$OLD" old_
  one heaptrack_print heaptrack_print "$HT"
  i=$((i + 1))
done

if [ -n "$OLD" ]; then
  cmp -s "$WORK/new_report.out" "$WORK/old_report.out" || { log "the reports differ"; exit 1; }
  cmp -s "$WORK/new_cc1.html" "$WORK/old_cc1.html" || { log "the HTML reports differ"; exit 1; }
  cmp -s "$WORK/new_cc1.pb.gz" "$WORK/old_cc1.pb.gz" || { log "the pprof files differ"; exit 1; }
fi

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$WORK/$1.t" | median; }
echo "cc1 -O2 on src/analyze/analysis.c: $(wc -c <"$WORK/cc1.hhtrace") bytes of heaphook trace, $(wc -c <"$HT") of heaptrack's; medians of $REPS interleaved rounds"
echo
echo "| command | wall s | CPU s | peak RSS MiB | CPU / heaptrack_print's |"
echo "|---|---|---|---|---|"
hp=$(col heaptrack_print 2)
for n in new_report new_html new_pprof old_report old_html old_pprof heaptrack_print; do
  [ -e "$WORK/$n.t" ] || continue
  w=$(col "$n" 1) c=$(col "$n" 2) r=$(col "$n" 3)
  case $n in
    new_report) label='`heaphook report --top 0`' ;;
    new_html) label='`heaphook html`' ;;
    new_pprof) label='`heaphook export --format pprof`' ;;
    old_report) label='OLD `report --top 0`' ;;
    old_html) label='OLD `html`' ;;
    old_pprof) label='OLD `export --format pprof`' ;;
    *) label='`heaptrack_print`' ;;
  esac
  awk -v l="$label" -v w="$w" -v c="$c" -v r="$r" -v h="$hp" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.1f | %.2f |\n", l, w, c, r / 1024, (h > 0 ? c / h : 0) }'
done
