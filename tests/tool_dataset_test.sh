#!/usr/bin/env bash
# The `sluice` tool on a context directory: ls of datasets and ids with
# their state (committed, torn, then reclaimed after a job's open), ls of
# an id's elements, cat and export of elements byte for byte (shared,
# unique per rank, sparse; highest and newest), rm of a committed and of a
# torn id, the error cases, read commands leaving the context bit for bit
# as it was, and the tool beside a job that holds the context's stores.
# Usage: tool_dataset_test.sh MPIEXEC SLUICE HELPER WORKDIR
set -u
mpiexec=$1 sluice=$2 helper=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
ctx=$work/sim
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Runs the tool, expecting exit status $1 and stderr matching $2.
expect() {
  local rc=$1 pattern=$2; shift 2
  "$sluice" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$rc" ] || { fail "sluice $*: exit $got, not $rc"; cat "$work/err"; }
  grep -q -- "$pattern" "$work/err" || { fail "sluice $*: stderr lacks '$pattern'"; cat "$work/err"; }
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }
# The context's files, sizes, times and contents.
snapshot() {
  (cd "$ctx" && find . -printf '%p %s %T@\n' | sort &&
   find . -type f -exec md5sum {} + | sort) | md5sum
}

# 1. Ids 1..3 written by 3 ranks; id 4 torn (its data stored by 2 ranks,
#    no commit record).
#    (Torn last: a job's open of the context reclaims torn ids.)
"$mpiexec" -n 1 "$helper" "$work" sim write other 0 || fail "write other"
"$mpiexec" -n 3 "$helper" "$work" sim write run 1 2 3 || fail "write ids 1-3"
"$mpiexec" -n 2 "$helper" "$work" sim torn run 4 || fail "write torn id 4"
before=$(snapshot)

# 2. ls: datasets, ids with their states, elements.
"$sluice" ls "$ctx" >"$work/ls" || fail "ls of the context"
grep -Eq '^run +3 +1 +0 +3$' "$work/ls" || { fail "ls of the context"; cat "$work/ls"; }
grep -Eq '^other +1 +0 +0 +0$' "$work/ls" || fail "ls lists the dataset other"
"$sluice" ls --json "$ctx" | json "
r = {x['name']: x for x in d['datasets']}
assert r['run'] == {'name': 'run', 'committed': 3, 'torn': 1, 'reclaimed': 0, 'highest': 3}, r
assert r['other']['highest'] == 0, r" || fail "ls --json of the context"
"$sluice" ls "$ctx" run >"$work/ls" || fail "ls run"
grep -Eq '^ +2 +committed +[0-9]+ +[0-9-]+ [0-9:]+ +3 +3$' "$work/ls" || { fail "ls run: id 2"; cat "$work/ls"; }
grep -Eq '^ +4 +torn +[0-9]+ +- +- +2$' "$work/ls" || { fail "ls run: torn id 4"; cat "$work/ls"; }
"$sluice" ls --json "$ctx" run | json "
ids = {x['id']: x for x in d['ids']}
assert sorted(ids) == [1, 2, 3, 4], ids
for i in (1, 2, 3):
    assert ids[i]['state'] == 'committed' and ids[i]['ranks'] == 3, ids[i]
    assert ids[i]['writers'] == 3 and ids[i]['time_ns'] > 0, ids[i]
# field (3 blocks), local (3 ranks), sparse (3 MiB + 16)
b = 40000 + 1000 * 2
assert ids[2]['bytes'] == 3 * b + sum(5000 + 100 * r + 2 for r in range(3)) + (3 << 20) + 16, ids[2]
t = ids[4]
assert t['state'] == 'torn' and t['writers'] == 2 and t['bytes'] > 0, t
assert t['time_ns'] is None and t['ranks'] is None, t" || fail "ls --json run"
"$sluice" ls --json "$ctx" run 2 | json "
e = [(x['name'], x['kind'], x['rank'], x['size'], x['writers']) for x in d['elements']]
b = 40000 + 1000 * 2
assert e == [('field', 'shared', None, 3 * b, 3)] + \
    [('local', 'unique', r, 5000 + 100 * r + 2, 1) for r in range(3)] + \
    [('sparse', 'shared', None, (3 << 20) + 16, 1)], e" || fail "ls --json run 2"
"$sluice" ls "$ctx" run highest | grep -Eq '^unique +2 +5203 +1  local$' || fail "ls run highest"

