#!/bin/bash
# preload.pool_over_cgroup: a first TLSF pool larger than the memory limit
# of the process's cgroup (a container's) stops the program before main
# with one line naming INITIAL_MEMPOOL_SIZE, status 1. The pool is
# pre-faulted at start-up: before, the OOM killer ended the program there,
# status 137 and not a word. Needs a memory cgroup it may make (root, a
# writable v1 memory hierarchy or a v2 one with the memory controller
# given to children): not run (77) elsewhere.
# usage: pool_over_cgroup.sh TLSF_LIB PROBE
set -u
tlsf=$1 probe=$2
[ "$(id -u)" = 0 ] || { echo "not root: no cgroup to make"; exit 77; }

# The process's memory cgroup, v1 then v2, and a new group below it.
group=
v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
v2=$(awk -F: '$1 == "0" && $2 == "" { print $3; exit }' /proc/self/cgroup)
if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
  group=/sys/fs/cgroup/memory${v1%/}/heaphook-test.$$
  limit_file=memory.limit_in_bytes
elif [ -n "$v2" ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  group=/sys/fs/cgroup${v2%/}/heaphook-test.$$
  limit_file=memory.max
fi
[ -n "$group" ] && mkdir "$group" 2>/dev/null || { echo "no memory cgroup can be made here"; exit 77; }
trap 'rmdir "$group" 2>/dev/null' EXIT
if ! echo $((48 << 20)) >"$group/$limit_file" 2>/dev/null; then
  echo "the new cgroup takes no memory limit ($group/$limit_file)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"; rmdir "$group" 2>/dev/null' EXIT
passed=0 failed=0

# in_group STATUS_WANTED 'stderr wanted' 'stdout wanted' VAR=VALUE...: the
# probe run in the group under the TLSF library.
in_group() {
  local want_rc=$1 want_err=$2 want_out=$3
  shift 3
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group" \
    env -u INITIAL_MEMPOOL_SIZE -u ADDITIONAL_MEMPOOL_SIZE -u HEAPHOOK_STATS -u HEAPHOOK_RECORD \
    LD_PRELOAD="$tlsf" HEAPHOOK_TLSF_HUGEPAGES=0 "$@" "$probe" main-ran >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc = "$want_rc" ] && [ "$(cat "$work/err")" = "$want_err" ] && [ "$(cat "$work/out")" = "$want_out" ]; then
    echo "ok ${*:-INITIAL_MEMPOOL_SIZE unset}"
    passed=$((passed + 1))
  else
    echo "FAIL ${*:-INITIAL_MEMPOOL_SIZE unset} (48 MiB cgroup): status $rc (expected $want_rc)"
    echo "  stderr: '$(head -c 300 "$work/err")'"
    echo "  stdout: '$(head -c 300 "$work/out")'"
    failed=$((failed + 1))
  fi
}

why="is more than this machine's memory (or its cgroup's limit): the first pool is pre-faulted at start-up; set a smaller one"
in_group 1 "heaphook: INITIAL_MEMPOOL_SIZE=96M $why" "" INITIAL_MEMPOOL_SIZE=96M
in_group 1 "heaphook: INITIAL_MEMPOOL_SIZE=64M (the default) $why" ""
# (INITIAL_MEMPOOL_SIZE set to the empty string counts as unset)
in_group 1 "heaphook: INITIAL_MEMPOOL_SIZE=64M (the default) $why" "" INITIAL_MEMPOOL_SIZE=
in_group 0 "" "main ran" INITIAL_MEMPOOL_SIZE=8M

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
