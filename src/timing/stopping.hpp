// The stopping rule of one point (nvbench's idea, on the median): take at least `min_samples`,
// then stop as soon as the median is known well enough, that is when the confidence interval of the
// median is narrower than `target` of the median on either side; never take more than
// `max_samples`. Big steady kernels (0.2 % noise) stop at the minimum; small noisy ones get more
// samples, which cost little. Pure C++ (CPU tests feed it synthetic sample streams).
#pragma once
#include <optional>
#include <vector>

#include "core/states.hpp"

namespace shapescope {

struct StopRule {
  int min_samples = 4;
  int max_samples = 40;
  // Relative half-width of the median's confidence interval. 2 %: measured on an H100 (bench/speed/stop_rule.sh),
  // --n 1..4096 took 8.5 s at 2 % (median 4 samples) against 12-14 s at 1 % and 13-22 s at 0.5 %, and
  // two such sweeps agreed to 0.64 % (median) / 2.47 % (p95), against 0.56 % / 2.09 % at 1 %.
  double target = 0.02;
  // --samples N: exactly N samples, no rule (min == max).
  bool fixed() const { return min_samples == max_samples; }
};

// The rule needs three samples before an interval means anything (two give a 50 % interval).
constexpr int kMinAdaptiveSamples = 3;

// A distribution-free confidence interval of the median: the order statistics x(l) and x(n+1-l)
// (1-based), with l the largest rank whose binomial coverage 1 - 2 P(Bin(n, 1/2) < l) is at least
// `confidence`. Below six samples no rank reaches 95 % and the interval is the whole range
// [min, max] (coverage 1 - 2^(1-n): 75 % for 3 samples, 93.75 % for 5); `coverage` says which.
struct MedianInterval {
  double low = 0, high = 0;
  double coverage = 0;  // the interval's actual coverage probability
};
MedianInterval median_interval(std::vector<double> samples, double confidence = 0.95);

// (high - low) / 2 / median: the interval's half-width relative to the median (0 for an empty input
// or a zero median).
double relative_half_width(const std::vector<double>& samples);

// Why sampling stops now, or nullopt to go on:
//   fixed      the rule is fixed and max_samples are taken;
//   converged  at least min_samples (and kMinAdaptiveSamples) and the half-width is <= target;
//   cap        max_samples taken and not converged.
std::optional<StopReason> stop_reason(const std::vector<double>& samples, const StopRule& rule);

}  // namespace shapescope
