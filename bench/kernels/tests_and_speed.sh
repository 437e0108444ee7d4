#!/usr/bin/env bash
# On the GPU host: our kernels against cuBLAS (GPU tests), compute-sanitizer on
# them, and their speed next to cuBLAS's. Run from the repository root with build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# Writes $OUT/kernels.txt and $OUT/kernels.db.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/kernels.db"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "\$ shapescope_gpu_tests (all GPU tests)"
  build/shapescope_gpu_tests 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED|Failure" | head -40
  for tool in memcheck racecheck; do
    echo "\$ compute-sanitizer --tool $tool shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*'"
    timeout 400 compute-sanitizer --tool $tool build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*' 2>&1 \
      | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|PASSED|FAILED" | head -10
    echo "(exit ${PIPESTATUS[0]})"
  done
  $S info --calibrate --db "$DB" 2>&1 | grep -E "peak bf16"
  for layout in nn nt; do
    echo "\$ shapescope sweep --n 1,7,127,129,1000,1793,2048,4096 --layout $layout --backend cublas,custom"
    $S sweep --n 1,7,127,129,1000,1793,2048,4096 --layout $layout --backend cublas,custom --db "$DB" 2>&1
  done
} > "$OUT/kernels.txt" 2>&1
cat "$OUT/kernels.txt"
