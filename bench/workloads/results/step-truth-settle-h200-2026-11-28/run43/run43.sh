#!/bin/bash
# Run 43: as run 42, each trace 4 steps (RECORD_STEPS=4: profile and the trace per step, their mean), so
# that one step's wander at the power limit (GPT-NeoX's single settled steps: 20.8 and 22.9 ms of GEMMs
# in run 42) weighs less:
#   1. GPT-NeoX 20B widths recorded three times each way (--settle-seconds 0 and 1, 150 warm-up steps),
#      the plain profile once on each.
#   2. The seven steps of step_truth.sh recorded settled (30 warm-up steps), the plain profile twice each.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RECORD_STEPS=4
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS
for i in 1 2 3; do
  for settle in 0 1; do
    d=$OUT/neox-settle$settle-$i
    STEPS=neox RECORD_WARMUP=150 RECORD_SETTLE=$settle OUT=$d timeout 60 bench/workloads/step_truth.sh record 2>&1 | cut -c1-300
    STEPS=neox RUNS=1 PROFILE_ARGS=--no-verdict OUT=$d timeout 40 bench/workloads/step_truth.sh profile
  done
done
echo "neox six: $((SECONDS-s)) s"
s=$SECONDS; RECORD_WARMUP=30 OUT=$OUT/seven timeout $((420-SECONDS)) bench/workloads/step_truth.sh record 2>&1 | cut -c1-300
echo "seven recorded: $((SECONDS-s)) s"
s=$SECONDS; PROFILE_ARGS=--no-verdict OUT=$OUT/seven timeout $((570-SECONDS)) bench/workloads/step_truth.sh profile
echo "seven profiled: $((SECONDS-s)) s"
for d in $OUT/neox-settle* $OUT/seven; do
  echo "== $(basename $d)"; OUT=$d bench/workloads/step_truth.sh table 2>&1 | tail -n +3 | cut -c1-250
done
python3 -c "
import json,glob,re
for f in sorted(glob.glob('$OUT/*/step_truth/profile-*.out')):
    try: n=json.load(open(f))['clocks_note']
    except Exception as e: n=str(e)
    r=re.search(r'(\d+) replays after (\d+) to warm up, SM clock (\d+) MHz \(([\d-]+)\), (\d+) W', n or '')
    g=re.search(r'GEMMs ran at about (\d+) MHz', n or '')
    print(f.split('/')[-3], f.split('/')[-1], r.groups() if r else (n or '')[:80], 'gemms', g.group(1) if g else '-')
"
tar czf $OUT/r43.tgz --exclude='*.db*' --exclude='*.json' -C $OUT $(cd $OUT && ls -d neox-settle* seven)
rm -rf $OUT/neox-settle* $OUT/seven
