#!/usr/bin/env bash
# The eighth run of the unmodified tools (docs/BENCHMARKS.md), as run on
# 2026-11-24: the tools under both eviction modes, alternating, then
# SLUICE-POSIX against SLUICE-STREAM at 4 ranks in both orders.
#   run.sh OUTDIR REPS
set -u
out=${1:?output directory} reps=${2:-21}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
rev=$(git -C "$repo" rev-parse --short HEAD)
mkdir -p "$out"
for mode in all data; do
  "$repo/bench/preload_tools.sh" --size 1g --reps "$reps" --evict $mode \
    --dir /work/scratch/pt8 > "$out/tools$reps-$mode-$rev.txt" 2>&1
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p /work/scratch/b8 && cd /work/scratch/b8 || exit 1
for order in SLUICE-STREAM,SLUICE-POSIX SLUICE-POSIX,SLUICE-STREAM; do
  mpiexec -n 4 --oversubscribe "$repo/build/bench/sluice-bench" -a $order \
    -b 256m -t 1m -i 5 -w -e -O warmMemory=1 > "$out/bench-${order%%,*}-first.txt" 2>&1
done
