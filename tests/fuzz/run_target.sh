#!/usr/bin/env bash
# Runs one libFuzzer target on a copy of its committed seed corpus, in a temporary folder that is
# removed afterwards (the committed corpus is never written). Prints the end of libFuzzer's log and
# one line "fuzz summary: NAME: S s, N inputs run, F findings"; a finding fails the run and its
# input is printed in base64.
#   run_target.sh TARGET_BINARY CORPUS_DIR [SECONDS]   (SECONDS: default $SHAPESCOPE_FUZZ_SECONDS or 20)
set -euo pipefail
binary=$1 corpus=$2 seconds=${3:-${SHAPESCOPE_FUZZ_SECONDS:-20}}
work=$(mktemp -d "${TMPDIR:-/tmp}/shapescope-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/findings"
cp "$corpus"/* "$work/corpus/"
# -max_len: inputs up to 64 KiB (deep nesting, long lists); -timeout: one input over 60 s is a
# finding (a parser takes milliseconds; 60 s, not libFuzzer's usual 10, so that a busy 2-core
# machine running the sanitizers does not make a slow input a finding); -rss_limit_mb: so is one
# that takes over 2 GiB. tests/fuzz/dict/NAME.dict, where there is
# one, gives the mutations the keys and words the parser knows.
dict=$(dirname "$corpus")/../dict/$(basename "$corpus").dict
options=()
[ -f "$dict" ] && options+=(-dict="$dict")
status=0
start=$(date +%s)
"$binary" -max_total_time="$seconds" -max_len=65536 -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
  "${options[@]}" -artifact_prefix="$work/findings/" "$work/corpus" >"$work/log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
findings=0
for f in "$work"/findings/*; do
  [ -e "$f" ] || continue
  echo "finding $(basename "$f") (base64): $(base64 -w0 "$f")"
  findings=$((findings + 1))
done
if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
  tail -n 80 "$work/log"
  status=1
else
  tail -n 8 "$work/log"
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
echo "fuzz summary: $(basename "$binary"): ${elapsed} s, ${runs:-?} inputs run, ${findings} findings"
exit "$status"
