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
    scripts/data_safety_cases.sh $S > "$OUT/data_safety.md" 2>&1
    grep -E "^Violations|VIOLATION" "$OUT/data_safety.md" | cut -c1-300
    {
      $S info
      $S sweep --n 1791..1793,4095,4096 --backend cublas,cublaslt,custom:05 --samples 10 --db "$OUT/landing.db"
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
  bench)
    # Issue 2's numbers: wall vs GPU-time floor, repeatability, agreement with PyTorch, do_bench cost,
    # kill/resume, kernel names.
    $S info 2>&1 | tee "$OUT/info.txt" | head -3
    for i in 1 2; do
      TIMEFORMAT="sweep $i: %R s wall (shell)"
      time $S sweep --n 1..4096 --samples 10 --db "$OUT/sweep$i.db" \
        --format csv --out "$OUT/sweep$i.csv" 2>&1 | tee "$OUT/sweep$i.log" | tail -2
    done
    python3 scripts/torch_timing.py --n 256..4096 --samples 10 --out "$OUT/torch.csv" 2>&1 | tail -1
    python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 256 | tee "$OUT/compare.txt"
    python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/sweep2.csv" | tee -a "$OUT/compare.txt"
    python3 scripts/kill_resume_check.py $S --n 1..2048 --after 2.5 2>&1 | tail -3 | tee "$OUT/kill.txt"
    $S sweep --n 1791..1793,4095,4096 --db "$OUT/sweep1.db" 2>/dev/null | tee "$OUT/names.txt"
    python3 scripts/do_bench_subset.py --n 1..4096 --step 32 2>&1 | tail -1 | tee "$OUT/do_bench.txt"
    ;;
  checks)
    # GPU tests, kill/resume, calibration, other dtypes/layouts/options, PyTorch in graph mode.
    build/shapescope_gpu_tests 2>&1 | tee "$OUT/gpu_tests.txt" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran"
    python3 scripts/kill_resume_check.py $S --n 1..4096 --after 5 2>&1 | grep -v "^cold" | tee "$OUT/kill.txt"
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
    python3 scripts/torch_timing.py --n 256..4096 --samples 10 --graph --out "$OUT/torch_graph.csv" 2>&1 | tail -1
    python3 scripts/torch_timing.py --n 256..4096 --samples 10 --out "$OUT/torch.csv" 2>&1 | tail -1
    $S sweep --n 1..4096 --db "$OUT/sweep.db" --format csv --out "$OUT/sweep.csv" 2>&1 | tail -1
    python3 scripts/compare.py "$OUT/sweep.csv" "$OUT/torch.csv" --from 256 | tee "$OUT/compare.txt"
    python3 scripts/compare.py "$OUT/sweep.csv" "$OUT/torch_graph.csv" --from 256 | tee -a "$OUT/compare.txt"
    python3 scripts/compare.py "$OUT/torch_graph.csv" "$OUT/torch.csv" --from 256 | tee -a "$OUT/compare.txt"
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
    python3 scripts/torch_timing.py --n 256..4096 --out "$OUT/torch.csv" 2>&1 | tail -1 | tee -a "$OUT/log.txt"
    python3 scripts/torch_timing.py --n 256..4096 --shuffled --out "$OUT/torch_shuffled.csv" 2>&1 | tail -1 | tee -a "$OUT/log.txt"
    {
      python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/sweep2.csv"
      python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 256
      python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/torch.csv" --from 1024
      python3 scripts/compare.py "$OUT/sweep1.csv" "$OUT/torch_shuffled.csv" --from 256
      python3 scripts/compare.py "$OUT/torch_shuffled.csv" "$OUT/torch.csv" --from 256
    } | tee "$OUT/compare.txt"
    grep -E "exit|peak|PASSED|FAILED" "$OUT/log.txt"
    ;;
esac
