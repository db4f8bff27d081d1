#!/usr/bin/env bash
# Builds Sluice with AddressSanitizer + UndefinedBehaviorSanitizer and with
# ThreadSanitizer, each in a build directory of its own (build-address,
# build-thread), and runs under each the tests that drive the store, the
# value log, the file layer and their threads. Any report fails the run.
#   scripts/sanitize.sh [address|thread]...     (default: both)
# The backends' libraries (RocksDB, LevelDB) are Debian's, not
# instrumented; the interposer is not built (a preloaded library cannot
# carry a sanitizer runtime into programs that lack one).
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
if [ ${#kinds[@]} -eq 0 ]; then kinds=(address thread); fi
targets=(sluice sluice_rocksdb sluice_leveldb sluice_tests fs_tests
         hammer_test crash_kv kv_helper fs_helper c_api_test c_files_test
         c_mounts_test fault_env_test)
base=${SLUICE_BUILD_DIR:-build}
for kind in "${kinds[@]}"; do
  build=$base-$kind
  echo "sanitize: $kind in $build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_SANITIZE="$kind" -DSLUICE_BUILD_BENCH=OFF -DSLUICE_WITH_MPI=OFF \
    -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
  cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"
  case $kind in
    address)
      # Everything of the store and the file layer, the configuration,
      # datasets, the C API, the crash driver (its writers are killed: only
      # the checker's reports count).
      # (Not WriteBuffersAreOnHugePages: ASan's allocator maps its own.)
      regex='^(Backends|Layouts|Configs|Config[A-Z]|Dataset|Tiers|TierContainer|Seeds|StoreOpen|VlogRead|KV|Kv|Fs|Stream|OpenError|FaultEnvTest|c_api|c_files|c_mounts|crash\.kv\.(rocksdb|leveldb)(\.power|\.fault)?$)'
      exclude='WriteBuffersAreOnHugePages'
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      ;;
    thread)
      # What runs threads against one store or file system (datasets: the
      # requests' worker).
      # (Not layout lsm on RocksDB: its values are read straight out of
      # the memtable's arena, which RocksDB orders with atomics TSan does
      # not see, and the copy's stack loses RocksDB's frames.)
      exclude='rocksdb_layout_lsm|rocksdb_lsm|rocksdb_blob'
      regex='^(Dataset|Tiers|Configs/HammerTest|Configs/StoreOverFaultEnv|VlogRead|Configs/CrashAfter|Layouts/ValueLogTest\.(IteratorsOnManyThreads|StoresOpenTogether)|.*KVTest\.(ConcurrentAppends|FourThreads)|c_mounts$|crash\.kv\.rocksdb$)'
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
      ;;
  esac
  (cd "$build" && SLUICE_CRASH_TRIALS=${SLUICE_CRASH_TRIALS:-6} \
     ctest --output-on-failure --parallel "$(nproc)" --timeout 900 \
       -R "$regex" -E "$exclude")
done
