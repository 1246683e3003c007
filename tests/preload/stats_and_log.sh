#!/bin/bash
# preload.stats_and_log: the TLSF report of HEAPHOOK_STATS=1 (growth counted),
# HEAPHOOK_LOG (file named with the pid, appending, fallback to stderr), and
# the exact numbers of HEAPHOOK_RECORD=usage and counts for known allocations.
# usage: stats_and_log.sh HEAPHOOK_LIB TLSF_LIB PROBE
set -u
heaphook=$1 tlsf=$2 probe=$3
. "$(dirname "$0")/checks.sh"
. "$(dirname "$0")/run_clean.sh"

# run LIBRARY VAR=VALUE... -- ARGS...: the probe under the library, with a
# clean heaphook environment; stdout, stderr and status in $work/{out,err,rc}.
run() { run_clean "$probe" "$@"; }

# check_report FILE NAME: FILE holds exactly one TLSF report, line by line in
# the documented format; sets $growths, $pools, $pool_bytes.
check_report() {
  local file=$1 name=$2
  local re='^tlsf allocator \((priority-inheritance|plain) mutex\):
  pools: [0-9]+
  pool bytes: [0-9]+
  growths: [0-9]+
  peak used: [0-9]+
  peak in pools: [0-9]+ \(peak used with block headers: size INITIAL_MEMPOOL_SIZE from this\)
  current used: [0-9]+
  largest request: [0-9]+
  free bytes: [0-9]+
  largest free block: [0-9]+
  fragmentation: [0-9]+\.[0-9][0-9]% \(1 - largest free block / free bytes\)$'
  local text
  text=$(cat "$file")
  growths=$(sed -n 's/^  growths: \([0-9]*\)$/\1/p' "$file")
  pools=$(sed -n 's/^  pools: \([0-9]*\)$/\1/p' "$file")
  pool_bytes=$(sed -n 's/^  pool bytes: \([0-9]*\)$/\1/p' "$file")
  if [[ $text =~ $re ]]; then
    ok "$name: report format"
    return 0
  fi
  fail "$name: not exactly one report in the expected format:"
  sed 's/^/  | /' "$file" | head -20
  return 1
}

# ---- HEAPHOOK_STATS=1 under libpreloaded_tlsf -----------------------------
# 1 MiB in 4 KiB blocks from 64 KiB pools: the pool must grow.
run "$tlsf" HEAPHOOK_STATS=1 INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=64K -- blocks4k 1048576
if [ "$(cat "$work/rc")" = 0 ] && grep -qx "pid [0-9]*" "$work/out"; then
  ok "64K pools: program ran"
else
  fail "64K pools: status $(cat "$work/rc"), stdout: $(head -c 200 "$work/out")"
fi
if check_report "$work/err" "64K pools, report on stderr"; then
  if [ "$growths" -gt 0 ] && [ "$pools" = $((growths + 1)) ] && [ "$pool_bytes" -ge 1048576 ]; then
    ok "64K pools: growths: $growths, pools: $pools, pool bytes: $pool_bytes"
  else
    fail "64K pools: expected growths > 0, pools = growths + 1, pool bytes >= 1 MiB; got growths: $growths, pools: $pools, pool bytes: $pool_bytes"
  fi
fi

# may_lock KIB SOFT|HARD: whether the limit of locked memory (RLIMIT_MEMLOCK)
# is KIB KiB or more: the soft one, which root's locks pass by
# (CAP_IPC_LOCK), or the hard one, up to which prlimit may raise it. A hard
# limit below 1 MiB (64 KiB, the kernel's default before Linux 5.16, and
# many containers') leaves the checks that need more not run, said in one
# line each: before, they failed there (prlimit could not raise the limit
# to 1 MiB, as root too; as another user, mlockall's pool could not be
# mapped, status 3).
may_lock() {
  local limit
  if [ "$2" = HARD ]; then
    limit=$(ulimit -H -l)
  else
    [ "$(id -u)" = 0 ] && return 0
    limit=$(ulimit -S -l)
  fi
  [ "$limit" = unlimited ] || [ "$limit" -ge "$1" ]
}

