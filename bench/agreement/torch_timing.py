#!/usr/bin/env python3
"""Independent timing of square bf16 torch.mm, to cross-check shapescope's numbers.

Same quantity as `shapescope sweep` (one call's GPU time with a cold L2) by a different route:
PyTorch's own allocator, torch.mm (cuBLAS), CUDA events per sample, an L2-sized flush (a write of an
L2-sized buffer) before each sample, as shapescope does. Three orders, which together separate the
effects behind a difference (bench/agreement/agreement.py runs them and compares):

  eager            (default) each size's samples back to back, eager launches; a long
                   torch.cuda._sleep first keeps the host ahead, so no launch gap sits between the
                   events. The same kernel runs again and again: its code, constants and TLB
                   entries stay warm, the flush only evicts data from L2.
  eager-shuffled   every pass over all sizes in a new random order (shapescope's order), eager
                   launches queued behind a sleep in blocks: each sample follows another kernel.
  graph-shuffled   the same order in CUDA graphs of flush/event/mm/event: shapescope's method.
  eager-gaps       like eager but without the sleep: the host launches as the GPU runs, so a small
                   kernel's event pair can hold the host's launch gap (to show that effect).
  graph            each size's samples back to back in one CUDA graph (no launch gap, same order
                   as eager).

    python3 bench/agreement/torch_timing.py --n 256..4096 --samples 10 --out torch.csv
    python3 bench/agreement/torch_timing.py --n 256..4096 --order eager-shuffled --out torch_shuffled.csv
"""
import argparse
import csv
import random
import statistics

import torch

from compare import parse_range  # bench/agreement/compare.py, beside this script

ORDERS = ("eager", "eager-shuffled", "graph-shuffled", "eager-gaps", "graph")


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "median_us", "min_us"])
        w.writerows(rows)


class Buffers:
    """Operands at the largest size, C, and the flush buffer; random normal data (never zeros)."""

    def __init__(self, nmax, l2_bytes, dev):
        torch.manual_seed(0)
        self.a = torch.randn(nmax * nmax, device=dev, dtype=torch.bfloat16)
        self.b = torch.randn(nmax * nmax, device=dev, dtype=torch.bfloat16)
        self.c = torch.empty(nmax * nmax, device=dev, dtype=torch.bfloat16)
        self.flush = torch.empty(l2_bytes, device=dev, dtype=torch.uint8)

    def views(self, n):
        return (self.a[: n * n].view(n, n), self.b[: n * n].view(n, n), self.c[: n * n].view(n, n))


def sample(bufs, n, events):
    a, b, c = bufs.views(n)
    bufs.flush.fill_(n & 0xFF)
    events[0].record()
    torch.mm(a, b, out=c)
    events[1].record()


def summarize(times):
    return [(n, statistics.median(us), min(us)) for n, us in sorted(times.items())]


def eager_consecutive(ns, samples, bufs, prequeue=True):
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(samples)]
    times = {}
    for n in ns:
        a, b, c = bufs.views(n)
        torch.mm(a, b, out=c)  # first call of a shape: cuBLAS heuristics, untimed
        if prequeue:
            torch.cuda._sleep(4_000_000)  # ~2 ms of GPU time while the host queues the samples
        for pair in events:
            sample(bufs, n, pair)
        torch.cuda.synchronize()
        times[n] = [s.elapsed_time(e) * 1000.0 for s, e in events]
    return summarize(times)


def graph_consecutive(ns, samples, bufs):
    """Each size's samples back to back in one graph."""
    events = [(torch.cuda.Event(enable_timing=True, external=True),
               torch.cuda.Event(enable_timing=True, external=True)) for _ in range(samples)]
    times = {}
    for n in ns:
        a, b, c = bufs.views(n)
        torch.mm(a, b, out=c)  # first call of a shape: cuBLAS heuristics, untimed
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for pair in events:
                sample(bufs, n, pair)
        graph.replay()
        torch.cuda.synchronize()
        times[n] = [s.elapsed_time(e) * 1000.0 for s, e in events]
    return summarize(times)


