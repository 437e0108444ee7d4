#!/usr/bin/env python3
"""The wave saw-tooth table of bench/kernels/ladder.sh: for 04 128x128 and 05 128x256, TFLOP/s of
dp, persistent and stream-K next to cuBLAS at every size of a sweep CSV, and the share of dp's wave
loss (dp time x (1 - wave efficiency)) that persistent and stream-K win back where the last wave
is under a quarter full.

  python3 bench/kernels/wave_recovery.py waves.csv
"""
import csv, sys, collections, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.defaultdict(dict)
for r in rows:
    by[int(r["n"])][r["algo"]] = r
for kernel in ("04_mma_pipelined:128x128", "05_wgmma_tma:128x256"):
    print(f"\n{kernel}: M = N = n; TFLOP/s; recovered = share of dp's wave loss "
          f"(dp time x (1 - wave efficiency)) won back, where the last wave is < 1/4 full")
    print(f"{'n':>5} {'tiles':>6} {'slots':>5} {'waves':>6} {'dp':>7} {'persist':>8} {'streamk':>8} "
          f"{'cublas':>7}  {'rec. persist':>12} {'rec. streamk':>12}")
    rec = {"persistent": [], "streamk": []}
    for n in sorted(by):
        d = by[n]
        dp = d.get(kernel + ":dp")
        if not dp:
            continue
        pe, sk, cb = d.get(kernel + ":persistent"), d.get(kernel + ":streamk"), d.get("default")
        waves, eff = float(dp["waves"]), float(dp["wave_efficiency"])
        fill = waves - int(waves)
        tf = lambda r: float(r["tflops"]) if r else float("nan")
        line = (f"{n:>5} {dp['tiles']:>6} {dp.get('slots', '-'):>5} {waves:>6.2f} {tf(dp):>7.1f} "
                f"{tf(pe):>8.1f} {tf(sk):>8.1f} {tf(cb):>7.1f}")
        if 0 < fill < 0.25:
            loss = float(dp["median_us"]) * (1 - eff)
            for name, r in (("persistent", pe), ("streamk", sk)):
                if r and loss > 0:
                    rec[name].append((float(dp["median_us"]) - float(r["median_us"])) / loss)
            line += "".join(f"  {100 * rec[name][-1]:>11.0f}%" for name in ("persistent", "streamk")
                            if rec[name])
        print(line)
    for name, values in rec.items():
        if values:
            print(f"{kernel} {name} recovers, where the last wave is < 1/4 full: median "
                  f"{100 * statistics.median(values):.0f} % of dp's wave loss (min "
                  f"{100 * min(values):.0f} %, max {100 * max(values):.0f} %, {len(values)} sizes)")
