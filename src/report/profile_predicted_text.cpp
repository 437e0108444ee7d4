#include "report/profile_predicted_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/units.hpp"
#include "report/prediction_text.hpp"
#include "report/profile_report.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

// A list of GEMMs named by their rank in the table: "#1, #4, #7 and 3 more".
std::string ranks_text(const std::vector<size_t>& entries) {
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  for (size_t i = 0; i < entries.size() && i < kNamed; ++i) named.push_back(fmt::format("#{}", entries[i] + 1));
  return fmt::format("{}{}", fmt::join(named, ", "),
                     entries.size() > kNamed ? fmt::format(" and {} more", entries.size() - kNamed) : "");
}

std::string gemm_name(const ProfileEntry& e) {
  return fmt::format("{} {} {}", e.row.problem.shape_string(), to_string(e.row.problem.layout),
                     to_string(e.row.problem.dtype));
}

}  // namespace

std::string predicted_numbers_line(const ProfileResult& r) {
  return fmt::format("predicted by {}: nothing measured (--predict); each GEMM's time is its class's prediction of "
                     "cuBLAS's own kernel, with the class's held-out error (median and p95 on shapes the fit did not "
                     "see) in place of a measurement's noise",
                     perf_model_text(*r.predicted->model));
}

std::string predicted_total_head(const ProfileResult& r) {
  const ProfileTotals& t = r.totals;
  const ProfilePrediction& p = *r.predicted;
  if (t.measured_rows == 0)
    return fmt::format("GEMM time per step: unknown (none of its {} GEMMs predicted)", t.missing_rows);
  std::string line = fmt::format("GEMM time per step: {} predicted ({} of {} GEMMs)", us_or_ms(t.measured_us),
                                 t.measured_rows, t.measured_rows + t.missing_rows);
  line += fmt::format(", expected error {} median, {} p95 (each GEMM's held-out error weighted by its predicted time: "
                      "errors of one model may share their sign, so they are added, not averaged out)",
                      percent(p.error_median, 1), percent(p.error_p95, 1));
  if (p.outside_rows > 0)
    line += fmt::format("; {} GEMM{} ({}, {} of it) outside the measured range: extrapolated, not covered by that "
                        "error",
                        p.outside_rows, p.outside_rows == 1 ? "" : "s", us_or_ms(p.outside_us),
                        percent(p.outside_us / t.measured_us, 0));
  return line;
}

std::string predicted_clocks_note(const ProfileResult& r) {
  const PerfModel& m = r.predicted->model->model;
  std::string line =
      m.scaled ? fmt::format("clocks: not replayed (nothing is measured): the predicted times are at {:.0f} MHz, the "
                             "boost clock of {} the model was scaled to",
                             m.clock_mhz, m.gpu)
               : fmt::format("clocks: not replayed (nothing is measured): the predicted times are at the clock the "
                             "model was fitted at, SM clock {:.0f} MHz (its points' median)",
                             m.clock_mhz);
  const std::optional<RecordedClocks>& c = r.workload.recorded_clocks;
  if (c && c->busy_samples > 0)
    line += fmt::format("; recorded with the trace: {:.0f} MHz ({:.0f}-{:.0f}){}: a step at another clock runs its "
                        "compute-bound GEMMs at another speed",
                        c->sm_clock_median_mhz, c->sm_clock_low_mhz, c->sm_clock_high_mhz,
                        c->power_median_w ? fmt::format(", {:.0f} W", *c->power_median_w) : "");
  return line;
}

std::string predicted_error_cell(const ProfileEntry& e) {
  if (!e.predicted) return "-";
  const PerfAccuracy& a = e.predicted->cls->accuracy;
  return fmt::format("{} ({}){}", fixed(a.median * 100, 1), fixed(a.p95 * 100, 1),
                     e.predicted->outside.empty() ? "" : ", outside");
}

std::string predicted_kernel_cell(const ProfileEntry& e) {
  if (!e.predicted) return "-";
  return fmt::format("tile {}x{} (assumed)", e.predicted->config->tile_m, e.predicted->config->tile_n);
}

std::vector<std::string> predicted_lines(const ProfileResult& r) {
  std::vector<std::string> lines;
  std::vector<std::string> outside;
  bool fp8 = false;
  for (size_t i = 0; i < r.entries.size(); ++i) {
    const ProfileEntry& e = r.entries[i];
    fp8 = fp8 || (e.row.in_total && e.row.problem.dtype == DType::kFp8);
    if (e.predicted && !e.predicted->outside.empty())
      outside.push_back(fmt::format("#{} {} ({})", i + 1, gemm_name(e), fmt::join(e.predicted->outside, ", ")));
  }
  if (!outside.empty())
    lines.push_back(fmt::format("outside the measured range (extrapolated: the held-out error does not cover it): {}",
                                fmt::join(outside, "; ")));
  if (fp8)
    lines.push_back("fp8 casts not predicted: shapescope's cast kernels (amax, scale and cast of each operand) are no "
                    "GEMMs the model predicts; the GEMM time above holds none");
  return lines;
}

std::string not_predicted_line(const ProfileResult& r, const ProfileEntry& e) {
  std::string line = fmt::format("not predicted: {} ({})", profile_gemm_cell(r, e), e.not_predicted);
  if (e.loop_us)
    line += fmt::format("; its {} groups as a loop of GEMMs would take {} predicted (in no total: the step runs the "
                        "grouped call)",
                        e.row.problem.groups.size(), us_or_ms(*e.loop_us));
  return line;
}

std::vector<std::string> not_predicted_lines(const ProfileResult& r) {
  std::vector<std::string> lines;
  for (const ProfileNotPredicted& n : r.predicted->not_predicted)
    lines.push_back(fmt::format("what-if not predicted: {} ({}) {}: {}", what_if_name(n.kind), n.what,
                                n.entries.empty() ? "of every GEMM" : "of " + ranks_text(n.entries), n.why));
  return lines;
}

Json profile_prediction_json(const ProfileResult& r) {
  return r.predicted ? perf_model_json(*r.predicted->model, "--predict") : Json(nullptr);
}

Json entry_prediction_json(const ProfileEntry& e) {
  return e.predicted ? predicted_time_json(e.row.problem, *e.predicted) : Json(nullptr);
}

Json not_predicted_json(const ProfileResult& r) {
  Json out = Json::array();
  if (!r.predicted) return out;
  for (const ProfileNotPredicted& n : r.predicted->not_predicted) {
    std::vector<size_t> ranks;
    for (size_t e : n.entries) ranks.push_back(e + 1);
    out.push_back({{"kind", std::string(what_if_name(n.kind))}, {"what", n.what}, {"why", n.why}, {"gemms", ranks}});
  }
  return out;
}

}  // namespace shapescope
