#!/usr/bin/env bash
# The interposer reads its settings through the configuration, once at
# start (docs/CONFIG.md):
#   - SLUICE_ROOT is another name for the first directory of data_roots:
#     SLUICE_DATA_ROOTS alone places the stores in its first directory;
#     both set and agreeing work; both set and disagreeing is said on
#     stderr, naming both, and every call under the mount fails (EINVAL)
#     with nothing stored or left in the mount point;
#   - SLUICE_CONFIG_FILE's [global] lines set mount and root, and the
#     environment beats them;
#   - SLUICE_OPTIONS items tune the store; the variable itself
#     (SLUICE_BACKEND) beats an item; SLUICE_WRITER picks the store;
#   - a bad value is said naming its variable, and calls under the mount
#     fail;
#   - `sluice config` shows mount, root, data_roots, writer, options,
#     lock_wait, merged_reads with their sources, and notes none of them as
#     unknown;
#   - a process with a writer number reads the value log with O_DIRECT,
#     one without through the page cache, unless configured otherwise.
#   preload_config_test.sh WORK LIBSLUICE_PRELOAD_SO SLUICE_TOOL
set -uo pipefail
work=$1 lib=$(realpath "$2") sluice=$(realpath "$3")
rm -rf "$work"
W=$work/w
mkdir -p "$W/mnt"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# run VAR=VALUE... -- COMMAND: COMMAND under the interposer with only the
# given environment (and PATH), stdout and stderr together.
run() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env -i PATH="$PATH" LD_PRELOAD="$lib" "${vars[@]}" bash -c "$*" 2>&1
}
store() { echo "$1/writer.$(printf %08d "${2:-0}")"; }

# 1. SLUICE_DATA_ROOTS alone: the stores go to its first directory.
out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_DATA_ROOTS="$W/r1,$W/r2" -- \
      "echo one > '$W/mnt/f1' && cat '$W/mnt/f1'")
if [ "$out" = one ] && [ -d "$(store "$W/r1")" ] && [ ! -e "$W/r2" ]; then
  ok "SLUICE_DATA_ROOTS alone: stores in its first directory"
else
  fail "SLUICE_DATA_ROOTS alone"; echo "$out"; ls -A "$W"
fi

# 2. Both set and agreeing.
out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r1" \
          SLUICE_DATA_ROOTS="$W/r1,$W/r2" -- "cat '$W/mnt/f1'")
[ "$out" = one ] && ok "SLUICE_ROOT and SLUICE_DATA_ROOTS agreeing" ||
  { fail "agreeing roots"; echo "$out"; }

# 3. Both set and disagreeing: said, naming both; refused under the mount.
out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r3" \
          SLUICE_DATA_ROOTS="$W/r1,$W/r2" -- \
      "echo two > '$W/mnt/f2'; echo \"rc \$?\"; echo out > '$W/outside' && echo outside-ok")
if grep -q "^sluice: .*SLUICE_ROOT.*'$W/r3'.*'$W/r1,$W/r2'.*SLUICE_DATA_ROOTS" <<<"$out" &&
   grep -q "^rc 1$" <<<"$out" && grep -q "Invalid argument" <<<"$out" &&
   grep -q "^outside-ok$" <<<"$out" && [ ! -e "$W/r3" ] &&
   [ -z "$(ls -A "$W/mnt")" ]; then
  ok "disagreeing roots: said, naming both, and refused under the mount"
else
  fail "disagreeing roots"; echo "$out"
fi
rm -f "$W/outside"

# 4. The file SLUICE_CONFIG_FILE names: mount and root from [global]; a
#    context's section does not apply; the environment beats the file.
mkdir -p "$W/mnt2"
cat >"$W/job.conf" <<CONF
mount = $W/mnt2
root = $W/r4
[context:sim]
root = $W/elsewhere
CONF
out=$(run SLUICE_CONFIG_FILE="$W/job.conf" -- \
      "echo three > '$W/mnt2/f3' && cat '$W/mnt2/f3'")
if [ "$out" = three ] && [ -d "$(store "$W/r4")" ] && [ ! -e "$W/elsewhere" ] &&
   [ -z "$(ls -A "$W/mnt2")" ]; then
  ok "SLUICE_CONFIG_FILE: mount and root from [global]"
else
  fail "SLUICE_CONFIG_FILE"; echo "$out"; ls -A "$W" "$W/mnt2"
fi
out=$(run SLUICE_CONFIG_FILE="$W/job.conf" SLUICE_ROOT="$W/r5" -- \
      "echo four > '$W/mnt2/f4' && cat '$W/mnt2/f4'")
[ "$out" = four ] && [ -d "$(store "$W/r5")" ] &&
  ok "SLUICE_ROOT beats the file's root" ||
  { fail "SLUICE_ROOT over the file"; echo "$out"; }

# 5. SLUICE_OPTIONS tunes the store, SLUICE_BACKEND beats its item,
#    SLUICE_WRITER picks the store.
out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r6" SLUICE_WRITER=3 \
          SLUICE_OPTIONS=backend=leveldb,extent_bytes=64k -- \
      "echo five > '$W/mnt/f5' && cat '$W/mnt/f5' && stat -c %o '$W/mnt/f5'")
