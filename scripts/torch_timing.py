#!/usr/bin/env python3
"""Independent timing of square bf16 torch.mm, to cross-check shapescope's numbers.

Same quantity as `shapescope sweep` (one call's GPU time with a cold L2) by a different route:
PyTorch's own allocator, torch.mm (cuBLAS), eager launches, CUDA events per sample. A long
torch.cuda._sleep first keeps the host ahead of the GPU, so no launch gap sits between the events.
The flush is a write of an L2-sized buffer before each sample, as shapescope does.

    python3 scripts/torch_timing.py --n 256..4096 --samples 10 --out torch.csv
"""
import argparse
import csv
import statistics

import torch


def parse_range(text):
    lo, hi = (int(x) for x in text.split(".."))
    return range(lo, hi + 1)


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "median_us", "min_us"])
        w.writerows(rows)


def shuffled_passes(ns, samples, a_all, b_all, c_all, flush, chunk=400):
    """Each pass: graphs of `chunk` sizes in a fresh random order, flush/event/mm/event each."""
    import random
    rng = random.Random(0)
    sizes = list(ns)
    times = {n: [] for n in sizes}
    for _ in range(samples):
        rng.shuffle(sizes)
        for lo in range(0, len(sizes), chunk):
            part = sizes[lo:lo + chunk]
            ev = {n: (torch.cuda.Event(enable_timing=True, external=True),
                      torch.cuda.Event(enable_timing=True, external=True)) for n in part}
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for n in part:
                    flush.fill_(n & 0xFF)
                    ev[n][0].record()
                    torch.mm(a_all[: n * n].view(n, n), b_all[: n * n].view(n, n), out=c_all[: n * n].view(n, n))
                    ev[n][1].record()
            graph.replay()
            torch.cuda.synchronize()
            for n in part:
                times[n].append(ev[n][0].elapsed_time(ev[n][1]) * 1000.0)
    return [(n, statistics.median(times[n]), min(times[n])) for n in sorted(times)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="256..4096")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--graph", action="store_true",
                    help="capture flush/event/mm/event in CUDA graphs, as shapescope does")
    ap.add_argument("--shuffled", action="store_true",
                    help="graph mode with shapescope's order: each pass over all sizes in a new random "
                         "order, so a size's neighbours are other sizes (other kernels)")
    args = ap.parse_args()
    ns = parse_range(args.n)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = props.L2_cache_size
    nmax = max(ns)
    torch.manual_seed(0)
    a_all = torch.randn(nmax * nmax, device=dev, dtype=torch.bfloat16)
    b_all = torch.randn(nmax * nmax, device=dev, dtype=torch.bfloat16)
    c_all = torch.empty(nmax * nmax, device=dev, dtype=torch.bfloat16)
    flush = torch.empty(l2, device=dev, dtype=torch.uint8)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(args.samples)]
    # Warm-up: half a second of large GEMMs.
    a = a_all.view(nmax, nmax)
    for _ in range(200):
        torch.mm(a, a, out=c_all.view(nmax, nmax))
    torch.cuda.synchronize()
    if args.shuffled:
        rows = shuffled_passes(ns, args.samples, a_all, b_all, c_all, flush)
        write(args.out, rows)
        print(f"torch {torch.__version__}, {props.name}: {len(rows)} sizes (shuffled passes) -> {args.out}")
        return
    if args.graph:
        events = [(torch.cuda.Event(enable_timing=True, external=True),
                   torch.cuda.Event(enable_timing=True, external=True)) for _ in range(args.samples)]
    rows = []
    for n in ns:
        a = a_all[: n * n].view(n, n)
        b = b_all[: n * n].view(n, n)
        c = c_all[: n * n].view(n, n)
        torch.mm(a, b, out=c)  # first call of a shape: cuBLAS heuristics, untimed
        if args.graph:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for start, stop in events:
                    flush.fill_(n & 0xFF)
                    start.record()
                    torch.mm(a, b, out=c)
                    stop.record()
            graph.replay()
        else:
            torch.cuda._sleep(4_000_000)  # ~2 ms of GPU time while the host queues the samples
            for start, stop in events:
                flush.fill_(n & 0xFF)
                start.record()
                torch.mm(a, b, out=c)
                stop.record()
        torch.cuda.synchronize()
        us = [s.elapsed_time(e) * 1000.0 for s, e in events]
        rows.append((n, statistics.median(us), min(us)))
    write(args.out, rows)
    print(f"torch {torch.__version__}, {props.name}: {len(rows)} sizes -> {args.out}")


if __name__ == "__main__":
    main()