# HEAPHOOK_TLSF_MLOCK=1 with a locked-memory limit of 1 MiB: the 256 KiB
# initial pool is locked, the 4 MiB pools added for 8 MiB of blocks are
# not, which one line says at the first (before, only HEAPHOOK_STATS's
# "failed pool mlocks" told it, at exit). Root locks without a limit
# (CAP_IPC_LOCK), so as root the probe runs as nobody.
if may_lock 1024 HARD; then
  as_limited() {
    if [ "$(id -u)" = 0 ]; then
      setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --memlock=1048576 "$@"
    else
      prlimit --memlock=1048576 "$@"
    fi
  }
  # mlock_limited NAME INITIAL BYTES WANT: blocks4k BYTES under that limit,
  # with 4M additions; it runs, and stderr is the one line WANT.
  mlock_limited() {
    as_limited env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
      INITIAL_MEMPOOL_SIZE="$2" ADDITIONAL_MEMPOOL_SIZE=4M HEAPHOOK_TLSF_MLOCK=1 \
      LD_PRELOAD="$tlsf" "$probe" blocks4k "$3" >"$work/out" 2>"$work/err"
    local rc=$?
    if [ $rc = 0 ] && grep -qx "pid [0-9]*" "$work/out" && [ "$(cat "$work/err")" = "$4" ]; then
      ok "HEAPHOOK_TLSF_MLOCK, 1 MiB limit: $1"
    else
      fail "HEAPHOOK_TLSF_MLOCK, 1 MiB limit, $1: status $rc, stdout '$(head -c 100 "$work/out")', stderr: $(head -c 400 "$work/err")"
    fi
  }
  mlock_limited "one line for the added pools" 256K 8388608 \
    "heaphook: tlsf: HEAPHOOK_TLSF_MLOCK: mlock of an added pool of 4194304 bytes failed (Cannot allocate memory; see ulimit -l); its pages are not locked, going on"
  # ... and a limit the initial pool is over: the same line for it, with the
  # reason (it said "errno 12").
  mlock_limited "one line for the initial pool" 4M 1048576 \
    "heaphook: tlsf: HEAPHOOK_TLSF_MLOCK: mlock of the initial pool of 4194304 bytes failed (Cannot allocate memory; see ulimit -l); its pages are not locked, going on"

  # ... said by a thread with a pthread_cancel pending, which reaches no
  # cancellation point of its own: the growth it makes writes that line
  # with the allocator's lock held, and write is a cancellation point.
  # Before, the thread was unwound there with the lock taken, and main's
  # malloc after it waited forever (the alarm's status 142).
  as_limited env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    INITIAL_MEMPOOL_SIZE=256K ADDITIONAL_MEMPOOL_SIZE=4M HEAPHOOK_TLSF_MLOCK=1 \
    LD_PRELOAD="$tlsf" "$probe" cancel-pending 8388608 >"$work/out" 2>"$work/err"
  rc=$?
  if [ $rc = 0 ] && [ "$(cat "$work/out")" = "thread returned; main's malloc ok" ] &&
    [ "$(cat "$work/err")" = "heaphook: tlsf: HEAPHOOK_TLSF_MLOCK: mlock of an added pool of 4194304 bytes failed (Cannot allocate memory; see ulimit -l); its pages are not locked, going on" ]; then
    ok "HEAPHOOK_TLSF_MLOCK, 1 MiB limit: the line from a thread with a cancel pending, and the allocator goes on"
  else
    fail "HEAPHOOK_TLSF_MLOCK, cancel pending: status $rc, stdout '$(head -c 100 "$work/out")', stderr: $(head -c 400 "$work/err")"
  fi

else
  echo "not checked: HEAPHOOK_TLSF_MLOCK under a limit of 1 MiB: the hard limit of locked memory is $(ulimit -H -l) KiB"
