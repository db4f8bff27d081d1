#!/usr/bin/env bash
# The `sluice` tool end to end: import/export round trips (nested folders,
# empty and sparse files; 1 GiB byte-identical), ls/stat/du/cat with --json,
# rm, bad usage, a flipped byte in a stored value caught by verify, and
# reclaim giving back what a removal left behind.
# Usage: tool_test.sh SLUICE WORKDIR [BIG_MIB]
set -u
sluice=$1 work=$2 big_mib=${3:-1024}
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. A tree with nested folders, empty files and sparse files.
src=$work/src
mkdir -p "$src/a/b/c" "$src/empty-dir"
: >"$src/empty"
echo "hello" >"$src/a/hello.txt"
head -c 300000 /dev/urandom >"$src/a/b/random.bin"
truncate -s 10M "$src/a/b/c/sparse"                         # all hole
printf 'middle' | dd of="$src/a/b/c/sparse2" bs=1 seek=5000000 conv=notrunc status=none
truncate -s 9000000 "$src/a/b/c/sparse2"                    # hole, data, hole
chmod 0600 "$src/a/hello.txt"
"$sluice" import -q "$src" "$work/fs" || fail "import"
"$sluice" export -q "$work/fs" "$work/out" || fail "export"
diff -r "$src" "$work/out" || fail "round trip differs"
[ "$(stat -c %a "$work/out/a/hello.txt")" = 600 ] || fail "mode not kept"
blocks=$(stat -c %b "$work/out/a/b/c/sparse")
[ "$blocks" -lt 100 ] || fail "sparse file exported with $blocks blocks"
[ -d "$work/out/empty-dir" ] || fail "empty directory lost"
"$sluice" verify "$work/fs" >"$work/v.txt" || { fail "verify of a good tree"; cat "$work/v.txt"; }
grep -q "0 bad, 0 incomplete" "$work/v.txt" || fail "verify summary"

# 2. Listing commands, JSON that parses.
"$sluice" ls "$work/fs" /a | grep -qx "b/" || fail "ls"
"$sluice" ls -l "$work/fs" /a | grep -q "hello.txt" || fail "ls -l"
for cmd in "ls --json $work/fs /a/b" "stat --json $work/fs /a/hello.txt /a/b" \
           "du --json $work/fs" "verify --json $work/fs"; do
  "$sluice" $cmd | python3 -c "import json,sys; json.load(sys.stdin)" || fail "JSON of: $cmd"
done
"$sluice" du --json "$work/fs" | python3 -c "
import json,sys; d=json.load(sys.stdin)
assert d['apparent_bytes'] == 300000 + 6 + 10485760 + 9000000, d
assert d['stored_bytes'] < 400000, d   # holes are not stored
assert d['files'] == 5, d" || fail "du numbers"
[ "$("$sluice" cat "$work/fs" /a/hello.txt)" = hello ] || fail "cat"
"$sluice" rm "$work/fs" /a/hello.txt || fail "rm"
"$sluice" stat "$work/fs" /a/hello.txt >/dev/null 2>&1 && fail "rm left the file"
"$sluice" rm "$work/fs" /a 2>/dev/null && fail "rm of a directory without -r"
"$sluice" rm -r "$work/fs" /a || fail "rm -r"
"$sluice" ls "$work/fs" / | grep -q "^a/" && fail "rm -r left /a"

# 3. Usage: --help everywhere, bad usage exits 2.
for c in ls stat cat export import rm du verify reclaim mount; do
  "$sluice" $c --help | grep -q "sluice $c" || fail "$c --help"
done
"$sluice" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$sluice" ls >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing ROOT must exit 2"
"$sluice" ls "$work/nothing-here" >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing fs must exit 1"

# 4. A flipped byte inside a stored value: verify exits 1 naming the file,
#    and reading the file fails instead of returning wrong bytes.
mkdir -p "$work/csrc"
python3 -c "
import sys
sys.stdout.write(''.join('CORRUPT-ME-%d;' % i for i in range(20000)))" >"$work/csrc/a-victim"
# Imported after the victim, so its extent sorts after it, past the table
# block the flipped byte is in.
echo "innocent" >"$work/csrc/z-bystander"
"$sluice" import -q "$work/csrc" "$work/cfs" || fail "import victim"
python3 - "$work/cfs" <<'PY' || fail "could not find the value in the store's files"
import glob, sys
for p in sorted(glob.glob(sys.argv[1] + "/writer.*/*/*.vlog") + glob.glob(sys.argv[1] + "/writer.*/*/*.sst") + glob.glob(sys.argv[1] + "/writer.*/*/*.ldb")):
    b = bytearray(open(p, "rb").read())
    i = b.find(b"CORRUPT-ME-12345;")
    if i >= 0:
        b[i + 5] ^= 0x01
        open(p, "wb").write(b)
        sys.exit(0)
