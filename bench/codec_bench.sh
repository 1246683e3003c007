#!/bin/sh
# zstd or lz4 for the trace: traces the churn program (hh_bench_overhead,
# CODEC_ITERS steps) once in full mode, then hh_bench_codec compresses the
# same chunk contents (each v2 stream on its own, as the tracer does) with
# zstd at several levels and with lz4 and lz4hc, one thread, best of 3:
# bytes per event and ns per event to compress and to decompress; then the
# same table for the traces of two real programs (git log, a perl hash
# build), whose streams repeat more than the churn's.
#   bench/codec_bench.sh <build dir>     (also part of `make bench`)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 <build dir>" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
HH=$BUILD/src/cli/heaphook
PROG=$BUILD/bench/hh_bench_overhead
CODEC=$BUILD/bench/hh_bench_codec
ITERS=${CODEC_ITERS:-5000000}
WORK=${CODEC_WORK:-$BUILD/bench/codec}
log() { echo "codec bench: $*" >&2; }
cmake --build "$BUILD" --target heaphook_cli heaphook hh_bench_overhead >/dev/null
[ -x "$CODEC" ] || { log "hh_bench_codec was not built: liblz4-dev missing (scripts/deps.sh bench)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
"$HH" run -o "$WORK/churn.hhtrace" -- "$PROG" --iters "$ITERS" >/dev/null 2>"$WORK/run.err"
EVENTS=$("$HH" report --json "$WORK/churn.hhtrace" 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["events"])')
echo "### zstd or lz4 for the trace (\`bench/codec_bench.sh\`)"
echo
echo "The chunks of one full-mode trace of $ITERS churn steps ($EVENTS events), compressed again block by block:"
"$CODEC" "$WORK/churn.hhtrace" "$EVENTS"

# The same comparison on real programs' traces, whose streams repeat more
# than the churn's random ones: what helps the churn must not cost them.
SRC=$(cd "$(dirname "$0")/.." && pwd)
real() { # NAME LABEL COMMAND...
  name=$1
  label=$2
  shift 2
  "$HH" run -o "$WORK/$name.hhtrace" -- "$@" >/dev/null 2>"$WORK/$name.err" || { log "$name failed"; return 0; }
  ev=$("$HH" report --json "$WORK/$name.hhtrace" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["events"])')
  echo
  echo "A real program: $label ($ev events):"
  echo
  "$CODEC" "$WORK/$name.hhtrace" "$ev" | sed -n '/^| codec/,/^$/p'
}
if command -v git >/dev/null && [ -d "$SRC/.git" ]; then
  real git "\`git log --stat -n 300\` on this repository" git -C "$SRC" log --stat -n 300
fi
real perl "perl building a hash of 300,000 keys (\`bench/codec_bench.sh\`)" perl -e 'my %h; $h{"k$_"} = [$_, "v" x ($_ % 50)] for 1 .. 300000; my $n = 0;
  $n += length($h{$_}[1]) for keys %h; print "$n\n"'
