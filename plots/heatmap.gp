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
