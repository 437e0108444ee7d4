// Statistics of one point's samples. Pure C++.
#pragma once
#include <vector>

namespace shapescope {

struct SampleStats {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
  int n = 0;
  double noise = 0;  // relative interquartile range (q3 - q1) / median; 0 for fewer than 2 samples
};

// Quartiles by linear interpolation between order statistics (numpy's default "linear" method).
// Empty input gives all zeros.
SampleStats summarize(std::vector<double> samples);

// The interpolated median of summarize() alone (the mean of the two middle values for an even
// count): the SM clock of a point and of a run. Empty input gives 0.
double median(std::vector<double> values);

// The middle order statistic, the upper one of the two for an even count (no interpolation): the
// median the flush time, the plotted peak lines and pad's clock summary have always shown.
// Empty input gives 0.
double middle_value(std::vector<double> values);

}  // namespace shapescope
