#!/usr/bin/env python3
"""Helpers of changed_steps.sh, from the files it wrote in W.

  changed_steps.py pick W NAME SELECT [TOKENS]
                                        the numbers of NAME's what-ifs that a change applied in
                                        PyTorch makes (one per GEMM: the largest saving), comma apart
  changed_steps.py table W              predicted against recorded, one line per change

SELECT is `dim:VALUE:KIND` (what-ifs of KIND whose GEMM has VALUE as a size: a vocabulary padded
changes every GEMM it is a dimension of), `precision:WORD` (precision what-ifs whose change names
WORD: "bf16", "fp16", "fp8") or `top:WORD` (the one such what-if of the largest saving). For fp8 (`precision:fp8`, `top:fp8`, or KIND precision) with TOKENS (the step's
batch x sequence), W/NAME.plan: each picked fp8 what-if as the pass of a Linear it changes (an nt
GEMM T x out x in is its forward, nn T x in x out its input gradient, tn out x in x T its weight
gradient) in the recipe the what-if names, for record_trace.py --fp8-plan: the changed step runs
exactly the picked GEMMs in fp8, each in its own recipe, and every other GEMM in bf16.

The table: per change, the step's whole GPU kernel time per step in the trace before and after
(every kernel, not only GEMMs), how much it moved, what profile's changed step predicted (its GEMM
time before minus after, measured as a step: the what-ifs applied at once, replayed against the
step), and moved / predicted. Where changes.txt names a fourth trace (the step without the change,
recorded alternated with the changed one: record_trace.py --alternate-baseline), "before" is that
one; the step profile read is then shown beside it.
"""
import json
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import step_trace  # noqa: E402  (a trace's kernels without PyTorch)

CAST_RANGE = "shapescope_fp8_cast"  # scripts/fp8_linear.py's (that module needs PyTorch)


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
    elif select.startswith("top:"):
        # The single precision what-if of the largest saving whose change names WORD (profile's top one),
        # among those a Linear of the step runs (the plan can apply only those).
        word = select.split(":")[1]
        for x in what_ifs(w, name):
            m = FP8_WHAT_IF.match(x["change"])
            if tokens and not (m and linear_pass(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4),
                                                 int(tokens))):
                continue
            if x["kind"] == "precision" and f"in {word}" in x["change"]:
                gemm = x["change"].split(":")[0]
                if not best or x["saving_us"] > max(v[0] for v in best.values()):
                    best = {gemm: (x["saving_us"], x["number"], x["change"])}
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
    if tokens and best and (select.endswith(":precision") or select in ("precision:fp8", "top:fp8")):
        write_plan(w, name, [c for _, _, c in best.values()], int(tokens))
    print(",".join(str(n) for _, n, _ in sorted(best.values(), key=lambda v: v[1])))


class Step:
    """One recorded trace W/NAME.json, read once, per step (its ProfilerStep# ranges): `ms`, the whole
    GPU kernel time, GEMM and fp8 cast kernel time (every kernel, not only GEMMs); `gemms`, each GEMM
    kernel's calls and us by name."""

    def __init__(self, w, name):
        events = step_trace.events_of(json.load(open(f"{w}/{name}.json")))
        steps, self.gemms = step_trace.steps_of(events), {}
        for e in step_trace.gemm_kernels(events):
            n, us = self.gemms.get(e["name"], (0, 0.0))
            self.gemms[e["name"]] = (n + 1, us + e.get("dur", 0))
        self.gemms = {k: (n / steps, us / steps) for k, (n, us) in self.gemms.items()}
        gemm_us = sum(us for _, us in self.gemms.values())
        casts = step_trace.cast_kernel_us(events, CAST_RANGE) / steps
        self.ms = step_trace.kernel_us(events) / steps / 1000, gemm_us / 1000, casts / 1000
        self.per_step_ms = [us / 1000 for us in step_trace.kernel_us_per_step(events)]


def pairs_moved(before, after):
    """The whole step's move per pair of an alternated recording (step i before less step i after: A B B A
    pairs them across the drift), as "median (low to high)", or '-' for separate recordings."""
    moved = [b - a for b, a in zip(before.per_step_ms, after.per_step_ms)]
    if len(moved) < 2:
        return "-"
    return f"{statistics.median(moved):.2f} ({min(moved):.2f} to {max(moved):.2f})"