# 3. cat and export, byte for byte.
for id in 1 2 3; do
  "$sluice" cat "$ctx" run $id field | cmp -s - <("$helper" expect $id field 3) ||
    fail "cat run $id field"
  for r in 0 1 2; do
    "$sluice" cat --rank $r "$ctx" run $id local |
      cmp -s - <("$helper" expect $id local 3 $r) || fail "cat run $id local rank $r"
  done
done
"$sluice" cat "$ctx" run highest field | cmp -s - <("$helper" expect 3 field 3) ||
  fail "cat highest"
"$sluice" cat "$ctx" run newest sparse | cmp -s - <("$helper" expect 3 sparse 3) ||
  fail "cat newest"
mkdir -p "$work/out.d"
"$sluice" export -q "$ctx" run 2 sparse "$work/out.d" || fail "export into a directory"
cmp -s "$work/out.d/sparse" <("$helper" expect 2 sparse 3) || fail "export of sparse"
blocks=$(stat -c %b "$work/out.d/sparse")
[ "$blocks" -lt 100 ] || fail "sparse element exported with $blocks blocks"
echo old >"$work/local.1"
"$sluice" export --rank 1 "$ctx" run 1 local "$work/local.1" || fail "export over a file"
cmp -s "$work/local.1" <("$helper" expect 1 local 3 1) || fail "export of local rank 1"
ls "$work"/*.sluice-* >/dev/null 2>&1 && fail "export left a temporary file"

# 4. Errors: clear, and nothing written.
expect 1 "id 4 is torn" cat "$ctx" run 4 field
expect 1 "has no id 9 .*committed 1-3; torn 4" cat "$ctx" run 9 field
expect 1 "no dataset nope" cat "$ctx" nope 1 field
expect 1 "no dataset nope" ls "$ctx" nope
expect 1 "has no element nope; it has field (shared), local (ranks 0-2), sparse (shared)" \
  cat "$ctx" run 1 nope
expect 1 "each rank's own (ranks 0-2): name one with --rank" cat "$ctx" run 1 local
expect 1 "has no part of rank 5" cat --rank 5 "$ctx" run 1 local
expect 1 "is shared by every rank: leave out --rank" cat --rank 0 "$ctx" run 1 field
expect 1 "id 4 is torn" export "$ctx" run 4 field "$work/torn.out"
[ -e "$work/torn.out" ] && fail "a failed export left its file"
expect 2 "ID must be a number" cat "$ctx" run abc field
expect 2 "ID must be a number >= 0, not 'highest'" rm "$ctx" run highest
expect 2 "need CONTEXT_DIR DATASET ID ELEMENT" cat "$ctx" run 1
expect 2 "always long" ls -l "$ctx"
expect 2 "for file system trees" rm -r "$ctx" run 1
expect 2 "is for a context directory" ls --config /dev/null "$work"
expect 1 "has no id 9" rm "$ctx" run 9
expect 1 "no dataset nope" rm "$ctx" nope 1
# A PATH (it starts with '/') still names files of the stores; rm of
# them is refused.
"$sluice" ls "$ctx" / | grep -qx "run/" || fail "ls CTX /"
"$sluice" cat "$ctx" /run/1/shared/field | cmp -s - <("$helper" expect 1 field 3) ||
  fail "cat CTX PATH"
"$sluice" export -q "$ctx" "$work/files" || fail "export CTX DEST"
cmp -s "$work/files/run/2/rank.1/local" <("$helper" expect 2 local 3 1) ||
  fail "export CTX DEST: files"
expect 2 "is a context directory: remove a dataset id" rm "$ctx" /run
[ "$(snapshot)" = "$before" ] || fail "read commands or refused ones changed the context"

# 5. A job's open reclaims the torn id: ls says so, cat names it.
"$mpiexec" -n 1 "$helper" "$work" sim open || fail "open"
"$sluice" ls "$ctx" run | grep -Eq '^ +4 +reclaimed +- ' || fail "id 4 not reclaimed"
expect 1 "id 4 was torn, and its data reclaimed at" cat "$ctx" run 4 field
expect 1 "id 4 was torn, and its data reclaimed at .*nothing to remove" rm "$ctx" run 4

# 6. rm of a committed id: record and data gone (a record-less id's data
#    would show as torn), the other ids whole.
# An interposer's SLUICE_ROOT in the environment does not move the context.
SLUICE_ROOT=/nonexistent/elsewhere "$sluice" rm "$ctx" run 2 || fail "rm run 2"
"$sluice" ls --json "$ctx" run | json "
ids = {x['id']: x['state'] for x in d['ids']}
assert ids == {1: 'committed', 3: 'committed', 4: 'reclaimed'}, ids" || fail "ls after rm"
expect 1 "has no id 2" cat "$ctx" run 2 field
"$sluice" cat "$ctx" run 3 field | cmp -s - <("$helper" expect 3 field 3) ||
  fail "id 3 after rm of id 2"

# 7. rm of a torn id: the context's open reclaims it.
"$mpiexec" -n 2 "$helper" "$work" sim torn run 5 || fail "write torn id 5"
"$sluice" ls "$ctx" run | grep -Eq '^ +5 +torn ' || fail "id 5 not torn"
expect 0 "id 5 was torn (no commit record): its data is reclaimed" rm "$ctx" run 5
"$sluice" ls "$ctx" run | grep -Eq '^ +5 +reclaimed ' || fail "id 5 not reclaimed by rm"

# 8. Beside a running job that holds the stores: reading works and changes
#    nothing; rm is refused, naming the holder, and removes nothing.
"$mpiexec" -n 2 "$helper" "$work" sim hold run 7 >"$work/hold.log" 2>&1 &
job=$!
for _ in $(seq 300); do grep -q ready "$work/hold.log" && break; sleep 0.1; done
grep -q ready "$work/hold.log" || { fail "the holding job did not start"; cat "$work/hold.log"; }
held=$(snapshot)
"$sluice" ls "$ctx" run >"$work/ls" || fail "ls beside a job: exit status $?"
grep -Eq '^ +7 +committed ' "$work/ls" || fail "ls beside a job"
"$sluice" cat "$ctx" run 7 field | cmp -s - <("$helper" expect 7 field 2) ||
  fail "cat beside a job"
expect 1 "open for writing by another process.*must have ended" rm "$ctx" run 1
[ "$(snapshot)" = "$held" ] || fail "the tool changed the context a job holds"
touch "$work/sim.stop"
wait $job || fail "the holding job failed"
"$sluice" ls "$ctx" run | grep -Eq '^ +1 +committed ' || fail "refused rm removed id 1"

# 9. A flipped byte in a stored element: cat and export fail naming the
#    corruption; export leaves no file, not even a partial one.
"$mpiexec" -n 2 "$helper" "$work" bad write run 1 || fail "write bad"
"$helper" expect 1 field 2 >"$work/bad.expect"
python3 - "$work/bad/writer.00000001" "$work/bad.expect" <<'PY' || fail "could not find the element's bytes in the store"
import glob, sys
want = open(sys.argv[2], "rb").read()[41000 + 20000:41000 + 20064]  # rank 1's block
for p in sorted(glob.glob(sys.argv[1] + "/*/*")):
    b = bytearray(open(p, "rb").read())
    i = b.find(want)
    if i >= 0:
        b[i + 7] ^= 0x01
        open(p, "wb").write(b)
        sys.exit(0)
