#!/usr/bin/env python3
"""The performance model's error on the test grid: `sweep --dry-run --predict` of each layout
(W/predicted-test-L.txt) against the test grid's measured points (W/test.samples.csv), per layout and
alignment (aligned: every row and base 16-byte aligned)."""
import csv
import statistics
import sys
from collections import defaultdict


def alignment(elements, size=2):
    value = 1
    while value < 16 and (elements * size) % (value * 2) == 0:
        value *= 2
    return value


def main(w):
    rows = list(csv.reader(open(f"{w}/test.samples.csv")))
    header = rows[1]
    measured = {}
    for r in rows[2:]:
        d = dict(zip(header, r))
        measured[(d["layout"], int(d["m"]), int(d["n"]), int(d["k"]))] = float(d["median_us"])
    errors = defaultdict(list)
    for layout in ("nn", "nt", "tn"):
        for line in open(f"{w}/predicted-test-{layout}.txt"):
            f = line.split()
            if len(f) < 9 or not all(x.isdigit() for x in f[:8]):
                continue
            key = (layout, int(f[0]), int(f[1]), int(f[2]))
            aligned = min(alignment(int(f[4])), alignment(int(f[5])), alignment(int(f[6]))) == 16
            errors[(layout, "aligned" if aligned else "unaligned")].append(abs(float(f[8]) / measured[key] - 1))
    for (layout, kind), e in sorted(errors.items()):
        e.sort()
        print(f"bf16 {layout} {kind:9s} {len(e):4d} points  median {100 * statistics.median(e):5.1f} %  "
              f"p95 {100 * e[int(0.95 * len(e)) - 1]:5.1f} %")


if __name__ == "__main__":
    main(sys.argv[1])
