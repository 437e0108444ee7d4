#include "report/plot_figures.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "common/error.hpp"
#include "common/units.hpp"
#include "core/backend_kind.hpp"
#include "model/alignment.hpp"
#include "timing/stats.hpp"
#include "report/annotation_text.hpp"
#include "report/output.hpp"

namespace shapescope {

namespace {

// Colours that stay apart for most readers (Tableau 10 order), then two more; grey is "other".
constexpr std::array<const char*, 12> kCategoryColors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                        "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                                        "#bcbd22", "#393b79", "#ad494a", "#637939"};
constexpr const char* kOtherColor = "#c7c7c7";

// He's figure: a level per power of two; odd sizes in grey, every other level a colour of its own.
constexpr std::array<const char*, 9> kPow2Colors = {"#a0a0a0", "#e6ab02", "#d95f02", "#e7298a", "#7570b3",
                                                   "#1b9e77", "#66a61e", "#1f78b4", "#000000"};

// "Bigger and faster" must be more than noise: repeated sweeps differ by up to a few percent
// (README: p95 2.3 %), so a smaller size must take this much longer.
constexpr double kBiggerAndFasterMargin = 0.10;

double tflops_of(const Annotation& a) { return a.roofline.tflops.value_or(0); }

// The points in increasing swept size (then backend and algorithm, as selected).
std::vector<size_t> by_size(const Selection& s, const SweptAxis& axis) {
  std::vector<size_t> order(s.points.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return axis.of(s.points[a].key.problem) < axis.of(s.points[b].key.problem);
  });
  return order;
}

// Series are the first blocks of the data file, in legend order; the template loops over them.
struct Series {
  std::vector<std::string> titles, colors;

  void add(Figure& figure, std::string title, std::string color, DataBlock block) {
    if (block.rows.empty()) return;
    figure.tooltips += block.rows.size();
    figure.add_block(std::move(block));
    titles.push_back(std::move(title));
    colors.push_back(std::move(color));
  }
  void define(Figure& figure) const {
    figure.set_texts("SERIES_TITLE", titles);
    figure.set_texts("SERIES_COLOR", colors);
  }
};

// Points of several classes in one block, in size order, each row ending in its class number
// (1-based): classes that share a band of TFLOP/s interleave instead of one hiding the other.
// The legend is made of keyentry lines from CLASS_TITLE[] and CLASS_COLOR[]; CLASS_RGB[] holds
// the same colours as numbers for `lc rgb variable`.
struct ClassedPoints {
  struct Row {
    std::string key;   // the class
    std::string text;  // the row without its class number
  };
  std::vector<Row> rows;

  // legend: class keys in legend order, with their titles and colours.
  void define(Figure& figure, DataBlock block, const std::vector<std::string>& legend,
              const std::vector<std::string>& titles, const std::vector<std::string>& colors) {
    std::map<std::string, size_t> number;
    for (size_t i = 0; i < legend.size(); ++i) number[legend[i]] = i + 1;
    std::vector<std::string> described;
    for (size_t i = 0; i < legend.size(); ++i) described.push_back(fmt::format("{} = {}", i + 1, titles[i]));
    block.title += fmt::format("; class {}", fmt::join(described, ", "));
    for (const Row& r : rows) block.rows.push_back(fmt::format("{} {}", r.text, number.at(r.key)));
    figure.tooltips += block.rows.size();
    figure.add_block(std::move(block));
    std::vector<double> rgb;
    for (const std::string& c : colors) rgb.push_back(double(std::stol(c.substr(1), nullptr, 16)));
    figure.set_texts("CLASS_TITLE", titles);
    figure.set_texts("CLASS_COLOR", colors);
    figure.set_numbers("CLASS_RGB", rgb);
  }
};

// The compute peak the points ran against: the middle of their (clock-scaled) peaks.
struct PeakLine {
  double value = 0;
  std::string label;
};
PeakLine peak_line(const Selection& s) {
  std::vector<double> values;
  const Peak* any = nullptr;
  for (const Annotation& a : s.annotations) {
    if (a.roofline.peak_tflops.value <= 0) continue;
    values.push_back(a.roofline.peak_tflops.value);
    any = &a.roofline.peak_tflops;
  }
  PeakLine line;
  if (values.empty()) return line;
  line.value = middle_value(values);
  const std::string dtype(to_string(s.context.dtype));
  if (any->measured) {
    const bool scaled = any->source.find("scaled") != std::string::npos;
    line.label = fmt::format("measured {} peak {:.0f} TFLOP/s (info --calibrate{})", dtype, line.value,
                             scaled ? ", scaled to the points' SM clock" : "");
  } else {
    line.label = fmt::format("vendor {} peak {:.0f} TFLOP/s (datasheet; not calibrated)", dtype, line.value);
  }
  return line;
}

void common_text(Figure& figure, const std::string& what, const Selection& s) {
  figure.set_text("TITLE", what + "\n" + s.context.title());
}

// x range of a figure over sizes: the sizes and a little room on both sides.
void size_range(Figure& figure, const Selection& s, const SweptAxis& axis) {
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const int64_t x = axis.of(s.points[i].key.problem);
    lo = i == 0 ? x : std::min(lo, x);
    hi = i == 0 ? x : std::max(hi, x);
  }
  const double pad = hi > lo ? double(hi - lo) * 0.02 : 1.0;
  figure.set_number("XMIN", std::max(0.0, double(lo) - pad));
  figure.set_number("XMAX", double(hi) + pad);
}

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

