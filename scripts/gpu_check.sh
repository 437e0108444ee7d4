#!/usr/bin/env bash
# The tests on a GPU host before landing a change. Run from the repository root, with a build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# Usage: scripts/gpu_check.sh landing|smoke  (below); logs go to $OUT (or ./out).
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
stage=${1:-smoke}
case "$stage" in
  landing)
    # Before landing: every test (GPU tests and the CPU tests with a GPU present), the data-safety
    # battery with a GPU, and a smoke sweep/explain/pad. CTest files name the build's absolute paths:
    # run with the build carried as build/ and the checkout reachable at the path it was built in
    # (SRC, e.g. /work/main).
    if [ -n "${SRC:-}" ] && [ ! -e "$SRC" ]; then mkdir -p "$(dirname "$SRC")" && ln -s "$PWD" "$SRC"; fi
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$OUT/nvidia-smi.txt"
    (cd build && ctest -L gpu --output-on-failure --timeout 300) > "$OUT/ctest-gpu.txt" 2>&1
    echo "ctest -L gpu: exit $?; $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.txt")"
    (cd build && ctest -LE "gpu|slurm|browser" -j8 --output-on-failure --timeout 300) > "$OUT/ctest-cpu.txt" 2>&1
    echo "ctest cpu (GPU present): exit $?; $(grep -E 'tests passed|tests failed' "$OUT/ctest-cpu.txt")"
    grep -E "\*\*\*Failed|Skipped" "$OUT/ctest-gpu.txt" "$OUT/ctest-cpu.txt" | head -20
    bench/safety/data_safety_cases.sh $S > "$OUT/data_safety.md" 2>&1
    grep -E "^Violations|VIOLATION" "$OUT/data_safety.md" | cut -c1-300
    {
      $S info
      $S sweep --n 1791..1793,4095,4096 --backend cublas,cublaslt,custom:05_wgmma_tma --samples 10 --db "$OUT/landing.db"
      time $S explain 1793 --db "$OUT/landing.db"
      $S pad --model gpt2 --tokens 12288 --db "$OUT/landing.db" --samples 10
    } > "$OUT/smoke.txt" 2>&1
    tail -45 "$OUT/smoke.txt"
    ;;
  smoke)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/nvidia-smi.txt"
    $S info 2>&1 | tee "$OUT/info.txt"
    build/shapescope_gpu_tests 2>&1 | tee "$OUT/gpu_tests.txt" | tail -25
    $S sweep --n 1..64,1791..1793,4095,4096 --db "$OUT/smoke.db" --backend cublas,cublaslt --lt-algos 3 \
      2>&1 | tee "$OUT/smoke.txt" | tail -40
    ;;
esac
