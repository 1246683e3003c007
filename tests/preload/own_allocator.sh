#!/bin/bash
# preload.own_allocator: a program linked with an allocator of its own (as
# programs link jemalloc, tcmalloc or mimalloc) keeps it under heaphook:
# with no recorder, traced in full and sampled, with recorders, through
# libpreloaded_heaptrack.so; under TLSF the allocator's own blocks still go
# back to it; its operator new and delete (which it serves itself) are
# served by heaphook all the same; with two heaphook libraries preloaded,
# in both orders, the one that serves keeps the program's allocator. The
# messages for what heaphook cannot do: a malloc found ahead of it,
# another heaphook library preloaded ahead of it, an allocator without
# posix_memalign (glibc serves the program then).
# usage: own_allocator.sh HEAPHOOK_LIB HEAPTRACK_LIB HEAPHOOK_CLI PROG OWN_LIB OWN_LIB_NO_MEMALIGN
#   MALLOC_ADDRESS_PROG
set -u
heaphook=$1 heaptrack=$2 cli=$3 prog=$4 own=$5 own_no_memalign=$6 address_prog=$7
. "$(dirname "$0")/checks.sh"

# run NAME PRELOAD VAR=VALUE... -- ARGS...: the program, in $work/NAME/
# ({out,err,rc}), with a clean heaphook environment.
run() {
  local name=$1 preload=$2
  shift 2
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    -u HEAPHOOK_OUTPUT -u HEAPHOOK_TRACE_SAMPLE LD_PRELOAD="$preload" "${vars[@]}" "$prog" "$@" >out 2>err)
  echo $? >"$work/$name/rc"
}

# passes NAME: the program ran its checks and all passed.
passes() {
  local d=$work/$1
  if [ "$(cat "$d/rc")" = 0 ] && grep -qx '[0-9]* passed, 0 failed' "$d/out"; then
    ok "$1: $(tail -n 1 "$d/out")"
  else
    fail "$1: status $(cat "$d/rc"); out: $(cat "$d/out"); err: $(cat "$d/err")"
  fi
}

# err_is NAME TEXT: stderr is exactly that line; err_empty NAME.
err_is() {
  if [ "$(cat "$work/$1/err")" = "$2" ]; then ok "$1: says: $2"; else fail "$1: stderr: $(cat "$work/$1/err") (want: $2)"; fi
}
err_empty() {
  if [ ! -s "$work/$1/err" ]; then ok "$1: says nothing"; else fail "$1: stderr: $(cat "$work/$1/err")"; fi
}

# served_by NAME N: the allocator's own operator new served N calls.
served_by() {
  if grep -qx "the allocator's operator new served $2" "$work/$1/out"; then
    ok "$1: the allocator's operator new served $2"
  else
    fail "$1: $(grep "operator new served" "$work/$1/out") (want $2)"
  fi
}

# on_page NAME (none|some): blocks of the program's starting a page.
on_page() {
  local n
  n=$(sed -n 's/^blocks starting a page: //p' "$work/$1/out")
  if { [ "$2" = none ] && [ "$n" = 0 ]; } || { [ "$2" = some ] && [ "${n:-0}" -gt 0 ]; }; then
    ok "$1: blocks starting a page: $n"
  else
    fail "$1: blocks starting a page: $n (want $2)"
  fi
  if grep -qx "the allocator's calls for 10000 blocks: 10000" "$work/$1/out"; then
    ok "$1: one call of the allocator's a block"
  else
    fail "$1: $(grep "allocator's calls" "$work/$1/out") (want 10000)"
  fi
}

run untraced "" -- own
passes untraced
served_by untraced 1
on_page untraced some

