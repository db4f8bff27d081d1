#!/usr/bin/env bash
# sluice-bench on the cluster test bed (docs/CLUSTER.md): 2 nodes x 2 ranks,
# a file per rank, fsync, writes only; to the PFS under a 400 MiB/s write
# cap, and to each node's /local. Three runs per tier, the APIs rotated so
# each comes first, second and third once; tiers alternate.
#
#   run.sh BUILD OUT      (as root; BUILD: a build tree with bench/sluice-bench)
set -euo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
here=$(dirname "$(readlink -f "$0")")
cluster=$here/../../../tests/cluster/cluster
mkdir -p "$out"
"$cluster" up 2 --pfs-write-cap 400M --pfs-size 8G --local-size 6G
trap '"$cluster" down' EXIT
"$cluster" status >"$out/status.txt"
mkdir -p /pfs/bench
for n in node0 node1; do "$cluster" exec $n -- mkdir -p /local/bench; done
orders=(FIO-LIMIT,POSIX,SLUICE-KV POSIX,SLUICE-KV,FIO-LIMIT SLUICE-KV,FIO-LIMIT,POSIX)
for rep in 1 2 3; do
  order=${orders[rep - 1]}
  tiers="pfs local"
  [ $((rep % 2)) = 0 ] && tiers="local pfs"
  for tier in $tiers; do
    echo "== $tier run $rep: $order"
    "$cluster" run -- mpiexec -n 4 --map-by node "$build/bench/sluice-bench" \
      -a "$order" -F -e -w -b 512m -t 1m -i 1 -O warmMemory=1 \
      -o "/$tier/bench/testFile" -O summaryFormat=JSON \
      -O summaryFile="$out/$tier-$rep.json" | tee "$out/$tier-$rep.txt"
  done
done
python3 "$here/summary.py" "$out" | tee "$out/summary.md"
