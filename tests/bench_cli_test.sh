#!/usr/bin/env bash
# sluice-bench end to end under mpiexec: the IOR acceptance command, a
# flipped byte caught with its offset, bad flags exit 2, the JSON summary
# carries every field of the text summary, and two tiers (--fast-root,
# --slow-root): waited and durable per write, ADIOS2-BB's drained output,
# and a shared SLUICE-STREAM file written again over one a run kept.
# Usage: bench_cli_test.sh WORKDIR MPIEXEC NPFLAG BENCH [PREFLAGS...]
set -u
work=$1 mpiexec=$2 npflag=$3 bench=$4
shift 4
source "$(dirname "$0")/bench_test_lib.sh" "$@"

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
run 2 -a FIO-SYNC,FIO-OVERWRITE,POSIX,MPIIO,HDF5,ADIOS2,SLUICE-KV -b 2m -t 512k -s 2 -e -C -R -i 2 \
  -o "$work/json" -O summaryFormat=JSON -O summaryFile="$work/s.json" \
  -O latencyFile="$work/lat.csv" >"$work/4.txt" 2>&1 || { fail "JSON run"; cat "$work/4.txt"; }
python3 "$(dirname "$0")/bench_json_check.py" "$work/4.txt" "$work/s.json" "$work/lat.csv" || fail "JSON check"
ls "$work"/sluice-fio-sync.* >/dev/null 2>&1 && fail "fio's files left behind"
grep -q "new files every repetition" "$work/4.txt" || fail "FIO-SYNC note"
grep -q "FIO-OVERWRITE" "$work/4.txt" || fail "no FIO-OVERWRITE row"
# FIO-LIMIT, FIO-SYNC's old name, still runs it, with a one-line note.
run 1 -a FIO-LIMIT -b 1m -t 1m -o "$work/alias" >"$work/4b.txt" 2>&1 || { fail "FIO-LIMIT alias"; cat "$work/4b.txt"; }
grep -q "^note: -a FIO-LIMIT is deprecated, it is now FIO-SYNC" "$work/4b.txt" || { fail "no note for FIO-LIMIT"; cat "$work/4b.txt"; }
grep -q "^=== FIO-SYNC" "$work/4b.txt" || fail "FIO-LIMIT did not run FIO-SYNC"

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

# 6. Two tiers. POSIX writes straight to the slow root (waited == durable);
# ADIOS2-BB writes BP4 to the fast root, which drains it to the slow one
# (kept with -k): every byte read back from the slow root and checked.
fast=/dev/shm/sluice_bench_cli_$$  # lowercase: BP4 lowercases BurstBufferPath
slow="$work/slow"
trap 'rm -rf "$fast"' EXIT
mkdir -p "$fast" "$slow"
run 2 -a POSIX,ADIOS2-BB --fast-root "$fast" --slow-root "$slow" -b 1m -t 256k -i 2 \
  -e -C -W -R -k -o ckpt -O summaryFormat=JSON -O summaryFile="$work/t.json" \
  -O latencyFile="$work/tlat.csv" >"$work/6.txt" 2>&1 || { fail "tiers run"; cat "$work/6.txt"; }
if grep -q "skipped: ADIOS2-BB" "$work/6.txt"; then
  echo "note: ADIOS2-BB skipped (built without ADIOS2): its checks are not run"
else
  grep -q "^access .* waited_s .* durable_s " "$work/6.txt" || fail "tiers: no waited_s/durable_s columns"
  grep -q "^tiers     ADIOS2-BB: mean waited_s .* mean durable_s " "$work/6.txt" ||
    fail "tiers: no ADIOS2-BB waited/durable summary"
  python3 "$(dirname "$0")/bench_json_check.py" "$work/6.txt" "$work/t.json" "$work/tlat.csv" ||
    fail "tiers: JSON check"
  python3 - "$work/t.json" <<'PY' || fail "tiers: waited/durable figures"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
for t in doc["tests"]:
    for r in t["results"]:
        w, d = r["waitedTime"], r["durableTime"]
        if r["access"] == "read":
            if w is not None or d is not None:
                bad.append(f"{t['api']}: a read has waited/durable")
            continue
        if w is None or d is None or w <= 0:
            bad.append(f"{t['api']} iter {r['iter']}: waited {w}, durable {d}")
        elif t["api"] == "POSIX" and d != w:
            bad.append(f"POSIX writes to the slow root: durable {d} != waited {w}")
        elif t["api"] == "ADIOS2-BB" and d <= w:
            bad.append(f"ADIOS2-BB: durable {d} not after waited {w} (the fsync of "
                       "its drained files is not timed)")
