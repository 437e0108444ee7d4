#!/usr/bin/env bash
# The stopping rule's target against sweep time and repeatability on one GPU host: for each target
# (--target-noise, percent) two sweeps of --n 1..4096 into fresh stores, plus one with the fixed
# --samples 10; whole-process wall times and bench/agreement/compare.py's median/p95 between the pairs.
#   OUT=out bench/speed/stop_rule.sh 0.5 1 2
set -u -o pipefail
OUT=${OUT:-out}
S=${S:-build/shapescope}
W=$(mktemp -d)
mkdir -p "$OUT"
run() {  # name, sweep options...
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  "$S" sweep --n 1..4096 --db "$W/$name.db" --format csv --out "$W/$name.csv" "$@" 2> "$W/$name.log" > /dev/null
  t1=$(date +%s%N)
  printf '%-12s wall %6.2f s  %s\n' "$name" "$(echo "$t0 $t1" | awk '{print ($2-$1)/1e9}')" \
    "$(grep -o 'samples median [0-9]*, max [0-9]*' "$W/$name.log")" | tee -a "$W/summary.txt"
}
run fixed10 --samples 10
for target in "$@"; do
  run "t${target}a" --target-noise "$target"
  run "t${target}b" --target-noise "$target"
done
for target in "$@"; do
  python3 bench/agreement/compare.py "$W/t${target}a.csv" "$W/t${target}b.csv" | head -1 | tee -a "$W/summary.txt"
  python3 bench/agreement/compare.py "$W/t${target}b.csv" "$W/fixed10.csv" | head -1 | tee -a "$W/summary.txt"
done
tar -C "$W" -czf "$OUT/stop_rule.tar.gz" --exclude='*.db' .
