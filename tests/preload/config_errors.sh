#!/bin/bash
# preload.config_errors: every bad configuration stops the program before
# main, with exit status 1, nothing on stdout (the probe prints "main ran"
# when main runs) and exactly one line on stderr, whose text is checked.
# usage: config_errors.sh HEAPHOOK_LIB TLSF_LIB SIMPLE_LIB PROBE BIG_TLS_PLUGIN
set -u
heaphook=$1 tlsf=$2 simple=$3 probe=$4 big_tls=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# A library that surely exists and is no heaphook plug-in.
notplugin=
for f in /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libm.so.6 \
  /usr/lib/x86_64-linux-gnu/libm.so.6; do
  if [ -e "$f" ]; then notplugin=$f; break; fi
done

# expect_error NAME 'expected stderr line' LIBRARY VAR=VALUE...
expect_error() {
  local name=$1 want=$2 lib=$3
  shift 3
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    -u INITIAL_MEMPOOL_SIZE -u ADDITIONAL_MEMPOOL_SIZE -u HEAPHOOK_TLSF_MLOCK \
    LD_PRELOAD="$lib" "$@" "$probe" main-ran >"$work/out" 2>"$work/err"
  local rc=$?
  printf '%s\n' "$want" >"$work/want"
  if [ $rc = 1 ] && [ ! -s "$work/out" ] && cmp -s "$work/want" "$work/err"; then
    echo "ok $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($*, LD_PRELOAD=$lib): status $rc (expected 1)"
    [ -s "$work/out" ] && echo "  stdout (expected empty: main must not run): $(head -c 300 "$work/out")"
    if ! cmp -s "$work/want" "$work/err"; then
      echo "  stderr differs (< expected, > actual):"
      diff "$work/want" "$work/err" | head -10 | sed 's/^/  /'
    fi
    failed=$((failed + 1))
  fi
}

# expect_ok NAME LIBRARY VAR=VALUE...: a valid configuration runs main quietly.
expect_ok() {
  local name=$1 lib=$2
  shift 2
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    -u INITIAL_MEMPOOL_SIZE -u ADDITIONAL_MEMPOOL_SIZE -u HEAPHOOK_TLSF_MLOCK \
    LD_PRELOAD="$lib" "$@" "$probe" main-ran >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc = 0 ] && [ "$(cat "$work/out")" = "main ran" ] && [ ! -s "$work/err" ]; then
    echo "ok $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($*): status $rc, stdout '$(head -c 200 "$work/out")', stderr '$(head -c 300 "$work/err")'"
    failed=$((failed + 1))
  fi
}

size_hint="is not a size (use bytes or a K/M/G/T suffix, e.g. 64M)"

expect_error "HEAPHOOK_ALLOCATOR=bogus" \
  "heaphook: HEAPHOOK_ALLOCATOR=bogus: expected libc, tlsf or the path of a plug-in library (with a '/')" \
  "$heaphook" HEAPHOOK_ALLOCATOR=bogus
expect_error "HEAPHOOK_ALLOCATOR=/nonexistent/lib.so" \
  "heaphook: HEAPHOOK_ALLOCATOR=/nonexistent/lib.so: cannot load the plug-in: /nonexistent/lib.so: cannot open shared object file: No such file or directory" \
  "$heaphook" HEAPHOOK_ALLOCATOR=/nonexistent/lib.so
# a plug-in with more initial-exec TLS than glibc keeps for dlopen: the
# message says how to load it (it was glibc's words alone)
expect_error "HEAPHOOK_ALLOCATOR=$big_tls (static TLS)" \
  "heaphook: HEAPHOOK_ALLOCATOR=$big_tls: cannot load the plug-in: $big_tls: cannot allocate memory in static TLS block (its initial-exec thread-local data does not fit in the 512 bytes glibc keeps for libraries loaded at run time: preload the plug-in itself, or give it room: GLIBC_TUNABLES=glibc.rtld.optional_static_tls=BYTES, more than its thread-local data)" \
  "$heaphook" HEAPHOOK_ALLOCATOR="$big_tls"
if [ -n "$notplugin" ]; then
  expect_error "HEAPHOOK_ALLOCATOR=$notplugin (no hh_allocator_get)" \
    "heaphook: HEAPHOOK_ALLOCATOR=$notplugin: not a heaphook allocator (no hh_allocator_get; see HH_EXPORT_ALLOCATOR)" \
    "$heaphook" HEAPHOOK_ALLOCATOR="$notplugin"
