#!/usr/bin/env python3
"""shapescope against an independent timing (PyTorch), and where the differences come from.

Times square bf16 torch.mm over --n in the orders of bench/agreement/torch_timing.py and compares each with
shapescope's CSV (sweep --format csv) and with each other:

  sweep vs eager           the headline agreement (an independent route: eager launches, each
                           size's samples back to back)
  sweep vs graph-shuffled  the same method in PyTorch: what is left is the library and the noise
  eager-shuffled vs eager  the order effect: a sample after another kernel vs after itself
  graph-shuffled vs eager-shuffled   graphs vs eager launches in the same order
  eager-gaps vs eager      launch gaps: eager samples queued as the GPU runs (small sizes only)
  same / other kernels     sweep vs eager over the sizes where PyTorch's cuBLAS (its own wheel) ran
                           the same kernels as shapescope's, and over those where it chose others
                           (torch.profiler, one call per size; the sweep CSV's kernels column)
  one / several kernels    sweep vs eager over calls of one kernel and of several (split-K with its
                           reduction): graphs drop the launch gap between a call's kernels

For each: |ratio - 1| median and p95 over the sizes, and the signed median (first / second - 1) in
bands of n, which says which side is slower where.

    python3 bench/agreement/agreement.py --sweep sweep.csv --n 256..4096 --samples 10 --out out/
    python3 bench/agreement/agreement.py --sweep sweep.csv --out out/ --reuse   # compare again, no GPU
Prints one "agreement:" line per comparison (what bench/speed/sweep_speed.sh reads) and the bands.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (bench/agreement/compare.py: CSV loading and percentiles)

BANDS = [(1, 255), (256, 511), (512, 1023), (1024, 2047), (2048, 4096)]


def load_rows(path):
    return compare.load(path)


def stats(a, b, lo, hi, only=None):
    common = sorted(n for n in a if n in b and lo <= n <= hi and (only is None or n in only))
    if not common:
        return None
    dev = [abs(a[n] / b[n] - 1) for n in common]
    signed = [a[n] / b[n] - 1 for n in common]
    return {"n": len(common), "median": compare.percentile(dev, 0.5), "p95": compare.percentile(dev, 0.95),
            "max": max(dev), "signed": compare.percentile(signed, 0.5)}


def report(label, a, b, lo, hi, only=None):
    s = stats(a, b, lo, hi, only)
    if s is None:
        print(f"agreement: {label}: no common sizes in [{lo}, {hi}]")
        return
    print(f"agreement: {label} over n={lo}..{hi} ({s['n']} sizes): median {100 * s['median']:.2f} %, "
          f"p95 {100 * s['p95']:.2f} %, max {100 * s['max']:.2f} %, signed median {100 * s['signed']:+.2f} %")
    bands = []
    for blo, bhi in BANDS:
        band = stats(a, b, max(lo, blo), min(hi, bhi), only)
        if band:
            bands.append(f"{max(lo, blo)}..{min(hi, bhi)}: {100 * band['signed']:+.2f} % "
                         f"(abs median {100 * band['median']:.2f} %, n={band['n']})")
    print("    by n (signed median, first/second - 1): " + "; ".join(bands))


def kernel_key(name):
    """A kernel's name without whitespace and parameter list: demanglers differ in spacing."""
    return "".join(name.split("(")[0].split())


