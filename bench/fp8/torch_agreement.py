#!/usr/bin/env python3
"""(b) of bench/fp8: each recipe's GEMM through torch._scaled_mm on the shapes shapescope swept, with
the same kind of scales (scripts/fp8_linear.py builds them in the layouts PyTorch dispatches each
recipe by), timed the way shapescope times (L2 flushed before each sample, GPU events, median), on
the same GPU right after the sweep; its ratio to shapescope's time per shape and the median ratio per
recipe. And each recipe's output against the fp32 product of its dequantized operands: a recipe
whose scales PyTorch read differently from what the quantization meant would be off by far more than
bf16's rounding.

  python3 bench/fp8/torch_agreement.py OUT/fp8 [--m-step 128] [--samples 5]

Reads OUT/fp8/{bf16,fp8-RECIPE}-{m,n,k}.csv (the sweep stage's), writes OUT/fp8/torch.json and prints
a line per recipe, the last one the summary.
"""
import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import fp8_linear  # noqa: E402

RECIPES = ["tensor", "row", "block"]


def shapescope_times(folder):
    """(precision, m, n, k) -> shapescope's median [us] for the GEMM points of the sweep's CSVs."""
    out = {}
    for path in Path(folder).glob("*-[mnk].csv"):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row.get("cast"):
                    continue
                key = "bf16" if row["dtype"] == "bf16" else row.get("recipe", "tensor")
                out[(key, int(row["m"]), int(row["n"]), int(row["k"]))] = float(row["median_us"])
    return out


def chosen_shapes(times, m_step):
    """The swept shapes, M thinned to every m_step (and the smallest), N and K as swept."""
    shapes = sorted({(m, n, k) for (_, m, n, k) in times})
    keep = []
    for m, n, k in shapes:
        if n == 7168 and k == 7168 and m != 4096 and m % m_step != 0 and m != 16:
            continue
        keep.append((m, n, k))
    return keep


class Timer:
    """GPU time of one call with a cold L2: a memset of twice the L2 before each sample, events
    around the call, every sample queued before one synchronization."""

    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")

    def median_us(self, call, samples):
        call()
        call()
        events = []
        for _ in range(samples):
            self.flush.zero_()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            stop.record()
            events.append((start, stop))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in events)


def operands(m, n, k, recipe):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if recipe == "bf16":
        return a, w, None
    ga, fa, gb, fb = fp8_linear.RECIPES[recipe]["fwd"]
    aq, sa = fp8_linear.quantize_a(a, ga, fa)
    bq, sb = fp8_linear.quantize_b(w, gb, fb)
    return (aq, sa), (bq, sb), (a, w)


def dequantized_error(recipe, aq, sa, bq, sb, out):
    """||out - deq(A) deq(B)^T|| / ||deq(A) deq(B)^T||, the dequantization from the scales as laid out."""
    def deq(q, s, rows_scale):
        x = q.float()
        r, c = x.shape
        if s.dim() == 0 or s.numel() == 1:
            return x * s.float()
        if rows_scale == "row":
            return x * s.reshape(r, 1) if s.shape[0] == r else x * s.reshape(1, -1).t()
        if rows_scale == "1x128":
            per = s.t() if s.shape[0] != r else s  # [r, L]
            return (x.view(r, c // 128, 128) * per.reshape(r, c // 128, 1)).view(r, c)
        per = s.t()  # [r / 128, L]
        return (x.view(r // 128, 128, c // 128, 128) * per[:, None, :, None]).view(r, c)
    ga, _, gb, _ = fp8_linear.RECIPES[recipe]["fwd"]
    ref = torch.matmul(deq(aq, sa, ga), deq(bq, sb, gb).t())
    return float((out.float() - ref).norm() / ref.norm())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--m-step", type=int, default=128)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    times = shapescope_times(args.folder)
    if not times:
        sys.exit(f"{args.folder}: no sweep CSVs (run the sweep stage first)")
    shapes = chosen_shapes(times, args.m_step)
    timer = Timer()
    torch.manual_seed(0)
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "recipes": {}}
    for recipe in ["bf16"] + RECIPES:
        rows, ratios, errors, refused = [], [], [], None
        for i, (m, n, k) in enumerate(shapes):
            ours = times.get((recipe, m, n, k))
            if ours is None:
                continue
            x, y, _ = operands(m, n, k, recipe)
            try:
                if recipe == "bf16":
                    call = lambda: torch.mm(x, y.t())  # noqa: E731
                else:
                    call = lambda: fp8_linear.scaled_mm(x[0], x[1], y[0], y[1])  # noqa: E731
                theirs = timer.median_us(call, args.samples)
                if recipe != "bf16" and i % 8 == 0:
                    errors.append(dequantized_error(recipe, x[0], x[1], y[0], y[1], call()))
            except RuntimeError as e:
                refused = f"{m}x{n}x{k}: {str(e).splitlines()[0]}"
                break
            rows.append({"m": m, "n": n, "k": k, "shapescope_us": ours, "torch_us": theirs, "ratio": ours / theirs})
            ratios.append(ours / theirs)
        summary = {"shapes": len(rows), "refused": refused}
        if ratios:
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            summary.update(median_ratio=statistics.median(ratios), q1=q[0], q3=q[2])
        if errors:
            summary["max_error_vs_dequantized"] = max(errors)
        result["recipes"][recipe] = {"summary": summary, "shapes": rows}
        line = f"{recipe}: {len(rows)} shapes"
        if ratios:
            line += (f", shapescope / torch median {summary['median_ratio']:.3f} "
                     f"(IQR {summary['q1']:.3f}..{summary['q3']:.3f})")
        if errors:
            line += f", torch's output against the dequantized product: at most {max(errors):.2e}"
        if refused:
            line += f"; torch refused {refused}"
        print(line, flush=True)
    with open(Path(args.folder) / "torch.json", "w") as f:
        json.dump(result, f, indent=1)
    medians = [f"{r} {v['summary']['median_ratio']:.3f}" for r, v in result["recipes"].items()
               if "median_ratio" in v["summary"]]
    print("median shapescope/torch: " + ", ".join(medians))


if __name__ == "__main__":
    main()