// A kernel's legend label by family and tile (in the kernel's own frame, as its name spells it).
std::string family_tile(const Annotation& a, const std::string& short_name) {
  const KernelTile& t = a.parsed;
  if (!t.known || t.tile_m <= 0) {
    const size_t cut = short_name.find_first_of("<(");
    return short_name.substr(0, std::min<size_t>(cut, 40));
  }
  const std::string tile = fmt::format("{}x{}", t.tile_m, t.tile_n);
  if (t.family == "cutlass2") {
    const std::string sm = t.sm > 0 ? fmt::format("cutlass_{}", t.sm) : std::string("cutlass");
    return fmt::format("{}{} {}{}", sm, t.wmma ? " wmma" : "", tile, t.align > 0 ? fmt::format(" align{}", t.align) : "");
  }
  return fmt::format("{} {}", t.family, tile);
}

// A kernel's family for grouping: "nvjet", "cutlass_75 align1"; a kernel without a parsed tile
// is its own family.
std::string family_of(const Annotation& a, const std::string& short_name) {
  const KernelTile& t = a.parsed;
  if (!t.known || t.tile_m <= 0) return family_tile(a, short_name);
  if (t.family == "cutlass2") {
    const std::string sm = t.sm > 0 ? fmt::format("cutlass_{}", t.sm) : std::string("cutlass");
    return fmt::format("{}{}{}", sm, t.wmma ? " wmma" : "", t.align > 0 ? fmt::format(" align{}", t.align) : "");
  }
  return t.family;
}

std::string main_kernel_name(const StoredPoint& p, const Annotation& a) {
  if (a.main_kernel < 0) return "(no kernel recorded)";
  return short_kernel_name(p.kernels[size_t(a.main_kernel)].name);
}

// "h0..h3" for cuBLASLt's heuristic choices, else the names listed.
std::string algo_span(const std::set<std::string>& algos) {
  std::vector<int> ranks;
  for (const std::string& a : algos) {
    if (a.size() < 2 || a.size() > 4 || a[0] != 'h' || a.find_first_not_of("0123456789", 1) != std::string::npos) {
      return fmt::format("{}", fmt::join(algos, ", "));
    }
    ranks.push_back(std::stoi(a.substr(1)));
  }
  std::sort(ranks.begin(), ranks.end());
  const bool contiguous = ranks.back() - ranks.front() + 1 == int(ranks.size());
  if (!contiguous) return fmt::format("{}", fmt::join(algos, ", "));
  return fmt::format("h{}..h{}", ranks.front(), ranks.back());
}

}  // namespace

