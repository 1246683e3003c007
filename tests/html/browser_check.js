#!/usr/bin/env node
/* Loads a heaphook HTML report in headless Chromium and checks it, driving
 * the browser through its DevTools protocol over --remote-debugging-pipe
 * (no npm packages, no network):
 *
 *   node browser_check.js CHROMIUM PAGE.html STEP...
 *
 * Always checked: the page loads, its script ran to the end
 * (body[data-ready]), and nothing logged an error, threw, or tried to load
 * anything but the page itself. Steps, in order:
 *   text=ID=TEXT         the element #ID's text contains TEXT
 *   notext=ID=TEXT       ... does not contain TEXT
 *   value=ID=TEXT        the summary card #ID's value is TEXT
 *   click-site=NAME      clicks (with the mouse) the call-site row whose
 *                        function is NAME, then the stack panel must show NAME
 *                        (NAME* : whose function starts with NAME)
 *   panel=TEXT           the stack panel's text contains TEXT
 *   sort=KEY             clicks the call-site table's KEY column header
 *   first-site=NAME      the first call-site row's function is NAME
 *   flame=COST           clicks the flame graph's COST switch
 *   flame-has=NAME       the flame graph has a box for function NAME
 *   flame-lacks=NAME     ... has none
 *   eval=EXPR            the JS expression EXPR is true in the page
 *   hover-frag           moves the mouse over the fragmentation map's first
 *                        cell; its info line must then show an address
 *   screenshot=PATH      saves a PNG of the whole page
 * Exits 0 when all is well, 1 with what went wrong otherwise. */
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const url = require("url");

const [chromium, page, ...steps] = process.argv.slice(2);
if (!chromium || !page) {
  console.error("usage: node browser_check.js CHROMIUM PAGE.html STEP...");
  process.exit(2);
}
const pageUrl = url.pathToFileURL(path.resolve(page)).href;
const failures = [];
const problems = []; /* console errors, exceptions, requests */
function fail(msg) { failures.push(msg); console.error("FAIL: " + msg); }

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "hh-chromium-"));
const args = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
  "--user-data-dir=" + profile, "--window-size=1280,1000", "--remote-debugging-pipe", "about:blank",
];
/* Chromium puts its SingletonSocket in a directory under TMPDIR: a Unix
 * socket's path holds at most 107 bytes, so a long TMPDIR (> ~60 bytes)
 * makes it abort at start ("Socket path too long"). /tmp is short. */
const browser = spawn(chromium, args, {
  stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
  env: { ...process.env, TMPDIR: "/tmp" },
});
let stderr = "";
browser.stderr.on("data", (d) => { stderr += d; if (stderr.length > 20000) stderr = stderr.slice(-20000); });
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];
let exited = false;
browser.on("exit", (code, sig) => { exited = true; rejectAll(new Error("chromium exited (" + (sig || code) + ")")); });
browser.on("error", (e) => { exited = true; rejectAll(new Error("cannot start " + chromium + ": " + e.message)); });
toBrowser.on("error", (e) => rejectAll(new Error("talking to chromium: " + e.message)));
fromBrowser.on("error", (e) => rejectAll(new Error("listening to chromium: " + e.message)));

