#!/bin/bash
# Runs 35-36 (H200): GPU tests of the build (TESTS=1), then the top fp8 what-if alone as a named
# changed step (profile --what-if N, replayed for up to WHAT_IF_SECONDS), recorded in PyTorch after
# 10 warm-up steps, alternated 4+4, then PAIRS timed pairs; profile's prediction against them.
set -u
mkdir -p build
for b in shapescope shapescope_gpu_tests libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
if [ "${TESTS:-0}" = 1 ]; then
  s=$SECONDS; timeout 120 build/shapescope_gpu_tests > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $((SECONDS-s)) s"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" $OUT/gpu_tests.txt | cut -c1-160 | head -20
fi
s=$SECONDS; RECORD_STEPS=4 RECORD_WARMUP=10 TIMED_PAIRS=${PAIRS:-150} WHAT_IF_SECONDS=${WIS:-90} ALTERNATE=1 FP8_CASTS=shapescope CHANGES="${CHANGES:-llama8k-top}" OUT=$OUT \
  timeout ${LIMIT:-540} bench/workloads/changed_steps.sh run > $OUT/run.txt 2>&1; echo "changed rc=$? $((SECONDS-s)) s"
cut -c1-400 $OUT/run.txt
for f in $OUT/changed/profile-*.err; do echo "== $f"; grep -E "replayed|paired in|what-if-seconds" $f | cut -c1-240; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(*d[\"what_ifs\"][\"lines\"], sep=\"\\n\")" ${f%.err}.out | cut -c1-400; done
OUT=$OUT bench/workloads/changed_steps.sh table 2>&1 | cut -c1-400 | grep -v "^    " | head -20
tar czf $OUT/run.tgz --exclude='*.db*' --exclude='*.json' -C $OUT changed run.txt
rm -rf $OUT/changed
