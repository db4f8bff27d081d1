#!/usr/bin/env bash
# `sluice drain`: the destination (--to, data_roots from the environment
# or a configuration file) and the usage errors; --status before, during
# and after drains, changing nothing; a drain killed with SIGKILL and
# resumed (fewer bytes written, the first drainer's aggregation kept);
# writers busy (another drainer) and absent (a store on another "node"'s
# root, drained there, the last one publishing); a damaged record failing
# its id only; several contexts in one root; the drained column of
# `sluice ls`; every drained id read back from the slow root alone.
# Usage: tool_drain_test.sh MPIEXEC SLUICE HELPER WORKDIR
set -u
mpiexec=$1 sluice=$2 helper=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fast=$work/fast slow=$work/slow
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
unset SLUICE_DATA_ROOTS SLUICE_ROOT SLUICE_CONFIG_FILE SLUICE_AGGREGATION
# Runs the tool, expecting exit status $1 and stderr matching $2.
expect() {
  local rc=$1 pattern=$2; shift 2
  "$sluice" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$rc" ] || { fail "sluice $*: exit $got, not $rc"; cat "$work/out" "$work/err"; }
  grep -q -- "$pattern" "$work/err" || { fail "sluice $*: stderr lacks '$pattern'"; cat "$work/err"; }
}
# Runs python on the JSON in file $1.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }
snapshot() {
  (cd "$work" && find fast slow -printf '%p %s %T@\n' 2>/dev/null | sort &&
   find fast slow -type f -exec md5sum {} + 2>/dev/null | sort) | md5sum
}
# Waits until file $1 exists and is not empty.
wait_for() {
  for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.02; done
  return 1
}
write() {  # CONTEXT FIRST LAST: ids written by 2 ranks, not drained
  DRAIN_TEST_CONTEXT=$1 SLUICE_DATA_ROOTS=$fast,$slow SLUICE_STAGE_MODE=disable \
    "$mpiexec" -n 2 "$helper" write "$2" "$3" >"$work/job.log" 2>&1 ||
    { fail "writing $1 ids $2-$3"; cat "$work/job.log"; }
}

# 1. Ids 1..3 of context ctx on the fast root, none drained.
write ctx 1 3
mkdir -p "$slow"

# 2. Usage and errors: nothing done.
before=$(snapshot)
expect 2 "need one ROOT" drain
expect 2 "no data root follows .* in data_roots of context ctx ('.', default): pass --to DIR" drain "$fast"
expect 2 "is a context directory (it holds commit/): give the data root" drain --to "$fast/ctx" "$fast"
expect 2 "is the data root of .* itself" drain --to "$fast" "$fast/ctx"
expect 2 "no such directory" drain --to "$work/nowhere" "$fast"
expect 2 "aggregation must be n_n, n_m or n_1, not 'n_x'" drain --aggregation n_x --to "$slow" "$fast"
expect 2 "group must be a number >= 0" drain --group -1 --to "$slow" "$fast"
expect 2 "bandwidth" drain --bandwidth fast --to "$slow" "$fast"
expect 2 "is for a drain, not --status" drain --status --bandwidth 1m --to "$slow" "$fast"
expect 2 "is the context directory of ctx, not of other" drain --context other --to "$slow" "$fast/ctx"
expect 1 "no such directory" drain --to "$slow" "$work/nowhere"
expect 1 "holds no context other" drain --context other --to "$slow" "$fast"
mkdir -p "$work/bare"
expect 1 "holds no context (a directory with commit/ in it)" drain --to "$slow" "$work/bare"
SLUICE_DATA_ROOTS="$fast,$fast" expect 2 "names .* twice" drain "$fast"
[ "$(snapshot)" = "$before" ] || fail "refused drains changed something"

# 3. --status and ls before any drain: source only; nothing changed.
"$sluice" drain --status --json --to "$slow" "$fast" >"$work/st.json" || fail "status before"
json "$work/st.json" "
c, = d['contexts']
assert c['context'] == 'ctx' and c['destination'].endswith('/slow/ctx'), c
assert [(i['id'], i['state'], i['bytes_durable']) for i in c['ids']] == \
    [(1, 'source_only', 0), (2, 'source_only', 0), (3, 'source_only', 0)], c
