#!/usr/bin/env bash
# Installs what Sluice needs on a fresh Debian 12 machine: the build, the
# backends, MPI, the benchmark's baselines (parallel HDF5, fio, the ADIOS2
# wheel), the plotting packages, and clang with its sanitizer and libFuzzer
# runtimes (fuzz/). Idempotent: what is present is left
# alone, so a second run takes a second.
#
#   scripts/install-deps.sh
#
# Needs root (or sudo) for apt-get. SLUICE_SKIP_APT=1 skips apt,
# SLUICE_SKIP_PIP=1 skips pip.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  librocksdb-dev libleveldb-dev libxxhash-dev
  libopenmpi-dev openmpi-bin gfortran
  libgtest-dev
  libhdf5-openmpi-dev fio
  fuse3 libfuse3-dev strace bsdextrautils
  iproute2 e2fsprogs procps util-linux mount
  clang libclang-rt-14-dev
  python3 python3-pip
)
PIP_PACKAGES=(adios2 matplotlib numpy h5py)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${SLUICE_SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "install-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages present"
fi

if [ "${SLUICE_SKIP_PIP:-0}" != 1 ]; then
  if python3 -c "import adios2, matplotlib, numpy, h5py" 2>/dev/null; then
    echo "install-deps: Python packages present"
  else
    echo "install-deps: pip install ${PIP_PACKAGES[*]}"
    # A Debian-managed Python refuses plain pip installs (PEP 668).
    python3 -m pip install --quiet "${PIP_PACKAGES[@]}" 2>/dev/null ||
      python3 -m pip install --quiet --break-system-packages "${PIP_PACKAGES[@]}"
  fi
fi
