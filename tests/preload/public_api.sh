#!/bin/sh
# heaphook.h's functions called by their plain names (public_api.c), built as
# C and as C++: without heaphook they give NULL and -1 and do nothing, and
# evaluate their arguments; under heaphook they answer, and the markers reach
# the trace.
# Usage: public_api.sh LIBHEAPHOOK HEAPHOOK_CLI PROGRAM_C PROGRAM_CXX
lib=$1 cli=$2
. "$(dirname "$0")/checks.sh"
for prog in "$3" "$4"; do
  name=$(basename "$prog")
  expect() { # WHAT WANT COMMAND...
    local what=$1 want=$2 got
    shift 2
    got=$("$@" 2>&1)
    if [ "$got" = "$want" ]; then ok "$name $what: $got"; else fail "$name $what: got '$got', expected '$want'"; fi
  }
  expect "without heaphook" "owner=(null) counts=-1 evaluated=4" "$prog"
  expect "counts recorder" "owner=libc counts=13 evaluated=4" \
    env LD_PRELOAD="$lib" HEAPHOOK_RECORD=counts HEAPHOOK_LOG=/dev/null "$prog"
  expect "traced" "owner=libc counts=-1 evaluated=4" \
    sh -c '"$0" run -o "$1" -- "$2" 2>/dev/null' "$cli" "$work/$name.hh" "$prog"
  markers=$("$cli" dump "$work/$name.hh" | sed -n 's/^marker .* name="\(.*\)"$/\1/p' | tr '\n' ' ')
  if [ "$markers" = "public-api public-api-macro " ]; then
    ok "$name: markers in the trace: $markers"
  else
    fail "$name: markers in the trace '$markers', expected 'public-api public-api-macro '"
  fi
done
finish
