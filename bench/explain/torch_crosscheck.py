#!/usr/bin/env python3
"""Independent PyTorch timing of the GEMMs behind explain's verdicts.

Reads `shapescope explain ... --json` files and, for each, times with PyTorch the target, the point
the verdict compares with, and the layout controls: the same M, N, K, layout, leading dimensions
and base offsets, built as strided views (torch.as_strided) so that cuBLAS sees the same pointers
and strides. Timing as bench/agreement/torch_timing.py does it: CUDA graphs of flush -> event -> mm ->
event, in shuffled passes, median of the samples. Prints one row per point: shapescope's median,
PyTorch's, and their ratio.

    python3 bench/explain/torch_crosscheck.py out/ex_*.json --samples 10
"""
import argparse
import json
import random
import statistics
import sys

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}


def operands(p, dtype):
    """A, B, C as strided views over buffers with the point's leading dimensions and offsets."""
    m, n, k = p["m"], p["n"], p["k"]
    lda, ldb, off_a, off_b = p["lda"], p["ldb"], p["off_a"], p["off_b"]
    a_t, b_t = p["layout"][0] == "t", p["layout"][1] == "t"
    a_rows, b_rows = (k if a_t else m), (n if b_t else k)
    a_buf = torch.randn(off_a + a_rows * lda, device="cuda").to(dtype)
    b_buf = torch.randn(off_b + b_rows * ldb, device="cuda").to(dtype)
    a = torch.as_strided(a_buf, (a_rows, k if not a_t else m), (lda, 1), off_a)
    b = torch.as_strided(b_buf, (b_rows, n if not b_t else k), (ldb, 1), off_b)
    c_buf = torch.empty(p["off_c"] + m * p["ldc"], device="cuda", dtype=dtype)
    c = torch.as_strided(c_buf, (m, n), (p["ldc"], 1), p["off_c"])
    return (a.t() if a_t else a), (b.t() if b_t else b), c


def time_all(calls, samples, flush):
    """calls: {key: (a, b, c)}; returns {key: median us}."""
    rng = random.Random(0)
    keys = list(calls)
    times = {key: [] for key in keys}
    for _ in range(samples):
        rng.shuffle(keys)
        ev = {key: (torch.cuda.Event(enable_timing=True, external=True),
                    torch.cuda.Event(enable_timing=True, external=True)) for key in keys}
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i, key in enumerate(keys):
                a, b, c = calls[key]
                flush.fill_(i & 0xFF)
                ev[key][0].record()
                torch.mm(a, b, out=c)
                ev[key][1].record()
        graph.replay()
        torch.cuda.synchronize()
        for key in keys:
            times[key].append(ev[key][0].elapsed_time(ev[key][1]) * 1000.0)
    return {key: statistics.median(v) for key, v in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    flush = torch.empty(int(torch.cuda.get_device_properties(0).L2_cache_size), dtype=torch.uint8, device="cuda")
    rows = []
    for path in args.files:
        doc = json.load(open(path))
        against = doc["verdict"]["against"]
        for entry in doc["points"]:
            p = entry["point"]
            role = entry["role"]
            wanted = role in ("target", "aligned 16 B", "aligned 32 B") or (role == "neighbour" and entry["label"] == against)
            if not wanted or p.get("backend") not in ("cublas", "cublaslt") or p.get("median_us") is None:
                continue
            if p["dtype"] not in DTYPES or p["batch"] != 1:
                continue
            rows.append((doc["shape"], role, entry["label"], p))
    # Warm up, then all points in one shuffled set of passes.
    calls = {i: operands(p, DTYPES[p["dtype"]]) for i, (_, _, _, p) in enumerate(rows)}
    for a, b, c in calls.values():
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    medians = time_all(calls, args.samples, flush)
    print(f"{'explain':<28} {'role':<13} {'point':<26} {'shapescope [us]':>15} {'torch [us]':>11} {'torch/ss':>8}")
    ratios = []
    for i, (shape, role, label, p) in enumerate(rows):
        ratio = medians[i] / p["median_us"]
        ratios.append(abs(ratio - 1))
        print(f"{shape:<28} {role:<13} {label[:26]:<26} {p['median_us']:>15.2f} {medians[i]:>11.2f} {ratio:>8.3f}")
    if ratios:
        ratios.sort()
        print(f"points {len(ratios)}: median |torch/shapescope - 1| {statistics.median(ratios) * 100:.2f} %, "
              f"max {ratios[-1] * 100:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
