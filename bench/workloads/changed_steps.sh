#!/bin/bash
# profile's predictions against PyTorch: real training steps recorded, profiled, the what-ifs a change
# in the model makes measured as a step (`profile --what-if N,M...`: applied at once, replayed against
# the step), then the step recorded again with the change applied; the whole step's GPU time (every
# kernel) before and after against the prediction.
#   same dtype: GPT-2 small, BERT-base and RoBERTa-base (masked-LM heads) with their vocabularies
#               padded (50257 -> 50272, 30522 -> 30528, 50265 -> 50272): every padding what-if of a
#               GEMM that has the vocabulary as a size;
#   precision:  GPT-2 with eager attention in fp32 (reorder_and_upcast_attn) -> in bf16; and
#               2-layer Llama-3-8B- and Qwen2.5-7B-wide steps with the GEMMs profile's fp8 what-ifs
#               name (the LM head's; every one; the top one alone) in fp8 (torch._scaled_mm, scales
#               computed in the step), each in the recipe its what-if names (record_trace.py
#               --fp8-plan), casts included. Each fp8 change
#               is recorded once per cast implementation in FP8_CASTS (default "shapescope compiled
#               eager"): shapescope's own cast kernels (libshapescope_casts.so beside BIN, or CASTS_LIB),
#               the ones profile prices; PyTorch's quantizers through torch.compile; and eager. With
#               ALTERNATE=1 (the default) each fp8 recording alternates steps without the change and
#               with it (record_trace.py --alternate-baseline: A B B A ..., one process), and the table
#               compares those two: a separate recording of the step before moved 1.8 % between runs.
# Run on the GPU host from the repository root (OUT: a folder for the results, BIN: the binary):
#   OUT=out BIN=build/shapescope bench/workloads/changed_steps.sh run     # record, profile, re-record
#   CHANGES="gpt2 llama" ... run                                          # only those
#   REPLAY_TOO=1 ... run            # each changed step predicted replayed too (profile --clocks replay)
#   RECORD_STEPS=4 RECORD_WARMUP=10 ... run   # steps per trace; steps run before recording (default 2)
#   TIMED_PAIRS=40 ... run          # then 40 alternated pairs timed without the profiler (the move's interval)
#   WHAT_IF_SECONDS=120 ... run     # the changed step's replay for up to 120 s (profile --what-if-seconds)
#   OUT=out bench/workloads/changed_steps.sh table                        # the table (no GPU)
# About 10 minutes on an H100. Logs: $OUT/changed/.
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/changed"
mkdir -p "$W"
HERE="$(dirname "$0")"
. "$HERE/../timed.sh"
. "$HERE/recording.sh"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# NAME SELECT AFTER LABEL -- record_trace.py's arguments (the step), then those of the changed step.
# CHANGES="gpt2 llama" limits the run to those.
change() {
  local name=$1 select=$2 after=$3 label=$4
  if [ -n "${CHANGES:-}" ] && [[ " $CHANGES " != *" $name "* ]]; then return; fi
  shift 4
  local args=() changed=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  changed=("$@")
  record "$name" "${args[@]}" < /dev/null
  rm -f "$W/$name.db"*
  timed "profile-$name" "$BIN" profile --trace "$W/$name.json" --db "$W/$name.db" --json < /dev/null
  echo "profile $name: $(cat "$W/profile-$name.time"); $(tail -n 1 "$W/profile-$name.err")"
  local picked tokens
  tokens=$(tokens_of "${args[@]}")
  picked=$(python3 "$HERE/changed_steps.py" pick "$W" "$name" "$select" "$tokens")
  echo "$name: what-ifs $picked ($select)"
  if [ -z "$picked" ]; then echo "$name: no what-if to apply"; return; fi
  # The same profile with those what-ifs measured as one step (the store's points reused).
  timed "profile-$name-change" "$BIN" profile --trace "$W/$name.json" --db "$W/$name.db" --json --what-if "$picked" \
    ${WHAT_IF_SECONDS:+--what-if-seconds "$WHAT_IF_SECONDS"} < /dev/null
  # REPLAY_TOO=1: the same changed step replayed as well (--clocks replay), for the table to set beside.
  if [ "${REPLAY_TOO:-0}" = 1 ]; then
    timed "profile-$name-change-replay" "$BIN" profile --trace "$W/$name.json" --db "$W/$name.db" --json \
      --what-if "$picked" --clocks replay ${WHAT_IF_SECONDS:+--what-if-seconds "$WHAT_IF_SECONDS"} < /dev/null
    echo "profile $name --clocks replay: $(cat "$W/profile-$name-change-replay.time"); $(tail -n 1 "$W/profile-$name-change-replay.err")"
  fi
  if [[ " ${changed[*]} " != *" PLAN "* ]]; then
    record "$after" "${changed[@]}" < /dev/null
    printf '%s\t%s\t%s\n' "$name" "$after" "$label" >> "$W/changes.txt"
    return
  fi
  changed=("${changed[@]/PLAN/$W/$name.plan}")
  local impl extra
  for impl in ${FP8_CASTS:-shapescope compiled eager}; do
    case $impl in
      shapescope) extra=(--fp8-casts-lib "${CASTS_LIB:-$(dirname "$BIN")/libshapescope_casts.so}") ;;
      compiled) extra=(--fp8-compile) ;;
      *) extra=() ;;
    esac
    if [ "${ALTERNATE:-1}" = 1 ]; then
      # The step without the change alternated with the changed one in one recording (A B B A ...):
      # both in the same clock state; the table compares these two.
      # An even number of steps each (record_trace.py's A B B A order cancels a drift only then).
      local steps=${RECORD_STEPS:-2}
      RECORD_STEPS=$((steps + steps % 2)) record "$after-$impl" "${changed[@]}" "${extra[@]}" \
        --alternate-baseline "$W/$after-$impl-base.json" ${TIMED_PAIRS:+--timed-pairs "$TIMED_PAIRS"} < /dev/null
      printf '%s\t%s\t%s\t%s\n' "$name" "$after-$impl" "$label, casts $impl" "$after-$impl-base" >> "$W/changes.txt"
    else
      record "$after-$impl" "${changed[@]}" "${extra[@]}" < /dev/null
      printf '%s\t%s\t%s\n' "$name" "$after-$impl" "$label, casts $impl" >> "$W/changes.txt"
    fi
  done
}

