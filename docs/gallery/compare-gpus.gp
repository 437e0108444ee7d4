# shapescope plot compare: made by
#   shapescope plot compare --db bench/speed/results/h100-2026-11-25-sweep/sweep_bf16_nn_1-4096.db --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/gallery/compare-gpus --n 1..4096
# Reads compare-gpus.dat (its blocks and columns are described at its top) and writes compare-gpus.svg
# (hover a point for its annotations) and compare-gpus.png. To restyle, edit this file and run
#   gnuplot compare-gpus.gp
# in this directory. Below: the figure's values, then the template plots/compare.gp.

NAME = "compare-gpus"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
array SERIES_TITLE[2] = ["NVIDIA H100 80GB HBM3, 1980 MHz", "NVIDIA H200, 1980 MHz"]
SERIES_TITLE_COUNT = 2
array SERIES_COLOR[2] = ["#1f77b4", "#d62728"]
SERIES_COLOR_COUNT = 2
XLABEL = "n (M = N = K = n) [elements]"
XMIN = 0
XMAX = 4177.9
YMAX = 853.9330910931573
DENSE = 1
TITLE = "TFLOP/s by size: NVIDIA H100 80GB HBM3 vs NVIDIA H200\nbf16 nn, cublas default, cold L2 (each GPU at its own SM clock)"

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/compare.gp ----
# compare: backends and algorithms on one axis, each as a line through its points.
# Reads: DATA (series in blocks 0..SERIES_TITLE_COUNT-1: size, TFLOP/s, hover text), TITLE,
# XLABEL, XMIN, XMAX, SERIES_TITLE[], SERIES_COLOR[], YMAX; DENSE (optional): 1 draws points only (a
# line through thousands of sizes hides them).
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
  LW = (exists("DENSE") && DENSE) ? 0 : 1.2
  plot for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2 with lines lw LW lc rgb (LW > 0 ? SERIES_COLOR[i] : '#00ffffff') notitle, \
       for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2:3 \
       with labels hypertext point pt (5 + 2 * ((i-1) % 3)) ps 0.7 lc rgb SERIES_COLOR[i] title SERIES_TITLE[i]
  unset output
}
