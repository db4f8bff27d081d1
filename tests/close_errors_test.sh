#!/usr/bin/env bash
# Errors at close reach the program: unmodified cp, dd and `cat >` write
# an 8 MiB file through the interposer (MODE preload) or `sluice mount`
# (MODE fuse) into a data root that cannot hold it -- a 4 MiB tmpfs, or
# (preload) a file size limit (`ulimit -f`, SIGXFSZ ignored, so the store's
# write fails with EFBIG). Each must exit non-zero, and the file must not
# be called complete by `sluice stat`. A small file on the same root must
# still copy and read back (the setup is not what fails).
#   close_errors_test.sh MODE WORK LIBSLUICE_PRELOAD_SO SLUICE
# Exit 77 (skipped) where tmpfs or FUSE cannot be mounted here.
set -uo pipefail
mode=$1 work=$2 lib=$(realpath "$3") sluice=$(realpath "$4")
root=$work/root mnt=$work/mnt
fails=0

cleanup() {
  if [ "$mode" = fuse ] && mountpoint -q "$mnt"; then fusermount3 -u "$mnt"; fi
  if mountpoint -q "$root"; then umount "$root"; fi
}
trap cleanup EXIT
cleanup
rm -rf "$work"
mkdir -p "$root" "$mnt"
head -c $((8 << 20)) /dev/urandom > "$work/big.bin"
head -c 100000 /dev/urandom > "$work/small.bin"
export SLUICE_MOUNT=$mnt SLUICE_ROOT=$root SLUICE_LOCK_WAIT=10

if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=4m tmpfs "$root" 2> /dev/null; then
  echo "SKIP: cannot mount a tmpfs here (needs root)"; exit 77
fi
umount "$root"
if [ "$mode" = fuse ] && [ ! -c /dev/fuse ]; then
  echo "SKIP: no /dev/fuse on this machine"; exit 77
fi

# A fresh, empty data root: a 4 MiB tmpfs, or a plain directory.
fresh_root() {  # fresh_root tmpfs|plain
  if mountpoint -q "$root"; then umount "$root"; fi
  rm -rf "$root"; mkdir -p "$root"
  if [ "$1" = tmpfs ]; then mount -t tmpfs -o size=4m tmpfs "$root"; fi
}

daemon=
start_fuse() {
  "$sluice" mount -f "$root" "$mnt" 2> "$work/mount.err" &
  daemon=$!
  for _ in $(seq 100); do
    mountpoint -q "$mnt" && return
    kill -0 $daemon 2> /dev/null || break
    sleep 0.1
  done
  cat "$work/mount.err"
  if grep -qi "fuse\|permission\|not permitted" "$work/mount.err"; then
    echo "SKIP: FUSE cannot mount here (see above)"; exit 77
  fi
  echo "FAIL: sluice mount did not mount"; exit 1
}
stop_fuse() {
  if mountpoint -q "$mnt"; then fusermount3 -u "$mnt"; fi
  if [ -n "$daemon" ]; then wait $daemon; daemon=; fi
}

# run LIMIT SNIPPET: SNIPPET under bash on the mount; LIMIT is a ulimit -f
# in KiB, or "" for none. Prints the exit status.
run() {
  local limit=$1 snippet=$2 pre=()
  [ "$mode" = preload ] && pre=(env LD_PRELOAD="$lib")
  (
    cd "$work" || exit 99
    trap '' XFSZ
    [ -n "$limit" ] && ulimit -f "$limit"
    "${pre[@]}" timeout 120 bash -c "$snippet" > "$work/out" 2> "$work/err"
  )
  echo $?
}

# not_complete NAME: `sluice stat` must not call /NAME complete (the file
# may be missing, or the store unreadable on the full root).
not_complete() {
  if [ "$mode" = fuse ]; then stop_fuse; fi
  if "$sluice" stat "$root" "/$1" 2>&1 | grep -q "State: complete"; then
    echo "FAIL $2: /$1 is called complete although its close failed"
    "$sluice" stat "$root" "/$1"
    fails=$((fails + 1))
  fi
}

# must_fail NAME ROOTKIND LIMIT SNIPPET
must_fail() {
  local name=$1 kind=$2 limit=$3 snippet=$4 rc
  fresh_root "$kind"
  if [ "$mode" = fuse ]; then start_fuse; fi
  rc=$(run "$limit" "$snippet")
  if [ "$rc" = 0 ]; then
    echo "FAIL $name: exit 0 although the data root could not hold the file"
    fails=$((fails + 1))
  else
    echo "ok   $name (exit $rc: $(head -c 200 "$work/err" | tr '\n' ' '))"
  fi
  not_complete f.bin "$name"
  if [ "$mode" = fuse ]; then stop_fuse; fi
}

# The setup works for a file that fits.
fresh_root tmpfs
if [ "$mode" = fuse ]; then start_fuse; fi
rc=$(run "" 'cp small.bin mnt/s.bin && cmp small.bin mnt/s.bin')
if [ "$rc" != 0 ]; then
  echo "FAIL small: a 100 kB copy into the 4 MiB root failed (exit $rc)"; cat "$work/err"
  fails=$((fails + 1))
else
  echo "ok   small (a file that fits copies and reads back)"
fi
if [ "$mode" = fuse ]; then stop_fuse; fi

must_fail cp.full tmpfs "" 'cp big.bin mnt/f.bin'
must_fail dd.full tmpfs "" 'dd if=big.bin of=mnt/f.bin bs=1M status=none'
must_fail dd_fsync.full tmpfs "" 'dd if=big.bin of=mnt/f.bin bs=1M conv=fsync status=none'
must_fail cat.full tmpfs "" 'cat big.bin > mnt/f.bin'
must_fail python_fsync.full tmpfs "" 'python3 -c "
import os
fd = os.open(\"mnt/f.bin\", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, open(\"big.bin\", \"rb\").read())
os.fsync(fd)"'
if [ "$mode" = preload ]; then
  # The limit is the writing process's: through FUSE the kernel applies it
  # to the program's own writes, before they reach the daemon.
  must_fail cp.ulimit plain 4096 'cp big.bin mnt/f.bin'
  must_fail dd.ulimit plain 4096 'dd if=big.bin of=mnt/f.bin bs=1M status=none'
  must_fail cat.ulimit plain 4096 'cat big.bin > mnt/f.bin'
fi

fresh_root plain
if [ $fails -ne 0 ]; then echo "$fails case(s) failed"; exit 1; fi
echo "all cases passed"
