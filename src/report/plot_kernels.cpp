// plot kernels: TFLOP/s coloured by the kernel that ran, its family and tile, with the groups
// folded to what a legend can hold.
#include "report/plot_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/annotation_text.hpp"
#include "report/output.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

namespace {

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
}  // namespace shapescope
