#!/bin/bash
# Run 41: the replay's warm-up now waits for the board power to settle too (2 s window, at most 3 s).
# Three small steps recorded after 150 warm-up steps (about 4 s: NVML's power average settled), the
# plain profile (--no-verdict) twice on each, then the table.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
export STEPS="${STEPS:-neox gptj opt}"
s=$SECONDS; RECORD_WARMUP=150 OUT=$OUT timeout 120 bench/workloads/step_truth.sh record > $OUT/record.txt 2>&1; echo "record rc=$? $((SECONDS-s)) s"
cut -c1-330 $OUT/record.txt
s=$SECONDS; PROFILE_ARGS=--no-verdict OUT=$OUT timeout $((200-SECONDS)) bench/workloads/step_truth.sh profile > $OUT/profile.txt 2>&1; echo "profile rc=$? $((SECONDS-s)) s"
cat $OUT/profile.txt
for f in $OUT/step_truth/profile-*.err; do grep -h "replayed in" $f | sed "s|^|$(basename $f): |"; done
python3 -c "
import json,glob,re
for f in sorted(glob.glob('$OUT/step_truth/profile-*.out')):
    n=json.load(open(f))['clocks_note']; r=re.search(r'(\d+) replays after (\d+) to warm up, SM clock (\d+) MHz \(([\d-]+)\), (\d+) W', n)
    print(f.split('/')[-1], r.groups() if r else n[:160])
"
OUT=$OUT bench/workloads/step_truth.sh table 2>&1 | cut -c1-300
tar czf $OUT/r41.tgz --exclude='*.db*' --exclude='*.json' -C $OUT step_truth record.txt profile.txt
rm -rf $OUT/step_truth
