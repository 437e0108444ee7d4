#!/usr/bin/env bash
# CTest `slurm.job_array` (label slurm): scripts/slurm/submit.sh end to end on a real Slurm cluster
# (CI starts a one-node one: scripts/slurm/local_cluster.sh). Without a GPU the four array tasks run
# GPU-free work: each writes its shard's `sweep --dry-run --shard I/4` plan and takes a committed
# shard store (tests/data/slurm/, the H200 sweep's n = 1..256 split by shard) as its measurement;
# the dependent job merges them. Checked: every size of the plan in exactly one task's plan, each
# shard store holding its plan's sizes, and the merged store holding exactly the points of the
# original store (as `shapescope export` lists them). Exit 77 (skipped) when no cluster answers.
# Usage: test_job_array.sh SHAPESCOPE_BIN SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
if ! command -v sbatch >/dev/null 2>&1; then
  echo "SKIP: no Slurm here (sbatch not found); CI installs and starts one: scripts/slurm/local_cluster.sh start"
  exit 77
fi
if ! "$src/scripts/slurm/local_cluster.sh" status; then
  echo "SKIP: Slurm is installed but no node is up (sinfo); start one: scripts/slurm/local_cluster.sh start"
  exit 77
fi
# The four shard stores the tasks take, one each.
for store in "shard-1-of-4.db" "shard-2-of-4.db" "shard-3-of-4.db" "shard-4-of-4.db"; do
  [ -f "$src/tests/data/slurm/$store" ] || { echo "FAIL: tests/data/slurm/$store is missing"; exit 1; }
done
dir=$(mktemp -d /tmp/shapescope_slurm_XXXXXX)
jobs=""
cleanup() {
  [ -n "$jobs" ] && scancel $jobs 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/logs/*; do echo "--- $log"; cat "$log"; done
  exit 1
}

start=$(date +%s)
ids=$("$src/scripts/slurm/submit.sh" --tasks 4 --dir "$dir" --bin "$bin" --rehearse "$src/tests/data/slurm" -- --n 1..256)
echo "submitted: $ids"
jobs=$(echo "$ids" | awk '{print $2, $4}')
merge=$(echo "$ids" | awk '{print $4}')
# Wait until no job of ours is queued or running: at most ten minutes (four dry-run tasks and a
# merge take seconds, which a busy machine stretches; CTest ends this test at 15 minutes).
deadline=$((SECONDS + 600))
while [ "$SECONDS" -lt "$deadline" ]; do
  [ -z "$(squeue -h -j "${jobs// /,}" 2>/dev/null)" ] && break
  sleep 1
done
[ -z "$(squeue -h -j "${jobs// /,}" 2>/dev/null)" ] && jobs="" || fail "the jobs did not finish in ten minutes"
state=$(scontrol show job "$merge" 2>/dev/null | grep -o 'JobState=[A-Z]*' || true)
[ -f "$dir/all.db" ] || fail "the merge job left no all.db ($state)"

# Every size of the plan n = 1..256 in exactly one task's plan.
sizes=$(for i in 1 2 3 4; do tail -n +2 "$dir/plan-$i-of-4.txt" | awk '{print $2}'; done | sort -n)
[ "$sizes" = "$(seq 1 256)" ] || fail "the four plans do not cover 1..256 exactly once"
# Each shard's store holds its plan's sizes.
for i in 1 2 3 4; do
  planned=$(tail -n +2 "$dir/plan-$i-of-4.txt" | awk '{print $2}' | sort -n)
  stored=$("$bin" export --db "$dir/shard-$i-of-4.db" --format csv | tail -n +2 | cut -d, -f7 | sort -n)
  [ "$planned" = "$stored" ] || fail "shard $i: its store does not hold its plan's sizes"
done
# The merged store lists exactly what the original lists (ids aside: the merge renumbers them).
original=$("$bin" export --db "$src/tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db" --n 1..256 --format csv | cut -d, -f2- | sort)
merged=$("$bin" export --db "$dir/all.db" --format csv | cut -d, -f2- | sort)
[ "$original" = "$merged" ] || fail "the merged store differs from the original's n = 1..256"
grep -q "holds 256 points" "$dir/logs/merge.out" || fail "the merge's line: $(cat "$dir/logs/merge.out")"

echo "slurm job array: 4 tasks, plans cover n = 1..256 once each, merged 256 points equal to the original's, $(( $(date +%s) - start )) s"
