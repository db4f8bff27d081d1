#!/usr/bin/env bash
# The `sluice` tool end to end: import/export round trips (nested folders,
# empty and sparse files; 1 GiB byte-identical), ls/stat/du/cat with --json,
# rm, bad usage, a flipped byte in a stored value caught by verify,
# reclaim giving back what a removal left behind, and config showing each
# value's source (default, file:line, environment) in text and JSON.
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
for c in ls stat cat export import rm du verify reclaim mount config; do
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

# 7. config: every value with its source, in text and JSON; errors name
# the file and line (exit 1); bad usage exits 2. Each run gets only the
# environment it is given, whatever SLUICE_* settings the caller has.
cfg=$work/job.conf
cat >"$cfg" <<'CONF'
# a job's configuration
wal = on
[context:sim]
block_size = 128k   # line 4
[context:other]
block_size = 8k
[dataset:ckpt]
dataset_mode = file_per_node
[global]
write_buffer_size = 1m      # the environment's 64m wins
CONF
conf() { env -i PATH="$PATH" SLUICE_WRITE_BUFFER_SIZE=64m SLUICE_WRITE_BUFER_SIZE=1 "$@"; }
conf "$sluice" config --context sim --dataset ckpt "$cfg" >"$work/c.txt" 2>"$work/c.err" ||
  { fail "config"; cat "$work/c.txt" "$work/c.err"; }
for want in "compression = 0  # default" "wal = on  # file $cfg:2" \
            "block_size = 128k  # file $cfg:4" \
            "dataset_mode = file_per_node  # file $cfg:8" \
            "write_buffer_size = 64m  # environment SLUICE_WRITE_BUFFER_SIZE"; do
  grep -qxF "$want" "$work/c.txt" || { fail "config: no line '$want'"; cat "$work/c.txt"; }
done
[ "$(wc -l <"$work/c.txt")" -eq "$(grep -c '^| `' "$(dirname "$0")/../docs/CONFIG.md")" ] ||
  fail "config: not one line per variable of docs/CONFIG.md"
grep -qF "SLUICE_WRITE_BUFER_SIZE (write_buffer_size?)" "$work/c.err" ||
  { fail "config: no note of the unknown SLUICE_WRITE_BUFER_SIZE"; cat "$work/c.err"; }
# Without --dataset: the context's own value; another context: its section.
conf "$sluice" config --context sim "$cfg" 2>/dev/null |
  grep -qxF "dataset_mode = basic  # default" || fail "config: dataset value at the context level"
conf "$sluice" config --context other "$cfg" 2>/dev/null |
  grep -qxF "block_size = 8k  # file $cfg:6" || fail "config: another context's section"
conf "$sluice" config --json --context sim --dataset ckpt "$cfg" >"$work/c.json" 2>"$work/cj.err" ||
  fail "config --json"
python3 - "$work/c.json" "$cfg" <<'PY' || { fail "config --json content"; cat "$work/c.json"; }
import json, sys
d = json.load(open(sys.argv[1])); cfg = sys.argv[2]
v = {x["name"]: x for x in d["variables"]}
assert d["context"] == "sim" and d["dataset"] == "ckpt", d
assert v["compression"] == {"name": "compression", "value": "0", "source": "default",
                            "file": None, "line": None, "via": None}, v["compression"]
assert v["block_size"] == {"name": "block_size", "value": "128k", "source": "file",
                           "file": cfg, "line": 4, "via": None}, v["block_size"]
assert (v["dataset_mode"]["value"], v["dataset_mode"]["line"]) == ("file_per_node", 8), v
assert v["write_buffer_size"]["source"] == "environment", v["write_buffer_size"]
assert d["unknown_environment"] == ["SLUICE_WRITE_BUFER_SIZE (write_buffer_size?)"], d
assert [x["name"] for x in d["variables"]] == sorted(v), "not sorted"
PY
[ -s "$work/cj.err" ] && { fail "config --json wrote to stderr"; cat "$work/cj.err"; }
# Neither a file nor an environment: every value the default.
env -i "$sluice" config >"$work/c0.txt" || fail "config without a file"
grep -v "  # default$" "$work/c0.txt" && fail "config without a file or environment: not all defaults"
# A job script, read through the prefix.
printf '#!/bin/sh\n#SLUICE wal = 1\necho hello\n' >"$work/job.sh"
env -i SLUICE_CONFIG_FILE_PREFIX='#SLUICE' "$sluice" config "$work/job.sh" |
  grep -qxF "wal = 1  # file $work/job.sh:2" || fail "config: prefix"
# Errors: exit 1 naming the file and line; bad usage: exit 2.
printf 'wal = 1\nwirte_buffer_size = 1m\n' >"$work/bad1.conf"
printf '[dataset:x]\nwal = 1\n' >"$work/bad2.conf"
printf 'wal = 1\n\nnot a line\n' >"$work/bad3.conf"
printf '[foo]\n' >"$work/bad4.conf"
printf 'block_size = lots\n' >"$work/bad5.conf"
for c in "bad1.conf:2: unknown variable 'wirte_buffer_size' (did you mean write_buffer_size?)" \
         "bad2.conf:2: wal applies to a whole context" \
         "bad3.conf:3: malformed line 'not a line'" \
         "bad4.conf:1: bad section header '[foo]'" \
         "bad5.conf:1: bad value 'lots' for block_size"; do
  f=${c%%:*}
  env -i "$sluice" config "$work/$f" >"$work/ce.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "config $f exited $rc, want 1"
  grep -qF "$work/$c" "$work/ce.txt" || { fail "config $f: message"; cat "$work/ce.txt"; }
done
env -i SLUICE_WAL=maybe "$sluice" config >"$work/ce.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "config with SLUICE_WAL=maybe exited $rc, want 1"
grep -qF "SLUICE_WAL: bad value 'maybe' for wal" "$work/ce.txt" ||
  { fail "config: the environment's error"; cat "$work/ce.txt"; }
env -i "$sluice" config "$work/no-such.conf" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "config of a missing file exited $rc, want 1"
for usage in "a.conf b.conf" "--frob" "--context"; do
  "$sluice" config $usage >/dev/null 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "config $usage exited $rc, want 2"
done

[ $fails -eq 0 ] && rm -rf "$work"
if [ $fails -ne 0 ]; then echo "tool_test: $fails failure(s)"; exit 1; fi
echo "tool_test: all passed"
