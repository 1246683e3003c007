#!/bin/sh
# heaphook benchmarks (`make bench`): bench/run.sh <build dir>
#
# 1. throughput / hook overhead: hh_bench_overhead (churn, no per-call timer)
#    under no preload, libheaphook.so passthrough, HEAPHOOK_RECORD=counts,
#    =usage, =counts,usage, the peers and TLSF; runs interleaved round-robin.
# 2. latency: hh_bench_latency (rdtscp around every malloc and free) under
#    glibc, jemalloc, tcmalloc, mimalloc, TLSF (libpreloaded_tlsf.so, with and
#    without HEAPHOOK_TLSF_MLOCK=1) and TLSF through libheaphook.so.
#    Before each latency round, hh_bench_noise measures for 1 s how often the
#    machine itself stalls a spinning thread (the floor under p99.99).
# 3. thread scaling: hh_bench_latency --threads T for T = 1, 2, 4, ... up to
#    nproc (at most 16).
# Tables (Markdown) go to stdout and <build>/bench/results.md; raw lines and
# the programs' stderr to <build>/bench/raw/. Progress goes to stderr.
#
# Knobs (environment): BENCH_OV_ITERS (10000000), BENCH_OV_REPS (7),
# BENCH_LAT_ITERS (5000000), BENCH_LAT_WARMUP (1000000), BENCH_LAT_REPS (5),
# BENCH_SCALE_ITERS (2000000 per thread), BENCH_SCALE_REPS (3),
# BENCH_THREADS ("1 2 4 ..." up to nproc), BENCH_PEER_DIR
# (/usr/lib/x86_64-linux-gnu), BENCH_NO_BUILD (build nothing, see below),
# BENCH_SKIP ("overhead latency scaling trace threads sites deep sample cxx
# codec report symbolize": any of these words skips that part);
# bench/sample_pair_bench.sh's SAMPLE_PAIR_ROUNDS (8), with bench/pair_ab.sh's
# PAIR_ITERS (10000000) and PAIR_CPUS ("0 1").
set -eu

if [ $# -lt 1 ]; then
  echo "usage: $0 <build dir>" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=$BUILD/bench
RAW=$OUTDIR/raw
OV=$OUTDIR/hh_bench_overhead
LAT=$OUTDIR/hh_bench_latency
NOISE=$OUTDIR/hh_bench_noise
HH=$BUILD/src/libheaphook.so
TLSF=$BUILD/src/libpreloaded_tlsf.so
PEERS=${BENCH_PEER_DIR:-/usr/lib/x86_64-linux-gnu}
JE=$PEERS/libjemalloc.so.2
TC=$PEERS/libtcmalloc_minimal.so.4
MI=$PEERS/libmimalloc.so.2

OV_ITERS=${BENCH_OV_ITERS:-10000000}
OV_REPS=${BENCH_OV_REPS:-7}
LAT_ITERS=${BENCH_LAT_ITERS:-5000000}
LAT_WARMUP=${BENCH_LAT_WARMUP:-1000000}
LAT_REPS=${BENCH_LAT_REPS:-5}
SC_ITERS=${BENCH_SCALE_ITERS:-2000000}
SC_REPS=${BENCH_SCALE_REPS:-3}
SKIP=${BENCH_SKIP:-}
NPROC=$(nproc 2>/dev/null || echo 1)
if [ -z "${BENCH_THREADS:-}" ]; then
  BENCH_THREADS=""
  for t in 1 2 4 8 16; do [ "$t" -le "$NPROC" ] && BENCH_THREADS="$BENCH_THREADS $t"; done
fi

log() { echo "bench: $*" >&2; }

# The bench programs: a build directory configured before bench/ existed
# does not know them yet.
TARGETS="hh_bench_overhead hh_bench_latency hh_bench_noise hh_bench_sites heaphook preloaded_tlsf"
# BENCH_NO_BUILD=1: run what is there (a copy of the programs and libraries
# laid out as in a build directory, on a machine without the build tools).
# shellcheck disable=SC2086
if [ -n "${BENCH_NO_BUILD:-}" ]; then
  :
elif ! cmake --build "$BUILD" --target $TARGETS >/dev/null 2>&1; then
  log "configuring $BUILD (it does not know the bench targets yet)"
  cmake -S "$SRC" -B "$BUILD" >/dev/null
  cmake --build "$BUILD" --target $TARGETS >/dev/null
fi
for f in "$OV" "$LAT" "$NOISE" "$HH" "$TLSF"; do
  [ -e "$f" ] || { echo "bench: missing $f" >&2; exit 1; }
done

rm -rf "$RAW"
mkdir -p "$RAW"

# Which allocator configurations exist here (peers may be missing).
have() {
  case $1 in
    jemalloc) [ -e "$JE" ] ;;
    tcmalloc) [ -e "$TC" ] ;;
    mimalloc) [ -e "$MI" ] ;;
    *) true ;;
  esac
}

