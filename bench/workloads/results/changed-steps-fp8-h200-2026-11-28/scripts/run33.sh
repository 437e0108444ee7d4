#!/bin/bash
# Run 33: the GPU tests (after the replay's precise-move rule).
set -u
mkdir -p build
for b in shapescope_gpu_tests libshapescope_casts.so; do xz -dc devbin/$b.xz > build/$b; chmod +x build/$b; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
s=$SECONDS; timeout 240 build/shapescope_gpu_tests > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $((SECONDS-s)) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED|Replay" $OUT/gpu_tests.txt | cut -c1-160 | head -20
