#!/usr/bin/env bash
# The sweep engine's numbers in ONE run on a GPU host (about 3-5 minutes of an H100): sweep speed against
# its floor, repeatability, agreement with PyTorch, the custom-kernel sweep, burst against sustained
# clocks, a provoked sentinel drift, and the GPU tests. Run from the repository root with the build
# carried in build/ (cmake -B build -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build):
#
#   OUT=/path/to/out bench/speed/sweep_speed.sh
#
# The steps write under $WORK (default /tmp/shapescope_gpu_speed: one log per step, the CSVs, the
# stores); $OUT gets gpu_speed_logs.tar.gz (everything but the stores), table.md and errors.txt. The
# table (bench/speed/speed_table.py) is printed last. A step that fails
# says so on stderr and in errors.txt, and the run goes on; the exit status is the number of failed
# steps (0: every step ran).
set -u -o pipefail
OUT=${OUT:-out}
S=${S:-build/shapescope}
T=${T:-build/shapescope_gpu_tests}
WORK=${WORK:-/tmp/shapescope_gpu_speed}
L="$WORK/gpu_speed"
rm -rf "$L"
mkdir -p "$L" "$OUT"
: > "$L/errors.txt"
: > "$L/walls.txt"
failures=0

fail() {
  echo "gpu_speed: FAILED: $*" | tee -a "$L/errors.txt" >&2
  failures=$((failures + 1))
}
# The logs so far into $OUT before each step, so that a run stopped at the device's time limit still
# brings back what it did (the stores stay out: the CSVs hold the same points).
snapshot() {
  tar czf "$OUT/gpu_speed_logs.tar.gz" --exclude='*.db' --exclude='*.db-*' -C "$WORK" gpu_speed 2> /dev/null
  cp "$L/errors.txt" "$OUT/errors.txt" 2> /dev/null
}
step() {
  snapshot
  echo "== $(date +%T) $*" | tee -a "$L/steps.txt" >&2
}
now() { date +%s.%N; }
# Runs a command with a time limit, its stdout and stderr into files; records its whole-process wall
# time (seconds, from outside the process) under NAME in walls.txt.
timed_run() {
  local name=$1 limit=$2 out=$3 err=$4
  shift 4
  local t0 t1 rc
  t0=$(now)
  timeout "$limit" "$@" > "$out" 2> "$err"
  rc=$?
  t1=$(now)
  echo "$name $(python3 -c "print(f'{$t1 - $t0:.3f}')") $rc" >> "$L/walls.txt"
  if [ "$rc" -ne 0 ]; then
    fail "$name: exit $rc after $(python3 -c "print(f'{$t1 - $t0:.1f}')") s; last lines of $err:"
    tail -3 "$err" | sed 's/^/    /' | tee -a "$L/errors.txt" >&2
  fi
  return $rc
}

[ -x "$S" ] || { echo "gpu_speed: no $S: carry the build in build/ (see the top of this script)" >&2; exit 100; }
command -v python3 > /dev/null || { echo "gpu_speed: python3 is needed for the tables" >&2; exit 100; }

step "environment"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
  "$S" --version
  "$S" info
} > "$L/env.txt" 2>&1 || fail "environment: nvidia-smi or shapescope info failed (see env.txt)"
head -2 "$L/env.txt" >&2

step "GPU tests (shapescope_gpu_tests: every test of label gpu)"
if [ -x "$T" ]; then
  timed_run gpu_tests 300 "$L/gpu_tests.txt" "$L/gpu_tests.err" "$T" --gtest_color=no
  grep -E "^\[  FAILED  \]|tests ran|^\[  PASSED  \]" "$L/gpu_tests.txt" | sort -u | head -20 >&2
else
  fail "GPU tests: no $T in the carried build"
fi

# The sweep, twice (repeatability), each into a fresh store; then once with the old fixed
# count (10 samples) for the same points, to show the accuracy is the same.
for i in 1 2 3; do
  step "sweep $i: --n 1..4096 (default: stopping rule, sustained clocks)"
  timed_run "sweep$i" 120 /dev/null "$L/sweep$i.log" "$S" sweep --n 1..4096 --db "$L/sweep$i.db" --format csv \
    --out "$L/sweep$i.csv" --verbose
  tail -n 1 "$L/sweep$i.log" >&2
done
step "sweep 10: --n 1..4096 --samples 10 (the fixed count of before)"
timed_run sweep10 120 /dev/null "$L/sweep10.log" "$S" sweep --n 1..4096 --samples 10 --db "$L/sweep10.db" \
  --format csv --out "$L/sweep10.csv" --verbose
tail -n 1 "$L/sweep10.log" >&2
{
  python3 bench/agreement/compare.py "$L/sweep1.csv" "$L/sweep2.csv" --bands
  python3 bench/agreement/compare.py "$L/sweep2.csv" "$L/sweep3.csv" --bands
  python3 bench/agreement/compare.py "$L/sweep1.csv" "$L/sweep3.csv" --bands
  python3 bench/agreement/compare.py "$L/sweep1.csv" "$L/sweep10.csv"
  python3 bench/agreement/compare.py "$L/sweep2.csv" "$L/sweep10.csv"
} > "$L/repeatability.txt" 2>&1 || fail "repeatability: bench/agreement/compare.py failed (see repeatability.txt)"
cat "$L/repeatability.txt" >&2