assert all(i['bytes'] > 4000000 for i in c['ids']), c" || fail "status before: $(cat "$work/st.json")"
"$sluice" drain --status --to "$slow" "$fast" >"$work/st" || fail "status text"
grep -Eq '^ckpt\.2 +[0-9]+  on the source only' "$work/st" || { fail "status text"; cat "$work/st"; }
"$sluice" ls "$fast/ctx" ckpt | head -1 | grep -q drained && fail "ls has a drained column with one data root"
SLUICE_DATA_ROOTS=$fast,$slow "$sluice" ls "$fast/ctx" ckpt >"$work/ls" || fail "ls"
grep -Eq '^ +id .* writers drained$' "$work/ls" || { fail "ls: no drained column"; cat "$work/ls"; }
grep -Eq '^ +1 +committed .* 2 +2 +no$' "$work/ls" || { fail "ls: id 1 not drained"; cat "$work/ls"; }
[ "$(snapshot)" = "$before" ] || fail "--status or ls changed something"

# 4. A drain (n_n) killed by SIGKILL in the middle of id 1; --status sees
#    it live, then what its journals hold.
"$sluice" drain --aggregation n_n --bandwidth 2m --to "$slow" "$fast" >"$work/killed.out" 2>&1 &
drainer=$!
wait_for "$slow/ctx/drain/ckpt.1/journal.0" || fail "the drain did not begin"
"$sluice" drain --status --json --to "$slow" "$fast" >"$work/st.json" || fail "status during"
json "$work/st.json" "
i = d['contexts'][0]['ids'][0]
assert i['id'] == 1 and i['state'] == 'draining', i
assert 0 < i['bytes_durable'] < i['bytes'], i
assert $drainer in [w['holder_pid'] for w in i['writers']], i" ||
  fail "status during a drain: $(cat "$work/st.json")"
kill -9 $drainer; wait $drainer 2>/dev/null
"$sluice" drain --status --json --to "$slow" "$fast" >"$work/st.json" || fail "status after the kill"
json "$work/st.json" "
i = d['contexts'][0]['ids'][0]
assert i['state'] == 'draining' and 0 < i['bytes_durable'] < i['bytes'], i
assert all(w['holder_pid'] is None for w in i['writers']), i" ||
  fail "status after the kill: $(cat "$work/st.json")"
SLUICE_DATA_ROOTS=$fast,$slow "$sluice" ls --json "$fast/ctx" ckpt >"$work/ls.json"
json "$work/ls.json" "
assert d['drained_to'].endswith('/slow/ctx'), d
assert [i['drained'] for i in d['ids']] == [False] * 3, d" || fail "ls --json after the kill"
[ -e "$slow/ctx/commit/ckpt.1.index" ] && fail "a killed drain published id 1"

# 5. The next drain resumes id 1 and drains 2 and 3 (n_m, the default):
#    id 1 keeps the n_n the killed drain began with.
"$sluice" drain --json --to "$slow" "$fast" >"$work/d.json" 2>"$work/d.err" ||
  { fail "drain after the kill"; cat "$work/d.err"; }
json "$work/d.json" "
ids = {i['id']: i for i in d['ids']}
one = ids[1]
assert one['durable'] and one['published'] and not one['already_durable'], one
assert one['bytes_resumed'] > 0 and one['bytes_written'] < one['bytes_total'], one
assert one['bytes_resumed'] + one['bytes_written'] == one['bytes_total'], one
assert one['aggregation'] == 'n_n' and one['drained'] == [0, 1], one
for i in (2, 3):
    x = ids[i]
    assert x['durable'] and x['bytes_resumed'] == 0, x
    assert x['bytes_written'] == x['bytes_total'] > 0 and x['aggregation'] == 'n_m', x
assert d['durable'] == 3 and d['not_durable'] == 0 and d['failed'] == 0, d" ||
  fail "drain after the kill: $(cat "$work/d.json")"
