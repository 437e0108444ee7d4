#!/usr/bin/env bash
# On the GPU host: the kernel ladder at 4096^3 against cuBLAS, and the wave
# saw-tooth with how much of it persistent and stream-K recover. Run from the repository root with
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# built (the binaries travel; the host needs none of the build tools).
#   bench/kernels/ladder.sh tests   all GPU tests, then compute-sanitizer memcheck on the kernels
#                                 matching $MEMCHECK (a gtest filter; default: every kernel)
#   bench/kernels/ladder.sh bench   the 4096^3 table and the saw-tooth sweep
# Writes under $OUT: ladder_<mode>.txt (what is printed), ladder.db, ladder_nn.csv, ladder_nt.csv,
# waves.csv (n = M = N = K), waves_k8192.csv (M = N = n, K = 8192), gpu_tests.txt, memcheck.txt.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/ladder.db"
MODE=${1:-bench}

tests() {
  echo "\$ shapescope_gpu_tests"
  timeout 400 build/shapescope_gpu_tests > "$OUT/gpu_tests.txt" 2>&1
  echo "(exit $?)"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure|first:" "$OUT/gpu_tests.txt" | cut -c1-300 | head -30
  local filter="Registry/CustomKernelTest.MatchesCublas*${MEMCHECK:-}"
  echo "\$ compute-sanitizer --tool memcheck shapescope_gpu_tests --gtest_filter='$filter'"
  timeout 500 compute-sanitizer --tool memcheck build/shapescope_gpu_tests --gtest_filter="$filter" \
    > "$OUT/memcheck.txt" 2>&1
  echo "(exit $?)"
  grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$OUT/memcheck.txt" | head -10
}

bench() {
  for layout in nn nt; do
    echo "\$ shapescope sweep --n 4096 --layout $layout --backend cublas,custom --samples 20"
    timeout 240 $S sweep --n 4096 --layout $layout --backend cublas,custom --samples 20 --db "$DB" \
      --format csv --out "$OUT/ladder_$layout.csv" 2>&1 | grep -E "^GPU|measured|skipped|error"
  done
  python3 "$(dirname "$0")/ladder_table.py" "$OUT/ladder_nn.csv" "$OUT/ladder_nt.csv"
  echo "\$ shapescope sweep --n 1024..4096:64 --backend cublas,custom:04_mma_pipelined:128x128,custom:05_wgmma_tma:128x256"
  timeout 420 $S sweep --n 1024..4096:64 \
    --backend cublas,custom:04_mma_pipelined:128x128,custom:05_wgmma_tma:128x256 --db "$DB" \
    --format csv --out "$OUT/waves.csv" 2>&1 | grep -E "measured|skipped|error"
  python3 bench/kernels/wave_recovery.py "$OUT/waves.csv"
  echo "\$ shapescope sweep --n 1024..4096:64 --k 8192 (M = N = n, K fixed) --backend cublas,custom:05_wgmma_tma:128x256"
  timeout 300 $S sweep --n 1024..4096:64 --k 8192 --backend cublas,custom:05_wgmma_tma:128x256 \
    --db "$DB" --format csv --out "$OUT/waves_k8192.csv" 2>&1 | grep -E "measured|skipped|error"
  python3 bench/kernels/wave_recovery.py "$OUT/waves_k8192.csv"
}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  case "$MODE" in
    tests) tests ;;
    bench) bench ;;
    *) echo "usage: bench/kernels/ladder.sh tests|bench" ;;
  esac
} > "$OUT/ladder_$MODE.txt" 2>&1
cat "$OUT/ladder_$MODE.txt"
