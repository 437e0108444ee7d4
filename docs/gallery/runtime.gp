# shapescope plot runtime: made by
#   shapescope plot runtime --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/gallery/ --n 1..4096
# Reads runtime.dat (its blocks and columns are described at its top) and writes runtime.svg
# (hover a point for its annotations) and runtime.png. To restyle, edit this file and run
#   gnuplot runtime.gp
# in this directory. Below: the figure's values, then the template plots/runtime.gp.

NAME = "runtime"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
XMIN = 0
XMAX = 4177.9
TITLE = "time by size: cublas default (red: bigger and faster: a smaller size takes over 10% longer)\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
XLABEL = "n (M = N = K = n) [elements]"
YMIN = 1
YMAX = 1000
array SERIES_TITLE[2] = ["no smaller size takes that much longer", "bigger and faster: a smaller size takes over 10% longer"]
SERIES_TITLE_COUNT = 2
array SERIES_COLOR[2] = ["#1f77b4", "#d62728"]
SERIES_COLOR_COUNT = 2
ENVELOPE_INDEX = 2

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/runtime.gp ----
# runtime: median time against the swept size. A point is "bigger and faster" when a smaller size
# takes more than 10% longer (beyond run-to-run noise); the grey staircase is the slowest time of
# any size so far.
# Reads: DATA (series in blocks 0..SERIES_TITLE_COUNT-1: size, median [us], hover text;
# block ENVELOPE_INDEX: size, slowest so far [us]), TITLE, XLABEL, XMIN, XMAX, YMIN, YMAX,
# SERIES_TITLE[], SERIES_COLOR[].
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel XLABEL
  set ylabel 'median time of one call [us] (cold L2)'
  set logscale y
  set yrange [YMIN:YMAX]
  set xrange [XMIN:XMAX]
  set grid lc rgb '#e0e0e0'
  set key inside left top vertical Left reverse box lc rgb '#cccccc' opaque
  plot DATA index ENVELOPE_INDEX using 1:2 with steps lw 1.5 lc rgb '#bbbbbb' title 'slowest time of any size up to here', \
       for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2:3 \
       with labels hypertext point pt 7 ps 0.45 lc rgb SERIES_COLOR[i] title SERIES_TITLE[i]
  unset output
}