fi

# A program that called mlockall(MCL_FUTURE), as real-time programs do, has
# its pools on huge pages as one that did not (the 4 MiB pool added for a
# 3 MB block: 4096 kB where the kernel has transparent huge pages, 0 kB
# either way where it has none). Before, the pool's mapping was populated
# by mmap itself, before it was advised MADV_HUGEPAGE: 0 kB.
# (mlockall locks the 4 MiB pool and the pages mapped after it: 8 MiB of
# room, the kernel's default limit since Linux 5.16)
run "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=4M -- huge 3000000
plain="$(cat "$work/rc") $(cat "$work/out")"
run "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=4M -- huge 3000000 mlockall
locked="$(cat "$work/rc") $(cat "$work/out")"
if ! may_lock 8192 SOFT; then
  echo "not checked: mlockall(MCL_FUTURE) and huge pages: the limit of locked memory is $(ulimit -S -l) KiB"
elif [ "${plain%% *}" = 0 ] && [ "$(echo $plain | tr -s ' ' | cut -d' ' -f3)" = 0 ]; then
  # (no huge page without mlockall either: nothing to compare; not counted)
  echo "not checked: mlockall(MCL_FUTURE) and huge pages: the kernel gave the pool none without mlockall ($plain)"
elif [ "${plain%% *}" = 0 ] && [ "$locked" = "$plain" ]; then
  ok "mlockall(MCL_FUTURE): the added pool on huge pages as without it ($(echo $plain | tr -s ' ' | cut -d' ' -f3-4))"
else
  fail "mlockall(MCL_FUTURE): added pool's status and AnonHugePages: '$locked', without mlockall: '$plain'"
fi

# Growth on huge pages under an address-space limit with room for the pool
# but not for the 2 MiB more that aligning it takes: the pool is mapped on
# ordinary pages. Before, the growth failed and malloc gave NULL.
run "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=8M -- aslimit 9437184 3000000
if [ "$(cat "$work/rc") $(cat "$work/out")" = "0 malloc ok" ]; then
  ok "huge pages, ulimit -v with room for an 8 MiB pool and 1 MiB more: the pool is mapped"
else
  fail "huge pages under an address-space limit: status $(cat "$work/rc"), '$(cat "$work/out")', stderr $(head -c 300 "$work/err")"
fi
run "$tlsf" INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=8M -- aslimit 4194304 3000000
if [ "$(cat "$work/rc") $(cat "$work/out")" = "0 malloc failed" ]; then
  ok "ulimit -v with room for 4 MiB: no 8 MiB pool, malloc gives NULL"
else
  fail "address-space limit below the pool: status $(cat "$work/rc"), '$(cat "$work/out")'"
fi

# The default 64M pool holds it all: no growth.
run "$tlsf" HEAPHOOK_STATS=1 -- blocks4k 1048576
if check_report "$work/err" "default pool, report on stderr"; then
  if [ "$growths" = 0 ] && [ "$pools" = 1 ] && [ "$pool_bytes" = 67108864 ]; then
    ok "default pool: growths: 0, pools: 1, pool bytes: 67108864"
  else
    fail "default pool: expected growths 0, pools 1, pool bytes 67108864; got $growths, $pools, $pool_bytes"
  fi
fi

# ---- HEAPHOOK_LOG ----------------------------------------------------------
mkdir "$work/logs"
run "$tlsf" HEAPHOOK_STATS=1 INITIAL_MEMPOOL_SIZE=64K ADDITIONAL_MEMPOOL_SIZE=64K \
  HEAPHOOK_LOG="$work/logs/hh.%p.log" -- blocks4k 1048576
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$work/out")
files=$(cd "$work/logs" && ls)
if [ -z "$pid" ] || [ "$(cat "$work/rc")" != 0 ]; then
  fail "HEAPHOOK_LOG: the program failed: status $(cat "$work/rc"), stdout $(head -c 200 "$work/out")"
