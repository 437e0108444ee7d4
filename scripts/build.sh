#!/usr/bin/env bash
# Installs what the build needs (Debian/Ubuntu packages; the CUDA toolkit must already be there,
# nvcc on PATH or in /usr/local/cuda/bin) and builds shapescope into build/.
#   scripts/build.sh            # sm_80 + sm_90a, what we ship
#   CUDA_ARCHS=90a scripts/build.sh
#   scripts/build.sh --cpu-only  # no CUDA toolkit needed: the views (explain/plot/pad/export from
#                                # stores, --dry-run, predictions) into build-cpu/; cannot measure
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake g++ make libcli11-dev libfmt-dev libsqlite3-dev nlohmann-json3-dev googletest libgtest-dev gnuplot-nox
          dpkg-dev file  # dpkg-dev, file: cpack -G DEB (dpkg-shlibdeps)
          python3)       # the Python package's tests (tests/python)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# With ccache on PATH (CI installs it), C++ is compiled through it: the CPU-only build after the full one
# (scripts/test.sh) finds most of its sources compiled already (the same preprocessed source and flags).
# The locale only changes the compiler's messages: not part of the hash (test.sh's CPU-only build runs
# without LANG).
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
export CCACHE_SLOPPINESS=locale
if [ "${1:-}" = "--cpu-only" ]; then
  cmake -S . -B build-cpu -DCMAKE_BUILD_TYPE=Release -DSHAPESCOPE_GPU=OFF "${launcher[@]}" >/dev/null
  cmake --build build-cpu -j "$(nproc)"
  exit 0
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null 2>&1 || { echo "build.sh: nvcc not found: install the CUDA toolkit (12.8 or newer)" >&2; exit 1; }
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-80;90a}" "${launcher[@]}" >/dev/null
cmake --build build -j "$(nproc)"