/* ---- the protocol: NUL-terminated JSON messages -------------------------- */
let nextId = 1, buf = Buffer.alloc(0);
const pending = new Map(), waiters = [];
function rejectAll(e) { for (const p of pending.values()) p.reject(e); pending.clear(); while (waiters.length) waiters.pop().reject(e); }
fromBrowser.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  let end;
  while ((end = buf.indexOf(0)) >= 0) {
    const msg = JSON.parse(buf.subarray(0, end).toString("utf8"));
    buf = buf.subarray(end + 1);
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      if (!p) continue;
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(p.method + ": " + msg.error.message)); else p.resolve(msg.result);
    } else {
      onEvent(msg);
    }
  }
});
function send(method, params, sessionId) {
  const id = nextId++;
  const msg = { id, method, params: params || {} };
  if (sessionId) msg.sessionId = sessionId;
  return new Promise((resolve, reject) => {
    if (exited) { reject(new Error("chromium is gone")); return; }
    pending.set(id, { resolve, reject, method });
    toBrowser.write(JSON.stringify(msg) + "\0");
  });
}
function waitFor(pred, ms, what) {
  return new Promise((resolve, reject) => {
    const w = { pred, resolve, reject };
    waiters.push(w);
    setTimeout(() => { const i = waiters.indexOf(w); if (i >= 0) { waiters.splice(i, 1); reject(new Error("timed out waiting for " + what)); } }, ms);
  });
}
function onEvent(msg) {
  const p = msg.params || {};
  switch (msg.method) {
    case "Runtime.exceptionThrown": {
      const d = p.exceptionDetails || {};
      problems.push("page error: " + ((d.exception && d.exception.description) || d.text) + " at " + d.url + ":" + d.lineNumber);
      break;
    }
    case "Runtime.consoleAPICalled":
      if (p.type === "error" || p.type === "assert" || p.type === "warning")
        problems.push("console." + p.type + ": " + (p.args || []).map((a) => a.value !== undefined ? a.value : a.description).join(" "));
      break;
    case "Log.entryAdded":
      if (p.entry && p.entry.level === "error")
        problems.push("browser log (" + p.entry.source + "): " + p.entry.text + (p.entry.url ? " " + p.entry.url : ""));
      break;
    case "Network.requestWillBeSent":
      if (p.request && p.request.url !== pageUrl && !p.request.url.startsWith("data:"))
        problems.push("the page loads " + p.request.url);
      break;
  }
  for (let i = waiters.length - 1; i >= 0; i--) {
    if (waiters[i].pred(msg)) { const w = waiters.splice(i, 1)[0]; w.resolve(msg); }
  }
}

