"""bench/speed/ab_probe.sh: sample noise of the same sweep with a cold and a hot L2.

    python3 bench/speed/ab_noise.py DIR   # DIR holds noise_cold.csv and noise_hot.csv
"""
import csv, sys, statistics as st
for mode in ("cold", "hot"):
    rows = list(csv.DictReader(open(f"{sys.argv[1]}/noise_{mode}.csv")))
    rel = [(float(r["q3_us"]) - float(r["q1_us"])) / float(r["median_us"]) for r in rows]
    rng = [(float(r["max_us"]) - float(r["min_us"])) / float(r["median_us"]) for r in rows]
    print(f"{mode}: {len(rows)} points, median IQR/median {100*st.median(rel):.2f} %, median range/median {100*st.median(rng):.2f} %, "
          f"median time {st.median(float(r['median_us']) for r in rows):.1f} us")
