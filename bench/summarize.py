#!/usr/bin/env python3
"""Markdown tables from bench/run.sh's raw lines (medians over repetitions).

usage: summarize.py RAW_DIR   (reads overhead.txt, latency.txt, scaling.txt)
"""
import os
import statistics
import sys
from collections import defaultdict

PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
TLSFS = ["tlsf", "tlsf-mlock", "hook-tlsf"]
CLASSES = ["16-528B", "529B-33KiB", "64KiB-4MiB"]


def parse(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            toks = line.split()
            row = {"is_class": "class" in toks}
            for t in toks:
                if "=" in t:
                    k, v = t.split("=", 1)
                    try:
                        row[k] = float(v)
                    except ValueError:
                        row[k] = v
            rows.append(row)
    return rows


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def ns(x):
    if x != x:
        return "-"
    if x >= 10000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def by_cfg(rows, threads=None):
    d = defaultdict(list)
    for r in rows:
        if r["is_class"]:
            continue
        if threads is not None and int(r.get("threads", 1)) != threads:
            continue
        d[r["cfg"]].append(r)
    return d


def paired_ratio(d, cfg, base, key):
    """Median over rounds of cfg/base, both from the same round."""
    b = {r["rep"]: r[key] for r in d.get(base, [])}
    xs = [r[key] / b[r["rep"]] for r in d.get(cfg, []) if r["rep"] in b and b[r["rep"]]]
    return med(xs)


def overhead(rows):
    d = by_cfg(rows)
    if not d:
        return ""
    out = []
    hook = ["glibc", "hook-passthrough", "hook-counts", "hook-usage", "hook-counts+usage"]
    names = {
        "glibc": "no preload (glibc)",
        "hook-passthrough": "libheaphook.so, nothing set (passthrough)",
        "hook-counts": "libheaphook.so HEAPHOOK_RECORD=counts",
        "hook-usage": "libheaphook.so HEAPHOOK_RECORD=usage",
        "hook-counts+usage": "libheaphook.so HEAPHOOK_RECORD=counts,usage",
    }
    t = []
    for c in hook:
        if c not in d:
            continue
        v = [r["ns_per_op"] for r in d[c]]
        base = med([r["ns_per_op"] for r in d["glibc"]])
        t.append([names[c], f"{med(v):.1f}", f"{min(v):.1f}-{max(v):.1f}", f"{med(v) - base:+.1f}",
                  f"{paired_ratio(d, c, 'glibc', 'ns_per_op'):.3f}", len(v)])
    out.append("## Hook overhead (churn, ns per call, no per-call timer)\n")
    out.append(table(["configuration", "median ns/op", "min-max", "median - no preload", "ratio to no preload (median of same-round ratios)", "runs"], t))
    t = []
    for c in PEERS + ["tlsf", "hook-tlsf"]:
        if c not in d:
            continue
        v = [r["ns_per_op"] for r in d[c]]
        t.append([c, f"{med(v):.1f}", f"{min(v):.1f}-{max(v):.1f}", f"{1e3 / med(v):.1f}",
                  f"{1 / paired_ratio(d, c, 'glibc', 'ns_per_op'):.2f}", f"{med([r['minflt'] for r in d[c]]):.0f}", len(v)])
    out.append("## Throughput (same churn, single thread, no per-call timer)\n")
    out.append(table(["allocator", "median ns/op", "min-max", "M ops/s", "ops/s vs glibc (same-round)", "minor faults in loop", "runs"], t))
    return "\n".join(out)


def pcts(d, c, op, key):
    return [r[f"{op}_{key}_ns"] for r in d[c]]


def latency(rows):
    d = by_cfg(rows)
    if not d:
        return "", {}
    cfgs = [c for c in PEERS + TLSFS if c in d]
    out = ["## Latency under churn, single thread (ns, median of runs; p99.99 also min-max over runs)\n"]
    for op in ("malloc", "free"):
        t = []
        for c in cfgs:
            p9999 = pcts(d, c, op, "p9999")
            t.append([c] + [ns(med(pcts(d, c, op, k))) for k in ("p50", "p99", "p999")] +
                     [f"**{ns(med(p9999))}** ({ns(min(p9999))}-{ns(max(p9999))})", ns(med(pcts(d, c, op, "max")))] +
                     [f"{med([r[f'{op}_over{k}'] * 1e6 / (r['iters'] * r['threads']) for r in d[c]]):.0f}" for k in ("1us", "10us")])
        out.append(f"### {op}\n")
        out.append(table(["allocator", "p50", "p99", "p99.9", "p99.99 (min-max)", "max", "calls > 1 us per million", "calls > 10 us per million"], t))
    t = []
    for c in cfgs:
        flt = [r["minflt"] for r in d[c]]
        t.append([c, f"{med([r['ops_per_s'] for r in d[c]]) / 1e6:.2f}",
                  f"{1 / paired_ratio(d, c, 'glibc', 'wall_s'):.2f}" if "glibc" in d else "-",
                  f"{med(flt):.0f} ({min(flt):.0f}-{max(flt):.0f})",
                  ns(med([r["empty_p50_ns"] for r in d[c]])), ns(med([r["empty_p9999_ns"] for r in d[c]])), len(d[c])])
    out.append("### Throughput and page faults of the measured phase\n")
    out.append(table(["allocator", "M ops/s (timed loop)", "vs glibc (same-round)", "minor faults (min-max)",
                      "empty window p50", "empty window p99.99", "runs"], t))

    # Per size class p99.99 (medians over runs).
    cl = defaultdict(list)
    for r in rows:
        if r["is_class"]:
            cl[(r["cfg"], r["op"], r["class"])].append(r)
    if cl:
        t = []
        for c in cfgs:
            row = [c]
            for op in ("malloc", "free"):
                for k in CLASSES:
                    v = cl.get((c, op, k), [])
                    row.append(f"{ns(med([x['x_p50_ns'] for x in v]))} / {ns(med([x['x_p9999_ns'] for x in v]))}")
            t.append(row)
        n = {k: med([x["n"] for x in cl.get((cfgs[0], "malloc", k), [])]) for k in CLASSES}
        out.append("### By size class: p50 / p99.99 (ns)\n")
        out.append(table(["allocator"] + [f"{op} {k} (n={n[k]:.0f})" for op in ("malloc", "free") for k in CLASSES], t))
    return "\n".join(out), d


def noise(rows):
    if not rows:
        return ""
    keys = [("gaps_over1us_per_s", "gaps > 1 us per second"), ("gaps_over10us_per_s", "gaps > 10 us per second"),
            ("lost_pct", "CPU time lost in gaps, %"), ("longest_gap_us", "longest gap, us")]
    t = [[name, f"{med([r[k] for r in rows]):.1f}", f"{min(r[k] for r in rows):.1f}-{max(r[k] for r in rows):.1f}"]
         for k, name in keys]
    return ("### Machine noise (hh_bench_noise: a thread spinning on rdtscp, 1 s before each latency round)\n\n" +
            table(["measure", "median", "min-max"], t) +
            f"\nA timed call of duration t is hit by such a gap with probability ~ rate x t: at "
            f"{med([r['gaps_over1us_per_s'] for r in rows]):.0f} gaps/s a 50 ns call is hit about once in "
            f"{1 / (med([r['gaps_over1us_per_s'] for r in rows]) * 50e-9):,.0f} calls, a 200 ns call once in "
            f"{1 / (med([r['gaps_over1us_per_s'] for r in rows]) * 200e-9):,.0f}: p99.99 (1 in 10,000) of an allocator "
            "whose calls are slower on average lands on these gaps sooner.\n")


def targets(d, ov):
    if "tlsf" not in d:
        return ""
    peers = [c for c in PEERS if c in d]
    t = []
    for op in ("malloc", "free"):
        tl = med(pcts(d, "tlsf", op, "p9999"))
        best = min(peers, key=lambda c: med(pcts(d, c, op, "p9999")))
        bv = med(pcts(d, best, op, "p9999"))
        pooled = med([x for c in TLSFS if c in d for x in pcts(d, c, op, "p9999")])
        npool = sum(len(d[c]) for c in TLSFS if c in d)
        t.append([f"{op} p99.99 below every peer's",
                  f"tlsf {ns(tl)} ns (all {npool} TLSF runs pooled: {ns(pooled)}); best peer {best} {ns(bv)} ns",
                  "met" if tl < bv else "**missed**"])
    flt = [r["minflt"] for c in TLSFS if c in d for r in d[c]]
    t.append(["zero page faults in the measured phase", f"tlsf runs: max {max(flt):.0f} minor faults",
              "met" if max(flt) == 0 else "**missed**"])
    if "glibc" in d:
        r = 1 / paired_ratio(d, "tlsf", "glibc", "wall_s")
        t.append(["single-thread ops/s at least glibc's (latency loop)", f"tlsf/glibc = {r:.2f}", "met" if r >= 1 else "**missed**"])
    od = by_cfg(ov)
    if "tlsf" in od and "glibc" in od:
        r = 1 / paired_ratio(od, "tlsf", "glibc", "ns_per_op")
        t.append(["single-thread ops/s at least glibc's (untimed churn)", f"tlsf/glibc = {r:.2f}", "met" if r >= 1 else "**missed**"])
    return "## TLSF targets (computed from the medians above)\n\n" + table(["target", "measured", "verdict"], t)


def scaling(rows):
    if not rows:
        return ""
    ths = sorted({int(r["threads"]) for r in rows if not r["is_class"]})
    cfgs = [c for c in PEERS + ["tlsf"] if any(r["cfg"] == c for r in rows)]
    t1, t2 = [], []
    for c in cfgs:
        a, b = [c], [c]
        for th in ths:
            v = by_cfg(rows, th).get(c, [])
            a.append(f"{med([r['ops_per_s'] for r in v]) / 1e6:.1f}")
            b.append(f"{ns(med([r['malloc_p9999_ns'] for r in v]))} / {ns(med([r['free_p9999_ns'] for r in v]))}")
        t1.append(a)
        t2.append(b)
    out = ["## Thread scaling (each thread its own working set; median of runs)\n",
           "### Aggregate M ops/s (timed loop)\n", table(["allocator"] + [f"{th} thr" for th in ths], t1),
           "### p99.99 malloc / free (ns), all threads' samples together\n",
           table(["allocator"] + [f"{th} thr" for th in ths], t2)]
    return "\n".join(out)


def main():
    raw = sys.argv[1]
    ov = parse(os.path.join(raw, "overhead.txt"))
    lat = parse(os.path.join(raw, "latency.txt"))
    sc = parse(os.path.join(raw, "scaling.txt"))
    parts = [overhead(ov)]
    text, d = latency(lat)
    parts += [text, noise(parse(os.path.join(raw, "noise.txt"))), targets(d, ov) if d else "", scaling(sc)]
    print("\n".join(p for p in parts if p))


if __name__ == "__main__":
    main()