# TLSF pool: the working set (8192 blocks, ~100 MB mean, ~180 MB peak per
# thread) must fit without growth in the measured phase.
pool_for() { echo "$((256 * $1 + 256))M"; }

# run_cfg CONFIG THREADS PROGRAM ARGS...: runs PROGRAM under CONFIG, prints its
# stdout, appends its stderr to $RAW/CONFIG.stderr.
run_cfg() {
  cfg=$1 threads=$2
  shift 2
  pool=$(pool_for "$threads")
  err=$RAW/$cfg.stderr
  case $cfg in
    glibc) env -u LD_PRELOAD "$@" 2>>"$err" ;;
    hook-passthrough) env LD_PRELOAD="$HH" "$@" 2>>"$err" ;;
    hook-counts) env LD_PRELOAD="$HH" HEAPHOOK_RECORD=counts "$@" 2>>"$err" ;;
    hook-usage) env LD_PRELOAD="$HH" HEAPHOOK_RECORD=usage "$@" 2>>"$err" ;;
    hook-counts+usage) env LD_PRELOAD="$HH" HEAPHOOK_RECORD=counts,usage "$@" 2>>"$err" ;;
    jemalloc) env LD_PRELOAD="$JE" "$@" 2>>"$err" ;;
    tcmalloc) env LD_PRELOAD="$TC" "$@" 2>>"$err" ;;
    mimalloc) env LD_PRELOAD="$MI" "$@" 2>>"$err" ;;
    tlsf) env LD_PRELOAD="$TLSF" INITIAL_MEMPOOL_SIZE="$pool" "$@" 2>>"$err" ;;
    tlsf-mlock) env LD_PRELOAD="$TLSF" INITIAL_MEMPOOL_SIZE="$pool" HEAPHOOK_TLSF_MLOCK=1 "$@" 2>>"$err" ;;
    hook-tlsf) env LD_PRELOAD="$HH" HEAPHOOK_ALLOCATOR=tlsf INITIAL_MEMPOOL_SIZE="$pool" "$@" 2>>"$err" ;;
    *) echo "bench: unknown config $cfg" >&2; return 1 ;;
  esac
}

# The shared object malloc must come from under each configuration.
expect_from() {
  case $1 in
    glibc) echo libc.so.6 ;;
    hook-*) echo libheaphook.so ;;
    jemalloc) basename "$JE" ;;
    tcmalloc) basename "$TC" ;;
    mimalloc) basename "$MI" ;;
    tlsf | tlsf-mlock) basename "$TLSF" ;;
  esac
}

# one PART CONFIG REP THREADS PROGRAM ARGS...: one run, checked and recorded.
one() {
  part=$1 cfg=$2 rep=$3 threads=$4
  shift 4
  if ! line=$(run_cfg "$cfg" "$threads" "$@"); then
    echo "bench: $part $cfg rep $rep failed (see $RAW/$cfg.stderr)" >&2
    exit 1
  fi
  main=$(printf '%s\n' "$line" | grep -v '^class ' | tail -n 1)
  from=$(printf '%s\n' "$main" | sed -n 's/.*malloc_from=\([^ ]*\).*/\1/p')
  want=$(expect_from "$cfg")
  if [ "$from" != "$want" ]; then
    echo "bench: $cfg: malloc came from '$from', expected '$want'; preload not in effect" >&2
    exit 1
  fi
  printf '%s\n' "$line" | sed "s/^/part=$part cfg=$cfg rep=$rep /" >>"$RAW/$part.txt"
}

START=$(date +%s)

# ---- 1. throughput and hook overhead ----------------------------------------
OV_CFGS="glibc hook-passthrough hook-counts hook-usage hook-counts+usage jemalloc tcmalloc mimalloc tlsf hook-tlsf"
case " $SKIP " in *" overhead "*) ;; *)
  for rep in $(seq 1 "$OV_REPS"); do
    log "throughput/overhead round $rep/$OV_REPS ($(($(date +%s) - START)) s)"
    for cfg in $OV_CFGS; do
      have "$cfg" || continue
      one overhead "$cfg" "$rep" 1 "$OV" --iters "$OV_ITERS"
    done
  done
;; esac

