#!/usr/bin/env python3
"""Cross-check shapescope's launch model against Nsight Compute.

Reads ncu's CSV (--section LaunchStats --section Occupancy --csv) for one shape and the sweep's CSV
for the same point, and prints, per GEMM kernel: the grid ncu saw against the CTAs shapescope's
CUPTI record holds and the tiles its model computes; ncu's CTAs-per-SM limit against the model's;
ncu's waves per SM against the model's waves over CTAs.

  python3 bench/explain/ncu_launch_model.py --ncu shape.ncu.csv --sweep shape.csv --label 1793
"""
import argparse
import csv
import io
import sys

WANTED = {
    "Grid Size": "grid",
    "Block Size": "block",
    "Registers Per Thread": "regs",
    "Block Limit Registers": "limit_regs",
    "Block Limit Shared Mem": "limit_smem",
    "Block Limit Warps": "limit_warps",
    "Block Limit SM": "limit_sm",
    "Waves Per SM": "waves",
    "Cluster Size": "cluster",
}


def read_ncu(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        return []
    kernels = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        key = (row.get("ID"), row.get("Kernel Name", ""))
        entry = kernels.setdefault(key, {"name": row.get("Kernel Name", "")})
        name = WANTED.get(row.get("Metric Name", ""))
        if name:
            entry[name] = row.get("Metric Value", "").replace(",", "")
    return list(kernels.values())


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--label", required=True)
    args = ap.parse_args()
    ours = list(csv.DictReader(open(args.sweep)))
    if not ours:
        print(f"{args.label}: no sweep row")
        return 1
    p = ours[0]
    kernels = read_ncu(args.ncu)
    if not kernels:
        print(f"{args.label}: ncu recorded no kernel")
        return 1
    seen = set()
    for k in kernels:
        key = (k["name"], k.get("grid"))
        if key in seen:  # the same launch again (warm-up, then the sample)
            continue
        seen.add(key)
        limits = [number(k.get(f)) for f in ("limit_regs", "limit_smem", "limit_warps", "limit_sm")]
        limits = [x for x in limits if x is not None]
        ncu_per_sm = int(min(limits)) if limits else None
        short = k["name"][:60]
        main_kernel = short.split("(")[0] in p.get("kernel", "") or p.get("kernel", "") in k["name"]
        line = (f"{args.label:>16}  {short:<60}  ncu grid {k.get('grid', '?'):>6}  cluster {k.get('cluster', '?'):>3}  "
                f"CTAs/SM {ncu_per_sm}  waves/SM {k.get('waves', '?')}")
        if main_kernel:
            line += (f"  | shapescope: CTAs {p.get('launched_ctas') or '?'}, tiles {p.get('tiles') or '?'} "
                     f"({p.get('tiles_m') or '?'}x{p.get('tiles_n') or '?'}), CTAs/SM {p.get('ctas_per_sm') or '?'} "
                     f"({p.get('occupancy_limiter') or '?'}), persistent {p.get('persistent')}, "
                     f"waves {float(p['waves']):.3f}" if p.get("waves") else "")
            ok_grid = number(k.get("grid")) == number(p.get("launched_ctas"))
            ok_occ = ncu_per_sm is not None and ncu_per_sm == number(p.get("ctas_per_sm"))
            line += f"  grid {'agrees' if ok_grid else 'DIFFERS'}, CTAs/SM {'agree' if ok_occ else 'DIFFER'}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
