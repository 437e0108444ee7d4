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
