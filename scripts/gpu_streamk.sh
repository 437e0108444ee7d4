#!/usr/bin/env bash
# Stream-K on the GPU host: kernel 04's GPU tests (stream-K included) under memcheck, then
# data-parallel, persistent and stream-K over sizes whose tile count crosses multiples of the slots,
# and how much of the data-parallel wave loss stream-K recovers where the last wave is < 1/4 full.
# Writes $OUT/streamk.txt, $OUT/streamk.csv and $OUT/streamk.db.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/streamk.db"
{
  echo "\$ shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*04_mma*'"
  build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*04_mma*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |Failure|got|want" | head -20
  echo "\$ compute-sanitizer --tool memcheck (04 stream-K)"
  timeout 300 compute-sanitizer --tool memcheck build/shapescope_gpu_tests --gtest_filter='Registry/CustomKernelTest.*streamk*' 2>&1 \
    | grep -E "ERROR SUMMARY|PASSED|FAILED" | head -5
  $S sweep --n 1024..4096:64 --backend cublas,custom:04_mma_pipelined:128x128 --db "$DB" --format csv \
    --out "$OUT/streamk.csv" 2>&1 | grep -E "^skipped|measured" | head -20
  python3 - "$OUT/streamk.csv" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.defaultdict(dict)
for r in rows:
    by[int(r["n"])][r["algo"]] = r
print(f"{'n':>5} {'tiles':>6} {'last wave':>9} {'dp':>7} {'persist':>8} {'streamk':>8} {'cublas':>7}  recovered")
recs = []
for n in sorted(by):
    d = by[n]
    dp, pe, sk, cb = (d.get(k) for k in ("04_mma_pipelined:128x128:dp", "04_mma_pipelined:128x128:persistent",
                                          "04_mma_pipelined:128x128:streamk", "default"))
    if not dp: continue
    waves = float(dp["waves"]); eff = float(dp["wave_efficiency"]); fill = waves - int(waves)
    t = lambda r: float(r["median_us"]) if r else float("nan")
    tf = lambda r: float(r["tflops"]) if r else float("nan")
    line = f"{n:>5} {dp['tiles']:>6} {fill:>9.2f} {tf(dp):>7.1f} {tf(pe):>8.1f} {tf(sk):>8.1f} {tf(cb):>7.1f}"
    if sk and 0 < fill < 0.25:
        loss = t(dp) * (1 - eff)          # the time the partial last wave costs
        rec = (t(dp) - t(sk)) / loss if loss > 0 else float("nan")
        recs.append(rec)
        line += f"  {rec * 100:6.0f} %"
    print(line)
if recs:
    recs.sort()
    print(f"stream-K recovers, where the last wave is < 1/4 full: median {recs[len(recs)//2]*100:.0f} % of the "
          f"data-parallel wave loss (min {recs[0]*100:.0f} %, max {recs[-1]*100:.0f} %, {len(recs)} sizes)")
PY
} > "$OUT/streamk.txt" 2>&1
cat "$OUT/streamk.txt"
