#!/bin/sh
# Ids 1..3 written by N ranks, read back by 4, 1, 2 and 6 ranks (HIGHEST,
# NEWEST and a given id), a close that fails on one rank, an unlink.
# Usage: dataset_mpi_test.sh MPIEXEC PROG DIR N [MODE WRITERS]
# MODE is the dataset_mode (basic by default, N stores; file_per_node
# expects WRITERS stores, one a node).
set -eu
mpiexec=$1 prog=$2 dir=$3 n=$4 mode=${5:-basic} writers=${6:-$4}
rm -rf "$dir"
mkdir -p "$dir"
export SLUICE_DATA_ROOTS="$dir" SLUICE_DATASET_MODE="$mode"
run() { np=$1; shift; "$mpiexec" -n "$np" "$prog" "$@"; }

run "$n" write "$writers"
for m in 4 1 2 6; do
  run "$m" read highest 3
  run "$m" read newest 3
  run "$m" read 2 2
done
if [ "$n" -ge 2 ]; then
  run "$n" failclose
  run 4 read highest 3
  run "$n" overlap
fi
run "$n" unlink 3
run 3 read highest 2
run 2 read newest 2
# The torn id 4 of the failed close was reclaimed by the context opened
# after it: none of its data is left in any store.
if [ "$n" -ge 2 ]; then
  test -e "$dir/sim/commit/restart.4.reclaimed" ||
    { echo "id 4 not recorded as reclaimed"; exit 1; }
fi
if [ "$mode" = file_per_node ]; then
  # Only the nodes' leaders' stores were made: one a node.
  stores=$(ls -d "$dir"/sim/writer.* | wc -l)
  [ "$stores" = "$writers" ] ||
    { echo "$stores stores for $writers nodes:"; ls "$dir/sim"; exit 1; }
fi
echo "dataset_mpi_test: $n ranks ($mode, $writers stores) OK"
