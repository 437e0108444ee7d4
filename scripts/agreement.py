#!/usr/bin/env python3
"""shapescope against an independent timing (PyTorch), and where the differences come from.

Times square bf16 torch.mm over --n in the orders of scripts/torch_timing.py and compares each with
shapescope's CSV (sweep --format csv) and with each other:

  sweep vs eager           the headline agreement (an independent route: eager launches, each
                           size's samples back to back)
  sweep vs graph-shuffled  the same method in PyTorch: what is left is the library and the noise
  eager-shuffled vs eager  the order effect: a sample after another kernel vs after itself
  graph-shuffled vs eager-shuffled   graphs vs eager launches in the same order
  eager-gaps vs eager      launch gaps: eager samples queued as the GPU runs (small sizes only)

For each: |ratio - 1| median and p95 over the sizes, and the signed median (first / second - 1) in
bands of n, which says which side is slower where.

    python3 scripts/agreement.py --sweep sweep.csv --n 256..4096 --samples 10 --out out/
Prints one "agreement:" line per comparison (what scripts/gpu_speed.sh reads) and the bands.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (scripts/compare.py: CSV loading and percentiles)

BANDS = [(1, 255), (256, 511), (512, 1023), (1024, 2047), (2048, 4096)]


def load_rows(path):
    return compare.load(path)


def stats(a, b, lo, hi):
    common = sorted(n for n in a if n in b and lo <= n <= hi)
    if not common:
        return None
    dev = [abs(a[n] / b[n] - 1) for n in common]
    signed = [a[n] / b[n] - 1 for n in common]
    return {"n": len(common), "median": compare.percentile(dev, 0.5), "p95": compare.percentile(dev, 0.95),
            "max": max(dev), "signed": compare.percentile(signed, 0.5)}


def report(label, a, b, lo, hi):
    s = stats(a, b, lo, hi)
    if s is None:
        print(f"agreement: {label}: no common sizes in [{lo}, {hi}]")
        return
    print(f"agreement: {label} over n={lo}..{hi} ({s['n']} sizes): median {100 * s['median']:.2f} %, "
          f"p95 {100 * s['p95']:.2f} %, max {100 * s['max']:.2f} %, signed median {100 * s['signed']:+.2f} %")
    bands = []
    for blo, bhi in BANDS:
        band = stats(a, b, max(lo, blo), min(hi, bhi))
        if band:
            bands.append(f"{max(lo, blo)}..{min(hi, bhi)}: {100 * band['signed']:+.2f} % "
                         f"(abs median {100 * band['median']:.2f} %, n={band['n']})")
    print("    by n (signed median, first/second - 1): " + "; ".join(bands))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True, help="shapescope sweep --format csv")
    ap.add_argument("--n", default="256..4096")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--gaps-n", default="256..1023", help="sizes for the launch-gap order (small ones)")
    ap.add_argument("--out", required=True, help="folder for the torch CSVs")
    ap.add_argument("--orders", default="eager,eager-shuffled,graph-shuffled,eager-gaps")
    args = ap.parse_args()

    import torch
    import torch_timing as tt

    os.makedirs(args.out, exist_ok=True)
    ns = tt.parse_range(args.n)
    gaps_ns = tt.parse_range(args.gaps_n)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    bufs = tt.Buffers(max(ns), props.L2_cache_size, dev)
    print(f"torch {torch.__version__} (cuBLAS from its own wheel), {props.name}; n={args.n}, "
          f"{args.samples} samples; cold L2 ({props.L2_cache_size >> 20} MiB flush)")
    times = {}
    for order in args.orders.split(","):
        tt.warm_up(bufs, max(ns))
        rows = tt.run(order, gaps_ns if order == "eager-gaps" else ns, args.samples, bufs)
        path = os.path.join(args.out, f"torch_{order}.csv")
        tt.write(path, rows)
        times[order] = {n: med for n, med, _ in rows}
        print(f"timed {len(rows)} sizes in order {order} -> {path}")

    sweep = load_rows(args.sweep)
    lo, hi = ns.start, ns.stop - 1
    if "eager" in times:
        report("sweep vs torch eager", sweep, times["eager"], lo, hi)
    if "graph-shuffled" in times:
        report("sweep vs torch graph-shuffled", sweep, times["graph-shuffled"], lo, hi)
    if "eager-shuffled" in times and "eager" in times:
        report("torch eager-shuffled vs torch eager (order)", times["eager-shuffled"], times["eager"], lo, hi)
    if "graph-shuffled" in times and "eager-shuffled" in times:
        report("torch graph-shuffled vs torch eager-shuffled (graphs)", times["graph-shuffled"],
               times["eager-shuffled"], lo, hi)
    if "eager-gaps" in times and "eager" in times:
        report("torch eager-gaps vs torch eager (launch gaps)", times["eager-gaps"], times["eager"],
               gaps_ns.start, gaps_ns.stop - 1)


if __name__ == "__main__":
    main()
