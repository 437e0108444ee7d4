#!/usr/bin/env bash
# Captures what shapescope prints (stdout, stderr, exit code) and writes (plot .gp/.dat files) for a
# fixed list of commands on copies of the committed H200 stores, so that two builds can be compared:
#   scripts/compare_outputs.sh BIN OUTDIR      e.g. build/shapescope /tmp/after
#   diff -r /tmp/redesign-baseline /tmp/after
# The stores are copied to one fixed scratch folder first (commands print their paths, and some
# commands used to write to the stores they read), so committed files are never touched and the
# paths in the output are the same from run to run.
set -u
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=/tmp/shapescope-compare-work
rm -rf "$work" "$out"
mkdir -p "$work/db" "$work/plots" "$out/cmd" "$out/files"
# One fixed path for the binary too: --help prints it.
cp "$1" "$work/shapescope"
bin=$work/shapescope
data=$root/tests/data
cp "$data/h200-2026-11-21-explain/explain.db" "$work/db/explain.db"
cp "$data/h200-2026-11-21-explain/gallery.db" "$work/db/gallery.db"
cp "$data/h200-2026-11-21-final/explain.db" "$work/db/final_explain.db"
cp "$data/h200-2026-11-21-final/pad.db" "$work/db/pad.db"
cp "$data/h200-2026-11-21/sweep_bf16_nn_1-4096.db" "$work/db/squares.db"
cp "$root/bench/kernels/results/h200-2026-11-21/kernels.db" "$work/db/kernels.db"
D=$work/db
P=$work/plots
n=0
# run NAME ARGS...: runs shapescope in the scratch folder (so a default shapescope.db lands there).
run() {
  local name=$1; shift
  n=$((n + 1))
  local tag
  tag=$(printf '%03d_%s' "$n" "$name")
  (cd "$work" && "$bin" "$@" >"$out/cmd/$tag.out" 2>"$out/cmd/$tag.err"; echo $? >"$out/cmd/$tag.rc")
  printf '%s\n' "$*" >"$out/cmd/$tag.args"
}

# explain from stores (no GPU here), text and JSON, several shapes and backends.
for s in 1793 4095 3200 4096 4096x1x4096 4096x1023x4096 1792; do
  run explain_final_$s explain $s --db $D/final_explain.db
  run explain_final_json_$s explain $s --json --db $D/final_explain.db
done
run explain_1793 explain 1793 --db $D/explain.db
run explain_1793_json explain 1793 --json --db $D/explain.db
run explain_lt explain 4095 --backend cublaslt --lt-algos 4 --db $D/final_explain.db
run explain_lt_json explain 4095 --backend cublaslt --lt-algos 4 --json --db $D/final_explain.db
run explain_squares explain 1000 --db $D/squares.db
run explain_squares_2048 explain 2048 --db $D/squares.db
run explain_custom explain 4096 --backend custom --db $D/kernels.db
run explain_custom_sel explain 4096 --backend custom:05_wgmma_tma --db $D/kernels.db
run explain_custom_one explain 4096 --backend custom:05_wgmma_tma:128x256:persistent --db $D/kernels.db
run explain_custom_one_json explain 2048 --backend custom:04_mma_pipelined:128x128:dp --json --db $D/kernels.db
run explain_a100 explain 1793 --gpu a100 --tile 256x128
run explain_a100_json explain 1793 --gpu a100 --tile 256x128 --json
run explain_a100_db explain 1793 --gpu a100 --tile 256x128 --db $D/explain.db
run explain_h200 explain 4095 --gpu h200 --db $D/explain.db
run explain_nodb explain 1793 --db $D/missing.db
# explain refusals (tests/cpu/test_explain.cpp)
run explain_bad1 explain 1793 --gpu rtx9090
run explain_bad2 explain 1793 --tile 256x128
run explain_bad3 explain 1793 --gpu a100 --tile 256
run explain_bad4 explain 1793 --backend cutlass
run explain_bad5 explain 1793 --dtype int4
run explain_bad6 explain 1793 --gpu l4 --db $D/explain.db
run explain_bad7 explain 1793 --samples 0 --db $D/explain.db
run explain_bad8 explain 1793 --dtype fp8 --db $D/explain.db
run explain_bad9 explain 0
run explain_bad10 explain 1..5
run explain_help explain --help

# pad: dry runs for every preset, JSON, tensor parallel, from a store.
for m in gpt2 gpt2-xl llama3-8b llama3-70b mistral-7b qwen2.5-7b; do
  run pad_$m pad --model $m --tokens 4096 --train --dry-run