def kernel_lines(before, after):
    """The GEMM kernels of two steps by name: calls and time per step, where they differ by 1 % or more
    (which GEMM ran faster or slower than profile measured it is read from these)."""
    per = [before.gemms, after.gemms]
    lines = []
    for k in sorted(set(per[0]) | set(per[1]), key=lambda k: -max(per[0].get(k, (0, 0))[1], per[1].get(k, (0, 0))[1])):
        (n0, a), (n1, b) = per[0].get(k, (0, 0.0)), per[1].get(k, (0, 0.0))
        if abs(a - b) >= 0.01 * max(a, b) and max(a, b) >= 50:
            lines.append(f"    {k[:70]:70} before {n0:5.1f} calls {a:9.1f} us | after {n1:5.1f} calls {b:9.1f} us per step")
    return lines


def timed_pairs(w, after):
    """record_trace.py --timed-pairs' move of the whole step (mean, low, high in ms), or None."""
    try:
        text = open(f"{w}/record-{after}.txt").read()
    except OSError:
        return None
    m = re.search(r"^timed pairs: .*moved ([-\d.]+) ms per step \[([-\d.]+), ([-\d.]+)\]", text, re.M)
    return tuple(float(x) for x in m.groups()) if m else None


def table(w):
    print("moved: the whole step's GPU time (every kernel) before minus after; GEMMs: the GEMM kernels' alone, less "
          "the fp8 casts the changed step added (profile's prediction holds both); before: the step without the change "
          "recorded alternated with the changed one (A B B A) where 'alternated' says so, else its own recording")
    print(f"{'change':44} | {'before [ms]':>11} | {'after [ms]':>10} | {'moved [ms]':>10} | {'predicted [ms]':>14} | "
          f"moved / predicted | GEMMs - casts moved [ms] | GEMMs - casts / predicted | casts after [ms] | what-ifs | "
          f"measured as | before from | profiled step's own recording [ms] | moved per step pair [ms]")
    details = []
    for line in open(f"{w}/changes.txt"):
        name, after, label, *alternated = line.rstrip("\n").split("\t")
        try:
            profiled_step = Step(w, name)
            before_step = Step(w, alternated[0]) if alternated else profiled_step
            after_step = Step(w, after)
            profiled, before, later = profiled_step.ms, before_step.ms, after_step.ms
            moved = before[0] - later[0]
            gemms = before[1] - later[1] - (later[2] - before[2])
            # profile's changed step as measured by default, and replayed (--clocks replay) where that ran too.
            predictions = []
            for suffix in ("", "-replay"):
                if suffix and not os.path.exists(f"{w}/profile-{name}-change{suffix}.out"):
                    continue
                d = json.load(open(f"{w}/profile-{name}-change{suffix}.out"))
                s = [s for s in d["what_ifs"]["changed_steps"] if s["name"].startswith("what-if")][0]
                predicted = (s["before_us"] - s["after_us"]) / 1000
                predictions.append(("replayed" if s["replayed"] else "paired", predicted))
                print(f"{(label if not suffix else '  the same, --clocks replay'):44} | {before[0]:11.2f} | "
                      f"{later[0]:10.2f} | {moved:10.2f} | {predicted:14.2f} | "
                      f"{moved / predicted:17.3f} | {gemms:24.2f} | {gemms / predicted:25.3f} | {later[2]:16.2f} | "
                      f"{s['name'][8:]:>8} | {'replayed' if s['replayed'] else 'paired':>11} | "
                      f"{'alternated' if alternated else 'own':>11} | {profiled[0]:.2f} | "
                      f"{pairs_moved(before_step, after_step) if alternated else '-'}")
            timed = timed_pairs(w, after)
            if timed:
                mean, low, high = timed
                details.append(f"  {label}: timed pairs (no profiler): moved {mean:.2f} ms per step [{low:.2f}, {high:.2f}]; "
                               + ", ".join(f"{p}: predicted {v:.2f}, moved / predicted {mean / v:.3f} "
                                           f"[{low / v:.3f}, {high / v:.3f}]" if v else f"{p}: predicted 0"
                                           for p, v in predictions))
            details.append(f"  {label}: GEMM kernels before ({alternated[0] if alternated else name}) and after ({after})")
            details += kernel_lines(before_step, after_step)
        except Exception as e:  # a stage that did not run: say so, go on
            print(f"{label:44} | not complete: {type(e).__name__}: {e}")
    print("\n".join(details))


if __name__ == "__main__":
    if sys.argv[1] == "pick":
        pick(*sys.argv[2:6])
    else:
        table(sys.argv[2])
