// plot tilegrid: one shape's output cut into tiles, coloured by wave (from the model or a stored point).
#include "report/plot_figures.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/annotation_text.hpp"
#include "report/output.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

namespace {

// Refuses a tile grid that cannot be drawn: unknown, or too many tiles to see.
void check_drawable(const Problem& problem, const Annotation& a) {
  if (a.grid.tiles <= 0 || a.waves.slots <= 0 || a.waves_over != "tiles") {
    throw usage_error(fmt::format("SHAPE: the tile grid or the slots of {} are unknown ({}); draw the model with --gpu "
                                  "PROFILE --tile BMxBN",
                                  problem.shape_string(), describe_tile_line(a)));
  }
  const TileGrid& g = a.grid;
  // One drawn matrix: more tiles than this would be a grey blur, and a slow SVG.
  constexpr int64_t kMaxTiles = 20000;
  if (g.tiles_m * g.tiles_n > kMaxTiles) {
    throw usage_error(fmt::format("SHAPE: {} has {} x {} tiles of {}x{}, more than {} to draw", problem.shape_string(),
                                  g.tiles_m, g.tiles_n, g.tile_m, g.tile_n, kMaxTiles));
  }
}

// One row per output tile of C (the first matrix of the batch), in rasterization order, with its
// wave; counts the partial tiles.
void add_tile_rows(DataBlock& tiles, const Problem& problem, const TileGrid& g, const Waves& w, int64_t& partial) {
  const int64_t per_matrix = g.tiles_m * g.tiles_n;
  const int64_t slices = g.splits;
  for (int64_t tm = 0; tm < g.tiles_m; ++tm) {
    for (int64_t tn = 0; tn < g.tiles_n; ++tn) {
      // Work item order: tiles along N first (the library's column-major m), then M, then slices.
      const int64_t item = tm * g.tiles_n + tn;
      const int64_t wave = item / w.slots + 1;
      const int64_t last_wave = (item + (slices - 1) * per_matrix) / w.slots + 1;
      const int64_t row0 = tm * g.tile_m, col0 = tn * g.tile_n;
      const int64_t rows_in = std::min<int64_t>(g.tile_m, problem.m - row0);
      const int64_t cols_in = std::min<int64_t>(g.tile_n, problem.n - col0);
      const bool is_partial = rows_in < g.tile_m || cols_in < g.tile_n;
      partial += is_partial;
      std::vector<std::string> tip = {
          fmt::format("tile {} (row {}, column {}): C[{}..{}, {}..{}]", item, tm, tn, row0, row0 + rows_in - 1, col0,
                      col0 + cols_in - 1),
          slices > 1 ? fmt::format("waves {}..{} ({} split-K slices)", wave, last_wave, slices)
                     : fmt::format("wave {} of {}", wave, w.rounds),
          is_partial ? fmt::format("partial: {} x {} of {} x {} inside the matrix ({} useful)", rows_in, cols_in, g.tile_m,
                                   g.tile_n, percent_tight(double(rows_in * cols_in) / double(g.tile_m * g.tile_n), 0))
                     : "full tile"};
      tiles.rows.push_back(fmt::format("{:.6g} {:.6g} {} {} {} {} {} {}", col0 + g.tile_n / 2.0, row0 + g.tile_m / 2.0,
                                       col0, col0 + g.tile_n, row0, row0 + g.tile_m, wave, tooltip_field(tip)));
    }
  }
}

// A colour per wave while they can be told apart, else a gradient.
std::string wave_palette(int64_t rounds) {
  std::string palette = "set palette defined (";
  if (rounds <= int64_t(kCategoryColors.size())) {
    for (int64_t r = 1; r <= rounds; ++r) {
      palette += fmt::format("{}{} '{}', {} '{}'", r > 1 ? ", " : "", r - 0.5, kCategoryColors[size_t(r - 1)], r + 0.5,
                             kCategoryColors[size_t(r - 1)]);
    }
  } else {
    palette += fmt::format("0.5 '#440154', {} '#21908d', {} '#fde725'", (rounds + 1) / 2.0, rounds + 0.5);
  }
  palette += ")";
  return palette;
}

}  // namespace

