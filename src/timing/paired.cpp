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

std::vector<std::optional<double>> pass_ratios(const std::vector<double>& forward, const std::vector<double>& backward) {
  std::vector<std::optional<double>> out(forward.size());
  if (forward.empty() || forward.size() != backward.size()) return out;
  const double reference = (forward[0] + backward[0]) / 2;
  if (reference <= 0) return out;
  for (size_t i = 0; i < forward.size(); ++i) {
    const double mean = (forward[i] + backward[i]) / 2;
    if (mean > 0) out[i] = mean / reference;
  }
  return out;
}

bool paired_done(const std::vector<std::vector<double>>& ratios, const PairedRule& rule, double seconds) {
  size_t pairs = ratios.empty() ? 0 : ratios.front().size();
  for (const auto& r : ratios) pairs = std::min(pairs, r.size());
  if (int(pairs) >= rule.max_pairs) return true;
  if (seconds >= rule.max_seconds && int(pairs) >= kMinAdaptiveSamples) return true;
  if (int(pairs) < rule.min_pairs) return false;
  for (size_t i = 1; i < ratios.size(); ++i)
    if (paired_ratio(ratios[i]).relative_half_width() > rule.target) return false;
  return true;
}

std::vector<size_t> pass_order(size_t calls, unsigned long long seed) {
  std::vector<size_t> order(calls);
  std::iota(order.begin(), order.end(), size_t(0));
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

}  // namespace shapescope