std::vector<std::string> point_tooltip(const StoredPoint& p, const Annotation& a) {
  const Problem& q = p.key.problem;
  std::vector<std::string> lines;
  // The dtype, layout and GPU are the same for every point of a figure: its title says them.
  lines.push_back(fmt::format("{} ({} {})", q.shape_string(), p.key.backend, p.key.algo));
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

namespace {

// Each point's kernel by family and tile (fine) and by family alone (coarse); families of a handful
// of points (the tiny sizes' gemv-style kernels), which would each take a colour, share one label.
struct KernelLabels {
  std::vector<std::string> fine, coarse;
  std::map<std::string, size_t> fine_count;
  std::map<std::string, std::set<std::string>> members;  // coarse -> fine labels in it
};

KernelLabels kernel_labels(const std::vector<Annotation>& annotations, const std::vector<std::string>& names) {
  const size_t n = names.size();
  KernelLabels l;
  l.fine.resize(n);
  l.coarse.resize(n);
  std::map<std::string, size_t> family_count;
  for (size_t i = 0; i < n; ++i) {
    l.fine[i] = family_tile(annotations[i], names[i]);
    l.coarse[i] = family_of(annotations[i], names[i]);
    family_count[l.coarse[i]]++;
  }
  const size_t rare = n / 100;
  size_t rare_families = 0;
  for (const auto& [family, count] : family_count) rare_families += count <= rare;
  for (size_t i = 0; i < n; ++i) {
    if (rare_families > 1 && family_count[l.coarse[i]] <= rare) {
      l.fine[i] = l.coarse[i] = fmt::format("other ({} rare kinds)", rare_families);
    }
    l.fine_count[l.fine[i]]++;
    l.members[l.coarse[i]].insert(l.fine[i]);
  }
  return l;
}

// Labels by their count, the most frequent first (ties by name).
std::vector<std::pair<size_t, std::string>> by_count(const std::map<std::string, size_t>& counts) {
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [name, count] : counts) ranked.emplace_back(count, name);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  return ranked;
}

// The fine labels that keep a group of their own, the most frequent first, as long as the groups
// (those labels, plus one per family that has labels left) stay within max_groups. `left` gets,
// per family, how many of its labels were not promoted.
std::set<std::string> promote_labels(const KernelLabels& l, size_t max_groups, std::map<std::string, size_t>& left) {
  std::map<std::string, std::string> coarse_of;
  for (size_t i = 0; i < l.fine.size(); ++i) coarse_of[l.fine[i]] = l.coarse[i];
  std::set<std::string> promoted;
  for (const auto& [c, set] : l.members) left[c] = set.size();
  auto groups_now = [&] {
    size_t n = promoted.size();
    for (const auto& [c, count] : left) n += count > 0;
    return n;
  };
  if (groups_now() > max_groups) return promoted;
  for (const auto& [count, name] : by_count(l.fine_count)) {
    const std::string& c = coarse_of[name];
    promoted.insert(name);
    left[c]--;
    if (groups_now() > max_groups) {
      promoted.erase(name);
      left[c]++;
    }
  }
  return promoted;
}

// Each point's group: its fine label where promoted (or alone in its family), else its family's.
std::vector<std::string> group_of_points(const KernelLabels& l, const std::set<std::string>& promoted,
                                         const std::map<std::string, size_t>& left) {
  std::vector<std::string> groups(l.fine.size());
  for (size_t i = 0; i < l.fine.size(); ++i) {
    const size_t family_left = left.at(l.coarse[i]);
    if (promoted.count(l.fine[i]) || family_left == 1) {
      groups[i] = l.fine[i];
    } else {
      const bool some_promoted = family_left < l.members.at(l.coarse[i]).size();
      groups[i] = fmt::format(some_promoted ? "{}, {} other tiles" : "{} ({} tiles)", l.coarse[i], family_left);
    }
  }
  return groups;
}

// Still too many groups: the rarest fold into one.
void fold_rarest_groups(std::vector<std::string>& groups, size_t max_groups) {
  std::map<std::string, size_t> counts;
  for (const std::string& g : groups) counts[g]++;
  if (counts.size() <= max_groups) return;
  const auto ranked = by_count(counts);
  std::set<std::string> kept;
  for (size_t i = 0; i + 1 < max_groups; ++i) kept.insert(ranked[i].second);
  const std::string other = fmt::format("other ({} kinds)", counts.size() - kept.size());
  for (std::string& g : groups)
    if (!kept.count(g)) g = other;
}

}  // namespace