done
run pad_gpt2 pad --model gpt2 --tokens 12288 --train --dry-run
run pad_gpt2_json pad --model gpt2 --tokens 12288 --train --dry-run --json
run pad_llama_tp pad --model llama3-8b --tokens 1..16:8 --tp 2 --dry-run --json
run pad_llama_tp_text pad --model llama3-8b --tokens 1..16:8 --tp 2 --dry-run
run pad_fp8 pad --model gpt2 --tokens 12288 --dtype fp8 --backend cublaslt --dry-run
run pad_fwd pad --model gpt2 --tokens 12288 --dry-run
run pad_store pad --model gpt2 --tokens 12288 --train --db $D/pad.db
run pad_store_json pad --model gpt2 --tokens 12288 --train --json --db $D/pad.db
run pad_store_llama pad --model llama3-8b --tokens 8192 --train --db $D/pad.db
run pad_nogpu pad --model gpt2 --tokens 12288 --db $D/new_pad.db
run pad_help pad --help
run pad_bad1 pad --model nope --dry-run
run pad_bad2 pad --tokens 8 --dry-run
run pad_bad3 pad --model gpt2 --dry-run
run pad_bad4 pad --config /nonexistent/config.json --tokens 8 --dry-run
run pad_bad5 pad --model gpt2 --tokens 0 --dry-run
run pad_bad6 pad --model gpt2 --tokens 64..8 --dry-run
run pad_bad7 pad --model gpt2 --tokens abc --dry-run
run pad_bad8 pad --model gpt2 --tokens 1..4096 --dry-run
run pad_bad9 pad --model gpt2 --tokens 8 --tp 0 --dry-run
run pad_bad10 pad --model gpt2 --tokens 8 --tp 2 --dry-run
run pad_bad11 pad --model llama3-70b --tokens 8 --tp 3 --dry-run
run pad_bad12 pad --model llama3-8b --tokens 8 --tp 16 --dry-run
run pad_bad13 pad --model gpt2 --tokens 8 --dtype int4 --dry-run
run pad_bad14 pad --model gpt2 --tokens 8 --dtype fp8 --backend cublaslt --train --dry-run
run pad_bad15 pad --model gpt2 --tokens 8 --dtype fp8 --dry-run
run pad_bad16 pad --model gpt2 --tokens 8 --backend cutlass --dry-run
run pad_bad17 pad --model gpt2 --tokens 8 --samples 0 --dry-run
run pad_bad18 pad --model gpt2 --config x.json --tokens 8 --dry-run

# plot: every kind, the .gp/.dat files it writes are compared too.
plot() {
  local name=$1; shift
  mkdir -p "$P/$name"
  run plot_$name plot "$@" --out "$P/$name/"
}
plot flops flops --db $D/squares.db
plot runtime runtime --db $D/squares.db --n 1..4096
plot waves waves --db $D/squares.db
plot waves_kernel waves --db $D/squares.db --kernel cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128
plot kernels kernels --db $D/squares.db
plot compare compare --db $D/gallery.db --n 64..4096:64 --backend cublas,cublaslt
plot compare_algo compare --db $D/explain.db --n 3584..4096 --backend cublaslt --algo h0,h1
plot heatmap heatmap --db $D/gallery.db --m 256..8192:256 --n 256..8192:256 --k 4096
plot tilegrid tilegrid 1793 --db $D/explain.db
plot tilegrid_decode tilegrid 4096x1x4096 --db $D/explain.db
plot tilegrid_a100 tilegrid 1793 --gpu a100 --tile 256x128
plot roofline roofline --db $D/gallery.db --calibration $D/explain.db
plot flops_sub flops --db $D/explain.db --m 4096 --k 4096 --n 1..4096
plot flops_custom flops --db $D/kernels.db
plot waves_custom waves --db $D/kernels.db --backend custom --layout nn
plot flops_custom_nn flops --db $D/kernels.db --layout nn
plot kernels_custom kernels --db $D/kernels.db --layout nt
run plot_bad1 plot runtime --db $D/squares.db --n 5000..6000 --out $P/bad/
run plot_bad2 plot flops --db $D/squares.db --kernel no_such_kernel --out $P/bad/
run plot_bad3 plot tilegrid 5000 --db $D/explain.db --out $P/bad/
run plot_bad4 plot flops --db $D/squares.db --dtype bf8
run plot_bad5 plot flops --db $D/squares.db --layout xy
run plot_bad6 plot flops --db $D/squares.db --n 4096..1
run plot_bad7 plot flops --db $D/squares.db --m 1..x
run plot_bad8 plot flops --db $D/squares.db --backend cutlass
run plot_bad9 plot flops --db $D/squares.db --backend ,cublas
run plot_bad10 plot flops --db $D/squares.db --algo h9
run plot_bad11 plot flops --db $D/squares.db --gpu a100
run plot_bad12 plot flops --db $D/squares.db --cublas 12
run plot_bad13 plot flops --db $D/squares.db --ld-pad -1
run plot_bad14 plot flops --db $D/squares.db --offset -2
run plot_bad15 plot flops --db $D/squares.db --tile 256x128
run plot_bad16 plot tilegrid 1793 --tile 256x128
run plot_bad17 plot tilegrid 1793 --gpu foo --tile 256x128
run plot_bad18 plot tilegrid 1793 --gpu a100 --tile 256
run plot_bad19 plot tilegrid 1793 --n 5 --db $D/squares.db
run plot_bad20 plot flops --db $D/squares.db --out /nonexistent-dir/x
run plot_bad21 plot flops --db $D/squares.db --bogus
run plot_bad22 plot flops --db $D/gallery.db --out $P/bad/
run plot_bad23 plot heatmap --db $D/squares.db --out $P/bad/
run plot_bad24 plot compare --db $D/explain.db --n 3584..4096 --backend cublaslt --algo h1,h2 --out $P/bad/
run plot_bad25 plot compare --db $D/squares.db --out $P/bad/
run plot_bad26 plot roofline --db $D/squares.db --out $P/bad/
run plot_bad27 plot
run plot_help plot --help

