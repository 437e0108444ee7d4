# shapescope plot compare: made by
#   shapescope plot compare --db tests/data/h200-2026-11-21-explain/gallery.db --out docs/gallery/ --backend cublas,cublaslt --n 64..4096:64 --calibration tests/data/h200-2026-11-21-explain/explain.db
# Reads compare.dat (its blocks and columns are described at its top) and writes compare.svg
# (hover a point for its annotations) and compare.png. To restyle, edit this file and run
#   gnuplot compare.gp
# in this directory. Below: the figure's values, then the template plots/compare.gp.

NAME = "compare"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
XMIN = 0
XMAX = 4176.64
XLABEL = "n (M = N = K = n) [elements]"
array SERIES_TITLE[3] = ["cublas default", "cublaslt h0 (the heuristic's pick)", "cublaslt best of h0..h3 (fastest per size)"]
SERIES_TITLE_COUNT = 3
array SERIES_COLOR[3] = ["#000000", "#ff7f0e", "#2ca02c"]
SERIES_COLOR_COUNT = 3
YMAX = 818.0168749806533
TITLE = "TFLOP/s by size: cublas default vs cublaslt h0 (the heuristic's pick) vs cublaslt best of h0..h3 (fastest per size)\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/compare.gp ----
# compare: backends and algorithms on one axis, each as a line through its points.
# Reads: DATA (series in blocks 0..SERIES_TITLE_COUNT-1: size, TFLOP/s, hover text), TITLE,
# XLABEL, XMIN, XMAX, SERIES_TITLE[], SERIES_COLOR[], YMAX.
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel XLABEL
  set ylabel 'TFLOP/s [10^12 FLOP/s]'
  set yrange [0:YMAX]
  set xrange [XMIN:XMAX]
  set grid lc rgb '#e0e0e0'
  set key inside left top vertical Left reverse box lc rgb '#cccccc' opaque
  plot for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2 with lines lw 1.2 lc rgb SERIES_COLOR[i] notitle, \
       for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2:3 \
       with labels hypertext point pt (5 + 2 * ((i-1) % 3)) ps 0.7 lc rgb SERIES_COLOR[i] title SERIES_TITLE[i]
  unset output
}