sys.exit(1)
PY
expect 1 "Corruption" cat "$work/bad" run 1 field
expect 1 "Corruption" export "$work/bad" run 1 field "$work/bad.out"
[ -e "$work/bad.out" ] && fail "a failed export left its file"
ls "$work"/bad.out.sluice-* >/dev/null 2>&1 && fail "a failed export left its temporary file"

# 10. file_per_node: the ids of 3 ranks are in one store, and read whole.
SLUICE_DATASET_MODE=file_per_node "$mpiexec" -n 3 "$helper" "$work" pernode \
  write run 1 || fail "write file_per_node"
"$sluice" ls "$work/pernode" run | grep -Eq '^ +1 +committed .* 3 +1$' ||
  fail "file_per_node id: $("$sluice" ls "$work/pernode" run)"
"$sluice" ls "$work/pernode" run 1 | grep -Eq '^shared .* 1 +field$' ||
  fail "file_per_node element: $("$sluice" ls "$work/pernode" run 1)"
"$sluice" cat "$work/pernode" run 1 field | cmp -s - <("$helper" expect 1 field 3) ||
  fail "cat of a file_per_node element"

# 11. --help describes both forms.
for c in ls cat export rm; do
  "$sluice" $c --help | grep -q "CONTEXT_DIR" || fail "$c --help"
done

[ $fails -eq 0 ] && echo "tool_dataset_test: OK"
exit $((fails > 0))
