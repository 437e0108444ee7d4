#include "timing/replay_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "timing/paired.hpp"
#include "timing/stopping.hpp"

namespace shapescope {

std::vector<ReplayItem> compact_replay(const std::vector<ReplayItem>& items, double min_us) {
  std::vector<ReplayItem> out;
  for (const ReplayItem& item : items) {
    if (item.kind != ReplayItem::Kind::kCall && !out.empty() && out.back().kind == item.kind) {
      out.back().us += item.us;
      continue;
    }
    out.push_back(item);
  }
  std::vector<ReplayItem> kept;
  for (const ReplayItem& item : out)
    if (item.kind == ReplayItem::Kind::kCall || item.us >= min_us) kept.push_back(item);
  return kept;
}

double standin_us(const std::vector<ReplayItem>& items) {
  double total = 0;
  for (const ReplayItem& item : items)
    if (item.kind != ReplayItem::Kind::kCall) total += item.us;
  return total;
}

std::vector<double> term_sums(const std::vector<ReplayItem>& items, const std::vector<double>& us, size_t terms) {
  std::vector<double> sums(terms, 0.0);
  size_t timed = 0;
  for (const ReplayItem& item : items) {
    if (item.kind != ReplayItem::Kind::kCall) continue;
    if (timed < us.size() && item.term < terms) sums[item.term] += us[timed];
    ++timed;
  }
  return sums;
}

bool replay_done(const std::vector<double>& step_sums, const std::vector<std::vector<double>>& ratios,
                 const ReplayRule& rule, double seconds) {
  if (step_sums.size() >= size_t(rule.max_replays)) return true;
  if (step_sums.size() < size_t(rule.min_replays)) return false;
  size_t pairs = SIZE_MAX;
  for (size_t i = 1; i < ratios.size(); ++i) pairs = std::min(pairs, ratios[i].size());
  const bool enough_pairs = ratios.size() <= 1 || pairs >= size_t(rule.min_replays);
  if (seconds >= rule.max_seconds && (enough_pairs || seconds >= kHardLimit * rule.max_seconds)) return true;
  if (!enough_pairs || relative_half_width(step_sums) > rule.target) return false;
  for (size_t i = 1; i < ratios.size(); ++i)
    if (paired_ratio(ratios[i]).relative_half_width() > rule.target) return false;
  for (const size_t i : rule.precise) {
    if (i == 0 || i >= ratios.size()) continue;
    const PairedRatio r = paired_ratio(ratios[i]);
    if ((r.high - r.low) / 2 > rule.move_target * std::abs(1 - r.median)) return false;
  }
  return true;
}

}  // namespace shapescope