std::vector<std::string> kernel_groups(const std::vector<StoredPoint>& points, const std::vector<Annotation>& annotations,
                                       size_t max_groups) {
  std::vector<std::string> names;
  for (size_t i = 0; i < points.size(); ++i) names.push_back(main_kernel_name(points[i], annotations[i]));
  if (std::set<std::string>(names.begin(), names.end()).size() <= max_groups) return names;

  // Too many kernels: families and tiles, the most frequent on their own and the rest of each
  // family in one group, so that a family with many tiles (nvjet) stays visible as itself.
  const KernelLabels labels = kernel_labels(annotations, names);
  if (labels.fine_count.size() <= max_groups) return labels.fine;
  std::map<std::string, size_t> left;
  const std::set<std::string> promoted = promote_labels(labels, max_groups, left);
  std::vector<std::string> groups = group_of_points(labels, promoted, left);
  fold_rarest_groups(groups, max_groups);
  return groups;
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

Plot kernels_plot(const Selection& s, const SweptAxis& axis) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "kernels";
  size_range(f, s, axis);
  common_text(f, fmt::format("TFLOP/s by size, coloured by the kernel that ran: {}", series_name(s.points.front().key)),
              s);
  f.set_text("XLABEL", axis.label);
  const std::vector<size_t> order = by_size(s, axis);
  std::vector<StoredPoint> points;
  std::vector<Annotation> annotations;
  for (size_t i : order) {
    points.push_back(s.points[i]);
    annotations.push_back(s.annotations[i]);
  }
  constexpr size_t kMaxGroups = kCategoryColors.size();
  const std::vector<std::string> groups = kernel_groups(points, annotations, kMaxGroups);
  // Whether the groups are the kernels' own names (few kernels) or families and tiles.
  bool named = true;
  for (size_t j = 0; j < points.size(); ++j) named = named && groups[j] == main_kernel_name(points[j], annotations[j]);
  // Legend in order of first appearance along the axis, the folded "other" groups last.
  ClassedPoints classed;
  std::vector<std::string> legend;
  std::map<std::string, size_t> count;
  std::map<std::string, int64_t> first_x, last_x;
  for (size_t j = 0; j < points.size(); ++j) {
    const int64_t x = axis.of(points[j].key.problem);
    if (!count.count(groups[j])) {
      legend.push_back(groups[j]);
      first_x[groups[j]] = x;
    }
    count[groups[j]]++;
    last_x[groups[j]] = x;
    classed.rows.push_back({groups[j], fmt::format("{} {:.6g} {}", x, tflops_of(annotations[j]),
                                                   tooltip_field(point_tooltip(points[j], annotations[j])))});
  }
  const std::string other_prefix = "other (";
  std::stable_partition(legend.begin(), legend.end(), [&](const std::string& g) { return g.rfind(other_prefix, 0) != 0; });
  std::vector<std::string> titles, colors;
  size_t color = 0;
  for (const std::string& g : legend) {
    const bool other = g.rfind(other_prefix, 0) == 0;
    titles.push_back(fmt::format("{} ({})", g, count[g]));
    colors.push_back(other ? kOtherColor : kCategoryColors[color++ % kCategoryColors.size()]);
    plot.summary.push_back(fmt::format("{}: {} point{}, {} {}..{}", g, count[g], count[g] == 1 ? "" : "s", axis.name,
                                       first_x[g], last_x[g]));
  }
  DataBlock block;
  block.title = fmt::format("every point, by {}", axis.name);
  block.columns = fmt::format("{}  TFLOP/s  tooltip  class (kernel group)", axis.name);
  classed.define(f, std::move(block), legend, titles, colors);
  f.set_text("KEY_TITLE", named ? "main kernel (points)" : "main kernel: family and tile as named (points)");
  return plot;
}

