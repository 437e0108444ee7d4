#!/usr/bin/env python3
"""A performance model's error on measured points it was not fitted on, its pad decisions against
measured pad's, and a plan's GPU time. No GPU: it reads what calibrate.sh and evaluate.sh wrote.

  model_error.py error MEASURED.samples.csv PREDICTED.txt...   per test set, dtype, layout, batched or
      not, and row alignment (aligned; unaligned, and apart by the class's bytes): median, p95 (FIT=
      FITTED.samples.csv in the environment: also apart, the points whose shape the fit measured too)
  model_error.py pad MEASURED-pad.json PREDICTED-pad.json...    each dimension: measured and predicted action
  model_error.py cost PREDICTED.txt...                         each plan's points and estimated GPU time

PREDICTED.txt: `sweep --dry-run --predict` output (rows M N K batch lda ldb ldc offset predicted ...),
one file per sweep, named ...predicted-SET-DTYPE-LAYOUT.txt (or ...predicted-SET-LAYOUT.txt: bf16).
A point's class is its rows' alignment, as the model's (model/perf_model.hpp): the least of A's, B's
and C's row bytes' largest power of two, at most 16 (aligned: 16)."""
import csv
import json
import os
import re
import statistics
import sys
from collections import defaultdict

INPUT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4, "fp8": 1}
OUTPUT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4, "fp8": 2}  # fp8 GEMMs write bf16


def alignment(elements, size=2):
    value = 1
    while value < 16 and (elements * size) % (value * 2) == 0:
        value *= 2
    return value


def quantile(values, q):
    """numpy's linear quantile, as the model's own p95."""
    v = sorted(values)
    x = q * (len(v) - 1)
    i = int(x)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (x - i)


def measured_times(path):
    rows = list(csv.reader(open(path)))
    header = rows[1]
    out = {}
    for r in rows[2:]:
        d = dict(zip(header, r))
        key = (d["dtype"], d["layout"], int(d["m"]), int(d["n"]), int(d["k"]), int(d["batch"]))
        out[key] = float(d["median_us"])
    return out


def plan_of(path):
    """(set, dtype, layout) from a predicted file's name."""
    m = re.search(r"predicted-(?:(.+)-)?(bf16|fp16|fp32|tf32|fp8)-(nn|nt|tn|tt)\.txt$", path)
    if m:
        return m.group(1) or "grid", m.group(2), m.group(3)
    m = re.search(r"(?:predicted-)?([^/]*)-(nn|nt|tn|tt)\.txt$", path)
    return m.group(1), "bf16", m.group(2)


def predicted_rows(path):
    """Each planned point's numbers: M N K batch lda ldb ldc offset, and its predicted time (None: not
    predicted)."""
    for line in open(path):
        f = line.split()
        if len(f) < 9 or not all(x.isdigit() for x in f[:8]):
            continue
        try:
            us = float(f[8])
        except ValueError:
            us = None
        yield [int(x) for x in f[:8]], us


def class_of(dtype, lda, ldb, ldc):
    a, c = INPUT_BYTES[dtype], OUTPUT_BYTES[dtype]
    return min(alignment(lda, a), alignment(ldb, a), alignment(ldc, c))


def error(measured_path, predicted_paths):
    measured = measured_times(measured_path)
    fitted = measured_times(os.environ["FIT"]) if os.environ.get("FIT") else {}
    errors = defaultdict(list)
    missing = defaultdict(int)
    for path in predicted_paths:
        test_set, dtype, layout = plan_of(path)
        for (m, n, k, batch, lda, ldb, ldc, _), us in predicted_rows(path):
            key = (dtype, layout, m, n, k, batch)
            if key not in measured:
                continue
            align = class_of(dtype, lda, ldb, ldc)
            shape = "batched" if batch > 1 else "single"
            if us is None:
                missing[(test_set, dtype, layout, shape, align)] += 1
                continue
            e = abs(us / measured[key] - 1)
            kinds = ["aligned"] if align == 16 else ["unaligned", f"  {align}-byte rows"]
            whiches = ["all"] + (["fit measured it" if key in fitted else "fit never saw it"] if fitted else [])
            for which in whiches:
                for kind in kinds:
                    for s in (test_set, "all sets"):
                        errors[(s, dtype, layout, shape, kind, which)].append(e)
    # "all sets" where a dtype, layout and shape has points in more than one set.
    sets = defaultdict(set)
    for (test_set, dtype, layout, shape, _, _) in errors:
        sets[(dtype, layout, shape)].add(test_set)
    errors = {k: v for k, v in errors.items() if k[0] != "all sets" or len(sets[k[1:4]]) > 2}
    order = {"aligned": 0, "unaligned": 1}
    rows = sorted(errors.items(), key=lambda kv: (kv[0][0] == "all sets", kv[0][0], kv[0][1], kv[0][2], kv[0][3],
                                                  kv[0][5] != "all", kv[0][5], order.get(kv[0][4], 2), kv[0][4]))
    print(f"{'set':12s} {'dtype':5s} {'layout':6s} {'shape':7s} {'class':17s} {'which':16s} points  median     p95")
    for (test_set, dtype, layout, shape, kind, which), e in rows:
        print(f"{test_set:12s} {dtype:5s} {layout:6s} {shape:7s} {kind:17s} {which:16s} {len(e):6d} "
              f"{100 * statistics.median(e):6.1f} % {100 * quantile(e, 0.95):6.1f} %")
    for (test_set, dtype, layout, shape, align), count in sorted(missing.items()):
        print(f"{test_set} {dtype} {layout} {shape} {align}-byte rows: {count} measured points not predicted "
              "(the model has no such class)")
    return errors


