#!/bin/bash
# fp8 recipes on an H100: where fp8 stops paying, agreement with torch._scaled_mm, and a real FP8
# training step against profile (bench/fp8/README.md says what each stage measures).
# Stages, run on the GPU host from the repository root (OUT: a folder for the results):
#   OUT=out bench/fp8/fp8_evidence.sh sweep   # (a) bf16 and fp8 tensor/row/block, casts, over M and N/K (~1.5 min)
#   OUT=out bench/fp8/fp8_evidence.sh torch   # (b) torch._scaled_mm on the same shapes, same scales (~1 min)
#   OUT=out bench/fp8/fp8_evidence.sh step    # (c) an FP8 Llama step recorded, then profiled (~1.5 min)
#   OUT=out bench/fp8/fp8_evidence.sh table   # the closing table and the plot (no GPU)
#   OUT=out bench/fp8/fp8_evidence.sh all     # the four in order
# M_STEP (default 16) is the M sweep's step: 16 is what the evidence asks for (512 sizes x 4
# precisions); a larger step (64) halves the sweep's time if the budget is short. SAMPLES (default 5)
# per point. The step's quantizers: STEP_CASTS=eager (default; PyTorch ops), compiled (torch.compile)
# or shapescope (shapescope's cast kernels, libshapescope_casts.so beside BIN or CASTS_LIB: the ones
# profile measures); STEP_STEPS steps in its trace (default 1).
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/fp8"
mkdir -p "$W"
HERE="$(dirname "$0")"
. "$HERE/../timed.sh"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
M_STEP=${M_STEP:-16}
SAMPLES=${SAMPLES:-5}
DB="$W/fp8.db"

# One sweep into the store and a CSV: NAME, then sweep's options.
sweep() {
  local name=$1
  shift
  timed "sweep-$name" "$BIN" sweep "$@" --db "$DB" --samples "$SAMPLES" --format csv --out "$W/$name.csv"
  echo "sweep $name: $(cat "$W/sweep-$name.time"), $(grep -c . "$W/$name.csv" 2> /dev/null) lines" \
       "$(grep -c '^skipped' "$W/sweep-$name.err") skipped"
}

# The three shape families of (a): M over 16..8192 at N = K = 7168 (a DeepSeek-V3-wide layer), and
# N, then K, over 512..16384 at M = 4096 (the other two fixed at 7168).
shapes() {  # NAME-SUFFIX then the size options
  echo "m --m 16..8192:$M_STEP --n 7168 --k 7168"
  echo "n --m 4096 --n 512..16384:512 --k 7168"
  echo "k --m 4096 --n 7168 --k 512..16384:512"
}

stage_sweep() {
  nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader > "$W/gpu.txt" 2> /dev/null
  shapes | while read -r family sizes; do
    # shellcheck disable=SC2086  # sizes are words
    sweep "bf16-$family" $sizes --layout nt --dtype bf16 --backend cublas < /dev/null
    for recipe in tensor row block; do
      # shellcheck disable=SC2086
      sweep "fp8-$recipe-$family" $sizes --layout nt --dtype fp8 --recipe "$recipe" --backend cublaslt --casts < /dev/null
    done
  done
}

stage_torch() {
  timed torch python3 "$HERE/torch_agreement.py" "$W" --m-step 128 --samples "$SAMPLES"
  echo "torch: $(cat "$W/torch.time"); $(tail -n 1 "$W/torch.out")"
}

stage_step() {
  local casts=()
  case ${STEP_CASTS:-eager} in
    shapescope) casts=(--fp8-casts-lib "${CASTS_LIB:-$(dirname "$BIN")/libshapescope_casts.so}") ;;
    compiled) casts=(--fp8-compile) ;;
    eager) ;;
    *) echo "STEP_CASTS: '$STEP_CASTS' is not shapescope, compiled or eager" >&2; return 2 ;;
  esac
  timed record-step env PYTHONUNBUFFERED=1 python3 scripts/record_trace.py --model llama3-8b --layers 2 --batch 2 \
    --seq 1024 --fp8-linears block "${casts[@]}" --steps "${STEP_STEPS:-1}" --out "$W/step.json"
  echo "record step: $(cat "$W/record-step.time"); $(grep -E 'ms GEMM kernel time|^fp8' "$W/record-step.out" | tr '\n' ' ')"
  rm -f "$W/step.db" "$W/step.db-wal" "$W/step.db-shm"
  timed profile-step "$BIN" profile --trace "$W/step.json" --db "$W/step.db" --no-verdict --pair-seconds 0 --json
  echo "profile step: $(cat "$W/profile-step.time")"
}

case "${1:-}" in
  sweep) stage_sweep ;;
  torch) stage_torch ;;
  step) stage_step ;;
  table) python3 "$HERE/fp8_table.py" "$W" | tee "$W/table.txt" ;;
  all)
    stage_sweep
    stage_torch
    stage_step
    python3 "$HERE/fp8_table.py" "$W" | tee "$W/table.txt"
    ;;
  *) echo "usage: $0 sweep|torch|step|table|all" >&2; exit 2 ;;
esac