def split_by_kernels(ours, torch_kernels, out_dir):
    """Sizes where both ran the same kernels, and those where PyTorch's cuBLAS chose others; the
    second list goes to kernels_differ.csv with both names."""
    same, other = set(), set()
    with open(os.path.join(out_dir, "kernels_differ.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "shapescope", "torch"])
        for n, theirs in sorted(torch_kernels.items()):
            if n not in ours:
                continue
            if [kernel_key(k) for k in ours[n]] == [kernel_key(k) for k in theirs]:
                same.add(n)
            else:
                other.add(n)
                w.writerow([n, ";".join(ours[n]), ";".join(theirs)])
    return same, other


def time_with_torch(args, ns, gaps_ns):
    """Times torch.mm in each order (and reads its kernels) into --out; returns ({order: {n: us}},
    {n: [kernel, ...]})."""
    import torch
    import torch_timing as tt

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    bufs = tt.Buffers(max(ns), props.L2_cache_size, dev)
    print(f"torch {torch.__version__} (its own cuBLAS {tt.cublas_version()}), {props.name}; n={args.n}, "
          f"{args.samples} samples; cold L2 ({props.L2_cache_size >> 20} MiB flush)")
    times = {}
    for order in args.orders.split(","):
        tt.warm_up(bufs, max(ns))
        rows = tt.run(order, gaps_ns if order == "eager-gaps" else ns, args.samples, bufs)
        path = os.path.join(args.out, f"torch_{order}.csv")
        tt.write(path, rows)
        times[order] = {n: med for n, med, _ in rows}
        print(f"timed {len(rows)} sizes in order {order} -> {path}")
    kernels = tt.launched_kernels(ns, bufs) if not args.no_kernels else {}
    if kernels:
        path = os.path.join(args.out, "torch_kernels.csv")
        tt.write_kernels(path, kernels)
        print(f"kernels of {len(kernels)} sizes (torch.profiler) -> {path}")
    return times, kernels


def read_torch(args):
    """What an earlier run left in --out (--reuse): the same as time_with_torch, without a GPU."""
    times = {}
    for order in args.orders.split(","):
        path = os.path.join(args.out, f"torch_{order}.csv")
        if os.path.exists(path):
            times[order] = compare.load(path)
    path = os.path.join(args.out, "torch_kernels.csv")
    kernels = compare.load_kernels(path) if os.path.exists(path) and not args.no_kernels else {}
    print(f"read {', '.join(sorted(times))} and {len(kernels)} sizes' kernels from {args.out}")
    return times, kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True, help="shapescope sweep --format csv")
    ap.add_argument("--n", default="256..4096")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--gaps-n", default="256..1023", help="sizes for the launch-gap order (small ones)")
    ap.add_argument("--out", required=True, help="folder for the torch CSVs")
    ap.add_argument("--orders", default="eager,eager-shuffled,graph-shuffled,eager-gaps")
    ap.add_argument("--no-kernels", action="store_true", help="skip the torch.profiler pass over the sizes")
    ap.add_argument("--reuse", action="store_true",
                    help="compare what an earlier run left in --out instead of timing (no GPU, no torch needed)")
    args = ap.parse_args()

    ns = compare.parse_range(args.n)
    gaps_ns = compare.parse_range(args.gaps_n)
    os.makedirs(args.out, exist_ok=True)
    times, torch_kernels = read_torch(args) if args.reuse else time_with_torch(args, ns, gaps_ns)

    sweep = load_rows(args.sweep)
    ours = compare.load_kernels(args.sweep)
    lo, hi = ns.start, ns.stop - 1
    same, other = split_by_kernels(ours, torch_kernels, args.out) if torch_kernels else (None, None)
    for order in ("eager", "graph-shuffled"):
        if order not in times:
            continue
        report(f"sweep vs torch {order}", sweep, times[order], lo, hi)
        if same is not None and other:
            report(f"sweep vs torch {order}, same kernels", sweep, times[order], lo, hi, same)
            report(f"sweep vs torch {order}, other kernels (kernels_differ.csv)", sweep, times[order], lo, hi, other)
        elif same is not None:
            print(f"agreement: sweep vs torch {order}: PyTorch's cuBLAS ran the same kernels as shapescope's "
                  f"at all {len(same)} sizes")
    # One kernel against several (split-K and its reduction): graphs drop the launch gap between a
    # call's kernels, which eager launches keep inside the event pair.
    single = {n for n, names in ours.items() if len(names) == 1}
    several = {n for n, names in ours.items() if len(names) > 1}
    if "eager" in times:
        report("sweep vs torch eager, calls of one kernel", sweep, times["eager"], lo, hi, single)
        report("sweep vs torch eager, calls of several kernels", sweep, times["eager"], lo, hi, several)
    if "eager-shuffled" in times and "eager" in times:
        report("torch eager-shuffled vs torch eager (order)", times["eager-shuffled"], times["eager"], lo, hi)
    if "graph-shuffled" in times and "eager-shuffled" in times:
        report("torch graph-shuffled vs torch eager-shuffled (graphs)", times["graph-shuffled"],
               times["eager-shuffled"], lo, hi)
        report("torch graph-shuffled vs torch eager-shuffled (graphs), calls of several kernels",
               times["graph-shuffled"], times["eager-shuffled"], lo, hi, several)
    if "eager-gaps" in times and "eager" in times:
        report("torch eager-gaps vs torch eager (launch gaps)", times["eager-gaps"], times["eager"],
               gaps_ns.start, gaps_ns.stop - 1)


if __name__ == "__main__":
    main()
