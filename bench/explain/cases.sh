#!/usr/bin/env bash
# On a GPU host: explain with its controls on one shape of each kind (odd, 8 mod
# 16, a tile switch at a wave boundary, an x[..., 1:] view, a sliced operand, heuristic regret, a
# memory-bound decode, a launch-bound tiny GEMM) and He's quiz (questions 1, 4, 5); an independent
# PyTorch timing of the same calls; the GPU tests. Run from the repository root with a build/ made
# with -DCMAKE_CUDA_ARCHITECTURES="80;90a":   bench/explain/cases.sh
# Everything lands in $OUT/explain-cases.tar (texts, JSON, the store) and a summary table is printed.
set -u -o pipefail
OUT=${OUT:-out}
W=$(mktemp -d)
S=build/shapescope
DB="$W/explain.db"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$W/gpu.txt" 2>&1
$S --version >> "$W/gpu.txt" 2>&1
cases=(
  "odd|1793"
  "8 mod 16 (band)|3080"
  "8 mod 16 (band)|2616"
  "tile switch at a wave boundary|2272"
  "x[..., 1:] view|4096 --lda 4097 --offset 1"
  "sliced B|4096x4095x4096 --ldb 4096"
  "regret (cublaslt)|3080 --backend cublaslt"
  "regret (cublaslt)|2616 --backend cublaslt"
  "regret (cublaslt)|3848 --backend cublaslt"
  "decode|4096x1x4096"
  "launch|61"
  "quiz1 M=2047 nn|2047x2048x2048"
  "quiz1 K=2047 nn|2048x2048x2047"
  "quiz1 N=2047 nn|2048x2047x2048"
  "quiz4 M=2047 tn|2047x2048x2048 --layout tn"
  "quiz4 K=2047 tn|2048x2048x2047 --layout tn"
  "quiz4 N=2047 tn|2048x2047x2048 --layout tn"
  "quiz5 B[:, :2047]|2048x2047x2048 --ldb 2048"
  "quiz5 contiguous|2048x2047x2048"
  "large|8191"
)
: > "$W/summary.txt"
i=0
for c in "${cases[@]}"; do
  i=$((i + 1)); kind=${c%%|*}; args=${c#*|}
  start=$(date +%s%N)
  $S explain $args --db "$DB" > "$W/ex_$i.txt" 2> "$W/ex_$i.err"
  rc=$?
  wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  $S explain $args --db "$DB" --json > "$W/ex_$i.json" 2>> "$W/ex_$i.err"
  printf '%-18s %-38s rc=%d %6d ms  %s\n' "$kind" "$args" "$rc" "$wall_ms" "$(head -1 "$W/ex_$i.txt")" >> "$W/summary.txt"
done
python3 bench/explain/torch_crosscheck.py "$W"/ex_*.json > "$W/crosscheck.txt" 2>&1
build/shapescope_gpu_tests > "$W/gpu_tests.txt" 2>&1
tar -C "$W" -cf "$OUT/explain-cases.tar" .
cat "$W/gpu.txt"
tail -4 "$W/crosscheck.txt"
grep -E "^\[  (PASSED|FAILED) |tests ran" "$W/gpu_tests.txt" | tail -3
cat "$W/summary.txt"
