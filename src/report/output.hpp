// Writing measured points out: a table for people (units in headers, a noise column), CSV and JSON
// for programs; and the progress line on stderr.
#pragma once
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.hpp"

namespace shapescope {

enum class Format { kTable, kCsv, kJson };
std::optional<Format> parse_format(std::string_view text);

// One row per point, in the order given.
void write_points(std::ostream& out, Format format, const std::vector<StoredPoint>& points);

// "[#####.....] 1234/4096 points  ETA 0:05  last 712.3 TFLOP/s", redrawn in place on stderr.
// Silent when disabled (stderr is not a terminal).
class Progress {
 public:
  Progress(size_t total, bool enabled);
  void update(double done_fraction, size_t points_done, double last_tflops);
  void finish();

 private:
  void draw(double now);

  size_t total_;
  bool enabled_;
  double start_;
  bool drawn_ = false;
  // Redraws are throttled; the latest update is kept so that finish() can draw what was skipped.
  double last_draw_ = 0;
  bool pending_ = false;
  double fraction_ = 0;
  size_t points_done_ = 0;
  double last_tflops_ = 0;
};

}  // namespace shapescope
