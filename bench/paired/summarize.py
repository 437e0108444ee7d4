#!/usr/bin/env python3
"""The table of bench/paired/repeatability.sh, from the files it wrote (argument: its work folder)."""
import glob
import json
import os
import re
import sys

W = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(W, name)) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{name}: unreadable ({e})")
        return None


def seconds(name):
    try:
        with open(os.path.join(W, name + ".time")) as f:
            parts = f.read().split()
            rc, s = parts if len(parts) == 2 else (parts[0], "nan")
        return f"{float(s):.1f} s" + ("" if rc == "rc=0" else f" ({rc})")
    except OSError:
        return "-"


print("== pad --trace qwen2 (hidden 896), three runs on fresh stores ==")
runs = [load(f"pad-qwen2-{i}.out") for i in (1, 2, 3)]
for i, r in enumerate(runs, 1):
    if not r:
        continue
    for p in r["numbers"].get("paired", []):
        print(f"run {i}: {seconds(f'pad-qwen2-{i}')}; paired {p['calls']} {p['dtype']} GEMMs, {p['passes']} passes, "
              f"{p['seconds']:.1f} s, clock {p['clock_low_mhz']:.0f}-{p['clock_high_mhz']:.0f} MHz, "
              f"power {p['power_w']} W, warm-up {p['warmup_s']:.1f} s settled={p['settled']}")
    for why in r["numbers"].get("not_paired", []):
        print(f"run {i}: not paired: {why}")
worst = 0.0
if all(runs):
    print(f"{'size':>8} {'new':>8}  " + "  ".join(f"{'run ' + str(i) + ' saving % [95 %] pairs':>32}" for i in (1, 2, 3))
          + "  spread")
    for s1, s2, s3 in zip(*(r["sizes"] for r in runs)):
        for c1, c2, c3 in zip(s1["candidates"], s2["candidates"], s3["candidates"]):
            cells, savings = [], []
            for c in (c1, c2, c3):
                if c.get("saving_pct") is None:
                    cells.append(f"{'-':>32}")
                    continue
                savings.append(c["saving_pct"])
                if "saving_low_pct" in c:
                    cells.append(f"{c['saving_pct']:+7.2f} [{c['saving_low_pct']:+6.2f},{c['saving_high_pct']:+6.2f}] "
                                 f"{c['pairs']:3d}")
                else:
                    cells.append(f"{c['saving_pct']:+7.2f} (not paired)")
            spread = max(savings) - min(savings) if len(savings) == 3 else float("nan")
            worst = max(worst, spread) if spread == spread else worst
            print(f"{s1['value']:>8} {c1['value']:>8}  " + "  ".join(f"{x:>32}" for x in cells) + f"  {spread:5.2f}")
        print(f"{'':>8} {'':>8}  " + "  ".join(f"{r['sizes'][[x['value'] for x in r['sizes']].index(s1['value'])]['recommendation']['action'] + ' ' + str(r['sizes'][[x['value'] for x in r['sizes']].index(s1['value'])]['recommendation']['value']):>32}" for r in runs))
    print(f"largest spread of a candidate's saving over the three runs: {worst:.2f} percentage points (target <= 1)")

print("\n== explain of GEMMs of 1 ms or more, twice each ==")
print(f"{'shape':>20} run {'wall':>8} {'target us':>10} {'threshold':>9} {'against':>28} {'ratio [95 %]':>24} {'pairs':>5}  clock")
for shape in ("8192", "10240x10240x4096", "4096x151936x896"):
    for i in (1, 2):
        d = load(f"explain-{shape}-{i}.out")
        if not d:
            continue
        v = d["verdict"]
        target = next((p for p in d["points"] if p["role"] == "target"), None)
        t_us = target["paired"]["time_us"] if target and "paired" in target else None
        against = next((p for p in d["points"] if p["label"] == v["against"]), None)
        ratio = "-"
        pairs = "-"
        if against and "paired" in against:
            q = against["paired"]
            half = (q["high"] - q["low"]) / 2 / q["ratio"] * 100
            ratio = f"{q['ratio']:.3f} [{q['low']:.3f},{q['high']:.3f}] +-{half:.1f}%"
            pairs = q["pairs"]
        p = d.get("paired", {})
        clock = f"{p.get('clock_low_mhz', 0):.0f}-{p.get('clock_high_mhz', 0):.0f} MHz {p.get('power_w')} W"
        print(f"{shape:>20} {i:>3} {seconds(f'explain-{shape}-{i}'):>8} {t_us or 0:10.1f} {v['threshold'] * 100:8.1f}% "
              f"{str(v['against']):>28} {ratio:>24} {pairs:>5}  {clock}")
        print(f"{'':>20}     verdict: {v['text'][:160]}")

print("\n== pad --model gpt2 --tokens 12288 --train ==")
for name in ("pad-gpt2", "before-pad-gpt2"):
    path = os.path.join(W, name + ".out")
    if not os.path.exists(path):
        continue
    text = open(path).read()
    rec = [l.strip() for l in text.splitlines() if l.strip().startswith("vocab_size 50257:")]
    print(f"{name}: {seconds(name)}: {rec[0] if rec else 'no recommendation line'}")
    for l in text.splitlines():
        if l.startswith("paired:"):
            print(f"  {l[:200]}")

print("\n== cost (wall time) ==")
for name in ("explain-3080", "before-explain-3080", "pad-gpt2", "before-pad-gpt2", "pad-qwen2-1", "before-pad-qwen2"):
    if os.path.exists(os.path.join(W, name + ".time")):
        print(f"{name:>22}: {seconds(name)}")
