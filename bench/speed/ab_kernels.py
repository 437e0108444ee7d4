"""bench/speed/ab_probe.sh: the kernels of the baseline's and the new sweep compared point by point.

    python3 bench/speed/ab_kernels.py DIR   # DIR holds base1.csv and new1.csv
"""
import csv, sys, os
w = sys.argv[1]
def load(name):
    p = os.path.join(w, name + ".csv")
    if not os.path.exists(p): return None
    return {int(r["n"]): r for r in csv.DictReader(open(p))}
base, new = load("base1"), load("new1")
if base and new:
    same = sum(1 for n in base if n in new and base[n]["kernels"] == new[n]["kernels"])
    grids = sum(1 for n in base if n in new and base[n]["kernel_grids"] == new[n]["kernel_grids"])
    multi = sum(1 for n in new if ";" in new[n]["kernels"])
    print(f"kernels: base vs new identical for {same} of {len(base)} points, grids for {grids}; {multi} points with several kernels")
    diff = [n for n in base if n in new and base[n]["kernels"] != new[n]["kernels"]][:5]
    for n in diff:
        print(f"  n={n}: base {base[n]['kernels'][:150]} | new {new[n]['kernels'][:150]}")
