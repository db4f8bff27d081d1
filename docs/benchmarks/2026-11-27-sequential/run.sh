#!/usr/bin/env bash
# Sequential figures before and after a change: two builds of sluice-bench
# (and its interposer) write and read IOR's strided shared file, 4 ranks,
# 1 GiB a run, at 1 MiB and 64 KiB (transfer = block, bench/matrix's Part
# A), fsync, the page cache dropped before reads, every byte checked, no
# rank reading its own data. Three rounds; in each the builds run in turn,
# in the other order every round.
#
#   run.sh OUT NAME=BUILD NAME=BUILD      (e.g. before=/x/build after=build)
set -uo pipefail
out=$(readlink -f "$1"); shift
names=() builds=()
for nb in "$@"; do names+=("${nb%%=*}"); builds+=("$(readlink -f "${nb#*=}")"); done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
dir=${DIR:-/var/tmp}/sluice-sequential
apis=${APIS:-POSIX,SLUICE-KV,SLUICE-STREAM,SLUICE-POSIX}
mkdir -p "$out"
for round in 1 2 3; do
  order=("${!names[@]}")
  [ $((round % 2)) -eq 0 ] && order=($(printf '%s\n' "${order[@]}" | tac))
  for i in "${order[@]}"; do
    for t in 1m 64k; do
      segs=$([ $t = 1m ] && echo 256 || echo 4096)
      rm -rf "$dir"; mkdir -p "$dir"
      mpiexec -n 4 "${builds[i]}/bench/sluice-bench" -a "$apis" -b $t -t $t \
        -s $segs -i 1 -e -w -r -C -R -O dropCaches=1 -O warmMemory=1 \
        -O summaryFormat=JSON -O summaryFile="$out/${names[i]}-$t-$round.json" \
        -o "$dir/testFile" >"$out/${names[i]}-$t-$round.txt" 2>&1 ||
        echo "run.sh: ${names[i]} $t round $round failed: see $out/${names[i]}-$t-$round.txt"
    done
  done
done
rm -rf "$dir"
python3 - "$out" "${names[@]}" <<'PY' | tee "$out/summary.md"
import glob, json, os, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
bw = {}
for name in names:
    for path in glob.glob(os.path.join(out, f"{name}-*-*.json")):
        t = os.path.basename(path).split("-")[1]
        for test in json.load(open(path))["tests"]:
            for r in test["results"]:
                bw.setdefault((test["api"], t, r["access"], name), []).append(r["bwMiB"])
print("| API | transfer | op | " + " | ".join(names) + " | " +
      " / ".join(reversed(names)) + " |")
print("|---|---|---|" + "---:|" * (len(names) + 1))
for api, t, op in sorted({k[:3] for k in bw}):
    med = [statistics.median(bw.get((api, t, op, n), [0])) for n in names]
    runs = [", ".join(f"{v:.0f}" for v in bw.get((api, t, op, n), [])) for n in names]
    ratio = med[-1] / med[0] if med[0] else float("nan")
    print(f"| {api} | {t} | {op} | " +
          " | ".join(f"{m:.0f} ({r})" for m, r in zip(med, runs)) +
          f" | {ratio:.2f} |")
PY
