#!/usr/bin/env python3
"""Agreement of two timings of the same points: |ratio - 1| median and 95th percentile.

    python3 scripts/compare.py sweep.csv torch.csv --from 256     # shapescope vs PyTorch
    python3 scripts/compare.py sweep1.csv sweep2.csv              # repeatability
Each CSV needs columns n (or m/n/k, square) and median_us; shapescope's CSV is filtered to the
cublas backend.
"""
import argparse
import csv


def load(path):
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("backend", "cublas") != "cublas":
                continue
            out[int(row["n"])] = float(row["median_us"])
    return out


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
    args = ap.parse_args()
    a, b = load(args.first), load(args.second)
    common = sorted(n for n in a if n in b and args.lo <= n <= args.hi)
    dev = [abs(a[n] / b[n] - 1) for n in common]
    worst = sorted(common, key=lambda n: -abs(a[n] / b[n] - 1))[:5]
    print(f"{args.first} vs {args.second}: {len(common)} sizes in [{args.lo}, {min(args.hi, max(common))}]: "
          f"median |ratio-1| {100 * percentile(dev, 0.5):.2f} %, p95 {100 * percentile(dev, 0.95):.2f} %, "
          f"max {100 * max(dev):.2f} %")
    print("  worst: " + ", ".join(f"n={n} {a[n]:.1f}/{b[n]:.1f} us" for n in worst))


if __name__ == "__main__":
    main()
