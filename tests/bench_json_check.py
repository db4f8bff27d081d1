#!/usr/bin/env python3
"""Checks sluice-bench's JSON summary against its text summary: the JSON
parses, and every number of every text summary row and iteration row is in
the JSON, equal up to the text's rounding. Also checks the latency CSV.
Usage: bench_json_check.py TEXT JSON LATENCY_CSV"""
import csv
import json
import sys

text_path, json_path, lat_path = sys.argv[1:4]
doc = json.load(open(json_path))
text = open(text_path).read().splitlines()
errors = []


def close(a, b, digits):
    return abs(a - b) <= 0.6 * 10 ** -digits * max(1, 1) + 1e-9 * abs(b)


for key in ("began", "finished", "commandLine", "machine", "options", "tests"):
    if key not in doc:
        errors.append(f"JSON lacks '{key}'")
opts = doc["options"]
header = {l.split(":")[0].strip(): l.split(":", 1)[1].strip()
          for l in text if " : " in l and not l.startswith(" ")}
if int(header["tasks"]) != opts["tasks"]:
    errors.append("tasks differ")
if int(header["segments"]) != opts["segmentCount"]:
    errors.append("segments differ")
if header["access"] != opts["access"]:
    errors.append("access differs")
if int(header["repetitions"]) != opts["repetitions"]:
    errors.append("repetitions differ")

tests = {t["api"]: t for t in doc["tests"]}

# Summary rows: Operation Max Min Mean StdDev MaxOPs MinOPs MeanOPs Mean(s) open(s) ...
# /device /fio-sync API
start = next(i for i, l in enumerate(text) if l.startswith("Summary of all tests"))
rows = [l.split() for l in text[start + 2:] if l.startswith(("write ", "read "))]
if not rows:
    errors.append("no summary rows in the text")
fields = [("maxMiB", 1, 2), ("minMiB", 2, 2), ("meanMiB", 3, 2), ("stdDevMiB", 4, 2),
          ("maxOPs", 5, 2), ("minOPs", 6, 2), ("meanOPs", 7, 2), ("meanTime", 8, 5),
          ("meanOpenTime", 9, 5)]
for r in rows:
    api, op = r[-1], r[0]
    if api not in tests:
        errors.append(f"{api} not in JSON")
        continue
    s = [x for x in tests[api]["summary"] if x["operation"] == op]
    if not s:
        errors.append(f"{api} {op} summary not in JSON")
        continue
    s = s[0]
    for name, col, digits in fields:
        if not close(float(r[col]), s[name], digits):
            errors.append(f"{api} {op} {name}: text {r[col]} JSON {s[name]}")
    # The last columns: /device, /fio-sync, API.
    for text_value, key in ((r[-3], "fractionOfDeviceLimit"), (r[-2], "fractionOfFioSync")):
        if text_value == "-":
            if s[key] is not None:
                errors.append(f"{api} {op}: text has no {key}, JSON {s[key]}")
        elif s[key] is None or not close(float(text_value), s[key], 2):
            errors.append(f"{api} {op}: {key} {text_value} vs {s[key]}")

# Iteration rows, per API section: access bw iops latency block xfer open wrrd close total iter
section = None
iters = {}
for l in text[:start]:
    if l.startswith("=== "):
        section = l[4:].strip()
    elif section and l.startswith(("write ", "read ")):
        iters.setdefault(section, []).append(l.split())
cols = [("bwMiB", 1, 2), ("iops", 2, 2), ("latency", 3, 6), ("blockKiB", 4, 2),
        ("xferKiB", 5, 2), ("openTime", 6, 6), ("wrRdTime", 7, 6),
        ("closeTime", 8, 6), ("totalTime", 9, 6)]
for api, rs in iters.items():
    js = tests[api]["results"]
    if len(rs) != len(js):
        errors.append(f"{api}: {len(rs)} text iterations, {len(js)} in JSON")
        continue
    for r, j in zip(rs, js):
        if r[0] != j["access"] or int(r[10]) != j["iter"]:
            errors.append(f"{api}: iteration order differs")
        for name, col, digits in cols:
            if not close(float(r[col]), j[name], digits):
                errors.append(f"{api} iter {j['iter']} {name}: {r[col]} vs {j[name]}")
        # With --fast-root/--slow-root: waited_s, its MiB/s, durable_s, its
        # MiB/s after the iteration ("-" where not measured: null).
        tiered = [("waitedTime", 11, 6), ("waitedBwMiB", 12, 2),
                  ("durableTime", 13, 6), ("durableBwMiB", 14, 2)]
        if opts.get("slowRoot") is None:
            if len(r) != 11:
                errors.append(f"{api} iter {j['iter']}: {len(r)} columns without tiers")
            continue
        if len(r) != 15:
            errors.append(f"{api} iter {j['iter']}: {len(r)} columns with tiers, want 15")
            continue
        for name, col, digits in tiered:
            if r[col] == "-":
                if j[name] is not None:
                    errors.append(f"{api} iter {j['iter']} {name}: text -, JSON {j[name]}")
            elif j[name] is None or not close(float(r[col]), j[name], digits):
                errors.append(f"{api} iter {j['iter']} {name}: {r[col]} vs {j[name]}")

# Tier lines: "tiers     API: mean waited_s W (B MiB/s), mean durable_s D (B MiB/s)"
for l in text:
    if l.startswith("tiers "):
        api = l.split()[1].rstrip(":")
        nums = [float(x.strip("(")) for x in l.split() if x.strip("(").replace(".", "", 1).isdigit()]
        s = [x for x in tests[api]["summary"] if x["operation"] == "write"][0]
        for name, v, digits in zip(("meanWaitedTime", "meanWaitedBwMiB", "meanDurableTime",
                                    "meanDurableBwMiB"), nums, (6, 2, 6, 2)):
            if s[name] is None or not close(v, s[name], digits):
                errors.append(f"{api} {name}: text {v} JSON {s[name]}")

# Resource lines
for l in text:
    if l.startswith("resources "):
        api = l.split()[1].rstrip(":")
        rss = float(l.split("peak RSS ")[1].split()[0])
        if not close(rss, tests[api]["peakRssMiB"], 1):
            errors.append(f"{api} peak RSS {rss} vs {tests[api]['peakRssMiB']}")

# Every API that ran wrote latencies for every transfer.
with open(lat_path) as f:
    lat = list(csv.DictReader(f))
for api, t in tests.items():
    if api.startswith("FIO-") or api == "DEVICE-LIMIT" or t["skipped"]:
        continue
    n = sum(1 for x in lat if x["api"] == api)
    want = sum(r["bytes"] for r in t["results"]) // (opts["transferSize"])
    if n != want:
        errors.append(f"{api}: {n} latency rows, want {want}")

for e in errors:
    print("bench_json_check:", e)
print(f"bench_json_check: {len(rows)} summary rows, "
      f"{sum(len(v) for v in iters.values())} iterations, {len(lat)} latencies checked")
sys.exit(1 if errors else 0)