# sweep: dry runs and refusals (tests/cpu/test_cli.cpp).
run sweep_dry1 sweep --n 1..64 --dry-run
run sweep_dry2 sweep --n 1..4096:512 --m 7 --dry-run
run sweep_dry3 sweep --n 1..64 --backend cublas,cublaslt --lt-algos 2 --dry-run
run sweep_dry4 sweep --n 64 --backend cublas,custom --dry-run
run sweep_dry5 sweep --m 4096 --k 4096 --n 1..8192:8 --backend cublas,cublaslt --dry-run
run sweep_dry6 sweep --m 8192 --n 4096 --k 4096 --layout nt --dtype fp8 --backend cublaslt --dry-run
run sweep_dry7 sweep --n 1..4096 --dry-run --shard 2/3
run sweep_dry8 sweep --n 64..8192*2 --batch 4 --lda 9000 --ldb 9000 --ldc 9000 --dry-run
run sweep_dry9 sweep --n 4096 --backend custom:05_wgmma_tma --dry-run --hot
run sweep_dry10 sweep --n 1..64 --dry-run --format json
run sweep_dry11 sweep --n 1..64 --dry-run --format csv
run sweep_nogpu sweep --n 64 --db $D/new_sweep.db
run sweep_help sweep --help
for a in "--n 64 --bogus" "--n 4096..1" "--m ''" "--k 0" "--n=-5" "--n 1..x" "--n 1..64:0" \
         "--n 64 --dtype bf8" "--n 64 --layout xy" "--n 64 --dtype fp8" "--n 64 --dtype fp8 --layout nt" \
         "--n 64 --backend cublas,cutlass" "--n 64 --backend cublas,cublas" "--n 64 --lt-algos 4" \
         "--n 64 --format xml" "--n 64 --shard 3/2" "--n 1..3 --shard 5/8" "--n 64 --samples 0" \
         "--n 64 --max-noise 0" "--n 64 --lda 10" "--n 64 --ld-pad -1" "--n 64 --offset -3" \
         "--n 64 --out /nonexistent-dir/x.csv" "--n 64 --backend custom:nope" "--n 64 --backend custom:01_naive:7x7"; do
  eval "run sweep_bad sweep $a --dry-run"
done
run info info
run help --help
run nothing

# The files plot wrote (the .svg/.png are gnuplot's rendering of these).
(cd "$P" && find . -name '*.gp' -o -name '*.dat' | sort | while read -r f; do
  mkdir -p "$out/files/$(dirname "$f")"; cp "$f" "$out/files/$f"; done)
# The stores must be as they were (the views open them read-only).
(cd "$work/db" && sha256sum ./*.db >"$out/store_hashes.txt")
echo "$n commands captured in $out"
