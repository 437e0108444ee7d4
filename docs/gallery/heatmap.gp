# shapescope plot heatmap: made by
#   shapescope plot heatmap --db tests/data/h200-2026-11-21-explain/gallery.db --out docs/gallery/ --m 256..8192:256 --n 256..8192:256 --k 4096 --calibration tests/data/h200-2026-11-21-explain/explain.db
# Reads heatmap.dat (its blocks and columns are described at its top) and writes heatmap.svg
# (hover a point for its annotations) and heatmap.png. To restyle, edit this file and run
#   gnuplot heatmap.gp
# in this directory. Below: the figure's values, then the template plots/heatmap.gp.

NAME = "heatmap"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 800
TITLE = "TFLOP/s over M x N (K = 4096): cublas default\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
XLABEL = "N [elements]"
YLABEL = "M [elements]"
XMIN = 128
XMAX = 8320
YMIN = 128
YMAX = 8320
CBMAX = 756.9558288873465

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/heatmap.gp ----
# heatmap: TFLOP/s over a grid of two sizes, one cell per point; hover a cell's dot.
# Reads: DATA (block 0: x, y, x_low, x_high, y_low, y_high, TFLOP/s, hover text), TITLE, XLABEL,
# YLABEL, XMIN, XMAX, YMIN, YMAX, CBMAX.
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel XLABEL
  set ylabel YLABEL
  set xrange [XMIN:XMAX]
  set yrange [YMIN:YMAX]
  set cbrange [0:CBMAX]
  set cblabel 'TFLOP/s [10^12 FLOP/s]'
  set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21908d', 0.75 '#5dc963', 1 '#fde725')
  set size ratio -1
  set tics out
  unset grid
  unset key
  plot DATA index 0 using 1:2:3:4:5:6:7 with boxxyerror fs solid 1.0 noborder lc palette, \
       DATA index 0 using 1:2:8 with labels hypertext point pt 7 ps 0.15 lc rgb '#80ffffff'
  unset output
}
