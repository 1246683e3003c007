#!/bin/sh
# `heaphook report` and `heaphook diff` end to end:
#   report_test.sh CASE HEAPHOOK REPORT_PROG WORKDIR
# Each CASE runs in a fresh WORKDIR/CASE; failures print what was expected.
# report_prog's allocations are known exactly (see report_prog.c).
set -u
case_name=$1 hh=$2 prog=$3 work=$4/$1
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; echo "--- $1:" >&2; cat "$1" >&2; }; }
expect_rc() { [ "$1" = "$2" ] || fail "$3: exit status $2, want $1"; }
# json_check FILE PYTHON: runs PYTHON with `d` the parsed FILE; it raises on failure
json_check() {
  python3 - "$1" "$2" <<'PY' || fail "$1: JSON check failed (above)"
import json, sys
d = json.load(open(sys.argv[1]))
def site(fn, ranking=None):
    """the one site whose innermost function is fn (all rankings searched)"""
    found = {}
    for name, r in d["top"].items():
        if ranking and name != ranking:
            continue
        for s in r["sites"]:
            if s["function"] == fn:
                found[s["stack_id"]] = s
    assert len(found) == 1, "want one site in %s, got %d" % (fn, len(found))
    return list(found.values())[0]
def eq(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))
exec(sys.argv[2])
PY
}

run_prog() { # run_prog TRACE ARGS...
  out=$1
  shift
  "$hh" run -o "$out" -- "$prog" "$@" 2>run.err || { fail "heaphook run $*"; cat run.err >&2; }
}

case $case_name in
  json_exact)
    run_prog t.hhtrace 3 threads
    "$hh" report --json --top 0 t.hhtrace >r.json 2>err
    expect_rc 0 $? "report --json"
    json_check r.json '
eq("schema", d["schema"], "heaphook-report")
eq("version", d["version"], 1)
eq("status", d["trace"]["status"], "ok")
leaky = site("leaky")
eq("leaky leaked_bytes", leaky["leaked_bytes"], 3000)
eq("leaky leaked_blocks", leaky["leaked_blocks"], 3)
eq("leaky allocations", leaky["allocations"], 3)
eq("leaky peak_bytes", leaky["peak_bytes"], 3000)
peaky = site("peaky")
eq("peaky peak_bytes", peaky["peak_bytes"], 50000)
eq("peaky peak_blocks", peaky["peak_blocks"], 5)
eq("peaky leaked_bytes", peaky["leaked_bytes"], 0)
eq("peaky allocations", peaky["allocations"], 5)
eq("peaky location", peaky["location"].split(":")[0], "report_prog.c")
eq("peaky caller", peaky["frames"][1]["function"], "main")
temp = site("temp")
eq("temp temporary", temp["temporary"], 100)
eq("temp allocations", temp["allocations"], 100)
eq("temp bytes", temp["bytes"], 6400)
eq("temp peak_bytes", temp["peak_bytes"], 0)
worker = site("worker")
eq("worker allocations", worker["allocations"], 20)
eq("worker bytes", worker["bytes"], 10000)
eq("worker leaked", worker["leaked_bytes"], 0)
t = d["totals"]
eq("total temporary", t["temporary"], 100)
# every site of the trace is listed (--top 0): the per-site numbers add up
sites = {}
for r in d["top"].values():
    for s in r["sites"]:
        sites[s["stack_id"]] = s
