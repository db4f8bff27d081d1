#!/bin/bash
# kill -9 of a job whose drains to a slower data root are in flight,
# TRIALS times. Each trial: a job of 2 ranks with data_roots=FAST,SLOW,
# stage_mode immediate, a small drain_bandwidth (its drains take about
# 1.5 s), keep_last=2,0 and a random aggregation commits ids 1..3 (about
# 4 MiB each; in half of the trials it waits for each id's drain before
# writing the next, so keep_last removes drained ids from FAST) and is
# SIGKILLed at a random moment. Then:
#   (b) every id with an index on SLOW reads back whole from SLOW alone
#       (a context whose first root is empty), and no other id is found
#       there: nothing partial is visible;
#   (c) `sluice drain FAST --to SLOW` finishes the drains: every id is
#       durable afterwards, and a drain the kill interrupted resumes from
#       its journals (over all trials, some must have resumed bytes and
#       written fewer than the whole);
#   (a) every id committed on FAST reads back whole from FAST alone (the
#       fast copy stays complete; `sluice drain` opens it read-only);
#   (d) every id the job saw committed, the newest above all, is readable
#       on FAST or SLOW: keep_last never removed the last complete copy;
#   and after the drain every committed id reads back from SLOW alone.
# A check that fails ends the test at once. A job that fails on its own
# (before the kill, its drain or commit returning an error) is reported,
# its state checked as the others, and fails the test at the end.
# Usage: drain_crash_test.sh MPIEXEC HELPER SLUICE DIR TRIALS [SEED]
set -euo pipefail
mpiexec=$1 helper=$2 sluice=$3 dir=$4 trials=$5 seed=${6:-$$}
RANDOM=$seed
. "$(dirname "$0")/kill_job.sh"
rm -rf "$dir"
mkdir -p "$dir"
fast=$dir/fast slow=$dir/slow empty=$dir/empty
echo "drain_crash_test: $trials trials, seed $seed"
resumed=0 mid_drain=0 finished=0 removed_fast=0 status_runs=0 job_failed=0
die() { echo "trial $t: $*"; exit 1; }
# The ids with an index on SLOW.
slow_ids() {
  [ -d "$slow/ctx/commit" ] || return 0  # no drain began
  ls "$slow/ctx/commit" | sed -n 's/^ckpt\.\([0-9]*\)\.index$/\1/p' |
    sort -n | tr '\n' ' '
}
for ((t = 1; t <= trials; t++)); do
  rm -rf "$fast" "$slow" "$empty"
  mkdir -p "$slow"
  aggs=(n_n n_m n_1)
  agg=${aggs[$((RANDOM % 3))]}
  wait_arg=""
  ((RANDOM % 2)) && wait_arg=wait
  : >"$dir/job.log"
  SLUICE_DATA_ROOTS="$fast,$slow" SLUICE_STAGE_MODE=immediate \
  SLUICE_DRAIN_BANDWIDTH=8m SLUICE_KEEP_LAST=2,0 SLUICE_AGGREGATION=$agg \
    setsid "$mpiexec" -n 2 "$helper" write 1 3 $wait_arg >"$dir/job.log" 2>&1 &
  job=$!
  if ((t % 8 == 0)); then
    # Early: while the job starts or writes its first id.
    sleep "0.$(printf %03d $((RANDOM % 1000)))"
  else
    # Once the first id is committed, at a moment of its writes and drains.
    for _ in $(seq 400); do
      grep -q "^committed 1$" "$dir/job.log" 2>/dev/null && break
      kill -0 "$job" 2>/dev/null || break
      sleep 0.02
    done
    if ((t % 5 == 0)) && kill -0 "$job" 2>/dev/null; then
      # --status beside the running job: reads only, works.
      "$sluice" drain --status --json "$fast" --to "$slow" >"$dir/status.json" 2>&1 ||
        die "drain --status beside the job failed: $(cat "$dir/status.json")"
      python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/status.json" ||
        die "drain --status beside the job: bad JSON"
      status_runs=$((status_runs + 1))
    fi
    ms=$((RANDOM % 1500))
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  fi
  if ! kill -0 "$job" 2>/dev/null; then
    wait "$job" || true
    finished=$((finished + 1))
    if ! grep -q '^finished$' "$dir/job.log"; then
      # A defect of its own, not of the kill: counted, and the state it
      # left checked as any other.
      job_failed=$((job_failed + 1))
      echo "trial $t: the job failed on its own:" \
           "$(grep -m2 '^drain_crash_helper' "$dir/job.log" || head -5 "$dir/job.log")"
    fi
  fi
  kill_job "$job" || die "processes of the killed job survive"
  committed=$(sed -n 's/^committed \([0-9]*\)$/\1/p' "$dir/job.log" | tr '\n' ' ')
  [ -d "$dir/fast/ctx/commit" ] || { echo "trial $t: killed before the context existed"; continue; }
  [ -d "$slow/ctx/drain" ] && [ -n "$(ls "$slow/ctx/drain" | grep -vx lock)" ] && mid_drain=$((mid_drain + 1))

  # (b) What SLOW shows is whole.
  before=$(slow_ids)
  if [ -n "$before" ]; then
    out=$("$helper" check "$empty,$slow" $before 2>&1) ||
      die "an id published on SLOW does not read back from it: $out"
    [ "$(echo "$out" | grep -c "^ok [0-9]* $slow\$")" -eq "$(echo $before | wc -w)" ] ||
      die "ids of SLOW not read from SLOW: $out"
    rm -rf "$empty"
  fi
  # ... and what it does not show is not readable from it: a drain in
  # progress (its containers, journals) is invisible.
  hidden=$(ls "$fast/ctx/commit" | sed -n 's/^ckpt\.\([0-9]*\)$/\1/p' |
           while read -r id; do case " $before " in *" $id "*) ;; *) echo "$id" ;; esac; done)
  if [ -n "$hidden" ]; then
    out=$("$helper" missing "$empty,$slow" $hidden 2>&1) ||
      die "an id not published on SLOW is readable from it: $out"
    rm -rf "$empty"
  fi

  # (c) sluice drain finishes every drain, resuming the interrupted ones.
  "$sluice" drain --json "$fast" --to "$slow" >"$dir/drain.json" 2>"$dir/drain.err" ||
    die "sluice drain failed: $(cat "$dir/drain.err" "$dir/drain.json")"
  r=$(python3 - "$dir/drain.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fewer = 0
for i in d["ids"]:
    assert i["durable"] and not i["busy"] and not i["absent"], i
    assert i["error"] is None, i
    if not i["already_durable"]:
        assert i["bytes_written"] + i["bytes_resumed"] == i["bytes_total"], i
        if i["bytes_resumed"] > 0 and i["bytes_written"] < i["bytes_total"]:
            fewer += 1
assert d["failed"] == 0 and d["not_durable"] == 0, d
print(fewer)
PY
) || die "sluice drain's output: $(cat "$dir/drain.json")"
  ((r > 0)) && resumed=$((resumed + 1))
  "$sluice" drain --status --json "$fast" --to "$slow" >"$dir/status.json" ||
    die "drain --status failed"
  python3 - "$dir/status.json" <<'PY' || die "after sluice drain: $(cat "$dir/status.json")"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["contexts"]:
    for i in c["ids"]:
        assert i["state"] in ("durable", "destination_only"), i
        assert i["bytes_durable"] == i["bytes"] > 0, i