else
  echo "FAIL no library found to use as a non-plug-in"
  failed=$((failed + 1))
fi
expect_error "HEAPHOOK_RECORD=nope" \
  "heaphook: HEAPHOOK_RECORD=nope: unknown recorder 'nope' (known: counts, usage, trace)" \
  "$heaphook" HEAPHOOK_RECORD=nope
expect_error "HEAPHOOK_RECORD=counts,nope,usage" \
  "heaphook: HEAPHOOK_RECORD=counts,nope,usage: unknown recorder 'nope' (known: counts, usage, trace)" \
  "$heaphook" HEAPHOOK_RECORD=counts,nope,usage
expect_error "HEAPHOOK_RECORD=nope under a plug-in library" \
  "heaphook: HEAPHOOK_RECORD=nope: unknown recorder 'nope' (known: counts, usage, trace)" \
  "$simple" HEAPHOOK_RECORD=nope
expect_error "HEAPHOOK_STATS=maybe" \
  "heaphook: HEAPHOOK_STATS=maybe: expected 1 or 0 (also true/false, yes/no, on/off)" \
  "$heaphook" HEAPHOOK_STATS=maybe
expect_error "HEAPHOOK_STATS=maybe under libpreloaded_tlsf" \
  "heaphook: HEAPHOOK_STATS=maybe: expected 1 or 0 (also true/false, yes/no, on/off)" \
  "$tlsf" HEAPHOOK_STATS=maybe
expect_error "INITIAL_MEMPOOL_SIZE=12X" "heaphook: INITIAL_MEMPOOL_SIZE=12X $size_hint" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=12X
expect_error "ADDITIONAL_MEMPOOL_SIZE=-5" "heaphook: ADDITIONAL_MEMPOOL_SIZE=-5 $size_hint" \
  "$tlsf" ADDITIONAL_MEMPOOL_SIZE=-5
expect_error "INITIAL_MEMPOOL_SIZE=12X with HEAPHOOK_ALLOCATOR=tlsf" \
  "heaphook: INITIAL_MEMPOOL_SIZE=12X $size_hint" \
  "$heaphook" HEAPHOOK_ALLOCATOR=tlsf INITIAL_MEMPOOL_SIZE=12X
expect_error "INITIAL_MEMPOOL_SIZE=3000000T (too large)" \
  "heaphook: INITIAL_MEMPOOL_SIZE=3000000T is too large (at most 2^61 bytes)" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=3000000T
# A pool too small to hold anything, or more than the machine will map: one
# line each, with the reason (before: "errno 0", or a bare errno number,
# then "allocator 'tlsf' failed to start").
expect_error "INITIAL_MEMPOOL_SIZE=16 (too small)" \
  "heaphook: INITIAL_MEMPOOL_SIZE=16 is too small for a pool: at least 80 bytes" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=16
# The value as the user wrote it (before: "INITIAL_MEMPOOL_SIZE=64", the
# parsed bytes).
expect_error "INITIAL_MEMPOOL_SIZE=64b (too small, as written)" \
  "heaphook: INITIAL_MEMPOOL_SIZE=64b is too small for a pool: at least 80 bytes" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=64b
# More than the machine's memory (or its cgroup's limit): the pool is
# pre-faulted, and in a container one past the limit met the OOM killer
# (preload.pool_over_cgroup); before, 1000T was "cannot map the initial
# pool of 1099511627776000 bytes (INITIAL_MEMPOOL_SIZE)".
expect_error "INITIAL_MEMPOOL_SIZE=1000T (more than the machine's memory)" \
  "heaphook: INITIAL_MEMPOOL_SIZE=1000T is more than this machine's memory (or its cgroup's limit): the first pool is pre-faulted at start-up; set a smaller one" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=1000T
# An addition no machine here can hold: every growth would fail, silently,
# with memory to spare (before, the program ran on and its first growth
# gave ENOMEM), where a first pool that large stops it (above).
expect_error "ADDITIONAL_MEMPOOL_SIZE=1000T (more than the machine's memory)" \
  "heaphook: ADDITIONAL_MEMPOOL_SIZE=1000T is more than this machine's memory (or its cgroup's limit): no pool that large can be added (0 never grows)" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=1M ADDITIONAL_MEMPOOL_SIZE=1000T
