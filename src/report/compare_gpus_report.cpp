#include "report/compare_gpus_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/units.hpp"
#include "model/kernel_name.hpp"
#include "report/annotation_text.hpp"
#include "report/json_schema.hpp"
#include "report/output.hpp"
#include "report/table.hpp"
#include "timing/stats.hpp"

namespace shapescope {
namespace {

double tflops(const Annotation& a) { return a.roofline.tflops.value_or(0); }

std::string kernel_of(const GpuRow& r) {
  if (r.annotation.main_kernel < 0) return "-";
  return short_kernel_name(r.point.kernels[size_t(r.annotation.main_kernel)].name);
}

std::string clock_text(const std::optional<double>& mhz) { return mhz ? fmt::format("{:.0f}", *mhz) : "-"; }

std::string shape_line(const GpuComparison& c) {
  const Problem& p = c.target;
  return fmt::format("{} {} {} ({} {}) on {} GPU{}, from the stores (measured earlier; nothing is measured now)",
                     p.shape_string(), to_string(p.dtype), to_string(p.layout), to_string(c.backend), c.algo, c.rows.size(),
                     c.rows.size() == 1 ? "" : "s");
}

}  // namespace

void write_gpu_comparison_text(std::ostream& out, const GpuComparison& c) {
  out << shape_line(c) << "\n\n";
  double fastest = c.rows.front().point.result.timing.median_us;
  for (const GpuRow& r : c.rows) fastest = std::min(fastest, r.point.result.timing.median_us);
  std::vector<std::vector<std::string>> rows = {{"GPU", "store", "time [us]", "TFLOP/s", "vs fastest", "kernel", "tile",
                                                 "tiles", "waves", "clock [MHz]", "measured"}};
  for (const GpuRow& r : c.rows) {
    const TimingStats& t = r.point.result.timing;
    rows.push_back({r.gpu, r.store, fixed(t.median_us, 2), fixed(tflops(r.annotation), 1),
                    fmt::format("{:.2f}x", t.median_us / fastest), kernel_of(r), tile_cell(r.annotation),
                    grid_cell(r.annotation), waves_cell(r.annotation), clock_text(t.sm_clock_mhz),
                    r.point.result.measured_at.substr(0, 10)});
  }
  write_table(out, rows, {false, false, true, true, true, false, false, false, true, true, false}, "  ",
              fit_by_name(rows.front(), {{"kernel", {8, 24}}, {"store", {0, 30, 0, true}}, {"tiles", {1}}, {"tile", {2}},
                                         {"waves", {3}}, {"measured", {4}}, {"vs fastest", {5}}, {"TFLOP/s", {6}},
                                         {"clock [MHz]", {7}}}));
  for (const std::string& store : c.missing) out << "\nnot in " << store << " (no point of this shape there)";
  if (!c.missing.empty()) out << "\n";
}

void write_gpu_comparison_json(std::ostream& out, const GpuComparison& c) {
  nlohmann::ordered_json doc;
  doc["shape"] = c.target.shape_string();
  doc["dtype"] = to_string(c.target.dtype);
  doc["layout"] = to_string(c.target.layout);
  doc["backend"] = to_string(c.backend);
  doc["algo"] = c.algo;
  doc["gpus"] = nlohmann::ordered_json::array();
  for (const GpuRow& r : c.rows) {
    nlohmann::ordered_json row;
    row["gpu"] = r.gpu;
    row["store"] = r.store;
    row["time_us"] = r.point.result.timing.median_us;
    row["tflops"] = tflops(r.annotation);
    row["kernel"] = kernel_of(r);
    row["tile"] = tile_cell(r.annotation);
    row["tiles"] = grid_cell(r.annotation);
    row["waves"] = r.annotation.waves.waves;
    row["sm_clock_mhz"] = r.point.result.timing.sm_clock_mhz ? nlohmann::ordered_json(*r.point.result.timing.sm_clock_mhz)
                                                              : nlohmann::ordered_json(nullptr);
    row["point"] = nlohmann::ordered_json::parse(point_json(r.point, r.annotation));
    doc["gpus"].push_back(row);
  }
  doc["missing"] = c.missing;
  write_json_document(out, std::move(doc), "GpuComparison",
                      [&](std::ostream& text) { write_gpu_comparison_text(text, c); });
}

Plot gpu_compare_plot(const std::vector<GpuSeries>& series, const SweptAxis& axis) {
  constexpr std::array<const char*, 6> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#000000"};
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "compare";
  std::vector<std::string> titles, colors, names;
  std::vector<std::map<int64_t, double>> by_size;  // per GPU: TFLOP/s at each size
  double best = 0;
  int64_t lo = INT64_MAX, hi = 0;
  // Above this many sizes a line through the points hides them (every odd size drops 5x): points only.
  constexpr size_t kDensePoints = 400;
  bool dense = false;
  for (size_t g = 0; g < series.size(); ++g) {
    const GpuSeries& s = series[g];
    const std::string title = fmt::format("{}, {} MHz", s.gpu, clock_text(s.clock_mhz));
    DataBlock block;
    block.title = fmt::format("{} ({})", title, s.store);
    block.columns = fmt::format("{}  TFLOP/s  tooltip", axis.name);
    std::map<int64_t, double> sizes;
    for (size_t i = 0; i < s.selection.points.size(); ++i) {
      const StoredPoint& p = s.selection.points[i];
      const Annotation& a = s.selection.annotations[i];
      const int64_t x = axis.of(p.key.problem);
      sizes[x] = tflops(a);
      std::vector<std::string> tip = point_tooltip(p, a);
      tip.insert(tip.begin(), fmt::format("{} ({})", s.gpu, s.store));
      block.rows.push_back(fmt::format("{} {:.6g} {}", x, tflops(a), tooltip_field(tip)));
      best = std::max(best, tflops(a));
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    std::sort(block.rows.begin(), block.rows.end(), [](const std::string& a, const std::string& b) {
      return std::stoll(a) < std::stoll(b);
    });
    f.tooltips += block.rows.size();
    dense = dense || block.rows.size() > kDensePoints;
    f.add_block(std::move(block));
    titles.push_back(title);
    colors.push_back(kColors[g % kColors.size()]);
    names.push_back(s.gpu);
    double sum = 0;
    for (const auto& [x, t] : sizes) sum += t;
    plot.summary.push_back(fmt::format("{} ({}): {} sizes, mean {}, median SM clock {} MHz", s.gpu, s.store,
                                       sizes.size(), tflops_text(sum / double(std::max<size_t>(sizes.size(), 1)), 1),
                                       clock_text(s.clock_mhz)));
    by_size.push_back(std::move(sizes));
  }
  // Over the sizes every GPU measured: each GPU's speed against the first, as the median ratio.
  std::set<int64_t> common;
  for (const auto& size_time : by_size.front()) {
    // A named size, not a structured binding: a lambda may not capture one before C++20 (clang).
    const int64_t x = size_time.first;
    if (std::all_of(by_size.begin(), by_size.end(), [&](const std::map<int64_t, double>& m) { return m.count(x) > 0; }))
      common.insert(x);
  }
  for (size_t g = 1; g < by_size.size(); ++g) {
    std::vector<double> ratios;
    for (int64_t x : common)
      if (by_size[0].at(x) > 0) ratios.push_back(by_size[g].at(x) / by_size[0].at(x));
    if (!ratios.empty())
      plot.summary.push_back(fmt::format("{} sizes on every GPU: {} runs at {:.2f}x the TFLOP/s of {} (median)",
                                         common.size(), names[g], median(ratios), names[0]));
  }
  f.set_texts("SERIES_TITLE", titles);
  f.set_texts("SERIES_COLOR", colors);
  f.set_text("XLABEL", axis.label);
  const double pad = hi > lo ? double(hi - lo) * 0.02 : 1.0;
  f.set_number("XMIN", std::max(0.0, double(lo) - pad));
  f.set_number("XMAX", double(hi) + pad);
  f.set_number("YMAX", best * 1.08);
  f.set_number("DENSE", dense ? 1 : 0);
  const PlotContext& c = series.front().selection.context;
  f.set_text("TITLE", fmt::format("TFLOP/s by size: {}\n{} {}, {}, {} L2 (each GPU at its own SM clock)",
                                  fmt::join(names, " vs "), to_string(c.dtype), to_string(c.layout),
                                  series_name(series.front().selection.points.front().key), c.hot ? "hot" : "cold"));
  return plot;
}

}  // namespace shapescope
