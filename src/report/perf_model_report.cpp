#include "report/perf_model_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "report/table.hpp"

namespace shapescope {

namespace {

// The configurations that ran the most training shapes, most first: "128x256 (1540), 128x128 ...".
std::string top_configs(const PerfClass& c) {
  std::vector<const PerfKernelConfig*> order;
  for (const PerfKernelConfig& k : c.configs) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(),
                   [](const PerfKernelConfig* a, const PerfKernelConfig* b) { return a->points > b->points; });
  std::vector<std::string> parts;
  for (size_t i = 0; i < order.size() && i < 3; ++i) {
    const PerfKernelConfig& k = *order[i];
    parts.push_back(fmt::format("{}x{}{} on {} slots: {:.0f} TFLOP/s ({} shapes)", k.tile_m, k.tile_n,
                                k.splits > 1 ? fmt::format(" split {}", k.splits) : "", k.slots, k.rate_tflops, k.points));
  }
  if (order.size() > 3) parts.push_back(fmt::format("{} more", order.size() - 3));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

void write_perf_model_text(std::ostream& out, const PerfModel& m) {
  out << fmt::format("performance model of {} ({} SMs): fitted on {} points of '{}', {} held out; driver {}, "
                     "cuBLAS {}, SM clock {:.0f} MHz (median); launch floor {:.2f} us\n",
                     m.gpu, m.sm_count, m.points, m.source, m.held_out, m.driver, m.cublas, m.clock_mhz, m.floor_us);
  std::vector<std::vector<std::string>> rows = {
      {"class", "measured M x N x K", "held out", "median error", "p95 error", "bandwidth [GB/s]", "kernels (most shapes first)"}};
  for (const PerfClass& c : m.classes)
    rows.push_back({fmt::format("{} {} rows {}-byte aligned", to_string(c.dtype), to_string(c.layout), c.align_bytes),
                    fmt::format("{}..{} x {}..{} x {}..{}", c.min_m, c.max_m, c.min_n, c.max_n, c.min_k, c.max_k),
                    std::to_string(c.accuracy.points), c.accuracy.points ? percent(c.accuracy.median, 1) : "-",
                    c.accuracy.points ? percent(c.accuracy.p95, 1) : "-",
                    fmt::format("{:.0f} ({})", c.bandwidth_gbs, c.bandwidth_source), top_configs(c)});
  write_table(out, rows, {false, false, true, true, true, false, false}, "",
              fit_by_name(rows.front(), {{"kernels (most shapes first)", {1, 0, 60}}}));
  out << "error: |predicted / measured - 1| on every 4th measured shape of each class, predicted from the others "
         "less every shape that shares its M, N or K inside the class's range (as far from it as a new shape's "
         "neighbours between the measured values); a shape outside a class's measured range, or of a class not "
         "listed, is not covered by these figures\n";
}

}  // namespace shapescope
