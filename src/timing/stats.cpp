#include "timing/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace shapescope {

namespace {

// numpy's "linear" quantile: interpolate between the two order statistics around (n - 1) * p.
double quantile(const std::vector<double>& sorted, double p) {
  double position = double(sorted.size() - 1) * p;
  auto below = static_cast<size_t>(std::floor(position));
  size_t above = std::min(below + 1, sorted.size() - 1);
  double fraction = position - double(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

SampleStats summarize(std::vector<double> samples) {
  SampleStats stats;
  if (samples.empty()) return stats;

  std::sort(samples.begin(), samples.end());
  stats.n = static_cast<int>(samples.size());
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = quantile(samples, 0.5);
  stats.q1 = quantile(samples, 0.25);
  stats.q3 = quantile(samples, 0.75);
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
