# shellcheck shell=bash
# The H100 model's sweeps, sourced by calibrate.sh and evaluate.sh: perf_model_sweeps prints one sweep
# per line, "STORE NAME DTYPE LAYOUT BATCH M N K" (STORE grid: the fit's points; test: points the fit
# never sees). A row's alignment decides its class (model/perf_model.hpp): in nn and nt the rows are
# K long (A's, and B's in nt) and N long (B's in nn, C's), in tn M and N long; M's alignment does not
# matter in nn and nt. bf16 rows of an odd length are 2-byte aligned, of 2 mod 4 elements 4-byte, of
# 4 mod 8 elements 8-byte; fp32 rows of an odd length 4-byte, of 2 mod 4 elements 8-byte.

# bf16 nn/nt/tn, the grid of 2026-11-27: M and N over 20 values 16..12288 (5 unaligned), K over 10
# aligned values 64..8192.
FIT_MN=16,48,100,128,250,384,512,777,1024,1500,2048,2500,3072,4000,4096,5120,6144,7000,8192,12288
FIT_K=64,200,512,768,1024,2000,3072,4096,6000,8192
# Unaligned rows: 20 values of N (and M in tn) 21..12287, about 1.45x apart, 2-byte aligned every
# other one and 4- and 8-byte in turn between (each class spans the range); 18 values of K 67..8188,
# 1.33x apart, 2-, 4- and 8-byte in turn. Aligned M, N and K to pair them with, from the grid's values.
UN=21,28,43,62,91,132,191,274,401,580,845,1230,1791,2604,3781,5502,7999,10004,11002,12287
UK=67,86,116,151,198,268,355,470,628,835,1110,1476,1963,2614,3476,4621,6146,8188
MU=16,48,128,384,777,1024,2048,4096,8192,12288
UNK_K=86,268,628,1476,2614,6146
UMN_M=21,43,91,191,401,845,1791,3781,7999,12287
UMN_N=28,62,132,274,580,1230,2604,5502,10004,11002
NA=48,384,1024,3072,6144,12288
KA=64,200,768,2000,4096,8192
# The separate sweep of 2026-11-27 (bf16 nn/nt/tn; unaligned only N 3001 and K 1500), and a blind
# unaligned one: no value of either is a fit value (but K 768, 4096 and 8192 of the first). The other
# dtypes' and the batched test sweeps share a value or two with their fit sweeps (4096; fp8's M 8192),
# a whole shape only in fp8 (8192 x 4096 x 4096).
TEST_MN=64,200,512,1000,2048,3001,4096,8192
TEST_K=256,768,1500,4096,8192
TU_M=30,300,1717,4500,10000
TU_N=45,442,600,1212,2047,2400,5002,9999
TU_K=90,320,445,2400,2852,6001

perf_model_sweeps() {
  local L
  for L in nn nt tn; do
    echo "grid grid-bf16-$L bf16 $L 1 $FIT_MN $FIT_MN $FIT_K"
    echo "test test-bf16-$L bf16 $L 1 $TEST_MN $TEST_MN $TEST_K"
    echo "test test-u-bf16-$L bf16 $L 1 $TU_M $TU_N $TU_K"
  done
  # Unaligned N (tn: and M) with aligned K, and with a few unaligned K.
  for L in nn nt; do
    echo "grid un-bf16-$L bf16 $L 1 $MU $UN $KA,151,835,3476"
    echo "grid uk-bf16-$L bf16 $L 1 $MU $NA $UK"
  done
  echo "grid un-bf16-tn bf16 tn 1 $MU $UN $KA"
  echo "grid um-bf16-tn bf16 tn 1 $UN $NA $KA"
  # Both row lengths unaligned at once (the fit above held N's and K's apart but for three K): N from
  # UN and K from UK (nn, nt), M and N from alternate halves of UN (tn, whose rows are M and N long).
  for L in nn nt; do
    echo "grid unk-bf16-$L bf16 $L 1 $MU $UN $UNK_K"
  done
  echo "grid umn-bf16-tn bf16 tn 1 $UMN_M $UMN_N $KA"
  # fp16: nt (x @ W.t()), aligned and not.
  echo "grid fp16-nt fp16 nt 1 $MU 48,132,250,401,777,1024,1230,1791,2604,3072,4096,5502,7000,7999,10004,12288 64,151,512,835,2000,3476,4096,8192"
  echo "test test-fp16-nt fp16 nt 1 64,1717,4500 200,442,1000,3001,8192,9999 256,445,1500,4096"
  # fp32 (plain fp32 math, no TF32: about a tenth of bf16's rate), nn and nt, small.
  for L in nn nt; do
    echo "grid fp32-$L fp32 $L 1 16,128,512,2048,4096,8192 43,48,250,777,1024,1230,1791,2500,4096,5502,8192 64,151,512,1402,2000,4096,8192"
    echo "test test-fp32-$L fp32 $L 1 64,1000,4500 200,442,1000,3001,4096 256,445,1500"
  done
  # fp8 (e4m3, the tensor recipe, cuBLASLt, nt only): rows of 16-byte multiples (N and K multiples of 16).
  echo "grid fp8-nt fp8 nt 1 $MU 16,48,128,384,768,1024,2048,3072,4096,6144,8192,12288 64,192,512,768,1024,2048,3072,4096,6016,8192"
  echo "test test-fp8-nt fp8 nt 1 64,1000,3001,8192 208,1008,4096,5008 256,1504,4096"
  # Strided batched bf16 (torch.bmm: attention's nt and nn).
  for L in nn nt; do
    echo "grid batch-bf16-$L bf16 $L 2,8,32,128 64,256,1024,4096 64,256,1024,4096 64,128,512,2048"
    echo "test test-batch-bf16-$L bf16 $L 4,24,64 128,2000 128,640,2000 96,1000"
  done
}

# A dtype's backend: fp8 runs on cuBLASLt only, the rest on cuBLAS.
backend_of() { if [ "$1" = fp8 ]; then echo cublaslt; else echo cublas; fi; }

# Each test sweep predicted by a model (sweep --dry-run --predict): DIR/predicted-NAME.txt. GPU_ARGS
# (default --gpu h100-sxm) names the GPU predicted for: --gpu h200, or --scale-to h200 for the H100
# model scaled to the H200.
#   perf_model_predict_tests BIN MODEL DIR [GPU_ARGS...]
perf_model_predict_tests() {
  local bin=$1 model=$2 dir=$3 STORE NAME D L B M N K
  shift 3
  local gpu_args=("$@")
  [ ${#gpu_args[@]} -gt 0 ] || gpu_args=(--gpu h100-sxm)
  perf_model_sweeps | while read -r STORE NAME D L B M N K; do
    [ "$STORE" = test ] || continue
    COLUMNS=300 "$bin" sweep --m "$M" --n "$N" --k "$K" --batch "$B" --layout "$L" --dtype "$D" --backend "$(backend_of "$D")" \
      --dry-run --predict --perf-model "$model" "${gpu_args[@]}" --db "$dir/none.db" > "$dir/predicted-$NAME.txt" \
      2>> "$dir/predicted.err" < /dev/null || echo "$NAME: not predicted (see $dir/predicted.err)" >&2
  done
}
