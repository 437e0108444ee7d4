#!/bin/bash
# Paired comparisons at the power limit, repeated: does each answer come out the same twice?
#   1. a real training step of a model whose hidden size is a multiple of 64 but not of 256
#      (Qwen2.5-0.5B's widths, 896; scripts/record_trace.py, random weights), `pad --trace` three
#      times, each on a fresh store: every candidate's saving and its interval per run;
#   2. `explain` of three GEMMs of 1 ms or more, twice each: the verdict, its threshold and the
#      interval of the verdict's ratio;
#   3. `pad --model gpt2 --tokens 12288 --train`: the recommendation and its saving;
#   4. the cost: wall time of pad and explain paired and unpaired (--pair-seconds 0, the way they
#      compared before pairing; or a binary from before, $BEFORE).
# Run on the GPU host from the repository root: OUT=out BIN=build/shapescope [BEFORE=old/shapescope]
#   bench/paired/repeatability.sh ; the table is printed last and written to $OUT/table.txt.
set -u
BIN=${BIN:-build/shapescope}
BEFORE=${BEFORE:-}
OUT=${OUT:?set OUT to a folder for the results}
W="$OUT/work"
mkdir -p "$W"
here=$(dirname "$0")

. "$(dirname "$0")/../timed.sh"

{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv
  "$BIN" --version
  [ -n "$BEFORE" ] && "$BEFORE" --version
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} > "$W/versions.txt" 2>&1

python3 scripts/record_trace.py --model qwen2 --batch 4 --seq 1024 --out "$W/qwen2.json" > "$W/record-qwen2.txt" 2>&1

for i in 1 2 3; do
  timed "pad-qwen2-$i" "$BIN" pad --trace "$W/qwen2.json" --db "$W/pad-qwen2-$i.db" --json
done
for shape in 8192 10240x10240x4096 4096x151936x896; do
  for i in 1 2; do
    timed "explain-${shape}-$i" "$BIN" explain "$shape" --db "$W/explain-${shape}-$i.db" --json
  done
done
timed pad-gpt2 "$BIN" pad --model gpt2 --tokens 12288 --train --db "$W/pad-gpt2.db"
timed explain-3080 "$BIN" explain 3080 --db "$W/explain-3080.db"
unpaired=("$BIN" --pair-seconds 0)
[ -n "$BEFORE" ] && unpaired=("$BEFORE")
before() { local name=$1 cmd=$2; shift 2; timed "before-$name" "${unpaired[0]}" "$cmd" "$@" "${unpaired[@]:1}"; }
before pad-gpt2 pad --model gpt2 --tokens 12288 --train --db "$W/before-pad-gpt2.db"
before explain-3080 explain 3080 --db "$W/before-explain-3080.db"
before pad-qwen2 pad --trace "$W/qwen2.json" --db "$W/before-pad-qwen2.db" --json
python3 "$here/summarize.py" "$W" | tee "$OUT/table.txt"
