#!/usr/bin/env bash
# Installs what Sluice needs on a fresh Debian 12 machine. Idempotent: packages
# already present are left alone, so a second run is quick.
#
#   scripts/install-deps.sh          # build + test dependencies
#
# Needs root (or sudo) for apt-get. Honours SLUICE_SKIP_APT=1 to skip apt.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  librocksdb-dev libleveldb-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libxxhash-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${SLUICE_SKIP_APT:-0}" != 1 ] && [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
