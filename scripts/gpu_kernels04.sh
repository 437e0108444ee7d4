#!/usr/bin/env bash
# Kernel 04 on the GPU host: its GPU tests, memcheck, 4096^3 against cuBLAS, and data-parallel vs
# persistent over sizes whose tile count crosses multiples of the slots (the wave saw-tooth).
# Writes $OUT/kernels04.txt and $OUT/kernels04.db.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/kernels04.db"
{
  echo "\$ shapescope_gpu_tests --gtest_filter='*Custom*:*Verify*:*Registry*'"
  build/shapescope_gpu_tests --gtest_filter='*Custom*:*Verify*:*Registry*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure|got|want" | head -40
  echo "\$ compute-sanitizer --tool memcheck (04 only)"
  timeout 300 compute-sanitizer --tool memcheck build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*04_mma*' 2>&1 \
    | grep -E "ERROR SUMMARY|PASSED|FAILED" | head -5
  echo "\$ compute-sanitizer --tool racecheck (04 only)"
  timeout 300 compute-sanitizer --tool racecheck build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*04_mma*' > /tmp/rc04.txt 2>&1
  grep -E "at .*\+0x" /tmp/rc04.txt | sed -E 's/.*(Read|Write) access at ([^+]*)\+.*/\2/' | sort | uniq -c | sort -rn | head -5
  grep -E "RACECHECK SUMMARY|PASSED|FAILED" /tmp/rc04.txt | head -3
  $S info --calibrate --db "$DB" 2>&1 | grep -E "peak bf16"
  for layout in nn nt; do
    echo "\$ shapescope sweep --n 4096 --layout $layout --backend cublas,custom:04_mma_pipelined"
    $S sweep --n 4096 --layout $layout --backend cublas,custom:04_mma_pipelined --db "$DB" 2>&1
  done
  echo "\$ shapescope sweep --n 1024..4096:64 --backend cublas,custom:04_mma_pipelined:128x128 --format csv"
  $S sweep --n 1024..4096:64 --backend cublas,custom:04_mma_pipelined:128x128 --db "$DB" --format csv \
    --out "$OUT/waves04.csv" 2>&1 | tail -3
  python3 - "$OUT/waves04.csv" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.defaultdict(dict)
for r in rows:
    by[int(r["n"])][r["backend"] + ":" + r["algo"]] = r
print(f"{'n':>5} {'tiles':>6} {'dp TFLOP/s':>11} {'dp w.eff':>9} {'pers TFLOP/s':>13} {'cublas':>8}")
for n in sorted(by):
    d = by[n]
    dp = d.get("custom:04_mma_pipelined:128x128:dp"); pe = d.get("custom:04_mma_pipelined:128x128:persistent")
    cb = d.get("cublas:default")
    f = lambda r, k: (r or {}).get(k) or "-"
    print(f"{n:>5} {f(dp,'tiles'):>6} {float(f(dp,'tflops') if dp else 0):>11.1f} {f(dp,'wave_efficiency')[:5]:>9} "
          f"{float(f(pe,'tflops') if pe else 0):>13.1f} {float(f(cb,'tflops') if cb else 0):>8.1f}")
PY
} > "$OUT/kernels04.txt" 2>&1
cat "$OUT/kernels04.txt"
