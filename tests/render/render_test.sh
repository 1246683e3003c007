#!/bin/sh
# End-to-end tests of `heaphook plot`, `flame` and `export` on a traced
# program whose allocations are known (named_allocs.c):
#   render_test.sh CASE HEAPHOOK NAMED_ALLOCS WORKDIR
# Each output is checked by what reads it: python3's xml and json modules
# (check_outputs.py), ms_print, protoc --decode_raw, pdftotext.
set -u
case_name=$1 hh=$2 prog=$3 work=$4/$1
here=$(cd "$(dirname "$0")" && pwd)
check() { python3 "$here/check_outputs.py" "$@"; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_rc() { [ "$1" = "$2" ] || fail "$3: exit status $2, want $1"; }
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; echo "--- $1:" >&2; head -c 4000 "$1" >&2; }; }
# need TOOL PACKAGE: the tool must be installed (scripts/deps.sh check installs it)
need() { command -v "$1" >/dev/null 2>&1 || { fail "$1 not found (Debian package $2: scripts/deps.sh check)"; exit 1; }; }

"$hh" run -o t.hhtrace -- "$prog" 2>run.err || { fail "heaphook run"; cat run.err >&2; exit 1; }

# A sampled trace: its numbers are estimates, which every file written from
# it says (they showed them as exact; only the report and the HTML page said
# it). sampled_note FILE: FILE has the note.
sampled_trace() {
  "$hh" run --sample 1K -o s.hhtrace -- "$prog" 2>run-s.err || { fail "heaphook run --sample"; cat run-s.err >&2; }
}
sampled_note="sampled trace (one sample per 1024 bytes on average): bytes and counts are estimates"

# The lines of named_allocs.c's functions, from main on (the frames below
# main, _start and libc's, depend on the system).
mine() { grep ';main;' "$1" | sed 's/^.*;main;/main;/' | sort; }

