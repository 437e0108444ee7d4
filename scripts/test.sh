#!/usr/bin/env bash
# Builds (scripts/build.sh) and runs every test. CPU tests always run; tests labelled `gpu` skip
# with a reason where there is no GPU. `scripts/test.sh -L gpu` runs only the GPU tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
