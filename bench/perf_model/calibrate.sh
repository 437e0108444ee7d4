#!/bin/bash
# The H100's shipped performance model (gpus/h100-sxm.json) and its error on separate sweeps.
# Stages (OUT: a folder for the results; BIN: the binary):
#   OUT=out bench/perf_model/calibrate.sh plan    # no GPU: each sweep's points and estimated GPU time
#   OUT=out bench/perf_model/calibrate.sh sweep   # on the GPU: every sweep of grid.sh (about 3 min on an H100)
#   OUT=out bench/perf_model/calibrate.sh pad     # on the GPU: measured pad of five models, 4096 tokens
#   OUT=out bench/perf_model/calibrate.sh fit     # no GPU: the model, its error on the test sweeps, pad predicted
# The sweeps (grid.sh): the fit's points (store grid) are the bf16 nn/nt/tn grid of 2026-11-27 (M and N
# over 20 values 16..12288, K over 10), bf16 rows unaligned by 2, 4 and 8 bytes in each layout (N, K,
# and tn's M over values of each alignment 21..12287), fp16 nt, fp32 nn/nt, fp8 nt (tensor recipe,
# cuBLASLt) and strided batched bf16 nn/nt; the model is fitted on them together with the square nn
# sweep n = 1..4096 (bench/speed/results/h100-2026-11-25-sweep/). The test sweeps (store test): the
# separate sweep of 2026-11-27, a blind unaligned bf16 one, and one per other dtype and for batched
# GEMMs, of sizes the fit's sweeps do not hold.
# sweep leaves 4 files in $OUT/perf_model: sweep.log (each sweep's summary), grid.samples.csv and
# test.samples.csv (the points the fit reads) and stores.tar.xz (both stores, .gz without xz; split
# into 15 MiB parts stores.tar.xz.NN when larger). Run again after an interruption, it unpacks the
# stores and measures only the points they lack.
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
HERE=$(dirname "$0")
# fit: the GPU the model is for (its gpus/ name) and its square bf16 nn sweep n = 1..4096, whose
# samples come first in the fit's (their header names the GPU).
GPU=${GPU:-h100-sxm}
SQUARE=${SQUARE:-bench/speed/results/h100-2026-11-25-sweep/sweep_bf16_nn_1-4096.db}
W="$OUT/perf_model"
mkdir -p "$W"
# shellcheck source=grid.sh
. "$HERE/grid.sh"
MODELS="gpt2 llama3-8b falcon-7b phi-2 qwen3-30b-a3b"

# The stores packed as one archive (xz, else gzip where xz is missing), split into 15 MiB parts when
# larger: files come back from the GPU machine at most 16 MiB each.
unpack_stores() {
  local z
  for z in xz gz; do
    if [ ! -e "$W/grid.db" ] && ls "$W"/stores.tar.$z* > /dev/null 2>&1; then
      cat "$W"/stores.tar.$z* | if [ $z = xz ]; then xz -dc; else gzip -dc; fi | tar -C "$W" -xf -
    fi
  done
}

pack_stores() {
  local z=gz zip=(gzip -6)
  if command -v xz > /dev/null; then z=xz zip=(xz -T0 -6); fi
  rm -f "$W"/stores.tar.*
  tar -C "$W" -cf - grid.db test.db | "${zip[@]}" > "$W/stores.tar.$z" || return 1
  if [ "$(stat -c %s "$W/stores.tar.$z")" -gt $((15 << 20)) ]; then
    split -b 15m -d "$W/stores.tar.$z" "$W/stores.tar.$z." && rm "$W/stores.tar.$z"
  fi
  rm -f "$W/grid.db" "$W/test.db"
}