eq("sum of peak_bytes", sum(s["peak_bytes"] for s in sites.values()), t["peak_bytes"])
eq("sum of peak_blocks", sum(s["peak_blocks"] for s in sites.values()), t["peak_blocks"])
eq("sum of leaked_bytes", sum(s["leaked_bytes"] for s in sites.values()), t["leaked_bytes"])
assert t["peak_bytes"] >= 53000, t
eq("peak ranking first", d["top"]["peak"]["sites"][0]["function"], "peaky")
eq("leaked ranking first", d["top"]["leaked"]["sites"][0]["function"], "leaky")
eq("temporary ranking", [s["function"] for s in d["top"]["temporary"]["sites"]], ["temp"])
th = {x["name"]: x for x in d["threads"]}
assert "worker-a" in th and "worker-b" in th, th.keys()
eq("worker-b allocations", th["worker-b"]["allocations"], 10)
eq("worker-b frees", th["worker-b"]["frees"], 10)
eq("worker-b bytes", th["worker-b"]["bytes"], 5000)
eq("worker-b peak_bytes", th["worker-b"]["peak_bytes"], 0)
eq("markers", [m["name"] for m in d["markers"]], ["peak phase", "done"])
m = d["markers"]
assert m[0]["time_ns"] <= t["peak_time_ns"] <= m[1]["time_ns"], (m, t["peak_time_ns"])
assert t["duration_ns"] >= m[1]["time_ns"]
h = {b["min_size_bytes"]: b for b in d["histogram"]}
eq("histogram 64..127", (h[64]["allocations"], h[64]["bytes"], h[64]["max_size_bytes"]), (100, 6400, 127))
eq("histogram 8192..", (h[8192]["allocations"], h[8192]["bytes"]), (5, 50000))
'
    # --top limits every list; the text report names the same sites
    "$hh" report --json --top 1 t.hhtrace >r1.json || fail "report --top 1"
    json_check r1.json 'assert all(len(r["sites"]) <= 1 for r in d["top"].values())'
    "$hh" report t.hhtrace >r.txt 2>err
    expect_rc 0 $? "report"
    expect_in r.txt "  peak           "
    expect_in r.txt "  #1 50000 bytes (48.8 KiB) in 5 blocks"
    expect_in r.txt "        peaky (report_prog.c:"
    expect_in r.txt "  #1 100 temporary of 100 allocations"
    expect_in r.txt "\"worker-b\""
    ;;
  text_golden)
    run_prog t.hhtrace 3
    "$hh" report --frames 2 --top 5 t.hhtrace >raw.txt 2>err
    expect_rc 0 $? "report"
    # what depends on the run: pid, paths, times, RSS, tids
    sed -e 's/^heaphook report: .* (pid [0-9]*)$/heaphook report: TRACE (pid PID)/' \
        -e 's/^command: .*hh_report_prog /command: hh_report_prog /' \
        -e 's/^  run time .*/  run time       TIME/' \
        -e 's/ blocks at [0-9.]* [mu]*s$/ blocks at TIME/' \
        -e '/^  peak RSS /d' \
        -e 's/(tid [0-9]*)/(tid TID)/' \
        -e 's/^  [0-9.]* [mu]*s  /  TIME  /' raw.txt >got.txt
    if ! diff -u "$here/golden/report_prog.txt" got.txt >&2; then
      fail "text report differs from golden/report_prog.txt (diff above; raw output in $work/raw.txt)"
    fi
    ;;
  text_singular)
    # counts of one in the singular: a histogram bucket of one allocation
    # (its bar still in line with the others'), one frame left out of a stack
    run_prog t.hhtrace 1 grow 1
    "$hh" report --frames 4 t.hhtrace >r.txt 2>err
    expect_rc 0 $? "report"
    grep -qx '        \.\.\. 1 more frame' r.txt || { fail "r.txt lacks '... 1 more frame'"; cat r.txt >&2; }
    expect_in r.txt "  512 - 1023 B                  1 allocation   #"
    if grep -q ' 1 allocations\| 1 more frames' r.txt; then fail "r.txt says a count of one in the plural"; fi
    ;;
  diff_leaks)
    run_prog a.hhtrace 3
    run_prog b.hhtrace 5
    "$hh" diff a.hhtrace b.hhtrace >d.txt 2>err
    expect_rc 0 $? "diff"
    expect_in d.txt "  peak bytes +2000 (3000 -> 5000), leaked bytes +2000 (3000 -> 5000), allocations +2 (3 -> 5), bytes allocated +2000 (3000 -> 5000)"
    expect_in d.txt "        leaky (report_prog.c:"
    expect_in d.txt "grew (1 call site):"
    expect_in d.txt "shrank (0 call sites)"
    expect_in d.txt "totals: peak bytes +2000 ("
    "$hh" diff --json a.hhtrace b.hhtrace >d.json 2>err
    expect_rc 0 $? "diff --json"
    json_check d.json '
