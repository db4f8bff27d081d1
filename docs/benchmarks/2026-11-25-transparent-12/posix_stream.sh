#!/usr/bin/env bash
# SLUICE-POSIX against SLUICE-STREAM at 4 ranks, in PAIRS pairs of
# sluice-bench invocations whose order alternates (STREAM first, then
# POSIX first, ...), then the medians of every iteration of an API pooled
# over all invocations, per order and overall (and per invocation).
#   posix_stream.sh OUTDIR [PAIRS [ITERS]]   (PAIRS 0: only the summary of
#                                             the outputs already in OUTDIR)
set -u
out=${1:?output directory} pairs=${2:-4} iters=${3:-5}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
rev=$(git -C "$repo" rev-parse --short HEAD)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out" /work/scratch/b11 && cd /work/scratch/b11 || exit 1
for ((p = 1; p <= pairs; p++)); do
  for order in SLUICE-STREAM,SLUICE-POSIX SLUICE-POSIX,SLUICE-STREAM; do
    mpiexec -n 4 --oversubscribe "$repo/build/bench/sluice-bench" -a $order \
      -b 256m -t 1m -i "$iters" -w -e -O warmMemory=1 \
      > "$out/bench-${order%%,*}-first-$p-$rev.txt" 2>&1 || exit 1
  done
done
python3 - "$out"/bench-*-first-*-"$rev".txt <<'PY' | tee "$out/summary-$rev.txt"
import re, statistics, sys
# Per-iteration rows: "write BW ..." under each "=== API" header.
by = {}  # (file, api) -> [MiB/s]
for path in sys.argv[1:]:
    api = None
    for line in open(path):
        if line.startswith("=== "):
            api = line.split()[1]
        elif api and re.match(r"write\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+262144", line):
            by.setdefault((path, api), []).append(float(line.split()[1]))
def row(label, keys):
    med = {}
    for api in ("SLUICE-STREAM", "SLUICE-POSIX"):
        v = [x for k in keys if k[1] == api for x in by[k]]
        if not v:
            return
        med[api] = (statistics.median(v), len(v))
    (s, ns), (p, np_) = med["SLUICE-STREAM"], med["SLUICE-POSIX"]
    print(f"| {label} | {s:.0f} (n={ns}) | {p:.0f} (n={np_}) | {p / s:.2f} |")
print("| run | SLUICE-STREAM MiB/s | SLUICE-POSIX MiB/s | POSIX / STREAM |")
print("|---|---|---|---|")
for k in sorted({k[0] for k in by}):
    row("`" + k.split("/")[-1] + "`", [x for x in by if x[0] == k])
for first, label in (("SLUICE-STREAM", "STREAM first"),
                     ("SLUICE-POSIX", "POSIX first"), (None, "both")):
    row(label, [k for k in by
                if first is None or re.search(first + "-first", k[0])])
PY
