#!/usr/bin/env python3
"""Issue-style check of a bench/matrix folder: Part B cells for SLUICE-STREAM
and SLUICE-POSIX as fractions of DEVICE-LIMIT and of the best of POSIX,
MPIIO and HDF5 (pooled medians); Part C reads against DEVICE-LIMIT."""
import glob, json, os, re, statistics, sys
folder = sys.argv[1]
med = {}
for path in glob.glob(os.path.join(folder, "*.json")):
    name = os.path.basename(path)[:-5]
    d = json.load(open(path))
    for t in d["tests"]:
        for op in ("write", "read"):
            v = [r["bwMiB"] for r in t["results"] if r["access"] == op]
            if v:
                med[(name, op)] = statistics.median(v)
def g(name, op):
    return med.get((name, op))
rows = []
for t in ("16k", "100k", "1m"):
    for pat in ("seq", "rand"):
        for n in (1, 2, 4):
            dev = {op: g(f"B-DEVICE-LIMIT-n{n}-t{t}", op) for op in ("write", "read")}
            base = {op: max([(g(f"B-{b}-{pat}-n{n}-t{t}", op) or 0, b) for b in ("POSIX", "MPIIO", "HDF5")]) for op in ("write", "read")}
            for api in ("SLUICE-STREAM", "SLUICE-POSIX", "SLUICE-KV"):
                cells = []
                for op in ("write", "read"):
                    v = g(f"B-{api}-{pat}-n{n}-t{t}", op)
                    if v is None:
                        cells.append("-"); continue
                    need = 0.85 if op == "write" or pat == "seq" else 0.7
                    fd = v / dev[op] if dev[op] else float("nan")
                    fb = v / base[op][0] if base[op][0] else float("nan")
                    ok = "ok" if fd >= need and fb >= 1.0 else "MISS"
                    cells.append(f"{v:.0f} ({fd:.2f} dev, {fb:.2f} {base[op][1]}) {ok}")
                print(f"{t:>4} {pat:4} n{n} {api:14} W {cells[0]:40} R {cells[1]}")
print()
for m in (2, 4, 8):
    dev = g(f"C-DEVICE-LIMIT-n{m}-t1m", "read")
    for api in ("SLUICE-STREAM", "SLUICE-POSIX", "POSIX"):
        v = g(f"C-{api}-n{m}-t1m", "read")
        if v and dev:
            print(f"restart read by {m}: {api:14} {v:.0f} = {v/dev:.2f} of DEVICE-LIMIT read {dev:.0f}")
