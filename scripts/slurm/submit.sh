#!/usr/bin/env bash
# A large sweep as a Slurm job array: task I of N runs `shapescope sweep ... --shard I/N` into its
# own store DIR/shard-I-of-N.db, and a job that starts when every task has succeeded merges them
# into DIR/all.db (`shapescope merge`). Prints the two job ids.
#
#   scripts/slurm/submit.sh --tasks 16 --dir /scratch/sweep -- --m 256..16384:256 --n 256..16384:256 --k 4096
#   scripts/slurm/submit.sh --tasks 8 --dir out --gpus-per-task 4 -- --n 1..16384 --devices all
#   scripts/slurm/submit.sh --tasks 4 --dir out --dry-run -- --n 1..4096       # each task: its plan only
#
# Options (before --; everything after -- goes to `shapescope sweep`):
#   --tasks N           array tasks (shards)                      --dir DIR   shared folder for stores and logs
#   --bin PATH          shapescope (default: on PATH)             --partition P, --time T, --account A
#   --gpus-per-task G   GPUs for each task (default 1; with --devices all, one worker per GPU)
#   --dry-run           tasks write their shard's plan (DIR/plan-I-of-N.txt), measure nothing, no GPU
#   --rehearse SRC      GPU-free rehearsal of the whole pipeline: each task writes its plan and takes
#                       SRC/shard-I-of-N.db as its measurement; the merge runs as it would
# A task that fails (or is cancelled) leaves the merge unrun (Slurm cancels it); resubmitting the
# same command measures only what the stores lack: each task resumes its own store.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tasks="" dir="" bin="" mode=measure source="" gpus=1
common=() gpu=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --partition) common+=(--partition "$2"); shift 2 ;;
    --time) common+=(--time "$2"); shift 2 ;;
    --account) common+=(--account "$2"); shift 2 ;;
    --gpus-per-task) gpus=$2; shift 2 ;;
    --dry-run) mode=plan; shift ;;
    --rehearse) mode=rehearse; source=$(cd "$2" && pwd); shift 2 ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown option '$1' (see the top of $0)" >&2; exit 2 ;;
  esac
done
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --tasks: '$tasks' is not a positive number" >&2; exit 2; }
[ -n "$dir" ] || { echo "submit.sh: --dir is required (a folder every node can write)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "submit.sh: no sweep options after -- (e.g. -- --n 1..4096)" >&2; exit 2; }
[[ "$gpus" =~ ^[0-9]+$ ]] || { echo "submit.sh: --gpus-per-task: '$gpus' is not a number" >&2; exit 2; }
bin=${bin:-$(command -v shapescope || true)}
[ -x "$bin" ] || { echo "submit.sh: --bin: no shapescope program ('$bin'); give --bin PATH" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)
# GPU-free modes ask for no GPU.
if [ "$mode" = measure ] && [ "$gpus" -gt 0 ]; then gpu=(--gpus-per-task "$gpus"); fi

export SHAPESCOPE_BIN=$bin SHAPESCOPE_DIR=$dir SHAPESCOPE_TASKS=$tasks SHAPESCOPE_MODE=$mode SHAPESCOPE_SOURCE=$source
array=$(sbatch --parsable --export=ALL --job-name=shapescope-sweep --array="1-$tasks" "${common[@]}" "${gpu[@]}" \
               --output="$dir/logs/task-%a-of-$tasks.out" "$here/sweep_task.sh" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --export=ALL --job-name=shapescope-merge --dependency="afterok:$array" \
               --kill-on-invalid-dep=yes "${common[@]}" --output="$dir/logs/merge.out" \
               "$here/merge_task.sh")
merge=${merge%%;*}
echo "array $array merge $merge"
