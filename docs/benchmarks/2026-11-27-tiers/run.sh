#!/usr/bin/env bash
# Tiers on the cluster test bed (docs/CLUSTER.md): 4 nodes x 2 ranks,
# 256 MiB a rank per checkpoint (2 GiB), 1 MiB transfers; the fast root is
# each node's /local (tmpfs), the slow root the PFS under a 256 MiB/s
# write cap. Per checkpoint: the time the application waited and the time
# until the checkpoint was durable on the PFS (sluice-bench --fast-root
# --slow-root): POSIX writes straight to the PFS with fsync (waited ==
# durable: the baseline), SLUICE-DATASET lands on /local and drains in the
# background (stage_mode immediate, n_m), ADIOS2-BB is BP4 with
# BurstBufferPath=/local. Three runs, the APIs rotated so each comes first,
# second and third once; two checkpoints (-i 2) per run.
#
#   run.sh BUILD OUT      (as root; BUILD: a build tree with bench/sluice-bench)
set -euo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
here=$(dirname "$(readlink -f "$0")")
cluster=$here/../../../tests/cluster/cluster
mkdir -p "$out"
"$cluster" up 4 --pfs-write-cap 256M --pfs-size 12G --local-size 3G
trap '"$cluster" down' EXIT
"$cluster" status >"$out/status.txt"
orders=(POSIX,SLUICE-DATASET,ADIOS2-BB SLUICE-DATASET,ADIOS2-BB,POSIX
        ADIOS2-BB,POSIX,SLUICE-DATASET)
for rep in 1 2 3; do
  order=${orders[rep - 1]}
  rm -rf /pfs/bench
  mkdir -p /pfs/bench
  for n in node0 node1 node2 node3; do
    "$cluster" exec $n -- sh -c 'rm -rf /local/bench && mkdir -p /local/bench'
  done
  echo "== run $rep: $order"
  "$cluster" run -- mpiexec -n 8 --map-by node \
    -x SLUICE_AGGREGATION=n_m "$build/bench/sluice-bench" \
    -a "$order" --fast-root /local/bench --slow-root /pfs/bench -e -w \
    -b 256m -t 1m -i 2 -O warmMemory=1 -o ckpt -O summaryFormat=JSON \
    -O summaryFile="$out/run-$rep.json" | tee "$out/run-$rep.txt"
done
python3 "$here/summary.py" "$out" 256 | tee "$out/summary.md"