namespace {

// Per size, the indices of every algorithm's point there.
using PointsBySize = std::map<int64_t, std::vector<size_t>>;

// One line of a compare figure: a backend's algorithm, or (algo "") the fastest of those timed.
struct CompareSpec {
  std::string title, backend, algo;
};

// The series: each backend's default algorithm (every algorithm with each_algo), and where a
// backend has several algorithms timed and each_algo is off, their best per size.
std::vector<CompareSpec> compare_specs(const Selection& s, const std::map<std::string, PointsBySize>& by_backend,
                                       const std::set<std::pair<std::string, std::string>>& pairs, bool each_algo) {
  std::vector<CompareSpec> specs;
  for (const auto& [backend, algo] : pairs) {
    const bool is_default = algo == default_algo(backend);
    if (each_algo || is_default) {
      std::string title = fmt::format("{} {}", backend, algo);
      if (backend == to_string(BackendKind::kCublasLt) && is_default) title += " (the heuristic's pick)";
      specs.push_back({title, backend, algo});
    }
  }
  if (!each_algo) {
    for (const auto& [backend, sizes] : by_backend) {
      std::set<std::string> algos;
      for (const auto& [x, members] : sizes)
        for (size_t i : members) algos.insert(s.points[i].key.algo);
      if (algos.size() < 2) continue;
      specs.push_back({fmt::format("{} best of {} (fastest per size)", backend, algo_span(algos)), backend, ""});
    }
  }
  if (specs.size() < 2) {
    throw usage_error(fmt::format("--backend: plot compare needs two series (backends, or several cuBLASLt algorithms "
                                  "to take the best of), and the selection holds {}; select more (e.g. --backend "
                                  "cublas,cublaslt)",
                                  specs.empty() ? std::string("none") : specs.front().title));
  }
  return specs;
}

// The tooltip's line on the library's choice at one size: what the heuristic's pick costs there.
std::string regret_line(const Selection& s, const CompareSpec& spec, const std::vector<size_t>& members,
                        const Annotation& a) {
  if (spec.algo.empty()) {
    // The heuristic's own regret, from its point at this size.
    const std::string pick = default_algo(spec.backend);
    std::optional<double> pick_regret;
    for (size_t i : members)
      if (s.points[i].key.algo == pick) pick_regret = s.annotations[i].regret;
    std::string line =
        fmt::format("fastest of the {} {} algorithms timed: {}", members.size(), spec.backend, a.best_algo);
    if (pick_regret && *pick_regret > 0) line += fmt::format("; {} takes {:.1f}% longer", pick, *pick_regret * 100);
    return line;
  }
  if (*a.regret > 0) {
    return fmt::format("{:.1f}% slower than the fastest of the {} timed ({})", *a.regret * 100, members.size(),
                       a.best_algo);
  }
  return fmt::format("the fastest of the {} {} algorithms timed", members.size(), spec.backend);
}

// One series' data: its point at each size (the fastest one for a best-of series), with its summary
// line added to `summary` and the highest TFLOP/s kept in `best_tflops`.
DataBlock compare_block(const Selection& s, const SweptAxis& axis, const CompareSpec& spec, const PointsBySize& sizes,
                        std::vector<std::string>& summary, double& best_tflops) {
  DataBlock b;
  b.title = spec.title;
  b.columns = fmt::format("{}  TFLOP/s  tooltip", axis.name);
  double sum = 0;
  size_t wins = 0;
  for (const auto& [x, members] : sizes) {
    std::optional<size_t> chosen, fastest;
    for (size_t i : members) {
      if (!fastest || s.points[i].result.timing.median_us < s.points[*fastest].result.timing.median_us) fastest = i;
      if (s.points[i].key.algo == spec.algo) chosen = i;
    }
    if (spec.algo.empty()) chosen = fastest;
    if (!chosen) continue;
    const Annotation& a = s.annotations[*chosen];
    std::vector<std::string> tip = point_tooltip(s.points[*chosen], a);
    if (a.regret && !a.best_algo.empty()) tip.insert(tip.begin() + 1, regret_line(s, spec, members, a));
    if (spec.algo.empty() && s.points[*chosen].key.algo != default_algo(spec.backend)) ++wins;
    b.rows.push_back(fmt::format("{} {:.6g} {}", x, tflops_of(a), tooltip_field(tip)));
    sum += tflops_of(a);
    best_tflops = std::max(best_tflops, tflops_of(a));
  }
  if (!b.rows.empty()) {
    std::string line = fmt::format("{}: {} sizes, mean {}", spec.title, b.rows.size(),
                                   tflops_text(sum / double(b.rows.size()), 1));
    if (spec.algo.empty()) line += fmt::format("; another algorithm beat the heuristic's pick at {} sizes", wins);
    summary.push_back(line);
  }
  return b;
}

}  // namespace

Plot compare_plot(const Selection& s, const SweptAxis& axis, bool each_algo) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "compare";
  size_range(f, s, axis);
  f.set_text("XLABEL", axis.label);

  // Per backend, per size: every algorithm's point.
  std::map<std::string, PointsBySize> by_backend;
  std::set<std::pair<std::string, std::string>> pairs;
  for (size_t i : by_size(s, axis)) {
    by_backend[s.points[i].key.backend][axis.of(s.points[i].key.problem)].push_back(i);
    pairs.emplace(s.points[i].key.backend, s.points[i].key.algo);
  }
  const std::vector<CompareSpec> specs = compare_specs(s, by_backend, pairs, each_algo);
  constexpr std::array<const char*, 6> kColors = {"#000000", "#ff7f0e", "#2ca02c", "#1f77b4", "#d62728", "#9467bd"};
  Series series;
  std::vector<std::string> names;
  double best_tflops = 0;
  for (size_t k = 0; k < specs.size(); ++k) {
    const CompareSpec& spec = specs[k];
    DataBlock b = compare_block(s, axis, spec, by_backend[spec.backend], plot.summary, best_tflops);
    names.push_back(spec.title);
    series.add(f, spec.title, kColors[k % kColors.size()], std::move(b));
  }
  series.define(f);
  f.set_number("YMAX", best_tflops * 1.08);
  common_text(f, fmt::format("TFLOP/s by size: {}", fmt::join(names, " vs ")), s);
  return plot;
}

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

