#!/usr/bin/env bash
# The data-safety battery of issue 18, run against a shapescope binary without a GPU: each case's exit
# code, first line of stderr, and whether the files it could touch kept their bytes (md5 before/after,
# and files that appeared). Prints a Markdown table.
#   scripts/data_safety_cases.sh build/shapescope
set -u
bin=$(realpath "${1:-build/shapescope}")
src=$(cd "$(dirname "$0")/.." && pwd)
store=$src/tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db
work=$(mktemp -d /tmp/shapescope_safety_XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Files under the work directory, and anything written beside /dev/null (a device is no prefix).
snap() { (find . -type f -print0 | sort -z | xargs -0 -r md5sum; for f in /dev/null.*; do [ -e "$f" ] && echo "- $f"; done) 2>/dev/null; }
printf '| case | exit | stderr (first line) | files |\n|---|---|---|---|\n'
case_() {
  local name=$1; shift
  rm -rf "$work"/* "$work"/.[!.]* 2>/dev/null
  cp "$store" store.db
  printf 'precious user data\n' > results.csv
  mkdir -p plotdir && printf 'old picture\n' > plotdir/flops.svg
  local before after
  before=$(snap)
  "$bin" "$@" >/dev/null 2>err.txt
  local rc=$?
  local first
  first=$(head -n 1 err.txt | cut -c1-150 | sed 's/|/\\|/g')
  rm -f err.txt
  after=$(snap)
  local files="unchanged"
  if [ "$before" != "$after" ]; then
    files=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print $1, $3}' | sort -k2 -u | tr '\n' ' ' | sed 's/|/\\|/g')
  fi
  printf '| `%s` | %s | %s | %s |\n' "$name" "$rc" "$first" "$files"
  rm -f /dev/null.svg /dev/null.png /dev/null.gp /dev/null.dat
}
case_ "sweep --n 64 --out results.csv (no GPU)" sweep --n 64 --out results.csv
case_ "sweep --n 64 --out results.csv --db store.db (no GPU)" sweep --n 64 --out results.csv --db store.db
case_ "sweep --n 64 --out store.db --db store.db" sweep --n 64 --out store.db --db store.db
case_ "sweep --n 64 --out plotdir" sweep --n 64 --out plotdir
case_ "sweep --n 64 --out /dev/null" sweep --n 64 --out /dev/null
case_ "sweep --n 64 (no GPU, no store yet)" sweep --n 64
case_ "info (no GPU, no store yet)" info
case_ "info --db store.db (no GPU)" info --db store.db
case_ "explain 1793 --db store.db" explain 1793 --db store.db
case_ "explain 1793 --db store.db --json" explain 1793 --db store.db --json
case_ "plot flops --db store.db --out plotdir/" plot flops --db store.db --out plotdir/
case_ "plot flops --db store.db --out /dev/null" plot flops --db store.db --out /dev/null
case_ "plot flops --db store.db --out store" plot flops --db store.db --out store
case_ "plot flops --db store.db --templates /nonexistent" plot flops --db store.db --templates /nonexistent --out plotdir/
case_ "pad --model gpt2 --tokens 12288 --db store.db (no GPU)" pad --model gpt2 --tokens 12288 --db store.db
case_ "sweep --n 64 --db ''" sweep --n 64 --db ''
case_ "sweep --n 64 --db plotdir" sweep --n 64 --db plotdir
case_ "explain 1793 --db plotdir" explain 1793 --db plotdir
case_ "sweep --n 64 --shard 1/99999999999999999999" sweep --n 64 --shard 1/99999999999999999999
case_ "sweep --n 64 --device -1" sweep --n 64 --device -1
case_ "sweep --n 64 --seed -1" sweep --n 64 --seed -1
case_ "explain 99999999999" explain 99999999999
case_ "sweep --n 64 --lda 100 --ld-pad 8" sweep --n 64 --lda 100 --ld-pad 8
case_ "sweep --n 64 --dry-run --format csv" sweep --n 64 --dry-run --format csv
case_ "sweep --n 64 --dry-run --out results.csv" sweep --n 64 --dry-run --out results.csv
case_ "sweep --n 1..100000:1000 --dry-run" sweep --n 1..100000:1000 --dry-run
