// Order statistics of plain numbers: numpy's "linear" quantile and the interpolated median. Here so
// that the measurements' statistics (timing/stats.*) and the model layer, which cannot include
// timing/, compute them with one piece of code.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace shapescope {

// Interpolates between the two order statistics around (n - 1) * p of `sorted` (ascending, not empty).
inline double quantile_of_sorted(const std::vector<double>& sorted, double p) {
  const double position = double(sorted.size() - 1) * p;
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - double(below)) * (sorted[above] - sorted[below]);
}

// The same of unsorted values; 0 for none.
inline double quantile_of(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return quantile_of_sorted(values, p);
}

// The mean of the two middle values for an even count; 0 for none.
inline double median_of(std::vector<double> values) { return quantile_of(std::move(values), 0.5); }

}  // namespace shapescope
