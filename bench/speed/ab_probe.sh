#!/usr/bin/env bash
# Quick A/B of the sweep's speed on a GPU host: the carried baseline binary (build/shapescope_base)
# against the current one, with --verbose breakdowns, repeatability per band of n, the kernel
# annotations of both compared point by point, the custom sweep and a provoked drift. Logs under
# $OUT/probe.tar.gz; a short table last. Environment (all optional):
#   RUNS="base1 new1 new2"   sweeps of --n 1..4096 to run: base* with $B, the rest with $S; a name
#                            containing m5 or m6 adds --min-samples 5 or 6
#   PAIRS="base1:new1 new1:new2"  runs to compare (bench/agreement/compare.py --bands)
#   BASE_VERBOSE=            for a baseline binary without --verbose (the fixed-sample engine)
#   SWEEP_ARGS, TESTS (a --gtest_filter of the GPU tests to run first), GAPS (engine idle gaps to
#   list), NOISE (sweep arguments: cold against hot L2 noise), CUSTOM= (skip the custom sweep),
#   DRIFT (sweep arguments run with a second process's load from DRIFT_AT seconds)
# e.g. the H200 run of bench/speed/results/h200-2026-11-25/min_samples:
#   RUNS="m5a m5b m6a m6b" PAIRS="m5a:m5b m6a:m6b" CUSTOM= OUT=$OUT bench/speed/ab_probe.sh
set -u -o pipefail
OUT=${OUT:-out}
S=${S:-build/shapescope}
B=${B:-build/shapescope_base}
W=/tmp/probe
rm -rf "$W"; mkdir -p "$W" "$OUT"
export SHAPESCOPE_DATA=$PWD
now() { date +%s.%N; }
run() {  # name, then the command: whole-process wall into walls.txt
  local name=$1; shift
  local t0 t1
  t0=$(now); "$@" > "$W/$name.out" 2> "$W/$name.log"; local rc=$?; t1=$(now)
  echo "$name $(python3 -c "print(f'{$t1 - $t0:.2f}')") rc=$rc" | tee -a "$W/walls.txt"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$W/env.txt"
if [ -n "${TESTS:-}" ]; then
  build/shapescope_gpu_tests --gtest_filter="$TESTS" > "$W/gpu_tests.txt" 2>&1
  grep -E "^\[  (FAILED|PASSED) |tests ran|kernel\(s\)|calls launched|Failure|Expected|Which is|  [A-Za-z_]+:" "$W/gpu_tests.txt" | head -60
fi
for spec in ${RUNS:-base1 new1 new2}; do
  bin=$S; verbose=--verbose; case $spec in base*) bin=$B; verbose=${BASE_VERBOSE---verbose};; esac
  extra=""; case $spec in *m5*) extra="--min-samples 5";; *m6*) extra="--min-samples 6";; esac
  run "$spec" "$bin" sweep --n 1..4096 --db "$W/$spec.db" --format csv --out "$W/$spec.csv" $verbose $extra ${SWEEP_ARGS:-}
  grep -E "^wall|^samples per point|^measured" "$W/$spec.log" | cut -c1-700
  grep -c "^engine:" "$W/$spec.log" | sed 's/^/idle gaps over 2 ms: /'; grep "^engine:" "$W/$spec.log" | sort -t' ' -k2 -rn | head -${GAPS:-0}
done
for pair in ${PAIRS:-base1:new1 new1:new2}; do
  set -- ${pair/:/ }
  python3 bench/agreement/compare.py "$W/$1.csv" "$W/$2.csv" --bands | tee -a "$W/compare.txt"
done
python3 "$(dirname "$0")/ab_kernels.py" "$W" | tee "$W/kernels.txt"
if [ -n "${NOISE:-}" ]; then  # where the big points' sample noise comes from: cold (flush) against hot
  for mode in cold hot; do
    flag=""; [ $mode = hot ] && flag=--hot
    run "noise_$mode" "$S" sweep $NOISE $flag --db "$W/noise_$mode.db" --format csv --out "$W/noise_$mode.csv" --verbose
  done
  python3 "$(dirname "$0")/ab_noise.py" "$W" | tee "$W/noise.txt"
fi
if [ -n "${CUSTOM-1}" ]; then
  run custom "$S" sweep --n 2600..2680:8,3840..3968:8 --backend cublas,custom:05_wgmma_tma:128x256 --db "$W/custom.db" --verbose
  grep -E "^wall|^measured|^skipped" "$W/custom.log" | cut -c1-600
fi
if [ -n "${DRIFT:-}" ]; then
  (sleep "${DRIFT_AT:-1.2}" && timeout 60 "$S" sweep --n 8192 --samples 1500 --warmup-ms 0 --db "$W/load.db" > "$W/load.out" 2> "$W/load.log") &
  run drift "$S" sweep ${DRIFT} --db "$W/drift.db" --format csv --out "$W/drift.csv" --verbose
  wait
  grep -E "^wall|^measured|^sentinel" "$W/drift.log" | cut -c1-300 | head -40
fi
tar czf "$OUT/probe.tar.gz" --exclude="*.db" --exclude="*.db-*" -C /tmp probe
echo "== walls"; cat "$W/walls.txt"
