#!/usr/bin/env python3
"""A performance model's error on measured points it was not fitted on, and its pad decisions against
measured pad's. No GPU: it reads what evaluate.sh wrote.

  model_error.py error MEASURED.samples.csv PREDICTED.txt...   per layout and alignment: median, p95
      (FIT=FITTED.samples.csv in the environment: also apart, the points whose shape the fit measured too)
  model_error.py pad MEASURED-pad.json PREDICTED-pad.json...    each dimension: measured and predicted action

PREDICTED.txt: `sweep --dry-run --predict` output (rows M N K batch lda ldb ldc offset predicted ...),
one file per layout, named ...-LAYOUT.txt. Aligned: every row and base 16-byte aligned (bf16)."""
import csv
import json
import os
import re
import statistics
import sys
from collections import defaultdict


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
        out[(d["layout"], int(d["m"]), int(d["n"]), int(d["k"]))] = float(d["median_us"])
    return out


def error(measured_path, predicted_paths):
    measured = measured_times(measured_path)
    fitted = measured_times(os.environ["FIT"]) if os.environ.get("FIT") else {}
    errors = defaultdict(list)
    for path in predicted_paths:
        layout = re.search(r"-(nn|nt|tn|tt)\.txt$", path).group(1)
        for line in open(path):
            f = line.split()
            if len(f) < 9 or not all(x.isdigit() for x in f[:8]):
                continue
            key = (layout, int(f[0]), int(f[1]), int(f[2]))
            if key not in measured:
                continue
            aligned = min(alignment(int(f[4])), alignment(int(f[5])), alignment(int(f[6]))) == 16
            e = abs(float(f[8]) / measured[key] - 1)
            kind = "aligned" if aligned else "unaligned"
            errors[(layout, kind, "all")].append(e)
            if fitted:
                errors[(layout, kind, "fit measured it" if key in fitted else "fit never saw it")].append(e)
    for (layout, kind, which), e in sorted(errors.items()):
        print(f"bf16 {layout} {kind:9s} {which:16s} {len(e):4d} points  median {100 * statistics.median(e):5.1f} %  "
              f"p95 {100 * quantile(e, 0.95):5.1f} %")
    return errors


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
    {"error": error, "pad": pad}[sys.argv[1]](sys.argv[2], sys.argv[3:])
