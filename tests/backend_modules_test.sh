#!/usr/bin/env bash
# Backends are modules that libsluice loads when a store first needs one:
#   - a process under the interposer that never touches the mount maps
#     neither RocksDB nor LevelDB (nor their modules);
#   - one that reads a RocksDB store maps RocksDB's module, and one that
#     writes a LevelDB store maps LevelDB's and not RocksDB's;
#   - a libsluice without its modules beside it (nor on the search path)
#     fails to open a store with an error that names the missing module.
#   backend_modules_test.sh WORK LIBSLUICE_PRELOAD_SO LIBSLUICE_SO SLUICE_CLI
set -uo pipefail
work=$1 lib=$(realpath "$2") core=$(realpath "$3") cli=$(realpath "$4")
rm -rf "$work"
mkdir -p "$work/mnt" "$work/root" "$work/mnt_l" "$work/root_l" "$work/nomod"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# maps_has FILE NAME: does the /proc/PID/maps copy in FILE map a library
# whose file name starts with NAME?
maps_has() { awk '{print $6}' "$1" | grep -q "/$2[^/]*$"; }

under() {  # MNT ROOT CMD...: CMD under the interposer
  local m=$1 r=$2; shift 2
  LD_PRELOAD=$lib SLUICE_MOUNT=$m SLUICE_ROOT=$r "$@"
}

# A RocksDB store (the default) with one file in it.
echo "stored bytes" > "$work/in.txt"
under "$work/mnt" "$work/root" cp "$work/in.txt" "$work/mnt/f.txt" ||
  bad "cp into the mount"

# 1. Not touching the mount: no backend mapped.
under "$work/mnt" "$work/root" cat /proc/self/maps > "$work/maps_outside"
if maps_has "$work/maps_outside" libsluice_preload; then
  ok "the interposer is loaded"
else
  bad "the interposer is not in the process's maps"
fi
for l in librocksdb libleveldb libsluice_rocksdb libsluice_leveldb; do
  if maps_has "$work/maps_outside" $l; then
    bad "a process that never touched the mount maps $l"
  else
    ok "a process that never touched the mount does not map $l"
  fi
done

# 2. Reading the RocksDB store: its module and RocksDB are mapped, and the
# bytes are right.
under "$work/mnt" "$work/root" python3 -c '
import sys
sys.stdout.write(open(sys.argv[1]).read())
sys.stdout.write(open("/proc/self/maps").read())' "$work/mnt/f.txt" \
  > "$work/maps_rocksdb"
if head -n 1 "$work/maps_rocksdb" | grep -qx "stored bytes"; then
  ok "the stored file reads back"
else
  bad "the stored file read back as: $(head -n 1 "$work/maps_rocksdb")"
fi
for l in libsluice_rocksdb librocksdb; do
  if maps_has "$work/maps_rocksdb" $l; then
    ok "reading a RocksDB store maps $l"
  else
    bad "reading a RocksDB store did not map $l"
  fi
done

# 3. Writing a LevelDB store: LevelDB's module, not RocksDB's.
SLUICE_OPTIONS=backend=leveldb under "$work/mnt_l" "$work/root_l" python3 -c '
import sys
open(sys.argv[1], "w").write("leveldb bytes\n")
sys.stdout.write(open(sys.argv[1]).read())
sys.stdout.write(open("/proc/self/maps").read())' "$work/mnt_l/g.txt" \
  > "$work/maps_leveldb"
if head -n 1 "$work/maps_leveldb" | grep -qx "leveldb bytes"; then
  ok "a LevelDB store written and read back"
else
  bad "the LevelDB store read back as: $(head -n 1 "$work/maps_leveldb")"
fi
if maps_has "$work/maps_leveldb" libsluice_leveldb; then
  ok "a LevelDB store maps libsluice_leveldb"
else
  bad "a LevelDB store did not map libsluice_leveldb"
fi
for l in libsluice_rocksdb librocksdb; do
  if maps_has "$work/maps_leveldb" $l; then
    bad "a LevelDB-only process maps $l"
  else
    ok "a LevelDB-only process does not map $l"
  fi
done

# 4. libsluice alone, without its modules: a clear error, not a crash.
cp -L "$core" "$work/nomod/$(basename "$core")"
soname=$(readelf -d "$core" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -e "$work/nomod/$soname" ] || ln -s "$(basename "$core")" "$work/nomod/$soname"
"$cli" ls "$work/root" > "$work/ls_with" 2>&1
if grep -q "f.txt" "$work/ls_with"; then
  ok "sluice ls with the modules beside libsluice"
else
  bad "sluice ls with the modules: $(cat "$work/ls_with")"
fi
LD_LIBRARY_PATH=$work/nomod "$cli" ls "$work/root" > "$work/ls_without" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "cannot load libsluice_rocksdb.so" "$work/ls_without"; then
  ok "without its module: exit $rc, '$(head -n 1 "$work/ls_without")'"
else
  bad "without its module: exit $rc, $(cat "$work/ls_without")"
fi

if [ $fails -ne 0 ]; then
  echo "backend_modules: $fails failure(s)"
  exit 1
fi
echo "backend_modules: all checks passed"
