#!/usr/bin/env bash
# Configures and builds Sluice in ./build (or $SLUICE_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SLUICE_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${SLUICE_BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build "$build" --parallel "$(nproc)"
