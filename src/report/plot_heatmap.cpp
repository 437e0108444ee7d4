// plot heatmap: TFLOP/s over a grid of two sizes.
#include "report/plot_figures.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "report/annotation_text.hpp"
#include "report/output.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

namespace {

// Where in [lo, hi] each of the sorted distinct values' cells reaches: halfway to its neighbours.
std::map<int64_t, std::pair<double, double>> cell_edges(const std::set<int64_t>& values) {
  std::map<int64_t, std::pair<double, double>> edges;
  const std::vector<int64_t> v(values.begin(), values.end());
  for (size_t i = 0; i < v.size(); ++i) {
    const double left_gap = i > 0 ? double(v[i] - v[i - 1]) : (v.size() > 1 ? double(v[1] - v[0]) : 1.0);
    const double right_gap = i + 1 < v.size() ? double(v[i + 1] - v[i]) : left_gap;
    edges[v[i]] = {double(v[i]) - left_gap / 2, double(v[i]) + right_gap / 2};
  }
  return edges;
}

}  // namespace

Plot heatmap_plot(const Selection& s, const GridAxes& axes) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "heatmap";
  f.width = 1000;
  f.height = 800;
  common_text(f, fmt::format("TFLOP/s over {} x {} ({}): {}", axes.y.name, axes.x.name, axes.fixed,
                             series_name(s.points.front().key)),
              s);
  f.set_text("XLABEL", axes.x.label);
  f.set_text("YLABEL", axes.y.label);
  std::set<int64_t> xs, ys;
  for (const StoredPoint& p : s.points) {
    xs.insert(axes.x.of(p.key.problem));
    ys.insert(axes.y.of(p.key.problem));
  }
  const auto x_edges = cell_edges(xs);
  const auto y_edges = cell_edges(ys);
  DataBlock cells;
  cells.title = "one cell per point";
  cells.columns = fmt::format("{0}  {1}  {0}_low  {0}_high  {1}_low  {1}_high  TFLOP/s  tooltip", axes.x.name, axes.y.name);
  double best = 0, worst = 0;
  size_t best_at = 0, worst_at = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const int64_t x = axes.x.of(s.points[i].key.problem);
    const int64_t y = axes.y.of(s.points[i].key.problem);
    const double t = tflops_of(s.annotations[i]);
    cells.rows.push_back(fmt::format("{} {} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {}", x, y, x_edges.at(x).first,
                                     x_edges.at(x).second, y_edges.at(y).first, y_edges.at(y).second, t,
                                     tooltip_field(point_tooltip(s.points[i], s.annotations[i]))));
    if (t > best) best = t, best_at = i;
    if (i == 0 || t < worst) worst = t, worst_at = i;
  }
  f.tooltips = cells.rows.size();
  f.add_block(std::move(cells));
  f.set_number("XMIN", x_edges.begin()->second.first);
  f.set_number("XMAX", x_edges.rbegin()->second.second);
  f.set_number("YMIN", y_edges.begin()->second.first);
  f.set_number("YMAX", y_edges.rbegin()->second.second);
  f.set_number("CBMAX", best);
  plot.summary.push_back(fmt::format("{} cells ({} x {}); fastest {:.1f} TFLOP/s at {}, slowest {:.1f} at {}",
                                     s.points.size(), ys.size(), xs.size(), best,
                                     s.points[best_at].key.problem.shape_string(), worst,
                                     s.points[worst_at].key.problem.shape_string()));
  return plot;
}

}  // namespace shapescope
