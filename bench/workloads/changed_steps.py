#!/usr/bin/env python3
"""Helpers of changed_steps.sh, from the files it wrote in W.

  changed_steps.py pick W NAME SELECT [TOKENS]
                                        the numbers of NAME's what-ifs that a change applied in
                                        PyTorch makes (one per GEMM: the largest saving), comma apart
  changed_steps.py table W              predicted against recorded, one line per change

SELECT is `dim:VALUE:KIND` (what-ifs of KIND whose GEMM has VALUE as a size: a vocabulary padded
changes every GEMM it is a dimension of) or `precision:WORD` (precision what-ifs whose change names
WORD: "bf16", "fp16", "fp8"). For fp8 (`precision:fp8`, or KIND precision) with TOKENS (the step's
batch x sequence), W/NAME.plan: each picked fp8 what-if as the pass of a Linear it changes (an nt
GEMM T x out x in is its forward, nn T x in x out its input gradient, tn out x in x T its weight
gradient) in the recipe the what-if names, for record_trace.py --fp8-plan: the changed step runs
exactly the picked GEMMs in fp8, each in its own recipe, and every other GEMM in bf16.

The table: per change, the step's whole GPU kernel time per step in the trace before and after
(every kernel, not only GEMMs), how much it moved, what profile's changed step predicted (its GEMM
time before minus after, measured as a step: the what-ifs applied at once, replayed against the
step), and moved / predicted.
"""
import json
import re
import sys


def what_ifs(w, name):
    d = json.load(open(f"{w}/profile-{name}.out"))
    return (d.get("what_ifs") or {}).get("ranked", [])


FP8_WHAT_IF = re.compile(r"^(\d+)x(\d+)x(\d+) (nn|nt|tn): run it in fp8 (tensor|row|block-1x128|block)(:\S+)?")


def linear_pass(m, n, k, layout, tokens):
    """(out, in, pass) of the Linear GEMM m x n x k in `layout`, or None where its token side is not `tokens`."""
    if layout == "nt" and m == tokens:
        return n, k, "fwd"
    if layout == "nn" and m == tokens:
        return k, n, "dgrad"
    if layout == "tn" and k == tokens:
        return m, n, "wgrad"
    return None


def write_plan(w, name, changes, tokens):
    """W/NAME.plan: the fp8 what-ifs as passes of Linears (see the module's text)."""
    linears = {}
    for change in changes:
        m = FP8_WHAT_IF.match(change)
        if not m:
            print(f"{name}: not an fp8 what-if of a Linear, left out of the plan: {change[:80]}", file=sys.stderr)
            continue
        found = linear_pass(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), tokens)
        if not found:
            print(f"{name}: {change.split(':')[0]}: no Linear pass with {tokens} tokens, left out of the plan",
                  file=sys.stderr)
            continue
        out, inp, p = found
        recipe = m.group(5).replace("block-1x128", "block")  # block's weight gradient runs 1x128 x 1x128
        linears.setdefault((out, inp), {"out": out, "in": inp, "fwd": None, "dgrad": None, "wgrad": None})[p] = recipe
    json.dump({"tokens": tokens, "linears": list(linears.values())}, open(f"{w}/{name}.plan", "w"), indent=1)


def pick(w, name, select, tokens=None):
    best = {}  # GEMM -> (saving, number, change)
    if select.startswith("dim:"):
        _, value, kind = select.split(":")
        for x in what_ifs(w, name):
            gemm = x["change"].split(":")[0]
            if x["kind"] == kind and re.search(rf"(^|x){value}(x| )", gemm):
                if x["saving_us"] > best.get(gemm, (0,))[0]:
                    best[gemm] = (x["saving_us"], x["number"], x["change"])
    else:
        word = select.split(":")[1]
        # bf16 and fp16 run at the same tensor-core rate: where profile's precision what-if for a GEMM
        # names the other one (it picks the smaller error at equal speed), that what-if prices the change.
        for choice in [word] + {"bf16": ["fp16"], "fp16": ["bf16"]}.get(word, []):
            for x in what_ifs(w, name):
                gemm = x["change"].split(":")[0]
                if x["kind"] == "precision" and f"in {choice}" in x["change"] and gemm not in best:
                    best[gemm] = (x["saving_us"], x["number"], x["change"])
                    if choice != word:
                        print(f"{name}: {gemm}: profile's what-if names {choice} (the same tensor-core rate as "
                              f"{word}); it prices the change to {word}", file=sys.stderr)
    if tokens and best and (select.endswith(":precision") or select == "precision:fp8"):
        write_plan(w, name, [c for _, _, c in best.values()], int(tokens))
    print(",".join(str(n) for _, n, _ in sorted(best.values(), key=lambda v: v[1])))


def trace_ms(w, name):
    """Every GPU kernel's time per step in the trace (ms): the profiler's own, not only GEMMs."""
    t = json.load(open(f"{w}/{name}.json"))
    events = t["traceEvents"] if isinstance(t, dict) else t
    steps = {e["name"] for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")}
    total = sum(e.get("dur", 0) for e in events if e.get("cat") in ("kernel", "Kernel"))
    return total / max(1, len(steps)) / 1000


def gemm_ms(w, name):
    """The trace's GEMM kernel time per step (ms), as record_trace.py printed it."""
    m = re.search(r"([0-9.]+) ms GEMM kernel time", open(f"{w}/record-{name}.txt").read())
    return float(m.group(1))


def casts_ms(w, name):
    """The fp8 casts' kernel time per step (ms) record_trace.py printed, or 0 for a step without them."""
    m = re.search(r"fp8 casts \(kernels inside [^)]*\)\): ([0-9.]+) ms", open(f"{w}/record-{name}.txt").read())
    return float(m.group(1)) if m else 0.0


def table(w):
    print("moved: the whole step's GPU time (every kernel) before minus after; GEMMs: the GEMM kernels' alone, less "
          "the fp8 casts the changed step added (profile's prediction holds both)")
    print(f"{'change':44} | {'before [ms]':>11} | {'after [ms]':>10} | {'moved [ms]':>10} | {'predicted [ms]':>14} | "
          f"moved / predicted | GEMMs - casts moved [ms] | GEMMs - casts / predicted | casts after [ms] | what-ifs | measured as")
    for line in open(f"{w}/changes.txt"):
        name, after, label = line.rstrip("\n").split("\t")
        try:
            d = json.load(open(f"{w}/profile-{name}-change.out"))
            steps = [s for s in d["what_ifs"]["changed_steps"] if s["name"].startswith("what-if")]
            s = steps[0]
            predicted = (s["before_us"] - s["after_us"]) / 1000
            before, later = trace_ms(w, name), trace_ms(w, after)
            moved = before - later
            casts = casts_ms(w, after)
            gemms = gemm_ms(w, name) - gemm_ms(w, after) - (casts - casts_ms(w, name))
            print(f"{label:44} | {before:11.2f} | {later:10.2f} | {moved:10.2f} | {predicted:14.2f} | "
                  f"{moved / predicted:17.3f} | {gemms:24.2f} | {gemms / predicted:25.3f} | {casts:16.2f} | "
                  f"{s['name'][8:]:>8} | "
                  f"{'replayed' if s['replayed'] else 'paired'}")
        except Exception as e:  # a stage that did not run: say so, go on
            print(f"{label:44} | not complete: {type(e).__name__}: {e}")


if __name__ == "__main__":
    if sys.argv[1] == "pick":
        pick(*sys.argv[2:6])
    else:
        table(sys.argv[2])
