# shapescope plot waves: made by
#   shapescope plot waves --db tests/data/h200-2026-11-21/sweep_bf16_nn_1-4096.db --out docs/gallery/waves-cutlass75 --kernel cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128 --n 1..4096
# Reads waves-cutlass75.dat (its blocks and columns are described at its top) and writes waves-cutlass75.svg
# (hover a point for its annotations) and waves-cutlass75.png. To restyle, edit this file and run
#   gnuplot waves-cutlass75.gp
# in this directory. Below: the figure's values, then the template plots/waves.gp.

NAME = "waves-cutlass75"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 800
XMIN = 1461.36
XMAX = 4146.64
TITLE = "TFLOP/s and wave quantization by size: cublas default\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21\nonly the points whose kernel matches 'cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128'"
XLABEL = "n (M = N = K = n) [elements]"
array SERIES_TITLE[3] = [">= 90%", "75-90%", "50-75%"]
SERIES_TITLE_COUNT = 3
array SERIES_COLOR[3] = ["#1a9850", "#a6d96a", "#fdae61"]
SERIES_COLOR_COUNT = 3
WAVES_INDEX = 3
STARTS_INDEX = 4
array NEW_WAVE_AT[10] = [2055, 2433, 2561, 2867, 3073, 3201, 3329, 3585, 3625, 3841]
NEW_WAVE_AT_COUNT = 10
YMAX = 166.25525640057856

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/waves.gp ----
# waves: TFLOP/s coloured by wave efficiency (how full the last round of tiles is), and below it
# the waves (tiles / slots) and wave efficiency; dotted lines where a kernel's tile grid needs one
# more wave than at the size before.
# Reads: DATA (series in blocks 0..SERIES_TITLE_COUNT-1: size, TFLOP/s, hover text; block
# WAVES_INDEX: size, waves, rounds, wave efficiency [%]; block STARTS_INDEX: size, rounds, TFLOP/s),
# TITLE, XLABEL, XMIN, XMAX, SERIES_TITLE[], SERIES_COLOR[], NEW_WAVE_AT[], NEW_WAVE_AT_COUNT,
# YMAX. `for [j=1:(COUNT > 0)]` draws a term once when there is something to draw and not at all
# otherwise.
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set multiplot title TITLE
  set grid lc rgb '#e0e0e0'
  set xrange [XMIN:XMAX]
  unset arrow
  do for [i=1:NEW_WAVE_AT_COUNT] {
    set arrow i from first NEW_WAVE_AT[i], graph 0 to first NEW_WAVE_AT[i], graph 1 nohead dt 3 lc rgb '#999999' back
  }

  set lmargin at screen 0.08
  set rmargin at screen 0.66
  set tmargin at screen 0.90
  set bmargin at screen 0.42
  set format x ''
  unset xlabel
  set ylabel 'TFLOP/s'
  set yrange [0:YMAX]
  set key at screen 0.75, screen 0.90 left top vertical Left reverse title 'wave efficiency' box lc rgb '#cccccc'
  plot for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2:3 \
       with labels hypertext point pt 7 ps 0.45 lc rgb SERIES_COLOR[i] title SERIES_TITLE[i], \
       for [j=1:(NEW_WAVE_AT_COUNT > 0)] keyentry with lines dt 3 lc rgb '#999999' title 'a new wave starts'

  set tmargin at screen 0.40
  set bmargin at screen 0.08
  set format x '%g'
  set xlabel XLABEL
  set ylabel 'waves (tiles / slots)'
  set yrange [0:*]
  set y2label 'wave efficiency [%]'
  set y2range [0:105]
  set y2tics 0, 25, 100
  set ytics nomirror
  set key at screen 0.75, screen 0.40 left top vertical Left reverse title '' box lc rgb '#cccccc'
  plot DATA index WAVES_INDEX using 1:2 with points pt 7 ps 0.25 lc rgb '#1f77b4' title 'waves = tiles / slots', \
       DATA index WAVES_INDEX using 1:4 axes x1y2 with points pt 7 ps 0.25 lc rgb '#ff7f0e' title 'wave efficiency [%]'
  unset y2tics
  unset y2label
  set ytics mirror
  unset multiplot
  unset output
}
