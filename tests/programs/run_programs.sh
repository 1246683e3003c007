#!/bin/bash
# Runs real programs with and without a heaphook preload library and checks
# that stdout, stderr and the exit status are byte-identical.
# usage: run_programs.sh LIBRARY [VAR=VALUE ...]
set -u
lib=$1
shift
work=$(mktemp -d)
# Recorder reports go to files, so that stderr can be compared.
export HEAPHOOK_LOG_DIR=$work/logs
mkdir -p "$HEAPHOOK_LOG_DIR"
hook_env=("LD_PRELOAD=$lib" "HEAPHOOK_LOG=$HEAPHOOK_LOG_DIR/hh.%p.log" "$@")
# The tracer's files go to $work/traces, not into the programs' directories.
case " $* " in
  *" HEAPHOOK_RECORD="*trace*) mkdir -p "$work/traces" && hook_env+=("HEAPHOOK_OUTPUT=$work/traces/t.%p.hhtrace") ;;
esac
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failed=0
passed=0

# A fixed identity and clock so that git's hashes are the same in both runs.
export HOME=$work/home GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=heaphook GIT_AUTHOR_EMAIL=hh@example.org GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=heaphook GIT_COMMITTER_EMAIL=hh@example.org GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
mkdir -p "$HOME"

seq 1 60000 | awk '{ printf "%08x line %d %s\n", ($1 * 2654435761) % 4294967296, $1, ($1 % 7 == 0 ? "seven" : "other") }' >input.txt

cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
  char *s = malloc(64);
  strcpy(s, "compiled under the hook");
  puts(s);
  free(s);
  return 0;
}
C

# name | shell command run in a fresh directory (the variable $IN is input.txt)
programs=(
  "python3|/usr/bin/python3 -c 'import sys,json,collections,re
d=collections.Counter(re.findall(r\"\\w+\", open(sys.argv[1]).read()))
print(json.dumps(d.most_common(5)))
print(sum(len(str(i)*3) for i in range(200000)))
x=[{\"k\":i,\"v\":[i]*5} for i in range(100000)]; print(len(json.dumps(x)))' \"\$IN\""
  "perl|perl -e 'my %h; open(my \$f, \"<\", \$ARGV[0]) or die; while(<\$f>){ \$h{\$_}++ for /(\\w+)/g } print scalar(keys %h), \"\\n\"; print join(\",\", map {\"\$_=\$h{\$_}\"} (sort keys %h)[0..9]), \"\\n\"' \"\$IN\""
  "git|git init -q repo && cd repo && cp \"\$IN\" a.txt && git add a.txt && git commit -qm first && sed -i 's/seven/SEVEN/' a.txt && git commit -qam second && git log --stat && git fsck --full 2>&1 && git gc -q && git count-objects -v | grep -v size"
  "sqlite3|sqlite3 db.sqlite 'create table t(k integer primary key, v text); with recursive c(i) as (select 1 union all select i+1 from c where i<50000) insert into t(v) select printf(\"%08d-%s\", i*7919 % 50000, hex(i * 31337)) from c; create index iv on t(v); select count(*), min(v), max(v) from t; select v from t order by v desc limit 3; select substr(v,1,2) p, count(*) from t group by p order by p limit 5;'"
  "bash|bash -c 'declare -A m; s=\"\"; for i in \$(seq 1 20000); do m[k\$((i % 977))]+=x; s+=\"\$i,\"; done; echo \${#m[@]} \${#s}; arr=(\$(seq 1 5000)); echo \${arr[@]:4990}'"
  "sort|sort -k3,3 -k1,1 \"\$IN\" | md5sum && sort -n -r -k3 \"\$IN\" | head -3 && sort -u -k4 \"\$IN\""
  "xz|xz -T1 -6 -c \"\$IN\" >in.xz && md5sum in.xz && xz -d -c in.xz | md5sum"
  "awk|awk '{ c[\$4]++; n += length(\$0) } END { for (k in c) print k, c[k] | \"sort\"; print n }' \"\$IN\""
  "gcc|gcc -O2 -Wall -o prog prog.c && ./prog && md5sum prog.c"
)

for entry in "${programs[@]}"; do
  name=${entry%%|*}
  cmd=${entry#*|}
  for mode in plain hooked; do
    rm -rf "run.$mode" && mkdir "run.$mode" && cp input.txt prog.c "run.$mode/"
    if [ $mode = plain ]; then
      (cd "run.$mode" && IN=$work/run.$mode/input.txt bash -c "$cmd" >../out.$mode 2>../err.$mode; echo $? >../rc.$mode)
    else
      (cd "run.$mode" && IN=$work/run.$mode/input.txt env "${hook_env[@]}" bash -c "$cmd" >../out.$mode 2>../err.$mode; echo $? >../rc.$mode)
    fi
  done
  if cmp -s out.plain out.hooked && cmp -s err.plain err.hooked && cmp -s rc.plain rc.hooked; then
    if [ "$(cat rc.plain)" != 0 ] || [ ! -s out.plain ]; then
      echo "FAIL $name: the un-hooked run itself failed (status $(cat rc.plain)):"; head -5 err.plain
      failed=$((failed + 1))
    else
      echo "ok $name ($(wc -c <out.plain) bytes of output identical)"
      passed=$((passed + 1))
    fi
  else
    echo "FAIL $name: output differs under ${hook_env[*]} (status $(cat rc.plain) vs $(cat rc.hooked))"
    diff <(cat out.plain err.plain) <(cat out.hooked err.hooked) | head -10
    failed=$((failed + 1))
  fi
done
# Recorders asked for (HEAPHOOK_RECORD) must have written their reports.
case " $* " in
  *" HEAPHOOK_RECORD="?*)
    if [ -z "${HEAPHOOK_LOG_DIR:-}" ] || ! ls "$HEAPHOOK_LOG_DIR"/hh.*.log >/dev/null 2>&1; then
      echo "FAIL reports: no recorder report was written"
      failed=$((failed + 1))
    else
      echo "ok reports ($(ls "$HEAPHOOK_LOG_DIR"/hh.*.log | wc -l) report files)"
      passed=$((passed + 1))
    fi ;;
esac
# Traces (HEAPHOOK_RECORD=trace): one per process, each readable; with
# HH_TRACE_DUMP (the tracer's test tool) none damaged or cut short.
if [ -d "$work/traces" ]; then
  n=$(ls "$work/traces" | wc -l)
  bad=0
  if [ -n "${HH_TRACE_DUMP:-}" ]; then
    for t in "$work"/traces/*; do
      st=$("$HH_TRACE_DUMP" "$t" | grep -E '^(status|open-error)')
      case $st in
        "status OK "* | "status NO_END "*) ;;
        *) echo "FAIL trace $(basename "$t"): $st"; bad=$((bad + 1)) ;;
      esac
    done
  fi
  if [ "$n" -gt 0 ] && [ $bad = 0 ]; then
    echo "ok traces ($n trace files)"
    passed=$((passed + 1))
  else
    echo "FAIL traces: $n trace files, $bad unreadable"
    failed=$((failed + 1))
  fi
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
