#!/usr/bin/env bash
# Installs grain's build and test dependencies from Debian 12 packages (run as root).
# Only packages that are missing are installed; a machine that has them all is left alone.
#   tools/install-deps.sh            what the release build, the examples and the tests need
#   tools/install-deps.sh sanitize   also clang and its sanitizer runtimes (the debug-asan preset)
#   tools/install-deps.sh smpi       also SimGrid's SMPI (libsimgrid-dev) and Zoltan built from
#                                    Debian's trilinos source package against SMPI, installed in
#                                    GRAIN_SMPI_PREFIX (default /opt/grain-smpi) if it is missing
#                                    (the smpi preset; bench/smpi_scaling.sh), and valgrind
#                                    (bench/work_per_process.sh)
#   tools/install-deps.sh peers      also Bullet (libbullet-dev) and LAMMPS (lammps), the peer
#                                    codes of bench/peer_ratio.sh, and pkg-config, through which
#                                    CMake finds Bullet (bench/grain-bullet_pile)
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
  smpi) packages+=(libsimgrid-dev dpkg-dev xz-utils valgrind) ;;
  peers) packages+=(libbullet-dev lammps pkg-config) ;;
  *) echo "usage: tools/install-deps.sh [sanitize|smpi|peers]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
else
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run as root (or install them with apt-get) and try again" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = smpi ] || exit 0

# Zoltan for SMPI. Debian's libtrilinos-zoltan is built against OpenMPI's headers and library,
# which cannot be mixed with SMPI's, so Zoltan is built from Debian's own trilinos source
# package with smpicc: only packages/zoltan is extracted, and its stand-alone autotools build is
# used (RCB needs neither PT-Scotch nor ParMETIS). configure must run its test programs, which an
# SMPI binary cannot do outside smpirun: SMPI_PRETEND_CC=1 makes smpicc a plain C compiler then.
prefix="${GRAIN_SMPI_PREFIX:-/opt/grain-smpi}"
if [ -f "$prefix/lib/libzoltan.a" ] && [ -f "$prefix/include/zoltan.h" ]; then
  echo "install-deps: Zoltan for SMPI is in $prefix"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && ! { mkdir -p "$prefix" && [ -w "$prefix" ]; }; then
  echo "install-deps: cannot write $prefix: run as root or set GRAIN_SMPI_PREFIX" >&2
  exit 1
fi
work="$(mktemp -d /tmp/grain-zoltan-smpi.XXXXXX)"
# apt downloads as the _apt user, into the current folder (else it warns and downloads as root)
chmod 755 "$work"
chown _apt "$work" 2>/dev/null || true
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get source -d --print-uris trilinos >/dev/null 2>&1; then
  # The source package needs a deb-src entry for the same archive as the binary packages.
  echo "install-deps: adding deb-src for Debian bookworm (/etc/apt/sources.list.d/grain-deb-src.sources)"
  cat > /etc/apt/sources.list.d/grain-deb-src.sources <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  apt-get update -qq
fi
echo "install-deps: downloading Debian's trilinos source package (about 170 MB)"
apt-get source -d -qq trilinos
tarball="$(ls trilinos_*.orig.tar.* | head -1)"
echo "install-deps: building Zoltan from $tarball with smpicc into $prefix"
tar -xf "$tarball" --wildcards '*/packages/zoltan/*'
src="$(dirname "$(ls -d ./*/packages/zoltan/configure)")"
mkdir -p "$src/build-smpi"
cd "$src/build-smpi"
export SMPI_PRETEND_CC=1
../configure CC=smpicc CXX=smpicxx --prefix="$prefix" --disable-fortran --enable-mpi \
  --with-mpi-compilers=no --disable-examples --disable-tests > configure.log 2>&1 ||
  { tail -30 configure.log >&2; exit 1; }
make -j"$(nproc)" everything > make.log 2>&1 || { tail -30 make.log >&2; exit 1; }
make install > install.log 2>&1 || { tail -30 install.log >&2; exit 1; }
echo "install-deps: Zoltan for SMPI installed in $prefix"
