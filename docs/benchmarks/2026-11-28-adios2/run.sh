#!/usr/bin/env bash
# The ADIOS2 plugin engine against the dataset API it is built on and
# against ADIOS2's own BP5: SLUICE-ADIOS2, SLUICE-DATASET and ADIOS2, 4
# ranks, 1 GiB a run, 64 KiB and 1 MiB transfers, fsync at close (-e; the
# Sluice APIs commit at close), the page cache dropped before reads, every
# byte checked (-R), the neighbouring rank reading (-C). Three rounds of 3
# repetitions; the APIs in turn, in the other order every round.
#
#   run.sh OUT [BUILD]      (BUILD: the build tree, default build)
set -uo pipefail
out=$(readlink -f "$1")
build=$(readlink -f "${2:-build}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
dir=${DIR:-/var/tmp}/sluice-adios2
apis=(SLUICE-ADIOS2 SLUICE-DATASET ADIOS2)
mkdir -p "$out"
for round in 1 2 3; do
  order=("${apis[@]}")
  [ $((round % 2)) -eq 0 ] && order=($(printf '%s\n' "${apis[@]}" | tac))
  for t in 64k 1m; do
    for api in "${order[@]}"; do
      rm -rf "$dir"; mkdir -p "$dir"
      mpiexec -n 4 "$build/bench/sluice-bench" -a "$api" -b 256m -t $t -s 1 \
        -i 3 -e -w -r -C -R -O dropCaches=1 -O warmMemory=1 \
        -O summaryFormat=JSON -O summaryFile="$out/$api-$t-$round.json" \
        -o "$dir/testFile" >"$out/$api-$t-$round.txt" 2>&1 ||
        echo "run.sh: $api $t round $round failed: see $out/$api-$t-$round.txt"
    done
  done
done
rm -rf "$dir"
python3 - "$out" <<'PY' | tee "$out/summary.md"
import glob, json, os, statistics, sys
out = sys.argv[1]
bw = {}
for path in glob.glob(os.path.join(out, "*.json")):
    api, t, _ = os.path.basename(path)[:-5].rsplit("-", 2)
    for test in json.load(open(path))["tests"]:
        for r in test["results"]:
            bw.setdefault((api, t, r["access"]), []).append(r["bwMiB"])
med = {k: statistics.median(v) for k, v in bw.items()}
print("Pooled medians (MiB/s) of every repetition of the three rounds:\n")
print("| transfer | op | SLUICE-ADIOS2 | SLUICE-DATASET | ADIOS2 (BP5) | ADIOS2 / DATASET | ADIOS2 / BP5 |")
print("|---|---|---:|---:|---:|---:|---:|")
for t in ("64k", "1m"):
    for op in ("write", "read"):
        a, d, b = (med.get((x, t, op), float("nan")) for x in ("SLUICE-ADIOS2", "SLUICE-DATASET", "ADIOS2"))
        print(f"| {t} | {op} | {a:.0f} | {d:.0f} | {b:.0f} | {a / d:.2f} | {a / b:.2f} |")
print("\nEvery repetition:\n")
for k in sorted(bw):
    print(f"- {' '.join(k)}: " + ", ".join(f"{v:.0f}" for v in bw[k]))
PY
