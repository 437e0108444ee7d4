# shapescope plot kernels: made by
#   shapescope plot kernels --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/gallery/ --n 1..4096
# Reads kernels.dat (its blocks and columns are described at its top) and writes kernels.svg
# (hover a point for its annotations) and kernels.png. To restyle, edit this file and run
#   gnuplot kernels.gp
# in this directory. Below: the figure's values, then the template plots/kernels.gp.

NAME = "kernels"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
XMIN = 0
XMAX = 4177.9
TITLE = "TFLOP/s by size, coloured by the kernel that ran: cublas default\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
XLABEL = "n (M = N = K = n) [elements]"
array CLASS_TITLE[12] = ["cutlass_80 wmma 32x32 align2 (170)", "cutlass_80 wmma 16x16 align2 (4)", "nvjet (64 tiles) (512)", "cutlass_75 64x64 align1 (280)", "cutlass_80 64x64 align2 (65)", "cutlass_75 128x128 align1 (440)", "cutlass_80 256x64 align2 (24)", "cutlass_80 128x64 align2 (112)", "cutlass_80 256x128 align2 (638)", "cutlass_75 256x128 align1 (1320)", "cutlass_80 128x256 align2 (522)", "other (2 rare kinds) (9)"]
CLASS_TITLE_COUNT = 12
array CLASS_COLOR[12] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#ad494a", "#c7c7c7"]
CLASS_COLOR_COUNT = 12
array CLASS_RGB[12] = [2062260, 16744206, 2924588, 14034728, 9725885, 9197131, 14907330, 1556175, 12369186, 3750777, 11356490, 13092807]
CLASS_RGB_COUNT = 12
KEY_TITLE = "main kernel: family and tile as named (points)"

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/kernels.gp ----
# kernels: TFLOP/s against the swept size, one colour per kernel (or family and tile) that ran,
# so that the library's algorithm switches show. Points are drawn in size order.
# Reads: DATA (block 0: size, TFLOP/s, hover text, class number), TITLE, XLABEL, XMIN, XMAX,
# KEY_TITLE, CLASS_TITLE[], CLASS_COLOR[], CLASS_RGB[].
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel XLABEL
  set ylabel 'TFLOP/s [10^12 FLOP/s]'
  set yrange [0:*]
  set xrange [XMIN:XMAX]
  set grid lc rgb '#e0e0e0'
  set key outside right top vertical Left reverse title KEY_TITLE box lc rgb '#cccccc' font ',9'
  plot DATA index 0 using 1:2:3:(CLASS_RGB[int(column(4))]) \
         with labels hypertext point pt 7 ps 0.45 lc rgb variable notitle, \
       for [i=1:CLASS_TITLE_COUNT] keyentry with points pt 7 ps 1 lc rgb CLASS_COLOR[i] title CLASS_TITLE[i]
  unset output
}