elif [ -s "$work/err" ]; then
  fail "HEAPHOOK_LOG: stderr should be empty, has: $(head -c 300 "$work/err")"
elif [ "$files" != "hh.$pid.log" ]; then
  fail "HEAPHOOK_LOG: expected exactly hh.$pid.log in the log directory, found: ${files:-nothing}"
else
  ok "HEAPHOOK_LOG=dir/hh.%p.log: the report went to hh.$pid.log, not stderr"
  if check_report "$work/logs/hh.$pid.log" "HEAPHOOK_LOG file"; then
    [ "$growths" -gt 0 ] && ok "HEAPHOOK_LOG file: growths: $growths" || fail "HEAPHOOK_LOG file: growths: $growths"
  fi
fi

# A name without %p: each run appends its report.
for i in 1 2; do
  run "$tlsf" HEAPHOOK_STATS=1 HEAPHOOK_LOG="$work/logs/all.log" -- blocks4k 65536
done
n=$(grep -c '^tlsf allocator (' "$work/logs/all.log" 2>/dev/null)
if [ "${n:-0}" = 2 ] && [ "$(grep -c '^  growths: 0$' "$work/logs/all.log")" = 2 ]; then
  ok "HEAPHOOK_LOG without %p: two runs appended two reports"
else
  fail "HEAPHOOK_LOG without %p: expected 2 reports in all.log, found ${n:-none}"
fi

# A log that cannot be opened: one warning line, then the report on stderr.
run "$tlsf" HEAPHOOK_STATS=1 HEAPHOOK_LOG="$work/missing/hh.%p.log" -- blocks4k 65536
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$work/out")
want="heaphook: HEAPHOOK_LOG=$work/missing/hh.%p.log: cannot open $work/missing/hh.$pid.log (No such file or directory); reporting to stderr"
if [ "$(head -1 "$work/err")" = "$want" ]; then
  ok "HEAPHOOK_LOG unopenable: warning"
  tail -n +2 "$work/err" >"$work/rest"
  check_report "$work/rest" "HEAPHOOK_LOG unopenable: report on stderr after the warning"
else
  fail "HEAPHOOK_LOG unopenable: expected first stderr line '$want', got '$(head -1 "$work/err")'"
fi

# A log named through a link, as HEAPHOOK_LOG=/dev/stderr is (a link to
# /proc/self/fd/2): the report goes where the link leads, with no warning.
# Before, the open refused links ("Too many levels of symbolic links").
mkdir -p "$work/linked" && : >"$work/linked/target.log" && ln -s target.log "$work/linked/hh.log"
run "$tlsf" HEAPHOOK_STATS=1 HEAPHOOK_LOG="$work/linked/hh.log" -- blocks4k 65536
if [ -s "$work/err" ]; then
  fail "HEAPHOOK_LOG through a link to a file: expected nothing on stderr, got: $(cat "$work/err")"
else
  check_report "$work/linked/target.log" "HEAPHOOK_LOG through a link to a file: report in the file it leads to"
fi
run "$tlsf" HEAPHOOK_STATS=1 HEAPHOOK_LOG=/dev/stderr -- blocks4k 65536
check_report "$work/err" "HEAPHOOK_LOG=/dev/stderr: report on stderr, no warning"

# The same for a program that closes stderr at exit (GNU tools do): the
# log is tried at start-up, where the warning can still be said, and the
# reports go to heaphook's copy of stderr. Before, both were written to
# fd 2 at exit, already closed: nothing came out.
env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS LD_PRELOAD="$heaphook" HEAPHOOK_RECORD=counts \
  HEAPHOOK_LOG="$work/missing/ls.log" ls / >/dev/null 2>"$work/err"