eq("schema", d["schema"], "heaphook-diff")
rows = [s for s in d["sites"] if s["key"].endswith(";leaky")]
eq("leaky rows", len(rows), 1)
r = rows[0]
eq("leaky delta", (r["delta"]["leaked_bytes"], r["delta"]["peak_bytes"], r["delta"]["allocations"], r["delta"]["leaked_blocks"]), (2000, 2000, 2, 2))
eq("leaky a", r["a"]["leaked_bytes"], 3000)
eq("leaky b", r["b"]["leaked_bytes"], 5000)
eq("totals delta", d["totals"]["delta"]["leaked_bytes"], 2000)
eq("changed", d["sites_changed"], 1)
'
    # the other way round: it shrank
    "$hh" diff b.hhtrace a.hhtrace >r.txt 2>err
    expect_in r.txt "  peak bytes -2000 (5000 -> 3000), leaked bytes -2000 (5000 -> 3000)"
    expect_in r.txt "shrank (1 call site):"
    # Only temporary allocations changed (the same blocks two at a time):
    # the site was left out of the diff, which said nothing changed.
    run_prog p.hhtrace 3 pairs
    "$hh" diff a.hhtrace p.hhtrace >t.txt 2>err
    expect_rc 0 $? "diff pairs"
    expect_in t.txt "totals: peak bytes +0 (53000 -> 53000), leaked bytes +0 (3000 -> 3000), allocations +0 (108 -> 108), bytes allocated +0 (59400 -> 59400), temporary -100 (100 -> 0)"
    expect_in t.txt "shrank (1 call site):"
    expect_in t.txt "  peak bytes +0 (0 -> 0), leaked bytes +0 (0 -> 0), allocations +0 (100 -> 100), bytes allocated +0 (6400 -> 6400), temporary -100 (100 -> 0)"
    expect_in t.txt "        temp (report_prog.c:"
    "$hh" diff --json a.hhtrace p.hhtrace >t.json 2>err
    json_check t.json '
eq("changed", (d["sites_changed"], d["sites_grew"], d["sites_shrank"]), (1, 0, 1))
r = d["sites"][0]
assert r["key"].endswith(";temp"), r["key"]
eq("temp delta", r["delta"], {"allocations": 0, "bytes": 0, "temporary": -100, "peak_bytes": 0, "leaked_bytes": 0, "leaked_blocks": 0})
'
    # --top N is per list, grew and shrank, in the JSON as in the text:
    # with --top 1 the text showed leaky (grew) and temp (shrank), the
    # JSON the top 1 of both together, leaky alone.
    run_prog q.hhtrace 5 pairs
    "$hh" diff --top 1 a.hhtrace q.hhtrace >q.txt 2>err
    expect_rc 0 $? "diff --top 1"
    expect_in q.txt "grew (1 call site):"
    expect_in q.txt "shrank (1 call site):"
    "$hh" diff --json --top 1 a.hhtrace q.hhtrace >q.json 2>err
    expect_rc 0 $? "diff --json --top 1"
    json_check q.json '
eq("changed", (d["sites_changed"], d["sites_grew"], d["sites_shrank"]), (2, 1, 1))
eq("sites", [s["key"].split(";")[-1] for s in d["sites"]], ["leaky", "temp"])
'
    # A sampled trace knows no temporary allocations (all 0): against a
    # full one, that is no change. Sampled every 2 bytes, each of this
    # program's blocks is drawn (p = 1 - e^-32 at 64 bytes) with its own
    # size as weight, so every other number is exact: nothing changed
    # (the temp site was listed as shrunk, every number shown +0).
    "$hh" run -o s2.hhtrace --sample 2 -- "$prog" 3 2>run.err || fail "run --sample 2"
    "$hh" diff --json a.hhtrace s2.hhtrace >s2.json 2>err
    json_check s2.json '
