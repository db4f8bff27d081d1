#!/usr/bin/env bash
# The tenth run of the unmodified tools (docs/BENCHMARKS.md), as run on
# 2026-11-24: PAIRS pairs of runs of the tools with every cache dropped
# (--evict all) and with every cache dropped and the programs read back
# (--evict rewarm), each with the default memory warming (--warm-memory,
# 3 GiB), the order alternating from pair to pair; then
# SLUICE-POSIX against SLUICE-STREAM at 4 ranks in both orders.
#   run.sh OUTDIR [REPS [PAIRS]]
set -u
out=${1:?output directory} reps=${2:-15} pairs=${3:-3}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
rev=$(git -C "$repo" rev-parse --short HEAD)
mkdir -p "$out"
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2)); then modes="all rewarm"; else modes="rewarm all"; fi
  for mode in $modes; do
    "$repo/bench/preload_tools.sh" --size 1g --reps "$reps" --evict $mode \
      --dir /work/scratch/pt10 > "$out/tools$reps-$mode-$p-$rev.txt" 2>&1
  done
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p /work/scratch/b10 && cd /work/scratch/b9 || exit 1
for order in SLUICE-STREAM,SLUICE-POSIX SLUICE-POSIX,SLUICE-STREAM; do
  mpiexec -n 4 --oversubscribe "$repo/build/bench/sluice-bench" -a $order \
    -b 256m -t 1m -i 5 -w -e -O warmMemory=1 > "$out/bench-${order%%,*}-first-$rev.txt" 2>&1
done
