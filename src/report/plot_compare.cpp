// plot compare: backends and algorithms on one axis, each library's choice against the best it timed.
#include "report/plot_figures.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/units.hpp"
#include "core/backend_kind.hpp"
#include "report/annotation_text.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

namespace {

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

// Per size, the indices of every algorithm's point there.
using PointsBySize = std::map<int64_t, std::vector<size_t>>;

// One line of a compare figure: a backend's algorithm, or (algo "") the fastest of those timed.
struct CompareSpec {
  std::string title;
  BackendKind backend = BackendKind::kCublas;
  std::string algo;
};

// Backends in the order of their names (the series' order, as the store's names sort).
struct ByName {
  bool operator()(BackendKind a, BackendKind b) const { return to_string(a) < to_string(b); }
  bool operator()(const std::pair<BackendKind, std::string>& a, const std::pair<BackendKind, std::string>& b) const {
    return std::make_pair(to_string(a.first), std::cref(a.second)) < std::make_pair(to_string(b.first), std::cref(b.second));
  }
};
using ByBackend = std::map<BackendKind, PointsBySize, ByName>;
using AlgoPairs = std::set<std::pair<BackendKind, std::string>, ByName>;

// The series: each backend's default algorithm (every algorithm with each_algo), and where a
// backend has several algorithms timed and each_algo is off, their best per size.
std::vector<CompareSpec> compare_specs(const Selection& s, const ByBackend& by_backend, const AlgoPairs& pairs,
                                       bool each_algo) {
  std::vector<CompareSpec> specs;
  for (const auto& [backend, algo] : pairs) {
    const bool is_default = algo == default_algo(backend);
    if (each_algo || is_default) {
      std::string title = fmt::format("{} {}", to_string(backend), algo);
      if (backend == BackendKind::kCublasLt && is_default) title += " (the heuristic's pick)";
      specs.push_back({title, backend, algo});
    }
  }
  if (!each_algo) {
    for (const auto& [backend, sizes] : by_backend) {
      std::set<std::string> algos;
      for (const auto& [x, members] : sizes)
        for (size_t i : members) algos.insert(s.points[i].key.algo);
      if (algos.size() < 2) continue;
      specs.push_back(
          {fmt::format("{} best of {} (fastest per size)", to_string(backend), algo_span(algos)), backend, ""});
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
    const std::string pick(default_algo(spec.backend));
    std::optional<double> pick_regret;
    for (size_t i : members)
      if (s.points[i].key.algo == pick) pick_regret = s.annotations[i].regret;
    std::string line =
        fmt::format("fastest of the {} {} algorithms timed: {}", members.size(), to_string(spec.backend), a.best_algo);
    if (pick_regret && *pick_regret > 0) line += fmt::format("; {} takes {:.1f}% longer", pick, *pick_regret * 100);
    return line;
  }
  if (*a.regret > 0) {
    return fmt::format("{:.1f}% slower than the fastest of the {} timed ({})", *a.regret * 100, members.size(),
                       a.best_algo);
  }
  return fmt::format("the fastest of the {} {} algorithms timed", members.size(), to_string(spec.backend));
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
  ByBackend by_backend;
  AlgoPairs pairs;
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

}  // namespace shapescope
