#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test.
#   scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${SLUICE_BUILD_DIR:-build}
# Open MPI refuses root and oversubscription unless told (CI runs as root on
# two cores); the MPI tests set the same for themselves.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "$build" && ctest --output-on-failure --parallel "$(nproc)" --timeout 900)
# The store, the value log and the file layer again under ASan+UBSan, and
# their threaded tests under TSan (SLUICE_SKIP_SANITIZERS=1 skips them).
if [ "${SLUICE_SKIP_SANITIZERS:-0}" != 1 ]; then
  SLUICE_BUILD_DIR=$build scripts/sanitize.sh
fi