/* ---- the checks ------------------------------------------------------------ */
let session = null;
async function evaluate(expr) {
  const r = await send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true }, session);
  if (r.exceptionDetails) throw new Error("evaluating " + expr + ": " + (r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text));
  return r.result.value;
}
const J = JSON.stringify;
async function clickAt(selectorExpr, what) {
  /* scroll the element into view, then a real mouse click at its centre */
  const box = await evaluate("(function(){var e=" + selectorExpr + ";if(!e)return null;e.scrollIntoView({block:'center'});" +
    "var r=e.getBoundingClientRect();return {x:r.left+Math.min(r.width/2,40),y:r.top+r.height/2};})()");
  if (!box) { fail("nothing to click: " + what); return false; }
  for (const type of ["mouseMoved", "mousePressed", "mouseReleased"])
    await send("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: type === "mouseMoved" ? "none" : "left", clickCount: 1 }, session);
  await evaluate("new Promise(function(r){requestAnimationFrame(function(){setTimeout(r,0);});})");
  return true;
}
const text = (id) => evaluate("(function(){var e=document.getElementById(" + J(id) + ");return e?e.textContent:null;})()");
const flameNames = () => evaluate("Array.prototype.map.call(document.querySelectorAll('#flame g.node'),function(g){return g.getAttribute('data-name');})");

async function step(s) {
  const eq = s.indexOf("=");
  const kind = eq < 0 ? s : s.slice(0, eq), arg = eq < 0 ? "" : s.slice(eq + 1);
  switch (kind) {
    case "text":
    case "notext": {
      const i = arg.indexOf("="), id = arg.slice(0, i), want = arg.slice(i + 1);
      const got = await text(id);
      if (got === null) fail("no element #" + id);
      else if ((kind === "text") !== got.includes(want)) fail("#" + id + (kind === "text" ? " lacks " : " has ") + J(want) + "; its text: " + J(got));
      break;
    }
    case "value": {
      const i = arg.indexOf("="), id = arg.slice(0, i), want = arg.slice(i + 1);
      const got = await evaluate("(function(){var e=document.querySelector('#'+" + J(id) + "+' .v');return e?e.textContent:null;})()");
      if (got !== want) fail("the value of #" + id + " is " + J(got) + ", want " + J(want));
      break;
    }
    case "click-site": {
      const prefix = arg.endsWith("*"), name = prefix ? arg.slice(0, -1) : arg;
      const match = prefix ? "r.cells[0].textContent.indexOf(" + J(name) + ")===0" : "r.cells[0].textContent===" + J(name);
      const ok = await clickAt("Array.prototype.find.call(document.querySelectorAll('#sites tbody tr'),function(r){return " + match + ";})", "call-site row " + arg);
      if (!ok) break;
      const sel = await evaluate("(function(){var r=document.querySelector('#sites tbody tr.selected');return r?r.cells[0].textContent:null;})()");
      if (sel === null || (prefix ? !sel.startsWith(name) : sel !== name)) fail("after clicking the row of " + arg + ", the selected row is " + J(sel));
      const panel = await text("stack-panel");
      if (!panel || !panel.includes(prefix ? name : arg)) fail("after clicking " + arg + ", the stack panel lacks it: " + J(panel));
      break;
    }
    case "panel": {
      const panel = await text("stack-panel");
      if (!panel || !panel.includes(arg)) fail("the stack panel lacks " + J(arg) + ": " + J(panel));
      break;
    }
    case "sort":
      await clickAt("document.querySelector('#sites thead th[data-key=" + J(arg) + "]')", "column header " + arg);
      break;
    case "first-site": {
      const first = await evaluate("(function(){var r=document.querySelector('#sites tbody tr');return r?r.cells[0].textContent:null;})()");
      if (first !== arg) fail("the first call site is " + J(first) + ", want " + J(arg));
      break;
    }
    case "flame": {
      await clickAt("document.querySelector('#flame-switch button[data-cost=" + J(arg) + "]')", "flame switch " + arg);
      const cost = await evaluate("document.getElementById('flame').getAttribute('data-cost')");
      if (cost !== arg) fail("the flame graph shows " + J(cost) + " after clicking " + arg);
      break;
    }
    case "flame-has":
    case "flame-lacks": {
      const names = await flameNames();
      if ((kind === "flame-has") !== names.includes(arg))
        fail("the flame graph (" + (await evaluate("document.getElementById('flame').getAttribute('data-cost')")) + ") " +
             (kind === "flame-has" ? "lacks " : "has ") + J(arg) + "; it has " + J(names));
      break;
    }
    case "eval":
      if ((await evaluate(arg)) !== true) fail("not true in the page: " + arg);
      break;
    case "hover-frag": {
      const box = await evaluate("(function(){var c=document.querySelector('#frag canvas');if(!c)return null;c.scrollIntoView({block:'center'});var r=c.getBoundingClientRect();return {x:r.left+3,y:r.top+3};})()");
      if (!box) { fail("no fragmentation map"); break; }
      await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: box.x, y: box.y, button: "none" }, session);
      const info = await text("frag-info");
      if (!/0x[0-9a-f]+ – 0x[0-9a-f]+: \d+ of \d+ bytes occupied/.test(info || "")) fail("hovering the fragmentation map shows " + J(info));
      break;
    }
    case "screenshot": {
      const m = await send("Page.getLayoutMetrics", {}, session);
      const size = m.cssContentSize || m.contentSize;
      const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true,
        clip: { x: 0, y: 0, width: Math.ceil(size.width), height: Math.min(Math.ceil(size.height), 16000), scale: 1 } }, session);
      fs.writeFileSync(arg, Buffer.from(shot.data, "base64"));
      break;
    }
    default:
      throw new Error("unknown step " + J(s));
  }
}

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  ({ sessionId: session } = await send("Target.attachToTarget", { targetId, flatten: true }));
  await Promise.all(["Runtime.enable", "Page.enable", "Log.enable", "Network.enable"].map((m) => send(m, {}, session)));
  const loaded = waitFor((m) => m.method === "Page.loadEventFired" && m.sessionId === session, 30000, "the page to load");
  const nav = await send("Page.navigate", { url: pageUrl }, session);
  if (nav.errorText) throw new Error("cannot load " + pageUrl + ": " + nav.errorText);
  await loaded;
  const ready = await evaluate("document.body.getAttribute('data-ready')");
  if (ready !== "1") fail("the page's script did not finish (body[data-ready] is " + J(ready) + ")");
  for (const s of steps) await step(s);
  /* late errors (timers) */
  await new Promise((r) => setTimeout(r, 200));
}

const deadline = setTimeout(() => { fail("timed out after 90 s"); finish(); }, 90000);
let finished = false;
function finish(err) {
  if (finished) return;
  finished = true;
  clearTimeout(deadline);
  if (err) fail(err.message);
  for (const p of problems) fail(p);
  const done = () => {
    try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
    if (failures.length && stderr && err) console.error("--- chromium's stderr (tail):\n" + stderr.slice(-3000));
    console.log(failures.length ? failures.length + " problem(s)" : "page OK: " + steps.length + " step(s) passed");
    process.exit(failures.length ? 1 : 0);
  };
  if (exited) { done(); return; }
  send("Browser.close").catch(() => {});
  const kill = setTimeout(() => { browser.kill("SIGKILL"); }, 3000);
  browser.on("exit", () => { clearTimeout(kill); done(); });
}
main().then(() => finish(), (e) => finish(e));
