#!/usr/bin/env bash
# sluice-bench's JSON summary read with IOR's key names only
# (tests/ior_json_reader.py), on a shared file at 2 ranks and a file per
# process at 1, POSIX and Sluice APIs side by side.
# Usage: bench_ior_json_test.sh WORKDIR MPIEXEC NPFLAG BENCH [PREFLAGS...]
set -u
work=$1 mpiexec=$2 npflag=$3 bench=$4
shift 4
source "$(dirname "$0")/bench_test_lib.sh" "$@"
reader="$(dirname "$0")/ior_json_reader.py"

# ranks apis block transfer segments reps fpp-flag
cases=("2 POSIX,SLUICE-KV 2m 256k 2 2 -" "1 SLUICE-STREAM,POSIX 4m 1m 1 3 -F")
for c in "${cases[@]}"; do
  read -r n apis b t s i f <<<"$c"
  flags=()
  [ "$f" = "-F" ] && flags=(-F)
  out="$work/run-$n"
  run "$n" -a "$apis" -b "$b" -t "$t" -s "$s" \
    -i "$i" -e -C "${flags[@]}" -o "$work/f$n" -O summaryFormat=JSON \
    -O summaryFile="$out.json" >"$out.txt" 2>&1 || { fail "run: $c"; cat "$out.txt"; continue; }
  bytes() { python3 -c "import sys; v=sys.argv[1]; print(int(v[:-1]) * {'k': 1024, 'm': 1 << 20}[v[-1]])" "$1"; }
  python3 "$reader" "$out.txt" "$out.json" "$n" "$(bytes "$t")" "$(bytes "$b")" "$s" "$i" \
    "$([ "$f" = "-F" ] && echo 1 || echo 0)" "$apis" || fail "IOR's keys: $c"
done

finish bench_ior_json_test
