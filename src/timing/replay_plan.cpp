#include "timing/replay_plan.hpp"

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

}  // namespace shapescope
