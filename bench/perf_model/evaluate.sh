#!/bin/bash
# A shipped model (gpus/GPU.json) against measurements it was not fitted on; no GPU.
#   OUT=folder bench/perf_model/evaluate.sh                 # the H100 model (GPU=h100-sxm)
#   OUT=folder GPU=h200 bench/perf_model/evaluate.sh        # the H200 model
# - the test sweeps of grid.sh measured on that GPU (MEASURED/test.samples.csv; the H100's 2026-11-27
#   one holds only the bf16 nn/nt/tn sweep of M, N over 8 values 64..8192 and K over 5, 48 of its 320
#   shapes per layout measured by the fit's grid too, in another run): `sweep --dry-run --predict` of
#   each test sweep's points, the error per test set, dtype, layout, batched or not, and row alignment,
#   all and apart by whether the fit measured the shape (error.txt; sweeps MEASURED lacks are left out);
# - pad of five models at 4096 tokens from the model against measured pad (PADS/pad-MODEL.json; pad.txt);
# - the H100 model only: the H200 predicted from it scaled to the H200 (h200-scaled-error.txt), against
#   the H200's square sweep (bf16 nn, n = 1..4096, tests/data/h200-2026-11-21/) and its test sweeps
#   (H200_MEASURED/test.samples.csv), and unscaled against the same (what scaling changes).
set -eu
BIN=${BIN:-build-cpu/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
HERE=$(dirname "$0")
GPU=${GPU:-h100-sxm}
MODEL=${MODEL:-gpus/$GPU.json}
if [ "$GPU" = h100-sxm ]; then
  MEASURED=${MEASURED:-$HERE/results/h100-2026-11-28/calibration}  # test.samples.csv
  PADS=${PADS:-$HERE/results/h100-2026-11-27}                      # pad-MODEL.json, measured
else
  MEASURED=${MEASURED:?set MEASURED to the folder of the test.samples.csv measured on that GPU}
  PADS=${PADS:-$MEASURED}
fi
H200_MEASURED=${H200_MEASURED:-$HERE/results/h200-2026-11-28/calibration}
mkdir -p "$OUT"
# shellcheck source=grid.sh
. "$HERE/grid.sh"
perf_model_predict_tests "$BIN" "$MODEL" "$OUT" --gpu "$GPU"
FIT=gpus/$GPU.samples.csv python3 "$HERE/model_error.py" error "$MEASURED/test.samples.csv" "$OUT"/predicted-test*.txt |
  tee "$OUT/error.txt"
: > "$OUT/pad.txt"
for m in gpt2 llama3-8b falcon-7b phi-2 qwen3-30b-a3b; do
  "$BIN" pad --model "$m" --tokens 4096 --predict --perf-model "$MODEL" --gpu "$GPU" --db "$OUT/none.db" \
    --format json > "$OUT/pad-$m-predicted.json"
  { echo "== $m"; python3 "$HERE/model_error.py" pad "$PADS/pad-$m.json" "$OUT/pad-$m-predicted.json"; } >> "$OUT/pad.txt"
done
cat "$OUT/pad.txt"
"$BIN" info --model "$MODEL" > "$OUT/model.txt"
[ "$GPU" = h100-sxm ] || exit 0
# The H200: its measured square sweep (bf16 nn, n = 1..4096) and its test sweeps against the H100 model
# scaled to it, and against the H100 model as it is (what scaling changes).
"$BIN" calibrate-model --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --samples-out "$OUT/h200-square.samples.csv" \
  > /dev/null
COLUMNS=300 "$BIN" sweep --n 1..4096 --dry-run --perf-model "$MODEL" --scale-to h200 --db "$OUT/none.db" \
  > "$OUT/predicted-h200-scaled-nn.txt" 2> "$OUT/predicted-h200-scaled-nn.err"
COLUMNS=300 "$BIN" sweep --n 1..4096 --dry-run --perf-model "$MODEL" --gpu h100-sxm --db "$OUT/none.db" \
  > "$OUT/predicted-h200-unscaled-nn.txt" 2> "$OUT/predicted-h200-unscaled-nn.err"
mkdir -p "$OUT/h200-scaled" "$OUT/h200-unscaled"
perf_model_predict_tests "$BIN" "$MODEL" "$OUT/h200-scaled" --scale-to h200
perf_model_predict_tests "$BIN" "$MODEL" "$OUT/h200-unscaled" --gpu h100-sxm
{ echo "H100 model scaled to the H200 (--scale-to h200) against the measured H200 squares:"
  python3 "$HERE/model_error.py" error "$OUT/h200-square.samples.csv" "$OUT/predicted-h200-scaled-nn.txt"
  echo "H100 model unscaled against the same:"
  python3 "$HERE/model_error.py" error "$OUT/h200-square.samples.csv" "$OUT/predicted-h200-unscaled-nn.txt"
  echo "H100 model scaled to the H200 against the H200's test sweeps ($H200_MEASURED):"
  FIT=gpus/h100-sxm.samples.csv python3 "$HERE/model_error.py" error "$H200_MEASURED/test.samples.csv" \
    "$OUT"/h200-scaled/predicted-test*.txt
  echo "H100 model unscaled against the same:"
  FIT=gpus/h100-sxm.samples.csv python3 "$HERE/model_error.py" error "$H200_MEASURED/test.samples.csv" \
    "$OUT"/h200-unscaled/predicted-test*.txt
  grep -m1 "^predicted by" "$OUT/predicted-h200-scaled-nn.txt"; } | tee "$OUT/h200-scaled-error.txt"
