#!/usr/bin/env bash
# Calls on stored files that must do what they say or fail, through the
# LD_PRELOAD interposer (MODE preload) or `sluice mount` (MODE fuse):
#   - (preload) the vector calls under all their names (preadv64, preadv2,
#     preadv64v2, ...), Python's os.preadv/os.pwritev, POSIX AIO (refused),
#     and raw system calls on the placeholder, which must fail;
#   - O_SYNC and O_DSYNC writes, and fsync of a read-only descriptor, are
#     durable when they return: the writer (or, through FUSE, the daemon)
#     is SIGKILLed before any close, and a new process reads the bytes;
#   - flock, fcntl (F_SETLK, OFD) and lockf locks exclude another process
#     until released, or until their holder is SIGKILLed;
#   - chown to another owner is EPERM, extended attributes ENOTSUP.
#   preload_calls_test.sh MODE WORK LIBSLUICE_PRELOAD_SO HELPER HELPER_NO64 SLUICE
# Exit 77 (skipped) in fuse mode where FUSE cannot mount here.
set -uo pipefail
mode=$1 work=$2 lib=$(realpath "$3") helper=$(realpath "$4") helper32=$(realpath "$5")
sluice=$(realpath "$6")
rm -rf "$work"
mnt=$work/mnt root=$work/root
mkdir -p "$mnt" "$root"
export SLUICE_MOUNT=$mnt SLUICE_ROOT=$root SLUICE_LOCK_WAIT=60
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

daemon=
mount_fuse() {  # mounts ROOT on MNT with a daemon in the foreground
  "$sluice" mount -f "$root" "$mnt" 2> "$work/mount.err" &
  daemon=$!
  for _ in $(seq 100); do
    mountpoint -q "$mnt" && return 0
    kill -0 $daemon 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/mount.err"
  return 1
}
case $mode in
  preload) pre=(env LD_PRELOAD="$lib") ;;
  fuse)
    pre=(env)
    if [ ! -c /dev/fuse ]; then echo "SKIP: no /dev/fuse on this machine"; exit 77; fi
    if ! mount_fuse; then
      if grep -qi "fuse\|permission\|not permitted" "$work/mount.err"; then
        echo "SKIP: FUSE cannot mount here (see above)"; exit 77
      fi
      echo "FAIL: sluice mount did not mount"; exit 1
    fi
    trap 'mountpoint -q "$mnt" && fusermount3 -uz "$mnt"; [ -n "$daemon" ] && kill -9 $daemon 2>/dev/null' EXIT
    ;;
  *) echo "MODE must be preload or fuse"; exit 2 ;;
esac

# ---- the vector calls, AIO, the placeholder ----------------------------------
if [ $mode = preload ]; then
  for h in "$helper" "$helper32"; do
    name=$(basename "$h")
    if "${pre[@]}" "$h" io "$mnt/io.bin" > "$work/$name.io" 2>&1; then
      ok "$name io ($(grep -c '^ok' "$work/$name.io") checks)"
    else
      fail "$name io:"; grep -v '^ok' "$work/$name.io"
    fi
  done
  if "${pre[@]}" python3 - "$mnt/py.bin" > "$work/py.out" 2>&1 <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"0123456789")
a, b = bytearray(3), bytearray(4)
n = os.preadv(fd, [a, b], 2)
assert (n, bytes(a), bytes(b)) == (7, b"234", b"5678"), (n, a, b)
assert os.pwritev(fd, [b"XY", b"Z"], 4) == 3
assert os.pread(fd, 10, 0) == b"0123XYZ789", os.pread(fd, 10, 0)
print("python preadv/pwritev ok")
PY
  then ok "python os.preadv, os.pwritev"; else fail "python os.preadv, os.pwritev:"; cat "$work/py.out"; fi
fi

