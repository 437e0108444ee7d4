// `shapescope plot`'s options and the drawing of a figure, shared by plot.cpp and the figure of
// several stores' GPUs side by side (compare_gpus.cpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "report/plot_figures.hpp"
#include "store/store.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

// The figures `plot` draws; each name (to_string) is its KIND and its template, plots/<name>.gp.
enum class PlotKind { kFlops, kRuntime, kWaves, kKernels, kCompare, kHeatmap, kTilegrid, kRoofline };
std::string_view to_string(PlotKind kind);

struct PlotOptions {
  PlotKind kind = PlotKind::kFlops;  // KIND, read by plot_kind_option()
  std::string shape;         // tilegrid only
  PlotFilter filter;
  std::string db = kDefaultStore;
  std::vector<std::string> dbs;  // --db as given: several draw their GPUs side by side (plot compare)
  std::string out = ".";
  std::string calibration;   // another store's `info --calibrate` peaks for the same GPU
  std::optional<std::pair<int, int>> tile;  // tilegrid from the model: BM x BN, with --gpu KEY
  std::string gnuplot = "gnuplot";
  std::string templates = data_dir("plots");
  std::string command_line;  // as the user gave it, for the script's header (set by run_plot)
  bool force = false;        // the outputs may replace a result store
};

// The command that made a figure, for the top of its script.
std::string command_line(const PlotOptions& o);
// Draws the figure into o.out (refusing outputs that are a store read), prints the files written
// and the figure's summary lines.
void render(const PlotOptions& o, const Plot& plot, const std::string& default_name, const std::string& title);

// plot compare with several --db: a line per GPU (cli/compare_gpus.cpp).
void plot_gpus(const PlotOptions& o);

}  // namespace shapescope