[ "$(ls "$slow/ctx/data/ckpt.1")" = "$(printf 'c.0\nc.1')" ] || fail "id 1 not n_n: $(ls "$slow/ctx/data/ckpt.1")"
[ "$(ls "$slow/ctx/data/ckpt.2")" = "c.0" ] || fail "id 2 not n_m"
[ -z "$(ls "$slow/ctx/drain" | grep -vx lock)" ] || fail "drain directories left: $(ls "$slow/ctx/drain")"
out=$("$helper" check "$work/empty,$slow" 1 2 3 2>&1) || fail "read back from the slow root: $out"
[ "$(echo "$out" | grep -c " $slow\$")" -eq 3 ] || fail "not read from the slow root: $out"
rm -rf "$work/empty"

# 6. Again: nothing to do; text output; status and ls say durable.
"$sluice" drain --to "$slow" "$fast" >"$work/d.txt" || fail "drain again"
[ "$(grep -c ': durable on .*/slow/ctx (drained before)$' "$work/d.txt")" -eq 3 ] ||
  { fail "drain again: text"; cat "$work/d.txt"; }
grep -q '^3 id(s) durable on the destination, 0 not yet, 0 failed$' "$work/d.txt" || fail "summary"
"$sluice" drain --status --json --to "$slow" "$fast" >"$work/st.json"
json "$work/st.json" "
assert [i['state'] for i in d['contexts'][0]['ids']] == ['durable'] * 3, d" || fail "status after"
SLUICE_DATA_ROOTS=$fast,$slow "$sluice" ls "$fast/ctx" ckpt >"$work/ls"
[ "$(grep -Ec ' yes$' "$work/ls")" -eq 3 ] || { fail "ls after the drain"; cat "$work/ls"; }

# 7. The destination from data_roots: the environment, a configuration
#    file's section of the context; text lines of a drain.
mkdir -p "$work/slow2" "$work/slow3"
SLUICE_DATA_ROOTS=$fast,$work/slow2 "$sluice" drain "$fast" >"$work/d.txt" ||
  fail "drain to data_roots' next root"
grep -Eq '^ctx ckpt\.3: durable on .*/slow2/ctx: [0-9]+ bytes written, 0 resumed, of [0-9]+ \(n_m\)$' "$work/d.txt" ||
  { fail "drain text"; cat "$work/d.txt"; }
printf '[context:ctx]\ndata_roots = %s,%s\n' "$fast" "$work/slow3" >"$work/job.conf"
"$sluice" drain --config "$work/job.conf" "$fast/ctx" >/dev/null || fail "drain with --config"
[ -e "$work/slow3/ctx/commit/ckpt.2.index" ] || fail "--config's data_roots not followed"
SLUICE_CONFIG_FILE=$work/job.conf "$sluice" drain --status "$fast" >"$work/st" ||
  fail "SLUICE_CONFIG_FILE"
grep -q "/slow3/ctx" "$work/st" || fail "SLUICE_CONFIG_FILE's data_roots not followed"

# 8. Busy: a second drainer beside a slow one leaves the writer the first
#    holds to it; the id is not yet durable, and that is no failure.
mkdir -p "$work/slow4"
"$sluice" drain --bandwidth 1m --to "$work/slow4" "$fast" >"$work/first.out" 2>&1 &
first=$!
wait_for "$work/slow4/ctx/drain/ckpt.1/journal.0" || fail "the first drainer did not begin"
"$sluice" drain --json --to "$work/slow4" "$fast" >"$work/d.json" 2>"$work/d.err" ||
  { fail "second drainer: exit status"; cat "$work/d.err"; }
json "$work/d.json" "
one = [i for i in d['ids'] if i['id'] == 1][0]
assert not one['durable'] and one['busy'] == [0] and one['error'] is None, one
assert d['not_durable'] >= 1 and d['failed'] == 0, d" || fail "second drainer: $(cat "$work/d.json")"
wait $first || { fail "the first drainer"; cat "$work/first.out"; }
grep -Eq '^ctx ckpt\.1: durable on' "$work/first.out" || { fail "first drainer's id 1"; cat "$work/first.out"; }

# 9. Absent: writer 1's store on another node's root (its copy of the
#    commit records beside it). Each node's drain does its share; the
#    last publishes.
node=$work/node1
mkdir -p "$node/ctx" "$work/slow5"
cp -a "$fast/ctx/commit" "$node/ctx/"
mv "$fast/ctx/writer.00000001" "$node/ctx/"
"$sluice" drain --to "$work/slow5" "$fast" >"$work/d.txt" || fail "drain on node 0"
grep -q "^ctx ckpt.2: not yet durable on .*; writers 1 absent: .*run sluice drain on each node" "$work/d.txt" ||
  { fail "absent writers"; cat "$work/d.txt"; }