sys.exit(1)
PY
"$sluice" verify "$work/cfs" >"$work/cv.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "verify of a corrupt store exited $rc, want 1"
grep -q "BAD /a-victim" "$work/cv.txt" || { fail "verify does not name /a-victim"; cat "$work/cv.txt"; }
grep -q "BAD /z-bystander" "$work/cv.txt" && fail "verify blames a good file"
"$sluice" cat "$work/cfs" /a-victim >"$work/victim.out" 2>"$work/cat.err" && fail "cat of a corrupt file succeeded"
# Whatever cat wrote before it failed is the file's own: a prefix of the
# original, never the flipped record ("CORRUQT-ME-12345;").
head -c "$(stat -c %s "$work/victim.out")" "$work/csrc/a-victim" |
  cmp -s - "$work/victim.out" || fail "wrong bytes were returned"

# 5. A big tree, byte-identical through import and export.
mkdir -p "$work/big/sub"
for i in 1 2 3 4; do
  head -c $((big_mib / 4))M /dev/urandom >"$work/big/sub/part$i"
done
"$sluice" import -q "$work/big" "$work/bigfs" || fail "big import"
rm -rf "$work/big-out"
"$sluice" export "$work/bigfs" "$work/big-out" 2>"$work/progress.txt" || fail "big export"
for i in 1 2 3 4; do
  cmp "$work/big/sub/part$i" "$work/big-out/sub/part$i" || fail "part$i differs"
done
if [ "$big_mib" -ge 512 ]; then
  grep -q "export: .* files" "$work/progress.txt" || fail "no progress lines on a long export"
fi

# 6. reclaim: the space a removal left behind (here held by a reader's pin,
# taken with flock(1) as a snapshot reader takes it, while `sluice rm` ran
# and closed) comes back; while the pin is held, reclaim names the store
# and exits 1; the rest still verifies.
mkdir -p "$work/rc-src"
head -c 4M /dev/urandom >"$work/rc-src/gone.bin"
echo kept >"$work/rc-src/kept.txt"
"$sluice" import -q "$work/rc-src" "$work/rcfs" || fail "reclaim: import"
pin=$work/rcfs/writer.00000000/vlog/READERS
[ -f "$pin" ] || fail "reclaim: no $pin"
flock -s "$pin" "$sluice" rm "$work/rcfs" /gone.bin || fail "reclaim: rm"
before=$(du -sk "$work/rcfs" | cut -f1)
flock -s "$pin" "$sluice" reclaim "$work/rcfs" >"$work/rc1.txt" 2>&1
rc=$?
[ $rc = 1 ] || fail "reclaim beside a reader exited $rc, not 1"
grep -q "writer.00000000.*reader" "$work/rc1.txt" || { fail "reclaim beside a reader: message"; cat "$work/rc1.txt"; }
"$sluice" reclaim --json "$work/rcfs" >"$work/rc2.txt" || { fail "reclaim"; cat "$work/rc2.txt"; }
after=$(du -sk "$work/rcfs" | cut -f1)
[ $((before - after)) -ge 3072 ] || fail "reclaim gave back $((before - after)) KiB of a 4 MiB file"
python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
assert d['bytes_freed'] >= 3 << 20, d
assert d['stores'][0]['error'] is None, d" "$work/rc2.txt" || fail "reclaim --json"
[ "$("$sluice" cat "$work/rcfs" /kept.txt)" = kept ] || fail "reclaim: kept file"
"$sluice" verify "$work/rcfs" >/dev/null || fail "verify after reclaim"

[ $fails -eq 0 ] && rm -rf "$work"
if [ $fails -ne 0 ]; then echo "tool_test: $fails failure(s)"; exit 1; fi
echo "tool_test: all passed"
