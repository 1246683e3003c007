/* heaphook html: renders the report from the JSON in #hh-data (written by
 * src/cli/html_page.c, which documents its fields). Vanilla JS, no
 * dependencies; data only ever reaches the document as text or attribute
 * values, never as markup. */
(function () {
  "use strict";

  var D = JSON.parse(document.getElementById("hh-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var S = D.strings || [];
  var T = D.totals || {};

  /* ---- helpers ------------------------------------------------------------ */

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }

  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }

  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (var k in attrs) {
      if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] === null || attrs[k] === undefined) continue;
      if (k === "text") e.textContent = String(attrs[k]);
      else e.setAttribute(k, String(attrs[k]));
    }
  }

  function append(e, c) {
    if (c === null || c === undefined) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(e, x); }); return; }
    e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }

  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  /* like heaphook's text output: "512 B", "10.8 KiB" */
  function nBlocks(n) {
    return n + (n === 1 ? " block" : " blocks");
  }
  /* "1 allocation", "2 allocations" */
  function nOf(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }
  function fmtBytes(n) {
    if (n < 1024) return n + " B";
    var u = 0, v = n;
    /* the next unit from what would show as "1024.0" */
    while (v >= 1023.95 && u < UNITS.length - 1) { v /= 1024; u++; }
    return v.toFixed(1) + " " + UNITS[u];
  }

  function fmtCount(n) { return String(n); }

  function fmtTime(ns) {
    if (ns >= 999999500) return (ns / 1e9).toFixed(3) + " s"; /* not "1000.000 ms" */
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    return (ns / 1e3).toFixed(3) + " us";
  }

  function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "-"; }

  function basename(p) { var i = p.lastIndexOf("/"); return i < 0 ? p : p.slice(i + 1); }

  function hex(big) { return "0x" + big.toString(16); }

  function width(e, fallback) {
    var w = e.clientWidth || (e.parentNode && e.parentNode.clientWidth) || 0;
    return w > 100 ? w : fallback;
  }

  /* nice round tick values in [0, max] */
  function ticks(max, count) {
    if (!(max > 0)) return [0];
    var step = Math.pow(10, Math.floor(Math.log10(max / count)));
    var err = max / count / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }

  /* byte ticks: powers of two times 1, 2, 4... of KiB/MiB units */
  function byteTicks(max, count) {
    if (!(max > 0)) return [0];
    var step = 1;
    while (max / step > count) step *= 2;
    var out = [];
    for (var v = 0; v <= max; v += step) out.push(v);
    return out;
  }

  /* ---- frames and sites ------------------------------------------------------ */

  var FRAMES = (D.frames || []).map(function (f) {
    var fn = f[0] >= 0 ? S[f[0]] : null, file = f[1] >= 0 ? S[f[1]] : null;
    var mod = f[3] >= 0 ? S[f[3]] : null, off = f[5] || 0;
    var name = fn !== null ? fn : mod !== null ? basename(mod) + "+0x" + off.toString(16) : "0x" + off.toString(16);
    return { name: name, fn: fn, file: file, line: f[2], module: mod, inlined: !!f[4], offset: off,
             where: file !== null ? basename(file) + ":" + f[2] : mod !== null ? basename(mod) : "" };
  });

  var SITES = (D.sites || []).map(function (s, i) {
    var frames = s.f.map(function (fi) { return FRAMES[fi]; });
    var top = frames.length ? frames[0] : null;
    var text = frames.map(function (f) { return f.name + " " + (f.file || "") + " " + (f.module || ""); }).join("\n");
    return { index: i, id: s.id, frames: frames, name: top ? top.name : "(no stack recorded)",
             where: top ? top.where : "", search: text.toLowerCase(),
             a: s.a, b: s.b, t: s.t, p: s.p, pb: s.pb, l: s.l, lb: s.lb };
  });

  var COSTS = {
    peak: { key: "p", unit: "bytes", what: "bytes live at the peak", total: T.peak_bytes },
    /* (sites count allocation calls: reallocs that moved or grew a block
     * too, which T.allocations, the ALLOC records, leaves out) */
    allocations: { key: "a", unit: "allocations", what: "allocation calls", total: T.allocation_calls },
    temporary: { key: "t", unit: "temporary allocations", what: "allocations freed before any other allocation or free of their thread", total: T.temporary },
    leaked: { key: "l", unit: "bytes", what: "bytes still live at exit", total: T.leaked_bytes }
  };
  /* a sampled trace does not record the allocations between a sample and
   * its free: no temporary allocations to show */
  var TEMP_KNOWN = D.temporary_known !== false;
  if (!TEMP_KNOWN) delete COSTS.temporary;

  function fmtCost(cost, v) { return COSTS[cost].unit === "bytes" ? fmtBytes(v) + " (" + nOf(v, "byte") + ")" : v + " " + COSTS[cost].unit; }

  /* ---- header and summary -------------------------------------------------- */

  function header() {
    $("title").textContent = D.title || "";
    $("command").textContent = D.command ? "$ " + D.command : "";
    var notes = $("notes");
    if (D.status) notes.appendChild(el("div", { "class": "note bad", text: "This trace is incomplete: " + D.status + ". The page shows what could be read." }));
    if (D.sampled) notes.appendChild(el("div", { "class": "note", text: "This trace was sampled" +
      (T.sample_bytes ? " (about one allocation per " + fmtBytes(T.sample_bytes) + ")" : "") + ": numbers are estimates." }));
    if (T.unknown_frees) notes.appendChild(el("div", { "class": "note", text: T.unknown_frees +
      (T.unknown_frees === 1 ? " free or realloc was of a block the trace never saw allocated (made before recording started, or lost); it is left out."
        : " frees or reallocs were of blocks the trace never saw allocated (made before recording started, or lost); they are left out.") }));
    if (T.late_events) notes.appendChild(el("div", { "class": "note", text: T.late_events +
      (T.late_events === 1 ? " event" : " events") + " came too late to be put in time order; the timeline may be slightly off around them." }));
    if (SITES.length < D.sites_total)
      notes.appendChild(el("div", { "class": "note", id: "sites-capped",
        text: "The trace has " + D.sites_total + " call sites; this page holds the " + SITES.length +
              " that are among the top " + D.site_cap + " by peak, allocations, temporary, leaked or total bytes. The totals count them all." }));
  }

  function card(id, label, value, extra) {
    return el("div", { "class": "card", id: id }, el("div", { "class": "k", text: label }),
              el("div", { "class": "v", text: value }), el("div", { "class": "x", text: extra || "" }));
  }

  function summary() {
    var c = $("cards");
    c.appendChild(card("peak-bytes", "peak heap in use", nOf(T.peak_bytes, "byte"),
      fmtBytes(T.peak_bytes) + " in " + nBlocks(T.peak_blocks) + " at " + fmtTime(T.peak_time_ns)));
    /* (a trace not whole, or one that ends at an exec: there was no exit,
     * as the chart says it) */
    c.appendChild(card("leaked-bytes", D.status ? "still in use where the trace ends" :
      typeof D.exec === "string" ? "still allocated at the exec" : "leaked at exit", nOf(T.leaked_bytes, "byte"),
      fmtBytes(T.leaked_bytes) + " in " + nBlocks(T.leaked_blocks)));
    c.appendChild(card("allocations", "allocations", fmtCount(T.allocations),
      nOf(T.frees, "free") + ", " + nOf(T.reallocs, "realloc")));
    c.appendChild(TEMP_KNOWN ? card("temporary", "temporary allocations", fmtCount(T.temporary),
      pct(T.temporary, T.allocation_calls) + " of the " + fmtCount(T.allocation_calls) + " allocation calls") :
      card("temporary", "temporary allocations", "not known",
        "a sampled trace does not record the allocations between a sample and its free"));
    c.appendChild(card("bytes-allocated", "allocated in all", nOf(T.bytes_allocated, "byte"), fmtBytes(T.bytes_allocated)));
    c.appendChild(card("duration", "run time", fmtTime(D.duration_ns || 0), T.events ? T.events + " events" : ""));
    if (T.peak_rss_bytes) c.appendChild(card("peak-rss", "peak RSS", fmtBytes(T.peak_rss_bytes), nOf(T.peak_rss_bytes, "byte")));
    c.appendChild(card("site-count", "call sites", fmtCount(D.sites_total || 0),
      SITES.length < D.sites_total ? SITES.length + " on this page" : ""));
  }

  /* ---- timeline --------------------------------------------------------------- */

  function timeline() {
    var box = $("timeline"), info = $("timeline-info");
    clear(box);
    var pts = D.timeline || [], rss = D.rss || [], marks = D.markers || [];
    if (!pts.length && !rss.length) { box.appendChild(el("div", { "class": "muted", text: "No allocations recorded." })); return; }
    var W = width(box, 900), H = 280, L = 70, R = 16, TOP = 24, B = 30;
    var tmax = D.duration_ns || 0, ymax = T.peak_bytes || 0;
    pts.forEach(function (p) { if (p[0] > tmax) tmax = p[0]; if (p[1] > ymax) ymax = p[1]; });
    rss.forEach(function (p) { if (p[0] > tmax) tmax = p[0]; if (p[1] > ymax) ymax = p[1]; });
    marks.forEach(function (m) { if (m[0] > tmax) tmax = m[0]; });
    if (!(tmax > 0)) tmax = 1;
    if (!(ymax > 0)) ymax = 1;
    ymax *= 1.08;
    function X(t) { return L + (W - L - R) * t / tmax; }
    function Y(v) { return TOP + (H - TOP - B) * (1 - v / ymax); }
    var s = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "heap in use over time" });
    var axis = svg("g", { "class": "axis" });
    byteTicks(ymax, 6).forEach(function (v) {
      axis.appendChild(svg("line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), "stroke-dasharray": v ? "2,3" : null }));
      axis.appendChild(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", text: fmtBytes(v) }));
    });
    /* in the unit that keeps the run's length at 1 or more, as the report
     * writes times (a short run's ticks read "0.00005 s", "0.0001 s") */
    var unit = tmax >= 1e9 ? [1, " s"] : tmax >= 1e6 ? [1e3, " ms"] : [1e6, " us"];
    ticks(tmax / 1e9, 8).forEach(function (sec) {
      axis.appendChild(svg("line", { x1: X(sec * 1e9), x2: X(sec * 1e9), y1: H - B, y2: H - B + 4 }));
      axis.appendChild(svg("text", { x: X(sec * 1e9), y: H - B + 16, "text-anchor": "middle", text: +(sec * unit[0]).toPrecision(6) + unit[1] }));
    });
    s.appendChild(axis);
    marks.forEach(function (m, i) {
      s.appendChild(svg("line", { x1: X(m[0]), x2: X(m[0]), y1: TOP - 10, y2: H - B, stroke: "var(--marker)", "stroke-dasharray": "4,3", "class": "marker" },
        svg("title", { text: "marker " + m[1] + " at " + fmtTime(m[0]) })));
      s.appendChild(svg("text", { x: X(m[0]) + 3, y: TOP - 12 + (i % 2) * 10, "font-size": 10, fill: "var(--marker)", text: m[1] }));
    });
    if (rss.length) {
      /* a step line: RSS holds its last sampled value until the next sample, and to the end */
      var dr = rss.map(function (p, i) { return (i ? "H" + X(p[0]).toFixed(1) + "V" : "M" + X(p[0]).toFixed(1) + ",") + Y(p[1]).toFixed(1); }).join("");
      dr += "H" + X(tmax).toFixed(1);
      s.appendChild(svg("path", { d: dr, fill: "none", stroke: "var(--rss)", "stroke-width": 1.5, "class": "rss" }));
    }
    if (pts.length) {
      var d = "M" + X(0) + "," + Y(0), prev = 0;
      pts.forEach(function (p) { d += "L" + X(p[0]).toFixed(1) + "," + Y(prev).toFixed(1) + "L" + X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1); prev = p[1]; });
      d += "L" + X(tmax).toFixed(1) + "," + Y(prev).toFixed(1);
      s.appendChild(svg("path", { d: d, fill: "none", stroke: "var(--heap)", "stroke-width": 1.5, "class": "heap" }));
    }
    if (T.peak_bytes > 0) {
      var px = X(T.peak_time_ns), py = Y(T.peak_bytes);
      s.appendChild(svg("circle", { cx: px, cy: py, r: 4, fill: "var(--peak)", id: "timeline-peak" },
        svg("title", { text: "peak: " + nOf(T.peak_bytes, "byte") + " at " + fmtTime(T.peak_time_ns) })));
      s.appendChild(svg("text", { x: px + (px > W / 2 ? -8 : 8), y: py - 6, "font-size": 11, fill: "var(--peak)",
        "text-anchor": px > W / 2 ? "end" : "start", text: "peak " + fmtBytes(T.peak_bytes) }));
    }
    var cursor = svg("line", { y1: TOP, y2: H - B, stroke: "#888", "stroke-width": 0.5, visibility: "hidden" });
    s.appendChild(cursor);
    function at(list, t) { /* the last point at or before t */
      var lo = 0, hi = list.length - 1, r = -1;
      while (lo <= hi) { var m = (lo + hi) >> 1; if (list[m][0] <= t) { r = m; lo = m + 1; } else hi = m - 1; }
      return r;
    }
    s.addEventListener("mousemove", function (ev) {
      var rect = s.getBoundingClientRect();
      var x = (ev.clientX - rect.left) * W / rect.width;
      if (x < L || x > W - R) { cursor.setAttribute("visibility", "hidden"); return; }
      var t = (x - L) / (W - L - R) * tmax;
      cursor.setAttribute("x1", x); cursor.setAttribute("x2", x); cursor.setAttribute("visibility", "visible");
      var i = at(pts, t), j = at(rss, t);
      var txt = fmtTime(t) + ": heap " + (i >= 0 ? fmtBytes(pts[i][1]) + " (" + nOf(pts[i][1], "byte") + ")" : "0 B");
      if (rss.length) txt += ", RSS " + (j >= 0 ? fmtBytes(rss[j][1]) : "-");
      info.textContent = txt;
    });
    s.addEventListener("mouseleave", function () { cursor.setAttribute("visibility", "hidden"); });
    box.appendChild(s);
  }

  /* ---- flame graph ------------------------------------------------------------- */

  var flameCost = "peak", flameFocus = null, flameRoot = null;

  function buildTree(cost) {
    var key = COSTS[cost].key;
    var root = { name: "all", value: 0, children: new Map(), parent: null, depth: 0 };
    SITES.forEach(function (s) {
      var v = s[key];
      if (!(v > 0)) return;
      root.value += v;
      var node = root;
      var names = s.frames.length ? s.frames.map(function (f) { return f.name; }).reverse() : ["(no stack recorded)"];
      names.forEach(function (n) {
        var c = node.children.get(n);
        if (!c) { c = { name: n, value: 0, children: new Map(), parent: node, depth: node.depth + 1 }; node.children.set(n, c); }
        c.value += v;
        node = c;
      });
    });
    return root;
  }

  function color(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return "hsl(" + (10 + h % 45) + "," + (70 + (h >> 8) % 25) + "%," + (58 + (h >> 16) % 14) + "%)";
  }

  function flame() {
    var box = $("flame"), cap = $("flame-caption"), info = $("flame-info");
    clear(box);
    var c = COSTS[flameCost];
    if (!flameRoot) flameRoot = buildTree(flameCost);
    var root = flameRoot;
    cap.textContent = flameCost + ": " + c.what + " — " + fmtCost(flameCost, root.value) + " on this page" +
      (c.total !== undefined && c.total !== root.value ? " (" + fmtCost(flameCost, c.total) + " in the trace)" : "");
    box.setAttribute("data-cost", flameCost);
    if (!(root.value > 0)) {
      box.appendChild(el("div", { "class": "muted empty", style: "padding:12px", text: "Nothing to show: no " + c.what + "." }));
      return;
    }
    var focus = flameFocus || root;
    var W = width(box, 900), RH = 18;
    var maxDepth = 0;
    (function walk(n) { if (n.depth > maxDepth) maxDepth = n.depth; n.children.forEach(walk); })(focus);
    /* ancestors of the focus stay on top, full width */
    var chain = [];
    for (var a = focus.parent; a; a = a.parent) chain.unshift(a);
    var rows = chain.length + (maxDepth - focus.depth) + 1;
    var H = rows * RH + 2;
    var s = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "flame graph" });
    function box1(n, x, w, row) {
      var g = svg("g", { "class": "node", "data-name": n.name, transform: "translate(" + x.toFixed(2) + "," + (row * RH) + ")" });
      g.appendChild(svg("title", { text: n.name + " — " + fmtCost(flameCost, n.value) + ", " + pct(n.value, root.value) }));
      g.appendChild(svg("rect", { width: Math.max(w - 0.5, 0.5).toFixed(2), height: RH - 1, fill: n === root ? "#adb5bd" : color(n.name), rx: 2 }));
      var chars = Math.floor((w - 6) / 6.6);
      if (chars >= 3) g.appendChild(svg("text", { x: 3, y: RH - 5, text: n.name.length > chars ? n.name.slice(0, chars - 1) + "…" : n.name }));
      g.addEventListener("click", function () { flameFocus = (n === focus && n.parent) ? n.parent : n === root ? null : n; flame(); });
      g.addEventListener("mouseenter", function () { info.textContent = n.name + " — " + fmtCost(flameCost, n.value) + ", " + pct(n.value, root.value) + " of all"; });
      s.appendChild(g);
    }
    chain.forEach(function (n, i) { box1(n, 0, W, i); });
    (function layout(n, x, w, row) {
      box1(n, x, w, row);
      var cx = x;
      var kids = Array.from(n.children.values()).sort(function (p, q) { return q.value - p.value || (p.name < q.name ? -1 : 1); });
      kids.forEach(function (k) {
        var kw = w * k.value / n.value;
        if (kw >= 0.3) layout(k, cx, kw, row + 1);
        cx += kw;
      });
    })(focus, 0, W, chain.length);
    box.appendChild(s);
  }

  function flameSwitch() {
    if (!TEMP_KNOWN) {
      var tb = $("flame-switch").querySelector('button[data-cost="temporary"]');
      if (tb) tb.parentNode.removeChild(tb);
    }
    $("flame-switch").addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-cost]");
      if (!b) return;
      Array.prototype.forEach.call(this.querySelectorAll("button"), function (x) { x.classList.toggle("on", x === b); });
      flameCost = b.getAttribute("data-cost");
      flameFocus = null;
      flameRoot = null;
      flame();
    });
  }

  /* ---- call sites --------------------------------------------------------------- */

  var COLS = [
    { key: "name", label: "function", text: true, cls: "fn" },
    { key: "where", label: "location", text: true },
    { key: "p", label: "peak", bytes: true },
    { key: "l", label: "leaked", bytes: true },
    { key: "a", label: "allocations" },
    { key: "t", label: "temporary" },
    { key: "b", label: "allocated", bytes: true }
  ].filter(function (c) { return TEMP_KNOWN || c.key !== "t"; });
  var sortKey = "p", sortAsc = false, shown = 500, selected = null, filtered = SITES;

  function sortSites() {
    var col = COLS.find(function (c) { return c.key === sortKey; });
    var dir = sortAsc ? 1 : -1;
    filtered = filtered.slice().sort(function (x, y) {
      var a = x[sortKey], b = y[sortKey], r;
      if (col.text) r = a < b ? -1 : a > b ? 1 : 0; else r = a - b;
      return dir * r || (y.p - x.p) || (y.a - x.a) || (x.index - y.index);
    });
  }

  function sitesTable() {
    var table = $("sites"), head = table.tHead, body = table.tBodies[0];
    clear(head);
    var tr = el("tr");
    COLS.forEach(function (c) {
      var th = el("th", { "data-key": c.key, "class": (c.text ? "" : "num") + (c.key === sortKey ? " sorted" + (sortAsc ? " asc" : "") : ""),
                          title: "sort by " + c.label, text: c.label });
      th.addEventListener("click", function () {
        if (sortKey === c.key) sortAsc = !sortAsc; else { sortKey = c.key; sortAsc = !!c.text; }
        sortSites();
        sitesTable();
      });
      tr.appendChild(th);
    });
    head.appendChild(tr);
    clear(body);
    var n = Math.min(shown, filtered.length);
    for (var i = 0; i < n; i++) {
      var s = filtered[i];
      var row = el("tr", { "data-site": s.index, "class": s === selected ? "selected" : null });
      COLS.forEach(function (c) {
        var v = s[c.key];
        row.appendChild(el("td", { "class": (c.text ? "" : "num ") + (c.cls || ""), title: c.text ? v : c.bytes ? nOf(v, "byte") : null,
                                   text: c.text ? v : c.bytes ? fmtBytes(v) : v }));
      });
      row.addEventListener("click", (function (site, r) {
        return function () {
          var old = body.querySelector("tr.selected");
          if (old) old.classList.remove("selected");
          r.classList.add("selected");
          showStack(site);
        };
      })(s, row));
      body.appendChild(row);
    }
    $("sites-count").textContent = filtered.length === SITES.length ? SITES.length + " call sites" : filtered.length + " of " + SITES.length + " call sites";
    var more = $("sites-more");
    more.hidden = n >= filtered.length;
    more.textContent = "show " + Math.min(500, filtered.length - n) + " more";
  }

  function showStack(s) {
    selected = s;
    var p = $("stack-panel");
    clear(p);
    p.setAttribute("data-site", s.index);
    p.appendChild(el("h3", { "class": "fn", text: s.name }));
    p.appendChild(el("div", { "class": "loc", text:
      "peak " + fmtBytes(s.p) + " (" + nBlocks(s.pb) + ") · leaked " + fmtBytes(s.l) + " (" + nBlocks(s.lb) + ") · " +
      nOf(s.a, "allocation") + ", " + (TEMP_KNOWN ? s.t + " temporary · " : "") + fmtBytes(s.b) + " allocated" }));
    if (!s.frames.length) { p.appendChild(el("div", { "class": "muted", text: "No stack was recorded for these allocations." })); return; }
    var ol = el("ol", { "class": "stack" });
    s.frames.forEach(function (f) {
      var loc = [];
      if (f.file !== null) loc.push(f.file + ":" + f.line);
      if (f.module !== null) loc.push(basename(f.module) + (f.fn === null ? "+0x" + f.offset.toString(16) : ""));
      if (f.inlined) loc.push("inlined");
      ol.appendChild(el("li", { "class": "frame" }, el("div", { "class": "fn", text: f.name }),
                        el("div", { "class": "loc", title: f.module || "", text: loc.join(" · ") })));
    });
    p.appendChild(el("div", { "class": "muted", text: "innermost frame first" }));
    p.appendChild(ol);
  }

  function sitesSection() {
    if (SITES.length < D.sites_total)
      $("sites-note").textContent = "Showing the " + SITES.length + " call sites of " + D.sites_total + " that rank among the top " + D.site_cap + " by some cost.";
    sortSites();
    sitesTable();
    $("sites-more").addEventListener("click", function () { shown += 500; sitesTable(); });
    var timer = null;
    $("sites-filter").addEventListener("input", function () {
      var q = this.value.trim().toLowerCase();
      clearTimeout(timer);
      timer = setTimeout(function () {
        filtered = q ? SITES.filter(function (s) { return s.search.indexOf(q) >= 0; }) : SITES;
        shown = 500;
        sortSites();
        sitesTable();
      }, 120);
    });
  }

  /* ---- size histogram -------------------------------------------------------------- */

  var histWhat = "count";

  function histogram() {
    var box = $("histogram"), info = $("histogram-info");
    clear(box);
    var hs = D.histogram || [];
    if (!hs.length) { box.appendChild(el("div", { "class": "muted", text: "No allocations." })); return; }
    var lo = hs[0][0], hi = hs[hs.length - 1][0], byB = {};
    hs.forEach(function (h) { byB[h[0]] = h; });
    var buckets = [];
    for (var i = lo; i <= hi; i++) buckets.push(byB[i] || [i, 0, 0]);
    var col = histWhat === "count" ? 1 : 2;
    var max = Math.max.apply(null, buckets.map(function (b) { return b[col]; })) || 1;
    var W = width(box, 900), H = 220, L = 70, B = 34, TOP = 10;
    var bw = (W - L - 10) / buckets.length;
    var s = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "allocation sizes" });
    var axis = svg("g", { "class": "axis" });
    var tk = histWhat === "count" ? ticks(max, 5) : byteTicks(max, 5);
    tk.forEach(function (v) {
      var y = TOP + (H - TOP - B) * (1 - v / max);
      axis.appendChild(svg("line", { x1: L, x2: W - 10, y1: y, y2: y, "stroke-dasharray": v ? "2,3" : null }));
      axis.appendChild(svg("text", { x: L - 6, y: y + 4, "text-anchor": "end", text: histWhat === "count" ? v : fmtBytes(v) }));
    });
    s.appendChild(axis);
    var every = Math.ceil(buckets.length / Math.max(1, Math.floor((W - L) / 56)));
    buckets.forEach(function (b, k) {
      var lo2 = b[0] === 0 ? 0 : Math.pow(2, b[0]), hi2 = Math.pow(2, b[0] + 1) - 1;
      var label = "sizes " + fmtBytes(lo2) + " – " + fmtBytes(hi2) + ": " + nOf(b[1], "allocation") + ", " + fmtBytes(b[2]) + " (" + nOf(b[2], "byte") + ")";
      var h = (H - TOP - B) * b[col] / max, x = L + k * bw;
      var r = svg("rect", { "class": "bar", x: x + 1, y: TOP + (H - TOP - B) - h, width: Math.max(bw - 2, 1), height: Math.max(h, b[col] ? 1 : 0) },
                  svg("title", { text: label }));
      r.addEventListener("mouseenter", function () { info.textContent = label; });
      s.appendChild(r);
      if (k % every === 0) s.appendChild(svg("text", { x: x + bw / 2, y: H - B + 14, "text-anchor": "middle", "font-size": 10, fill: "var(--muted)", text: fmtBytes(lo2) }));
    });
    box.appendChild(s);
  }

  function histogramSwitch() {
    $("histogram-switch").addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-what]");
      if (!b) return;
      Array.prototype.forEach.call(this.querySelectorAll("button"), function (x) { x.classList.toggle("on", x === b); });
      histWhat = b.getAttribute("data-what");
      histogram();
    });
  }

  /* ---- fragmentation map -------------------------------------------------------------- */

  function frag() {
    var F = D.frag || {}, box = $("frag"), note = $("frag-note"), info = $("frag-info");
    clear(box);
    if (F.sampled) {
      note.textContent = "No map: a sampled trace records a sample of the blocks live at the peak, each standing for more bytes than its own, " +
        "not where every block lies. Trace without --sample for the map.";
      return;
    }
    if (!F.present) { note.textContent = "This analysis kept no list of the blocks live at the peak."; return; }
    if (!F.regions || !F.regions.length) { note.textContent = "No blocks were live at the peak."; return; }
    var txt = nBlocks(F.blocks) + " (" + fmtBytes(F.bytes) + ")" + (F.blocks === 1 ? " was" : " were") + " live at the peak, in " + F.regions_total +
      " region" + (F.regions_total === 1 ? "" : "s") + " of addresses (blocks less than " + fmtBytes(F.gap) + " apart share a region).";
    if (F.regions.length < F.regions_total)
      txt += " The " + F.regions.length + " regions holding the most bytes are drawn; the other " + (F.regions_total - F.regions.length) +
        " hold " + fmtBytes(F.hidden_bytes) + ".";
    note.textContent = txt + " Darker cells are fuller; white ones are free.";
    var CELL = 7, COLS_MAX = 128;
    F.regions.forEach(function (r, ri) {
      var start = BigInt(r.start), end = BigInt(r.end), n = r.u.length, span = Number(end - start);
      var cols = Math.min(COLS_MAX, n), rows = Math.ceil(n / cols);
      var wrap = el("div", { "class": "frag-region", "data-start": r.start });
      wrap.appendChild(el("div", { "class": "head mono", text: r.start + " – " + r.end + ": " + fmtBytes(span) + ", " + nBlocks(r.count) + ", " +
        fmtBytes(r.used) + " occupied (" + pct(r.used, span) + "); one cell is " + fmtBytes(r.cell) }));
      var cv = el("canvas", { width: cols * CELL, height: rows * CELL, "class": "frag-canvas", "data-region": ri });
      var g = cv.getContext("2d");
      if (g) {
        g.fillStyle = "#dee2e6";
        g.fillRect(0, 0, cv.width, cv.height);
        for (var i = 0; i < n; i++) {
          var cs = Math.min(r.cell, span - i * r.cell), f = cs > 0 ? Math.min(1, r.u[i] / cs) : 0;
          var x = (i % cols) * CELL, y = Math.floor(i / cols) * CELL;
          g.fillStyle = f <= 0 ? "#ffffff" : "hsl(222," + (60 + 20 * f).toFixed(0) + "%," + (88 - 58 * f).toFixed(0) + "%)";
          g.fillRect(x, y, CELL - 1, CELL - 1);
        }
      }
      cv.addEventListener("mousemove", function (ev) {
        var rect = cv.getBoundingClientRect();
        var cx = Math.floor((ev.clientX - rect.left) * cv.width / rect.width / CELL);
        var cy = Math.floor((ev.clientY - rect.top) * cv.height / rect.height / CELL);
        var i = cy * cols + cx;
        if (cx < 0 || cx >= cols || i < 0 || i >= n) return;
        var a0 = start + BigInt(r.cell) * BigInt(i), cs = Math.min(r.cell, span - i * r.cell);
        info.textContent = hex(a0) + " – " + hex(a0 + BigInt(cs)) + ": " + r.u[i] + " of " + cs + " bytes occupied (" + pct(r.u[i], cs) + "), " +
          r.n[i] + (r.n[i] === 1 ? " block starts" : " blocks start") + " here";
      });
      wrap.appendChild(cv);
      box.appendChild(wrap);
    });
  }

  /* ---- threads and markers ------------------------------------------------------------- */

  function simpleTable(table, cols, rows) {
    var head = table.tHead, body = table.tBodies[0];
    var tr = el("tr");
    cols.forEach(function (c) { tr.appendChild(el("th", { "class": c.num ? "num" : "", text: c.label })); });
    head.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      cols.forEach(function (c) { row.appendChild(el("td", { "class": c.num ? "num" : "", text: c.get(r) })); });
      body.appendChild(row);
    });
    if (!rows.length) body.appendChild(el("tr", {}, el("td", { colspan: cols.length, "class": "muted", text: "none" })));
  }

  function threadsSection() {
    simpleTable($("threads"), [
      { label: "thread", get: function (t) { return t.index; }, num: true },
      { label: "tid", get: function (t) { return t.tid; }, num: true },
      { label: "name", get: function (t) { return t.name; } },
      { label: "allocations", get: function (t) { return t.allocations; }, num: true },
      { label: "frees", get: function (t) { return t.frees; }, num: true },
      { label: "allocated", get: function (t) { return fmtBytes(t.bytes); }, num: true },
      { label: "at the peak", get: function (t) { return fmtBytes(t.peak_bytes); }, num: true },
      { label: "temporary", get: function (t) { return TEMP_KNOWN ? t.temporary || 0 : "-"; }, num: true },
      { label: "leaked", get: function (t) { return fmtBytes(t.leaked_bytes || 0) + " in " + nBlocks(t.leaked_blocks || 0); }, num: true }
    ], D.threads || []);
    simpleTable($("markers"), [
      { label: "time", get: function (m) { return fmtTime(m[0]); }, num: true },
      { label: "marker", get: function (m) { return m[1]; } }
    ], D.markers || []);
  }

  /* ---- start ----------------------------------------------------------------------------- */

  header();
  summary();
  timeline();
  flameSwitch();
  flame();
  sitesSection();
  histogramSwitch();
  histogram();
  frag();
  threadsSection();
  var resizeTimer = null, lastW = window.innerWidth;
  window.addEventListener("resize", function () {
    if (window.innerWidth === lastW) return;
    lastW = window.innerWidth;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { timeline(); flame(); histogram(); }, 150);
  });
  document.body.setAttribute("data-ready", "1");
})();
