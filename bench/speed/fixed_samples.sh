#!/usr/bin/env bash
# The fixed-sample engine's numbers (--samples 10): wall time against the GPU-time floor, repeatability,
# agreement with PyTorch, do_bench's cost, kill/resume, calibration and other dtypes/layouts/options.
# Run on the GPU host from the repository root, with a build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# Usage: bench/speed/fixed_samples.sh bench|checks|final  (below); logs go to $OUT (or ./out).
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
stage=${1:-final}
case "$stage" in
  bench)
    # The numbers: wall vs GPU-time floor, repeatability, agreement with PyTorch, do_bench cost,
    # kill/resume, kernel names.
    $S info 2>&1 | tee "$OUT/info.txt" | head -3
    for i in 1 2; do
      TIMEFORMAT="sweep $i: %R s wall (shell)"
      time $S sweep --n 1..4096 --samples 10 --db "$OUT/sweep$i.db" \
        --format csv --out "$OUT/sweep$i.csv" 2>&1 | tee "$OUT/sweep$i.log" | tail -2
    done
    python3 bench/agreement/torch_timing.py --n 256..4096 --samples 10 --out "$OUT/torch.csv" 2>&1 | tail -1
    python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 256 | tee "$OUT/compare.txt"
    python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/sweep2.csv" | tee -a "$OUT/compare.txt"
    python3 bench/safety/kill_resume.py $S --n 1..2048 --after 2.5 2>&1 | tail -3 | tee "$OUT/kill.txt"
    $S sweep --n 1791..1793,4095,4096 --db "$OUT/sweep1.db" 2>/dev/null | tee "$OUT/names.txt"
    python3 bench/speed/do_bench_cost.py --n 1..4096 --step 32 2>&1 | tail -1 | tee "$OUT/do_bench.txt"
    ;;
  checks)
    # GPU tests, kill/resume, calibration, other dtypes/layouts/options, PyTorch in graph mode.
    build/shapescope_gpu_tests 2>&1 | tee "$OUT/gpu_tests.txt" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran"
    python3 bench/safety/kill_resume.py $S --n 1..4096 --after 5 2>&1 | grep -v "^cold" | tee "$OUT/kill.txt"
    $S info --calibrate --db "$OUT/checks.db" 2>&1 | grep -E "peak|GPU 0" | tee "$OUT/calibrate.txt"
    {
      $S sweep --n 4096 --db "$OUT/checks.db" --backend cublaslt --lt-algos 8 2>&1
      $S sweep --m 8192 --n 4096 --k 4096 --db "$OUT/checks.db" --layout nt --dtype fp8 --backend cublaslt 2>&1
      $S sweep --n 4095,4096 --db "$OUT/checks.db" --dtype fp16 --layout tn --backend cublas,cublaslt 2>&1
      $S sweep --n 4096 --db "$OUT/checks.db" --dtype tf32 --offset 1 2>&1
      $S sweep --n 4096 --db "$OUT/checks.db" --ld-pad 8 --hot 2>&1
      $S sweep --m 1..4 --n 4096 --k 4096 --batch 8 --db "$OUT/checks.db" --dtype fp32 2>&1
      $S sweep --n 100000 --db "$OUT/checks.db" 2>&1; echo "exit $?"
    } | grep -vE "^(GPU 0|cold|hot)" | tee "$OUT/options.txt"
    python3 bench/agreement/torch_timing.py --n 256..4096 --samples 10 --graph --out "$OUT/torch_graph.csv" 2>&1 | tail -1
    python3 bench/agreement/torch_timing.py --n 256..4096 --samples 10 --out "$OUT/torch.csv" 2>&1 | tail -1
    $S sweep --n 1..4096 --db "$OUT/sweep.db" --format csv --out "$OUT/sweep.csv" 2>&1 | tail -1
    python3 bench/agreement/compare.py "$OUT/sweep.csv" "$OUT/torch.csv" --from 256 | tee "$OUT/compare.txt"
    python3 bench/agreement/compare.py "$OUT/sweep.csv" "$OUT/torch_graph.csv" --from 256 | tee -a "$OUT/compare.txt"
    python3 bench/agreement/compare.py "$OUT/torch_graph.csv" "$OUT/torch.csv" --from 256 | tee -a "$OUT/compare.txt"
    ;;
  final)
    # The numbers the README quotes, in at most 8 files under $OUT.
    {
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
      $S info --calibrate --db "$OUT/sweep1.db" 2>&1
      build/shapescope_gpu_tests 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|OK \]"
      $S sweep --n 200000 --db /tmp/oom.db; echo "exit $? (expect 4)"
    } > "$OUT/log.txt" 2>&1
    for i in 1 2; do
      TIMEFORMAT="sweep $i: %R s wall (shell)"
      { time $S sweep --n 1..4096 --samples 10 --db "$OUT/sweep$i.db" --format csv --out "$OUT/sweep$i.csv"; } 2>&1 \
        | grep -vE "^(GPU 0|cold)" | tee -a "$OUT/log.txt"
    done
    python3 bench/agreement/torch_timing.py --n 256..4096 --out "$OUT/torch.csv" 2>&1 | tail -1 | tee -a "$OUT/log.txt"
    python3 bench/agreement/torch_timing.py --n 256..4096 --shuffled --out "$OUT/torch_shuffled.csv" 2>&1 | tail -1 | tee -a "$OUT/log.txt"
    {
      python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/sweep2.csv"
      python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 256
      python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 1024
      python3 bench/agreement/compare.py "$OUT/sweep1.csv" "$OUT/torch_shuffled.csv" --from 256
      python3 bench/agreement/compare.py "$OUT/torch_shuffled.csv" "$OUT/torch.csv" --from 256
    } | tee "$OUT/compare.txt"
    grep -E "exit|peak|PASSED|FAILED" "$OUT/log.txt"
    ;;
esac