# No pool at first and none ever added: every allocation failed (python3
# ended with "memory exhausted").
expect_error "INITIAL_MEMPOOL_SIZE=0 ADDITIONAL_MEMPOOL_SIZE=0" \
  "heaphook: INITIAL_MEMPOOL_SIZE=0 with ADDITIONAL_MEMPOOL_SIZE=0: the pool is empty and never grows" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=0 ADDITIONAL_MEMPOOL_SIZE=0
expect_ok "valid: INITIAL_MEMPOOL_SIZE=0 (the pool made at the first allocation)" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=0
expect_error "HEAPHOOK_TLSF_MLOCK=maybe" \
  "heaphook: HEAPHOOK_TLSF_MLOCK=maybe is not a boolean (use 1/0, true/false, yes/no or on/off)" \
  "$tlsf" HEAPHOOK_TLSF_MLOCK=maybe
# A value starting with '-' that is not the tracer's own mark of a false one
# ("-", "-alse", "-o", "-ff"): the user's, and no boolean (before, it turned
# tracing off silently in every process).
expect_error "HEAPHOOK_TRACE_CHILDREN=-1" \
  "heaphook: HEAPHOOK_TRACE_CHILDREN=-1: expected 1 or 0 (also true/false, yes/no, on/off)" \
  "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/t.%p" HEAPHOOK_TRACE_CHILDREN=-1
# A period past 2^56 bytes: its samples' weights would pass the bound a
# reader checks (trace/format.h), so the trace would read as damaged.
expect_error "HEAPHOOK_TRACE_SAMPLE=65537T" \
  "heaphook: HEAPHOOK_TRACE_SAMPLE=65537T: a period of at most 65536T (2^56 bytes)" \
  "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/t.%p" HEAPHOOK_TRACE_SAMPLE=65537T
expect_ok "valid: HEAPHOOK_TRACE_SAMPLE=65536T" \
  "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/u.%p" HEAPHOOK_TRACE_SAMPLE=65536T
for v in 0 9 x 2x -1 99999999999; do
  expect_error "HEAPHOOK_TRACE_WRITERS=$v" \
    "heaphook: HEAPHOOK_TRACE_WRITERS=$v: expected a number of threads from 1 to 8" \
    "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/w.%p" HEAPHOOK_TRACE_WRITERS=$v
done
expect_ok "valid: HEAPHOOK_TRACE_WRITERS=8" \
  "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/x.%p" HEAPHOOK_TRACE_WRITERS=8

# Controls: the same program with valid settings runs main, quietly.
expect_ok "valid: HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_STATS=off HEAPHOOK_RECORD=,counts,,usage,counts" \
  "$heaphook" HEAPHOOK_ALLOCATOR=tlsf HEAPHOOK_STATS=off HEAPHOOK_RECORD=,counts,,usage,counts HEAPHOOK_LOG=/dev/null
expect_ok "valid: INITIAL_MEMPOOL_SIZE=8MiB ADDITIONAL_MEMPOOL_SIZE=0" \
  "$tlsf" INITIAL_MEMPOOL_SIZE=8MiB ADDITIONAL_MEMPOOL_SIZE=0
expect_ok "valid: HEAPHOOK_ALLOCATOR=$simple" "$heaphook" HEAPHOOK_ALLOCATOR="$simple"
# Empty values are as if unset, every variable alike (HEAPHOOK_STATS= and
# INITIAL_MEMPOOL_SIZE= were refused, HEAPHOOK_TRACE_STACKS= taken).
expect_ok "valid: empty values" "$tlsf" HEAPHOOK_STATS= INITIAL_MEMPOOL_SIZE= ADDITIONAL_MEMPOOL_SIZE= \
  HEAPHOOK_TLSF_MLOCK= HEAPHOOK_ALLOCATOR= HEAPHOOK_RECORD= HEAPHOOK_LOG=
expect_ok "valid: empty tracer values" "$heaphook" HEAPHOOK_RECORD=trace HEAPHOOK_OUTPUT="$work/e.%p" \
  HEAPHOOK_TRACE_STACKS= HEAPHOOK_TRACE_SAMPLE= HEAPHOOK_TRACE_CHILDREN= HEAPHOOK_TRACE_WRITERS=

echo "$passed passed, $failed failed"
[ $failed = 0 ]
