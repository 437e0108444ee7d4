#include "report/prediction_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/units.hpp"
#include "report/explain_terms.hpp"

namespace shapescope {

using Json = nlohmann::ordered_json;

std::string perf_model_text(const GpuPerfModel& g) {
  const PerfModel& m = g.model;
  if (m.scaled)
    return fmt::format("the performance model of {} in '{}' scaled to {} ({}), fitted on {} measured points of '{}' "
                       "(cuBLAS {}); its held-out error is the measured GPU's",
                       m.scaled->from_gpu, g.file, m.gpu, m.scaled->terms(), m.points, m.source, m.cublas);
  return fmt::format("the performance model of {} ({} SMs) in '{}', fitted on {} measured points of '{}' (cuBLAS {}, "
                     "SM clock {:.0f} MHz)",
                     m.gpu, m.sm_count, g.file, m.points, m.source, m.cublas, m.clock_mhz);
}

std::string perf_class_text(const PerfClass& c) {
  return fmt::format("{} {} rows {}-byte aligned", to_string(c.dtype), to_string(c.layout), c.align_bytes);
}

std::string perf_error_text(const PerfClass& c) {
  return fmt::format("held-out error {} median, {} p95", percent(c.accuracy.median, 1), percent(c.accuracy.p95, 1));
}

std::string perf_config_text(const PerfPrediction& p) {
  const PerfKernelConfig& k = *p.config;
  return fmt::format("tile {}x{}{} on {} slots, {} round{}{}", k.tile_m, k.tile_n,
                     k.splits > 1 ? fmt::format(", split-K {}", k.splits) : "", k.slots, p.rounds,
                     p.rounds == 1 ? "" : "s", p.memory_bound ? ", memory-bound" : "");
}

std::string perf_outside_text(const PerfPrediction& p) {
  if (p.outside.empty()) return "";
  return fmt::format("{}: extrapolated, the held-out error does not cover it", fmt::join(p.outside, ", "));
}

Json perf_model_json(const GpuPerfModel& g, const std::string& why) {
  const PerfModel& m = g.model;
  return {{"gpu", m.gpu},        {"sm_count", m.sm_count}, {"file", g.file},         {"fitted_on", m.source},
          {"points", m.points},  {"held_out", m.held_out}, {"cublas", m.cublas},     {"clock_mhz", m.clock_mhz},
          {"floor_us", m.floor_us}, {"scaled", m.scaled ? m.scaled->terms() : ""}, {"why", why}};
}

Json predicted_time_json(const Problem& problem, const PerfPrediction& p) {
  const PerfKernelConfig& k = *p.config;
  return {{"time_us", p.us},
          {"tflops", problem.flops() / p.us / 1e6},
          {"class", perf_class_text(*p.cls)},
          {"error_median", p.cls->accuracy.median},
          {"error_p95", p.cls->accuracy.p95},
          {"held_out", p.cls->accuracy.points},
          {"tile_m", k.tile_m},
          {"tile_n", k.tile_n},
          {"splits", k.splits},
          {"slots", k.slots},
          {"rounds", p.rounds},
          {"memory_bound", p.memory_bound},
          {"scaled", p.scaled ? "scaled from " + p.scaled->from_gpu : ""},
          {"outside", p.outside}};
}

std::optional<double> measured_or_predicted_tflops(const ExplainPoint& p) {
  if (p.tflops()) return p.tflops();
  if (p.predicted_us && *p.predicted_us > 0) return p.candidate.problem.flops() / *p.predicted_us / 1e6;
  return std::nullopt;
}

std::string predicted_verdict_line(const ExplainReport& r) {
  using explain_text::times;
  const ExplainPoint& t = r.points.front();
  const PerfPrediction& p = r.prediction->points.front();
  std::string line = fmt::format("{} predicted {}, {:.1f} TFLOP/s ({} median, {} p95 error){}", t.label,
                                 us_or_ms(p.us), *measured_or_predicted_tflops(t), percent(p.cls->accuracy.median, 1),
                                 percent(p.cls->accuracy.p95, 1), p.outside.empty() ? "" : ", outside the measured range");
  const std::vector<Fix>& fixes = r.explanation.fixes;
  if (fixes.empty()) return line + ": no neighbour predicted faster";
  const Fix& f = fixes.front();
  const ExplainPoint& n = r.points[*f.point];
  return line + (f.kind == FixKind::kPadUp ? fmt::format(": {} predicted {} faster", n.label, times(f.speedup))
                                           : fmt::format(": {} predicted {} the FLOP/s", n.label, times(f.speedup)));
}

std::string predicted_evidence(const ExplainReport& r) {
  const PerfPrediction& p = r.prediction->points.front();
  std::string text = fmt::format("{} ({}; {} on {} shapes the fit did not see); kernel assumed: {}", us_or_ms(p.us),
                                 perf_class_text(*p.cls), perf_error_text(*p.cls), p.cls->accuracy.points,
                                 perf_config_text(p));
  if (p.scaled) text += "; scaled: " + p.scaled->terms();
  if (!p.outside.empty()) text += "; outside the measured range: " + perf_outside_text(p);
  return text;
}

}  // namespace shapescope
