# Sourced by the bash preload tests' scripts, after checks.sh (bash: arrays).
# run_clean PROGRAM LIBRARY VAR=VALUE... -- ARGS...: PROGRAM preloaded with
# LIBRARY, in a heaphook environment cleared of the caller's settings but
# VAR=VALUE...; stdout, stderr and status in $work/{out,err,rc}.
run_clean() {
  local prog=$1 lib=$2
  shift 2
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  env -u HEAPHOOK_ALLOCATOR -u HEAPHOOK_RECORD -u HEAPHOOK_STATS -u HEAPHOOK_LOG \
    -u INITIAL_MEMPOOL_SIZE -u ADDITIONAL_MEMPOOL_SIZE -u HEAPHOOK_TLSF_MLOCK \
    LD_PRELOAD="$lib" "${vars[@]}" "$prog" "$@" >"$work/out" 2>"$work/err"
  echo $? >"$work/rc"
}