case $case_name in
  flame_collapsed)
    for cost in peak allocations temporary leaked; do
      "$hh" flame --cost $cost -o $cost.folded t.hhtrace 2>$cost.err
      expect_rc 0 $? "flame --cost $cost"
      mine $cost.folded >$cost.mine
    done
    printf 'main;leaky 3000\nmain;peak_holder 8192\n' >peak.want
    printf 'main;leaky 3\nmain;peak_holder 4\nmain;temporaries 5\n' >allocations.want
    printf 'main;temporaries 5\n' >temporary.want
    printf 'main;leaky 3000\n' >leaked.want
    for cost in peak allocations temporary leaked; do
      diff $cost.want $cost.mine >&2 || { fail "flame --cost $cost differs (want, got above)"; cat $cost.folded >&2; }
    done
    # the format: "frame;frame;... N", no allocator frames, outermost first
    grep -qvE '^[^ ;]+(;[^;]+)* [0-9]+$' allocations.folded && fail "a line not in the collapsed format"
    grep -qE '(^|;)(malloc|free|calloc|realloc|operator new)[ ;]' allocations.folded && fail "an allocator frame"
    # the default cost is peak, the default output standard output
    "$hh" flame t.hhtrace >default.folded
    cmp -s default.folded peak.folded || fail "default flame output is not --cost peak"
    "$hh" flame --cost nonsense t.hhtrace 2>err
    expect_rc 2 $? "flame --cost nonsense"
    expect_in err 'unknown cost "nonsense"'
    grep -q 'sampled' peak.err && fail "flame of a full trace says it is sampled: $(cat peak.err)"
    # a sampled trace's collapsed stacks are estimates, which the format has
    # no place to say: standard error says it (nothing did), the stacks stay
    # in the format
    sampled_trace
    "$hh" flame s.hhtrace >s.folded 2>s.err
    expect_rc 0 $? "flame of a sampled trace"
    expect_in s.err "heaphook flame: s.hhtrace: $sampled_note"
    grep -qvE '^[^ ;]+(;[^;]+)* [0-9]+$' s.folded && fail "a line not in the collapsed format (sampled)"
    "$hh" flame --svg -o s.svg s.hhtrace 2>s-svg.err
    [ -s s-svg.err ] && fail "flame --svg of a sampled trace wrote to standard error (its file says it): $(cat s-svg.err)"
    ;;
  flame_svg)
    "$hh" flame --svg --cost peak -o peak.svg t.hhtrace
    expect_rc 0 $? "flame --svg"
    need python3 python3
    check flame-svg peak.svg || fail "flame SVG"
    "$hh" flame --svg --cost allocations -o allocs.svg t.hhtrace
    check svg allocs.svg leaky peak_holder temporaries || fail "flame SVG (allocations)"
    grep -q 'sampled trace' peak.svg && fail "the flame graph of a full trace says it is sampled"
    # -o FILE.svg is the flame graph without --svg too (the collapsed
    # stacks' text went into the .svg file, which no viewer opens)
    "$hh" flame --cost peak -o implied.SVG t.hhtrace
    expect_rc 0 $? "flame -o implied.SVG"
    cmp -s peak.svg implied.SVG || fail "flame -o implied.SVG is not the SVG flame graph: $(head -c 200 implied.SVG)"
    sampled_trace
    "$hh" flame --svg -o s.svg s.hhtrace
    expect_rc 0 $? "flame --svg of a sampled trace"
    check svg s.svg || fail "flame SVG (sampled)"
    expect_in s.svg "$sampled_note"
    ;;
  plot)
    "$hh" plot t.hhtrace -o heap.png
    expect_rc 0 $? "plot png"
    head -c 24 heap.png | od -An -tx1 | tr -d ' \n' >png.head
    [ "$(cut -c1-16 png.head)" = 89504e470d0a1a0a ] || fail "heap.png has no PNG signature"
    # IHDR: width 1000 (0x3e8), height 560 (0x230), cairo's chart size
    [ "$(cut -c33-48 png.head)" = 000003e800000230 ] || fail "heap.png is not 1000x560: $(cat png.head)"
    "$hh" plot -o heap.pdf t.hhtrace
    expect_rc 0 $? "plot pdf"
    [ "$(head -c 5 heap.pdf)" = "%PDF-" ] || fail "heap.pdf does not start with %PDF-"
    tail -c 10 heap.pdf | grep -q '%%EOF' || fail "heap.pdf does not end with %%EOF"
    need pdftotext poppler-utils
    pdftotext heap.pdf heap.txt || fail "pdftotext"
    expect_in heap.txt "named_allocs"
    expect_in heap.txt "peak 10.9 KiB (11192 bytes)"
    expect_in heap.txt "2.9 KiB leaked at exit"
    # the peak's time as the report and the HTML page write times (it was
    # "at 0.000664234 s")
    grep -qE 'peak 10\.9 KiB at [0-9]+\.[0-9]{3} (us|ms|s);' heap.txt ||
      fail "the chart's subtitle lacks 'peak 10.9 KiB at N.NNN us|ms|s;': $(grep 'peak 10' heap.txt)"
    expect_in heap.txt "KiB"
    grep -qE '^time \((seconds|milliseconds|microseconds)\)$' heap.txt || fail "heap.pdf has no time axis title"
    grep -q 'error:\|warning:' heap.txt && fail "the chart of a whole trace has a note"
    # a trace cut short (its END chunk torn): the chart says so itself
    cp t.hhtrace cut.hhtrace && truncate -s -5 cut.hhtrace
    "$hh" plot -o cut.pdf cut.hhtrace 2>err
    expect_rc 1 $? "plot of a trace cut short"
    expect_in err "heaphook plot: cut.hhtrace: trace cut short after"
    pdftotext cut.pdf cut.txt || fail "pdftotext (cut short)"
    expect_in cut.txt "error: trace cut short after"
    expect_in cut.txt "still in use where the trace ends"
    grep -q 'leaked at exit' cut.txt && fail "the chart of a trace cut short speaks of the exit"
    # a process that exec'd another program: no exit either (as run says it)
    "$hh" run -o ex.hhtrace -- sh -c 'exec true' 2>run-ex.err || fail "heaphook run sh -c 'exec true'"
    "$hh" plot -o ex.pdf ex.hhtrace
    expect_rc 0 $? "plot of a trace that ends at an exec"
    pdftotext ex.pdf ex.txt || fail "pdftotext (exec)"
    expect_in ex.txt "still allocated at the exec"
    grep -q 'leaked at exit' ex.txt && fail "the chart of a trace that ends at an exec speaks of the exit"
    grep -q 'estimates' heap.txt && fail "the chart of a full trace says estimates"
    sampled_trace
    "$hh" plot -o s.pdf s.hhtrace
    expect_rc 0 $? "plot of a sampled trace"
    pdftotext s.pdf s.txt || fail "pdftotext (sampled)"
    expect_in s.txt "leaked at exit (estimates: a sampled trace)"
    "$hh" plot -o heap.svg t.hhtrace
    expect_rc 0 $? "plot svg"
    need python3 python3
    check svg heap.svg || fail "plot SVG"
    grep -q '<svg' heap.svg || fail "heap.svg has no <svg>"
    "$hh" plot -o heap.jpg t.hhtrace 2>err
    expect_rc 2 $? "plot -o heap.jpg"
    [ "$(wc -l <err)" = 1 ] || fail "plot -o heap.jpg: want a one-line error"
    expect_in err 'cannot tell the format of "heap.jpg"'
    [ -e heap.jpg ] && fail "plot wrote heap.jpg"
    "$hh" plot t.hhtrace 2>err
    expect_rc 2 $? "plot without -o"
    ;;
  export_massif)
    need ms_print valgrind
    "$hh" export --format massif -o massif.out t.hhtrace
    expect_rc 0 $? "export massif"
    ms_print massif.out >ms.txt 2>ms.err
    expect_rc 0 $? "ms_print"
    cat ms.err >&2
    # the peak snapshot's tree: 11192 bytes, peak_holder 8192, leaky 3000
    expect_in ms.txt "100.00% (11,192B) (heap allocation functions) malloc/new/new[], --alloc-fns, etc."
    expect_in ms.txt "73.20% (8,192B) 0x"
    expect_in ms.txt ": peak_holder (named_allocs.c:"
    expect_in ms.txt "26.80% (3,000B) 0x"
    expect_in ms.txt ": leaky (named_allocs.c:"
    grep -q 'Detailed snapshots: \[.*(peak)' ms.txt || fail "ms_print names no peak snapshot"
    # the graph's maximum is the peak
    grep -q '^    KB$' ms.txt || fail "ms_print's graph is not in KB"
    grep -q '^10.93^' ms.txt || fail "ms_print's graph does not top at 10.93 KB"
    grep -qE '^ *[0-9]+ +[0-9.,]+ +11,192 +11,192 +0 +0$' ms.txt || fail "no snapshot row of 11,192 bytes"
    grep -q 'error:\|warning:' ms.txt && fail "the massif file of a whole trace has a note"
    # a trace cut short: its massif file says so (ms_print shows it)
    cp t.hhtrace cut.hhtrace && truncate -s -5 cut.hhtrace
    "$hh" export --format massif -o cut.out cut.hhtrace 2>err
    expect_rc 1 $? "export massif of a trace cut short"
    ms_print cut.out >cut.txt 2>&1 || fail "ms_print (cut short)"
    grep -q '^Massif arguments: .*; error: trace cut short after [0-9]* chunks' cut.txt ||
      fail "ms_print of a trace cut short shows no note: $(head -5 cut.txt)"
    sampled_trace
    "$hh" export --format massif -o s.out s.hhtrace
    expect_rc 0 $? "export massif of a sampled trace"
    ms_print s.out >s.txt 2>&1 || fail "ms_print (sampled)"
    expect_in s.txt "Massif arguments:   heaphook trace (heap bytes requested; allocator overhead not recorded); $sampled_note"
    ;;
  export_pprof)
    need protoc protobuf-compiler
    "$hh" export --format pprof -o heap.pb.gz t.hhtrace
    expect_rc 0 $? "export pprof"
    gzip -t heap.pb.gz || fail "heap.pb.gz is not gzip"
    gzip -dc heap.pb.gz | protoc --decode_raw >raw.txt
    expect_rc 0 $? "protoc --decode_raw"
    expect_in raw.txt '"alloc_space"'
    expect_in raw.txt '"leaky"'
    check pprof raw.txt || fail "pprof samples"
    grep -q 'sampled trace' raw.txt && fail "the pprof file of a full trace says it is sampled"
    sampled_trace
    "$hh" export --format pprof -o s.pb.gz s.hhtrace
    expect_rc 0 $? "export pprof of a sampled trace"
    gzip -dc s.pb.gz | protoc --decode_raw >s.raw
    expect_in s.raw "\"$sampled_note\""
    "$hh" export --format pprof -o - t.hhtrace 2>err
    expect_rc 2 $? "export pprof to standard output"
    ;;
  export_speedscope)
    "$hh" export --format speedscope -o heap.speedscope.json t.hhtrace
    expect_rc 0 $? "export speedscope"
    need python3 python3
    check speedscope heap.speedscope.json || fail "speedscope JSON"
    "$hh" export -f speedscope -o - t.hhtrace >stdout.json
    cmp -s stdout.json heap.speedscope.json || fail "speedscope to standard output differs"
    grep -q 'sampled trace' heap.speedscope.json && fail "the speedscope file of a full trace says it is sampled"
    sampled_trace
    "$hh" export --format speedscope -o s.json s.hhtrace
    expect_rc 0 $? "export speedscope of a sampled trace"
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' s.json || fail "speedscope JSON (sampled)"
    expect_in s.json "($sampled_note)"
    ;;
  usage_errors)
    "$hh" export t.hhtrace -o x 2>err
    expect_rc 2 $? "export without --format"
    expect_in err "no format given"
    "$hh" export --format svg -o x t.hhtrace 2>err
    expect_rc 2 $? "export --format svg"
    expect_in err 'unknown format "svg"'
    "$hh" export --format massif t.hhtrace 2>err
    expect_rc 2 $? "export without -o"
    for cmd in plot flame export; do
      "$hh" $cmd --help >help || fail "$cmd --help"
      expect_in help "usage: heaphook $cmd"
    done
    "$hh" flame -o x.folded /nonexistent.hhtrace 2>err
    expect_rc 1 $? "flame on a missing trace"
    "$hh" --help >help
    for cmd in plot flame export; do grep -q "^  $cmd " help || fail "heaphook --help lacks $cmd"; done
    # a trace cut short: the output is written from what could be read, exit 1
    head -c $(($(wc -c <t.hhtrace) - 20)) t.hhtrace >cut.hhtrace
    "$hh" flame -o cut.folded cut.hhtrace 2>err
    rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "flame on a cut trace: exit status $rc"
    ;;
  write_errors)
    # A chart, flame graph or export that cannot be written: one line with
    # the reason, exit 1, no half-written file. Before, a PDF on a full
    # disk exited 0, and charts said "error while writing to output stream"
    # whatever the reason, leaving a partial file.
    for out in heap.svg heap.pdf heap.png; do
      ln -sf /dev/full "$out"
      "$hh" plot -o "$out" t.hhtrace >/dev/null 2>err
      expect_rc 1 $? "plot -o $out to /dev/full"
      [ "$(cat err)" = "heaphook plot: cannot write $out: No space left on device" ] || fail "plot -o $out: $(cat err)"
      [ -L "$out" ] || fail "plot removed the link $out"
      rm -f "$out"
    done
    mkdir ro
    "$hh" plot -o ro/missing/heap.svg t.hhtrace 2>err
    expect_rc 1 $? "plot into a missing directory"
    [ "$(cat err)" = "heaphook plot: cannot write ro/missing/heap.svg: No such file or directory" ] || fail "plot: $(cat err)"
    ln -sf /dev/full full.folded
    "$hh" flame -o full.folded t.hhtrace 2>err
    expect_rc 1 $? "flame to /dev/full"
    [ "$(cat err)" = "heaphook flame: cannot write full.folded: No space left on device" ] || fail "flame: $(cat err)"
    # each export format, with the reason the write failed (pprof said
    # "Invalid argument", an errno left over from symbolizing, when its
    # gzip stream failed at gzclose)
    for f in massif pprof speedscope; do
      ln -sf /dev/full "full.$f"
      "$hh" export -f $f -o "full.$f" t.hhtrace 2>err
      expect_rc 1 $? "export $f to /dev/full"
      [ "$(cat err)" = "heaphook export: cannot write full.$f: No space left on device" ] || fail "export $f: $(cat err)"
      [ -L "full.$f" ] || fail "export $f removed the link full.$f"
    done
    # -o naming the trace being read: refused, the trace intact (before,
    # it was overwritten)
    cp t.hhtrace same.svg
    sum=$(cksum <same.svg)
    for cmd in "plot" "flame" "html" "export -f speedscope"; do
      # shellcheck disable=SC2086
      "$hh" $cmd -o same.svg same.svg >/dev/null 2>err
      expect_rc 2 $? "$cmd -o its own trace"
      [ "$(cat err)" = "heaphook ${cmd%% *}: -o same.svg is the trace being read; name another file" ] ||
        fail "$cmd -o its own trace: $(cat err)"
    done
    [ "$(cksum <same.svg)" = "$sum" ] || fail "the trace was changed"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
[ "$fails" = 0 ] && echo "ok: $case_name"
[ "$fails" = 0 ]
