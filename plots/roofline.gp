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
