#!/usr/bin/env bash
# Run on the GPU host from the repository root, with a build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# Usage: scripts/gpu_check.sh STAGE  (stages below); logs go to $OUT (or ./out).
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
stage=${1:-smoke}
case "$stage" in
  smoke)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/nvidia-smi.txt"
    $S info 2>&1 | tee "$OUT/info.txt"
    build/shapescope_gpu_tests 2>&1 | tee "$OUT/gpu_tests.txt" | tail -25
    $S sweep --n 1..64,1791..1793,4095,4096 --db "$OUT/smoke.db" --backend cublas,cublaslt --lt-algos 3 \
      2>&1 | tee "$OUT/smoke.txt" | tail -40
    ;;
  bench)
    # Issue 2's numbers: wall vs GPU-time floor, repeatability, agreement with PyTorch, do_bench cost,
    # kill/resume, kernel names.
    $S info 2>&1 | tee "$OUT/info.txt" | head -3
    for i in 1 2; do
      /usr/bin/time -f "sweep $i wall %e s" $S sweep --n 1..4096 --samples 10 --db "$OUT/sweep$i.db" \
        --format csv --out "$OUT/sweep$i.csv" 2>&1 | tee "$OUT/sweep$i.log" | tail -2
    done
    python3 scripts/torch_timing.py --n 256..4096 --samples 10 --out "$OUT/torch.csv" 2>&1 | tail -1
    python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 256 | tee "$OUT/compare.txt"
    python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/sweep2.csv" | tee -a "$OUT/compare.txt"
    python3 scripts/kill_resume_check.py $S --n 1..2048 --after 2.5 2>&1 | tail -3 | tee "$OUT/kill.txt"
    $S sweep --n 1791..1793,4095,4096 --db "$OUT/sweep1.db" 2>/dev/null | tee "$OUT/names.txt"
    python3 scripts/do_bench_subset.py --n 1..4096 --step 32 2>&1 | tail -1 | tee "$OUT/do_bench.txt"
    ;;
esac
