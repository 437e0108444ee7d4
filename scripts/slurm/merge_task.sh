#!/usr/bin/env bash
# The job that runs after every array task of scripts/slurm/submit.sh succeeded: the shards' stores
# into DIR/all.db (merged into it when it exists: a resubmitted sweep adds what it measured).
set -euo pipefail
cd "$SHAPESCOPE_DIR"
n=${SHAPESCOPE_TASKS:?}
if [ "$SHAPESCOPE_MODE" = plan ]; then
  echo "plans only: nothing to merge ($(ls plan-*-of-"$n".txt | wc -l) plans)"
  exit 0
fi
stores=()
for i in $(seq 1 "$n"); do stores+=("shard-$i-of-$n.db"); done
exec "$SHAPESCOPE_BIN" merge all.db "${stores[@]}"