# ---- 2. latency -------------------------------------------------------------
LAT_CFGS="glibc jemalloc tcmalloc mimalloc tlsf tlsf-mlock hook-tlsf"
case " $SKIP " in *" latency "*) ;; *)
  for rep in $(seq 1 "$LAT_REPS"); do
    log "latency round $rep/$LAT_REPS ($(($(date +%s) - START)) s)"
    "$NOISE" --seconds 1 | sed "s/^/part=noise cfg=none rep=$rep /" >>"$RAW/noise.txt"
    for cfg in $LAT_CFGS; do
      have "$cfg" || continue
      one latency "$cfg" "$rep" 1 "$LAT" --label "$cfg" --iters "$LAT_ITERS" --warmup "$LAT_WARMUP" --classes
    done
  done
;; esac

# ---- 3. thread scaling ------------------------------------------------------
SC_CFGS="glibc jemalloc tcmalloc mimalloc tlsf"
case " $SKIP " in *" scaling "*) ;; *)
  for rep in $(seq 1 "$SC_REPS"); do
    for t in $BENCH_THREADS; do
      log "scaling round $rep/$SC_REPS, $t thread(s) ($(($(date +%s) - START)) s)"
      for cfg in $SC_CFGS; do
        have "$cfg" || continue
        one scaling "$cfg" "$rep" "$t" "$LAT" --label "$cfg" --threads "$t" --iters "$SC_ITERS" --warmup "$((SC_ITERS / 4))"
      done
    done
  done
;; esac

log "done in $(($(date +%s) - START)) s; summarising"

# Did mlock work? (the TLSF glue warns once when it fails)
MLOCK_NOTE=""
if [ -s "$RAW/tlsf-mlock.stderr" ] && grep -qi mlock "$RAW/tlsf-mlock.stderr"; then
  MLOCK_NOTE=$(grep -i -m 1 mlock "$RAW/tlsf-mlock.stderr")
fi

{
  echo "# heaphook benchmark results"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: nproc $NPROC, $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), kernel $(uname -r), $(ldd --version 2>&1 | head -n 1)"
  echo "- command: \`bench/run.sh $1\` (op counts: throughput ${OV_ITERS} steps x ${OV_REPS}; latency ${LAT_ITERS} steps after ${LAT_WARMUP} warm-up x ${LAT_REPS}; scaling ${SC_ITERS} steps/thread x ${SC_REPS}; threads:${BENCH_THREADS})"
  [ -n "$MLOCK_NOTE" ] && echo "- tlsf-mlock: $MLOCK_NOTE"
  echo
  python3 "$SRC/bench/summarize.py" "$RAW"
} >"$OUTDIR/results.md"
cat "$OUTDIR/results.md"

# ---- 4a. the tracer against heaptrack (BENCH_SKIP=trace skips)
case " $SKIP " in *" trace "*) ;; *) { printf '\n'; "$SRC/bench/trace_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4a-threads. the tracer as threads are added (BENCH_SKIP=threads skips)
case " $SKIP " in *" threads "*) ;; *) { printf '\n'; "$SRC/bench/tracer_threads_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4a''. many call stacks: a synthetic program and cc1 (BENCH_SKIP=sites skips)
case " $SKIP " in *" sites "*) ;; *) { printf '\n'; "$SRC/bench/sites_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4a'''. many distinct deep stacks: the tracer's table of stacks (BENCH_SKIP=deep skips)
case " $SKIP " in *" deep "*) ;; *) { printf '\n## many distinct deep stacks\n\n'; "$SRC/bench/deep_stacks_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4a'. sampled mode by sampling period, runs one after the other and side by side (BENCH_SKIP=sample skips)
case " $SKIP " in *" sample "*) ;; *) { printf '\n'; "$SRC/bench/sample_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac
case " $SKIP " in *" sample "*) ;; *) { printf '\n'; "$SRC/bench/sample_pair_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4a''''. C++ new/delete through heaphook's operators (BENCH_SKIP=cxx skips)
case " $SKIP " in *" cxx "*) ;; *) { printf '\n'; "$SRC/bench/cxx_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4b. zstd or lz4 for the trace's chunks (BENCH_SKIP=codec skips)
case " $SKIP " in *" codec "*) ;; *) { printf '\n'; "$SRC/bench/codec_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 4. trace analysis: heaphook report against heaptrack_print (BENCH_SKIP=report skips)
case " $SKIP " in *" report "*) ;; *) { printf '\n## heaphook report vs heaptrack_print\n\n'; "$SRC/bench/report_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac

# ---- 5. reading a real program's trace, where symbolizing is most of the
# work: gcc's cc1 traced, then report --top 0, html and export --format
# pprof against heaptrack_print (BENCH_SKIP=symbolize skips; SYM_REPS)
case " $SKIP " in *" symbolize "*) ;; *) { printf "\n## symbolizing a real program's trace\n\n"; "$SRC/bench/symbolize_bench.sh" "$BUILD"; } | tee -a "$OUTDIR/results.md" ;; esac
