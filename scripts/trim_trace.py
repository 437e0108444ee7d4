#!/usr/bin/env python3
"""Trim a PyTorch profiler trace (Chrome trace JSON) to what `shapescope`'s trace import reads, for
test fixtures, and count its GEMM kernels per shape from the kernel side as an independent check.

    scripts/trim_trace.py /work/traces/gpt2.json tests/data/traces/gpt2

writes tests/data/traces/gpt2.json (the trimmed trace) and gpt2.kernels.csv (GEMM kernels per shape).

Kept: every cpu_op whose name is a GEMM op (aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm,
_grouped_mm: outer ones too, so that the nesting is tested), the launches (cuda_runtime/cuda_driver)
and kernels that share a correlation id with them, the trace's metadata; args other than the ones the
import reads are dropped. The per-shape counts follow each GEMM kernel (by its name: nvjet, cutlass
gemm kernels, cuBLAS gemm kernels; not split-K reductions or grouped-GEMM setup kernels) through its
launch's correlation to the External id of the op that launched it, and read M, N, K (and batch or
groups) from that op's Input Dims: what the import must find as calls per shape.
"""
import csv
import json
import re
import sys

GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
            "aten::_scaled_mm", "aten::_grouped_mm"}
OP_ARGS = ("External id", "Input Dims", "Input Strides", "Input type")
LINK_ARGS = ("External id", "correlation")
# The kernel that does a GEMM's work; reductions and setup kernels launched with it are not counted.
GEMM_KERNEL = re.compile(r"nvjet|gemm|Gemm")
NOT_GEMM_KERNEL = re.compile(r"splitKreduce|prepare_grouped_gemm_data|reduce_kernel")


def shape_key(name, dims):
    """(m, n, k, batch, groups) of the GEMM an op runs, from its Input Dims alone."""
    if name == "aten::_grouped_mm":
        a, b, offs = dims[0], dims[1], dims[2]
        groups = b[0] if len(b) == 3 else (a[0] if len(a) == 3 else offs[0])
        # Total work: rows (2-D A) or columns/K split over the groups; the key keeps the totals.
        if len(a) == 2 and len(b) == 3:
            return (a[0], b[2], a[1], 1, groups)
        if len(a) == 2 and len(b) == 2:
            return (a[0], b[1], a[1], 1, groups)
        if len(a) == 3 and len(b) == 3:
            return (a[0] * a[1], b[2], a[2], 1, groups)
        return (a[1], b[1], a[2], 1, groups)
    first = 1 if name in ("aten::addmm", "aten::baddbmm") else 0
    a, b = dims[first], dims[first + 1]
    if name == "aten::linear":
        rows = 1
        for d in a[:-1]:
            rows *= d
        return (rows, b[0], a[-1], 1, 1)
    if len(a) == 3 and len(b) == 3:
        return (a[1], b[2], a[2], a[0], 1)
    if len(b) == 2:
        rows = 1
        for d in a[:-1]:
            rows *= d
        return (rows, b[1], b[0], 1, 1)
    raise ValueError(f"{name} {dims}")


def link(events):
    """The GEMM ops, the launches and kernels that share a correlation id with them, and the maps
    from a kernel's correlation to its op's External id and from that id to the op."""
    ops = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") in GEMM_OPS]
    op_of = {e["args"]["External id"]: e for e in ops if "External id" in e.get("args", {})}
    launches = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and e.get("args", {}).get("External id") in op_of and "correlation" in e["args"]]
    correlations = {e["args"]["correlation"]: e["args"]["External id"] for e in launches}
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("args", {}).get("correlation") in correlations]
    return ops, launches, kernels, correlations, op_of


def gemm_kernels_per_shape(events):
    """{(m, n, k, batch, groups): [GEMM kernels, their time in us]} from the kernel side: each GEMM
    kernel followed through its launch's correlation to the op that launched it."""
    _, _, kernels, correlations, op_of = link(events)
    per_shape = {}
    for k in kernels:
        if not GEMM_KERNEL.search(k["name"]) or NOT_GEMM_KERNEL.search(k["name"]):
            continue
        op = op_of[correlations[k["args"]["correlation"]]]
        entry = per_shape.setdefault(shape_key(op["name"], op["args"]["Input Dims"]), [0, 0.0])
        entry[0] += 1
        entry[1] += k.get("dur", 0)
    return per_shape


def main():
    source, out = sys.argv[1], sys.argv[2]
    with open(source) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    ops, launches, kernels, _, _ = link(events)

    def slim(e, keys):
        kept = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in e}
        kept["args"] = {k: e["args"][k] for k in keys if k in e.get("args", {})}
        return kept

    trimmed = {k: v for k, v in trace.items() if k != "traceEvents"}
    trimmed["traceEvents"] = ([slim(e, OP_ARGS) for e in ops] + [slim(e, LINK_ARGS) for e in launches] +
                              [slim(e, LINK_ARGS) for e in kernels])
    with open(out + ".json", "w") as f:
        json.dump(trimmed, f, separators=(",", ":"))

    counts = {key: n for key, (n, _) in gemm_kernels_per_shape(events).items()}
    with open(out + ".kernels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "batch", "groups", "kernels"])
        for key, n in sorted(counts.items()):
            w.writerow(list(key) + [n])
    print(f"{out}.json: {len(trimmed['traceEvents'])} events; {sum(counts.values())} GEMM kernels, "
          f"{len(counts)} shapes")


if __name__ == "__main__":
    main()