eq("temporary known", (d["a"]["temporary_known"], d["b"]["temporary_known"]), (True, False))
eq("changed", (d["sites_changed"], d["sites"]), (0, []))
'
    # A trace cut inside its first chunk is a run with nothing in it yet,
    # reported as cut short (it was an error, and report --json printed
    # nothing); diff says which of its traces is not whole.
    head -c 80 a.hhtrace >cut.hhtrace
    "$hh" report --json cut.hhtrace >cut.json 2>err
    expect_rc 1 $? "report --json of a trace cut in its first chunk"
    expect_in err "heaphook report: cut.hhtrace: trace cut short after 0 chunks"
    json_check cut.json '
eq("status", d["trace"]["status"], "cut_short")
eq("events", (d["totals"]["events"], d["totals"]["allocations"]), (0, 0))
'
    # (an empty list says "none", as each list does: it said "threads (0):")
    "$hh" report cut.hhtrace >cut.txt 2>/dev/null
    for list in threads markers; do
      grep -qx "$list: none" cut.txt || fail "the report of an empty run lacks the line '$list: none': $(cat cut.txt)"
    done
    "$hh" diff a.hhtrace cut.hhtrace >c.txt 2>err
    expect_rc 1 $? "diff against a trace cut in its first chunk"
    expect_in err "heaphook diff: B (cut.hhtrace): trace cut short after 0 chunks; the rest of the run is missing"
    expect_in c.txt "error: B: trace cut short after 0 chunks"
    # a trace against itself: nothing changed
    "$hh" diff a.hhtrace a.hhtrace >s.txt 2>err
    expect_rc 0 $? "diff A A"
    expect_in s.txt "grew (0 call sites)"
    expect_in s.txt "shrank (0 call sites)"
    # Only reallocs added: the totals count allocation calls as the sites
    # do (they counted ALLOC records: "allocations +0" above a site's +5).
    run_prog g5.hhtrace 3 grow 5
    run_prog g10.hhtrace 3 grow 10
    "$hh" diff g5.hhtrace g10.hhtrace >g.txt 2>err
    expect_rc 0 $? "diff grow"
    expect_in g.txt "totals: peak bytes +0 (53000 -> 53000), leaked bytes +0 (3000 -> 3000), allocations +5 ("
    "$hh" diff --json g5.hhtrace g10.hhtrace >g.json 2>err
    json_check g.json '
rows = [s for s in d["sites"] if s["key"].endswith(";grower")]
eq("grower rows", len(rows), 1)
eq("grower delta", rows[0]["delta"]["allocations"], 5)
eq("totals delta", d["totals"]["delta"]["allocations"], 5)
eq("totals a", d["totals"]["a"]["allocations"], 3 + 100 + 5 + 6)
'
    ;;
  bad_traces)
    run_prog t.hhtrace 3
    size=$(wc -c <t.hhtrace)
    # cut inside the last chunk: what came before is reported, exit 1
    head -c $((size - 5)) t.hhtrace >cut.hhtrace
    "$hh" report cut.hhtrace >cut.txt 2>cut.err
    expect_rc 1 $? "report on a trace cut short"
    expect_in cut.txt "error: trace cut short after "
    expect_in cut.err "heaphook report: cut.hhtrace: trace cut short after "
    # there was no exit: what is live where the trace ends is not "leaked at
    # exit" (as run and plot say it)
    expect_in cut.txt "call sites by bytes still in use where the trace ends"
    grep -qE '^  leaked .* \(still in use where the trace ends\)$' cut.txt ||
      fail "the totals' leaked line of a trace cut short: $(grep '^  leaked' cut.txt)"
    grep -q 'leaked at exit' cut.txt && fail "the report of a trace cut short speaks of the exit"
    # nor is there an exit where a process exec'd another program
    "$hh" run -o ex.hhtrace -- sh -c 'exec true' 2>/dev/null || fail "heaphook run sh -c 'exec true'"
    "$hh" report ex.hhtrace >ex.txt 2>&1
    expect_rc 0 $? "report of a trace that ends at an exec"
    expect_in ex.txt "call sites by bytes still allocated at the exec"
    grep -q 'leaked at exit' ex.txt && fail "the report of a trace that ends at an exec speaks of the exit"
    "$hh" report --json cut.hhtrace >cut.json 2>/dev/null
    expect_rc 1 $? "report --json on a trace cut short"
    json_check cut.json 'eq("status", d["trace"]["status"], "cut_short"); assert "cut short" in d["trace"]["message"]'
    # cut between chunks (before the END chunk): no end, a warning, exit 0
    python3 - t.hhtrace noend.hhtrace <<'PY' || fail "making noend.hhtrace"
