#!/usr/bin/env bash
# Kernel 05 on the GPU host: its GPU tests (each layout), then 4096^3 nn and nt against cuBLAS.
# Writes $OUT/k05.txt and $OUT/k05.db. Every step is time-limited: a lost mbarrier phase hangs.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/k05.db"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  echo "\$ shapescope_gpu_tests --gtest_filter='*05_wgmma*'"
  timeout 180 build/shapescope_gpu_tests --gtest_filter='*05_wgmma*' > "$OUT/k05_tests.txt" 2>&1
  echo "exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure|first:|registers/thread" "$OUT/k05_tests.txt" | cut -c1-300 | head -40
  echo "\$ compute-sanitizer --tool memcheck (05)"
  timeout 240 compute-sanitizer --tool memcheck build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.MatchesCublas*05_wgmma*' > "$OUT/k05_memcheck.txt" 2>&1
  echo "exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED|Invalid" "$OUT/k05_memcheck.txt" | head -8
  for layout in nn nt; do
    echo "\$ shapescope sweep --n 4096 --layout $layout --backend cublas,custom:05_wgmma_tma --samples 20"
    timeout 150 $S sweep --n 4096 --layout $layout --backend cublas,custom:05_wgmma_tma --samples 20 --db "$DB" 2>&1 | grep -vE "^\s*$" | cut -c1-200
  done
} > "$OUT/k05.txt" 2>&1
cat "$OUT/k05.txt"
