#!/bin/bash
# The H100's shipped performance model (gpus/h100-sxm.json) and its error on a separate sweep.
# Stages (OUT: a folder for the results; BIN: the binary):
#   OUT=out bench/perf_model/calibrate.sh sweep   # on the GPU: the fit's grid and the test grid (~40 s on an H100)
#   OUT=out bench/perf_model/calibrate.sh pad     # on the GPU: measured pad of five models, 4096 tokens
#   OUT=out bench/perf_model/calibrate.sh fit     # no GPU: the model, its error on the test grid, pad predicted
# The fit's grid: bf16, layouts nn/nt/tn, M and N over 20 values 16..12288 (aligned and not), K over
# 10 values 64..8192 (12000 points); the model is fitted on it together with the square nn sweep
# n = 1..4096 (bench/speed/results/h100-2026-11-25-sweep/). The test grid: M and N over 8 other values
# 64..8192, K over 5 (960 points), none of which the fit saw.
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/perf_model"
mkdir -p "$W"
FIT_MN=16,48,100,128,250,384,512,777,1024,1500,2048,2500,3072,4000,4096,5120,6144,7000,8192,12288
FIT_K=64,200,512,768,1024,2000,3072,4096,6000,8192
TEST_MN=64,200,512,1000,2048,3001,4096,8192
TEST_K=256,768,1500,4096,8192
MODELS="gpt2 llama3-8b falcon-7b phi-2 qwen3-30b-a3b"
case "${1:-}" in
  sweep)
    for L in nn nt tn; do
      "$BIN" sweep --m $FIT_MN --n $FIT_MN --k $FIT_K --layout $L --dtype bf16 --db "$W/grid.db" 2> "$W/sweep-grid-$L.err" > /dev/null
      "$BIN" sweep --m $TEST_MN --n $TEST_MN --k $TEST_K --layout $L --dtype bf16 --db "$W/test.db" 2> "$W/sweep-test-$L.err" > /dev/null
    done
    ;;
  pad)
    for m in $MODELS; do "$BIN" pad --model "$m" --tokens 4096 --db "$W/pad.db" --format json > "$W/pad-$m.json"; done
    ;;
  fit)
    "$BIN" calibrate-model --db "$W/grid.db" --samples-out "$W/grid.samples.csv" > /dev/null
    "$BIN" calibrate-model --db "$W/test.db" --samples-out "$W/test.samples.csv" > /dev/null
    # The square nn sweep's samples first (their header names the GPU), then the grid's rows.
    "$BIN" calibrate-model --db bench/speed/results/h100-2026-11-25-sweep/sweep_bf16_nn_1-4096.db \
      --samples-out "$W/square.samples.csv" > /dev/null
    { cat "$W/square.samples.csv"; tail -n +3 "$W/grid.samples.csv"; } > "$W/h100-sxm.samples.csv"
    "$BIN" calibrate-model --samples "$W/h100-sxm.samples.csv" --out "$W/h100-sxm.json" | tee "$W/model.txt"
    for L in nn nt tn; do
      COLUMNS=300 "$BIN" sweep --m $TEST_MN --n $TEST_MN --k $TEST_K --layout $L --dry-run --predict \
        --perf-model "$W/h100-sxm.json" --gpu h100-sxm --db "$W/none.db" > "$W/predicted-test-$L.txt" 2>&1
    done
    python3 "$(dirname "$0")/model_error.py" error "$W/test.samples.csv" "$W"/predicted-test-{nn,nt,tn}.txt | tee "$W/test-error.txt"
    for m in $MODELS; do
      "$BIN" pad --model "$m" --tokens 4096 --predict --perf-model "$W/h100-sxm.json" --gpu h100-sxm > "$W/pad-$m-predicted.txt"
    done
    ;;
  *) echo "usage: $0 sweep|pad|fit" >&2; exit 2 ;;
esac