# The tokens of a step (--batch x --seq of record_trace.py's arguments).
tokens_of() {
  local batch=12 seq=1024
  while [ $# -gt 0 ]; do
    case $1 in --batch) batch=$2; shift ;; --seq) seq=$2; shift ;; esac
    shift
  done
  echo $((batch * seq))
}

case "${1:-}" in
  run)
    : > "$W/changes.txt"
    change gpt2 dim:50257:padding gpt2-50272 "GPT-2 vocabulary 50257 -> 50272" \
      --model gpt2 --batch 12 --seq 1024 -- --model gpt2 --vocab 50272 --batch 12 --seq 1024
    change bert dim:30522:padding bert-30528 "BERT vocabulary 30522 -> 30528" \
      --model bert-base --layers 12 --batch 24 --seq 512 -- --model bert-base --layers 12 --vocab 30528 --batch 24 --seq 512
    change roberta dim:50265:padding roberta-50272 "RoBERTa vocabulary 50265 -> 50272" \
      --model roberta-base --layers 12 --batch 24 --seq 512 -- --model roberta-base --layers 12 --vocab 50272 --batch 24 --seq 512
    change gpt2-fp32attn precision:bf16 gpt2-bf16attn "GPT-2 attention fp32 -> bf16" \
      --model gpt2 --attn eager --upcast-attn --batch 12 --seq 1024 -- --model gpt2 --attn eager --batch 12 --seq 1024
    change llama dim:128256:precision llama-fp8head "Llama LM head -> fp8" \
      --model llama3-8b --layers 2 --batch 2 --seq 2048 -- --model llama3-8b --layers 2 --batch 2 --seq 2048 --fp8-plan PLAN
    change llama8k precision:fp8 llama8k-fp8 "Llama, every fp8 what-if" \
      --model llama3-8b --layers 2 --batch 2 --seq 4096 -- --model llama3-8b --layers 2 --batch 2 --seq 4096 --fp8-plan PLAN
    change llama8k-top top:fp8 llama8k-topfp8 "Llama 8192 tokens, the top fp8 what-if" \
      --model llama3-8b --layers 2 --batch 2 --seq 4096 -- --model llama3-8b --layers 2 --batch 2 --seq 4096 --fp8-plan PLAN
    change qwen-top top:fp8 qwen-topfp8 "Qwen2.5 7B widths, the top fp8 what-if" \
      --model qwen2.5-7b --layers 2 --batch 2 --seq 4096 -- --model qwen2.5-7b --layers 2 --batch 2 --seq 4096 --fp8-plan PLAN
    ;;
  table) python3 "$HERE/changed_steps.py" table "$W" | tee "$W/table.txt" ;;
  *) echo "usage: $0 run|table" >&2; exit 2 ;;
esac
