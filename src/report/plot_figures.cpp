// The figures over one swept size: flops, runtime and waves, and every point's hover text. The other
// kinds: plot_kernels.cpp, plot_compare.cpp, plot_heatmap.cpp, plot_roofline.cpp, plot_tilegrid.cpp.
#include "report/plot_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/units.hpp"
#include "model/alignment.hpp"
#include "report/annotation_text.hpp"
#include "report/output.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

namespace {

// He's figure: a level per power of two; odd sizes in grey, every other level a colour of its own.
constexpr std::array<const char*, 9> kPow2Colors = {"#a0a0a0", "#e6ab02", "#d95f02", "#e7298a", "#7570b3",
                                                   "#1b9e77", "#66a61e", "#1f78b4", "#000000"};

// "Bigger and faster" must be more than noise: repeated sweeps differ by up to a few percent
// (README: p95 2.3 %), so a smaller size must take this much longer.
constexpr double kBiggerAndFasterMargin = 0.10;

}  // namespace

std::vector<std::string> point_tooltip(const StoredPoint& p, const Annotation& a) {
  const Problem& q = p.key.problem;
  std::vector<std::string> lines;
  // The dtype, layout and GPU are the same for every point of a figure: its title says them.
  lines.push_back(fmt::format("{} ({} {})", q.shape_string(), to_string(p.key.backend), p.key.algo));
  std::string speed = fmt::format("{:.2f} us, {:.4g} TFLOP/s", p.result.timing.median_us, tflops_of(a));
  if (a.roofline.pct_peak) speed += fmt::format(" ({:.2g}% of peak)", *a.roofline.pct_peak * 100);
  speed += ", noise " + percent_tight(p.result.timing.noise, 1);
  if (p.result.timing.sm_clock_mhz) speed += fmt::format(", SM clock {:.0f} MHz", *p.result.timing.sm_clock_mhz);
  lines.push_back(speed);
  std::string kernel = "kernel " + main_kernel_name(p, a);
  if (p.kernels.size() > 1) kernel += fmt::format(" (+{} more)", p.kernels.size() - 1);
  lines.push_back(kernel);
  lines.push_back(describe_tile_line(a));
  lines.push_back(describe_waves_line(a));
  lines.push_back(describe_alignment_line(a));
  return lines;
}

std::vector<int> slower_smaller_size(const std::vector<double>& times, double margin) {
  std::vector<int> slower(times.size(), -1);
  int slowest = -1;
  for (size_t i = 0; i < times.size(); ++i) {
    if (slowest >= 0 && times[size_t(slowest)] > times[i] * (1 + margin)) slower[i] = slowest;
    if (slowest < 0 || times[i] > times[size_t(slowest)]) slowest = int(i);
  }
  return slower;
}

std::vector<size_t> new_wave_starts(const std::vector<Annotation>& annotations) {
  std::map<std::tuple<int, int, int64_t, int64_t>, int64_t> last_rounds;
  std::vector<size_t> starts;
  for (size_t i = 0; i < annotations.size(); ++i) {
    const Annotation& a = annotations[i];
    if (a.grid.tiles <= 0 || a.waves.slots <= 0) continue;
    const auto key = std::make_tuple(a.grid.tile_m, a.grid.tile_n, a.waves.slots, a.grid.splits);
    auto [at, inserted] = last_rounds.emplace(key, a.waves.rounds);
    if (!inserted && a.waves.rounds > at->second) starts.push_back(i);
    at->second = a.waves.rounds;
  }
  return starts;
}

