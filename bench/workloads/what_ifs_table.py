#!/usr/bin/env python3
"""The closing tables of what_ifs.sh and applied_what_ifs.sh, from the files they wrote in W:
record-NAME.txt (scripts/record_trace.py's log: the step's GEMM kernel time) and profile-NAME.out
(`shapescope profile --json`: the ranked what-ifs).

  python3 bench/workloads/what_ifs_table.py what_ifs W   # GPT-2 and Qwen2, GPT-2's vocabulary padded
  python3 bench/workloads/what_ifs_table.py applied W    # fp32 attention, Qwen-MoE: changes applied
"""
import json
import re
import sys


def gemm_ms(w, name):
    """The recorded step's GEMM kernel time (ms), or None."""
    m = re.search(r"([0-9.]+) ms GEMM kernel time", open(f"{w}/record-{name}.txt").read())
    return float(m.group(1)) if m else None


def profiled(w, name):
    """Prints a profile's total and its first eight what-ifs; returns them all, ranked."""
    d = json.load(open(f"{w}/profile-{name}.out"))
    ifs = d.get("what_ifs") or {}
    print(f"== {name}: {d['total_text']}")
    print(f"   GEMM time {ifs.get('step_us', 0) / 1000:.2f} ms now, {ifs.get('with_all_us', 0) / 1000:.2f} ms with "
          "each GEMM's best change")
    for i, x in enumerate(ifs.get("ranked", [])[:8], 1):
        iv = f"[{x['saving_low_us']:.0f}..{x['saving_high_us']:.0f}]" if x["paired"] else "(not paired)"
        print(f"   {i}. {x['kind']:9} {x['saving_us']:8.0f} us/step {iv:>16}  {x['change'][:110]}")
    return ifs.get("ranked", [])


def vocabulary_padding(ranked, vocab="50257"):
    """Per GEMM with the vocabulary in it, its largest padding what-if (one change per GEMM)."""
    best = {}
    for x in ranked:
        gemm = x["change"].split(":")[0]
        if x["kind"] == "padding" and vocab in gemm:
            best[gemm] = max(best.get(gemm, 0), x["saving_us"])
    return best


def compare(w, label, before, after, predicted_us, what):
    a, b = gemm_ms(w, before), gemm_ms(w, after)
    pred = predicted_us / 1000
    line = (f"{label}: recorded GEMM kernel time {a} ms, with {what} {b} ms: moved {a - b:.2f} ms; "
            f"the what-ifs predict {pred:.2f} ms")
    if a and b and a != b:
        line += f": predicted / recorded = {pred / (a - b):.2f}"
    print(line)


def what_ifs(w):
    for name in ("gpt2", "qwen2"):
        profiled(w, name)
    a, b = gemm_ms(w, "gpt2"), gemm_ms(w, "gpt2-50264")
    best = vocabulary_padding((json.load(open(f"{w}/profile-gpt2.out")).get("what_ifs") or {}).get("ranked", []))
    pred = sum(best.values()) / 1000
    print(f"gpt2: recorded GEMM kernel time {a} ms, with vocab 50264 {b} ms: moved {a - b:.2f} ms; the best padding "
          f"what-if of each of the {len(best)} GEMMs with 50257 predicts {pred:.2f} ms"
          + (f": predicted / recorded = {pred / (a - b):.2f}" if a and b and a != b else ""))


def applied(w):
    ranked = profiled(w, "gpt2-fp32attn")
    # The fp32 GEMMs' precision what-ifs (to bf16 or fp16); fp8 ones are of the bf16 GEMMs.
    fp32 = [x for x in ranked if x["kind"] == "precision" and "in fp8" not in x["change"]]
    compare(w, "gpt2 fp32 attention", "gpt2-fp32attn", "gpt2-bf16attn", sum(x["saving_us"] for x in fp32),
            f"the attention in bf16 ({len(fp32)} precision what-ifs)")
    best = vocabulary_padding(ranked)
    compare(w, "gpt2 fp32 attention, vocabulary", "gpt2-fp32attn", "gpt2-fp32attn-50272", sum(best.values()),
            f"vocab_size 50272 ({len(best)} padding what-ifs)")
    ranked = profiled(w, "qwen2moe")
    head = [x for x in ranked
            if x["kind"] == "precision" and x["change"].startswith("2048x151936x2048 nt: run it in fp8")]
    compare(w, "qwen2moe LM head", "qwen2moe", "qwen2moe-fp8head", sum(x["saving_us"] for x in head),
            f"the LM head's forward in fp8 ({len(head)} precision what-if)")
    print("qwen2moe experts: recorded GEMM kernel time with grouped_mm", gemm_ms(w, "qwen2moe"), "ms, as a loop (eager)",
          gemm_ms(w, "qwen2moe-loop"), "ms")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("what_ifs", "applied"):
        sys.exit(__doc__)
    {"what_ifs": what_ifs, "applied": applied}[sys.argv[1]](sys.argv[2])