want="heaphook: HEAPHOOK_LOG=$work/missing/ls.log: cannot open $work/missing/ls.log (No such file or directory); reporting to stderr"
if [ "$(head -1 "$work/err")" = "$want" ] && grep -q '^heaphook: calls by function (pid [0-9]*)$' "$work/err" &&
  [ "$(grep -c '^heaphook: HEAPHOOK_LOG' "$work/err")" = 1 ]; then
  ok "HEAPHOOK_LOG unopenable, stderr closed by the program at exit: warning and report"
else
  fail "HEAPHOOK_LOG unopenable, stderr closed at exit: want '$want' then the counts report, got: $(cat "$work/err")"
fi

# HEAPHOOK_LOG naming one of the program's descriptors (the README's
# /dev/stderr), for a program that closes stdout and stderr at exit (GNU
# tools do): the report goes to a copy of that descriptor taken at
# start-up, as without HEAPHOOK_LOG. Before, the open at exit found
# /proc/self/fd/N closed and the report was lost without a word.
for log in /dev/stderr /dev/stdout /dev/fd/2 /proc/self/fd/1; do
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS LD_PRELOAD="$heaphook" HEAPHOOK_RECORD=counts \
    HEAPHOOK_LOG="$log" ls / >"$work/out" 2>"$work/err"
  case $log in */stderr | */2) report=$work/err quiet=$work/out ;; *) report=$work/out quiet=$work/err ;; esac
  if [ "$(grep -c '^heaphook: calls by function (pid [0-9]*)$' "$report")" = 1 ] &&
    [ "$(grep -c '^heaphook' "$quiet")" = 0 ] && grep -qx usr "$work/out" && ! grep -q 'HEAPHOOK_LOG' "$work/err"; then
    ok "HEAPHOOK_LOG=$log, closed by the program at exit: the report there"
  else
    fail "HEAPHOOK_LOG=$log, closed by the program at exit: want one counts report in $(basename "$report"), got stdout: $(head -c 300 "$work/out"); stderr: $(head -c 300 "$work/err")"
  fi
done

# A named pipe as the log: not opened at start-up (opened and closed, its
# reader saw the end, and the open at exit waited for a reader for good:
# the program hung at exit), its reader gets the report.
# The reader is waited for, not killed, once the program is done: killed at
# once it could lose what the program wrote (a loaded CI machine had not run
# it yet, and the check saw an empty pipe). Its own timeout ends it when the
# program never opened the pipe.
mkfifo "$work/pipe"
timeout -s KILL 40 cat "$work/pipe" >"$work/piped" &
reader=$!
# (timeout outside the preload: one process writes to the pipe)
timeout -s KILL 20 env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_STATS LD_PRELOAD="$heaphook" HEAPHOOK_RECORD=counts \
  HEAPHOOK_LOG="$work/pipe" ls / >/dev/null 2>"$work/err"
rc=$?
[ $rc = 0 ] || kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
if [ $rc = 0 ] && grep -q '^heaphook: calls by function (pid [0-9]*)$' "$work/piped" && [ ! -s "$work/err" ]; then
  ok "HEAPHOOK_LOG a named pipe: the report reaches its reader"
else
  fail "HEAPHOOK_LOG a named pipe: status $rc (137: hung), read: $(cat "$work/piped"), stderr: $(cat "$work/err")"
fi

# The same under a long directory name (200 bytes): the whole line, reason
# included (messages were cut at 512 bytes).
long=$work/$(printf 'd%.0s' $(seq 200))
run "$tlsf" HEAPHOOK_STATS=1 HEAPHOOK_LOG="$long/hh.%p.log" -- blocks4k 65536
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$work/out")
want="heaphook: HEAPHOOK_LOG=$long/hh.%p.log: cannot open $long/hh.$pid.log (No such file or directory); reporting to stderr"
if [ "$(head -1 "$work/err")" = "$want" ]; then
  ok "HEAPHOOK_LOG unopenable under a long path: the whole warning"
else
  fail "HEAPHOOK_LOG unopenable under a long path: expected first stderr line '$want', got '$(head -1 "$work/err")'"
fi

