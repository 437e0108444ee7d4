#include "report/scale_report.hpp"

#include <fmt/format.h>

namespace shapescope {

namespace {

std::string plural(size_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

}  // namespace

std::vector<std::string> merge_summary(const MergeResult& r, const std::string& out) {
  size_t added = 0, replaced = 0, left_out = 0, kernels = 0, annotations = 0, calibrations = 0;
  for (const MergeCounts& c : r.inputs) {
    added += c.added;
    replaced += c.replaced;
    left_out += c.left_out;
    kernels += c.kernels;
    annotations += c.annotations;
    calibrations += c.calibrations;
  }
  const std::string had = r.out_existed ? fmt::format("{} it had, ", r.out_points) : std::string("a new store: ");
  const std::string twice =
      replaced + left_out == 0
          ? std::string("replaced 0 (no key measured twice)")
          : fmt::format("{} measured twice: kept the newer, replaced {}, left out {}",
                        plural(replaced + left_out, "key", "keys"), replaced, plural(left_out, "older copy", "older copies"));
  std::vector<std::string> lines = {fmt::format(
      "merge: {} holds {}: {}{} added from {}; {}; copied {}, {}, {}", out, plural(r.points, "point", "points"), had,
      added, plural(r.inputs.size(), "store", "stores"), twice, plural(kernels, "kernel", "kernels"),
      plural(annotations, "annotation", "annotations"), plural(calibrations, "calibration", "calibrations"))};
  for (const MergeCounts& c : r.inputs) {
    if (c.skipped_model_version.empty()) continue;
    lines.push_back(fmt::format("merge: the annotations of '{}' (model version {}) were left out: {} holds version {} "
                                "(derived data; the views recompute them)",
                                c.path, c.skipped_model_version, out, c.out_model_version));
  }
  return lines;
}

}  // namespace shapescope
