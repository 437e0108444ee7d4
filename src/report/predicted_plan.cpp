#include "report/predicted_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "common/units.hpp"
#include "report/prediction_text.hpp"
#include "report/table.hpp"

namespace shapescope {

void write_predicted_plan(std::ostream& out, const std::vector<Problem>& problems, const GpuPerfModel& model) {
  std::vector<std::vector<std::string>> rows = {{"M", "N", "K", "batch", "lda", "ldb", "ldc", "offset",
                                                 "predicted [us]", "TFLOP/s", "error [%] (p95)", "note"}};
  double total_us = 0;
  size_t predicted = 0, outside = 0;
  for (const Problem& p : problems) {
    std::vector<std::string> row;
    for (int64_t value : {p.m, p.n, p.k, p.batch, p.lda, p.ldb, p.ldc, p.off_a}) row.push_back(std::to_string(value));
    std::string why;
    if (const std::optional<PerfPrediction> got = predict(model.model, p, why)) {
      total_us += got->us;
      ++predicted;
      outside += got->outside.empty() ? 0 : 1;
      row.push_back(fmt::format("{:.2f}", got->us));
      row.push_back(fmt::format("{:.1f}", p.flops() / got->us / 1e6));
      row.push_back(fmt::format("{:.1f} ({:.1f})", got->cls->accuracy.median * 100, got->cls->accuracy.p95 * 100));
      std::vector<std::string> notes;
      if (got->scaled) notes.push_back("scaled from " + got->scaled->from_key);
      if (!got->outside.empty()) notes.push_back(fmt::format("outside: {}", fmt::join(got->outside, ", ")));
      row.push_back(fmt::format("{}", fmt::join(notes, "; ")));
    } else {
      row.insert(row.end(), {"-", "-", "-", "not predicted: " + why});
    }
    rows.push_back(std::move(row));
  }
  std::vector<bool> right(rows.front().size(), true);
  right.back() = false;
  write_table(out, rows, right, "", fit_by_name(rows.front(), {{"note", {0, 0, 30}}}));
  out << fmt::format("predicted by {}: {} of {} points, {} in all (one cold call each{}){}\n", perf_model_text(model),
                     predicted, problems.size(), us_or_ms(total_us),
                     predicted < problems.size() ? fmt::format("; {} not predicted, not counted", problems.size() - predicted) : "",
                     outside ? fmt::format("; {} outside the measured range, extrapolated: the held-out error does not "
                                           "cover them", outside)
                             : "");
}

}  // namespace shapescope
