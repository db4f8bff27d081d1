#!/usr/bin/env python3
"""Reads sluice-bench's JSON summary the way a script written for IOR's JSON
reads IOR's: with IOR's key names only (hpc/ior src/ior-output.c), and
checks what it reads against the run's flags, the text output and itself.

Usage: ior_json_reader.py TEXT JSON RANKS XFER BLOCK SEGMENTS REPS FPP API,API...
"""
import json
import statistics
import sys

text_path, json_path = sys.argv[1:3]
ranks, xfer, block, segments, reps, fpp = (int(x) for x in sys.argv[3:9])
apis = sys.argv[9].split(",")
doc = json.load(open(json_path))
text = open(text_path).read().splitlines()
errors = []


def check(ok, what):
    if not ok:
        errors.append(what)


def near(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-9


for key in ("Began", "Command line", "Machine", "Finished"):
    check(isinstance(doc.get(key), str) and doc[key], f"no '{key}'")
summary = doc["summary"]
tests = doc["tests"]
check(sorted({s["API"] for s in summary}) == sorted(apis),
      f"summary APIs {sorted({s['API'] for s in summary})}, want {sorted(apis)}")
check(sorted((s["API"], s["operation"]) for s in summary) ==
      sorted((a, op) for a in apis for op in ("write", "read")),
      "not one summary row per API and operation")

for s in summary:
    name = f"{s['API']} {s['operation']}"
    check(s["operation"] in ("write", "read"), f"{name}: operation")
    check(s["numTasks"] == ranks, f"{name}: numTasks {s['numTasks']}, want {ranks}")
    check(1 <= s["tasksPerNode"] <= ranks, f"{name}: tasksPerNode {s['tasksPerNode']}")
    check(s["transferSize"] == xfer, f"{name}: transferSize {s['transferSize']}, want {xfer}")
    check(s["blockSize"] == block, f"{name}: blockSize {s['blockSize']}, want {block}")
    check(s["segmentCount"] == segments, f"{name}: segmentCount {s['segmentCount']}")
    check(s["repetitions"] == reps, f"{name}: repetitions {s['repetitions']}")
    check(s["filePerProc"] == fpp, f"{name}: filePerProc {s['filePerProc']}")
    check(s["xsizeMiB"] == block * segments * ranks / 2**20, f"{name}: xsizeMiB {s['xsizeMiB']}")
    check(s["bwMinMIB"] <= s["bwMeanMIB"] <= s["bwMaxMIB"],
          f"{name}: bwMeanMIB {s['bwMeanMIB']} not within [{s['bwMinMIB']}, {s['bwMaxMIB']}]")
    check(0 <= s["bwStdMIB"] <= s["bwMaxMIB"] - s["bwMinMIB"], f"{name}: bwStdMIB {s['bwStdMIB']}")
    check(s["OPsMin"] <= s["OPsMean"] <= s["OPsMax"], f"{name}: OPsMean not within its range")
    # IOR's OPs are its bandwidth counted in transfers.
    check(near(s["OPsMean"], s["bwMeanMIB"] * 2**20 / s["transferSize"]),
          f"{name}: OPsMean {s['OPsMean']} is not bwMeanMIB in transfers")
    check(s["OPsSD"] >= 0, f"{name}: OPsSD")

    test = tests[s["TestID"]]
    check(test["TestID"] == s["TestID"], f"{name}: tests[TestID] is another test")
    check(test["Parameters"]["api"] == s["API"] == test["Options"]["api"],
          f"{name}: Parameters/Options api")
    check(test["Parameters"]["transferSize"] == xfer, f"{name}: Parameters transferSize")
    check(test["Parameters"]["blockSize"] == block, f"{name}: Parameters blockSize")
    check(test["Options"]["tasks"] == ranks, f"{name}: Options tasks")
    check(test["Options"]["access"] == ("file-per-process" if fpp else "single-shared-file"),
          f"{name}: Options access")
    results = [r for r in test["Results"] if r["access"] == s["operation"]]
    check(len(results) == reps, f"{name}: {len(results)} Results, want {reps}")
    if not results:
        continue
    bws = [r["bwMiB"] for r in results]
    check(near(min(bws), s["bwMinMIB"]) and near(max(bws), s["bwMaxMIB"]),
          f"{name}: Results' bwMiB range {min(bws)}..{max(bws)}")
    check(near(statistics.mean(bws), s["bwMeanMIB"]), f"{name}: mean of Results' bwMiB")
    check(near(statistics.pstdev(bws), s["bwStdMIB"], 1e-4), f"{name}: bwStdMIB")
    check(near(statistics.mean(r["totalTime"] for r in results), s["MeanTime"]),
          f"{name}: MeanTime is not the mean of totalTime")
    check(near(test["max"][s["operation"] + "MiB"], s["bwMaxMIB"]), f"{name}: max")
    for r in results:
        check(r["xferKiB"] == xfer / 1024 and r["blockKiB"] == block / 1024,
              f"{name}: xferKiB/blockKiB {r['xferKiB']}/{r['blockKiB']}")
        check(near(r["bwMiB"] * r["totalTime"], s["xsizeMiB"], 1e-4),
              f"{name}: bwMiB x totalTime is not xsizeMiB")
        check(0 <= r["wrRdTime"] <= r["totalTime"] and r["openTime"] >= 0
              and r["closeTime"] >= 0 and r["iops"] > 0 and r["latency"] > 0,
              f"{name}: times of a Result {r}")

# The text output says the same: summary rows (Operation Max Min Mean ... API)
# and every iteration row's bandwidth, in order.
start = next(i for i, l in enumerate(text) if l.startswith("Summary of all tests"))
rows = [l.split() for l in text[start + 2:] if l.startswith(("write ", "read "))]
by_key = {(s["API"], s["operation"]): s for s in summary}
check(len(rows) == len(summary), f"{len(rows)} text summary rows, {len(summary)} in JSON")
for r in rows:
    s = by_key.get((r[-1], r[0]))
    if s is None:
        errors.append(f"text row {r[-1]} {r[0]} not in the JSON summary")
        continue
    for col, key in ((1, "bwMaxMIB"), (2, "bwMinMIB"), (3, "bwMeanMIB")):
        check(abs(float(r[col]) - s[key]) <= 0.006,
              f"{r[-1]} {r[0]} {key}: text {r[col]}, JSON {s[key]}")
section, iters = None, {}
for l in text[:start]:
    if l.startswith("=== "):
        section = l[4:].strip()
    elif section and l.startswith(("write ", "read ")):
        iters.setdefault(section, []).append(float(l.split()[1]))
for ti, test in enumerate(tests):
    api = test["Parameters"]["api"]
    want = [r["bwMiB"] for r in test["Results"]]
    got = iters.get(api, [])
    check(len(got) == len(want) and all(abs(a - b) <= 0.006 for a, b in zip(got, want)),
          f"{api}: text iterations {got}, JSON Results {want}")

for e in errors:
    print("ior_json_reader:", e)
print(f"ior_json_reader: {len(summary)} summary rows, "
      f"{sum(len(t['Results']) for t in tests)} Results read with IOR's keys")
sys.exit(1 if errors else 0)
