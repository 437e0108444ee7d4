#!/usr/bin/env bash
# On the GPU host: `pad` for GPT-2 (training, 12288 tokens) and Llama 3 8B
# (training, 8192 tokens; decode-like token counts), and each recommendation checked by timing the
# padded and unpadded GEMM lists with PyTorch (bench/workloads/pad_torch_check.py).
# Run from the repository root with build/ made by
#   cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build -j
# Writes $OUT/pad.txt (everything printed) and $OUT/pad.db (the store).
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=build/shapescope
DB="$OUT/pad.db"
$S info --calibrate --db "$DB" 2>&1 | grep -E "^GPU|peak" > "$OUT/pad.txt"
run() {  # the command, its table, its JSON for the check
  local name=$1; shift
  echo; echo "\$ shapescope pad $*"
  TIMEFORMAT="(pad: %R s wall)"
  { time $S pad "$@" --db "$DB" 2>&1; } 2>&1
  $S pad "$@" --db "$DB" --json > "/tmp/pad_$name.json" 2>/dev/null
}
{
  run gpt2 --model gpt2 --tokens 12288 --train
  echo; echo "\$ python3 bench/workloads/pad_torch_check.py --model gpt2 --tokens 12288 --train"
  python3 bench/workloads/pad_torch_check.py --report /tmp/pad_gpt2.json --model gpt2 --tokens 12288 --train 2>&1
  run llama --model llama3-8b --tokens 8192 --train
  echo; echo "\$ python3 bench/workloads/pad_torch_check.py --model llama3-8b --tokens 8192 --train"
  python3 bench/workloads/pad_torch_check.py --report /tmp/pad_llama.json --model llama3-8b --tokens 8192 --train 2>&1
  run decode --model llama3-8b --tokens 1..8,16,32,64
} >> "$OUT/pad.txt"
grep -E "^\\$|recommend|leave|pad |saving|^\(pad|dimension|vocab|n_embd|n_inner|hidden|intermediate|heads|tokens" "$OUT/pad.txt" | head -80
