#include "timing/replay_plan.hpp"

#include <algorithm>
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

namespace {

bool is_precise(const ReplayRule& rule, size_t step) {
  return std::find(rule.precise.begin(), rule.precise.end(), step) != rule.precise.end();
}

}  // namespace

bool replay_keeps(size_t step, const std::vector<std::vector<double>>& ratios, const ReplayRule& rule) {
  if (step == 0 || rule.precise.empty()) return true;
  if (is_precise(rule, step)) return true;
  return step >= ratios.size() || ratios[step].size() < size_t(kMinAdaptiveSamples);
}

std::vector<size_t> replay_pass(size_t steps, const std::vector<std::vector<double>>& ratios, const ReplayRule& rule,
                                unsigned long long seed) {
  std::vector<size_t> order;
  if (steps > 1)
    for (const size_t s : pass_order(steps, seed))
      if (replay_keeps(s, ratios, rule)) order.push_back(s);
  return order.empty() ? std::vector<size_t>{0} : pass_sequence(order);
}

bool replay_done(const std::vector<double>& step_sums, const std::vector<std::vector<double>>& ratios,
                 const ReplayRule& rule, double seconds) {
  if (step_sums.size() >= size_t(rule.max_replays)) return true;
  if (step_sums.size() < size_t(rule.min_replays)) return false;
  size_t pairs = SIZE_MAX;  // the fewest of the changed steps still in the passes
  for (size_t i = 1; i < ratios.size(); ++i)
    if (replay_keeps(i, ratios, rule)) pairs = std::min(pairs, ratios[i].size());
  const bool enough_pairs = pairs == SIZE_MAX || pairs >= size_t(rule.min_replays);
  // A named change's time limit is the user's: it ends the passes once each named step has an interval
  // (another changed step that gets no pairs, e.g. a sum of nothing, does not hold it).
  bool an_interval = !rule.precise.empty();
  for (const size_t i : rule.precise)
    if (i > 0 && i < ratios.size() && ratios[i].size() < size_t(kMinAdaptiveSamples)) an_interval = false;
  if (seconds >= rule.max_seconds && (enough_pairs || an_interval || seconds >= kHardLimit * rule.max_seconds))
    return true;
  if (!enough_pairs || relative_half_width(step_sums) > rule.target) return false;
  // A named step is asked for its move within move_target, not for its ratio within `target` (looser
  // for a move above 10 %, tighter below).
  for (size_t i = 1; i < ratios.size(); ++i)
    if (replay_keeps(i, ratios, rule) && !is_precise(rule, i) && paired_ratio(ratios[i]).relative_half_width() > rule.target)
      return false;
  for (const size_t i : rule.precise)
    if (i > 0 && i < ratios.size() && !move_known(paired_ratio(ratios[i]), rule.move_target, rule.move_floor))
      return false;
  return true;
}

void keep_precise(ReplayRule& runnable, const ReplayRule& rule, const std::vector<size_t>& kept) {
  runnable.precise.clear();
  for (size_t i = 0; i < kept.size(); ++i)
    if (is_precise(rule, kept[i])) runnable.precise.push_back(i);
  if (!rule.precise.empty() && runnable.precise.empty()) {
    runnable.max_seconds = ReplayRule{}.max_seconds;
    runnable.max_replays = ReplayRule{}.max_replays;
  }
}

}  // namespace shapescope