# ---- O_SYNC, O_DSYNC, fsync of a read-only descriptor --------------------------
# The writer says "ready" once its writes (and fsync) returned; then the
# process that holds the data (the writer, or the FUSE daemon) is killed.
n=300000
"$helper" pattern $n > "$work/pattern"
for how in sync dsync rofsync; do
  f=$mnt/$how.bin
  exec {out}< <("${pre[@]}" "$helper" syncwrite "$f" $how $n; echo "exit $?")
  writer=$!
  read -t 60 -u $out line
  if [ "$line" != ready ]; then
    fail "$how: the writer did not get ready: $line"; exec {out}<&-; continue
  fi
  if [ $mode = preload ]; then
    pkill -9 -P $writer 2>/dev/null; kill -9 $writer 2>/dev/null
    exec {out}<&-
    "${pre[@]}" cat "$f" > "$work/$how.back" 2> "$work/$how.err"
  else
    kill -9 $daemon; wait $daemon 2>/dev/null
    pkill -9 -P $writer 2>/dev/null; kill -9 $writer 2>/dev/null
    exec {out}<&-
    fusermount3 -uz "$mnt"
    "$sluice" cat "$root" "/$how.bin" > "$work/$how.back" 2> "$work/$how.err"
    mount_fuse || { fail "remount after the kill"; break; }
  fi
  if cmp -s "$work/$how.back" "$work/pattern"; then
    ok "$how: $n bytes back after SIGKILL"
  else
    fail "$how: $(wc -c < "$work/$how.back") of $n bytes back after SIGKILL, not the same"
    head -3 "$work/$how.err"
  fi
done

# ---- locks between processes ---------------------------------------------------
# Each process is a writer of its own (SLUICE_WRITER), so that none waits
# for another's store: they contend for the lock alone. The holder's
# "lock" waits for the lock; "try" does not.
for kind in flock posix ofd lockf; do
  f=$mnt/lock.$kind
  coproc HOLD { "${pre[@]}" SLUICE_WRITER=1 "$helper" hold "$f" $kind 2>&1; }
  holder=$HOLD_PID
  say() { echo "$1" >&${HOLD[1]}; read -t 30 -u ${HOLD[0]} reply; echo "$reply"; }
  trylock() { "${pre[@]}" SLUICE_WRITER=2 "$helper" try "$f" $kind 2>&1 | tr '\n' ' '; }
  r1=$(say lock)
  t1=$(trylock)
  # A waiter, blocked until the holder unlocks.
  exec {wout}< <("${pre[@]}" SLUICE_WRITER=3 "$helper" wait "$f" $kind 2>&1)
  sleep 0.5
  early=
  read -t 0.01 -u $wout early
  r2=$(say unlock)
  read -t 30 -u $wout waited
  exec {wout}<&-
  r3=$(say lock)  # once the waiter has exited
  t3=$(trylock)
  pkill -9 -P $holder 2>/dev/null; kill -9 $holder 2>/dev/null
  wait $holder 2>/dev/null
  t4=$(trylock)
  got="$r1;$t1;${early:-};$r2;$waited;$r3;$t3;$t4"
  busy='busy (EWOULDBLOCK|EACCES) '
  [ $kind = posix ] && busy="held by [0-9]+ $busy"
  want="^locked;$busy;;unlocked;got;locked;$busy;got \$"
  if [[ "$got" =~ $want ]]; then
    ok "$kind: excludes another process until unlocked, and until its holder is killed"
  else
    fail "$kind: lock;try;waiter before the unlock;unlock;waiter;lock;try;try after the kill: $got"
  fi
done

# ---- owners and extended attributes -------------------------------------------
"${pre[@]}" "$helper" owner "$mnt/owner.txt" > "$work/owner.out" 2>&1
cat > "$work/owner.want" <<EOF
fchown-same ok
fchown-none ok
fchown-other Operation not permitted
fchown-group Operation not permitted
chown-other Operation not permitted
lchown-other Operation not permitted
fchownat-other Operation not permitted
fsetxattr Operation not supported
setxattr Operation not supported
lsetxattr Operation not supported
fgetxattr Operation not supported
fremovexattr Operation not supported
removexattr Operation not supported
owner unchanged yes
EOF
if cmp -s "$work/owner.out" "$work/owner.want"; then
  ok "chown to another owner EPERM, xattrs ENOTSUP"
else
  fail "owners and xattrs:"; diff "$work/owner.want" "$work/owner.out"
fi

if [ $mode = fuse ]; then
  fusermount3 -u "$mnt" && wait $daemon || fail "unmount"
fi
echo "$fails failed"
[ $fails = 0 ]
