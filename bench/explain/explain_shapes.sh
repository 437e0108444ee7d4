#!/usr/bin/env bash
# On the GPU host: `explain` on the shapes of He's article, measured into a fresh
# store; the launch model checked against Nsight Compute; the GPU tests; and data sets for plots.
# Run from the repository root with a build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
#   bench/explain/explain_shapes.sh [explain|gallery]
# Logs go to $OUT (or ./out): log.txt, explain.txt, explain_1793.json, ncu.txt, explain.db;
# gallery.db for the second stage.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/explain.db"

if [ "${1:-explain}" = gallery ]; then
  # Data sets for the gallery's plots: a square sweep with cuBLAS and cuBLASLt's top 4, an M x N
  # grid, and a decode-like N sweep.
  G="$OUT/gallery.db"
  {
    $S sweep --n 64..4096:64 --backend cublas,cublaslt --lt-algos 4 --db "$G" --format csv --out /dev/null
    $S sweep --m 256..8192:256 --n 256..8192:256 --k 4096 --db "$G" --format csv --out /dev/null
    $S sweep --m 4096 --k 4096 --n 1..256 --db "$G" --format csv --out /dev/null
  } >> "$OUT/log.txt" 2>&1
  tail -3 "$OUT/log.txt"
  exit 0
fi

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  $S info --calibrate --db "$DB" 2>&1
  build/shapescope_gpu_tests 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|OK \]|FAILED"
} > "$OUT/log.txt" 2>&1

for shape in 1793 4095 3200 4096x1x4096; do
  echo "\$ shapescope explain $shape"
  TIMEFORMAT="(explain $shape: %R s wall)"
  { time $S explain $shape --db "$DB" 2>/dev/null; } 2>&1
  echo
done > "$OUT/explain.txt"
{
  echo "\$ shapescope explain 4095 --backend cublaslt --lt-algos 4"
  $S explain 4095 --backend cublaslt --lt-algos 4 --db "$DB" 2>/dev/null
  echo
  echo "\$ shapescope explain 4096x1023x4096"
  $S explain 4096x1023x4096 --db "$DB" 2>/dev/null
} >> "$OUT/explain.txt"
$S explain 1793 --db "$DB" --json > "$OUT/explain_1793.json" 2>>"$OUT/log.txt"

# Nsight Compute sees the same launches: grid, CTAs per SM (occupancy limits), waves per SM.
# (ncu and shapescope's own CUPTI tracing cannot subscribe at once: the sweep under ncu stops with
# CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED after its timed launches, which ncu has profiled.)
NCU_K='regex:nvjet|cutlass|gemv|gemmSN|dot_kernel|splitK|xmma|gemm'
: > "$OUT/ncu.txt"
for spec in "1793|--n 1793" "4095|--n 4095" "3200|--n 3200" "4096x1x4096|--m 4096 --n 1 --k 4096" \
            "4096x1023x4096|--m 4096 --n 1023 --k 4096" "1023x4096x4096|--m 1023 --n 4096 --k 4096" \
            "4096x301x4096|--m 4096 --n 301 --k 4096" "4096|--n 4096" "61|--n 61"; do
  label=${spec%%|*}; args=${spec#*|}
  $S sweep $args --db "$DB" --format csv --out "$OUT/$label.csv" 2>/dev/null
  timeout 180 ncu --clock-control none --kernel-name-base demangled -k "$NCU_K" -c 2 \
    --section LaunchStats --section Occupancy --csv \
    $S sweep $args --samples 1 --warmup-ms 0 --force --db "/tmp/ncu_$label.db" \
    > "/tmp/ncu_$label.csv" 2>>"$OUT/log.txt"
  python3 bench/explain/ncu_launch_model.py --ncu "/tmp/ncu_$label.csv" --sweep "$OUT/$label.csv" --label "$label" \
    >> "$OUT/ncu.txt" 2>&1
  rm -f "$OUT/$label.csv"
done
cat "$OUT/ncu.txt"
grep -E "^[0-9x]+ (is|runs)|^\\$|^\(explain|^fix" "$OUT/explain.txt"
tail -5 "$OUT/log.txt"
