#include "timing/paired.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "timing/stats.hpp"
#include "timing/stopping.hpp"

namespace shapescope {

PairedRatio paired_ratio(std::vector<double> ratios) {
  PairedRatio r;
  r.pairs = ratios.size();
  if (ratios.empty()) return r;
  r.median = median(ratios);
  const MedianInterval interval = median_interval(std::move(ratios));
  r.low = interval.low;
  r.high = interval.high;
  r.coverage = interval.coverage;
  return r;
}

std::vector<size_t> pass_sequence(const std::vector<size_t>& order) {
  std::vector<size_t> sequence = {0};
  for (size_t c : order) sequence.insert(sequence.end(), {c, 0});
  for (auto c = order.rbegin(); c != order.rend(); ++c) sequence.insert(sequence.end(), {*c, 0});
  return sequence;
}

std::vector<std::optional<double>> pass_ratios(const std::vector<size_t>& sequence, const std::vector<double>& us,
                                               size_t calls) {
  std::vector<std::optional<double>> out(calls);
  if (sequence.size() != us.size()) return out;
  std::vector<double> sum(calls, 0);
  std::vector<int> count(calls, 0);
  std::vector<bool> broken(calls, false);
  for (size_t s = 1; s + 1 < sequence.size(); ++s) {
    const size_t c = sequence[s];
    if (c == 0 || c >= calls) continue;
    const double reference = (us[s - 1] + us[s + 1]) / 2;
    if (sequence[s - 1] != 0 || sequence[s + 1] != 0 || reference <= 0 || us[s] <= 0) {
      broken[c] = true;
      continue;
    }
    sum[c] += us[s] / reference;
    ++count[c];
  }
  if (calls > 0) out[0] = 1.0;
  for (size_t c = 1; c < calls; ++c)
    if (count[c] > 0 && !broken[c]) out[c] = sum[c] / count[c];
  return out;
}

bool paired_done(const std::vector<std::vector<double>>& ratios, const PairedRule& rule, double seconds) {
  size_t pairs = ratios.empty() ? 0 : ratios.front().size();
  for (const auto& r : ratios) pairs = std::min(pairs, r.size());
  if (int(pairs) >= rule.max_pairs) return true;
  if (seconds >= rule.max_seconds && int(pairs) >= rule.min_pairs) return true;
  if (seconds >= kHardLimit * rule.max_seconds && int(pairs) >= kMinAdaptiveSamples) return true;
  if (int(pairs) < rule.min_pairs) return false;
  for (size_t i = 1; i < ratios.size(); ++i) {
    const PairedRatio r = paired_ratio(ratios[i]);
    // Narrow enough, or already clear of the minimum effect on one side: more pairs change nothing.
    const PairedVerdict v = judge(r, rule.min_effect);
    if (r.relative_half_width() > rule.target && v != PairedVerdict::kFaster && v != PairedVerdict::kSlower) return false;
  }
  return true;
}

std::vector<size_t> pass_order(size_t calls, unsigned long long seed) {
  std::vector<size_t> order(calls > 0 ? calls - 1 : 0);
  std::iota(order.begin(), order.end(), size_t(1));
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

}  // namespace shapescope
