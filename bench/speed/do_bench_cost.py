#!/usr/bin/env python3
"""How long triton.testing.do_bench takes over the same points as `shapescope sweep --n 1..4096`.

do_bench (defaults: warmup 25 ms, rep 100 ms, L2 flush before each rep) costs ~0.12 s per point,
so the full 4096 points take minutes. This times every STEP-th size and scales the wall time up.

    python3 bench/speed/do_bench_cost.py --n 1..4096 --step 16
"""
import argparse
import time

import torch
import triton.testing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1..4096")
    ap.add_argument("--step", type=int, default=16)
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.n.split(".."))
    nmax = hi
    a_all = torch.randn(nmax * nmax, device="cuda", dtype=torch.bfloat16)
    b_all = torch.randn(nmax * nmax, device="cuda", dtype=torch.bfloat16)
    sizes = list(range(lo, hi + 1, args.step))
    start = time.perf_counter()
    for n in sizes:
        a = a_all[: n * n].view(n, n)
        b = b_all[: n * n].view(n, n)
        triton.testing.do_bench(lambda: torch.mm(a, b), return_mode="median")
    wall = time.perf_counter() - start
    total = hi - lo + 1
    print(f"do_bench: {len(sizes)} of {total} sizes in {wall:.1f} s ({wall / len(sizes):.3f} s/point); "
          f"all {total} sizes: ~{wall / len(sizes) * total:.0f} s ({wall / len(sizes) * total / 60:.1f} min)")


if __name__ == "__main__":
    main()
