#!/usr/bin/env bash
# Renders every picture of this gallery from the committed H200 stores (no GPU needed):
#   scripts/build.sh && docs/gallery/render.sh
# Each figure leaves NAME.svg (hover a point), NAME.png, NAME.gp (edit it and run `gnuplot NAME.gp`
# here to restyle) and NAME.dat.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/shapescope
squares=tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db
gallery=tests/data/h200-2026-11-21-explain/gallery.db
explain=tests/data/h200-2026-11-21-explain/explain.db
out=docs/gallery

$bin plot flops --db $squares --n 1..4096 --out $out/
$bin plot runtime --db $squares --n 1..4096 --out $out/
$bin plot waves --db $squares --n 1..4096 --out $out/
$bin plot waves --db $squares --n 1..4096 --kernel cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128 --out $out/waves-cutlass75
$bin plot kernels --db $squares --n 1..4096 --out $out/
$bin plot compare --db $gallery --calibration $explain --n 64..4096:64 --backend cublas,cublaslt --out $out/
$bin plot heatmap --db $gallery --calibration $explain --m 256..8192:256 --n 256..8192:256 --k 4096 --out $out/
$bin plot tilegrid 1793 --db $explain --out $out/
$bin plot tilegrid 1793 --gpu a100 --tile 256x128 --out $out/
$bin plot tilegrid 4096x1x4096 --db $explain --out $out/
$bin plot roofline --db $gallery --calibration $explain --out $out/
$bin plot compare --db bench/speed/results/h100-2026-11-25-sweep/sweep_bf16_nn_1-4096.db --db $squares --n 1..4096 --out $out/compare-gpus