PY

  # (a) The fast copy is whole (sluice drain only read it).
  out=$("$helper" check "$fast" 2>&1) || die "FAST does not read back: $out"
  fast_ids=$(echo "$out" | sed -n 's/^ok \([0-9]*\) .*/\1/p' | tr '\n' ' ')
  [ "$(echo "$out" | grep -c "^ok [0-9]* $fast\$")" -eq "$(echo $fast_ids | wc -w)" ] ||
    die "ids of FAST not read from FAST: $out"
  records=$(ls "$fast/ctx/commit" | grep -c '^ckpt\.[0-9]*$' || true)
  [ "$records" -eq "$(echo $fast_ids | wc -w)" ] || die "FAST has $records records, read $fast_ids"
  for id in 1 2 3; do
    case " $committed " in *" $id "*) ;; *) continue ;; esac
    case " $fast_ids " in *" $id "*) ;; *) removed_fast=$((removed_fast + 1)) ;; esac
  done

  # (d) Every id the job saw committed is somewhere, whole.
  for id in $committed; do
    case " $fast_ids $before " in
      *" $id "*) ;;
      *) die "committed id $id is neither on FAST ($fast_ids) nor on SLOW ($before)" ;;
    esac
  done

  # After the drain, every id reads back from SLOW alone.
  after=$(slow_ids)
  for id in $fast_ids $before; do
    case " $after " in *" $id "*) ;; *) die "id $id not on SLOW after sluice drain" ;; esac
  done
  if [ -n "$after" ]; then
    out=$("$helper" check "$empty,$slow" $after 2>&1) ||
      die "after sluice drain, SLOW does not read back: $out"
    rm -rf "$empty"
  fi
  echo "trial $t ($agg${wait_arg:+, waiting}): committed ${committed:-none};" \
       "FAST ${fast_ids:-none}; SLOW before ${before:-none}, after ${after:-none};" \
       "resumed with fewer bytes: $r"
done
echo "drain_crash_test: $trials trials OK; killed mid-drain $mid_drain," \
     "resumed with fewer bytes $resumed, ended before the kill $finished," \
     "committed ids removed from FAST by keep_last $removed_fast," \
     "--status beside the job $status_runs, jobs that failed on their own" \
     "$job_failed"
if [ "$job_failed" -gt 0 ]; then
  echo "$job_failed job(s) failed on their own (see their trials above)"
  exit 1
fi
if [ "$resumed" -eq 0 ]; then
  echo "no trial's sluice drain resumed an interrupted drain with fewer bytes"
  exit 1
fi
