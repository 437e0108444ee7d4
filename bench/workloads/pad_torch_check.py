#!/usr/bin/env python3
"""Cross-check `shapescope pad`'s recommendations with PyTorch on the same GPU.

For every dimension pad recommends padding, the GEMM list of one step is taken from shapescope
itself (`pad --dry-run --json`, once with the model as it is and once with that one value
changed), and each GEMM is timed here with torch.matmul in the same layout (nn: a @ b, nt:
a @ w.t(), tn: a.t() @ b), cold L2 (an L2-sized write before each sample), CUDA events, median of
--samples. The step time is sum(count x median); the saving is before - after. Printed next to
pad's own numbers (from its --json report).

    python3 bench/workloads/pad_torch_check.py --report pad.json --model gpt2 --tokens 12288 --train
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch

SHAPESCOPE = os.environ.get("SHAPESCOPE", "build/shapescope")
# pad's dimension names -> the config key (or --tokens) that sets them.
KEYS = {"vocab_size": "vocab_size", "hidden_size": "hidden_size", "n_embd": "n_embd",
        "intermediate_size": "intermediate_size", "n_inner": "n_inner",
        "num_attention_heads": "num_attention_heads", "n_head": "n_head",
        "num_key_value_heads": "num_key_value_heads"}


def gemm_list(config_path, tokens, train, tp):
    args = [SHAPESCOPE, "pad", "--config", config_path, "--tokens", str(tokens), "--tp", str(tp),
            "--dry-run", "--json"]
    if train:
        args.append("--train")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["steps"][0]["gemms"]


class Timer:
    def __init__(self, samples):
        self.samples = samples
        self.flush = torch.empty(torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8,
                                 device="cuda")
        self.cache = {}

    def time(self, layout, m, n, k):
        key = (layout, m, n, k)
        if key in self.cache:
            return self.cache[key]
        dt = torch.bfloat16
        a = torch.randn((k, m) if layout[0] == "t" else (m, k), dtype=dt, device="cuda")
        b = torch.randn((n, k) if layout[1] == "t" else (k, n), dtype=dt, device="cuda")
        aa = a.t() if layout[0] == "t" else a
        bb = b.t() if layout[1] == "t" else b
        for _ in range(3):
            torch.matmul(aa, bb)
        times = []
        for i in range(self.samples):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.flush.fill_(i & 0xFF)
            torch.cuda._sleep(20000)  # keep the host ahead: no launch gap between the events
            start.record()
            torch.matmul(aa, bb)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
        self.cache[key] = statistics.median(times)
        return self.cache[key]

    def step(self, gemms):
        return sum(g["count"] * self.time(g["layout"], g["m"], g["n"], g["k"]) for g in gemms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True, help="shapescope pad ... --json output")
    ap.add_argument("--model", required=True, help="preset name (models/NAME.json)")
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    report = json.load(open(args.report))["steps"][0]
    base_path = os.path.join("models", args.model + ".json")
    base = json.load(open(base_path))
    timer = Timer(args.samples)
    before = timer.step(gemm_list(base_path, args.tokens, args.train, args.tp))
    print(f"{args.model}, {args.tokens} tokens{' (train)' if args.train else ''}: GEMM time per step "
          f"{before:.1f} us in PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    print(f"shapescope's GEMM time per step: {report['gemm_time_us']:.1f} us")
    print(f"{'dimension':<22}{'now':>8}{'padded':>8}  {'shapescope saving':>20}  {'PyTorch saving':>20}")
    for dim in report["dimensions"]:
        rec = dim.get("recommendation") or {}
        cands = [c for c in dim["candidates"] if c["value"] == rec.get("value")]
        ours = cands[0] if cands else None
        if rec.get("action") != "pad" or not ours:
            print(f"{dim['name']:<22}{dim['value']:>8}{'-':>8}  {'leave it':>20}  {'-':>20}")
            continue
        value = rec["value"]
        if dim["name"] == "tokens":
            after = timer.step(gemm_list(base_path, value, args.train, args.tp))
        else:
            changed = dict(base)
            changed[KEYS.get(dim["name"], dim["name"])] = value
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(changed, f)
            after = timer.step(gemm_list(f.name, args.tokens, args.train, args.tp))
            os.unlink(f.name)
        theirs = before - after
        print(f"{dim['name']:<22}{dim['value']:>8}{value:>8}  "
              f"{ours['saving_us']:>11.1f} us {ours['saving_pct']:>5.1f} %  "
              f"{theirs:>11.1f} us {theirs / before * 100:>5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
