#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the short
# benchmark matrix on a local directory: every API (POSIX shared and file
# per process, MPI-IO, HDF5, ADIOS2, Sluice K/V and streams) at 1 and 4
# ranks, 1 GiB a run in 1 MiB transfers, fsync'ed writes, reads verified
# after the page cache is dropped, next to the device's physical limit
# measured by fio (libaio, a queue of 32) in the same run. Prints a table
# (API x ranks, write and read MiB/s, fractions of the limit) and a
# paragraph reading it. About 3 minutes once built.
#   scripts/demo.sh [SCRATCH_DIR]     (default /tmp/sluice-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
exec bench/matrix --quick --dir "${1:-/tmp/sluice-demo}" --out "results/demo-$(date +%Y%m%d-%H%M%S)"
