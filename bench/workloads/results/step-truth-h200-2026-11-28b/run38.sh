#!/bin/bash
# Run 38: step truth under the recorded-clock rule: seven real steps recorded (NVML with the trace,
# nvidia-smi beside), the plain profile twice on each, the table.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS; OUT=$OUT timeout ${RLIMIT:-300} bench/workloads/step_truth.sh record > $OUT/record.txt 2>&1; echo "record rc=$? $((SECONDS-s)) s"
cut -c1-250 $OUT/record.txt
s=$SECONDS; OUT=$OUT timeout $((560-SECONDS)) bench/workloads/step_truth.sh profile > $OUT/profile.txt 2>&1; echo "profile rc=$? $((SECONDS-s)) s"
cat $OUT/profile.txt
for f in $OUT/step_truth/profile-*-1.err; do echo "== $f"; grep -E "^clocks|clocks:" $f | cut -c1-300; done
OUT=$OUT bench/workloads/step_truth.sh table 2>&1 | cut -c1-300
tar czf $OUT/r38.tgz --exclude='*.db*' --exclude='*.json' -C $OUT step_truth record.txt profile.txt
rm -rf $OUT/step_truth
