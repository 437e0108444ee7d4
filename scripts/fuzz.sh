#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
# CPU-only, in build-fuzz) and runs each for SECONDS (default 20) on a copy of its seed corpus,
# as many at once as there are cores; prints one summary line per target. CI runs it with the
# default; the long runs of docs/evaluation.md ran `scripts/fuzz.sh 600` (then at -O2).
#   scripts/fuzz.sh [SECONDS]            # CI: scripts/fuzz.sh; a long run: FUZZ_OPT=-O1 scripts/fuzz.sh 600
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
tmp=$(mktemp -d /tmp/shapescope-fuzz-tests-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Through ccache where it is installed: the input side's sources are compiled for two of its libraries.
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# FUZZ_OPT: the optimization level, -O0 by default (CI's 20 s runs: a fifth less compile time than -O1,
# in CI's 30 minutes); the long runs take FUZZ_OPT=-O1, as AddressSanitizer's documentation advises
# (more inputs a second).
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${FUZZ_OPT:--O0} -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++ -DSHAPESCOPE_GPU=OFF -DSHAPESCOPE_TESTS=OFF -DSHAPESCOPE_FUZZ=ON "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz
status=0
# -V: every target's summary line (and, on a finding, its input and stack) goes to the log. The
# timeout leaves room for one slow last input (run_target.sh's -timeout, 60 s) and a busy machine.
TMPDIR=$tmp SHAPESCOPE_FUZZ_SECONDS=$seconds ctest --test-dir build-fuzz -L fuzz -j "$(nproc)" -V \
  --timeout $((seconds * 2 + 300)) >"$tmp/ctest.log" 2>&1 || status=$?
grep -h "fuzz summary:" "$tmp/ctest.log" | sed 's/^.*fuzz summary: /  /' | sort || true
[ "$status" -eq 0 ] || grep -h "finding\|ERROR\|SUMMARY\|tests failed\|(Failed)" "$tmp/ctest.log" | head -n 60 >&2
left=$(find "$tmp" -mindepth 1 -maxdepth 1 ! -name ctest.log | head -n 5)
[ -z "$left" ] || { echo "fuzz.sh: the fuzz runs left files behind: $left" >&2; exit 1; }
exit "$status"