def cost(predicted_paths):
    """Each plan's points and GPU time from its predicted times: per point 9 samples of the kernel and
    the L2 flush, times the sweep's wall over that floor (the 2026-11-27 H100 grid: 9 samples median,
    21.6 us a flush, wall 1.85x the floor), plus 3 s a sweep for its start, clock warm-up and
    annotation. SCALE=fp32=16,fp8=0.6 in the environment: a dtype's predicted time above the launch
    floor times that factor (its plan was predicted in another dtype, bf16)."""
    samples, flush_us, wall, start_s = 9, 21.6, 1.85, 3.0
    scales = dict(item.split("=") for item in os.environ.get("SCALE", "").split(",") if item)
    total = 0.0
    print(f"{'sweep':24s} points  one pass [ms]  estimated [s]")
    for path in predicted_paths:
        name = re.sub(r"^.*predicted-|\.txt$", "", path)
        _, dtype, _ = plan_of(path)
        scale = float(scales.get(dtype, 1))
        points, one_pass, unpredicted = 0, 0.0, 0
        for _, us in predicted_rows(path):
            points += 1
            if us is None:
                unpredicted += 1
                continue
            one_pass += 6.3 + max(us - 6.3, 0) * scale  # 6.3 us: the H100's launch floor
        seconds = wall * samples * (one_pass + points * flush_us) / 1e6 + start_s
        total += seconds
        note = f"  ({unpredicted} not predicted)" if unpredicted else ""
        print(f"{name:24s} {points:6d} {one_pass / 1e3:14.1f} {seconds:14.1f}{note}")
    print(f"{'total':24s} {'':6s} {'':14s} {total:14.1f}  ({total / 60:.1f} min)")


def decisions(path):
    doc = json.load(open(path))
    return {d["name"]: (d["value"], d["recommendation"]["action"], d["recommendation"]["value"])
            for d in doc["steps"][0]["dimensions"]}


def saving(path, name, value):
    doc = json.load(open(path))
    for d in doc["steps"][0]["dimensions"]:
        for c in d["candidates"] if d["name"] == name else []:
            if c["value"] == value and c.get("saving_pct") is not None:
                return f"{c['saving_pct']:.2f} %"
    return "not measured"


def pad(measured_path, predicted_paths):
    measured = decisions(measured_path)
    same = 0
    for path in predicted_paths:
        predicted = decisions(path)
        for name, (value, action, to) in measured.items():
            p = predicted.get(name)
            agree = p is not None and p[1] == action and (action != "pad" or p[2] == to)
            same += agree
            note = ""
            if p and not agree and p[1] == "pad":
                note = f" (measured saving of {p[2]}: {saving(measured_path, name, p[2])}; of {to}: {saving(measured_path, name, to)})"
            print(f"{name:28s} {value:>7}  measured {action} {to:<7} predicted "
                  f"{(p[1] + ' ' + str(p[2])) if p else 'none':14s} {'same' if agree else 'DIFFERENT'}{note}")
    print(f"{same} of {len(measured)} dimensions decided the same")


if __name__ == "__main__":
    if sys.argv[1] == "cost":
        cost(sys.argv[2:])
    else:
        {"error": error, "pad": pad}[sys.argv[1]](sys.argv[2], sys.argv[3:])
