#!/usr/bin/env bash
# explain's paired comparisons at the power limit (one GPU; from the repository root, build/ made):
#   bench/explain/paired.sh            # OUT=out; S=path/to/shapescope
# For three GEMMs of at least 1 ms (8192^3, 8191^3 and 10240x10240x4096, bf16): explain twice, each
# on a fresh store, and print the verdict, its threshold, the compared point's paired interval and
# pairs, the clock range of the passes and the wall time; then the same with --pair-seconds 0 (each
# point's own median, the method before pairing). Then the wall time of two GEMMs under 1 ms
# (1793, 3080) with and without pairing. Ends with a table. Needs python3.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=${S:-build/shapescope}
SHAPES=${SHAPES:-"8192 8191 10240x10240x4096"}
SMALL=${SMALL:-"1793 3080"}
rm -f "$OUT"/paired_*

row() {  # LABEL JSON
  python3 - "$1" "$2" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"{label:34} failed: {e}"); sys.exit()
v = d["verdict"]
against = next((p for p in d["points"] if p["label"] == v["against"]), None) if v["against"] else None
pr = against.get("paired") if against else None
interval = f"{pr['ratio']:.3f} [{pr['low']:.3f}-{pr['high']:.3f}] {pr['pairs']}p {pr['verdict']}" if pr else "-"
paired = d.get("paired") or {}
clock = f"{paired['clock_low_mhz']:.0f}-{paired['clock_high_mhz']:.0f}" if paired else "-"
power = f"{paired['power_w']:.0f}" if paired.get("power_w") else "-"
print(f"{label:34} thr {v['threshold']*100:4.1f}% | {interval:38} | clk {clock:>9} MHz {power:>4} W | {d['wall_s']:5.1f} s | {v['text'][:90]}")
PY
}

for shape in $SHAPES; do
  for run in 1 2; do
    $S explain "$shape" --db "$OUT/paired_${shape}_$run.db" --json > "$OUT/paired_${shape}_$run.json" 2> "$OUT/paired_${shape}_$run.err"
    [ "$run" = 1 ] && $S explain "$shape" --db "$OUT/paired_${shape}_$run.db" > "$OUT/paired_${shape}_$run.txt" 2>> "$OUT/paired_${shape}_$run.err"
  done
  $S explain "$shape" --db "$OUT/paired_${shape}_old.db" --pair-seconds 0 --json > "$OUT/paired_${shape}_old.json" 2> "$OUT/paired_${shape}_old.err"
done
for shape in $SMALL; do
  $S explain "$shape" --db "$OUT/paired_${shape}_s.db" --json > "$OUT/paired_${shape}_s.json" 2> "$OUT/paired_${shape}_s.err"
  $S explain "$shape" --db "$OUT/paired_${shape}_s0.db" --pair-seconds 0 --json > "$OUT/paired_${shape}_s0.json" 2> "$OUT/paired_${shape}_s0.err"
done
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader
echo "shape / run                        threshold | compared: ratio [95 %] pairs verdict     | passes' clock, power | wall | verdict"
for shape in $SHAPES; do
  row "$shape run 1 (paired)" "$OUT/paired_${shape}_1.json"
  row "$shape run 2 (paired, fresh store)" "$OUT/paired_${shape}_2.json"
  row "$shape own medians (--pair-seconds 0)" "$OUT/paired_${shape}_old.json"
done
for shape in $SMALL; do
  row "$shape paired" "$OUT/paired_${shape}_s.json"
  row "$shape own medians" "$OUT/paired_${shape}_s0.json"
done
