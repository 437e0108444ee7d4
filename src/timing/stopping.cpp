#include "timing/stopping.hpp"

#include <algorithm>
#include <cmath>

#include "timing/stats.hpp"

namespace shapescope {

namespace {

// P(Bin(n, 1/2) = k), in logs so that n in the thousands neither underflows nor overflows.
double binomial_half_pmf(int n, int k) {
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) - n * std::log(2.0));
}

}  // namespace

MedianInterval median_interval(std::vector<double> samples, double confidence) {
  MedianInterval interval;
  const int n = int(samples.size());
  if (n == 0) return interval;
  std::sort(samples.begin(), samples.end());
  // Grow the lower rank l while the interval [x(l+1), x(n-l)] still covers `confidence`:
  // coverage(l) = 1 - 2 P(Bin < l); tail holds P(Bin <= l - 1) for the current l.
  int rank = 1;
  double tail = 0;
  for (int l = 1; 2 * l <= n; ++l) {
    tail += binomial_half_pmf(n, l - 1);
    if (1.0 - 2.0 * tail < confidence) break;
    rank = l;
  }
  double covered = 0;
  for (int k = 0; k < rank; ++k) covered += binomial_half_pmf(n, k);
  interval.low = samples[size_t(rank - 1)];
  interval.high = samples[size_t(n - rank)];
  interval.coverage = n == 1 ? 0.0 : 1.0 - 2.0 * covered;
  return interval;
}

double relative_half_width(const std::vector<double>& samples) {
  if (samples.empty()) return 0;
  const double mid = median(samples);
  if (mid == 0) return 0;
  const MedianInterval interval = median_interval(samples);
  return (interval.high - interval.low) / 2.0 / std::fabs(mid);
}

std::optional<StopReason> stop_reason(const std::vector<double>& samples, const StopRule& rule) {
  const int n = int(samples.size());
  if (rule.fixed()) {
    if (n >= rule.max_samples) return StopReason::kFixed;
    return std::nullopt;
  }
  if (n >= std::max(rule.min_samples, kMinAdaptiveSamples) && relative_half_width(samples) <= rule.target)
    return StopReason::kConverged;
  if (n >= rule.max_samples) return StopReason::kCap;
  return std::nullopt;
}

}  // namespace shapescope
