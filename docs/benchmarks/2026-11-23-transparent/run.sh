#!/usr/bin/env bash
# The unmodified-tools figures, one run: unmodified tools on a 1 GiB stored file, and
# SLUICE-POSIX against SLUICE-STREAM at 4 ranks (both orders).
set -u
cd /work/main
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out=/work/results/p7
date; git rev-parse --short HEAD; uname -r; nproc
bench/preload_tools.sh --size 1g --reps 7 --dir /work/scratch/preload_tools > $out/tools.txt 2>&1
echo "tools rc $?"
mkdir -p /work/scratch/sp
for order in SLUICE-STREAM,SLUICE-POSIX SLUICE-POSIX,SLUICE-STREAM; do
  mpiexec -n 4 build/bench/sluice-bench -a $order -b 256m -t 1m -i 5 -w -e \
    -O warmMemory=1 -o /work/scratch/sp/f > $out/bench.$order.txt  # saved as bench-stream-first.txt / bench-posix-first.txt 2>&1
  echo "bench $order rc $?"
done
date
