"""The 4096^3 table of bench/kernels/ladder.sh: TFLOP/s and share of cuBLAS per kernel, nn and nt.

    python3 bench/kernels/ladder_table.py ladder_nn.csv ladder_nt.csv
"""
import csv, sys
print("4096^3 bf16, cold L2: TFLOP/s and share of cuBLAS in the same sweep")
print(f"{'kernel':40} {'nn':>7} {'% cuBLAS':>9} {'nt':>7} {'% cuBLAS':>9}  clock [MHz]")
tables = []
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    tables.append({(r["backend"] if r["backend"] != "custom" else r["algo"]): r for r in rows})
keys = [k for k in tables[0] if k != "cublas"]
for k in ["cublas"] + keys:
    cells = []
    for t in tables:
        r, ref = t.get(k), t.get("cublas")
        if r is None:
            cells.append(f"{'-':>7} {'-':>9}")
            continue
        share = 100 * float(r["tflops"]) / float(ref["tflops"])
        cells.append(f"{float(r['tflops']):>7.1f} {share:>8.1f}%")
    clocks = "/".join(t[k]["sm_clock_mhz"] for t in tables if k in t and t[k].get("sm_clock_mhz"))
    print(f"{k:40} {cells[0]} {cells[1]}  {clocks}")
