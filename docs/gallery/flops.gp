# shapescope plot flops: made by
#   shapescope plot flops --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/gallery/ --n 1..4096
# Reads flops.dat (its blocks and columns are described at its top) and writes flops.svg
# (hover a point for its annotations) and flops.png. To restyle, edit this file and run
#   gnuplot flops.gp
# in this directory. Below: the figure's values, then the template plots/flops.gp.

NAME = "flops"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
XMIN = 0
XMAX = 4177.9
TITLE = "TFLOP/s by size: cublas default\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
XLABEL = "n (M = N = K = n) [elements]"
KEY_TITLE = "largest power of 2 dividing n"
array CLASS_TITLE[9] = ["1 (odd)", "2", "4", "8", "16", "32", "64", "128", "256 or more"]
CLASS_TITLE_COUNT = 9
array CLASS_COLOR[9] = ["#a0a0a0", "#e6ab02", "#d95f02", "#e7298a", "#7570b3", "#1b9e77", "#66a61e", "#1f78b4", "#000000"]
CLASS_COLOR_COUNT = 9
array CLASS_RGB[9] = [10526880, 15117058, 14245634, 15149450, 7696563, 1810039, 6727198, 2062516, 0]
CLASS_RGB_COUNT = 9
PEAK = 907.5962928504507
PEAK_LABEL = "measured bf16 peak 908 TFLOP/s (info --calibrate, scaled to the points' SM clock)"
YMAX = 980.2039962784868

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/flops.gp ----
# flops: TFLOP/s against the swept size, one colour per largest power of two dividing it
# (H. He, "What Shapes Do Matrix Multiplications Like?"). The points are drawn in size order, so
# classes that share a level interleave rather than one covering the other.
# Reads: DATA (block 0: size, TFLOP/s, hover text, class number), TITLE, XLABEL, XMIN, XMAX,
# YMAX, KEY_TITLE, CLASS_TITLE[], CLASS_COLOR[], CLASS_RGB[], PEAK (0: unknown), PEAK_LABEL.
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel XLABEL
  set ylabel 'TFLOP/s [10^12 FLOP/s] (2MNK / median time)'
  set yrange [0:YMAX]
  set xrange [XMIN:XMAX]
  set grid lc rgb '#e0e0e0'
  set key outside right top vertical Left reverse title KEY_TITLE box lc rgb '#cccccc'
  unset arrow
  unset label
  if (PEAK > 0) {
    set arrow 1 from graph 0, first PEAK to graph 1, first PEAK nohead dt 2 lw 1.5 lc rgb '#555555' back
    set label 1 PEAK_LABEL at graph 0.01, first PEAK offset 0, 0.7 textcolor rgb '#555555'
  }
  plot DATA index 0 using 1:2:3:(CLASS_RGB[int(column(4))]) \
         with labels hypertext point pt 7 ps 0.45 lc rgb variable notitle, \
       for [i=1:CLASS_TITLE_COUNT] keyentry with points pt 7 ps 1 lc rgb CLASS_COLOR[i] title CLASS_TITLE[i]
  unset output
}
