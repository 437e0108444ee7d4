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
