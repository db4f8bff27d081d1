#!/usr/bin/env python3
"""Pooled medians of the write figures per case and build, and after/before."""
import glob, json, os, re, statistics, sys
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
cells = {}
for j in glob.glob(os.path.join(out, "*.json")):
    m = re.match(r"(.+)-(before|after)-(\d+)\.json$", os.path.basename(j))
    d = json.load(open(j))
    for r in d["tests"][0]["results"]:
        if r["access"] == "write":
            cells.setdefault((m.group(1), m.group(2)), []).append(r["bwMiB"])
print("| case | write before | write after | after / before |")
print("|---|---:|---:|---:|")
for case in sorted({c for c, _ in cells}):
    b = cells.get((case, "before"), [])
    a = cells.get((case, "after"), [])
    if not a or not b:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {case} | {mb:.0f} ({len(b)}) | {ma:.0f} ({len(a)}) | {ma / mb:.2f} |")