Plot tilegrid_plot(const Problem& problem, const Annotation& a, const std::string& title) {
  check_drawable(problem, a);
  const TileGrid& g = a.grid;
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "tilegrid";
  f.width = 1000;
  f.height = 800;
  const Waves& w = a.waves;
  std::string grid = fmt::format("{} x {}", g.tiles_m, g.tiles_n);
  if (g.batch > 1) grid += fmt::format(" x batch {}", g.batch);
  if (g.splits > 1) grid += fmt::format(" x {} slices", g.splits);
  f.set_text("TITLE", fmt::format("{} {} {}: tile {}x{} -> {} = {} tiles on {} slots = {:.2f} waves -> {} round{}, wave "
                                  "efficiency {}\n{}",
                                  problem.shape_string(), to_string(problem.dtype), to_string(problem.layout), g.tile_m,
                                  g.tile_n, grid, g.tiles, w.slots, w.waves, w.rounds, w.rounds == 1 ? "" : "s",
                                  percent_tight(w.efficiency, 0), title));

  const int64_t per_matrix = g.tiles_m * g.tiles_n;
  const int64_t slices = g.splits;
  DataBlock tiles, slots;
  tiles.title = "the output tiles of C (the first matrix of the batch), in rasterization order";
  tiles.columns = "x  y  x_low  x_high  y_low  y_high  wave  tooltip";
  slots.title = "the GPU's slots in the last wave (wave 0: idle)";
  slots.columns = tiles.columns;
  int64_t partial = 0;
  add_tile_rows(tiles, problem, g, w, partial);
  // The last wave on the GPU's slots, in a strip below C: a slot is a place for one CTA (an SM, or
  // a share of one), not a part of the matrix, so the strip has its own small cells.
  const int64_t last_items = g.tiles - (w.rounds - 1) * w.slots;
  const int64_t idle_slots = w.idle_slots();
  const double grid_m = double(g.tiles_m * g.tile_m), grid_n = double(g.tiles_n * g.tile_n);
  const int64_t strip_cols = std::max<int64_t>(std::min<int64_t>(w.slots, 16), (w.slots + 3) / 4);
  const int64_t strip_rows = (w.slots + strip_cols - 1) / strip_cols;
  // True proportions while C is not much longer one way than the other; a 4096 x 1 output drawn
  // true to scale would be a line.
  const bool true_aspect = grid_m <= 3 * grid_n && grid_n <= 3 * grid_m;
  double cell_w = grid_n / double(strip_cols), cell_h = grid_m / 24;
  if (true_aspect) cell_w = cell_h = std::min({grid_n / double(strip_cols), double(g.tile_m), double(g.tile_n)});
  const double strip_top = grid_m + 1.6 * cell_h;
  for (int64_t j = 0; j < w.slots; ++j) {
    const double x0 = double(j % strip_cols) * cell_w, y0 = strip_top + double(j / strip_cols) * cell_h;
    const bool is_busy = j < last_items;
    const int64_t item = (w.rounds - 1) * w.slots + j;
    std::vector<std::string> tip = {fmt::format("slot {} of {} in wave {}", j + 1, w.slots, w.rounds),
                                    is_busy ? fmt::format("computes work item {} (tile {} of the raster)", item,
                                                          item % per_matrix)
                                            : fmt::format("idle: the last wave has {} work items for {} slots",
                                                          last_items, w.slots)};
    slots.rows.push_back(fmt::format("{:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {} {}", x0 + cell_w / 2, y0 + cell_h / 2,
                                     x0, x0 + cell_w, y0, y0 + cell_h, is_busy ? w.rounds : 0, tooltip_field(tip)));
  }
  // Idle slots share the busy ones' block: a block of its own would be empty when the last wave
  // is full, and gnuplot warns about empty blocks even in a loop that skips them.
  f.tooltips = tiles.rows.size() + slots.rows.size();
  f.set_number("TILES_INDEX", double(f.add_block(std::move(tiles))));
  f.set_number("SLOTS_INDEX", double(f.add_block(std::move(slots))));
  f.set_number("IDLE_SLOTS", double(idle_slots));
  f.set_number("SLOTS", double(w.slots));
  f.set_number("ROUNDS", double(w.rounds));
  f.set_number("M_SIZE", double(problem.m));
  f.set_number("N_SIZE", double(problem.n));
  f.set_number("GRID_M", grid_m);
  f.set_number("GRID_N", grid_n);
  f.set_number("STRIP_LABEL_Y", grid_m + 0.8 * cell_h);
  f.set_number("TRUE_ASPECT", true_aspect ? 1 : 0);
  f.set_text("STRIP_LABEL", fmt::format("wave {} on the {} slots: {} busy, {} idle", w.rounds, w.slots, last_items,
                                        idle_slots));
  f.set_number("YMAX", strip_top + double(strip_rows) * cell_h);
  f.set_number("XMAX", grid_n);
  f.set_text("PALETTE", wave_palette(w.rounds));
  std::string tile_text = fmt::format("{} tiles ({} x {}{})", g.tiles, g.tiles_m, g.tiles_n,
                                      slices > 1 ? fmt::format(" x {} slices", slices) : "");
  plot.summary.push_back(fmt::format("{}: {}, {} partial; {} slots -> {} wave{}, {} idle slot{} in the last", problem.shape_string(),
                                     tile_text, partial, w.slots, w.rounds, w.rounds == 1 ? "" : "s", idle_slots,
                                     idle_slots == 1 ? "" : "s"));
  return plot;
}

// tilegrid from the store: the newest measurement of the shape, with its kernel and slots.
Plot measured_tilegrid_plot(const Selection& s, const std::string& title) {
  size_t newest = 0;
  for (size_t i = 1; i < s.points.size(); ++i)
    if (s.points[i].result.measured_at > s.points[newest].result.measured_at) newest = i;
  const StoredPoint& p = s.points[newest];
  const Annotation& a = s.annotations[newest];
  const std::string kernel = a.main_kernel >= 0 ? short_kernel_name(p.kernels[size_t(a.main_kernel)].name) : "?";
  const std::string slots = a.persistent ? fmt::format("persistent grid of {} CTAs", a.launched_ctas)
                                          : fmt::format("{} SMs x {} CTA{} ({})", p.device.sm_count,
                                                        a.occupancy.ctas_per_sm, a.occupancy.ctas_per_sm == 1 ? "" : "s",
                                                        a.occupancy.limiter);
  return tilegrid_plot(p.key.problem, a, fmt::format("{}\n{}: {}; slots = {}", title, series_name(p.key), kernel, slots));
}

}  // namespace shapescope
