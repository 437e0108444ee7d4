#!/usr/bin/env bash
# Builds (scripts/build.sh) and runs every test. CPU tests always run; tests labelled `gpu` skip
# with a reason where there is no GPU. `scripts/test.sh -L gpu` runs only the GPU tests.
# Then the CPU-only build (-DSHAPESCOPE_GPU=OFF), configured and built with the CUDA toolkit out
# of sight (PATH without it, no CUDA variables), and its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin scripts/build.sh --cpu-only
env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin ctest --test-dir build-cpu --output-on-failure -j "$(nproc)" "$@"