Plot flops_plot(const Selection& s, const SweptAxis& axis) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "flops";
  size_range(f, s, axis);
  common_text(f, fmt::format("TFLOP/s by size: {}", series_name(s.points.front().key)), s);
  f.set_text("XLABEL", axis.label);
  f.set_text("KEY_TITLE", fmt::format("largest power of 2 dividing {}", axis.name));

  ClassedPoints points;
  std::set<int64_t> present;
  double best = 0;
  size_t best_at = 0;
  for (size_t i : by_size(s, axis)) {
    const int64_t x = axis.of(s.points[i].key.problem);
    const double t = tflops_of(s.annotations[i]);
    const int64_t pow2 = pow2_alignment(x);
    present.insert(pow2);
    points.rows.push_back({std::to_string(pow2), fmt::format("{} {:.6g} {}", x, t,
                                                             tooltip_field(point_tooltip(s.points[i], s.annotations[i])))});
    if (t > best) {
      best = t;
      best_at = i;
    }
  }
  std::vector<std::string> legend, titles, colors;
  for (int64_t pow2 : present) {
    const size_t level = size_t(std::log2(double(pow2)));
    legend.push_back(std::to_string(pow2));
    titles.push_back(pow2 == 1 ? "1 (odd)" : pow2 >= kAlignmentCap ? fmt::format("{} or more", pow2) : std::to_string(pow2));
    colors.push_back(kPow2Colors[std::min(level, kPow2Colors.size() - 1)]);
  }
  DataBlock block;
  block.title = fmt::format("every point, by {}", axis.name);
  block.columns = fmt::format("{}  TFLOP/s  tooltip  class (largest power of 2 dividing {})", axis.name, axis.name);
  points.define(f, std::move(block), legend, titles, colors);
  const PeakLine peak = peak_line(s);
  f.set_number("PEAK", peak.value);
  f.set_text("PEAK_LABEL", peak.label);
  f.set_number("YMAX", std::max(best, peak.value) * 1.08);
  plot.summary.push_back(fmt::format("{} points; fastest {} at {} = {}", s.points.size(), tflops_text(best, 1), axis.name,
                                     axis.of(s.points[best_at].key.problem)));
  return plot;
}

Plot runtime_plot(const Selection& s, const SweptAxis& axis) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "runtime";
  size_range(f, s, axis);
  common_text(f, fmt::format("time by size: {} (red: bigger and faster: a smaller size takes over {:.0f}% longer)",
                             series_name(s.points.front().key), kBiggerAndFasterMargin * 100),
              s);
  f.set_text("XLABEL", axis.label);

  const std::vector<size_t> order = by_size(s, axis);
  std::vector<double> times;
  for (size_t i : order) times.push_back(s.points[i].result.timing.median_us);
  const std::vector<int> slower = slower_smaller_size(times, kBiggerAndFasterMargin);
  DataBlock faster, rest, envelope;
  faster.title = fmt::format("bigger and faster: a smaller size takes over {:.0f}% longer", kBiggerAndFasterMargin * 100);
  rest.title = "no smaller size takes that much longer";
  faster.columns = rest.columns = fmt::format("{}  median [us]  tooltip", axis.name);
  envelope.title = fmt::format("the slowest time of any size up to {}", axis.name);
  envelope.columns = fmt::format("{}  slowest [us]", axis.name);
  double slowest = 0;
  for (size_t j = 0; j < order.size(); ++j) {
    const size_t i = order[j];
    const int64_t x = axis.of(s.points[i].key.problem);
    std::vector<std::string> tip = point_tooltip(s.points[i], s.annotations[i]);
    if (slower[j] >= 0) {
      const StoredPoint& other = s.points[order[size_t(slower[j])]];
      tip.insert(tip.begin() + 1, fmt::format("bigger and faster: {} = {} is smaller and takes {:.2f} us ({:.1f}x)",
                                              axis.name, axis.of(other.key.problem), other.result.timing.median_us,
                                              other.result.timing.median_us / times[j]));
    }
    (slower[j] >= 0 ? faster : rest).rows.push_back(fmt::format("{} {:.6g} {}", x, times[j], tooltip_field(tip)));
    slowest = std::max(slowest, times[j]);
    envelope.rows.push_back(fmt::format("{} {:.6g}", x, slowest));
  }
  const size_t n_faster = faster.rows.size();
  // Whole decades on the log axis, at least one, so that a single size still has a range.
  const double fastest = *std::min_element(times.begin(), times.end());
  const double ymin = std::pow(10, std::floor(std::log10(fastest)));
  f.set_number("YMIN", ymin);
  f.set_number("YMAX", std::max(std::pow(10, std::ceil(std::log10(slowest))), ymin * 10));
  Series series;
  const std::string rest_title = rest.title, faster_title = faster.title;
  series.add(f, rest_title, "#1f77b4", std::move(rest));
  series.add(f, faster_title, "#d62728", std::move(faster));
  series.define(f);
  f.set_number("ENVELOPE_INDEX", double(f.add_block(std::move(envelope))));
  plot.summary.push_back(fmt::format("{} points; {} of them bigger and faster (a smaller size takes over {:.0f}% longer)",
                                     s.points.size(), n_faster, kBiggerAndFasterMargin * 100));
  return plot;
}

