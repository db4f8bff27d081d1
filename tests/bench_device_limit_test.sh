#!/usr/bin/env bash
# sluice-bench -a DEVICE-LIMIT,FIO-SYNC,POSIX on a few MiB: fio with libaio
# runs on rank 0 in the test file's directory, one write and one read per
# repetition, its file removed after, its buffers in huge pages (reserved
# for the run as root, and given back; else the note says why not); every other row is shown as a
# fraction of DEVICE-LIMIT and of FIO-SYNC, in the text summary and in the
# JSON. Exit 77 (skipped) when fio or its libaio engine is missing.
# Usage: bench_device_limit_test.sh WORKDIR MPIEXEC NPFLAG BENCH [PREFLAGS...]
set -u
work=$1 mpiexec=$2 npflag=$3 bench=$4
shift 4
source "$(dirname "$0")/bench_test_lib.sh" "$@"

huge_before=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)
run 2 -a DEVICE-LIMIT,FIO-SYNC,POSIX \
  -b 2m -t 512k -s 2 -i 2 -e -o "$work/f" -O summaryFormat=JSON \
  -O summaryFile="$work/s.json" >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; exit 1; }
if grep -q "^skipped: DEVICE-LIMIT: " "$work/out.txt"; then
  grep "^skipped: DEVICE-LIMIT: " "$work/out.txt"
  grep -q "^skipped: DEVICE-LIMIT: .*\(libaio\|fio not found\)" "$work/out.txt" ||
    { echo "FAIL: DEVICE-LIMIT skipped for another reason than a missing fio or libaio"; exit 1; }
  exit 77
fi
grep -q "^note: fio on rank 0, the device's limit: libaio, iodepth=32, direct=1, bs=4 MiB, one job moving the run's 8 MiB" "$work/out.txt" ||
  fail "no DEVICE-LIMIT note saying how fio ran"
ls "$work"/sluice-device.* >/dev/null 2>&1 && fail "fio's file left behind"
# fio's buffers in huge pages (vm.nr_hugepages raised for the run, as root,
# and given back), or the note says why not and what it costs.
note=$(grep "^note: fio on rank 0" "$work/out.txt")
if grep -q ", buffers in huge pages of [0-9.]* [KMG]iB$" <<<"$note"; then
  :
elif grep -q ", buffers in 4 KiB pages (.*): requests split at the device's segment limit may show less than the device can do$" <<<"$note"; then
  [ "$(id -u)" = 0 ] && ! grep -q "the kernel gave" <<<"$note" &&
    fail "root, yet no huge pages for fio: $note"
else
  fail "the note does not say what pages fio's buffers are in: $note"
fi
[ "$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)" = "$huge_before" ] ||
  fail "vm.nr_hugepages not given back: $huge_before before, $(cat /proc/sys/vm/nr_hugepages) after"
grep -q "^/device, /fio-sync: " "$work/out.txt" || fail "no line saying what the fractions are"

python3 - "$work/out.txt" "$work/s.json" <<'PY' || fail "fractions"
import json, sys
text = open(sys.argv[1]).read().splitlines()
doc = json.load(open(sys.argv[2]))
bad = []
start = next(i for i, l in enumerate(text) if l.startswith("Summary of all tests"))
rows = {(r[-1], r[0]): r for r in (l.split() for l in text[start + 2:])
        if r and r[0] in ("write", "read")}
mean = {k: float(r[3]) for k, r in rows.items()}
for op in ("write", "read"):
    dev, sync = mean[("DEVICE-LIMIT", op)], mean[("FIO-SYNC", op)]
    want = {"POSIX": (mean[("POSIX", op)] / dev, mean[("POSIX", op)] / sync),
            "FIO-SYNC": (sync / dev, None), "DEVICE-LIMIT": (None, None)}
    for api, (fd, fs) in want.items():
        r = rows[(api, op)]
        s = [x for t in doc["tests"] if t["api"] == api for x in t["summary"]
             if x["operation"] == op][0]
        for col, key, w in ((-3, "fractionOfDeviceLimit", fd), (-2, "fractionOfFioSync", fs)):
            if w is None:
                if r[col] != "-" or s[key] is not None:
                    bad.append(f"{api} {op} {key}: text {r[col]}, JSON {s[key]}, want none")
            elif r[col] == "-" or abs(float(r[col]) - w) > 0.011 or s[key] is None \
                    or abs(s[key] - w) > 0.006:
                bad.append(f"{api} {op} {key}: text {r[col]}, JSON {s[key]}, want {w:.3f}")
dl = [t for t in doc["tests"] if t["api"] == "DEVICE-LIMIT"][0]
if [r["access"] for r in dl["results"]] != ["write", "read"] * 2:
    bad.append("DEVICE-LIMIT: not one write and one read per repetition")
for r in dl["results"]:
    if r["xferKiB"] != 4096 or r["bytes"] != 8 << 20 or not r["bwMiB"] > 0:
        bad.append(f"DEVICE-LIMIT result: {r}")
    if not 0 < r["latency"] < r["totalTime"]:
        bad.append(f"DEVICE-LIMIT latency {r['latency']} (fio's mean) not within the run")
for b in bad:
    print("device limit:", b)
sys.exit(1 if bad else 0)
PY

[ $fails -ne 0 ] && cat "$work/out.txt"
finish bench_device_limit_test
