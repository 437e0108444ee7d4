#!/bin/bash
# profile's what-ifs against the step recorded with the change applied in PyTorch, for two more real
# training steps (GPT-2 and Qwen2.5-0.5B are in what_ifs.sh):
#   - GPT-2 small (12 x 1024 tokens) with eager attention whose QK^T runs in fp32 (GPT-2's
#     reorder_and_upcast_attn: baddbmm of fp32 copies with autocast off), and the same model with its
#     eager attention in bf16: the precision what-if applied;
#   - Qwen1.5-MoE-A2.7B's widths (4 layers, 2 x 1024 tokens: 60 experts of ~137 rows each) with
#     transformers' grouped_mm experts, with the LM head's forward GEMM in fp8 (its top what-if
#     applied), and with the experts as a loop (eager).
# Stages, run on the GPU host from the repository root (OUT: a folder for the results):
#   OUT=out BIN=build/shapescope bench/workloads/applied_what_ifs.sh record   # the four traces
#   OUT=out BIN=build/shapescope bench/workloads/applied_what_ifs.sh profile  # profile --json of two
#   OUT=out bench/workloads/applied_what_ifs.sh table                         # predicted vs recorded
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/applied"
mkdir -p "$W"
. "$(dirname "$0")/../timed.sh"
. "$(dirname "$0")/recording.sh"
case "${1:-}" in
  record)
    record gpt2-fp32attn --model gpt2 --attn eager --upcast-attn --batch 12 --seq 1024
    record gpt2-bf16attn --model gpt2 --attn eager --batch 12 --seq 1024
    record gpt2-fp32attn-50272 --model gpt2 --attn eager --upcast-attn --vocab 50272 --batch 12 --seq 1024
    record qwen2moe --model qwen2moe --layers 4 --batch 2 --seq 1024
    record qwen2moe-loop --model qwen2moe --experts eager --layers 4 --batch 2 --seq 1024
    record qwen2moe-fp8head --model qwen2moe --fp8-lm-head --layers 4 --batch 2 --seq 1024
    ;;
  profile)
    # The text table can be drawn later from the store, without a GPU (profile reads it).
    for name in gpt2-fp32attn qwen2moe; do
      timed "profile-$name" "$BIN" profile --trace "$W/$name.json" --db "$W/$name.db" --json
    done
    ;;
  table)
    python3 "$(dirname "$0")/what_ifs_table.py" applied "$W" | tee "$W/table.txt"
    ;;
  *) echo "usage: $0 record|profile|table" >&2; exit 2 ;;
esac
