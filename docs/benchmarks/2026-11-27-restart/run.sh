#!/usr/bin/env bash
# Restart reads: a shared file written by 4 ranks (1 GiB, 1 MiB transfers,
# fsync) read back, the page cache dropped, every byte checked, by 2, 4 and
# 8 ranks (each reading a contiguous share), for SLUICE-STREAM, SLUICE-POSIX
# and POSIX; DEVICE-LIMIT in the same run. Three runs, the reader counts in
# a different order each time.
#
#   run.sh BUILD OUT [DIR]      (DIR: the test files, default /var/tmp)
set -uo pipefail
build=$(readlink -f "$1")
out=$(readlink -f "$2")
dir=${3:-/var/tmp}/sluice-restart
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
bench=$build/bench/sluice-bench
mkdir -p "$out"
orders=("2 4 8" "4 8 2" "8 2 4")
for rep in 1 2 3; do
  rm -rf "$dir"; mkdir -p "$dir"
  mpiexec -n 4 "$bench" -a DEVICE-LIMIT -b 256m -t 1m -o "$dir/fio" \
    >"$out/device-$rep.txt" 2>&1
  for api in SLUICE-STREAM SLUICE-POSIX POSIX; do
    mpiexec -n 4 "$bench" -a $api -b 256m -t 1m -w -e -k -O warmMemory=1 \
      -o "$dir/$api" >"$out/write-$api-$rep.txt" 2>&1
  done
  for m in ${orders[rep - 1]}; do
    for api in SLUICE-STREAM SLUICE-POSIX POSIX; do
      mpiexec -n $m "$bench" -a $api -b $((1024 / m))m -t 1m -r -R -k \
        -O dropCaches=1 -O warmMemory=1 -o "$dir/$api" \
        >"$out/read-$api-n$m-$rep.txt" 2>&1
    done
  done
done
rm -rf "$dir"
{
  printf 'DEVICE-LIMIT read: '
  cat "$out"/device-*.txt | awk '$1 == "read" && NF > 8 && NF < 14 {printf "%s ", $2}'
  echo
  for api in SLUICE-STREAM SLUICE-POSIX POSIX; do
    for m in 2 4 8; do
      printf '%s read by %s ranks: ' $api $m
      cat "$out"/read-$api-n$m-*.txt | awk '$1 == "read" && NF > 8 && NF < 14 {printf "%s ", $2}'
      echo
    done
  done
} | tee "$out/summary.txt"
