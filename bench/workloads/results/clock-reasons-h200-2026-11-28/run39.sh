#!/bin/bash
# Run 39 (H200): why an 8-layer step runs at ~1650 MHz while drawing ~450 W, and what its replay
# does: nvidia-smi samples the SM clock, power, temperatures and the clock-event reasons every 20 ms
# while step_truth.sh records the Llama 3 8-layer step and while the plain profile replays it.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
Q=timestamp,clocks.sm,power.draw,temperature.gpu,temperature.memory,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown
nvidia-smi --query-gpu=$Q --format=csv,nounits -lms 20 > $OUT/smi.csv 2> $OUT/smi.err &
SMI=$!
mark() { echo "$1 $(date +%s.%N)" >> $OUT/marks.txt; }
mark idle; sleep 2
mark record
STEPS="${STEPS:-llama3-8l}" OUT=/tmp/st timeout 240 bench/workloads/step_truth.sh record > $OUT/record.txt 2>&1; echo "record rc=$?"
cut -c1-400 $OUT/record.txt
for s in ${STEPS:-llama3-8l}; do
  mark "profile-$s"
  timeout 200 $BIN profile --trace /tmp/st/step_truth/$s.json --db /tmp/p-$s.db --no-verdict --json > $OUT/profile-$s.json 2> $OUT/profile-$s.err
  echo "profile $s rc=$?"; tail -n 3 $OUT/profile-$s.err | cut -c1-300
done
mark end
kill $SMI
cp /tmp/st/step_truth/*.txt /tmp/st/step_truth/smi-*.csv $OUT/ 2>/dev/null
python3 - "$OUT" <<'PY'
import csv, sys, statistics, datetime
out = sys.argv[1]
marks = [l.split() for l in open(f"{out}/marks.txt")]
rows = list(csv.reader(open(f"{out}/smi.csv")))
head = [h.strip() for h in rows[0]]
def ts(s): return datetime.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
data = []
for r in rows[1:]:
    try: data.append((ts(r[0]), [x.strip() for x in r[1:]]))
    except Exception: pass
print("phase            samples  clock med (p10-p90)  power med  gpu/mem temp  active-reasons: count of samples")
for (name, t0), (_, t1) in zip(marks, marks[1:]):
    seg = [d for t, d in data if float(t0) <= t < float(t1)]
    busy = [d for d in seg if float(d[1]) > 100]
    if not busy: print(name, "no busy samples"); continue
    clk = sorted(float(d[0]) for d in busy); pw = sorted(float(d[1]) for d in busy)
    q = lambda v, f: v[int(f * (len(v) - 1))]
    reasons = {}
    for d in busy:
        for h, v in zip(head[6:], d[5:]):
            if v == "Active": reasons[h.split(".")[-1]] = reasons.get(h.split(".")[-1], 0) + 1
    print(f"{name:16} {len(busy):7}  {statistics.median(clk):6.0f} ({q(clk,.1):.0f}-{q(clk,.9):.0f})  {statistics.median(pw):6.0f} W  "
          f"{busy[len(busy)//2][2]}/{busy[len(busy)//2][3]} C  {reasons}")
PY
tar czf $OUT/r39.tgz -C $OUT --exclude='*.tgz' --exclude='profile-*.json' . 2>/dev/null; ls $OUT