# 1. heaphook in front of the program's allocator. With nothing recorded,
# the program's calls go straight to it, its operator new included
# (HH_PATH_NEXT); with a recorder, heaphook serves operator new.
run passthrough "$heaphook" -- own
passes passthrough
err_empty passthrough
served_by passthrough 1
run stats "$heaphook" HEAPHOOK_STATS=1 -- own
passes stats
err_is stats "heaphook: the program's own allocator (liboh_own_alloc.so, found after heaphook)"
run counts "$heaphook" HEAPHOOK_RECORD=counts,usage HEAPHOOK_LOG=/dev/null -- own
passes counts
err_empty counts
served_by counts 0
on_page counts none

# 2. Traced, in full and sampled: the program's allocations with exact
# numbers (11 blocks freed, operator new's among them, and 10000 more, 1 realloc, stdout's
# buffer left), and the block
# of the allocator's own entry point an unknown free (counted among the
# frees).
run full "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT=t.hhtrace -- own
passes full
err_empty full
"$cli" report --json "$work/full/t.hhtrace" >"$work/full.json" 2>"$work/full.report-err"
want='{"allocations": 10012, "frees": 10012, "reallocs": 1, "unknown_frees": 1}'
got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(json.dumps({k: t[k] for k in ("allocations", "frees", "reallocs", "unknown_frees")}))' "$work/full.json" 2>&1)
if [ "$got" = "$want" ]; then ok "full: trace totals $got"; else fail "full: trace totals $got (want $want)"; fi
# heaphook run's summary says the one unknown free, in the singular.
mkdir -p "$work/cli"
(cd "$work/cli" && "$cli" run -o t.hhtrace -- "$prog" own >out 2>err)
line="heaphook: 1 unknown free (a block allocated before the trace started, by a signal handler inside heaphook, or by an allocator's own API such as jemalloc's mallocx)"
if grep -qxF "$line" "$work/cli/err" && grep -qx '[0-9]* passed, 0 failed' "$work/cli/out"; then
  ok "cli: run says: $line"
else
  fail "cli: run: out: $(cat "$work/cli/out"); err: $(cat "$work/cli/err")"
fi
run sampled "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=64 HEAPHOOK_OUTPUT=t.hhtrace -- own
passes sampled
if "$cli" report "$work/sampled/t.hhtrace" >/dev/null 2>"$work/sampled.report-err"; then
  ok "sampled: trace reads"
else
  fail "sampled: report: $(cat "$work/sampled.report-err")"
fi
# A period that samples next to nothing: the blocks go through sampling's
# lead path (every block 16 bytes into the allocator's, src/hook/entry.c),
# operator new's and the free of the allocator's own block among them.
run sampled_1m "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_TRACE_SAMPLE=1M HEAPHOOK_OUTPUT=t.hhtrace -- own
passes sampled_1m
err_empty sampled_1m
on_page sampled_1m none
if "$cli" report "$work/sampled_1m/t.hhtrace" >/dev/null 2>"$work/sampled_1m.report-err"; then
  ok "sampled_1m: trace reads"
else
  fail "sampled_1m: report: $(cat "$work/sampled_1m.report-err")"
fi
run heaptrack "$heaptrack" -- own
passes heaptrack
if ls "$work"/heaptrack/heaplog.*.hhtrace >/dev/null 2>&1; then ok "heaptrack: heaplog written"; else fail "heaptrack: no heaplog"; fi

# 3. Another allocator in place of the program's: its blocks are TLSF's,
# and the one the program's allocator made itself goes back to it.
run tlsf "$heaphook" HEAPHOOK_ALLOCATOR=tlsf -- other
passes tlsf
err_empty tlsf

