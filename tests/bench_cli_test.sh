#!/usr/bin/env bash
# sluice-bench end to end under mpiexec: the IOR acceptance command, a
# flipped byte caught with its offset, bad flags exit 2, and the JSON summary
# carries every field of the text summary.
# Usage: bench_cli_test.sh WORKDIR MPIEXEC NPFLAG BENCH [PREFLAGS...]
set -u
work=$1 mpiexec=$2 npflag=$3 bench=$4
shift 4
pre=("$@")
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$mpiexec" "$npflag" "$1" "${pre[@]}" "$bench" "${@:2}"; }

# 1. The acceptance command passes its own data check.
if ! run 4 -a POSIX -b 64m -t 1m -e -w -r -C -W -R -o "$work/ior" >"$work/1.txt" 2>&1; then
  fail "acceptance command"; cat "$work/1.txt"
fi
grep -q "data check          : write and read" "$work/1.txt" || fail "no data check line"

# 2. One byte flipped between write and read: exit 1, offset named.
run 4 -a POSIX -b 4m -t 1m -e -w -k -o "$work/flip" >"$work/2w.txt" 2>&1 || fail "flip write"
offset=$((3 * 4194304 + 777777))
python3 - "$work/flip" "$offset" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0x40]))
PY
run 4 -a POSIX -b 4m -t 1m -r -C -R -o "$work/flip" >"$work/2r.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "flipped byte: exit $rc, want 1"
grep -q "first bad byte at offset $offset" "$work/2r.txt" || { fail "offset $offset not named"; cat "$work/2r.txt"; }
# the same read without the flip passes (file per process, SLUICE-KV)
run 2 -a SLUICE-KV -b 4m -t 256k -e -w -r -C -R -F -o "$work/kv" >"$work/2k.txt" 2>&1 || { fail "SLUICE-KV check"; cat "$work/2k.txt"; }

# 3. Bad input: exit 2 and a clear message, on one rank and on four.
for n in 1 4; do
  for args in "-t 2m -b 1m|larger than block size" "-b 3m -t 2m|not a multiple" \
              "-a NOPE|unknown API 'NOPE'" "-x|unknown flag"; do
    flags=${args%%|*} want=${args#*|}
    run $n $flags >"$work/3.txt" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "'$flags' on $n: exit $rc, want 2"
    grep -q "$want" "$work/3.txt" || fail "'$flags': no '$want' in output"
  done
done

# 4. JSON: parses, and holds every field of the text summary.
run 2 -a FIO-LIMIT,FIO-OVERWRITE,POSIX,MPIIO,HDF5,ADIOS2,SLUICE-KV -b 2m -t 512k -s 2 -e -C -R -i 2 \
  -o "$work/json" -O summaryFormat=JSON -O summaryFile="$work/s.json" \
  -O latencyFile="$work/lat.csv" >"$work/4.txt" 2>&1 || { fail "JSON run"; cat "$work/4.txt"; }
python3 "$(dirname "$0")/bench_json_check.py" "$work/4.txt" "$work/s.json" "$work/lat.csv" || fail "JSON check"
ls "$work"/sluice-limit.* >/dev/null 2>&1 && fail "fio's files left behind"
grep -q "new files every repetition" "$work/4.txt" || fail "FIO-LIMIT note"
grep -q "FIO-OVERWRITE" "$work/4.txt" || fail "no FIO-OVERWRITE row"

# 5. SLUICE-POSIX: the POSIX calls under the interposer (sluice-bench
# re-executes itself with it), shared file and file per process, each rank
# reading another's data, every byte checked; without the library it is
# skipped with the reason.
for f in "" -F; do
  run 4 -a SLUICE-POSIX -b 4m -t 512k -s 2 -e -C -W -R $f -o "$work/sp" >"$work/5.txt" 2>&1 ||
    { fail "SLUICE-POSIX $f"; cat "$work/5.txt"; }
  grep -q "SLUICE-POSIX: the POSIX calls under libsluice_preload.so" "$work/5.txt" ||
    { fail "SLUICE-POSIX $f: not run under the interposer"; cat "$work/5.txt"; }
  [ "$(ls -d "$work"/sp.sluiceposix/writer.* 2>/dev/null | wc -l)" = 0 ] ||
    fail "SLUICE-POSIX $f: stores left behind"
done
SLUICE_PRELOAD_LIB=/nonexistent/libsluice_preload.so \
  run 2 -a SLUICE-POSIX -b 1m -t 1m -o "$work/sp2" >"$work/5b.txt" 2>&1
grep -q "libsluice_preload.so is not loaded" "$work/5b.txt" || { fail "SLUICE-POSIX without the library"; cat "$work/5b.txt"; }

if [ $fails -ne 0 ]; then
  echo "bench_cli_test: $fails failure(s)"
  exit 1
fi
echo "bench_cli_test: all passed"
