#!/usr/bin/env bash
# The unmodified-tools figures, one run: cat, md5sum and cp of a 1 GiB file,
# plain and stored through the interposer (page cache dropped before every
# command), and SLUICE-POSIX against SLUICE-STREAM at 4 ranks (both orders).
# Writes its outputs into OUTDIR (default: beside itself).
#   run.sh [OUTDIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
if [ $# -ge 1 ]; then mkdir -p "$1" && here=$(cd "$1" && pwd); fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
date; git rev-parse --short HEAD; uname -r; nproc
bench/preload_tools.sh --size 1g --reps 7 --dir /work/scratch/preload_tools > "$here/tools.txt" 2>&1
echo "tools rc $?"
mkdir -p /work/scratch/sp
for order in SLUICE-STREAM,SLUICE-POSIX SLUICE-POSIX,SLUICE-STREAM; do
  case $order in SLUICE-STREAM,*) f=bench-stream-first.txt ;; *) f=bench-posix-first.txt ;; esac
  mpiexec -n 4 build/bench/sluice-bench -a $order -b 256m -t 1m -i 5 -w -e \
    -O warmMemory=1 -o /work/scratch/sp/f > "$here/$f" 2>&1
  echo "bench $order rc $?"
done
rm -rf /work/scratch/sp
date
