#!/bin/sh
# The HTML report in a real browser: html_test.sh CASE HEAPHOOK HTML_PROG HTML_FAKE WORKDIR
# Each CASE runs in a fresh WORKDIR/CASE. Headless Chromium (Debian's
# chromium; HH_CHROMIUM overrides) is driven by browser_check.js with node,
# through the DevTools protocol: nothing to download, nothing on the network.
# A missing browser or node fails the test (scripts/deps.sh check installs them).
set -u
case_name=$1 hh=$2 prog=$3 fake=$4 work=$5/$1
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_rc() { [ "$1" = "$2" ] || fail "$3: exit status $2, want $1"; }
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; echo "--- $1:" >&2; cat "$1" >&2; }; }

browser() {
  chromium=${HH_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
  node=$(command -v node || command -v nodejs || true)
  if [ -z "$chromium" ] || [ ! -x "$chromium" ] || [ -z "$node" ]; then
    fail "the browser test needs chromium and node (found: chromium '${chromium}', node '${node}'); run: sudo scripts/deps.sh check"
    return 1
  fi
  "$node" "$here/browser_check.js" "$chromium" "$@" || fail "in the browser: $1 (see above)"
}

case $case_name in
  page)
    # a program with known allocations: see html_prog.c
    "$hh" run -o t.hhtrace -- "$prog" 2>run.err
    expect_rc 0 $? "heaphook run"
    "$hh" html t.hhtrace -o page.html 2>html.err
    expect_rc 0 $? "heaphook html"
    [ -s page.html ] || fail "no page written"
    # self-contained: no external resources
    if grep -Eiq '<(script|link|img|iframe)[^>]+(src|href)=|@import|url\(' page.html; then
      fail "page.html refers to something outside itself"
      grep -Eio '<(script|link|img|iframe)[^>]+(src|href)=[^>]*|@import[^;]*|url\([^)]*\)' page.html >&2
    fi
    browser page.html \
      "text=peak-bytes=152331 bytes" "text=leaked-bytes=2331 bytes" "text=leaked-bytes=in 3 blocks" \
      "value=temporary=10" "value=allocations=15" "text=allocations=12 frees" \
      "eval=document.querySelectorAll('#sites tbody tr').length===4" \
      "first-site=hold_peak_block" \
      "click-site=leak_buffer" "panel=main" "panel=html_prog.c" \
      "click-site=temp_churn" "panel=main" \
      "click-site=hold_peak_block" "panel=) · 1 allocation, 0 temporary" \
      "eval=Array.from(document.querySelectorAll('#histogram rect.bar title')).filter(function(t){return /: 1 allocation, /.test(t.textContent);}).length===2" \
      "eval=!/ 1 (allocation|free|realloc)s/.test(document.body.textContent)" \
      "flame-has=build_peak" "flame-has=hold_peak_block" "flame-has=leak_buffer" "flame-lacks=temp_churn" \
      "flame=leaked" "flame-has=leak_buffer" "flame-lacks=hold_peak_block" "flame-lacks=temp_churn" \
      "flame=temporary" "flame-has=temp_churn" "flame-lacks=leak_buffer" \
      "flame=allocations" "flame-has=temp_churn" "flame-has=leak_buffer" "flame-has=hold_peak_block" \
      "sort=t" "first-site=temp_churn" "sort=l" "first-site=leak_buffer" \
      "eval=document.querySelectorAll('#timeline svg path.heap').length===1" \
      "eval=(function(){var v=Array.from(document.querySelectorAll('#timeline svg g.axis text')).map(function(t){return t.textContent;}).filter(function(s){return / (s|ms|us)\$/.test(s);});return v.length>1&&v.every(function(s){return /^[0-9.]+ (s|ms|us)\$/.test(s)&&!/^0\.0/.test(s);})&&Math.max.apply(null,v.map(parseFloat))>=1;})()" \
      "eval=document.getElementById('timeline-peak')!==null" \
      "eval=document.querySelectorAll('#histogram svg rect.bar').length>0" \
      hover-frag "text=frag-note=blocks (" \
      "screenshot=$work/page.png"
    # to standard output, and with a cap on the sites
    "$hh" html --sites 1 -o - t.hhtrace >capped.html 2>/dev/null
    expect_rc 0 $? "heaphook html --sites 1 -o -"
    browser capped.html "text=sites-capped=this page holds the 3" "text=peak-bytes=152331 bytes"
    # sampled: the blocks live at the peak are a sample, each drawn as the
    # bytes it stands for (a 777-byte block as ~4.5 KiB at 4K), regions
    # "107.8% occupied", and the note counted the samples ("3 blocks") where
    # the card said 5: no map, and a note that says why
    "$hh" run --sample 4096 -o s.hhtrace -- "$prog" 2>/dev/null
    expect_rc 0 $? "heaphook run --sample"
    "$hh" html s.hhtrace -o sampled.html 2>/dev/null
    expect_rc 0 $? "heaphook html of a sampled trace"
    browser sampled.html "text=frag-note=a sampled trace" "notext=frag-note=were live at the peak" \
      "eval=document.querySelectorAll('#frag canvas').length===0"
    # a process that exec'd another program did not exit (run says "still
    # allocated at the exec")
    "$hh" run -o ex.hhtrace -- sh -c 'exec true' 2>/dev/null
    expect_rc 0 $? "heaphook run sh -c 'exec true'"
    "$hh" html ex.hhtrace -o ex.html 2>/dev/null
    expect_rc 0 $? "heaphook html of a trace that ends at an exec"
    browser ex.html "text=leaked-bytes=still allocated at the exec" "notext=leaked-bytes=leaked at exit"
    ;;
  reallocs)
    # the flame graph of allocations counts allocation calls, reallocs that
    # grew a block among them: so does its "in the trace" (it said the ALLOC
    # records, 16, under the 21 it showed "on this page")
    "$hh" run -o t.hhtrace -- "$prog" grow 2>run.err
    expect_rc 0 $? "heaphook run"
    "$hh" html t.hhtrace -o page.html 2>html.err
    expect_rc 0 $? "heaphook html"
    browser page.html "value=allocations=16" "flame=allocations" "flame-has=grow_block" \
      "text=flame-caption=21 allocations on this page" "notext=flame-caption=in the trace" \
      "eval=document.querySelectorAll('#sites tbody tr').length===6"
    "$hh" html --sites 1 -o capped.html t.hhtrace 2>/dev/null
    browser capped.html "flame=allocations" "text=flame-caption=(21 allocations in the trace)"
    ;;
  hostile)
    # made-up analysis with markup, </script>, <!--, bad UTF-8 in every name
    "$fake" fake.html 10
    expect_rc 0 $? "html_fake"
    evil='</script><script>window.pwned=1</script><!-- <b>&amp;'"'"'"x'
    browser fake.html \
      "eval=window.pwned===undefined" "eval=document.querySelectorAll('script').length===2" \
      "eval=document.title==='heaphook: fake <trace>.hhtrace'" \
      "text=title=fake <trace>.hhtrace" "text=command=--name '</script>'" \
      "text=notes=trace cut short after 3 chunks <b>" "text=sites-capped=The trace has 40 call sites" \
      "text=peak-bytes=82000 bytes" "text=leaked-bytes=still in use where the trace ends" \
      "click-site=$evil" "panel=std::vector<int, std::allocator<int> >::push_back(int&&)" "panel=<evil>.c:30" \
      "click-site=café_*" "panel=libunknown.so+0x1234" "click-site=0xdead" "click-site=(no stack recorded)" \
      "flame=leaked" "flame-has=leaky_function" "flame-lacks=churner" \
      "flame=temporary" "flame-has=churner" \
      "text=threads=$evil" "text=markers=$evil" \
      hover-frag "screenshot=$work/fake.png"
    # a count of one is singular (the cards said "1 bytes")
    "$fake" one.html 0 one
    browser one.html "text=peak-bytes=1 byte" "text=leaked-bytes=in 1 block" \
      "eval=!/(^|[^0-9.,])1 bytes/.test(document.body.textContent)"
    ;;
  usage)
    "$hh" html --help >out 2>&1
    expect_rc 0 $? "html --help"
    expect_in out "usage: heaphook html"
    "$hh" html t.hhtrace >out 2>&1
    expect_rc 2 $? "html without -o"
    expect_in out "no output given"
    "$hh" html -o x.html >out 2>&1
    expect_rc 2 $? "html without a trace"
    "$hh" html --sites 0 -o x.html t.hhtrace >out 2>&1
    expect_rc 2 $? "html --sites 0"
    # past the limit, the message says the limit (it said "a count from 1
    # on", which 200000000 is)
    "$hh" html --sites 200000000 -o x.html t.hhtrace >out 2>&1
    expect_rc 2 $? "html --sites 200000000"
    [ "$(cat out)" = 'heaphook html: --sites wants a count from 1 to 100000000, not "200000000" (heaphook html --help)' ] ||
      fail "html --sites 200000000: $(cat out)"
    # digits only, as report's --top (strtoull took a sign and blanks)
    for n in +5 " 5" 5x; do
      "$hh" html --sites "$n" -o x.html t.hhtrace >out 2>&1
      expect_rc 2 $? "html --sites '$n'"
      [ "$(cat out)" = "heaphook html: --sites wants a count from 1 to 100000000, not \"$n\" (heaphook html --help)" ] ||
        fail "html --sites '$n': $(cat out)"
    done
    printf 'not a trace at all, not at all' >bad.hhtrace
    "$hh" html -o x.html bad.hhtrace >out 2>&1
    expect_rc 1 $? "html on a file that is not a trace"
    expect_in out "heaphook html: "
    [ -e x.html ] && fail "a page was written for a bad trace"
    # a trace cut short: a page for what could be read, exit 1
    "$hh" run -o t.hhtrace -- "$prog" 2>/dev/null || fail "heaphook run"
    size=$(wc -c <t.hhtrace)
    head -c $((size - 10)) t.hhtrace >cut.hhtrace
    "$hh" html -o cut.html cut.hhtrace >out 2>&1
    expect_rc 1 $? "html on a trace cut short"
    [ -s cut.html ] || fail "no page written for a trace cut short"
    "$hh" html -o /nonexistent/dir/x.html t.hhtrace >out 2>&1
    expect_rc 1 $? "html to a file that cannot be written"
    expect_in out "cannot write /nonexistent/dir/x.html"
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
[ "$fails" = 0 ] && echo "ok: $case_name"
[ "$fails" = 0 ]
