#!/usr/bin/env bash
# One stored file written by two writers (SLUICE_WRITER=1 and 2, separate
# processes), used through the LD_PRELOAD interposer by unmodified tools
# run as another writer, which has a store of its own: cat and cp read
# every writer's part; truncate, mv and rm act on the whole file; two
# writers appending to one log keep every record of both.
#   preload_multi_writer_test.sh WORK LIBSLUICE_PRELOAD_SO
set -uo pipefail
work=$1 lib=$(realpath "$2")
rm -rf "$work"
mkdir -p "$work/mnt" "$work/root" "$work/plain"
mnt=$work/mnt plain=$work/plain
export SLUICE_MOUNT=$mnt SLUICE_ROOT=$work/root SLUICE_LOCK_WAIT=60
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
# as W CMD...: CMD under the interposer as writer W ("" for none: the
# merged view until its first change, then writer 0).
as() {
  local w=$1; shift
  if [ -n "$w" ]; then
    env LD_PRELOAD="$lib" SLUICE_WRITER="$w" "$@"
  else
    env LD_PRELOAD="$lib" "$@"
  fi
}

head -c $((1 << 20)) /dev/urandom > "$plain/a"
head -c $((1 << 20)) /dev/urandom > "$plain/b"
cat "$plain/a" "$plain/b" > "$plain/whole"
head -c $((3 << 19)) "$plain/whole" > "$plain/short"  # 1.5 MiB

# Writer 1 stores the first MiB of f, writer 2 the second.
as 1 cp "$plain/a" "$mnt/f" || fail "writer 1's cp"
as 2 dd if="$plain/b" of="$mnt/f" bs=1M seek=1 conv=notrunc status=none ||
  fail "writer 2's dd"
# h likewise, for rm.
as 1 cp "$plain/a" "$mnt/h" || fail "writer 1's cp"
as 2 dd if="$plain/b" of="$mnt/h" bs=1M seek=1 conv=notrunc status=none ||
  fail "writer 2's dd"
as 3 sh -c "echo mine > $mnt/own3" || fail "writer 3's own file"
as 1 sh -c "echo mine > $mnt/own1" || fail "writer 1's own file"

# Readers with a writer view: writer 3 (no part of f) and writer 1 (one).
for w in 3 1; do
  if as $w cat "$mnt/f" > "$work/cat$w" && cmp -s "$work/cat$w" "$plain/whole"; then
    ok "cat as writer $w reads both parts"
  else
    fail "cat as writer $w: $(cmp "$work/cat$w" "$plain/whole" 2>&1)"
  fi
done
if as 3 cp "$mnt/f" "$plain/cp_out" && cmp -s "$plain/cp_out" "$plain/whole"; then
  ok "cp out as writer 3"
else
  fail "cp out as writer 3: $(cmp "$plain/cp_out" "$plain/whole" 2>&1)"
fi
# cp within the mount without a writer number: the source is opened in the
# merged view and read on after the copy's create made the process a writer.
if as "" cp "$mnt/f" "$mnt/copy" && as "" cat "$mnt/copy" > "$work/copy" &&
   cmp -s "$work/copy" "$plain/whole"; then
  ok "cp within the mount"
else
  fail "cp within the mount: $(cmp "$work/copy" "$plain/whole" 2>&1)"
fi

# truncate, mv, rm as writer 3; a fresh reader (cat/stat without a writer
# number: the merged view) sees the whole file changed.
if as 3 truncate -s $((3 << 19)) "$mnt/f" && as "" cat "$mnt/f" > "$work/short" &&
   cmp -s "$work/short" "$plain/short"; then
  ok "truncate as writer 3 shortens the whole file"
else
  fail "truncate as writer 3: $(cmp "$work/short" "$plain/short" 2>&1)"
fi
if as 3 mv "$mnt/f" "$mnt/g" && ! as "" stat "$mnt/f" > /dev/null 2>&1 &&
   as "" cat "$mnt/g" > "$work/moved" && cmp -s "$work/moved" "$plain/short"; then
  ok "mv as writer 3 moves the whole file"
else
  fail "mv as writer 3: $(as "" ls "$mnt" | tr '\n' ' ') $(cmp "$work/moved" "$plain/short" 2>&1)"
fi
if [ "$(as "" stat -c %s "$mnt/h")" = $((2 << 20)) ] && as 3 rm "$mnt/h" &&
   ! as "" stat "$mnt/h" > /dev/null 2>&1 && ! as "" ls "$mnt" | grep -qx h; then
  ok "rm as writer 3 removes the whole file"
else
  fail "rm as writer 3: $(as "" ls "$mnt" | tr '\n' ' ')"
fi

# Appends to one log by writers 1 and 2: taking turns, then at once.
n=20
for i in $(seq 1 $n); do
  for w in 1 2; do
    as $w sh -c "echo 'writer $w record $i' >> $mnt/log" || fail "append $w $i"
    echo "writer $w record $i" >> "$plain/log"
  done
done
if as "" cat "$mnt/log" > "$work/log" && cmp -s "$work/log" "$plain/log"; then
  ok "appends taking turns: every record, in order"
else
  fail "appends taking turns: $(diff "$work/log" "$plain/log" | head -5)"
fi
for w in 1 2; do
  (for i in $(seq 1 $n); do
     as $w sh -c "echo 'writer $w at once $i' >> $mnt/log2" || echo "append failed"
   done) > "$work/append$w.err" 2>&1 &
done
wait
for w in 1 2; do [ -s "$work/append$w.err" ] && fail "appends at once, writer $w: $(head -3 "$work/append$w.err")"; done
if as "" cat "$mnt/log2" > "$work/log2"; then
  bad=0
  for w in 1 2; do
    # Each writer's records, intact and in its own order.
    grep "^writer $w at once " "$work/log2" > "$work/log2.$w"
    seq 1 $n | sed "s/^/writer $w at once /" | cmp -s - "$work/log2.$w" || bad=1
  done
  [ "$(wc -l < "$work/log2")" = $((2 * n)) ] || bad=1
  if [ $bad = 0 ]; then ok "appends at once: every record of both"; else
    fail "appends at once: $(wc -l < "$work/log2") lines"; head -5 "$work/log2"; fi
else
  fail "appends at once: the log does not read"
fi

[ $fails = 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