# 4. What heaphook cannot follow, said in one line: the program's malloc
# found ahead of heaphook's (the program runs on, unhooked) ...
run ahead "$own $heaphook" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null -- own
passes ahead
err_is ahead "heaphook: malloc is defined ahead of heaphook, in $own: none of the program's allocations reach heaphook (preload heaphook first; a program with an allocator linked in statically cannot be followed)"
# The same for a program without PIE that takes malloc's address (its
# malloc is then a stub in its own PLT, python3's case): said when the
# library ahead defines malloc, not said when heaphook is first.
for order in "$own $heaphook" "$heaphook"; do
  LD_PRELOAD="$order" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null "$address_prog" >"$work/addr.out" 2>"$work/addr.err"
  rc=$?
  if [ "$order" = "$heaphook" ]; then want=""; else
    want="heaphook: malloc is defined ahead of heaphook, in $own: none of the program's allocations reach heaphook (preload heaphook first; a program with an allocator linked in statically cannot be followed)"
  fi
  if [ $rc = 0 ] && [ "$(cat "$work/addr.out")" = ok ] && [ "$(cat "$work/addr.err")" = "$want" ]; then
    ok "malloc's address, LD_PRELOAD=$order: says ${want:-nothing}"
  else
    fail "malloc's address, LD_PRELOAD=$order: status $rc; out $(cat "$work/addr.out"); err $(cat "$work/addr.err")"
  fi
done
# Two heaphook libraries preloaded (tier4 users combine
# libpreloaded_tlsf.so and libpreloaded_heaptrack.so so): the first serves
# everything and the second does nothing, which it says in one line (until
# 2026-11-28 nothing was said: the tracer second left no trace, first it
# traced another allocator than the one asked for).
two="does nothing: another heaphook library"
hint="is preloaded ahead of it and serves every allocation (preload one; any of them traces with HEAPHOOK_RECORD=trace, libpreloaded_tlsf.so included)"
# two_heaphooks NAME PRELOAD 'stderr wanted' (yes|no: a trace written):
# ls, run in $work/NAME.
two_heaphooks() {
  mkdir -p "$work/$1"
  (cd "$work/$1" && env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    -u HEAPHOOK_OUTPUT LD_PRELOAD="$2" ls / >out 2>err)
  local rc=$? traced=no
  ls "$work/$1"/heaplog.*.hhtrace >/dev/null 2>&1 && traced=yes
  if [ $rc = 0 ] && [ "$(cat "$work/$1/out")" = "$(ls /)" ] && [ "$(cat "$work/$1/err")" = "$3" ] &&
    [ $traced = "$4" ]; then
    ok "$1: says: $3; trace written: $traced"
  else
    fail "$1: status $rc; stderr: $(cat "$work/$1/err") (want: $3); trace written: $traced (want $4)"
  fi
}
two_heaphooks two_heaptrack_second "$heaphook $heaptrack" "heaphook: $heaptrack $two, $heaphook, $hint" no
two_heaphooks two_heaptrack_first "$heaptrack:$heaphook" "heaphook: $heaphook $two, $heaptrack, $hint" yes
# libpreloaded_heaptrack.so serves glibc's malloc whatever
# HEAPHOOK_ALLOCATOR says, and says so (until 2026-11-28 without a word:
# HEAPHOOK_ALLOCATOR=tlsf traced glibc's malloc); libc, as unset, says nothing.
ignored="heaphook: HEAPHOOK_ALLOCATOR=tlsf is ignored: libpreloaded_heaptrack.so traces glibc's malloc (to trace another allocator, preload libheaphook.so with HEAPHOOK_ALLOCATOR and HEAPHOOK_RECORD=trace)"
for alloc in tlsf libc; do
  mkdir -p "$work/heaptrack_$alloc"
  (cd "$work/heaptrack_$alloc" && env -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG -u HEAPHOOK_OUTPUT \
    LD_PRELOAD="$heaptrack" HEAPHOOK_ALLOCATOR=$alloc ls / >out 2>err)
  rc=$?
  want=$([ $alloc = tlsf ] && echo "$ignored")
  if [ $rc = 0 ] && [ "$(cat "$work/heaptrack_$alloc/err")" = "$want" ] && ls "$work/heaptrack_$alloc"/heaplog.*.hhtrace >/dev/null 2>&1; then
    ok "heaptrack_$alloc: says ${want:-nothing}, traces"
  else
    fail "heaptrack_$alloc: status $rc; stderr: $(cat "$work/heaptrack_$alloc/err") (want: $want)"
  fi
