#!/usr/bin/env python3
"""Checks the render tests' outputs with the standard library only.

  check_outputs.py svg FILE NAME...        well-formed XML, an <svg> root, NAMEs in its text
  check_outputs.py flame-svg FILE          + every box has a <title>; leaky's title carries 3000 bytes
  check_outputs.py speedscope FILE         structure and exact weights (named_allocs.c's)
  check_outputs.py pprof FILE              protoc --decode_raw's text of the profile: samples
Exits 1 with the reasons on stderr."""
import json
import re
import sys
import time
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


def svg(path, names):
    root = ET.parse(path).getroot()
    check(root.tag == SVG + "svg", f"root element is {root.tag}, not svg")
    text = " ".join(t for t in root.itertext())
    for name in names:
        check(name in text, f"{name!r} not in the SVG's text")
    return root


def flame_svg(path):
    root = svg(path, ["leaky", "peak_holder", "main"])
    boxes = [g for g in root.iter(SVG + "g") if g.find(SVG + "rect") is not None]
    check(len(boxes) >= 4, f"only {len(boxes)} boxes")
    for g in boxes:
        check(g.find(SVG + "title") is not None, "a box without a <title>")
    titles = [g.find(SVG + "title").text for g in boxes if g.find(SVG + "title") is not None]
    check(any(t.startswith("leaky (3000 bytes") for t in titles), f"no title 'leaky (3000 bytes': {titles}")
    check(any(t.startswith("peak_holder (8192 bytes") for t in titles), "no title 'peak_holder (8192 bytes'")
    # widths proportional to cost: peak_holder's box is 8192/3000 of leaky's
    width = {}
    for g in boxes:
        t = g.find(SVG + "title").text
        width[t.split(" (")[0]] = float(g.find(SVG + "rect").get("width"))
    if "leaky" in width and "peak_holder" in width:
        ratio = width["peak_holder"] / width["leaky"]
        check(abs(ratio - 8192 / 3000) < 0.01, f"width ratio {ratio}, want {8192 / 3000}")


def leaf_sums(profile, frames):
    sums = {}
    for stack, w in zip(profile["samples"], profile["weights"]):
        names = [frames[i]["name"] for i in stack]
        if "main" not in names:
            continue
        # the frame called by main: these are named_allocs.c's functions
        leaf = names[names.index("main") + 1] if names.index("main") + 1 < len(names) else "main"
        sums[leaf] = sums.get(leaf, 0) + w
    return sums


def speedscope(path):
    with open(path) as f:
        doc = json.load(f)
    check(doc.get("$schema") == "https://www.speedscope.app/file-format-schema.json", "bad $schema")
    frames = doc["shared"]["frames"]
    check(all(isinstance(fr.get("name"), str) for fr in frames), "a frame without a name")
    names = [p["name"] for p in doc["profiles"]]
    check(names == ["peak", "allocations", "leaked"], f"profiles {names}")
    want = {
        "peak": ({"leaky": 3000, "peak_holder": 8192}, "bytes"),
        "allocations": ({"leaky": 3, "peak_holder": 4, "temporaries": 5}, "none"),
        "leaked": ({"leaky": 3000}, "bytes"),
    }
    for p in doc["profiles"]:
        check(p["type"] == "sampled", f"{p['name']}: type {p['type']}")
        check(len(p["samples"]) == len(p["weights"]), f"{p['name']}: samples and weights differ in length")
        check(all(0 <= i < len(frames) for s in p["samples"] for i in s), f"{p['name']}: frame index out of range")
        check(p["endValue"] == sum(p["weights"]), f"{p['name']}: endValue {p['endValue']} != sum of weights")
        if p["name"] in want:
            sums, unit = want[p["name"]]
            check(p["unit"] == unit, f"{p['name']}: unit {p['unit']}")
            got = leaf_sums(p, frames)
            check(got == sums, f"{p['name']}: weights by function {got}, want {sums}")


