#!/usr/bin/env python3
"""Pooled medians of the tier runs (run.sh): per API, the time the
application waited and the time until the checkpoint was durable on the
slow root; SLUICE-DATASET's waited time against POSIX's (straight to the
PFS with fsync) and its drain rate against the PFS's write cap.

    summary.py OUT CAP_MIB_S
"""
import glob
import json
import statistics
import sys

out, cap = sys.argv[1], float(sys.argv[2])
rows = {}
for path in sorted(glob.glob(f"{out}/run-*.json")):
    doc = json.load(open(path))
    for t in doc["tests"]:
        if t.get("skipped"):
            continue
        for r in t["results"]:
            if r["access"] != "write":
                continue
            rows.setdefault(t["api"], []).append(r)

print("| API | checkpoints | waited s (median) | durable s (median) | "
      "waited MiB/s | durable MiB/s |")
print("|---|---|---|---|---|---|")
med = {}
for api, rs in sorted(rows.items()):
    w = statistics.median(r["waitedTime"] for r in rs)
    d = statistics.median(r["durableTime"] for r in rs)
    mib = rs[0]["bytes"] / 2**20
    med[api] = (w, d, mib)
    print(f"| {api} | {len(rs)} | {w:.2f} | {d:.2f} | {mib / w:.0f} | "
          f"{mib / d:.0f} |")
print()
if "POSIX" in med and "SLUICE-DATASET" in med:
    pw = med["POSIX"][0]
    w, d, mib = med["SLUICE-DATASET"]
    print(f"- SLUICE-DATASET waited / POSIX (straight to the PFS, fsync): "
          f"{w / pw:.3f} (criterion <= 0.15)")
    drains = [r["bytes"] / 2**20 / (r["durableTime"] - r["waitedTime"])
              for r in rows["SLUICE-DATASET"]
              if r["durableTime"] > r["waitedTime"]]
    dr = statistics.median(drains)
    print(f"- SLUICE-DATASET drain (bytes / (durable - waited)), median: "
          f"{dr:.0f} MiB/s = {dr / cap:.2f} x the {cap:.0f} MiB/s cap "
          f"(criterion >= 0.9)")
    print(f"- SLUICE-DATASET durable / POSIX: {d / pw:.2f}")
if "ADIOS2-BB" in med and "POSIX" in med:
    w, d, mib = med["ADIOS2-BB"]
    print(f"- ADIOS2-BB waited / POSIX: {w / med['POSIX'][0]:.3f}; "
          f"durable / POSIX: {d / med['POSIX'][0]:.2f}")
