#include "timing/stats.hpp"

#include <algorithm>
#include <utility>

#include "common/order_stats.hpp"

namespace shapescope {

SampleStats summarize(std::vector<double> samples) {
  SampleStats stats;
  if (samples.empty()) return stats;

  std::sort(samples.begin(), samples.end());
  stats.n = static_cast<int>(samples.size());
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = quantile_of_sorted(samples, 0.5);
  stats.q1 = quantile_of_sorted(samples, 0.25);
  stats.q3 = quantile_of_sorted(samples, 0.75);
  // A single sample says nothing about spread, and a zero median has no relative scale.
  if (stats.n >= 2 && stats.median != 0) stats.noise = (stats.q3 - stats.q1) / stats.median;
  return stats;
}

double median(std::vector<double> values) { return summarize(std::move(values)).median; }

double middle_value(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
  return values[values.size() / 2];
}

}  // namespace shapescope
