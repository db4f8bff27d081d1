#!/usr/bin/env bash
# The interposer creates, reads and changes nothing outside its mount prefix
# and its data root. A workload of unmodified programs works on the mount
# (by absolute paths, by paths relative to a cwd above the mount, and from a
# cwd inside it) next to a directory tree it never names. Afterwards:
#   - that tree is the same: paths, types, sizes, modes, mtimes, bytes, and
#     atimes (set in the past beforehand, so a read would move them);
#   - the real mount point is still an empty directory;
#   - no system call of any process (strace -f) named a path in that tree,
#     or a path below the mount (every one must have been interposed);
#   - a sibling whose name starts with the mount's name ("mnt2") is a plain
#     directory to the interposer: read through to the kernel, not stored.
#   preload_outside_test.sh WORK LIBSLUICE_PRELOAD_SO
set -uo pipefail
work=$1 lib=$(realpath "$2")
if ! command -v strace > /dev/null; then
  echo "FAIL: strace is needed (scripts/install-deps.sh installs it)"; exit 1
fi
rm -rf "$work"
W=$work/w
mkdir -p "$W/other/sub/deeper" "$W/home" "$W/tmp" "$W/mnt" "$W/mnt2" "$W/root"
echo "keep me" > "$W/other/a.txt"
head -c 100000 /dev/urandom > "$W/other/sub/b.bin"
echo nested > "$W/other/sub/deeper/c.txt"
ln -s ../a.txt "$W/other/sub/link"
chmod 600 "$W/other/sub/b.bin"
echo "sibling, not stored" > "$W/mnt2/keep.txt"
# Bytes first (reading them moves atimes), then past atimes on the files:
# any later read would move them (relatime updates an atime older than the
# mtime). Directories' atimes are not compared: listing them moves those.
sums() { (cd "$W" && find other -type f -print0 | sort -z | xargs -0 md5sum); }
meta() {
  (cd "$W" && find other mnt -printf '%p %y %s %m %T@ %l\n' | sort &&
   find other -type f -printf '%p atime %A@\n' | sort)
}
sums > "$work/before"
find "$W/other" -type f -exec touch -a -d "2001-01-01 00:00:00" {} +
meta >> "$work/before"

cat > "$work/workload.sh" <<'EOF'
set -e
cd "$W"
echo hello > mnt/a.txt                # relative, from a cwd above the mount
cat mnt/a.txt > mnt/b.txt
cp /etc/hostname mnt/h.txt
mkdir -p mnt/d/e && mv mnt/b.txt mnt/d/e/
ls -lR mnt > /dev/null
find mnt -type f | sort
du -s mnt > /dev/null
tar -cf mnt/t.tar -C mnt d && tar -tf mnt/t.tar
stat -c '%s %F' "$W/mnt/a.txt" "$W/mnt/d"
cd mnt                                # from a cwd inside the mount
cat a.txt
echo more >> a.txt && wc -c < a.txt
rm -r d && ls
seq 3 > s.txt && sed -i s/2/two/ s.txt && cat s.txt   # a temporary file, renamed
ln -s a.txt l 2> /dev/null || echo "no symbolic link"  # no links are stored,
ln a.txt hard 2> /dev/null || echo "no hard link"      # nor made beside it
printf '#!/bin/sh\necho ran\n' > run.sh && chmod +x run.sh
./run.sh 2> /dev/null || echo "not executed: $?"       # as on a noexec mount
mkfifo fifo 2> /dev/null || echo "no fifo"              # no special files
cd ..
ln -s "$W/other/a.txt" mnt/l2 2> /dev/null || echo "no symbolic link"
cat mnt2/keep.txt                     # not ours: its name only starts alike
/usr/bin/python3 -c '
import os
os.makedirs("mnt/p/q"); open("mnt/p/q/f", "w").write("x")
print(sorted(os.listdir("mnt")), open("mnt2/keep.txt").read().strip())
for root, dirs, files in os.walk("mnt"): pass
import mmap
with open("mnt/p/q/f", "r+b") as f:
    try:
        mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_WRITE)
    except OSError as e:
        print("shared writable mapping refused:", e.errno)
'
EOF

export SLUICE_MOUNT=$W/mnt SLUICE_ROOT=$W/root
HOME=$W/home TMPDIR=$W/tmp W=$W \
  strace -f -qq -e trace=%file -o "$work/strace.log" \
  env LD_PRELOAD="$lib" bash "$work/workload.sh" > "$work/out" 2> "$work/err"
rc=$?
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ $rc = 0 ] || { fail "workload exit $rc"; cat "$work/err"; }
cat > "$work/expected" <<EOF
d/
d/e/
d/e/b.txt
6 regular file
0 directory
hello
11
a.txt
h.txt
t.tar
1
two
3
no symbolic link
no hard link
not executed: 126
no fifo
no symbolic link
sibling, not stored
['a.txt', 'h.txt', 'p', 'run.sh', 's.txt', 't.tar'] sibling, not stored
shared writable mapping refused: 19
EOF
# Lines 1-3 are find's (sorted); a directory's stat size is not compared.
(find_lines=$(sed -n '1,3p' "$work/out" | sort | tr '\n' ' ')
 [ "$find_lines" = "mnt/a.txt mnt/d/e/b.txt mnt/h.txt " ]) ||
  { fail "find on the mount"; head -3 "$work/out"; }