import struct, sys
b = open(sys.argv[1], "rb").read()
off, starts = 64, []
while off < len(b):
    starts.append(off)
    off += 24 + struct.unpack_from("<I", b, off + 8)[0]
open(sys.argv[2], "wb").write(b[:starts[-1]])
# a byte flipped in the payload of the first chunk: damaged
d = bytearray(b)
d[starts[0] + 24 + 3] ^= 0x40
open("damaged.hhtrace", "wb").write(bytes(d))
PY
    "$hh" report noend.hhtrace >noend.txt 2>noend.err
    expect_rc 0 $? "report on a trace without END"
    expect_in noend.txt "warning: trace has no end record"
    "$hh" report damaged.hhtrace >dmg.txt 2>dmg.err
    rc=$?
    expect_rc 1 $rc "report on a damaged trace"
    expect_in dmg.err "heaphook report: damaged.hhtrace: trace damaged at byte offset 64"
    printf 'not a trace at all, just some text\n' >text.hhtrace
    "$hh" report text.hhtrace >/dev/null 2>err
    expect_rc 1 $? "report on a text file"
    expect_in err "heaphook report: text.hhtrace: not a heaphook trace"
    : >empty.hhtrace
    "$hh" report empty.hhtrace >/dev/null 2>err
    expect_rc 1 $? "report on an empty file"
    expect_in err "empty file, not a heaphook trace"
    "$hh" report missing.hhtrace >/dev/null 2>err
    expect_rc 1 $? "report on a missing file"
    expect_in err "cannot open missing.hhtrace"
    "$hh" diff t.hhtrace cut.hhtrace >/dev/null 2>err
    expect_rc 1 $? "diff with a trace cut short"
    expect_in err "trace cut short"
    # every prefix of the trace: a message and exit 0/1, never a crash
    i=0
    while [ $i -lt "$size" ]; do
      head -c $i t.hhtrace >p.hhtrace
      "$hh" report --json p.hhtrace >/dev/null 2>p.err
      rc=$?
      [ $rc -le 1 ] || { fail "report on the first $i bytes: exit status $rc"; cat p.err >&2; }
      i=$((i + 97))
    done
    ;;
  usage)
    "$hh" report >/dev/null 2>err
    expect_rc 2 $? "report without a trace"
    expect_in err "heaphook report: no trace given"
    "$hh" report --help >out 2>&1
    expect_rc 0 $? "report --help"
    expect_in out "usage: heaphook report [--json] [--top N]"
    "$hh" report --top x t.hhtrace >/dev/null 2>err
    expect_rc 2 $? "report --top x"
    "$hh" report --bogus t.hhtrace >/dev/null 2>err
    expect_rc 2 $? "report --bogus"
    expect_in err "unknown option --bogus"
    "$hh" diff only-one.hhtrace >/dev/null 2>err
    expect_rc 2 $? "diff with one trace"
    expect_in err "two traces wanted"
    "$hh" diff --help >out 2>&1
    expect_rc 0 $? "diff --help"
    expect_in out "usage: heaphook diff"
    "$hh" help report >out 2>&1
    expect_in out "usage: heaphook report"
    ;;
  sampled)
    "$hh" run -o s.hhtrace --sample 1 -- "$prog" 3 2>run.err || fail "run --sample 1"
    "$hh" report --json --top 0 s.hhtrace >s.json 2>err
    expect_rc 0 $? "report on a sampled trace"
    # a period of 1 byte samples every allocation with weight = size
    json_check s.json '