grep -q '^0 id(s) durable on the destination, 3 not yet, 0 failed$' "$work/d.txt" || fail "absent: summary"
"$sluice" drain --json --to "$work/slow5" "$node" >"$work/d.json" || fail "drain on node 1"
json "$work/d.json" "
assert all(i['durable'] and i['published'] for i in d['ids']), d" || fail "node 1's drain: $(cat "$work/d.json")"
mv "$node/ctx/writer.00000001" "$fast/ctx/"
out=$("$helper" check "$work/empty,$work/slow5" 1 2 3 2>&1) || fail "read back after two nodes' drains: $out"
rm -rf "$work/empty"

# 10. A damaged record fails its id, named, and the others drain; two
#     contexts in one root; --context.
write ctx2 7 7
echo garbage >"$fast/ctx/commit/ckpt.9"
mkdir -p "$work/slow6"
expect 1 "Corruption: context ctx dataset ckpt id 9: commit record" drain --to "$work/slow6" "$fast"
grep -q '^ctx2 ckpt.7: durable on' "$work/out" || { fail "ctx2 not drained"; cat "$work/out"; }
grep -q '^ctx ckpt.3: durable on' "$work/out" || fail "ctx's ids after the damaged one"
grep -q '^4 id(s) durable on the destination, 0 not yet, 1 failed$' "$work/out" || fail "summary with a failure"
expect 1 "ckpt.9" drain --status --to "$work/slow6" "$fast"
rm "$fast/ctx/commit/ckpt.9"
"$sluice" drain --status --json --context ctx2 --to "$work/slow6" "$fast" >"$work/st.json" ||
  fail "status of ctx2"
json "$work/st.json" "
c, = d['contexts']
assert c['context'] == 'ctx2' and [i['id'] for i in c['ids']] == [7], c" || fail "--context"
# Only on the destination: keep_last or rm removed the fast copy.
rm "$fast/ctx2/commit/ckpt.7"
"$sluice" drain --status --json --context ctx2 --to "$work/slow6" "$fast" >"$work/st.json"
json "$work/st.json" "
assert d['contexts'][0]['ids'][0]['state'] == 'destination_only', d" || fail "destination only"

# 11. A LevelDB store its job holds cannot be read beside it: the id is
#     not drained, and that is said, with no failure.
DRAIN_TEST_CONTEXT=held DRAIN_TEST_HOLD=$work/held.stop SLUICE_BACKEND=leveldb \
  SLUICE_DATA_ROOTS=$fast,$slow SLUICE_STAGE_MODE=disable \
  "$mpiexec" -n 2 "$helper" write 1 1 >"$work/held.log" 2>&1 &
holder=$!
for _ in $(seq 600); do grep -q '^written$' "$work/held.log" && break; sleep 0.05; done
grep -q '^written$' "$work/held.log" || { fail "the holding job did not start"; cat "$work/held.log"; }
SLUICE_BACKEND=leveldb "$sluice" drain --context held --to "$slow" "$fast" >"$work/d.txt" 2>"$work/d.err" ||
  { fail "drain beside a LevelDB job"; cat "$work/d.err"; }
grep -q '^held ckpt.1: not drained: a store is held by a running job' "$work/d.txt" ||
  { fail "a held store"; cat "$work/d.txt"; }
touch "$work/held.stop"
wait $holder || { fail "the holding job"; cat "$work/held.log"; }
SLUICE_BACKEND=leveldb "$sluice" drain --context held --to "$slow" "$fast" >"$work/d.txt" ||
  fail "drain of the LevelDB context"
grep -q '^held ckpt.1: durable on' "$work/d.txt" || { fail "LevelDB context not drained"; cat "$work/d.txt"; }

# 12. --help.
"$sluice" drain --help | grep -q -- "--status" || fail "drain --help"
"$sluice" --help | grep -q "drain" || fail "sluice --help lacks drain"

[ $fails -eq 0 ] && echo "tool_drain_test: OK"
exit $((fails > 0))
