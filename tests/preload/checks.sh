# Sourced by the preload tests' scripts: a work directory removed at exit,
# ok/fail counted, and finish, which says the counts and exits with the
# verdict.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}