Plot roofline_plot(const Selection& s) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "roofline";
  common_text(f, fmt::format("roofline: {}", series_name(s.points.front().key)), s);
  const PeakLine peak = peak_line(s);
  std::vector<double> bandwidths;
  const Peak* bw = nullptr;
  for (const Annotation& a : s.annotations) {
    if (a.roofline.bandwidth_gbs.value <= 0) continue;
    bandwidths.push_back(a.roofline.bandwidth_gbs.value);
    bw = &a.roofline.bandwidth_gbs;
  }
  if (peak.value <= 0 || !bw) {
    throw usage_error(fmt::format("--calibration: no compute or bandwidth peak for {} ({} {}); run shapescope info "
                                  "--calibrate on it, or name a store that holds its calibration",
                                  s.context.gpu_name, to_string(s.context.dtype), "peak"));
  }
  const double bandwidth = middle_value(bandwidths);
  const std::string bw_label =
      bw->measured ? fmt::format("measured bandwidth {:.0f} GB/s (info --calibrate: device copy)", bandwidth)
                   : fmt::format("vendor bandwidth {:.0f} GB/s (datasheet; not calibrated)", bandwidth);

  DataBlock aligned, broken;
  aligned.title = "rows of A, B and C 16-byte aligned";
  broken.title = "a row not 16-byte aligned";
  aligned.columns = broken.columns = "intensity [FLOP/byte]  TFLOP/s  tooltip";
  double xmin = 0, xmax = 0, ymin = 0;
  size_t near_roof = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Annotation& a = s.annotations[i];
    const Roofline& r = a.roofline;
    if (!r.tflops || *r.tflops <= 0 || r.intensity <= 0) continue;
    std::vector<std::string> tip = point_tooltip(s.points[i], a);
    const double roof = std::min(peak.value, r.intensity * bandwidth / 1e3);
    tip.insert(tip.begin() + 2,
               fmt::format("intensity {:.1f} FLOP/byte ({} bytes at least); roof {:.0f} TFLOP/s ({} bound): {} of it",
                           r.intensity, r.min_bytes, roof, r.intensity * bandwidth / 1e3 < peak.value ? "memory" : "compute",
                           percent_tight(*r.tflops / roof, 0)));
    if (*r.tflops >= 0.5 * roof) ++near_roof;
    (a.alignment.ok() ? aligned : broken)
        .rows.push_back(fmt::format("{:.6g} {:.6g} {}", r.intensity, *r.tflops, tooltip_field(tip)));
    xmin = xmin == 0 ? r.intensity : std::min(xmin, r.intensity);
    xmax = std::max(xmax, r.intensity);
    ymin = ymin == 0 ? *r.tflops : std::min(ymin, *r.tflops);
  }
  const size_t plotted = aligned.rows.size() + broken.rows.size();
  Series series;
  series.add(f, "rows of A, B, C 16-byte aligned", "#1f77b4", std::move(aligned));
  series.add(f, "a row not 16-byte aligned", "#d62728", std::move(broken));
  series.define(f);
  const double ridge = peak.value * 1e3 / bandwidth;
  f.set_number("PEAK", peak.value);
  f.set_number("BANDWIDTH", bandwidth);
  f.set_number("RIDGE", ridge);
  f.set_text("PEAK_LABEL", peak.label);
  f.set_text("BANDWIDTH_LABEL", bw_label);
  // Decades around the points and the ridge, so both roofs show.
  f.set_number("XMIN", std::pow(10, std::floor(std::log10(std::min(xmin, ridge)))));
  f.set_number("XMAX", std::max(xmax, ridge) * 3);
  f.set_number("YMIN", std::pow(10, std::floor(std::log10(ymin))));
  f.set_number("YMAX", peak.value * 3);
  plot.summary.push_back(fmt::format("{} points; roofs {:.0f} TFLOP/s and {:.0f} GB/s meet at {:.0f} FLOP/byte; {} "
                                     "points reach half their roof or more",
                                     plotted, peak.value, bandwidth, ridge, near_roof));
  return plot;
}

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