done
# The one that serves finds the program's allocator past the other (until
# 2026-11-28 its search stopped at the other heaphook library, glibc
# served, and the block of the allocator's own entry point, freed, ended
# the program: "double free or corruption (out)", status 134), in both
# orders, as with one heaphook library: with nothing recorded (heaphook
# first; the allocator serves its own operator new, where the other
# library's was taken for the allocator's until then, and the program's
# operator new started that library, which served it), traced
# (libpreloaded_heaptrack.so first; heaphook serves operator new),
# counted, and under TLSF.
for first in heaphook heaptrack; do
  if [ $first = heaphook ]; then
    order="$heaphook $heaptrack" second=$heaptrack new=1
  else
    order="$heaptrack $heaphook" second=$heaphook new=0
  fi
  said="heaphook: $second $two, ${order%% *}, $hint"
  run "two_${first}_own" "$order" -- own
  passes "two_${first}_own"
  err_is "two_${first}_own" "$said"
  served_by "two_${first}_own" $new
  traced=no
  ls "$work/two_${first}_own"/heaplog.*.hhtrace >/dev/null 2>&1 && traced=yes
  if [ $traced = "$([ $first = heaptrack ] && echo yes || echo no)" ]; then
    ok "two_${first}_own: trace written: $traced"
  else
    fail "two_${first}_own: trace written: $traced"
  fi
  run "two_${first}_stats" "$order" HEAPHOOK_STATS=1 -- own
  passes "two_${first}_stats"
  if [ "$(grep -vxF "$said" "$work/two_${first}_stats/err" | grep -c "own allocator")" = 1 ] &&
    grep -qxF "heaphook: the program's own allocator (liboh_own_alloc.so, found after heaphook)" \
      "$work/two_${first}_stats/err"; then
    ok "two_${first}_stats: the program's own allocator, said once"
  else
    fail "two_${first}_stats: stderr: $(cat "$work/two_${first}_stats/err")"
  fi
  run "two_${first}_counts" "$order" HEAPHOOK_RECORD=counts,usage HEAPHOOK_LOG=/dev/null -- own
  passes "two_${first}_counts"
  served_by "two_${first}_counts" 0
  on_page "two_${first}_counts" none
done
# (libheaphook.so alone takes HEAPHOOK_ALLOCATOR)
run two_heaphook_tlsf "$heaphook $heaptrack" HEAPHOOK_ALLOCATOR=tlsf -- other
passes two_heaphook_tlsf
err_is two_heaphook_tlsf "heaphook: $heaptrack $two, $heaphook, $hint"
# ... and an allocator without a posix_memalign of its own (glibc's would
# be given its blocks): glibc serves the program then, as before heaphook
# looked for the allocator after it (a debugging preload such as
# libmemusage.so lacks it and wraps glibc's malloc). A program that does
# not look at whose its blocks are (ls) runs as without heaphook.
mkdir -p "$work/no_memalign"
LD_PRELOAD="$heaphook $own_no_memalign" ls / >"$work/no_memalign/out" 2>"$work/no_memalign/err"
echo $? >"$work/no_memalign/rc"
if [ "$(cat "$work/no_memalign/rc")" = 0 ] && [ "$(cat "$work/no_memalign/out")" = "$(ls /)" ]; then
  ok "no_memalign: ls runs on glibc"
else
  fail "no_memalign: status $(cat "$work/no_memalign/rc"); out: $(cat "$work/no_memalign/out")"
fi
err_is no_memalign "heaphook: malloc comes from $own_no_memalign, which has no posix_memalign of its own: heaphook serves the program from glibc's malloc instead, past that library"

finish
