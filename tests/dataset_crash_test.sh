#!/bin/bash
# kill -9 of a whole MPI job writing dataset ids, at random moments of its
# writes and commits, TRIALS times. After each kill a new job (on another
# number of ranks) must find every committed id whole, HIGHEST the highest
# of them, and no data of an uncommitted id left in any store.
# Usage: dataset_crash_test.sh MPIEXEC HELPER DIR TRIALS [SEED]
set -euo pipefail
mpiexec=$1 helper=$2 dir=$3 trials=$4 seed=${5:-$$}
RANDOM=$seed
. "$(dirname "$0")/kill_job.sh"
rm -rf "$dir"
mkdir -p "$dir"
echo "dataset_crash_test: $trials trials, seed $seed"
last=-1
advanced=0
for ((t = 1; t <= trials; t++)); do
  # The writers, in a session of their own so that one signal reaches
  # mpiexec, its daemons and every rank.
  setsid "$mpiexec" -n 3 "$helper" write "$dir" >"$dir/write.log" 2>&1 &
  job=$!
  # Between 0.3 s (the job still starting) and 2.3 s.
  sleep "$((RANDOM % 2000 / 1000 + 0)).$(printf %03d $((RANDOM % 1000)))"
  sleep 0.3
  if ! kill -0 "$job" 2>/dev/null; then
    echo "trial $t: the writers stopped on their own:"
    cat "$dir/write.log"
    exit 1
  fi
  kill_job "$job" || { echo "trial $t: processes of the killed job survive"; exit 1; }
  np=$((1 + RANDOM % 4))
  out=$("$mpiexec" -n "$np" "$helper" verify "$dir" 2>&1) || {
    echo "trial $t: verify on $np ranks failed:"; echo "$out"; exit 1; }
  highest=$(echo "$out" | sed -n 's/^highest \(-\{0,1\}[0-9]*\),.*/\1/p')
  if [ -z "$highest" ]; then echo "trial $t: $out"; exit 1; fi
  if [ "$highest" -lt "$last" ]; then
    echo "trial $t: HIGHEST went back from $last to $highest"; exit 1
  fi
  [ "$highest" -gt "$last" ] && advanced=$((advanced + 1))
  last=$highest
  echo "trial $t: killed, verified on $np ranks: $out"
done
size=$(du -sm "$dir/crash" | cut -f1)
echo "dataset_crash_test: $trials trials OK; HIGHEST advanced in $advanced;" \
     "highest id $last; stores $size MiB"
# Each id is about 1 MiB a rank and the writers keep the last four: a
# store that kept torn or unlinked ids' data would grow with the trials.
if [ "$size" -gt 64 ]; then
  echo "the stores hold $size MiB: space of removed ids is not given back"
  du -sh "$dir"/crash/* ; exit 1
fi
if [ "$advanced" -lt $((trials / 4)) ]; then
  echo "HIGHEST advanced in only $advanced of $trials trials: the kills" \
       "came before the writers committed anything"; exit 1
fi
