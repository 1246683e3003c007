#!/bin/sh
# setup.make_build_dir: make check refuses a build directory whose path has a
# space or a colon (README, "Set up"), in one line that names it and says
# how to build elsewhere, with status 2, before it installs or builds
# anything. A colon stopped make itself: "target pattern contains no '%'".
# usage: make_build_dir.sh SOURCE_DIR
src=$1
failed=0
for dir in "/nonexistent/heaphook a" /nonexistent/heaphook:a; do
  # (a make of its own: not the jobserver of a make check this runs under)
  out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" --no-print-directory check BUILD="$dir" 2>&1)
  rc=$?
  if [ $rc = 2 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -le 2 ] &&
    printf '%s\n' "$out" | grep -qF "build directory $dir has a" &&
    printf '%s\n' "$out" | grep -qF "make check BUILD=/tmp/heaphook-build"; then
    echo "ok BUILD='$dir': refused"
  else
    echo "FAIL BUILD='$dir': want status 2 and the line naming it, got status $rc: $out"
    failed=1
  fi
done
exit $failed