# A log that opens but cannot be written (a full disk): said in one line on
# stderr (before, the report was lost without a word). (No copy of stderr
# is kept for it: a program that closes fd 2 at exit, as GNU tools do, hides
# the line; runtime.c, keep_stderr.)
run "$heaphook" HEAPHOOK_RECORD=usage HEAPHOOK_LOG=/dev/full -- usage 10
want="heaphook: HEAPHOOK_LOG=/dev/full: cannot write the report (No space left on device); it is lost"
if [ "$(cat "$work/err")" = "$want" ] && [ "$(cat "$work/rc")" = 0 ]; then
  ok "HEAPHOOK_LOG on a full disk: one warning"
else
  fail "HEAPHOOK_LOG on a full disk: expected stderr '$want' and status 0, got '$(cat "$work/err")', $(cat "$work/rc")"
fi

# ---- HEAPHOOK_RECORD=usage,counts: exact numbers ----------------------------
# The probe's "usage N" makes N x malloc(1000), keeps them, frees N/2, and
# does nothing else that allocates; "usage 0" is the baseline. The usage
# line: "heaphook: heap usage (pid P): peak A bytes; at exit B bytes in C
# blocks; D bytes allocated in E allocations".
usage_numbers() { # FILE -> "A B C D E"
  sed -n 's/^heaphook: heap usage (pid [0-9]*): peak \([0-9]*\) bytes; at exit \([0-9]*\) bytes in \([0-9]*\) blocks; \([0-9]*\) bytes allocated in \([0-9]*\) allocations$/\1 \2 \3 \4 \5/p' "$1"
}
count_of() { # FILE FUNCTION -> the count printed for FUNCTION
  sed -n "s/^  $2 *\([0-9]*\)\$/\1/p" "$1"
}
for setup in "libheaphook|$heaphook|" "libheaphook tlsf|$heaphook|HEAPHOOK_ALLOCATOR=tlsf" "libpreloaded_tlsf|$tlsf|"; do
  IFS='|' read -r label lib extra <<<"$setup"
  declare -A got=()
  bad=0
  for n in 0 10; do
    rm -rf "$work/u$n" && mkdir "$work/u$n"
    run "$lib" $extra HEAPHOOK_RECORD=usage,counts HEAPHOOK_LOG="$work/u$n/u.%p.log" -- usage $n
    log=$(ls "$work/u$n"/u.*.log 2>/dev/null)
    nums=$([ -n "$log" ] && usage_numbers "$log")
    if [ "$(cat "$work/rc")" != 0 ] || [ -s "$work/err" ] || [ -z "$nums" ]; then
      fail "$label usage $n: status $(cat "$work/rc"), stderr '$(head -c 200 "$work/err")', log: $(cat $log 2>/dev/null | head -3)"
      bad=1
      continue
    fi
    got[$n]="$nums $(count_of "$log" malloc) $(count_of "$log" free)"
  done
  [ $bad = 1 ] && continue
  read -r p0 b0 k0 t0 a0 m0 f0 <<<"${got[0]}"
  read -r p1 b1 k1 t1 a1 m1 f1 <<<"${got[10]}"
  diffs="peak +$((p1 - p0)), at exit +$((b1 - b0)) bytes in +$((k1 - k0)) blocks, +$((t1 - t0)) bytes in +$((a1 - a0)) allocations, malloc +$((m1 - m0)), free +$((f1 - f0))"
  want="peak +10000, at exit +5000 bytes in +5 blocks, +10000 bytes in +10 allocations, malloc +10, free +5"
  if [ "$diffs" = "$want" ]; then
    ok "$label HEAPHOOK_RECORD=usage,counts: 10 x malloc(1000), 5 freed: $diffs"
  else
    fail "$label HEAPHOOK_RECORD=usage,counts: 10 x malloc(1000), 5 freed, compared with no allocation:
  expected $want
  got      $diffs
  (baseline: ${got[0]}; with the blocks: ${got[10]})"
  fi
  unset got
done

finish
