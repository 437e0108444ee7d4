#!/usr/bin/env bash
# Builds (scripts/build.sh) and runs every test. CPU tests always run; tests labelled `gpu` skip
# with a reason where there is no GPU. `scripts/test.sh -L gpu` runs only the GPU tests.
# Then the CPU-only build (-DSHAPESCOPE_GPU=OFF), configured and built with the CUDA toolkit out
# of sight (PATH without it, no CUDA variables), and its tests.
# The tests' temporary files go to a folder of their own, which must be empty afterwards (tests clean
# up what they create), and the committed data under tests/data must be byte for byte as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/shapescope-tests-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
check_clean() {
  local left
  left=$(cd "$tmp" && find . -mindepth 1 -maxdepth 2 | head -n 20)
  if [ -n "$left" ]; then
    echo "test.sh: the tests left files in their temporary folder:" >&2
    echo "$left" >&2
    exit 1
  fi
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    left=$(git status --porcelain --untracked-files=all -- tests/data)
    if [ -n "$left" ]; then
      echo "test.sh: the tests changed or added files under tests/data:" >&2
      echo "$left" >&2
      exit 1
    fi
  fi
}
scripts/build.sh
TMPDIR=$tmp TEST_TMPDIR=$tmp/ ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
check_clean
env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin scripts/build.sh --cpu-only
env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin TMPDIR="$tmp" TEST_TMPDIR="$tmp/" \
  ctest --test-dir build-cpu --output-on-failure -j "$(nproc)" "$@"
check_clean
