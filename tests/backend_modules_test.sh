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
# whose file name starts with NAME? (Not grep -q: it exits at the first
# match, awk then dies of SIGPIPE, and pipefail turns a match into a miss.)
maps_has() { awk '{print $6}' "$1" | grep "/$2[^/]*$" > /dev/null; }

# expect_maps FILE yes|no WHO LIB...: the process of FILE ("WHO") maps (yes)
# or does not map (no) each LIB.
expect_maps() {
  local f=$1 want=$2 who=$3 l; shift 3
  for l in "$@"; do
    if maps_has "$f" "$l"; then
      if [ "$want" = yes ]; then ok "$who maps $l"; else bad "$who maps $l"; fi
    else
      if [ "$want" = no ]; then ok "$who does not map $l"
      else
        bad "$who does not map $l"
        # What it did map, for the diagnosis.
        awk '$6 ~ /sluice|rocksdb|leveldb/ {print "     mapped:", $6}' "$f" | sort -u
      fi
    fi
  done
}

under() {  # MNT ROOT CMD...: CMD under the interposer
  local m=$1 r=$2; shift 2
  LD_PRELOAD=$lib SLUICE_MOUNT=$m SLUICE_ROOT=$r "$@"
}

# probe MNT ROOT FILE [TEXT]: one Python process under the interposer writes
# TEXT to FILE (if given), then prints FILE and its own /proc/self/maps.
probe() {
  local m=$1 r=$2; shift 2
  under "$m" "$r" python3 -c '
import sys
if len(sys.argv) > 2:
    open(sys.argv[1], "w").write(sys.argv[2] + "\n")
sys.stdout.write(open(sys.argv[1]).read())
sys.stdout.write(open("/proc/self/maps").read())' "$@"
}
# reads_back OUT TEXT WHAT: the first line of a probe's output is TEXT.
reads_back() {
  if head -n 1 "$1" | grep -qx "$2"; then
    ok "$3 reads back"
  else
    bad "$3 read back as: $(head -n 1 "$1")"
  fi
}

# A RocksDB store (the default) with one file in it.
echo "stored bytes" > "$work/in.txt"
under "$work/mnt" "$work/root" cp "$work/in.txt" "$work/mnt/f.txt" ||
  bad "cp into the mount"

# 1. Not touching the mount: no backend mapped.
under "$work/mnt" "$work/root" cat /proc/self/maps > "$work/maps_outside"
expect_maps "$work/maps_outside" yes "a process under the interposer" \
  libsluice_preload
expect_maps "$work/maps_outside" no "a process that never touched the mount" \
  librocksdb libleveldb libsluice_rocksdb libsluice_leveldb

# 2. Reading the RocksDB store: its module and RocksDB are mapped, and the
# bytes are right.
probe "$work/mnt" "$work/root" "$work/mnt/f.txt" > "$work/maps_rocksdb"
reads_back "$work/maps_rocksdb" "stored bytes" "a RocksDB store"
expect_maps "$work/maps_rocksdb" yes "reading a RocksDB store" \
  libsluice_rocksdb librocksdb

# 3. Writing a LevelDB store: LevelDB's module, not RocksDB's.
SLUICE_OPTIONS=backend=leveldb probe "$work/mnt_l" "$work/root_l" \
  "$work/mnt_l/g.txt" "leveldb bytes" \
  > "$work/maps_leveldb"
reads_back "$work/maps_leveldb" "leveldb bytes" "a LevelDB store"
expect_maps "$work/maps_leveldb" yes "a LevelDB-only process" libsluice_leveldb
expect_maps "$work/maps_leveldb" no "a LevelDB-only process" \
  libsluice_rocksdb librocksdb

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

# A new store is not begun when its backend cannot be loaded (its lock file
# aside, which marks no store), and can be made once the module is there.
LD_LIBRARY_PATH=$work/nomod "$cli" import "$work/in.txt" "$work/root_new" \
  > "$work/import_without" 2>&1
rc=$?
left=$(find "$work/root_new" -mindepth 2 ! -name SLUICE.lock 2>/dev/null | head -n 3)
if [ $rc -ne 0 ] && grep -q "cannot load libsluice_rocksdb.so" "$work/import_without" &&
   [ -z "$left" ]; then
  ok "a new store without its module: exit $rc, nothing of a store left behind"
else
  bad "a new store without its module: exit $rc, left '$left': $(cat "$work/import_without")"
fi
if "$cli" import "$work/in.txt" "$work/root_new" > "$work/import_with" 2>&1 &&
   [ "$("$cli" cat "$work/root_new" /in.txt 2>&1)" = "stored bytes" ]; then
  ok "the same store made once the module is found"
else
  bad "the same store with the module: $(cat "$work/import_with")"
fi

if [ $fails -ne 0 ]; then
  echo "backend_modules: $fails failure(s)"
  exit 1
fi
echo "backend_modules: all checks passed"
