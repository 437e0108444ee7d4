#!/usr/bin/env bash
# On a GPU host (about 5 minutes on an H100): real training-step traces of
# transformers models built from their configs (random weights, nothing downloaded), profiled and
# padded by shapescope, the padding applied in PyTorch, and one grouped MoE call against its loop.
#   1. GPU tests of the grouped backend (cublasGemmGroupedBatchedEx against cublasGemmEx per group);
#   2. traces: GPT-2 small (12 x 1024 tokens) and a 2-layer Mixtral-8x7B-wide MoE (4 x 1024 tokens),
#      one training step each (scripts/record_trace.py), their GEMM kernels per shape counted from the
#      kernel side (scripts/trim_trace.py);
#   3. shapescope profile --trace on both: calls per shape = kernels per shape, measured GEMM time
#      per step within 10 % of the trace's GEMM kernel time;
#   4. pad --trace on GPT-2's trace against pad --model gpt2 (the same vocabulary padding?), GPT-2
#      re-recorded with the recommended vocabulary: the trace's saving against pad's (within 15 %);
#   5. one grouped call (Mixtral's w1 forward at 8192 tokens, balanced and uneven routing) against
#      the per-expert loop of the same GEMMs.
# Run from the repository root with the build carried as build/ (CUDA archs 80;90a); needs python3
# with torch and transformers, and no network. Logs: $OUT/workload.txt, $OUT/workload.tar.gz.
set -u -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/shapescope_workload_XXXXXX)
S=build/shapescope
DB="$W/workload.db"
LOG="$OUT/workload.txt"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
: > "$LOG"
step() { echo; echo "== $*"; }  # a heading in the log
run() {  # the command into the log, with its wall time; a limit of $1 seconds
  local limit=$1; shift
  echo "\$ $*" >&2
  local start=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "(exit $rc, $((SECONDS - start)) s)" >&2
  return $rc
}
{
  step "GPU and build"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  $S --version
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"

  step "1. grouped backend against cublasGemmEx, group by group"
  run 120 build/shapescope_gpu_tests --gtest_filter='GroupedBackend.*' | tail -8

  step "2. traces of one training step"
  run 120 python3 scripts/record_trace.py --model gpt2 --batch 12 --seq 1024 --out "$W/gpt2.json" > "$W/record-gpt2.txt"
  head -3 "$W/record-gpt2.txt"
  run 200 python3 scripts/record_trace.py --model mixtral --layers 2 --batch 4 --seq 1024 --out "$W/mixtral.json" \
    > "$W/record-mixtral.txt"
  head -3 "$W/record-mixtral.txt"
  for t in gpt2 mixtral; do python3 scripts/trim_trace.py "$W/$t.json" "$W/$t-trimmed"; done

  step "3. shapescope profile --trace"
  run 200 $S profile --trace "$W/gpt2.json" --db "$DB" --json > "$W/profile-gpt2.json"
  run 200 $S profile --trace "$W/mixtral.json" --db "$DB" --json > "$W/profile-mixtral.json"
  $S profile --trace "$W/gpt2.json" --db "$DB" 2>/dev/null | cut -c1-220
  $S profile --trace "$W/mixtral.json" --db "$DB" --no-verdict 2>/dev/null | cut -c1-220
  python3 bench/workloads/workload_check.py shapes "$W/gpt2-trimmed.kernels.csv" "$W/profile-gpt2.json" gpt2
  python3 bench/workloads/workload_check.py shapes "$W/mixtral-trimmed.kernels.csv" "$W/profile-mixtral.json" mixtral

  step "4. pad --trace against pad --model, and the padding applied in PyTorch"
  run 200 $S pad --trace "$W/gpt2.json" --db "$DB" --json > "$W/pad-trace.json"
  run 200 $S pad --model gpt2 --tokens 12288 --train --db "$DB" --json > "$W/pad-model.json"
  $S pad --trace "$W/gpt2.json" --db "$DB" 2>/dev/null | grep -A12 "^recommendation"
  python3 bench/workloads/workload_check.py pad "$W/pad-trace.json" "$W/pad-model.json" | tee "$W/pad-check.txt"
  vocab=$(sed -n 's/^vocab //p' "$W/pad-check.txt")
  if [ -n "$vocab" ]; then
    run 120 python3 scripts/record_trace.py --model gpt2 --vocab "$vocab" --batch 12 --seq 1024 \
      --out "$W/gpt2-padded.json" > "$W/record-gpt2-padded.txt"
    head -3 "$W/record-gpt2-padded.txt"
    run 120 $S profile --trace "$W/gpt2-padded.json" --db "$DB" --json --no-verdict > "$W/profile-gpt2-padded.json"
    python3 bench/workloads/workload_check.py saving "$W/pad-trace.json" "$W/profile-gpt2.json" "$W/profile-gpt2-padded.json"
  fi

  step "5. one grouped MoE call against the per-expert loop"
  {
    echo "m,n,k,layout,dtype,batch,count,name,group"
    for m in 2048 2048 2048 2048 2048 2048 2048 2048; do echo "$m,14336,4096,nt,bf16,1,1,grouped-balanced,b"; done
    for m in 2048 2048 2048 2048 2048 2048 2048 2048; do echo "$m,14336,4096,nt,bf16,1,1,loop-balanced,"; done
    for m in 3100 2500 2300 2200 1900 1700 1500 1184; do echo "$m,14336,4096,nt,bf16,1,1,grouped-uneven,u"; done
    for m in 3100 2500 2300 2200 1900 1700 1500 1184; do echo "$m,14336,4096,nt,bf16,1,1,loop-uneven,"; done
  } > "$W/moe.csv"
  run 200 $S profile --gemms "$W/moe.csv" --db "$DB" --json --no-verdict > "$W/profile-moe.json"
  python3 bench/workloads/workload_check.py grouped "$W/profile-moe.json"
} >> "$LOG" 2>&1

# Everything but the full traces (the trimmed ones and their kernel counts are kept).
tar -czf "$OUT/workload.tar.gz" -C "$W" --exclude=gpt2.json --exclude=mixtral.json --exclude=gpt2-padded.json . 2>/dev/null
grep -E "^==|^\(exit|tests? (passed|FAILED)|^\[  (PASSED|FAILED)" "$LOG" | head -40
echo
echo "check | value | target | ok"
grep "^CHECK |" "$LOG" | sed 's/^CHECK | //'
rm -rf "$W"