def eager_shuffled(ns, samples, bufs, block=128):
    """Each pass in a new random order; blocks of sizes queued behind a sleep, then read. The host
    needs ~40 us to queue one sample and the GPU at least ~25 us (flush and a small GEMM) to run it,
    so ~5 ms of sleep keeps the host ahead through a block of 128 however they are mixed."""
    rng = random.Random(0)
    sizes = list(ns)
    for n in sizes:  # heuristics and first launches, untimed
        a, b, c = bufs.views(n)
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    times = {n: [] for n in sizes}
    for _ in range(samples):
        rng.shuffle(sizes)
        for lo in range(0, len(sizes), block):
            part = sizes[lo:lo + block]
            ev = {n: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for n in part}
            torch.cuda._sleep(10_000_000)  # ~5 ms of GPU time
            for n in part:
                sample(bufs, n, ev[n])
            torch.cuda.synchronize()
            for n in part:
                times[n].append(ev[n][0].elapsed_time(ev[n][1]) * 1000.0)
    return summarize(times)


def graph_shuffled(ns, samples, bufs, chunk=400):
    """Each pass: graphs of `chunk` sizes in a fresh random order, flush/event/mm/event each."""
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
                    sample(bufs, n, ev[n])
            graph.replay()
            torch.cuda.synchronize()
            for n in part:
                times[n].append(ev[n][0].elapsed_time(ev[n][1]) * 1000.0)
    return summarize(times)


def launched_kernels(ns, bufs):
    """The kernels each size's torch.mm launches (torch.profiler, one call per size, flush excluded):
    {n: [kernel name, ...]} in launch order. PyTorch ships its own cuBLAS, whose heuristics may pick
    another kernel than the cuBLAS shapescope links: bench/agreement/agreement.py splits the agreement by
    whether both ran the same kernels."""
    from torch.profiler import ProfilerActivity, profile

    for n in ns:  # heuristics and first launches outside the profile
        a, b, c = bufs.views(n)
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for n in ns:
            a, b, c = bufs.views(n)
            torch.mm(a, b, out=c)
        torch.cuda.synchronize()
    out = {}
    for event in prof.events():
        if event.name != "aten::mm" or not event.input_shapes or not event.input_shapes[0]:
            continue
        n = event.input_shapes[0][0]
        # cuBLAS's own memsets (PyTorch's profile shows one before the kernel for many sizes >= 1024)
        # are not kernels; shapescope records kernels only.
        names = [k.name for k in event.kernels if not k.name.startswith(("Memset", "Memcpy"))]
        if names:
            out[n] = names
    return out


def write_kernels(path, kernels):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "kernels"])
        for n, names in sorted(kernels.items()):
            w.writerow([n, ";".join(names)])


def cublas_version():
    """The version of the cuBLAS this process loaded (PyTorch's own), as MAJOR.MINOR.PATCH."""
    import ctypes

    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "libcublas.so" in line and "/" in line})
    for path in paths:
        lib = ctypes.CDLL(path)
        parts = []
        for prop in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int()
            if lib.cublasGetProperty(prop, ctypes.byref(value)) != 0:
                break
            parts.append(str(value.value))
        if len(parts) == 3:
            return ".".join(parts)
    return "unknown"


def warm_up(bufs, nmax):
    """Half a second of large GEMMs, as shapescope warms up."""
    a, _, c = bufs.views(nmax)
    for _ in range(200):
        torch.mm(a, a, out=c)
    torch.cuda.synchronize()


def run(order, ns, samples, bufs):
    if order == "eager":
        return eager_consecutive(ns, samples, bufs)
    if order == "eager-gaps":
        return eager_consecutive(ns, samples, bufs, prequeue=False)
    if order == "eager-shuffled":
        return eager_shuffled(ns, samples, bufs)
    if order == "graph":
        return graph_consecutive(ns, samples, bufs)
    return graph_shuffled(ns, samples, bufs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="256..4096")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--order", choices=ORDERS, default="eager")
    ap.add_argument("--graph", action="store_true", help="(older name) --order graph")
    ap.add_argument("--shuffled", action="store_true", help="(older name) --order graph-shuffled")
    args = ap.parse_args()
    order = "graph-shuffled" if args.shuffled else "graph" if args.graph else args.order
    ns = parse_range(args.n)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    bufs = Buffers(max(ns), props.L2_cache_size, dev)
    warm_up(bufs, max(ns))
    rows = run(order, ns, args.samples, bufs)
    write(args.out, rows)
    print(f"torch {torch.__version__}, {props.name}: {len(rows)} sizes ({order}) -> {args.out}")


if __name__ == "__main__":
    main()
