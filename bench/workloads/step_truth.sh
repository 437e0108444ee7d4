#!/bin/bash
# profile's measured GEMM time against the trace's own, on real training steps whose clock the
# recording kept (scripts/record_trace.py samples NVML into the trace), steps that ran at boost clocks
# and steps that ran between boost and the power cap:
#   - five of a few layers at 2 x 1024 tokens, at the widths of GPT-J 6B, Bloom 7B1, OPT 6.7B,
#     GPT-NeoX 20B and Falcon 7B;
#   - two of 8 layers at 2 x 4096 tokens, at the widths of Llama 3 8B and Qwen2.5 7B.
# Each is recorded with nvidia-smi sampling the GPU every 20 ms beside it (smi-NAME.csv: a check on
# the trace's NVML samples), then the plain `profile --trace T --db D --json` runs twice on it with
# its wall time, each run on a store of its own (profile reuses a store's points: a second run on the
# first one's store would measure nothing).
# Stages, run on the GPU host from the repository root (OUT: a folder for the results):
#   OUT=out bench/workloads/step_truth.sh record                      # the traces (~3 min on an H100)
#   OUT=out BIN=build/shapescope bench/workloads/step_truth.sh profile   # two profiles of each
#   OUT=out bench/workloads/step_truth.sh table                       # the table (no GPU)
#   OUT=out BIN=build/shapescope bench/workloads/step_truth.sh shared    # shapescope under a CUDA-holding parent
# STEPS="gptj llama3-8l" limits record and profile to those steps; PROFILE_ARGS adds options to every
# profile (e.g. --no-verdict); RUNS="1" profiles each step once (default "1 2"); RECORD_WARMUP=30 runs
# 30 steps before recording (default 2: the GPU still on its way from idle to the step's power);
# RECORD_SETTLE=S runs S seconds of steps under the profiler before the recorded ones (record_trace.py's
# default 1; 0: the recorded steps right after the profiler's start, as before 2026-11-28's run 42);
# RECORD_STEPS=N records N steps a trace.
set -u
BIN=${BIN:-build/shapescope}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/step_truth"
mkdir -p "$W"
. "$(dirname "$0")/../timed.sh"
. "$(dirname "$0")/recording.sh"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# name, then record_trace.py's arguments (the table reads --layers, --batch and --seq from here).
ALL_STEPS=(
  "gptj --model gptj-6b --layers 4 --batch 2 --seq 1024"
  "bloom --model bloom-7b1 --layers 4 --batch 2 --seq 1024"
  "opt --model opt-6.7b --layers 4 --batch 2 --seq 1024"
  "neox --model gpt-neox-20b --layers 2 --batch 2 --seq 1024"
  "falcon --model falcon-7b --layers 4 --batch 2 --seq 1024"
  "llama3-8l --model llama3-8b --layers 8 --batch 2 --seq 4096"
  "qwen2.5-8l --model qwen2.5-7b --layers 8 --batch 2 --seq 4096"
)
chosen() {  # the steps' lines, limited to $STEPS where set
  local line
  for line in "${ALL_STEPS[@]}"; do
    if [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" ${line%% *} "* ]]; then echo "$line"; fi
  done
}
case "${1:-}" in
  record)
    printf '%s\n' "${ALL_STEPS[@]}" > "$W/steps.txt"
    chosen | while read -r name args; do
      nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu --format=csv,noheader,nounits -lms 20 \
        > "$W/smi-$name.csv" 2> /dev/null &
      smi=$!
      # shellcheck disable=SC2086  # the arguments are words
      record "$name" $args < /dev/null
      kill "$smi"
      wait "$smi" 2> /dev/null
    done
    ;;
  profile)
    chosen | while read -r name _; do
      for run in ${RUNS:-1 2}; do
        rm -f "$W/$name-$run.db" "$W/$name-$run.db-wal" "$W/$name-$run.db-shm"
        # shellcheck disable=SC2086  # PROFILE_ARGS are words
        timed "profile-$name-$run" "$BIN" profile --trace "$W/$name.json" --db "$W/$name-$run.db" ${PROFILE_ARGS:-} --json \
          < /dev/null
        echo "profile $name run $run: $(cat "$W/profile-$name-$run.time")"
      done
    done
    ;;
  table)
    python3 "$(dirname "$0")/step_truth_table.py" "$W" | tee "$W/table.txt"
    ;;
  shared)
    PYTHONPATH=python SHAPESCOPE_BIN="$BIN" python3 tests/python/gpu_record.py SharedGpu 2>&1 | tee "$W/shared.txt"
    ;;
  *) echo "usage: $0 record|profile|table|shared" >&2; exit 2 ;;
esac
