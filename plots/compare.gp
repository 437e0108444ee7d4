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