case "${1:-}" in
  plan)
    # Each sweep predicted by the shipped model in bf16 (the dtypes it lacks scaled: fp32 about 16x
    # slower above the launch floor, fp8 about 0.6x), its points counted and its GPU time estimated.
    mkdir -p "$W/plan"
    perf_model_sweeps | while read -r STORE NAME D L B M N K; do
      COLUMNS=300 "$BIN" sweep --m "$M" --n "$N" --k "$K" --batch "$B" --layout "$L" --dtype bf16 --dry-run \
        --predict --gpu h100-sxm --db "$W/none.db" > "$W/plan/predicted-$NAME.txt" 2> /dev/null < /dev/null
      "$BIN" sweep --m "$M" --n "$N" --k "$K" --batch "$B" --layout "$L" --dtype "$D" --backend "$(backend_of "$D")" \
        --dry-run --db "$W/none.db" > /dev/null 2> "$W/plan/check-$NAME.err" < /dev/null ||
        { echo "$NAME: refused:" >&2; cat "$W/plan/check-$NAME.err" >&2; }
    done
    # shellcheck disable=SC2046 # one file per sweep, in the sweeps' order
    SCALE=fp32=16,fp8=0.6 python3 "$HERE/model_error.py" cost \
      $(perf_model_sweeps | awk '{print "'"$W"'/plan/predicted-" $2 ".txt"}') | tee "$W/plan.txt"
    ;;
  sweep)
    unpack_stores
    perf_model_sweeps | while read -r STORE NAME D L B M N K; do
      echo "== $NAME: sweep --dtype $D --layout $L --batch $B --m $M --n $N --k $K" >> "$W/sweep.log"
      "$BIN" sweep --m "$M" --n "$N" --k "$K" --batch "$B" --layout "$L" --dtype "$D" --backend "$(backend_of "$D")" \
        --db "$W/$STORE.db" 2>> "$W/sweep.log" > /dev/null < /dev/null || echo "== $NAME: exit $?" >> "$W/sweep.log"
    done
    for S in grid test; do
      "$BIN" calibrate-model --db "$W/$S.db" --samples-out "$W/$S.samples.csv" > /dev/null 2>> "$W/sweep.log"
    done
    pack_stores
    tail -n 3 "$W/sweep.log"
    ;;
  pad)
    for m in $MODELS; do "$BIN" pad --model "$m" --tokens 4096 --db "$W/pad.db" --format json > "$W/pad-$m.json"; done
    ;;
  fit)
    # The samples the sweep wrote; else the stores' (unpacked beside their archive, which stays).
    for S in grid test; do
      [ -e "$W/$S.samples.csv" ] && continue
      unpack_stores
      "$BIN" calibrate-model --db "$W/$S.db" --samples-out "$W/$S.samples.csv" > /dev/null
    done
    # The square nn sweep's samples first (their header names the GPU), then the grid's rows.
    "$BIN" calibrate-model --db "$SQUARE" --samples-out "$W/square.samples.csv" > /dev/null
    { cat "$W/square.samples.csv"; tail -n +3 "$W/grid.samples.csv"; } > "$W/$GPU.samples.csv"
    "$BIN" calibrate-model --samples "$W/$GPU.samples.csv" --out "$W/$GPU.json" > "$W/model.txt" || exit 1
    cat "$W/model.txt"
    perf_model_predict_tests "$BIN" "$W/$GPU.json" "$W" --gpu "$GPU"
    FIT="$W/$GPU.samples.csv" python3 "$HERE/model_error.py" error "$W/test.samples.csv" "$W"/predicted-test*.txt |
      tee "$W/test-error.txt"
    rm -f "$W/pad.txt"  # measured pad (the pad stage's) against the model's, where measured
    for m in $MODELS; do
      "$BIN" pad --model "$m" --tokens 4096 --predict --perf-model "$W/$GPU.json" --gpu "$GPU" --db "$W/none.db" \
        --format json > "$W/pad-$m-predicted.json"
      if [ -e "$W/pad-$m.json" ]; then
        { echo "== $m"; python3 "$HERE/model_error.py" pad "$W/pad-$m.json" "$W/pad-$m-predicted.json"; } >> "$W/pad.txt"
      fi
    done
    if [ -e "$W/pad.txt" ]; then cat "$W/pad.txt"; fi
    ;;
  *) echo "usage: $0 plan|sweep|pad|fit" >&2; exit 2 ;;
esac
