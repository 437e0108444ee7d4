#!/bin/bash
# Run 40: step truth with the steps recorded warm: 30 steps before the recorded ones, so that the GPU's
# power (NVML's ~1 s average) and clock have settled at the step's own, as in a training run; the
# plain profile (--no-verdict) twice on each, then the table.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS; RECORD_WARMUP=30 OUT=$OUT timeout 200 bench/workloads/step_truth.sh record > $OUT/record.txt 2>&1; echo "record rc=$? $((SECONDS-s)) s"
cut -c1-330 $OUT/record.txt
s=$SECONDS; PROFILE_ARGS=--no-verdict OUT=$OUT timeout $((430-SECONDS)) bench/workloads/step_truth.sh profile > $OUT/profile.txt 2>&1; echo "profile rc=$? $((SECONDS-s)) s"
cat $OUT/profile.txt
OUT=$OUT bench/workloads/step_truth.sh table 2>&1 | cut -c1-300
tar czf $OUT/r40.tgz --exclude='*.db*' --exclude='*.json' -C $OUT step_truth record.txt profile.txt
rm -rf $OUT/step_truth