sed -n '4,$p' "$work/out" | sed 's/^[0-9]* directory$/0 directory/' > "$work/out.rest"
cmp -s "$work/out.rest" "$work/expected" ||
  { fail "workload output"; diff "$work/expected" "$work/out.rest"; }

meta > "$work/meta.after"
sums > "$work/after" && cat "$work/meta.after" >> "$work/after"
if cmp -s "$work/before" "$work/after"; then
  echo "ok   the tree outside is unchanged and unread ($(wc -l < "$work/before") lines)"
else
  fail "the tree outside changed"; diff "$work/before" "$work/after" | head -20
fi
[ -z "$(ls -A "$W/mnt")" ] && echo "ok   the real mount point is still empty" ||
  { fail "files in the real mount point"; ls -la "$W/mnt"; }
# System calls: nothing in the other tree, nothing below the mount (the
# mount point itself is fine: chdir into the mount is a real chdir there).
leaks=$(grep -v " execve(" "$work/strace.log" | grep -E "\"($W/other|$W/mnt/|mnt/|other/)")
if [ -z "$leaks" ]; then
  echo "ok   no system call named a path outside or below the mount ($(wc -l < "$work/strace.log") calls traced)"
else
  fail "system calls on paths the interposer should not touch:"; echo "$leaks" | head -20
fi
# The sibling was read through to the kernel and is not in the store.
grep -q "\"$W/mnt2/keep.txt\"\|\"mnt2/keep.txt\"" "$work/strace.log" &&
  echo "ok   mnt2 reached the kernel" || fail "mnt2/keep.txt never reached the kernel"
# The data root holds only the stores.
extra=$(ls -A "$W/root" | grep -v '^writer\.[0-9]*$')
[ -z "$extra" ] && [ -n "$(ls -A "$W/root")" ] && echo "ok   the data root holds only writer stores" ||
  fail "the data root holds: $(ls -A "$W/root")"

# A bad setting: said on stderr, and every call under the mount fails
# (EINVAL) rather than pass through to the plain directory; outside, the
# program runs as usual (an open gets the descriptor it gets without the
# interposer: the lowest free one). A bad SLUICE_LOCK_WAIT is named with
# its value (it once read as 0 s).
for bad in SLUICE_EXTENT_BYTES=1k SLUICE_OPTIONS=no_such_option=1 SLUICE_ROOT=relative \
           SLUICE_LOCK_WAIT=abc SLUICE_LOCK_WAIT=-1 SLUICE_LOCK_WAIT=5x \
           SLUICE_LOCK_WAIT=1e3 SLUICE_LOCK_WAIT= SLUICE_WRITER=x \
           SLUICE_MERGED_READS=maybe; do
  out=$(env LD_PRELOAD="$lib" SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/root" "$bad" \
        bash -c "echo x > '$W/mnt/bad.txt'; echo \"rc \$?\"; echo y > '$W/bad-outside.txt' && echo outside-ok; for pre in \"\$LD_PRELOAD\" ''; do LD_PRELOAD=\$pre /usr/bin/python3 -c 'import os; print(\"fd\", os.open(\"/etc/hostname\", 0))'; done | uniq -c | wc -l | sed 's/^/fd kinds /'" 2>&1)
  said="^sluice: .*${bad%%=*}"
  [ "${bad%%=*}" = SLUICE_LOCK_WAIT ] && said="$said.*'${bad#*=}'"
  if grep -q -- "$said" <<< "$out" && grep -q "^rc 1$" <<< "$out" &&
     grep -q "Invalid argument" <<< "$out" && grep -q "^outside-ok$" <<< "$out" &&
     grep -q "^fd kinds 1$" <<< "$out" &&
     [ -z "$(ls -A "$W/mnt")" ]; then
    echo "ok   $bad: said, and refused under the mount"
  else
    fail "$bad"; echo "$out" | head; ls -A "$W/mnt"
  fi
  rm -f "$W/bad-outside.txt"
done
# Good waits, fractions and units included, are taken without a word.
for good in 0 2 0.5 .25 120. 5s 0.5m; do
  out=$(env LD_PRELOAD="$lib" SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/root" \
        SLUICE_LOCK_WAIT="$good" bash -c "echo '$good' > '$W/mnt/wait.txt' && cat '$W/mnt/wait.txt'" 2>&1)
  [ "$out" = "$good" ] && echo "ok   SLUICE_LOCK_WAIT=$good" ||
    { fail "SLUICE_LOCK_WAIT=$good"; echo "$out" | head; }
done

if [ $fails = 0 ]; then echo "preload_outside: all passed"; exit 0; fi
echo "preload_outside: $fails failure(s)"; exit 1
