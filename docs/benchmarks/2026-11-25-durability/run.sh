#!/usr/bin/env bash
# The write paths before and after the durability work: sluice-bench, 1 GiB
# per run (LevelDB's 1 KiB values: 256 MiB), each write ended by an fsync,
# 3 repetitions per invocation, three rounds with the builds' order
# alternated (before, after; after, before; before, after).
#   run.sh BEFORE_BENCH AFTER_BENCH [OUT] [DATA]
# BEFORE_BENCH, AFTER_BENCH: the sluice-bench of each build. Then
# summary.py OUT prints the table.
set -u
[ $# -ge 2 ] || { sed -n 2,8p "$0"; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
before=$1 after=$2
out=${3:-$(dirname "$0")}; mkdir -p "$out"
data=${4:-/tmp/sluice-durability-bench}; mkdir -p "$data"
# name ranks api transfer block segments flags...
CASES=(
  "KV-n1 1 SLUICE-KV 1m 1m 1024"
  "KV-n4 4 SLUICE-KV 1m 1m 256"
  "KVLSM-n1 1 SLUICE-KV 1m 1m 1024 -O sluice.layout=lsm"
  "KVLSM-n4 4 SLUICE-KV 1m 1m 256 -O sluice.layout=lsm"
  "STREAM-n1 1 SLUICE-STREAM 1m 1m 1024"
  "STREAM-n4 4 SLUICE-STREAM 1m 1m 256"
  "POSIX-n1 1 POSIX 1m 1m 1024"
  "POSIX-n4 4 POSIX 1m 1m 256"
  "LDB1k-n1 1 SLUICE-KV 1k 256m 1 -O sluice.backend=leveldb"
  "LDB1m-n1 1 SLUICE-KV 1m 1m 1024 -O sluice.backend=leveldb"
  "LDB1m256-n1 1 SLUICE-KV 1m 1m 1024 -O sluice.backend=leveldb -O sluice.write_buffer_size=256m"
)
run() { # label bench round name ranks api transfer block segments flags...
  local label=$1 bin=$2 round=$3 name=$4 n=$5 api=$6 t=$7 b=$8 s=$9; shift 9
  rm -rf "${data:?}"/*
  local j=$out/$name-$label-$round.json
  mpiexec --oversubscribe -n "$n" "$bin" -a "$api" -t "$t" -b "$b" -s "$s" "$@" \
    -w -e -i 3 -o "$data/testFile" -O warmMemory=1 -O summaryFormat=JSON \
    -O summaryFile="$j" > "$out/$name-$label-$round.txt" 2>&1 ||
    echo "$name $label $round: failed (see $out/$name-$label-$round.txt)"
  python3 -c "import json;print('$name $label $round', [round(r['bwMiB']) for r in json.load(open('$j'))['tests'][0]['results'] if r['access']=='write'])"
}
# CASES_ONLY="NAME ..." runs only those cases.
if [ -n "${CASES_ONLY:-}" ]; then
  kept=()
  for c in "${CASES[@]}"; do
    for n in $CASES_ONLY; do [ "${c%% *}" = "$n" ] && kept+=("$c"); done
  done
  CASES=("${kept[@]}")
fi
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for c in "${CASES[@]}"; do
    for l in $order; do
      bin=$before; [ "$l" = after ] && bin=$after
      # shellcheck disable=SC2086
      run "$l" "$bin" "$round" $c
    done
  done
done
rm -rf "${data:?}"
