#!/bin/bash
# profile's what-ifs on real training steps, and the top one applied: GPT-2 small (12 x 1024 tokens)
# recorded as it is and with vocab_size 50264, and Qwen2.5-0.5B's widths (4 x 1024), each profiled
# (`profile --trace --json`: the ranked what-ifs with their paired savings); the predicted saving of
# GPT-2's padding against the GEMM kernel time the two recorded traces differ by.
# Run on the GPU host from the repository root: OUT=out BIN=build/shapescope bench/workloads/what_ifs.sh
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/what_ifs"
mkdir -p "$W"
. "$(dirname "$0")/../timed.sh"
python3 scripts/record_trace.py --model gpt2 --batch 12 --seq 1024 --out "$W/gpt2.json" > "$W/record-gpt2.txt" 2>&1
python3 scripts/record_trace.py --model gpt2 --vocab 50264 --batch 12 --seq 1024 --out "$W/gpt2-50264.json" \
  > "$W/record-gpt2-50264.txt" 2>&1
python3 scripts/record_trace.py --model qwen2 --batch 4 --seq 1024 --out "$W/qwen2.json" > "$W/record-qwen2.txt" 2>&1
timed profile-gpt2 "$BIN" profile --trace "$W/gpt2.json" --db "$W/gpt2.db" --json
timed profile-gpt2-text "$BIN" profile --trace "$W/gpt2.json" --db "$W/gpt2.db"
timed profile-qwen2 "$BIN" profile --trace "$W/qwen2.json" --db "$W/qwen2.db" --json
python3 "$(dirname "$0")/what_ifs_table.py" what_ifs "$W" | tee "$W/table.txt"
