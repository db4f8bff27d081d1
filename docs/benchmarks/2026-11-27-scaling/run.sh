#!/usr/bin/env bash
# The figures docs/SCALING.md is built on, from functional runs (nothing is
# timed; no benchmark): one small checkpoint per aggregation, written to a
# first data root A (DIR/roots/local/ckpt) and drained (stage_mode
# immediate) to a second root B (DIR/roots/pfs/me/ckpt, DIR/roots/pfs
# standing for the PFS's mount point), then read back from B alone with A
# wiped, every byte checked.
#
#   1. sizes.tsv: the bytes of the commit record (A/scale/commit/AGG.1)
#      and of the drain index (B/scale/commit/AGG.1.index), and the
#      containers, for 1..64 ranks, each rank writing 64 KiB of a shared
#      element and 64 KiB of its own (basic mode: a store per rank), and
#      for 8 ranks in file_per_node mode (one store for the node).
#   2. chunks.tsv: the index of 1 rank as its part grows (chunk sums every
#      4 MiB, an extent per 32 MiB flush).
#   3. strace-write-AGG-N-MODE.txt, strace-read-AGG-N-MODE.txt: the file
#      calls under the PFS's mount (count.py) of the write-and-drain job
#      and of the restart, at 2, 4, 8 and 16 ranks in basic mode (a writer
#      a rank) and 8 and 16 ranks in file_per_node mode (one writer).
#
#   run.sh BUILD OUT [DIR]   (DIR: where the roots go, default /var/tmp)
set -euo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
dir=${3:-/var/tmp}/sluice-scaling
here=$(dirname "$(readlink -f "$0")")
src=$(cd "$here/../../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$out" "$dir"
probe=$dir/probe
mpicc -O2 -Wall -I "$src/include" -I "$src/tests" "$here/probe.c" -o "$probe" \
  -L "$build" -lsluice_mpi -lsluice -Wl,-rpath,"$build"
roots=$dir/roots
A=$roots/local/ckpt
B=$roots/pfs/me/ckpt
aggs="n_n n_m n_1"

fresh() { rm -rf "$roots"; mkdir -p "$roots/pfs"; }
# job N MODE PROBE-ARGS...
job() {
  local n=$1 mode=$2
  shift 2
  SLUICE_DATA_ROOTS=$A,$B SLUICE_STAGE_MODE=immediate \
    SLUICE_DATASET_MODE=$mode mpiexec -n "$n" -x SLUICE_DATA_ROOTS \
    -x SLUICE_STAGE_MODE -x SLUICE_DATASET_MODE "$probe" "$@"
}
# What B holds besides the drained ids: nothing but the drain lock.
check_clean() {
  local left
  left=$(cd "$B/scale/drain" && ls -A | grep -v '^lock$' || true)
  if [ -n "$left" ]; then
    echo "B/scale/drain still holds: $left" >&2
    exit 1
  fi
}
size() { stat -c %s "$1"; }

# 1. Sizes against the number of ranks.
echo -e "ranks\tmode\taggregation\trecord_bytes\tindex_bytes\tcontainers\tcontainer_bytes" \
  >"$out/sizes.tsv"
for spec in 1:basic 2:basic 4:basic 8:basic 16:basic 32:basic 64:basic \
  8:file_per_node; do
  n=${spec%%:*} mode=${spec#*:}
  fresh
  job "$n" "$mode" write 65536 65536 $aggs
  check_clean
  for agg in $aggs; do
    cbytes=$(cat "$B/scale/data/$agg.1"/c.* | wc -c)
    echo -e "$n\t$mode\t$agg\t$(size "$A/scale/commit/$agg.1")\t$(size \
      "$B/scale/commit/$agg.1.index")\t$(ls "$B/scale/data/$agg.1" | wc -l)\t$cbytes" \
      >>"$out/sizes.tsv"
  done
  rm -rf "$A"
  job "$n" "$mode" read 65536 65536 $aggs
done

# 2. The index as one rank's part grows.
echo -e "part_bytes\tindex_bytes" >"$out/chunks.tsv"
for bytes in 65536 4194304 4194305 16777216 33554432 33554433 41943040; do
  fresh
  job 1 basic write "$bytes" 0 n_1
  echo -e "$bytes\t$(size "$B/scale/commit/n_1.1.index")" >>"$out/chunks.tsv"
  rm -rf "$A"
  job 1 basic read "$bytes" 0 n_1
done

# 3. The file calls on B.
calls=%file,fsync,fdatasync,flock,ftruncate,getdents64,fstat,pwrite64,pread64,fadvise64,fallocate
for spec in 2:basic 4:basic 8:basic 16:basic 8:file_per_node \
  16:file_per_node; do
  n=${spec%%:*} mode=${spec#*:}
  for agg in $aggs; do
    fresh
    rm -rf "$dir/trace"
    mkdir -p "$dir/trace"
    strace -ff -y -qq -e trace=$calls -o "$dir/trace/w" \
      bash -c "$(declare -f job); A=$A B=$B probe=$probe job $n $mode write 65536 65536 $agg"
    check_clean
    python3 "$here/count.py" "$roots/pfs" "$dir/trace"/w.* \
      >"$out/strace-write-$agg-$n-$mode.txt"
    rm -rf "$A"
    strace -ff -y -qq -e trace=$calls -o "$dir/trace/r" \
      bash -c "$(declare -f job); A=$A B=$B probe=$probe job $n $mode read 65536 65536 $agg"
    python3 "$here/count.py" "$roots/pfs" "$dir/trace"/r.* \
      >"$out/strace-read-$agg-$n-$mode.txt"
  done
done
rm -rf "$dir"
# 4. The model of docs/SCALING.md, its formulas checked against 1 and 2.
python3 "$here/model.py" --check "$out"
python3 "$here/model.py" >"$out/model.txt"
