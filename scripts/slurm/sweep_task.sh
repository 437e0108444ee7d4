#!/usr/bin/env bash
# One array task of scripts/slurm/submit.sh: shard I/N of the sweep (I = SLURM_ARRAY_TASK_ID) into
# its own store; SHAPESCOPE_MODE plan: its plan only; rehearse: its plan, and a prepared store as
# its measurement. The sweep options are this script's arguments.
set -euo pipefail
i=${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}
n=${SHAPESCOPE_TASKS:?}
name="shard-$i-of-$n"
cd "$SHAPESCOPE_DIR"
echo "task $i of $n on $(hostname): ${SHAPESCOPE_MODE} $*"
case "$SHAPESCOPE_MODE" in
  measure)
    exec "$SHAPESCOPE_BIN" sweep "$@" --shard "$i/$n" --db "$name.db" --out "$name.txt" ;;
  plan)
    "$SHAPESCOPE_BIN" sweep "$@" --dry-run --shard "$i/$n" > "plan-$i-of-$n.txt" ;;
  rehearse)
    "$SHAPESCOPE_BIN" sweep "$@" --dry-run --shard "$i/$n" > "plan-$i-of-$n.txt"
    cp "$SHAPESCOPE_SOURCE/$name.db" "$name.db" ;;
  *) echo "sweep_task.sh: SHAPESCOPE_MODE '$SHAPESCOPE_MODE' is not measure, plan or rehearse" >&2; exit 2 ;;
esac
