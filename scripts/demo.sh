#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a checkpoint
# benchmark on a local directory, POSIX and the Sluice K/V API side by side,
# at 1 and 2 MPI ranks (or 1 rank without MPI).
#   scripts/demo.sh [DIR]     (default /tmp/sluice-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
build=${SLUICE_BUILD_DIR:-build}
dir=${1:-/tmp/sluice-demo}
bench=$build/bench/sluice-ckpt-bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$bench" --dir "$dir" --size 512m --transfer 1m --reps 3
if command -v mpiexec >/dev/null; then
  mpiexec --oversubscribe -n 2 "$bench" --dir "$dir" --size 256m --transfer 1m --reps 3
fi
