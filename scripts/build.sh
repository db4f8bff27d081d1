#!/usr/bin/env bash
# Configures and builds Sluice in ./build (or $SLUICE_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SLUICE_BUILD_DIR:-build}
# The python3 on PATH is the one pip installed the ADIOS2 wheel into.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${SLUICE_BUILD_TYPE:-RelWithDebInfo} \
  -DPython3_EXECUTABLE="$(command -v python3)" "$@"
cmake --build "$build" --parallel "$(nproc)"
