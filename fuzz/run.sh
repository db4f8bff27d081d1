#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (plus ASan and UBSan) and
# runs each for a while over its seed corpus. A crash or a sanitizer report
# fails the run; the input that caused it is left in fuzz/out/.
#   fuzz/run.sh [SECONDS] [TARGET...]   (default 10 s each; every target)
# Targets: store_header (store header, barrier record), fs_records (the
# file layer's records and keys), options (option strings), value_log (the
# value log's file header and value pointers), drain_index (the index and
# the journal of drained ids, src/tier/container.h), adios2_index (the
# ADIOS2 engine's step index, src/adios2/step_index.h). The seed
# corpus is fuzz/corpus/TARGET/; what a run finds goes to fuzz/out/TARGET/
# (not committed: add an input that found a bug to the corpus with its fix).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(store_header fs_records options value_log drain_index adios2_index); fi
CXX=${FUZZ_CXX:-clang++}
if ! command -v "$CXX" >/dev/null; then
  echo "fuzz: $CXX not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi
out=${FUZZ_OUT:-fuzz/out}
bin=$out/bin
mkdir -p "$bin"
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -Iinclude -Isrc -DSLUICE_BUILD_VERSION=\"fuzz\")
common=(src/util/status.cc)
declare -A sources=(
  [store_header]="src/store/header.cc src/store/barrier_record.cc src/util/env.cc src/util/posix.cc"
  [fs_records]="src/fs/format.cc"
  [options]="src/util/options.cc"
  [value_log]="src/store/value_log_format.cc"
  [drain_index]="src/tier/container.cc src/dataset/record.cc"
  [adios2_index]="src/adios2/step_index.cc"
)
for t in "${targets[@]}"; do
  if [ -z "${sources[$t]+x}" ]; then
    echo "fuzz: no target $t" >&2
    exit 2
  fi
  # shellcheck disable=SC2086
  "$CXX" "${flags[@]}" -o "$bin/$t" "fuzz/${t}_fuzz.cc" ${sources[$t]} \
    "${common[@]}" -lxxhash
  mkdir -p "$out/$t"
  rm -f "$out/$t"-*
  echo "fuzz: $t for ${seconds}s"
  "$bin/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$out/$t-" -timeout=10 -rss_limit_mb=2048 \
    "$out/$t" "fuzz/corpus/$t" 2>&1 | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|Done|BINGO|crash' || true
  found=$(find "$out" -maxdepth 1 -type f -name "$t-*" | head -1)
  if [ -n "$found" ]; then
    echo "fuzz: $t found a failing input: $found" >&2
    exit 1
  fi
done
echo "fuzz: no crash"
