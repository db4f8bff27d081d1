#!/usr/bin/env python3
"""Pooled medians of write bandwidth per (mode, transfer, API), the ratio
SLUICE-DATASET / SLUICE-STREAM, and the dataset's open-to-commit overhead."""
import glob, json, os, re, statistics, sys
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
bw, over = {}, {}
for j in sorted(glob.glob(os.path.join(out, "*.json"))):
    mode, t, _ = os.path.basename(j)[:-5].split("-")
    for test in json.load(open(j))["tests"]:
        for r in test["results"]:
            if r["access"] == "write":
                bw.setdefault((mode, t, test["api"]), []).append(r["bwMiB"])
    txt = open(j[:-5] + ".txt").read()
    m = re.search(r"open-to-commit overhead.*?: ([0-9.]+) ms", txt)
    if m:
        over.setdefault((mode, t), []).append(float(m.group(1)))
names = {"shared": "shared, basic", "pernode": "shared, file_per_node",
         "fpp": "unique per rank (-F), basic"}
print("| element, mode | transfer | SLUICE-DATASET MiB/s | runs | SLUICE-STREAM MiB/s "
      "| runs | DATASET / STREAM | open-to-commit overhead (ms), median (runs) |")
print("|---|---|---:|---|---:|---|---:|---|")
for mode in ("shared", "pernode", "fpp"):
    for t in ("1m", "64k"):
        d = bw.get((mode, t, "SLUICE-DATASET"), [])
        s = bw.get((mode, t, "SLUICE-STREAM"), [])
        if not d or not s:
            continue
        md, ms = statistics.median(d), statistics.median(s)
        o = over.get((mode, t), [])
        print(f"| {names[mode]} "
              f"| {t.replace('m', ' MiB').replace('k', ' KiB')} | {md:.0f} "
              f"| {', '.join(f'{x:.0f}' for x in d)} | {ms:.0f} "
              f"| {', '.join(f'{x:.0f}' for x in s)} | {md / ms:.2f} "
              f"| {statistics.median(o):.2f} ({', '.join(f'{x:.2f}' for x in o)}) |")
