#!/bin/bash
# Runs 30, 32 and 34 (run 30 with a shorter summary at the end; the measuring lines the same): the top fp8 what-if alone (Llama 8192 tokens, Qwen2.5-7B widths), after 10 warm-up steps,
# alternated 4+4, then PAIRS timed pairs (default 40); profile's default (the recorded-clock rule) against them.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc devbin/$b.xz > build/$b; chmod +x build/$b; done
export BIN=build/shapescope PYTHONPATH=$PWD/python HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS; RECORD_STEPS=4 RECORD_WARMUP=10 TIMED_PAIRS=${PAIRS:-40} ALTERNATE=1 FP8_CASTS=shapescope CHANGES="${CHANGES:-llama8k-top qwen-top}" OUT=$OUT \
  timeout ${LIMIT:-540} bench/workloads/changed_steps.sh run > $OUT/run.txt 2>&1; echo "changed rc=$? $((SECONDS-s)) s"
cut -c1-300 $OUT/run.txt
for f in $OUT/changed/profile-*.err; do echo "== $f"; grep -E "replayed|paired in" $f | cut -c1-200; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(*d[\"what_ifs\"][\"lines\"], sep=\"\\n\")" ${f%.err}.out | cut -c1-400; done
OUT=$OUT bench/workloads/changed_steps.sh table 2>&1 | cut -c1-400 | grep -v "^    " | head -20
tar czf $OUT/run.tgz --exclude='*.db*' --exclude='*.json' -C $OUT changed run.txt
rm -rf $OUT/changed
