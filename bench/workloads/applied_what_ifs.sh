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
record() {  # name, then record_trace.py's arguments
  local name=$1
  shift
  PYTHONUNBUFFERED=1 python3 scripts/record_trace.py "$@" --out "$W/$name.json" > "$W/record-$name.txt" 2>&1
  echo "record $name: exit $?; $(grep -E 'ms GEMM kernel time|^attention' "$W/record-$name.txt" | tr '\n' ' ')"
}
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
    python3 - "$W" <<'PY' | tee "$W/table.txt"
import json, re, sys
W = sys.argv[1]
def gemm_ms(name):
    m = re.search(r"([0-9.]+) ms GEMM kernel time", open(f"{W}/record-{name}.txt").read())
    return float(m.group(1)) if m else None
def profiled(name):
    d = json.load(open(f"{W}/profile-{name}.out"))
    w = d.get("what_ifs") or {}
    print(f"== {name}: {d['total_text']}")
    print(f"   GEMM time {w.get('step_us', 0) / 1000:.2f} ms now, {w.get('with_all_us', 0) / 1000:.2f} ms with each GEMM's best change")
    for i, x in enumerate(w.get("ranked", [])[:8], 1):
        iv = f"[{x['saving_low_us']:.0f}..{x['saving_high_us']:.0f}]" if x["paired"] else "(not paired)"
        print(f"   {i}. {x['kind']:9} {x['saving_us']:8.0f} us/step {iv:>16}  {x['change'][:110]}")
    return w.get("ranked", [])
def compare(label, before, after, predicted_us, what):
    a, b = gemm_ms(before), gemm_ms(after)
    pred = predicted_us / 1000
    line = (f"{label}: recorded GEMM kernel time {a} ms, with {what} {b} ms: moved {a - b:.2f} ms; "
            f"the what-ifs predict {pred:.2f} ms")
    if a and b and a != b:
        line += f": predicted / recorded = {pred / (a - b):.2f}"
    print(line)
ranked = profiled("gpt2-fp32attn")
# The fp32 GEMMs' precision what-ifs (to bf16 or fp16); fp8 ones are of the bf16 GEMMs.
fp32 = [x for x in ranked if x["kind"] == "precision" and "in fp8" not in x["change"]]
compare("gpt2 fp32 attention", "gpt2-fp32attn", "gpt2-bf16attn", sum(x["saving_us"] for x in fp32),
        f"the attention in bf16 ({len(fp32)} precision what-ifs)")
best = {}  # per GEMM with the vocabulary in it: its padding what-if (one change per GEMM)
for x in ranked:
    gemm = x["change"].split(":")[0]
    if x["kind"] == "padding" and "50257" in gemm:
        best[gemm] = max(best.get(gemm, 0), x["saving_us"])
compare("gpt2 fp32 attention, vocabulary", "gpt2-fp32attn", "gpt2-fp32attn-50272", sum(best.values()),
        f"vocab_size 50272 ({len(best)} padding what-ifs)")
ranked = profiled("qwen2moe")
head = [x for x in ranked if x["kind"] == "precision" and x["change"].startswith("2048x151936x2048 nt: run it in fp8")]
compare("qwen2moe LM head", "qwen2moe", "qwen2moe-fp8head", sum(x["saving_us"] for x in head),
        f"the LM head's forward in fp8 ({len(head)} precision what-if)")
print("qwen2moe experts: recorded GEMM kernel time with grouped_mm", gemm_ms("qwen2moe"), "ms, as a loop (eager)",
      gemm_ms("qwen2moe-loop"), "ms")
PY
    ;;
  *) echo "usage: $0 record|profile|table" >&2; exit 2 ;;
esac