if [ "$out" = "five
65536" ] && [ -d "$(store "$W/r6" 3)/leveldb" ]; then
  ok "SLUICE_OPTIONS and SLUICE_WRITER"
else
  fail "SLUICE_OPTIONS and SLUICE_WRITER"; echo "$out"; ls -AR "$W/r6" | head
fi
out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r7" SLUICE_BACKEND=rocksdb \
          SLUICE_OPTIONS=backend=leveldb -- "echo six > '$W/mnt/f6' && cat '$W/mnt/f6'")
[ "$out" = six ] && [ -d "$(store "$W/r7")/rocksdb" ] &&
  ok "SLUICE_BACKEND beats the item of SLUICE_OPTIONS" ||
  { fail "SLUICE_BACKEND over SLUICE_OPTIONS"; echo "$out"; ls -AR "$W/r7" | head; }

# 6. A bad value: said naming its variable; refused under the mount.
for bad in SLUICE_WAL=maybe SLUICE_WRITER=-2 SLUICE_OPTIONS=wal=x \
           SLUICE_CONFIG_FILE=$W/no-such.conf; do
  out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r8" "$bad" -- \
        "echo x > '$W/mnt/bad'; echo \"rc \$?\"")
  said="^sluice: .*${bad%%=*}"
  [ "${bad%%=*}" = SLUICE_CONFIG_FILE ] && said="^sluice: .*no-such.conf"
  if grep -q -- "$said" <<<"$out" && grep -q "^rc 1$" <<<"$out" &&
     grep -q "Invalid argument" <<<"$out" && [ ! -e "$W/r8" ] &&
     [ ! -e "$W/mnt/bad" ]; then
    ok "$bad: said, and refused under the mount"
  else
    fail "$bad"; echo "$out"
  fi
done
# A mount that is no absolute directory: said; there is no mount to refuse.
out=$(run SLUICE_MOUNT=relative/dir SLUICE_ROOT="$W/r8" -- "echo \"rc \$?\"")
grep -q "^sluice: .*SLUICE_MOUNT" <<<"$out" && grep -q "^rc 0$" <<<"$out" &&
  ok "SLUICE_MOUNT=relative/dir: said, the interposer off" ||
  { fail "SLUICE_MOUNT=relative/dir"; echo "$out"; }

# 7. sluice config shows the interposer's variables with their sources.
env -i PATH="$PATH" SLUICE_MOUNT=/m SLUICE_ROOT=/r SLUICE_WRITER=3 \
    SLUICE_OPTIONS=wal=1 SLUICE_LOCK_WAIT=5s SLUICE_MERGED_READS=1 \
    SLUICE_CONFIG_FILE="$W/job.conf" \
    "$sluice" config >"$work/config.txt" 2>"$work/config.err" ||
  fail "sluice config exited non-zero"
for want in "mount = /m  # environment SLUICE_MOUNT" \
            "root = /r  # environment SLUICE_ROOT" \
            "data_roots = /r  # environment SLUICE_ROOT" \
            "writer = 3  # environment SLUICE_WRITER" \
            "options = wal=1  # environment SLUICE_OPTIONS" \
            "wal = 1  # environment SLUICE_OPTIONS" \
            "lock_wait = 5s  # environment SLUICE_LOCK_WAIT" \
            "merged_reads = 1  # environment SLUICE_MERGED_READS" \
            "config_file = $W/job.conf  # environment SLUICE_CONFIG_FILE"; do
  grep -qxF "$want" "$work/config.txt" && ok "sluice config: $want" ||
    { fail "sluice config: no line '$want'"; cat "$work/config.txt"; }
done
[ -s "$work/config.err" ] &&
  { fail "sluice config noted something"; cat "$work/config.err"; }
# Without the environment, the file's values, with their lines.
env -i PATH="$PATH" SLUICE_CONFIG_FILE="$W/job.conf" "$sluice" config |
  grep -qxF "mount = $W/mnt2  # file $W/job.conf:1" &&
  ok "sluice config: mount from the file" ||
  fail "sluice config: mount from the file"

# 8. A process with a writer number (a rank, which reads its checkpoint
#    once) reads the value log with O_DIRECT; one without (a shell's tools)
#    through the page cache; the configuration beats both. The shell reads
#    a byte of a stored file, then says, for each descriptor it holds on
#    the value log's file for reading, "direct" or "cached": builtins only,
#    as the interposer closes its stores when the process forks.
run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r9" SLUICE_WRITER=0 -- \
    "head -c 3000000 /dev/urandom > '$W/mnt/big'" ||
  fail "writing a stored file for the read flags"
logs=("$(store "$W/r9")"/vlog/*.vlog)
[ ${#logs[@]} = 1 ] || fail "one value log file expected: ${logs[*]}"
case $(uname -m) in  # O_DIRECT's value
  aarch64|arm*|powerpc*|ppc*) direct=0200000;;
  *) direct=040000;;
esac
for c in "direct|SLUICE_WRITER=0" "direct|SLUICE_WRITER=7" "cached|" \
         "cached|SLUICE_WRITER=0 SLUICE_VLOG_DIRECT_READS=0" \
         "direct|SLUICE_VLOG_DIRECT_READS=1"; do
  want=${c%%|*} vars=${c#*|}
  # shellcheck disable=SC2086
  out=$(run SLUICE_MOUNT="$W/mnt" SLUICE_ROOT="$W/r9" $vars -- "
    exec 3<'$W/mnt/big' && read -r -N 1 x <&3 || echo 'read failed'
    for ((n = 0; n < 4096; n++)); do
      [ /proc/\$\$/fd/\$n -ef '${logs[0]}' ] || continue
      fl=
      while read -r k v; do [ \"\$k\" = flags: ] && fl=\$v; done \\
        </proc/\$\$/fdinfo/\$n
      (( (fl & 03) == 0 )) || continue
      (( fl & $direct )) && echo direct || echo cached
    done")
  [ -n "$out" ] && [ -z "$(grep -vx "$want" <<<"$out")" ] &&
    ok "value log read $want with '${vars:-no writer number}'" ||
    { fail "value log reads with '${vars:-no writer number}': want $want"; echo "$out"; }
done

if [ $fails = 0 ]; then echo "preload_config: all passed"; exit 0; fi
echo "preload_config: $fails failure(s)"; exit 1
