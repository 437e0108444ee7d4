#!/bin/bash
# The shipped H100 model (gpus/h100-sxm.json) against measurements it was not fitted on; no GPU.
#   OUT=folder bench/perf_model/evaluate.sh
# - the test sweeps of grid.sh measured on an H100 (MEASURED/test.samples.csv; the 2026-11-27 one holds
#   only the bf16 nn/nt/tn sweep of M, N over 8 values 64..8192 and K over 5, 48 of its 320 shapes per
#   layout measured by the fit's grid too, in another run): `sweep --dry-run --predict` of each test
#   sweep's points, the error per test set, dtype, layout, batched or not, and row alignment, all and
#   apart by whether the fit measured the shape (error.txt; sweeps MEASURED lacks are left out);
# - pad of five models at 4096 tokens from the model against measured pad (PADS/pad-MODEL.json; pad.txt);
# - the H200 square sweep (gpus/h200.samples.csv, measured on an H200) predicted from the H100 model
#   scaled to the H200 (h200-scaled-error.txt).
set -eu
BIN=${BIN:-build-cpu/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
HERE=$(dirname "$0")
MEASURED=${MEASURED:-$HERE/results/h100-2026-11-28/calibration}  # test.samples.csv
PADS=${PADS:-$HERE/results/h100-2026-11-27}          # pad-MODEL.json, measured
MODEL=${MODEL:-gpus/h100-sxm.json}
mkdir -p "$OUT"
# shellcheck source=grid.sh
. "$HERE/grid.sh"
perf_model_predict_tests "$BIN" "$MODEL" "$OUT"
FIT=gpus/h100-sxm.samples.csv python3 "$HERE/model_error.py" error "$MEASURED/test.samples.csv" "$OUT"/predicted-test*.txt |
  tee "$OUT/error.txt"
: > "$OUT/pad.txt"
for m in gpt2 llama3-8b falcon-7b phi-2 qwen3-30b-a3b; do
  "$BIN" pad --model "$m" --tokens 4096 --predict --perf-model "$MODEL" --gpu h100-sxm --db "$OUT/none.db" \
    --format json > "$OUT/pad-$m-predicted.json"
  { echo "== $m"; python3 "$HERE/model_error.py" pad "$PADS/pad-$m.json" "$OUT/pad-$m-predicted.json"; } >> "$OUT/pad.txt"
done
cat "$OUT/pad.txt"
"$BIN" info --model "$MODEL" > "$OUT/model.txt"
# The H200: its measured square sweep (bf16 nn, n = 1..4096) against the H100 model scaled to it, and
# against the H100 model as it is (what scaling changes).
COLUMNS=300 "$BIN" sweep --n 1..4096 --dry-run --perf-model "$MODEL" --scale-to h200 --db "$OUT/none.db" \
  > "$OUT/predicted-h200-scaled-nn.txt" 2> "$OUT/predicted-h200-scaled-nn.err"
COLUMNS=300 "$BIN" sweep --n 1..4096 --dry-run --perf-model "$MODEL" --gpu h100-sxm --db "$OUT/none.db" \
  > "$OUT/predicted-h200-unscaled-nn.txt" 2> "$OUT/predicted-h200-unscaled-nn.err"
{ echo "H100 model scaled to the H200 (--scale-to h200) against the measured H200 squares:"
  python3 "$HERE/model_error.py" error gpus/h200.samples.csv "$OUT/predicted-h200-scaled-nn.txt"
  echo "H100 model unscaled against the same:"
  python3 "$HERE/model_error.py" error gpus/h200.samples.csv "$OUT/predicted-h200-unscaled-nn.txt"
  grep -m1 "^predicted by" "$OUT/predicted-h200-scaled-nn.txt"; } | tee "$OUT/h200-scaled-error.txt"
