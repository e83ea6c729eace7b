#!/usr/bin/env bash
# Installs grain's build and test dependencies from Debian 12 packages (run as root).
# Only packages that are missing are installed; a machine that has them all is left alone.
#   tools/install-deps.sh            what the release build, the examples and the tests need
#   tools/install-deps.sh sanitize   also clang and its sanitizer runtimes (the debug-asan preset)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git
  libeigen3-dev
  libboost-program-options-dev libboost-filesystem-dev libboost-serialization-dev
  libopenmpi-dev openmpi-bin
  libtrilinos-zoltan-dev libptscotch-dev libnanoflann-dev
  libpugixml-dev
  libhdf5-dev hdf5-tools
  libassimp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpng-dev
  libxml2-utils clang-format
  strace
  python3 python3-numpy python3-matplotlib python3-h5py
)
case "${1:-}" in
  "") ;;
  sanitize) packages+=(clang libclang-rt-dev) ;;
  *) echo "usage: tools/install-deps.sh [sanitize]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or install them with apt-get) and try again" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
