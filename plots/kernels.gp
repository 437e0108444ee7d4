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