eq("sampled", d["trace"]["sampled"], True)
leaky = site("leaky")
eq("leaky leaked_bytes", leaky["leaked_bytes"], 3000)
eq("leaky leaked_blocks", leaky["leaked_blocks"], 3)
eq("peaky peak_bytes", site("peaky")["peak_bytes"], 50000)
eq("temp allocations", site("temp")["allocations"], 100)
# a period of 1 records every allocation: temporary allocations are known
eq("temporary known", d["trace"]["temporary_known"], True)
eq("temp temporary", site("temp")["temporary"], 100)
'
    # Any other period leaves the allocations between a sample and its free
    # out: no free is known to follow its allocation at once. Before, every
    # sampled block freed before its thread's next sample was "temporary"
    # (98% of a churn's allocations, against 0.01% in its full trace).
    "$hh" run -o s4.hhtrace --sample 4K -- "$prog" 3 2>run.err || fail "run --sample 4K"
    "$hh" report --json --top 0 s4.hhtrace >s4.json 2>err
    expect_rc 0 $? "report --json on a sampled trace (4K)"
    json_check s4.json '
eq("temporary known", d["trace"]["temporary_known"], False)
eq("total temporary", d["totals"]["temporary"], 0)
assert all(s["temporary"] == 0 for r in d["top"].values() for s in r["sites"]), d["top"]
'
    "$hh" report s4.hhtrace >s4.txt 2>err
    expect_rc 0 $? "report on a sampled trace (4K)"
    expect_in s4.txt "  temporary      not known: a sampled trace does not record the allocations between a sample and its free"
    # The peak is the highest of the estimates, which reads high on a heap
    # that rises and falls (1.47x for 51 rises of 16 MB at 512K): said, as
    # the report presented it as sound as the unbiased rest.
    expect_in s4.txt "the peak is the highest the estimate reached, and reads high when the heap rose and fell again and again"
    "$hh" run -o s4b.hhtrace --sample 4K -- "$prog" 3 2>run4.err || fail "run --sample 4K"
    expect_in run4.err "(the highest estimate: reads high when the heap rose and fell again and again)"
    grep -q "call sites by temporary allocations" s4.txt && fail "s4.txt ranks call sites by temporary allocations"
    "$hh" flame --cost temporary s4.hhtrace >flame.txt 2>err
    expect_rc 1 $? "flame --cost temporary on a sampled trace"
    expect_in err "heaphook flame: --cost temporary: s4.hhtrace is a sampled trace, which does not record the allocations between a sample and its free"
    "$hh" diff --json s.hhtrace s4.hhtrace >d.json 2>err
    expect_rc 0 $? "diff --json of two sampled traces"
    json_check d.json '
eq("a temporary_known", d["a"]["temporary_known"], True)
eq("b temporary_known", d["b"]["temporary_known"], False)
eq("b temporary", d["totals"]["b"]["temporary"], 0)
eq("a sampled", d["a"]["sampled"], True)
eq("a sample_bytes", d["a"]["sample_bytes"], 1)
eq("b sample_bytes", d["b"]["sample_bytes"], 4096)
'
    # The diff says which traces are sampled, as the report does (it said
    # nothing, and showed estimates beside a full trace's exact numbers).
    run_prog full.hhtrace 3
    "$hh" diff full.hhtrace s4.hhtrace >d.txt 2>err
    expect_rc 0 $? "diff of a full and a sampled trace"
    expect_in d.txt "B: sampled trace (one sample per 4096 bytes on average): its bytes and counts are estimates"
    grep -q "^A: sampled" d.txt && fail "d.txt calls the full trace A sampled"
    "$hh" diff --json full.hhtrace s4.hhtrace >f.json 2>err
    json_check f.json '
eq("a sampled", d["a"]["sampled"], False)
eq("a sample_bytes", d["a"]["sample_bytes"], 0)
eq("b sampled", d["b"]["sampled"], True)
'
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac

[ $fails -eq 0 ] || { echo "$fails failure(s) in $case_name" >&2; exit 1; }
echo "ok: $case_name"
