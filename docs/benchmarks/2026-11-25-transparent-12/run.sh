#!/usr/bin/env bash
# The twelfth run of the unmodified tools (docs/BENCHMARKS.md), 2026-11-25,
# after the value log's buffers went on huge pages: bench/preload_tools.sh
# under --evict rewarm, all, rewarm (in that order), then SLUICE-POSIX
# against SLUICE-STREAM in PAIRS pairs of alternating orders.
#   run.sh OUTDIR [REPS [PAIRS]]
set -u
out=${1:?output directory} reps=${2:-15} pairs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rev=$(git -C "$repo" rev-parse --short HEAD)
mkdir -p "$out"
n=0
for mode in rewarm all rewarm; do
  n=$((n + 1))
  "$repo/bench/preload_tools.sh" --size 1g --reps "$reps" --evict $mode \
    --dir /work/scratch/pt12 > "$out/tools$reps-$mode-$n-$rev.txt" 2>&1
done
"$here/posix_stream.sh" "$out" "$pairs" 5
