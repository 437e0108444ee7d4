#!/usr/bin/env python3
"""Agreement of two timings of the same points: |ratio - 1| median and 95th percentile.

    python3 bench/agreement/compare.py sweep.csv torch.csv --from 256     # shapescope vs PyTorch
    python3 bench/agreement/compare.py sweep1.csv sweep2.csv              # repeatability
Each CSV needs columns n (or m/n/k, square) and median_us; shapescope's CSV is filtered to the
cublas backend.
"""
import argparse
import csv


def load(path, column="median_us"):
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("backend", "cublas") != "cublas":
                continue
            if row.get(column, "") not in ("", None):
                out[int(row["n"])] = float(row[column])
    return out


def load_kernels(path):
    """{n: [kernel name, ...]} from a CSV's kernels column (';'-separated, launch order): shapescope's
    CSV (filtered to the cublas backend, as load() is) or torch_timing's torch_kernels.csv."""
    csv.field_size_limit(1 << 30)
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("backend", "cublas") == "cublas" and row.get("kernels"):
                out[int(row["n"])] = row["kernels"].split(";")
    return out


def parse_range(text):
    """LO..HI (inclusive) as a range."""
    lo, hi = (int(x) for x in text.split(".."))
    return range(lo, hi + 1)


BANDS = [(1, 255), (256, 511), (512, 1023), (1024, 2047), (2048, 1 << 30)]


def bands(a, b, common, clocks_a, clocks_b):
    """Per band of n: the signed median of ratio - 1 (a systematic shift between the two runs), the
    median |ratio - 1|, and the signed median of the two runs' SM clock ratio where both have one."""
    for lo, hi in BANDS:
        ns = [n for n in common if lo <= n <= hi]
        if not ns:
            continue
        signed = [a[n] / b[n] - 1 for n in ns]
        line = (f"  n {lo}..{min(hi, max(ns))}: {len(ns)} sizes, signed median {100 * percentile(signed, 0.5):+.2f} %, "
                f"median |ratio-1| {100 * percentile([abs(x) for x in signed], 0.5):.2f} %")
        clk = [clocks_b[n] / clocks_a[n] - 1 for n in ns if clocks_a.get(n) and clocks_b.get(n)]
        if clk:
            line += f", clock (second/first) {100 * percentile(clk, 0.5):+.2f} %"
        print(line)


def percentile(values, q):
    values = sorted(values)
    pos = (len(values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--from", dest="lo", type=int, default=1)
    ap.add_argument("--to", dest="hi", type=int, default=1 << 30)
    ap.add_argument("--bands", action="store_true", help="signed and absolute differences per band of n")
    args = ap.parse_args()
    a, b = load(args.first), load(args.second)
    common = sorted(n for n in a if n in b and args.lo <= n <= args.hi)
    dev = [abs(a[n] / b[n] - 1) for n in common]
    worst = sorted(common, key=lambda n: -abs(a[n] / b[n] - 1))[:5]
    print(f"{args.first} vs {args.second}: {len(common)} sizes in [{args.lo}, {min(args.hi, max(common))}]: "
          f"median |ratio-1| {100 * percentile(dev, 0.5):.2f} %, p95 {100 * percentile(dev, 0.95):.2f} %, "
          f"max {100 * max(dev):.2f} %")
    print("  worst: " + ", ".join(f"n={n} {a[n]:.1f}/{b[n]:.1f} us" for n in worst))
    if args.bands:
        bands(a, b, common, load(args.first, "sm_clock_mhz"), load(args.second, "sm_clock_mhz"))


if __name__ == "__main__":
    main()
