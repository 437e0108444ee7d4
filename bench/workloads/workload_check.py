#!/usr/bin/env python3
"""The checks of bench/workloads/traces.sh, each reading files that shapescope and the trace
tools wrote, and printing one line per check that the script's closing table collects:

  shapes KERNELS_CSV PROFILE_JSON NAME   per GEMM shape: the trace's GEMM kernels (counted from the kernel
                                         side by scripts/trim_trace.py) against profile's calls; the
                                         measured GEMM time per step against the trace's kernel time
  pad PAD_TRACE_JSON PAD_MODEL_JSON      the vocabulary padding pad recommends from the trace and from
                                         the model; prints the recommended size (last line: "vocab N")
  saving PAD_TRACE_JSON BEFORE_JSON AFTER_JSON
                                         the saving pad predicted for the vocabulary against the saving in
                                         the traces (profile JSONs of the step before and after padding)
  grouped PROFILE_JSON                   a grouped MoE call against the per-expert loop of the same GEMMs

Each check line starts with "CHECK |" and has: name | value | target | ok.
"""
import json
import sys


def check(name, value, target, ok):
    print(f"CHECK | {name} | {value} | {target} | {'yes' if ok else 'NO'}")


def shape_key(gemm):
    """(m, n, k, batch, groups) as trim_trace.py counts kernels: a grouped call by its total M x N x K."""
    ps = gemm["problems"]
    if len(ps) > 1:
        return (sum(p["m"] * p["n"] * p["k"] for p in ps), 0, 0, ps[0]["batch"], len(ps))
    p = ps[0]
    return (p["m"], p["n"], p["k"], p["batch"], 1)


def shapes(kernels_csv, profile_json, name):
    with open(kernels_csv) as f:
        rows = [line.strip().split(",") for line in f.readlines()[1:] if line.strip()]
    kernels = {}
    for r in rows:
        m, n, k, batch, groups, count = (int(x) for x in r)
        key = (m * n * k, 0, 0, batch, groups) if groups > 1 else (m, n, k, batch, 1)
        kernels[key] = kernels.get(key, 0) + count
    prof = json.load(open(profile_json))
    calls = {}
    for g in prof["gemms"]:
        calls[shape_key(g)] = calls.get(shape_key(g), 0) + g["count"]
    print(f"{name}: per shape, the trace's GEMM kernels (kernel side) and profile's calls")
    print(f"  {'m':>8} {'n':>8} {'k':>8} {'batch':>5} {'groups':>6} {'kernels':>8} {'calls':>6}")
    same = 0
    for key in sorted(set(kernels) | set(calls)):
        a, b = kernels.get(key, 0), calls.get(key, 0)
        same += a == b
        print(f"  {key[0]:>8} {key[1]:>8} {key[2]:>8} {key[3]:>5} {key[4]:>6} {a:>8} {b:>6}{'' if a == b else '  <-'}")
    total = len(set(kernels) | set(calls))
    check(f"{name}: GEMM kernels per shape = profile calls", f"{same}/{total} shapes", "all", same == total)
    t = prof["totals"]
    ratio = t["ratio"]
    print(f"{name}: {prof['total_text']}")
    if t["unmapped_ops"]:
        print(f"{name}: {t['unmapped_ops']} ops not mapped: {prof['unmapped']}")
    check(f"{name}: measured / trace GEMM time per step",
          f"{ratio:.3f} ({t['compared_measured_us'] / 1000:.2f} / {t['compared_trace_us'] / 1000:.2f} ms)"
          if ratio else "-", "within 10 %", ratio is not None and abs(ratio - 1) <= 0.10)


def vocab_recommendation(pad_trace, pad_model):
    t = json.load(open(pad_trace))
    size = next(s for s in t["sizes"] if s["value"] == 50257)
    m = json.load(open(pad_model))
    dim = next(d for d in m["steps"][0]["dimensions"] if d["name"] == "vocab_size")
    return size, dim


def pad(pad_trace, pad_model):
    size, dim = vocab_recommendation(pad_trace, pad_model)
    a, b = size["recommendation"], dim["recommendation"]
    print(f"pad --trace: {a['text']}")
    print(f"pad --model: {b['text']}")
    check("pad: vocabulary from the trace = from the model", f"{a['value']} / {b['value']}", "same",
          a["value"] == b["value"])
    print(f"vocab {a['value']}")


def saving(pad_trace, before_json, after_json):
    t = json.load(open(pad_trace))
    size = next(s for s in t["sizes"] if s["value"] == 50257)
    rec = size["recommendation"]
    cand = next(c for c in size["candidates"] if c["value"] == rec["value"])
    predicted = cand["saving_us"]
    before, after = json.load(open(before_json)), json.load(open(after_json))
    traced = before["totals"]["trace_us"] - after["totals"]["trace_us"]
    measured = before["totals"]["measured_us"] - after["totals"]["measured_us"]
    print(f"vocab 50257 -> {rec['value']}: pad predicted {predicted / 1000:.2f} ms per step; the re-recorded trace's "
          f"GEMM kernels {before['totals']['trace_us'] / 1000:.2f} -> {after['totals']['trace_us'] / 1000:.2f} ms "
          f"(saves {traced / 1000:.2f} ms); profile of both traces saves {measured / 1000:.2f} ms")
    ratio = traced / predicted if predicted else float("nan")
    check("pad: predicted saving vs the re-recorded trace", f"{predicted / 1000:.2f} vs {traced / 1000:.2f} ms "
          f"({ratio:.3f})", "within 15 %", abs(ratio - 1) <= 0.15)


def grouped(profile_json):
    """Rows named grouped-X (one group id) against rows named loop-X (the same GEMMs, one call each)."""
    prof = json.load(open(profile_json))
    for g in prof["gemms"]:
        if not g["origin"].startswith("grouped-"):
            continue
        which = g["origin"][len("grouped-"):]
        loop = [x for x in prof["gemms"] if x["origin"] == "loop-" + which]
        if g["median_us"] is None or not loop or any(x["median_us"] is None for x in loop):
            check(f"grouped {which}", "not measured", "-", False)
            continue
        loop_us = sum(x["median_us"] * x["count"] for x in loop)
        print(f"{which}: {g['shape']}: one cublasGemmGroupedBatchedEx {g['median_us']:.1f} us ({g['kernel']}; "
              f"{g['tiles']}; {g['waves']}); per-expert cublasGemmEx loop {loop_us:.1f} us (each call timed cold; a "
              f"real loop runs them back to back)")
        check(f"grouped {which} ({g['shape']}) vs per-expert loop",
              f"{g['median_us']:.1f} vs {loop_us:.1f} us ({loop_us / g['median_us']:.2f}x)", "measured", True)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"shapes": shapes, "pad": pad, "saving": saving, "grouped": grouped}[command](*args)
