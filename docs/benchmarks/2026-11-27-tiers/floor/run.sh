#!/usr/bin/env bash
# The machine's floor for the fast root: the same 8 ranks on the same
# cluster test bed (4 nodes x 2 ranks, 256 MiB a rank, 1 MiB transfers,
# memory warmed) writing straight to each node's /local (tmpfs) with POSIX,
# one file a rank, fsync at close, beside SLUICE-DATASET landing on /local
# and draining to the capped PFS. Three runs, the two alternated, two
# checkpoints a run.
#
#   run.sh BUILD OUT      (as root; BUILD: a build tree with bench/sluice-bench)
set -euo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
here=$(dirname "$(readlink -f "$0")")
cluster=$here/../../../../tests/cluster/cluster
mkdir -p "$out"
"$cluster" up 4 --pfs-write-cap 256M --pfs-size 12G --local-size 3G
trap '"$cluster" down' EXIT
clean() {
  rm -rf /pfs/bench
  mkdir -p /pfs/bench
  for n in node0 node1 node2 node3; do
    "$cluster" exec $n -- sh -c 'rm -rf /local/bench && mkdir -p /local/bench'
  done
}
for rep in 1 2 3; do
  for what in local ds; do
    clean
    if [ $what = local ]; then
      "$cluster" run -- mpiexec -n 8 --map-by node "$build/bench/sluice-bench" \
        -a POSIX -F -e -w -b 256m -t 1m -i 2 -O warmMemory=1 \
        -o /local/bench/ckpt >"$out/$what-$rep.txt" 2>&1
    else
      "$cluster" run -- mpiexec -n 8 --map-by node -x SLUICE_AGGREGATION=n_m \
        "$build/bench/sluice-bench" -a SLUICE-DATASET --fast-root /local/bench \
        --slow-root /pfs/bench -e -w -b 256m -t 1m -i 2 -O warmMemory=1 \
        -o ckpt >"$out/$what-$rep.txt" 2>&1
    fi
  done
done
# Per checkpoint: the time from open to close returning (column total(s)).
for what in local ds; do
  printf '%s: ' "$what"
  cat "$out/$what"-*.txt | awk '$1 == "write" && $5 == "262144.00" {print $10}' |
    sort -n | tr '\n' ' ' | awk '{printf "%s  median %.3f\n", $0, ($3 + $4) / 2}'
done | tee "$out/summary.txt"
