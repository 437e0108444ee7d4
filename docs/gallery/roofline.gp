# shapescope plot roofline: made by
#   shapescope plot roofline --db tests/data/h200-2026-11-21-explain/gallery.db --out docs/gallery/ --calibration tests/data/h200-2026-11-21-explain/explain.db
# Reads roofline.dat (its blocks and columns are described at its top) and writes roofline.svg
# (hover a point for its annotations) and roofline.png. To restyle, edit this file and run
#   gnuplot roofline.gp
# in this directory. Below: the figure's values, then the template plots/roofline.gp.

NAME = "roofline"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 600
TITLE = "roofline: cublas default\nNVIDIA H200, bf16 nn, cuBLAS 13.1.0 (driver 580.159.04, CUDA 13.0), cold L2, measured 2026-11-21"
array SERIES_TITLE[2] = ["rows of A, B, C 16-byte aligned", "a row not 16-byte aligned"]
SERIES_TITLE_COUNT = 2
array SERIES_COLOR[2] = ["#1f77b4", "#d62728"]
SERIES_COLOR_COUNT = 2
PEAK = 802.6295495554168
BANDWIDTH = 4190.113655419269
RIDGE = 191.5531690930003
PEAK_LABEL = "measured bf16 peak 803 TFLOP/s (info --calibrate, scaled to the points' SM clock)"
BANDWIDTH_LABEL = "measured bandwidth 4190 GB/s (info --calibrate: device copy)"
XMIN = 0.1
XMAX = 6144
YMIN = 0.01
YMAX = 2407.8886486662504

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/roofline.gp ----
# roofline: measured TFLOP/s against arithmetic intensity (FLOPs over the fewest bytes a GEMM must
# move: A and B read once, C written once), under the compute roof and the bandwidth slope.
# Reads: DATA (series in blocks 0..SERIES_TITLE_COUNT-1: intensity, TFLOP/s, hover text), TITLE,
# SERIES_TITLE[], SERIES_COLOR[], PEAK [TFLOP/s], BANDWIDTH [GB/s], RIDGE, PEAK_LABEL,
# BANDWIDTH_LABEL, XMIN, XMAX, YMIN, YMAX.
roof(x) = x * BANDWIDTH / 1e3 < PEAK ? x * BANDWIDTH / 1e3 : PEAK
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  set xlabel 'arithmetic intensity [FLOP/byte] = 2MNK / ((MK + KN + MN) x element size)'
  set ylabel 'TFLOP/s [10^12 FLOP/s]'
  set logscale xy
  set xrange [XMIN:XMAX]
  set yrange [YMIN:YMAX]
  set format x '%g'
  set format y '%g'
  set grid lc rgb '#e0e0e0'
  set samples 400
  unset label
  set label 1 PEAK_LABEL at graph 0.98, first PEAK right offset 0, 0.8 textcolor rgb '#333333'
  set label 2 BANDWIDTH_LABEL at first XMIN * 1.3, first roof(XMIN * 1.3) offset 1, -1.2 textcolor rgb '#333333'
  set key inside right bottom vertical Left reverse box lc rgb '#cccccc' opaque
  plot roof(x) with lines lw 2 lc rgb '#000000' title 'roof: min(peak, intensity x bandwidth)', \
       for [i=1:SERIES_TITLE_COUNT] DATA index (i-1) using 1:2:3 \
       with labels hypertext point pt 7 ps 0.45 lc rgb SERIES_COLOR[i] title SERIES_TITLE[i]
  unset output
}
