// What measure() says while it runs. Measurement reports facts; whoever called it decides how to
// show them (report/ draws a progress line from these). Pure C++.
#pragma once
#include <cstddef>
#include <functional>

namespace shapescope {

struct MeasureProgress {
  double fraction = 0;     // of the timing work done, 0..1
  size_t measured = 0;     // points timed and saved so far
  double last_tflops = 0;  // of the last point timed
  bool finished = false;   // the last report of a measure() call
};

using ProgressCallback = std::function<void(const MeasureProgress&)>;
// A callback for a measure() call of `points` points: views that measure several times take one.
using ProgressFor = std::function<ProgressCallback(size_t points)>;

}  // namespace shapescope
