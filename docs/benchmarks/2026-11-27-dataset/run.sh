#!/usr/bin/env bash
# SLUICE-DATASET against SLUICE-STREAM: 4 ranks, 1 GiB a checkpoint (256 MiB
# a rank), writes fsync'ed (the dataset's commit), 1 MiB and 64 KiB
# transfers; one shared element (a logical file) in basic mode (a store a
# rank) and in file_per_node mode (one store for the node, written by its
# leader), and a unique element per rank (-F). Six runs of each, the two
# APIs' order alternated.
#
#   run.sh BUILD OUT [DIR]   (DIR: where the data goes, default /var/tmp)
set -euo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
dir=${3:-/var/tmp}/sluice-bench-dataset
here=$(dirname "$(readlink -f "$0")")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out" "$dir"
orders=(SLUICE-DATASET,SLUICE-STREAM SLUICE-STREAM,SLUICE-DATASET)
for rep in 1 2 3 4 5 6; do
  for t in 1m 64k; do
    for mode in shared pernode fpp; do
      flags="" dsmode=basic
      [ "$mode" = fpp ] && flags="-F"
      [ "$mode" = pernode ] && dsmode=file_per_node
      name=$mode-$t-$rep
      order=${orders[rep % 2]}
      echo "== $name: $order (dataset_mode $dsmode)"
      rm -rf "$dir"/*
      SLUICE_DATASET_MODE=$dsmode mpiexec --oversubscribe -n 4 \
        -x SLUICE_DATASET_MODE "$build/bench/sluice-bench" -a "$order" $flags \
        -e -w -b 256m -t "$t" -i 1 -O warmMemory=1 -o "$dir/testFile" \
        -O summaryFormat=JSON -O summaryFile="$out/$name.json" \
        | tee "$out/$name.txt"
    done
  done
done
rm -rf "$dir"
python3 "$here/summary.py" "$out" | tee "$out/summary.md"
