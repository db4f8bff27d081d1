#!/usr/bin/env bash
# The `sluice` tool on damaged stores and hostile trees, one case per run:
#   crafted_entries  directory entries no file-system call makes (".", "..",
#                    empty, with '/' or NUL, over 255 bytes) and an entry
#                    pointing back at an enclosing directory: ls, verify,
#                    du, export and rm -r end, name the directory and the
#                    entry, go on with the rest, and exit 1.
#   symlinks         import never stores what a symlink in its source
#                    points at, even one swapped in for a file or directory
#                    right before the tool opens it (SWAP_SHIM makes that
#                    race happen every time); export never writes through
#                    a symlink (or into a FIFO) it finds in its destination.
#   import_status    import exits 1 and says how many entries it skipped or
#                    failed to read, even when that is all of them; 0 when
#                    it imported everything.
#   ls_escapes       names holding control bytes, a backslash, bytes that
#                    are not UTF-8: ls (plain, -l) prints them escaped, one
#                    per line, and --json is valid JSON giving each name
#                    back (bytes that are not UTF-8 as \udcXX).
#   incomplete       a writer that died without closing its files (one of
#                    them synced): verify lists both as incomplete and
#                    exits 1; stat says so.
#   vlog_damage      a flipped byte in a value-log file: verify and cat say
#                    the value fails its checksum, naming the log file and
#                    offset; the log file cut inside the value: they say it
#                    is truncated. Never one for the other.
# Usage: tool_edge_test.sh CASE SLUICE FS_HELPER SWAP_SHIM WORKDIR
set -u
case=$1 sluice=$2 helper=$3 shim=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Runs the tool with a time limit: $rc is its exit status (124: still
# running at the limit; 128+N: killed by signal N), $out its stdout and
# stderr, in a file.
out=$work/out.txt
run() {
  timeout 20 "$sluice" "$@" >"$out" 2>&1
  rc=$?
  runs=$((runs + 1))
}
# Shows the start of the last run's output, once per run.
shown=
show() {
  [ "$shown" = "$out.$runs" ] && return
  shown=$out.$runs
  echo "---- its output (first lines):"
  head -n 12 "$out" | cut -c 1-300
  echo "----"
}
runs=0
# Fails unless the last run exited 1 (not a crash, not a hang).
want_rc1() {
  [ $rc -eq 1 ] || { fail "$1 exited $rc, want 1"; show; }
}
# Fails unless the last run's output holds every string given.
want_out() {
  local what=$1 missing=()
  shift
  for s in "$@"; do
    grep -qF -- "$s" "$out" || missing+=("$s")
  done
  [ ${#missing[@]} -eq 0 ] || { fail "$what: its output lacks ${missing[*]}"; show; }
}
# Fails unless the last run's output is UTF-8 without a control character
# other than newline and tab (C0, DEL, C1: a name printed raw).
want_printable() {
  python3 -c "
import sys
b = open(sys.argv[1], 'rb').read()
try:
    t = b.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit('not UTF-8: %s' % e)
bad = [c for c in t if (ord(c) < 32 and c not in '\t\n') or 127 <= ord(c) < 160]
sys.exit('control characters: %r' % bad if bad else 0)" "$out" ||
    { fail "$1 printed control characters or bytes that are not UTF-8"; show; }
}

crafted_entries() {
  local src=$work/src fs=$work/fs
  mkdir -p "$src/d/sub" "$src/c/sub"
  echo good >"$src/d/good.txt"
  echo deep >"$src/d/sub/deep.txt"
  echo cyc >"$src/c/sub/cyc.txt"
  echo other >"$src/z.txt"
  "$sluice" import -q "$src" "$fs" || fail "import"
  local long
  long=$(printf 'x%.0s' $(seq 256))
  # In /d, names no path can hold, each pointing at /z.txt; in /c/sub, an
  # entry pointing back at /c.
  for name in '.' '..' '' 'a/b' 'nul\0byte' "$long"; do
    "$helper" dirent "$fs" 0 /d "$name" /z.txt || fail "forge entry '$name'"
  done
  "$helper" dirent "$fs" 0 /c/sub loop /c || fail "forge the cycle"
  local names=('/d' '"."' '".."' '""' '"a/b"' '"nul\x00byte"' '(256 bytes)')
  local cycle=('/c/sub' '"loop"')

  run ls "$fs" /d
  want_rc1 "ls /d"
  want_out "ls /d" good.txt sub/ "${names[@]}"
  want_printable "ls /d"
  run ls "$fs" /c/sub
  want_rc1 "ls /c/sub"
  want_out "ls /c/sub" cyc.txt "${cycle[@]}"

  run verify "$fs" /d
  want_rc1 "verify /d"
  want_out "verify /d" "${names[@]}" "verified 2 file(s)"
  want_printable "verify /d"
  run verify "$fs" /c
  want_rc1 "verify /c"
  want_out "verify /c" "${cycle[@]}" "verified 1 file(s)"
  run verify "$fs"
  want_rc1 "verify"
  want_out "verify" "${names[@]}" "${cycle[@]}" "verified 4 file(s)"

  run du "$fs" /c
  want_rc1 "du /c"
  want_out "du /c" "${cycle[@]}" "1 files"
  run du "$fs"
  want_rc1 "du"
  want_out "du" "${names[@]}" "${cycle[@]}" "4 files"
  want_printable "du"

  run export -q "$fs" "$work/out"
  want_rc1 "export"
  want_out "export" "${names[@]}" "${cycle[@]}"
  [ "$(cat "$work/out/d/good.txt" 2>/dev/null)" = good ] || fail "export lost /d/good.txt"
  [ "$(cat "$work/out/d/sub/deep.txt" 2>/dev/null)" = deep ] || fail "export lost /d/sub/deep.txt"
  [ "$(cat "$work/out/c/sub/cyc.txt" 2>/dev/null)" = cyc ] || fail "export lost /c/sub/cyc.txt"
  [ "$(cat "$work/out/z.txt" 2>/dev/null)" = other ] || fail "export lost /z.txt"
  [ -e "$work/out/d/a" ] && fail "export followed the entry 'a/b'"
  [ -e "$work/out/c/sub/loop" ] && fail "export followed the cycle"
  [ "$(ls "$work")" = "$(printf 'fs\nout\nout.txt\nsrc')" ] ||
    fail "export wrote outside its destination: $(ls "$work")"

  run rm -r "$fs" /c
  want_rc1 "rm -r /c"
  want_out "rm -r /c" "${cycle[@]}"
  run rm -r "$fs" /d
  want_rc1 "rm -r /d"
  want_out "rm -r /d" "${names[@]}"
  for p in /d/good.txt /d/sub/deep.txt /c/sub/cyc.txt; do
    "$sluice" stat "$fs" $p >/dev/null 2>&1 && fail "rm -r left $p"
  done
  [ "$("$sluice" cat "$fs" /z.txt 2>&1)" = other ] || fail "rm -r reached /z.txt through an entry"
}

symlinks() {
  local src=$work/src outside=$work/outside
  mkdir -p "$src/sub" "$outside/dir"
  echo secret >"$outside/secret.txt"
  echo secret-in-dir >"$outside/dir/inner.txt"
  echo victim >"$src/victim"
  echo inner >"$src/sub/inner.txt"
  echo plain >"$src/plain.txt"
  ln -s "$outside/secret.txt" "$src/link"
  # A file swapped for a symlink out of the tree as the tool opens it.
  timeout 20 env LD_PRELOAD="$shim" SWAP_ON_OPEN=victim \
    SWAP_COMMAND="ln -s '$outside/secret.txt' '$src/new' && mv -T '$src/new' '$src/victim'" \
    "$sluice" import -q "$src" "$work/fs1" >"$out" 2>&1
  rc=$?
  runs=$((runs + 1))
  [ -L "$src/victim" ] || fail "the swap did not happen"
  [ $rc -lt 124 ] || { fail "import exited $rc"; show; }
  want_out "import" "$src/victim" "$src/link"
  for p in /victim /link; do
    "$sluice" cat "$work/fs1" $p 2>/dev/null | grep -q secret &&
      fail "import stored the contents of $p's target"
  done
  [ "$("$sluice" cat "$work/fs1" /plain.txt 2>&1)" = plain ] || fail "import lost /plain.txt"
  [ "$("$sluice" cat "$work/fs1" /sub/inner.txt 2>&1)" = inner ] || fail "import lost /sub/inner.txt"
  # A directory swapped for a symlink out of the tree as the tool opens a
  # file in it.
  timeout 20 env LD_PRELOAD="$shim" SWAP_ON_OPEN=inner.txt \
    SWAP_COMMAND="mv '$src/sub' '$work/sub.moved' && ln -s '$outside/dir' '$src/sub'" \
    "$sluice" import -q "$src" "$work/fs2" >"$out" 2>&1
  rc=$?
  runs=$((runs + 1))
  [ -L "$src/sub" ] || fail "the second swap did not happen"
  [ $rc -lt 124 ] || { fail "import exited $rc"; show; }
  "$sluice" cat "$work/fs2" /sub/inner.txt 2>/dev/null | grep -q secret &&
    fail "import stored a file from outside its tree (through a swapped directory)"
  [ "$(cat "$outside/dir/inner.txt")" = secret-in-dir ] || fail "import changed a file outside"

  # Export into a destination holding a symlink where a file goes, one
  # where a directory goes, and a FIFO where a file goes.
  mkdir -p "$work/esrc/d" "$work/out" "$outside/tdir"
  echo new-a >"$work/esrc/a.txt"
  echo new-b >"$work/esrc/d/b.txt"
  echo new-p >"$work/esrc/p.txt"
  echo keep >"$work/esrc/keep.txt"
  "$sluice" import -q "$work/esrc" "$work/fs3" || fail "import for export"
  echo target >"$outside/target.txt"
  ln -s "$outside/target.txt" "$work/out/a.txt"
  ln -s "$outside/tdir" "$work/out/d"
  mkfifo "$work/out/p.txt"
  run export -q "$work/fs3" "$work/out"
  want_rc1 "export over symlinks"
  want_out "export over symlinks" "$work/out/a.txt" "$work/out/d" "$work/out/p.txt"
  [ "$(cat "$outside/target.txt")" = target ] || fail "export wrote through the symlink out/a.txt"
  [ -z "$(ls "$outside/tdir")" ] || fail "export wrote through the symlink out/d: $(ls "$outside/tdir")"
  [ -L "$work/out/a.txt" ] && [ -L "$work/out/d" ] || fail "export replaced a symlink"
  [ "$(cat "$work/out/keep.txt" 2>&1)" = keep ] || fail "export lost /keep.txt"
}

import_status() {
  # Nothing a file system can store: a symlink and a FIFO.
  mkdir -p "$work/none"
  ln -s /etc/hostname "$work/none/link"
  mkfifo "$work/none/fifo"
  run import -q "$work/none" "$work/fs1"
  want_rc1 "import of nothing importable"
  want_out "import of nothing importable" "0 file(s) imported; 2 skipped, 0 failed"
  # One file among them, and one that is gone when the tool opens it.
  cp -a "$work/none" "$work/some"
  echo data >"$work/some/file"
  echo gone >"$work/some/gone"
  timeout 20 env LD_PRELOAD="$shim" SWAP_ON_OPEN=gone \
    SWAP_COMMAND="rm '$work/some/gone'" \
    "$sluice" import -q "$work/some" "$work/fs2" >"$out" 2>&1
  rc=$?
  runs=$((runs + 1))
  want_rc1 "import of a partly importable tree"
  want_out "import of a partly importable tree" "$work/some/gone" \
    "1 file(s) imported; 2 skipped, 1 failed"
  [ "$("$sluice" cat "$work/fs2" /file 2>&1)" = data ] || fail "import lost /file"
  # A symlink given as SRC.
  run import -q "$work/none/link" "$work/fs3"
  want_rc1 "import of a symlink"
  want_out "import of a symlink" "0 file(s) imported; 1 skipped, 0 failed"
  # Everything imported: exit 0, quietly.
  mkdir -p "$work/all/d"
  echo x >"$work/all/d/x"
  run import -q "$work/all" "$work/fs4"
  [ $rc -eq 0 ] || { fail "import of a plain tree exited $rc"; show; }
  [ -s "$out" ] && { fail "import of a plain tree printed something"; show; }
}

ls_escapes() {
  local src=$work/src
  mkdir -p "$src"
  # An ANSI colour sequence, a newline, a backslash, a byte that is not
  # UTF-8, a C1 control (CSI) in UTF-8, and plain UTF-8.
  local names=($'esc\x1b[31mred' $'new\nline' 'back\slash' $'bad\xffbyte'
               $'c1-\xc2\x9b' 'utf8-é')
  for n in "${names[@]}"; do echo x >"$src/$n"; done
  "$sluice" import -q "$src" "$work/fs" || fail "import"
  run ls "$work/fs" /
  [ $rc -eq 0 ] || { fail "ls exited $rc"; show; }
  want_printable "ls"
  want_out "ls" 'esc\x1b[31mred' 'new\x0aline' 'back\\slash' 'bad\xffbyte' \
    'c1-\xc2\x9b' 'utf8-é'
  [ "$(wc -l <"$out")" -eq 6 ] || { fail "ls printed $(wc -l <"$out") lines for 6 names"; show; }
  run ls -l "$work/fs" /
  want_printable "ls -l"
  want_out "ls -l" 'esc\x1b[31mred' 'new\x0aline'
  run stat "$work/fs" $'/esc\x1b[31mred'
  want_printable "stat"
  run ls --json "$work/fs" /
  [ $rc -eq 0 ] || { fail "ls --json exited $rc"; show; }
  python3 - "$out" "$src" <<'PY' || { fail "ls --json"; show; }
import json, os, sys
text = open(sys.argv[1], 'rb').read().decode('utf-8')  # strict: valid UTF-8
got = sorted(e['name'].encode('utf-8', 'surrogateescape') for e in json.loads(text))
want = sorted(os.listdir(os.fsencode(sys.argv[2])))
assert got == want, (got, want)
PY
  for cmd in "stat --json" "du --json" "verify --json"; do
    timeout 20 "$sluice" $cmd "$work/fs" $'/esc\x1b[31mred' >"$out" 2>&1
    python3 -c "import json, sys; json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))" "$out" ||
      { fail "$cmd: not JSON"; show; }
  done
}

incomplete() {
  "$helper" died "$work/fs" 0 - || fail "the dying writer"
  run verify "$work/fs"
  want_rc1 "verify after a writer died"
  want_out "verify after a writer died" "INCOMPLETE /unsynced" "INCOMPLETE /synced" \
    "verified 2 file(s), 10000 bytes: 0 bad, 2 incomplete"
  run verify --json "$work/fs"
  want_rc1 "verify --json after a writer died"
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d['incomplete']) == ['/synced', '/unsynced'], d" "$out" ||
    { fail "verify --json"; show; }
  run stat "$work/fs" /unsynced
  want_out "stat /unsynced" "Checksum: not set" "State: incomplete"
  run stat "$work/fs" /synced
  want_out "stat /synced" "Checksum: set" "State: incomplete"
  run stat --json "$work/fs" /synced /unsynced
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert [e['state'] for e in d] == ['incomplete', 'incomplete'], d
assert [e['checksum'] for e in d] == ['set', 'not set'], d" "$out" ||
    { fail "stat --json"; show; }
  # A tree whose writer closed everything verifies, exit 0.
  mkdir -p "$work/src"
  echo x >"$work/src/x"
  "$sluice" import -q "$work/src" "$work/fs2" || fail "import"
  run verify "$work/fs2"
  [ $rc -eq 0 ] || { fail "verify of a closed tree exited $rc"; show; }
  run stat "$work/fs2" /x
  want_out "stat /x" "State: complete"
}

# The value log damaged under a stored file: a flipped byte, then (the
# byte put back) the file cut short inside the value.
vlog_damage() {
  mkdir -p "$work/src"
  python3 -c "
import sys
sys.stdout.write(''.join('DAMAGE-ME-%d;' % i for i in range(20000)))" >"$work/src/victim"
  echo "innocent" >"$work/src/bystander"
  "$sluice" import -q "$work/src" "$work/fs" || fail "import"
  # The log file holding the victim's bytes, and where they are in it.
  python3 - "$work/fs" >"$work/where" <<'PY2' || { fail "the victim's bytes are in no value log"; return; }
import glob, sys
for p in sorted(glob.glob(sys.argv[1] + "/writer.*/vlog/*.vlog")):
    i = open(p, "rb").read().find(b"DAMAGE-ME-12345;")
    if i >= 0:
        print(p, i)
        sys.exit(0)
sys.exit(1)
PY2
  read -r log at <"$work/where"
  flip() {
    python3 -c "
import sys
f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 1]))" "$log" "$at"
  }
  # Fails if the last run's output holds the string.
  want_not() {
    grep -qF -- "$2" "$out" && { fail "$1: its output says \"$2\""; show; }
  }
  flip
  run verify "$work/fs"
  want_rc1 "verify of a flipped byte"
  want_out "verify of a flipped byte" "BAD /victim" "fails its checksum" "$log" \
    "offset" "1 bad"
  want_not "verify of a flipped byte" "truncated"
  want_not "verify of a flipped byte" "BAD /bystander"
  run cat "$work/fs" /victim
  want_rc1 "cat of a flipped byte"
  want_out "cat of a flipped byte" "fails its checksum" "$log"
  want_not "cat of a flipped byte" "truncated"
  flip  # as it was
  run verify "$work/fs"
  [ $rc -eq 0 ] || { fail "verify with the byte put back exited $rc"; show; }
  truncate -s "$at" "$log" || fail "truncate $log"
  run verify "$work/fs"
  want_rc1 "verify of a cut log"
  want_out "verify of a cut log" "BAD /victim" "truncated" "$log" "offset"
  want_not "verify of a cut log" "checksum"
  run cat "$work/fs" /victim
  want_rc1 "cat of a cut log"
  want_out "cat of a cut log" "truncated" "$log"
  want_not "cat of a cut log" "checksum"
}

case $case in
  crafted_entries) crafted_entries ;;
  incomplete) incomplete ;;
  ls_escapes) ls_escapes ;;
  symlinks) symlinks ;;
  import_status) import_status ;;
  vlog_damage) vlog_damage ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
[ $fails -eq 0 ] && rm -rf "$work"
if [ $fails -ne 0 ]; then echo "tool_edge_test $case: $fails failure(s)"; exit 1; fi
echo "tool_edge_test $case: all passed"