for b in bad:
    print("tiers:", b)
sys.exit(1 if bad else 0)
PY
  for r in 00000000 00000001; do
    bp="$slow/ckpt.$r.bb.bp"
    for f in data.0 md.0 md.idx; do
      [ -s "$bp/$f" ] || fail "tiers: the slow root lacks $bp/$f"
    done
    [ "$(stat -c %s "$bp/data.0" 2>/dev/null || echo 0)" -ge 1048576 ] || fail "tiers: $bp/data.0 holds less than 1 MiB"
  done
  # BP4 wrote under <fast root>/<slow root path>/ (the drain removed the
  # files and the .bp directories, not their parents), and left no file.
  [ -d "$fast$(realpath "$slow")" ] || fail "tiers: ADIOS2-BB did not write to the fast root"
  [ -z "$(find "$fast" -type f)" ] || { fail "tiers: files left on the fast root"; find "$fast"; }
  [ -s "$slow/ckpt" ] || fail "tiers: POSIX did not write to the slow root"
fi
# Bad tier flags: exit 2 and a clear message.
for args in "--fast-root $fast|--fast-root without --slow-root" \
            "--slow-root $slow|--slow-root without --fast-root" \
            "--fast-root $fast --slow-root $slow|add -e" \
            "-e --fast-root $fast --slow-root $fast|same directory" \
            "-e --fast-root $fast --slow-root $work/none|No such file" \
            "-e --fast-root $fast --slow-root $slow -o $work/x|a file name under the slow root" \
            "-e -a ADIOS2-BB|ADIOS2-BB needs --fast-root and --slow-root"; do
  flags=${args%%|*} want=${args#*|}
  run 1 $flags >"$work/6b.txt" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "'$flags': exit $rc, want 2"
  grep -q -- "$want" "$work/6b.txt" || { fail "'$flags': no '$want' in output"; cat "$work/6b.txt"; }
done
# SLUICE-DATASET with tiers: each id lands on the fast root and is drained
# to the slow one; durable_s is when DrainWait says it is there, after the
# waited time, and the slow root holds the drained ids.
rm -rf "$fast"/* "$slow"/*
run 2 -a SLUICE-DATASET --fast-root "$fast" --slow-root "$slow" -e -k -b 1m -t 256k -w \
  -i 2 -o ds -O summaryFormat=JSON -O summaryFile="$work/6c.json" >"$work/6c.txt" 2>&1 || { fail "SLUICE-DATASET with tiers"; cat "$work/6c.txt"; }
python3 - "$work/6c.json" <<'PY' || fail "SLUICE-DATASET with tiers: waited/durable"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for t in d["tests"]:
    for r in t["results"]:
        if r["access"] != "write":
            continue
        w, u = r["waitedTime"], r["durableTime"]
        if w is None or u is None or not 0 < w <= u:
            bad.append(f"iter {r['iter']}: waited {w}, durable {u}")
for b in bad:
    print("SLUICE-DATASET tiers:", b)
sys.exit(1 if bad else 0)
PY
ls "$slow"/ds.sluiceds/bench/commit/ 2>/dev/null | grep -q '^ckpt\.[0-9]*\.index$' ||
  { fail "SLUICE-DATASET with tiers: no drained id on the slow root"; ls -R "$slow"; }

# 7. SLUICE-STREAM writes a shared file again: one left by 4 ranks (-k) is
# written over by 2 ranks, 3 repetitions, at random offsets, and read back
# checked. Rank 0 creates (cuts) it before the others mount their stores;
# every rank opening it with truncation fails on writer stores in use.
run 4 -a SLUICE-STREAM -b 2m -t 256k -e -w -k -o "$work/again" >"$work/7a.txt" 2>&1 ||
  { fail "SLUICE-STREAM first write"; cat "$work/7a.txt"; }
run 2 -a SLUICE-STREAM -b 4m -t 64k -z -i 3 -e -w -r -C -R -o "$work/again" >"$work/7b.txt" 2>&1 ||
  { fail "SLUICE-STREAM written again"; cat "$work/7b.txt"; }
[ -e "$work/again.sluicefs" ] && fail "SLUICE-STREAM: file system left behind"

finish bench_cli_test
