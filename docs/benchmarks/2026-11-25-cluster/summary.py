#!/usr/bin/env python3
"""Pooled medians of write bandwidth per tier and API, and their ratios."""
import glob, json, os, re, statistics, sys
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
cells = {}
for j in sorted(glob.glob(os.path.join(out, "*.json"))):
    tier = re.match(r"(pfs|local)-\d+\.json$", os.path.basename(j)).group(1)
    for t in json.load(open(j))["tests"]:
        for r in t["results"]:
            if r["access"] == "write":
                cells.setdefault((tier, t["api"]), []).append(r["bwMiB"])
apis = ["FIO-LIMIT", "POSIX", "SLUICE-KV"]
med = {k: statistics.median(v) for k, v in cells.items()}
print("| API | PFS (400 MiB/s cap) MiB/s | runs | /local MiB/s | runs | /local / PFS |")
print("|---|---:|---|---:|---|---:|")
for a in apis:
    p, l = cells.get(("pfs", a), []), cells.get(("local", a), [])
    if not p or not l:
        continue
    print(f"| {a} | {med[('pfs', a)]:.0f} | {', '.join(f'{x:.0f}' for x in p)} "
          f"| {med[('local', a)]:.0f} | {', '.join(f'{x:.0f}' for x in l)} "
          f"| {med[('local', a)] / med[('pfs', a)]:.1f} |")