def parse_decode_raw(text):
    """protoc --decode_raw's text -> nested lists of (field, value)."""
    stack = [[]]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            done = stack.pop()
            stack[-1][-1] = (stack[-1][-1][0], done)
        elif line.endswith("{"):
            stack[-1].append((int(line.split()[0]), None))
            stack.append([])
        else:
            k, v = line.split(": ", 1)
            stack[-1].append((int(k), v))
    return stack[0]


def encode(msg):
    """The bytes decode_raw parsed as `msg` (it shows a string that happens to
    parse as a message, like "peak_holder", as one): varints, fixed64 and
    fixed32 ("0x" and 16 or 8 digits), strings, nested messages."""
    out = bytearray()

    def varint(v):
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return

    for k, v in msg:
        if isinstance(v, list):
            body = encode(v)
            varint(k << 3 | 2)
            varint(len(body))
            out += body
        elif v.startswith('"'):
            body = v[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1")
            varint(k << 3 | 2)
            varint(len(body))
            out += body
        elif v.startswith("0x") and len(v) == 18:
            varint(k << 3 | 1)
            out += int(v, 16).to_bytes(8, "little")
        elif v.startswith("0x") and len(v) == 10:
            varint(k << 3 | 5)
            out += int(v, 16).to_bytes(4, "little")
        else:
            varint(k << 3)
            varint(int(v))
    return bytes(out)


def as_string(v):
    if isinstance(v, list):
        return encode(v).decode("latin-1")
    return v[1:-1].encode("latin-1").decode("unicode_escape")


def fields(msg, num):
    return [v for k, v in msg if k == num]


def pprof(path):
    with open(path) as f:
        top = parse_decode_raw(f.read())
    strings = [as_string(s) for s in fields(top, 6)]
    check(strings and strings[0] == "", "string 0 is not empty")
    types = [(strings[int(fields(vt, 1)[0])], strings[int(fields(vt, 2)[0])]) for vt in fields(top, 1)]
    want_types = [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"), ("inuse_space", "bytes")]
    check(types == want_types, f"sample types {types}")
    functions = {int(fields(f, 1)[0]): strings[int(fields(f, 2)[0])] for f in fields(top, 5)}
    locations = {}
    for loc in fields(top, 4):
        lines = fields(loc, 4)
        locations[int(fields(loc, 1)[0])] = [functions[int(fields(l, 1)[0])] for l in lines]
        check(all(int((fields(l, 2) or ["0"])[0]) >= 0 for l in lines), "bad line number")
    check(len(fields(top, 3)) >= 1, "no mappings")
    # time_nanos: when the program started, on the wall clock (within the last day)
    started = [int(v) for v in fields(top, 9)]
    now = time.time_ns()
    check(len(started) == 1 and now - 86400 * 10**9 < started[0] <= now, f"time_nanos {started}, now {now}")
    for name in ("leaky", "peak_holder", "temporaries"):
        check(name in strings, f"{name} not in the string table")
    got = {}
    for s in fields(top, 2):
        frames = [f for lid in fields(s, 1) for f in locations[int(lid)]]
        values = [int(v) for v in fields(s, 2)]
        check(len(values) == 4, f"sample with {len(values)} values")
        if "main" in frames and frames.index("main") > 0:
            leaf = frames[frames.index("main") - 1]  # leaf first: main's callee comes just before it
            old = got.get(leaf, [0, 0, 0, 0])
            got[leaf] = [a + b for a, b in zip(old, values)]
    want = {"leaky": [3, 3000, 3, 3000], "peak_holder": [4, 8192, 4, 8192], "temporaries": [5, 500, 0, 0]}
    check(got == want, f"samples by function {got}, want {want}")


def main():
    what, path = sys.argv[1], sys.argv[2]
    try:
        if what == "svg":
            svg(path, sys.argv[3:])
        elif what == "flame-svg":
            flame_svg(path)
        elif what == "speedscope":
            speedscope(path)
        elif what == "pprof":
            pprof(path)
        else:
            errors.append(f"unknown check {what}")
    except Exception as e:  # a parse error is a failure, with its reason
        errors.append(f"{type(e).__name__}: {e}")
    for e in errors:
        print(f"FAIL: {what} {path}: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
