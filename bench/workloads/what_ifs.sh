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
python3 - "$W" <<'PY' | tee "$W/table.txt"
import json, re, sys
W = sys.argv[1]
def gemm_ms(name):
    m = re.search(r"([0-9.]+) ms GEMM kernel time", open(f"{W}/record-{name}.txt").read())
    return float(m.group(1)) if m else None
for name in ("gpt2", "qwen2"):
    d = json.load(open(f"{W}/profile-{name}.out"))
    w = d.get("what_ifs") or {}
    print(f"== {name}: {d['total_text']}")
    print(f"   GEMM time {w.get('step_us', 0) / 1000:.2f} ms now, {w.get('with_all_us', 0) / 1000:.2f} ms with each GEMM's best change")
    for i, x in enumerate(w.get("ranked", [])[:8], 1):
        iv = f"[{x['saving_low_us']:.0f}..{x['saving_high_us']:.0f}]" if x["paired"] else "(not paired)"
        print(f"   {i}. {x['kind']:9} {x['saving_us']:8.0f} us/step {iv:>16}  {x['change'][:110]}")
a, b = gemm_ms("gpt2"), gemm_ms("gpt2-50264")
d = json.load(open(f"{W}/profile-gpt2.out"))
best = {}  # per GEMM that has 50257 in it: its largest padding what-if (one change per GEMM)
for x in (d.get("what_ifs") or {}).get("ranked", []):
    gemm = x["change"].split(":")[0]
    if x["kind"] == "padding" and "50257" in gemm:
        best[gemm] = max(best.get(gemm, 0), x["saving_us"])
pred = sum(best.values()) / 1000
print(f"gpt2: recorded GEMM kernel time {a} ms, with vocab 50264 {b} ms: moved {a - b:.2f} ms; the best padding "
      f"what-if of each of the {len(best)} GEMMs with 50257 predicts {pred:.2f} ms"
      + (f": predicted / recorded = {pred / (a - b):.2f}" if a and b and a != b else ""))
PY
