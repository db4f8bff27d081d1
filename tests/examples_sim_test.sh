#!/bin/bash
# The examples' checkpointing simulation: a run killed (kill -9 of the whole
# job) after some checkpoints and restarted on another number of ranks ends
# with the checksum of a run never stopped; so does the Fortran one stopped
# and restarted.
# Usage: examples_sim_test.sh MPIEXEC SIM_C SIM_F|"" WORK
set -euo pipefail
mpiexec=$1 sim_c=$2 sim_f=$3 work=$4
. "$(dirname "$0")/kill_job.sh"
rm -rf "$work"
mkdir -p "$work"
sum() { sed -n 's/^final checksum \([0-9a-f]*\) after step \([0-9]*\)$/\1 \2/p'; }

# C: 40 steps, a checkpoint every 4.
want=$("$mpiexec" -n 4 "$sim_c" "$work/whole" 40 4 | sum)
test -n "$want"
# The same, 100 ms a step, killed once checkpoint 12 is committed.
setsid "$mpiexec" -n 4 "$sim_c" "$work/killed" 40 4 100 >"$work/run1.log" 2>&1 &
job=$!
for _ in $(seq 300); do
  grep -q '^checkpoint 12 committed' "$work/run1.log" && break
  kill -0 "$job" 2>/dev/null || { cat "$work/run1.log"; exit 1; }
  sleep 0.1
done
grep -q '^checkpoint 12 committed' "$work/run1.log"
kill_job "$job" || { echo "the killed job survives"; exit 1; }
if grep -q '^final checksum' "$work/run1.log"; then
  echo "the run finished before it was killed"; exit 1
fi
"$mpiexec" -n 3 "$sim_c" "$work/killed" 40 4 >"$work/run2.log"
from=$(sed -n 's/^restart from checkpoint \([0-9]*\)$/\1/p' "$work/run2.log")
test -n "$from" && test "$from" -ge 12 ||
  { echo "did not restart from checkpoint 12 or later:"; cat "$work/run2.log"; exit 1; }
got=$(sum <"$work/run2.log")
if [ "$got" != "$want" ]; then
  echo "C: restarted from $from: '$got', whole run: '$want'"; exit 1
fi
echo "C: killed after checkpoint $from, restarted on 3 ranks: $got"

if [ -z "$sim_f" ]; then
  echo "Fortran example not built"; exit 1
fi
want=$("$mpiexec" -n 2 "$sim_f" "$work/whole_f" 20 4 | sum)
test -n "$want"
"$mpiexec" -n 2 "$sim_f" "$work/stopped_f" 10 4 >/dev/null
"$mpiexec" -n 3 "$sim_f" "$work/stopped_f" 20 4 >"$work/f.log"
grep -q '^restart from checkpoint 8$' "$work/f.log" ||
  { echo "Fortran: no restart from checkpoint 8:"; cat "$work/f.log"; exit 1; }
got=$(sum <"$work/f.log")
if [ "$got" != "$want" ]; then
  echo "Fortran: restarted: '$got', whole run: '$want'"; exit 1
fi
echo "Fortran: stopped at step 10, restarted on 3 ranks: $got"
