#!/bin/bash
# Run 42: steps recorded after settling under the profiler (record_trace.py --settle-seconds, default 1 s)
# against the same step recorded right after the profiler's start (--settle-seconds 0, as until now):
#   1. GPT-NeoX 20B widths recorded both ways after 150 warm-up steps; their GEMM kernel times, and the
#      plain profile once on each.
#   2. The seven steps of step_truth.sh recorded settled (30 warm-up steps), the plain profile twice each.
#   3. The Python package's GPU test (record()'s settling steps under the profiler's warm-up).
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS
for settle in 0 1; do
  STEPS=neox RECORD_WARMUP=150 RECORD_SETTLE=$settle OUT=$OUT/neox-settle$settle timeout 100 \
    bench/workloads/step_truth.sh record 2>&1 | cut -c1-400
done
echo "neox both ways: $((SECONDS-s)) s"
for settle in 0 1; do
  STEPS=neox RUNS=1 PROFILE_ARGS=--no-verdict OUT=$OUT/neox-settle$settle timeout 60 bench/workloads/step_truth.sh profile
done
s=$SECONDS; RECORD_WARMUP=30 OUT=$OUT/seven timeout $((330-SECONDS)) bench/workloads/step_truth.sh record 2>&1 | cut -c1-400
echo "seven recorded: $((SECONDS-s)) s"
s=$SECONDS; PROFILE_ARGS=--no-verdict OUT=$OUT/seven timeout $((470-SECONDS)) bench/workloads/step_truth.sh profile
echo "seven profiled: $((SECONDS-s)) s"
s=$SECONDS; SHAPESCOPE_BIN=$BIN timeout $((560-SECONDS)) python3 tests/python/gpu_record.py > $OUT/gpu_record.txt 2>&1
echo "gpu_record rc=$? $((SECONDS-s)) s"; tail -4 $OUT/gpu_record.txt
for d in neox-settle0 neox-settle1 seven; do
  echo "== $d"; OUT=$OUT/$d bench/workloads/step_truth.sh table 2>&1 | cut -c1-330
  grep -h "^settled" $OUT/$d/step_truth/record-*.txt | head -8
done
python3 -c "
import json,glob,re
for f in sorted(glob.glob('$OUT/*/step_truth/profile-*.out')):
    try: n=json.load(open(f))['clocks_note']
    except Exception as e: n=str(e)
    r=re.search(r'(\d+) replays after (\d+) to warm up, SM clock (\d+) MHz \(([\d-]+)\), (\d+) W', n or '')
    g=re.search(r'GEMMs ran at about (\d+) MHz', n or '')
    print(f.split('/')[-3], f.split('/')[-1], r.groups() if r else (n or '')[:100], 'gemms', g.group(1) if g else '-')
"
tar czf $OUT/r42.tgz --exclude='*.db*' --exclude='*.json' -C $OUT neox-settle0 neox-settle1 seven gpu_record.txt
rm -rf $OUT/neox-settle0 $OUT/neox-settle1 $OUT/seven