Plot waves_plot(const Selection& s, const SweptAxis& axis) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "waves";
  size_range(f, s, axis);
  f.height = 800;
  common_text(f, fmt::format("TFLOP/s and wave quantization by size: {}", series_name(s.points.front().key)), s);
  f.set_text("XLABEL", axis.label);

  // Wave efficiency classes: how full the GPU's last round of tiles is.
  struct Band {
    double min;
    const char* title;
    const char* color;
  };
  constexpr std::array<Band, 4> kBands = {Band{0.9, ">= 90%", "#1a9850"}, Band{0.75, "75-90%", "#a6d96a"},
                                          Band{0.5, "50-75%", "#fdae61"}, Band{0.0, "< 50%", "#d73027"}};
  std::array<DataBlock, kBands.size()> bands;
  DataBlock unknown, waves, starts;
  for (DataBlock* b : {&bands[0], &bands[1], &bands[2], &bands[3], &unknown})
    b->columns = fmt::format("{}  TFLOP/s  tooltip", axis.name);
  for (size_t b = 0; b < kBands.size(); ++b) bands[b].title = fmt::format("wave efficiency {}", kBands[b].title);
  unknown.title = "waves unknown (no tile or slots for the kernel)";
  waves.title = "waves of the points whose tile grid and slots are known";
  waves.columns = fmt::format("{}  waves (tiles/slots)  rounds  wave efficiency [%]", axis.name);
  starts.title = "sizes where a new wave starts (rounds rose over the last size with the same tile and slots)";
  starts.columns = fmt::format("{}  rounds  TFLOP/s", axis.name);

  const std::vector<size_t> order = by_size(s, axis);
  std::vector<Annotation> ordered;
  for (size_t i : order) ordered.push_back(s.annotations[i]);
  const std::vector<size_t> new_waves = new_wave_starts(ordered);
  double best = 0;
  for (size_t i : order) {
    const Annotation& a = s.annotations[i];
    const int64_t x = axis.of(s.points[i].key.problem);
    const std::string row = fmt::format("{} {:.6g} {}", x, tflops_of(a), tooltip_field(point_tooltip(s.points[i], a)));
    best = std::max(best, tflops_of(a));
    if (a.waves.slots <= 0 || a.waves.work <= 0 || a.waves_over != "tiles") {
      unknown.rows.push_back(row);
      continue;
    }
    for (size_t b = 0; b < kBands.size(); ++b) {
      if (a.waves.efficiency >= kBands[b].min) {
        bands[b].rows.push_back(row);
        break;
      }
    }
    waves.rows.push_back(fmt::format("{} {:.6g} {} {:.4g}", x, a.waves.waves, a.waves.rounds, a.waves.efficiency * 100));
  }
  std::vector<double> start_x;
  for (size_t j : new_waves) {
    const Annotation& a = ordered[j];
    const int64_t x = axis.of(s.points[order[j]].key.problem);
    starts.rows.push_back(fmt::format("{} {} {:.6g}", x, a.waves.rounds, tflops_of(a)));
    start_x.push_back(double(x));
  }
  if (waves.rows.empty()) {
    throw usage_error(fmt::format("--m/--n/--k: plot waves has no wave to draw: none of the {} selected points ran a "
                                  "kernel whose tile and slots are known ({}); plot flops draws them",
                                  s.points.size(), describe_tile_line(s.annotations[order.front()])));
  }
  Series series;
  for (size_t b = 0; b < kBands.size(); ++b)
    series.add(f, kBands[b].title, kBands[b].color, std::move(bands[b]));
  series.add(f, "unknown", kOtherColor, std::move(unknown));
  series.define(f);
  const size_t n_waves = waves.rows.size();
  const size_t n_starts = starts.rows.size();
  f.set_number("WAVES_INDEX", double(f.add_block(std::move(waves))));
  f.set_number("STARTS_INDEX", double(f.add_block(std::move(starts))));
  f.set_numbers("NEW_WAVE_AT", start_x);
  f.set_number("YMAX", best * 1.08);
  plot.summary.push_back(fmt::format("{} points, {} with known waves; a new wave starts at {} sizes", s.points.size(),
                                     n_waves, n_starts));
  return plot;
}

}  // namespace shapescope
