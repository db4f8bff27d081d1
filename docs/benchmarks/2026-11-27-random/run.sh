#!/usr/bin/env bash
# Random 16 KiB transfers through every layer, two builds alternated:
# 4 ranks, 256 MiB a rank, -z (random offsets within each rank's block),
# write with fsync then read with the page cache dropped and every byte
# checked, -C (no rank reads its own data). Three runs, the builds
# alternating.
#
#   run.sh OUT LABEL=BUILD LABEL=BUILD ...   (BUILD: a build tree)
set -uo pipefail
out=$(readlink -f "$1"); shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$out"
dir=${DIR:-/var/tmp/sluice-random}
apis=${APIS:-POSIX,SLUICE-KV,SLUICE-STREAM,SLUICE-POSIX}
for rep in 1 2 3; do
  for lb in "$@"; do
    label=${lb%%=*} build=$(readlink -f "${lb#*=}")
    rm -rf "$dir"; mkdir -p "$dir"
    mpiexec -n 4 "$build/bench/sluice-bench" -a "$apis" -z -t 16k -b 256m -i 1 \
      -e -w -r -C -R -O dropCaches=1 -O warmMemory=1 -o "$dir/testFile" \
      >"$out/$label-$rep.txt" 2>&1
  done
done
rm -rf "$dir"
# Per build, API and operation: the three runs' MiB/s.
for lb in "$@"; do
  label=${lb%%=*}
  for api in ${apis//,/ }; do
    for op in write read; do
      printf '%s %s %s: ' "$label" "$api" "$op"
      cat "$out/$label"-*.txt |
        awk -v a="$api" -v o="$op" '$1 == o && NF > 15 && $NF == a {printf "%s ", $2}'
      echo
    done
  done
done | tee "$out/summary.txt"
