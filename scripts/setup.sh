#!/usr/bin/env bash
# Installs kspmv's dependencies from Debian's packages and builds it (host,
# Kokkos 3.4 Serial from Debian's Trilinos packages) into ./build.
#
#   scripts/setup.sh            install packages (if missing) and build
#   BUILD_DIR=dir scripts/setup.sh   build elsewhere
#   CMAKE_ARGS="..." scripts/setup.sh  extra configure arguments
#
# For a GPU build against a CUDA Kokkos 4, see README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# petsc-dev (PETSc 3.18, real scalars) with Open MPI: the PETSc adapter
# kspmv::petsc, its tests under mpiexec and examples/petsc_ksp
# (KSPMV_ENABLE_PETSC=AUTO builds them when these are present).
packages=(cmake ninja-build g++ pkg-config zlib1g-dev libgtest-dev libbenchmark-dev libmetis-dev
          libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libcli11-dev
          nlohmann-json3-dev petsc-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKSPMV_BUILD_PERF_TESTS=ON ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
echo "setup: built into $BUILD_DIR; run the tests with: ctest --test-dir $BUILD_DIR"
