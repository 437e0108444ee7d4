#!/usr/bin/env bash
# explain's wall time on GEMMs of milliseconds, whose paired passes pair what the verdict rests on
# and as many other points as their budget allows (one GPU; from the repository root, build/ made):
#   bench/explain/speed.sh             # OUT=out; S=path/to/shapescope; SHAPES="..."; RUNS=2
# Each shape RUNS times, each on a fresh store, with its wall clock (the process, start-up included);
# each run's text (the JSON's `text`, as --wide) beside its JSON. Ends with a table: wall time, the paired phase's
# seconds (stderr), the points paired and left surveyed only, the verdict's paired interval and pairs,
# and the verdict. Needs python3.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
S=${S:-build/shapescope}
SHAPES=${SHAPES:-"8192x14336x4096 2048x250880x4096 3080"}
RUNS=${RUNS:-2}
rm -f "$OUT"/speed_*

for shape in $SHAPES; do
  for run in $(seq 1 "$RUNS"); do
    base="$OUT/speed_${shape}_$run"
    t0=$EPOCHREALTIME
    $S explain "$shape" --db "$base.db" --json > "$base.json" 2> "$base.err"
    echo "rc=$? $(python3 -c "print(round($EPOCHREALTIME - $t0, 2))")" > "$base.time"
    python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['text'], end='')" "$base.json" > "$base.txt" 2>/dev/null
  done
done
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader
python3 - "$OUT" $SHAPES <<'PY'
import json, re, sys
out, shapes = sys.argv[1], sys.argv[2:]
print(f"{'shape / run':24} {'wall':>6} {'paired':>7} {'paired/survey':>13} {'verdict interval':>26}  verdict")
for shape in shapes:
    run = 1
    while True:
        base = f"{out}/speed_{shape}_{run}"
        try:
            rc, wall = open(base + ".time").read().split()
        except OSError:
            break
        run += 1
        try:
            d = json.load(open(base + ".json"))
        except Exception as e:
            print(f"{shape + ' ' + str(run - 1):24} {rc} failed: {e}")
            continue
        phase = re.search(r"explain: paired .* in ([0-9.]+) s", open(base + ".err").read())
        p = d.get("paired") or {}
        counts = f"{p.get('paired_points', '-')}/{p.get('survey_only_points', '-')}"
        v = d["verdict"]
        against = next((q for q in d["points"] if q["label"] == v["against"]), None) if v["against"] else None
        pr = against.get("paired") if against else None
        interval = f"{pr['ratio']:.3f} [{pr['low']:.3f}-{pr['high']:.3f}] {pr['pairs']}p" if pr else "-"
        print(f"{shape + ' ' + str(run - 1):24} {float(wall):6.1f} {phase.group(1) if phase else '-':>7} {counts:>13} "
              f"{interval:>26}  {v['text'][:80]}")
PY
