# shapescope plot tilegrid: made by
#   shapescope plot tilegrid 1793 --db shapescope.db --out docs/gallery/ --gpu a100 --tile 256x128
# Reads tilegrid-1793-a100.dat (its blocks and columns are described at its top) and writes tilegrid-1793-a100.svg
# (hover a point for its annotations) and tilegrid-1793-a100.png. To restyle, edit this file and run
#   gnuplot tilegrid-1793-a100.gp
# in this directory. Below: the figure's values, then the template plots/tilegrid.gp.

NAME = "tilegrid-1793-a100"
DATA = NAME.'.dat'
WIDTH = 1000
HEIGHT = 800
TITLE = "1793x1793x1793 bf16 nn: tile 256x128 -> 8 x 15 = 120 tiles on 108 slots = 1.11 waves -> 2 rounds, wave efficiency 56%\nmodel: NVIDIA A100 SXM4 80GB (108 SMs), tile 256x128 given, one CTA per SM, data-parallel; nothing measured"
TILES_INDEX = 0
SLOTS_INDEX = 1
IDLE_SLOTS = 96
SLOTS = 108
ROUNDS = 2
M_SIZE = 1793
N_SIZE = 1793
GRID_M = 2048
GRID_N = 1920
STRIP_LABEL_Y = 2104.8888888888887
TRUE_ASPECT = 1
STRIP_LABEL = "wave 2 on the 108 slots: 12 busy, 96 idle"
YMAX = 2446.222222222222
XMAX = 1920
PALETTE = "set palette defined (0.5 '#1f77b4', 1.5 '#1f77b4', 1.5 '#ff7f0e', 2.5 '#ff7f0e')"

FORMATS = 'svg png'
PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'
terminal(format) = format eq 'svg' \
  ? sprintf("set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'", WIDTH, HEIGHT) \
  : sprintf("set terminal %s size %d,%d noenhanced background '#ffffff'%s", PNG_TERMINAL, WIDTH, HEIGHT, \
            PNG_TERMINAL eq 'pngcairo' ? " font 'Arial,11'" : '')

# ---- template plots/tilegrid.gp ----
# tilegrid: one shape's output matrix C cut into tiles, coloured by the wave that computes them
# (tile i in rasterization order runs in wave i / slots + 1); the hatched band is work outside the
# matrix (partial tiles). Below C, the last wave on the GPU's slots: busy ones in its colour, idle
# ones dashed. Hover a tile's or a slot's dot for its details.
# Reads: DATA (blocks TILES_INDEX and SLOTS_INDEX: x, y, x_low, x_high, y_low, y_high, wave (0 for
# an idle slot), hover text), TITLE, PALETTE, ROUNDS, SLOTS, IDLE_SLOTS, M_SIZE, N_SIZE, GRID_M,
# GRID_N, STRIP_LABEL, STRIP_LABEL_Y, XMAX, YMAX, TRUE_ASPECT (0: C is too long one way to draw
# to scale). `for [j=1:(COUNT > 0)]` draws a term once when
# there is something to draw and not at all otherwise.
do for [FORMAT in FORMATS] {
  eval terminal(FORMAT)
  set output NAME.'.'.FORMAT
  set title TITLE
  # Columns along the top, rows down: C as it is written.
  unset xlabel
  set x2label 'N: columns of C [elements]'
  set ylabel 'M: rows of C [elements]'
  set link x2
  unset xtics
  set x2tics out
  set ytics out
  set xrange [0:XMAX]
  set yrange [YMAX:0]
  if (TRUE_ASPECT) { set size ratio -1 } else { set size noratio }
  unset grid
  eval PALETTE
  set cbrange [0.5:ROUNDS+0.5]
  set cblabel 'wave'
  if (ROUNDS <= 12) { set cbtics 1, 1, ROUNDS } else { set cbtics autofreq }
  set rmargin at screen 0.85
  set colorbox user origin screen 0.90, screen 0.35 size screen 0.025, screen 0.4
  unset object
  unset label
  # Work outside the matrix: the partial tiles' wasted part.
  if (GRID_N > N_SIZE) {
    set object 1 rect from N_SIZE, 0 to GRID_N, GRID_M fc rgb '#000000' fs transparent pattern 4 noborder front
  }
  if (GRID_M > M_SIZE) {
    set object 2 rect from 0, M_SIZE to GRID_N, GRID_M fc rgb '#000000' fs transparent pattern 4 noborder front
  }
  set object 3 rect from 0, 0 to N_SIZE, M_SIZE fs empty border lc rgb '#000000' lw 2.5 front
  set label 1 STRIP_LABEL at first 0, first STRIP_LABEL_Y left
  set key outside bottom center horizontal box lc rgb '#cccccc'
  plot DATA index TILES_INDEX using 1:2:3:4:5:6:7 with boxxyerror fs solid 1.0 border lc rgb '#ffffff' lc palette notitle, \
       DATA index SLOTS_INDEX using ($7 > 0 ? $1 : NaN):2:3:4:5:6:7 with boxxyerror fs solid 1.0 \
         border lc rgb '#ffffff' lc palette notitle, \
       for [j=1:(IDLE_SLOTS > 0)] DATA index SLOTS_INDEX using ($7 == 0 ? $1 : NaN):2:3:4:5:6 with boxxyerror \
         fs solid 1.0 border lc rgb '#777777' lc rgb '#e6e6e6' title sprintf('idle slot (%d of %d)', IDLE_SLOTS, SLOTS), \
       keyentry with boxes fs transparent pattern 4 lc rgb '#000000' title 'outside C: wasted part of partial tiles', \
       keyentry with boxes fs empty lw 2.5 lc rgb '#000000' title sprintf('C: %d x %d', M_SIZE, N_SIZE), \
       DATA index TILES_INDEX using 1:2:8 with labels hypertext point pt 7 ps 0.3 lc rgb '#60000000' notitle, \
       DATA index SLOTS_INDEX using 1:2:8 with labels hypertext point pt 7 ps 0.2 lc rgb '#60000000' notitle
  unset output
}
