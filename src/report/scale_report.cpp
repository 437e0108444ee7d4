#include "report/scale_report.hpp"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>

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
  // One line, whatever the inputs were: what else a merge did is said at its end, briefly.
  std::string line = fmt::format(
      "merge: {} holds {}: {}{} added from {}; {}; copied {}, {}, {}", out, plural(r.points, "point", "points"), had,
      added, plural(r.inputs.size(), "store", "stores"), twice, plural(kernels, "kernel", "kernels"),
      plural(annotations, "annotation", "annotations"), plural(calibrations, "calibration", "calibrations"));
  const size_t older = size_t(std::count_if(r.upgraded.begin(), r.upgraded.end(), [&](const std::string& p) { return p != out; }));
  if (older > 0)
    line += fmt::format("; {} of an older schema read through upgraded copies (left as {})",
                        plural(older, "input", "inputs"), older == 1 ? "it was" : "they were");
  if (older < r.upgraded.size()) line += fmt::format("; {} rewritten in this build's schema", out);
  for (const MergeCounts& c : r.inputs)
    if (!c.skipped_model_version.empty())
      line += fmt::format("; the annotations of '{}' (model version {}) left out: {} holds version {} (the views "
                          "recompute them)",
                          c.path, c.skipped_model_version, out, c.out_model_version);
  return {line};
}

std::string sweep_summary(const SweepTotals& t, double wall, bool hot, size_t gpus) {
  const std::string on = gpus > 1 ? fmt::format(" on {} GPUs", gpus) : "";
  std::string floor;
  if (t.measured > 0 && !hot)
    floor = fmt::format("; GPU-time floor {:.2f} s{} (samples x (kernel + {:.1f} us flush)), wall/floor {:.2f}",
                        t.floor_s, gpus > 1 ? " on the busiest GPU" : "", t.flush_us, wall / t.floor_s);
  std::string clock;
  if (t.measured > 0 && gpus <= 1)
    clock = t.clock_mhz > 0 ? fmt::format("; median SM clock {:.0f} MHz", t.clock_mhz)
                            : std::string("; SM clock unknown (no NVML)");
  return fmt::format("measured {} points, reused {}, annotated {} in {:.2f} s wall{}{}{}; {} noisy, {} throttled",
                     t.measured, t.reused, t.annotated, wall, on, floor, clock, t.noisy, t.throttled);
}

std::string interrupted_line(size_t measured, const std::string& db, const std::string& out) {
  return fmt::format("interrupted: {} points are saved in {}; run the same command to resume{}", measured, db,
                     out.empty() ? "" : fmt::format(" ('{}' is left as it was)", out));
}

std::string worker_failure(const Worker& w) {
  const std::string how = w.signal != 0 ? fmt::format("was killed by signal {} ({})", w.signal, strsignal(w.signal))
                          : w.exit_code == 0 ? std::string("ended with a chunk unfinished")
                                             : fmt::format("failed with exit code {} (its message is above)", w.exit_code);
  const std::string lost =
      w.in_flight.empty() ? "" : fmt::format("; the {} problems of its last chunk are not measured", w.in_flight.size());
  return fmt::format("the worker on GPU {} {}{}", w.ordinal, how, lost);
}

std::string worker_summary(const Worker& w) {
  const std::string gpu = w.uuid.empty() ? "" : fmt::format(" ({}, {})", w.gpu_name, w.uuid);
  if (!w.totals) return fmt::format("GPU {}{}: no chunk finished in {:.2f} s", w.ordinal, gpu, w.seconds);
  const SweepTotals& t = *w.totals;
  const double clock = w.median_clock_mhz();
  return fmt::format("GPU {}{}: {} chunk{}, {} problems, measured {} points, reused {} in {:.2f} s; {}; {} throttled",
                     w.ordinal, gpu, w.chunks, w.chunks == 1 ? "" : "s", w.positions_done, t.measured, t.reused,
                     w.seconds, clock > 0 ? fmt::format("median SM clock {:.0f} MHz", clock) : "SM clock unknown",
                     t.throttled);
}

}  // namespace shapescope