step "agreement with PyTorch over n=256..4096 (eager, eager-shuffled, graph-shuffled, launch gaps)"
if python3 -c "import torch; assert torch.cuda.is_available()" > /dev/null 2>&1; then
  timed_run agreement 300 "$L/agreement.txt" "$L/agreement.err" python3 bench/agreement/agreement.py \
    --sweep "$L/sweep1.csv" --n 256..4096 --samples 10 --out "$L/torch"
  python3 bench/agreement/compare.py "$L/sweep2.csv" "$L/torch/torch_eager.csv" --from 256 >> "$L/agreement.txt" 2>&1
  grep "^agreement:" "$L/agreement.txt" >&2
else
  fail "agreement: no PyTorch with CUDA here (python3 -c 'import torch'): the agreement rows stay empty"
fi

step "custom sweep: --n 2600..2680:8,3840..3968:8 --backend cublas,custom:05_wgmma_tma:128x256 (112 points, as in the issue)"
timed_run custom 120 "$L/custom.txt" "$L/custom.log" "$S" sweep --n 2600..2680:8,3840..3968:8 \
  --backend cublas,custom:05_wgmma_tma:128x256 --db "$L/custom.db" --verbose
grep -E "^skipped" "$L/custom.log" | head -5 >&2
tail -n 1 "$L/custom.log" >&2

# Burst first, after a pause, so that it starts from a cool GPU; then sustained with a long warm-up,
# which brings a big GEMM to the power limit. Both points go into one store (the state is in the key).
step "clocks: 8192^3 bf16 --clocks burst, then --clocks sustained --warmup-ms 3000"
sleep 3
timed_run burst 120 /dev/null "$L/burst.log" "$S" sweep --n 8192 --clocks burst --samples 20 --db "$L/clocks.db" \
  --format csv --out "$L/burst.csv" --verbose
timed_run sustained 120 /dev/null "$L/sustained.log" "$S" sweep --n 8192 --clocks sustained --warmup-ms 3000 \
  --samples 20 --db "$L/clocks.db" --format csv --out "$L/sustained.csv" --verbose
tail -n 1 "$L/burst.log" "$L/sustained.log" >&2

# A second process runs 8192^3 GEMMs (about 3 s, at the power limit) from 2.5 s into a sweep: chunks
# measured meanwhile see their sentinel drift (lower clocks, shared GPU) and are measured again.
step "provoked drift: a second process's GEMMs from 2.5 s into --n 1..4096"
(sleep 2.5 && timeout 60 "$S" sweep --n 8192 --samples 2000 --warmup-ms 0 --db "$L/load.db" \
  > "$L/load.txt" 2> "$L/load.log"; echo "load: exit $?" >> "$L/load.log") &
load=$!
timed_run drift 180 /dev/null "$L/drift.log" "$S" sweep --n 1..4096 --db "$L/drift.db" --format csv \
  --out "$L/drift.csv" --verbose
wait "$load"
tail -2 "$L/load.log" | sed 's/^/    load: /' >&2
grep -E "^sentinel:" "$L/drift.log" | head -10 >&2
grep -q "measured again" "$L/drift.log" || echo "gpu_speed: note: no chunk was re-measured in the drift run" \
  "(every sentinel check is in drift.log under 'sentinel check:')" | tee -a "$L/errors.txt" >&2

# The same load against a burst sweep: its bursts run at boost clocks between cool-downs, when the
# other process holds the GPU at its power limit.
step "provoked drift, burst: a second process's GEMMs from 2 s into --n 1..4096:4 --clocks burst"
(sleep 2 && timeout 60 "$S" sweep --n 8192 --samples 2000 --warmup-ms 0 --db "$L/load_burst.db" \
  > "$L/load_burst.txt" 2> "$L/load_burst.log"; echo "load: exit $?" >> "$L/load_burst.log") &
load=$!
timed_run drift_burst 180 /dev/null "$L/drift_burst.log" "$S" sweep --n 1..4096:4 --clocks burst \
  --db "$L/drift_burst.db" --format csv --out "$L/drift_burst.csv" --verbose
wait "$load"
grep -E "^measured" "$L/drift_burst.log" | cut -c1-400 >&2

step "tables"
python3 bench/speed/speed_table.py "$L" > "$L/table.md" 2> "$L/table.err" || fail "speed_table.py (see table.err)"
snapshot || fail "tar of the logs"
cp "$L/table.md" "$OUT/" 2> /dev/null
# The first sweep's store: the H100 data set of the README (GPUs side by side, the report page).
cp "$L/sweep1.db" "$OUT/sweep_bf16_nn_1-4096.db" 2> /dev/null
echo
echo "logs: $OUT/gpu_speed_logs.tar.gz; failed steps: $failures"
cat "$L/errors.txt"
echo
cat "$L/table.md"
exit $failures
