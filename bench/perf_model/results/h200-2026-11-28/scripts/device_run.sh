#!/bin/bash
# Run 37 (H200): every sweep of bench/perf_model/grid.sh (the fit's grid and the test sweeps) and
# measured pad of the five models at 4096 tokens, for an H200 model fitted like the H100's.
set -u
mkdir -p build
for b in shapescope libshapescope_casts.so; do xz -dc .devbin/$b.xz > build/$b; chmod +x build/$b; done
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/w; mkdir -p $W
s=$SECONDS; OUT=$W timeout 420 bench/perf_model/calibrate.sh sweep; echo "sweep rc=$? $((SECONDS-s)) s"
s=$SECONDS; OUT=$W timeout 120 bench/perf_model/calibrate.sh pad; echo "pad rc=$? $((SECONDS-s)) s"
grep -E "^== |points|s$" $W/perf_model/sweep.log | cut -c1-200 | tail -40
tar czf $OUT/pm.tgz -C $W/perf_model --exclude='stores.tar.*' --exclude='*.db*' .
cp $W/perf_model/stores.tar.* $OUT/ 2>/dev/null; ls -la $OUT
